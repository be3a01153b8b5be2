// stores-node.js - the GGUF files Ollama and LM Studio already keep, by name and offline (issue
// 38, item 6), for loadModel, cachedModels and `attnmap cache`:
//
//   storeModelFile('ollama:qwen2.5:0.5b')          // the GGUF file's path (undefined: no store prefix)
//   storeModelFile('lmstudio:lmstudio-community/Qwen2.5-0.5B-Instruct-GGUF[/FILE.gguf]')
//   scanStores()                                   // [{ source, name, bytes, file, why }]: both stores
//   storeOf('ollama:x')                            // 'ollama' | 'lmstudio' | null
//
// Ollama: OLLAMA_MODELS, else ~/.ollama/models. manifests/registry.ollama.ai/NAMESPACE/NAME/TAG
// (NAMESPACE `library` when the name has none, TAG `latest`; another HOST for names pulled from
// one, such as hf.co/USER/REPO:TAG) is JSON whose one layer of mediaType
// application/vnd.ollama.image.model names the GGUF blob, blobs/sha256-HEX, and its size.
// LM Studio: LMSTUDIO_MODELS, else ~/.lmstudio/models, else ~/.cache/lm-studio/models, holding
// PUBLISHER/REPO/FILE.gguf.
//
// Neither store is trusted. Every part of a name is checked before it becomes a path (no '..', no
// slash where none belongs, letters, digits, '_', '.', '-', bounded lengths); files are opened as
// files-node.js opens them (regular files only, without blocking: a FIFO as manifest does not
// hang); the manifest is read up to MANIFEST_BYTES and the blob's size must be the manifest's.
// Ollama never links out of its store, so a manifest or blob that does is refused. LM Studio's
// `lms import --symbolic-link` puts links to files kept elsewhere, so those are followed, for
// reading only. Nothing here writes, renames or deletes: these stores are their tools' own.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AttentionError, ErrorCode, fail, formatBytes, quote } from '../../core/errors.js';
import { openRegular, readFully } from '../load/files-node.js';

const MODEL_MEDIA = 'application/vnd.ollama.image.model';
const REGISTRY = 'registry.ollama.ai';
const MANIFEST_BYTES = 1 << 20;     // a manifest is a few hundred bytes
export const MAX_ENTRIES = 10_000;  // entries listed per level of a store or folder: bounds a hostile one
const PART = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,79}$/;          // Ollama's name parts (at most 80)
const HOST = /^[A-Za-z0-9][A-Za-z0-9.-]{0,252}\.[A-Za-z0-9-]+$/;   // a registry's host name, with a dot
const LMS_PART = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$/;     // publisher and repo: Hugging Face's rules
const LMS_FILE = /^[^/\\\u0000-\u001f\u007f]{1,250}\.gguf$/i;   // eslint-disable-line no-control-regex -- refused, not matched
const ok = (re, s) => typeof s === 'string' && re.test(s) && !s.includes('..');
// what p is, links followed (undefined when absent, a loop, unreadable: the load names those)
const statOf = (p) => { try { return fs.statSync(p); } catch { return undefined; } };

/** Which store a loadModel source names: 'ollama', 'lmstudio', or null (no store prefix). */
export function storeOf(source) {
  if (typeof source !== 'string') return null;
  return source.startsWith('ollama:') ? 'ollama' : source.startsWith('lmstudio:') ? 'lmstudio' : null;
}

export const ollamaDir = () => process.env.OLLAMA_MODELS || path.join(os.homedir(), '.ollama', 'models');

/** LM Studio's models folder: LMSTUDIO_MODELS, else the first of its two homes that is a folder. */
export function lmstudioDir() {
  if (process.env.LMSTUDIO_MODELS) return process.env.LMSTUDIO_MODELS;
  const homes = [path.join(os.homedir(), '.lmstudio', 'models'), path.join(os.homedir(), '.cache', 'lm-studio', 'models')];
  return homes.find((d) => statOf(d)?.isDirectory()) ?? homes[0];
}

// ----------------------------------------------------------------------------
// names

/** 'NAME[:TAG]', 'NAMESPACE/NAME[:TAG]', 'HOST/NAMESPACE/NAME[:TAG]' -> { host, namespace, name, tag }, or null. */
export function parseOllamaName(spec) {
  if (typeof spec !== 'string' || spec.length > 600) return null;
  const colon = spec.indexOf(':');
  const [repo, tag] = colon < 0 ? [spec, 'latest'] : [spec.slice(0, colon), spec.slice(colon + 1)];
  const parts = repo.split('/');
  if (parts.length > 3 || !ok(PART, tag) || !parts.slice(-2).every((p) => ok(PART, p))) return null;
  if (parts.length === 3 && !ok(HOST, parts[0])) return null;
  const [host, namespace, name] = parts.length === 3 ? parts : [REGISTRY, ...(parts.length === 2 ? parts : ['library', ...parts])];
  return { host, namespace, name, tag };
}

// the name as `ollama list` shows it
const ollamaShown = ({ host, namespace, name, tag }) =>
  `${host === REGISTRY ? (namespace === 'library' ? '' : `${namespace}/`) : `${host}/${namespace}/`}${name}:${tag}`;

/** 'PUBLISHER/REPO[/FILE]' -> { publisher, repo, file (undefined when left out) }, or null. */
export function parseLmStudioName(spec) {
  if (typeof spec !== 'string' || spec.length > 700) return null;
  const [publisher, repo, file, ...rest] = spec.split('/');
  if (rest.length || !ok(LMS_PART, publisher) || !ok(LMS_PART, repo)) return null;
  if (file !== undefined && (!ok(LMS_FILE, file) || file.startsWith('.'))) return null;
  return { publisher, repo, file };
}

const OLLAMA_FORM = 'expected ollama:NAME[:TAG], ollama:NAMESPACE/NAME[:TAG] or ollama:HOST/NAMESPACE/NAME[:TAG], each part letters, digits, "_", "." or "-" (at most 80, no "..")';
const LMS_FORM = 'expected lmstudio:PUBLISHER/REPO or lmstudio:PUBLISHER/REPO/FILE.gguf (letters, digits, "_", "." or "-"; no "..")';

// ----------------------------------------------------------------------------
// Ollama

const inside = (dir, p) => { const r = path.relative(dir, p); return r !== '' && !r.startsWith('..') && !path.isAbsolute(r); };

// the store's real path (links to it are fine: OLLAMA_MODELS may name a link to another disk)
function storeRoot(dir, label, env) {
  let real;
  try { real = fs.realpathSync(dir); } catch (e) {
    fail(ErrorCode.INVALID_ARGUMENT, `loadModel: no ${label} store at ${dir} (${e.code ?? e.message}); expected a folder (${env})`);
  }
  if (!fs.statSync(real).isDirectory()) fail(ErrorCode.INVALID_ARGUMENT, `loadModel: ${label}'s store ${dir} is not a folder (${env})`);
  return real;
}

// p's real path, inside root (undefined when absent): a link out of the store or a loop is refused
function withinStore(root, p) {
  let real;
  try { real = fs.realpathSync(p); } catch (e) {
    if (e.code === 'ENOENT') return undefined;
    fail(ErrorCode.INVALID_MODEL, `${p}: ${e.code === 'ELOOP' ? 'a link loop' : `cannot be resolved (${e.code ?? e.message})`}; expected a file of Ollama's store`);
  }
  if (!inside(root, real)) fail(ErrorCode.INVALID_MODEL, `${p}: links out of Ollama's store ${root} (to ${real}); Ollama keeps its files inside it, so this one is not read`);
  return real;
}

// the manifest's JSON (undefined when absent): a regular file up to MANIFEST_BYTES
function readManifest(file) {
  const f = openRegular(file);
  if (!f) return undefined;
  let text;
  try {
    if (f.size > MANIFEST_BYTES) fail(ErrorCode.TOO_LARGE, `${file}: ${formatBytes(f.size)}; an Ollama manifest is a few hundred bytes, read up to ${formatBytes(MANIFEST_BYTES)}`);
    const bytes = new Uint8Array(f.size);
    readFully(f.fd, bytes, 0, file);
    text = new TextDecoder().decode(bytes);
  } finally {
    fs.closeSync(f.fd);
  }
  try { return JSON.parse(text); } catch (e) {
    return fail(ErrorCode.INVALID_MODEL, `${file}: not JSON (${e.message.slice(0, 120)}); expected Ollama's manifest, { "layers": [{ "mediaType", "digest", "size" }] }`);
  }
}

// the manifest's model layer: { hex, size }
function modelLayer(manifest, file) {
  const layers = Array.isArray(manifest?.layers) ? manifest.layers : fail(ErrorCode.INVALID_MODEL, `${file}: no "layers" array; expected Ollama's manifest, { "layers": [{ "mediaType", "digest", "size" }] }`);
  const models = layers.filter((l) => l?.mediaType === MODEL_MEDIA);
  if (models.length !== 1) fail(ErrorCode.INVALID_MODEL, `${file}: ${models.length} layers of mediaType ${MODEL_MEDIA}; expected one, the GGUF weights`);
  const { digest, size } = models[0];
  const hex = typeof digest === 'string' ? /^sha256:([0-9a-f]{64})$/.exec(digest)?.[1] : undefined;
  if (!hex) fail(ErrorCode.INVALID_MODEL, `${file}: the model layer's digest is ${quote(String(digest), 80)}; expected "sha256:" and 64 hex digits`);
  if (!Number.isSafeInteger(size) || size < 0) fail(ErrorCode.INVALID_MODEL, `${file}: the model layer's size is ${quote(String(size), 40)}; expected a count of bytes`);
  return { hex, size };
}

// the blob a parsed name's manifest names, checked: { file, bytes }
function ollamaBlob(root, n, shown) {
  const manifestPath = path.join(root, 'manifests', n.host, n.namespace, n.name, n.tag);
  const real = withinStore(root, manifestPath);
  const manifest = real && readManifest(real);
  if (manifest === undefined) fail(ErrorCode.INVALID_ARGUMENT, `loadModel: ollama:${shown} is not in Ollama's store at ${root} (no ${manifestPath}); \`ollama pull ${shown}\` fetches it`);
  const { hex, size } = modelLayer(manifest, manifestPath);
  const blobPath = path.join(root, 'blobs', `sha256-${hex}`);
  const blobReal = withinStore(root, blobPath);
  const f = blobReal && openRegular(blobReal);
  if (!f) fail(ErrorCode.INVALID_MODEL, `${blobPath}: missing; ${manifestPath} names it as the model's weights (\`ollama pull ${shown}\` fetches it again)`);
  fs.closeSync(f.fd);
  if (f.size !== size) fail(ErrorCode.INVALID_MODEL, `${blobPath}: ${f.size} bytes; ${manifestPath} says ${size} (a partial or altered file: \`ollama pull ${shown}\`)`);
  return { file: blobReal, bytes: size };
}

/** The GGUF blob of ollama:NAME[:TAG] (spec without the prefix): { file, bytes }. */
export function ollamaModelFile(spec, dir = ollamaDir()) {
  const n = parseOllamaName(spec);
  if (!n) fail(ErrorCode.INVALID_ARGUMENT, `loadModel: ${quote(`ollama:${spec}`)} is not an Ollama model name: ${OLLAMA_FORM}`);
  return ollamaBlob(storeRoot(dir, 'Ollama', 'OLLAMA_MODELS, else ~/.ollama/models'), n, ollamaShown(n));
}

// ----------------------------------------------------------------------------
// LM Studio

// the .gguf files of a repo folder, by name (mmproj-*.gguf: a vision projector, not a model)
function ggufFiles(repoDir) {
  const names = fs.readdirSync(repoDir).slice(0, MAX_ENTRIES).sort();
  return names.filter((n) => /\.gguf$/i.test(n) && !n.startsWith('.') && !/^mmproj/i.test(n)
    && statOf(path.join(repoDir, n))?.isFile());
}

/** The GGUF file of lmstudio:PUBLISHER/REPO[/FILE] (spec without the prefix): { file, bytes }. */
export function lmstudioModelFile(spec, dir = lmstudioDir()) {
  const n = parseLmStudioName(spec);
  if (!n) fail(ErrorCode.INVALID_ARGUMENT, `loadModel: ${quote(`lmstudio:${spec}`)} is not an LM Studio model name: ${LMS_FORM}`);
  const repo = `lmstudio:${n.publisher}/${n.repo}`, repoDir = path.join(dir, n.publisher, n.repo);
  let st;
  try { st = fs.statSync(repoDir); } catch (e) {
    if (e.code !== 'ENOENT') fail(ErrorCode.INVALID_MODEL, `${repoDir}: cannot be read (${e.code ?? e.message}); expected LM Studio's folder for ${repo}`);
  }
  if (!st?.isDirectory()) fail(ErrorCode.INVALID_ARGUMENT, `loadModel: ${repo} is not in LM Studio's store at ${dir} (no folder ${repoDir}; LMSTUDIO_MODELS, else ~/.lmstudio/models, else ~/.cache/lm-studio/models)`);
  const all = ggufFiles(repoDir);
  const holds = all.length ? `it holds ${all.slice(0, 20).join(', ')}${all.length > 20 ? ', …' : ''}` : 'it holds no .gguf file';
  if (n.file === undefined && all.length !== 1) fail(ErrorCode.INVALID_ARGUMENT, `loadModel: ${repo} ${all.length ? `holds ${all.length} GGUF files; say which, as ${repo}/FILE: ${all.slice(0, 20).join(', ')}${all.length > 20 ? ', …' : ''}` : `holds no .gguf file (${repoDir})`}`);
  const file = path.join(repoDir, n.file ?? all[0]);
  const f = openRegular(file);        // a link is followed (lms import -l), to a regular file only
  if (!f) fail(ErrorCode.INVALID_ARGUMENT, `loadModel: ${repo} has no ${n.file} (${repoDir}); ${holds}`);
  fs.closeSync(f.fd);
  return { file, bytes: f.size };
}

/** A store source's GGUF file path: 'ollama:…' or 'lmstudio:…'; undefined for any other source. */
export function storeModelFile(source) {
  const store = storeOf(source);
  if (!store) return undefined;
  const spec = source.slice(store.length + 1);
  return (store === 'ollama' ? ollamaModelFile(spec) : lmstudioModelFile(spec)).file;
}

// ----------------------------------------------------------------------------
// the listing

// a folder's entries that are folders (links followed), sorted, at most MAX_ENTRIES, no dot names
function subfolders(dir) {
  let list;
  try { list = fs.readdirSync(dir).sort().slice(0, MAX_ENTRIES); } catch { return []; }
  return list.filter((n) => !n.startsWith('.') && statOf(path.join(dir, n))?.isDirectory());
}

// one listing entry: what resolve() gives, or its error as why
function entryOf(source, name, resolve) {
  try {
    const { file, bytes } = resolve();
    return { source, name, bytes, file, why: null };
  } catch (e) {
    if (!(e instanceof AttentionError)) throw e;
    return { source, name, bytes: 0, file: null, why: e.message.replace(/^loadModel: /, '') };
  }
}

// every tag under manifests/HOST/NAMESPACE/NAME/
function scanOllama(dir) {
  const manifests = path.join(dir, 'manifests'), out = [];
  let root;
  try { root = fs.realpathSync(dir); } catch { return []; }
  for (const host of subfolders(manifests)) {
    for (const namespace of subfolders(path.join(manifests, host))) {
      for (const name of subfolders(path.join(manifests, host, namespace))) {
        let tags;
        try { tags = fs.readdirSync(path.join(manifests, host, namespace, name)).sort().slice(0, MAX_ENTRIES); } catch { continue; }
        for (const tag of tags.filter((t) => !t.startsWith('.'))) {
          const n = { host, namespace, name, tag }, shown = ollamaShown(n);
          out.push(entryOf('ollama', `ollama:${shown}`, () => {
            const parsed = parseOllamaName(shown);
            if (!parsed || ollamaShown(parsed) !== shown) fail(ErrorCode.INVALID_ARGUMENT, `not an Ollama model name: ${OLLAMA_FORM}`);
            return ollamaBlob(root, n, shown);
          }));
        }
      }
    }
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));   // by name, as `ollama list` shows them
}

// every PUBLISHER/REPO/FILE.gguf
function scanLmStudio(dir) {
  const out = [];
  for (const publisher of subfolders(dir)) {
    for (const repo of subfolders(path.join(dir, publisher))) {
      let files;
      try { files = ggufFiles(path.join(dir, publisher, repo)); } catch { continue; }
      for (const file of files) {
        const spec = `${publisher}/${repo}/${file}`;
        out.push(entryOf('lmstudio', `lmstudio:${spec}`, () => lmstudioModelFile(spec, dir)));
      }
    }
  }
  return out;
}

/**
 * Every model of Ollama's and LM Studio's stores: [{ source, name, bytes, file, why }], name the
 * argument loadModel takes, why null when it loads (else what is wrong). A store that is absent
 * lists nothing. options: { ollamaDir, lmstudioDir } (default: the environment's).
 */
export function scanStores(options = {}) {
  return [...scanOllama(options.ollamaDir ?? ollamaDir()), ...scanLmStudio(options.lmstudioDir ?? lmstudioDir())];
}

/** Why a name of a store cannot be deleted by attnmap (deleteCachedModel), or null for other names. */
export function deleteRefusal(name, fn) {
  const store = storeOf(name);
  if (!store) return null;
  const parsed = store === 'ollama' && parseOllamaName(name.slice(store.length + 1));
  return store === 'ollama'
    ? `${fn}: ${quote(name)} is in Ollama's store, which attnmap reads and never changes${parsed ? `; \`ollama rm ${ollamaShown(parsed)}\` removes it` : ''}`
    : `${fn}: ${quote(name)} is in LM Studio's store, which attnmap reads and never changes; remove it in LM Studio (My Models)`;
}
