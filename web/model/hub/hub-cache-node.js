// hub-cache-node.js - the Hugging Face cache as attnmap/model's Node users see it (the cache
// Python's transformers fills and loadModel('ORG/NAME') reads, hub-node.js), and the hub's sizes:
//
//   await cachedModels({ cacheDir })   // [{ source, name, repo, revision, commit, bytes, modelType, gguf? }]: loadable snapshots,
//                                      // then Ollama's and LM Studio's models [{ source, name, bytes, file }] (stores-node.js)
//   await scanHubCache(dir)            // every model snapshot, with why it cannot be loaded (attnmap cache)
//   await deleteCachedModel(repo, { cacheDir })   // removes models--ORG--NAME (every revision); never a store's model
//   await hubSize(repo, options)       // hub-browser.js's, with Node's endpoint and token (HF_ENDPOINT, HF_TOKEN)
//
// The scan reads the layout hub-node.js describes (models--ORG--NAME/{refs,snapshots,blobs}) and
// trusts none of it: the cache is a folder anyone can write to, shared with Python. Files are
// opened as the folder loader opens them (files-node.js: regular files only, no blocking, a size
// cap), so a config.json that links to /dev/zero or a FIFO is reported, never read. Every trouble
// is the entry's own: a dangling link, a link loop, a folder whose name is not a repo id gives
// that entry a `why` (or, for the whole repo, one entry with commit null), and the rest of the
// cache is listed. A snapshot's bytes count each blob once, and only files inside the repo's folder
// (a link out of it is not the cache's to size). What attnmap can load is decided here: config.json
// of a family it runs, safetensors weights (every shard the index names), and no tokenizer file
// that the loader would refuse; or, a GGUF repo's snapshot, .gguf files at its top (the entry's
// gguf: their names, for loadModel(repo, { file }); modelType null, as no config.json says it).
import fs from 'node:fs';
import path from 'node:path';
import { AttentionError, ErrorCode, formatBytes, quote } from '../../core/errors.js';
import { MODEL_TYPES } from '../families/index.js';
import { INDEX, TOKENIZER_FILES, parseRepoId, repoArg, shardNames, isModelGguf } from './hub.js';
import { MAX_TEXT_BYTES, openRegular, readText } from '../load/files-node.js';
import { stripBom } from '../load/text-files.js';
import { hubSize as hubSizeOf } from './hub-browser.js';
import { hubCacheDir, hubContext } from './hub-node.js';
import { deleteRefusal, scanStores } from './stores-node.js';

const REF_BYTES = 4096;     // a ref holds a 40-hex commit
const MAX_DEPTH = 16;       // folders inside a snapshot or refs/ (Python writes a few at most)
const LINK_TROUBLE = { ENOENT: 'a dangling link', ELOOP: 'a link loop', ENOTDIR: 'a link through a file' };


// ----------------------------------------------------------------------------
// one file or folder, as the scan sees it

// why a link at file does not lead anywhere (null: not a link, absent, or it resolves)
function linkTrouble(file, label) {
  try {
    if (!fs.lstatSync(file).isSymbolicLink()) return null;
  } catch {
    return null;                                   // absent: the caller's open says so
  }
  try {
    fs.statSync(file);
    return null;
  } catch (e) {
    return `${label} is ${LINK_TROUBLE[e.code] ?? `a link that cannot be followed (${e.code ?? e.message})`}`;
  }
}

/**
 * A file of the cache by files-node.js's rules: { absent }, { why } (a broken link, not a regular
 * file, too large), or { text } when read, else { size } (opened and closed: never read).
 */
function inspectFile(file, label, { read = false, maxBytes } = {}) {
  const trouble = linkTrouble(file, label);
  if (trouble) return { why: trouble };
  try {
    if (read) {
      const text = readText(file, maxBytes);
      return text === undefined ? { absent: true } : { text };
    }
    const f = openRegular(file);
    if (!f) return { absent: true };
    fs.closeSync(f.fd);
    return { size: f.size };
  } catch (e) {
    // files-node.js names the whole path; the listing names the file as the snapshot does
    const message = String(e?.message ?? e);
    return { why: e instanceof AttentionError && message.startsWith(file) ? label + message.slice(file.length) : `${label}: ${message}` };
  }
}

// why p is not a folder to scan (null when it is one; links followed, their troubles named)
function folderTrouble(p, label) {
  const trouble = linkTrouble(p, label);
  if (trouble) return trouble;
  let st;
  try { st = fs.statSync(p); } catch (e) { return e.code === 'ENOENT' ? `no ${label}` : `${label}: ${e.code ?? e.message}`; }
  return st.isDirectory() ? null : `${label} is not a folder`;
}

const inside = (dir, p) => { const r = path.relative(dir, p); return r !== '' && !r.startsWith('..') && !path.isAbsolute(r); };

// the folder's entries, sorted by name (the listing's order is the same on every system)
const entriesOf = (dir) => fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

// ----------------------------------------------------------------------------
// a snapshot: can attnmap load it, and its size

// why the weights cannot be loaded: model.safetensors, or the index and every shard it names
function weightsTrouble(dir) {
  const single = inspectFile(path.join(dir, 'model.safetensors'), 'model.safetensors');
  if (!single.absent) return single.why ?? null;
  const index = inspectFile(path.join(dir, INDEX), INDEX, { read: true });
  if (index.why) return index.why;
  if (index.absent) return 'no safetensors weights';
  const shards = shardNames(stripBom(index.text));
  if (!shards.length) return `${INDEX} names no shards (or is not JSON)`;
  for (const name of shards) {
    const shard = inspectFile(path.join(dir, name), name);
    if (shard.why) return shard.why;
    if (shard.absent) return `no ${name} (named by ${INDEX})`;
  }
  return null;
}

// why a snapshot folder cannot be loaded as a safetensors checkpoint (null when it can), and its model_type
function checkpointLoadable(dir) {
  const config = inspectFile(path.join(dir, 'config.json'), 'config.json', { read: true });
  if (config.why) return { modelType: null, why: config.why };
  if (config.absent) return { modelType: null, why: 'no config.json' };
  let parsed;
  try { parsed = JSON.parse(stripBom(config.text)); } catch { return { modelType: null, why: 'config.json is not JSON' }; }
  const modelType = typeof parsed?.model_type === 'string' ? parsed.model_type : 'gpt2';
  if (!MODEL_TYPES.includes(modelType)) return { modelType, why: `model_type ${quote(modelType, 40)}` };
  const weights = weightsTrouble(dir);
  if (weights) return { modelType, why: weights };
  // the loader reads each of these when present: one it would refuse is a snapshot it cannot load
  for (const name of TOKENIZER_FILES) {
    const file = inspectFile(path.join(dir, name), name);
    if (file.why) return { modelType, why: file.why };
    if (file.size > MAX_TEXT_BYTES) return { modelType, why: `${name}: ${formatBytes(file.size)}; the loader reads it up to ${formatBytes(MAX_TEXT_BYTES)}` };
  }
  return { modelType, why: null };
}

// the .gguf models at a snapshot's top that open as regular files: { files: [names], why } with
// why the first trouble of one that does not (a dangling link: a blob deleted)
function ggufsOf(dir) {
  const files = [];
  let why = null;
  for (const e of entriesOf(dir)) {
    if (!isModelGguf(e.name)) continue;
    const file = inspectFile(path.join(dir, e.name), e.name);
    if (file.size !== undefined) files.push(e.name);
    else why ??= file.why ?? null;
  }
  return { files, why };
}

// why a snapshot folder cannot be loaded (null when it can), its model_type, and its GGUF files
// (gguf, only when there are some): a GGUF repo's snapshot has no config.json
function loadable(dir) {
  const checkpoint = checkpointLoadable(dir), gguf = ggufsOf(dir);
  if (!gguf.files.length) return checkpoint.why === 'no config.json' && gguf.why ? { modelType: null, why: gguf.why } : checkpoint;
  return checkpoint.why ? { modelType: null, why: null, gguf: gguf.files } : { ...checkpoint, gguf: gguf.files };
}

// the bytes of a snapshot's files, each blob once: regular files inside the repo's folder only,
// found by stat (never opened); broken links and links out of the repo count nothing
function snapshotBytes(dir, repoReal) {
  const blobs = new Map();
  const walk = (folder, depth) => {
    let list;
    try { list = entriesOf(folder); } catch { return; }
    for (const e of list) {
      const p = path.join(folder, e.name);
      if (e.isDirectory()) {
        if (depth < MAX_DEPTH) walk(p, depth + 1);
        continue;
      }
      try {
        const real = fs.realpathSync(p), st = fs.statSync(real);
        if (st.isFile() && inside(repoReal, real)) blobs.set(real, st.size);
      } catch { /* a broken link: loadable() names it when attnmap reads that file */ }
    }
  };
  walk(dir, 0);
  let bytes = 0;
  for (const size of blobs.values()) bytes += size;
  return bytes;
}

// one entry of snapshots/: a folder inside the repo's folder, else why not
function scanSnapshot(snapshots, name, repoReal) {
  const dir = path.join(snapshots, name), label = `snapshots/${name}`;
  const trouble = folderTrouble(dir, label);
  if (trouble) return { bytes: 0, modelType: null, why: trouble };
  if (!inside(repoReal, fs.realpathSync(dir))) return { bytes: 0, modelType: null, why: `${label} links out of the repo's folder` };
  return { bytes: snapshotBytes(dir, repoReal), ...loadable(dir) };
}

// ----------------------------------------------------------------------------
// a repo: its refs and snapshots

// refs/NAME (refs/pr/1 too) -> { commits: Map(commit -> [names]), bad: [{ name, why }] }
function readRefs(refsDir) {
  const commits = new Map(), bad = [];
  const walk = (folder, prefix, depth) => {
    let list;
    try { list = entriesOf(folder); } catch (e) {
      if (e.code !== 'ENOENT') bad.push({ name: prefix || 'refs', why: `${prefix ? `refs/${prefix}` : 'refs'}: ${e.code ?? e.message}` });
      return;
    }
    for (const e of list) {
      const name = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (depth < MAX_DEPTH) walk(path.join(folder, e.name), name, depth + 1);
        continue;
      }
      const ref = inspectFile(path.join(folder, e.name), `refs/${name}`, { read: true, maxBytes: REF_BYTES });
      if (ref.why) bad.push({ name, why: ref.why });
      else if (!ref.absent) commits.set(ref.text.trim(), [...(commits.get(ref.text.trim()) ?? []), name]);
    }
  };
  walk(refsDir, '', 0);
  return { commits, bad };
}

// the entries of one repo folder: a snapshot each, a ref that is broken or names no snapshot
function scanRepo(repoDir, folder, repo) {
  const entry = (fields) => ({ repo, refs: [], commit: null, bytes: 0, modelType: null, ...fields });
  const trouble = folderTrouble(repoDir, folder) ?? folderTrouble(path.join(repoDir, 'snapshots'), `${folder}/snapshots`);
  if (trouble) return [entry({ why: trouble })];
  const repoReal = fs.realpathSync(repoDir), snapshots = path.join(repoDir, 'snapshots');
  const { commits, bad } = readRefs(path.join(repoDir, 'refs'));
  const out = bad.map(({ name, why }) => entry({ refs: [name], why }));
  for (const e of entriesOf(snapshots)) {
    if (e.name.startsWith('.')) continue;            // .DS_Store and the like
    const refs = commits.get(e.name) ?? [];
    commits.delete(e.name);
    try {
      out.push(entry({ refs, commit: e.name, ...scanSnapshot(snapshots, e.name, repoReal) }));
    } catch (err) {
      out.push(entry({ refs, commit: e.name, why: `snapshots/${e.name}: ${err.code ?? err.message}` }));
    }
  }
  for (const [commit, refs] of commits) out.push(entry({ refs, why: `refs/${refs[0]} names ${quote(commit, 44)}, which has no snapshot` }));
  return out;
}

/**
 * Every model snapshot in the cache at dir: [{ repo, refs, commit, bytes, modelType, why, gguf? }], by
 * repo. why is null for the loadable ones; a repo that cannot be scanned, a folder whose name is
 * not a repo id (repo is then the folder's name) or a broken ref has commit null.
 */
export async function scanHubCache(dir) {
  let list;
  try {
    list = entriesOf(dir);
  } catch (e) {
    if (e.code === 'ENOENT') return [];
    throw new AttentionError(ErrorCode.INVALID_ARGUMENT, `scanHubCache: the Hugging Face cache ${dir} cannot be listed (${e.code ?? e.message}); expected a folder`, { cause: e });
  }
  const out = [];
  for (const e of list) {
    if (!e.name.startsWith('models--')) continue;    // datasets--, spaces--, .locks, CACHEDIR.TAG
    const id = e.name.slice('models--'.length).split('--').join('/');
    const repo = parseRepoId(id);
    const entry = (fields) => ({ repo: repo ?? e.name, refs: [], commit: null, bytes: 0, modelType: null, ...fields });
    if (!repo) {
      out.push(entry({ why: `not a repo: ${quote(id, 60)} is not a repo id (ORG/NAME)` }));
      continue;
    }
    try {
      out.push(...scanRepo(path.join(dir, e.name), e.name, repo));
    } catch (err) {
      out.push(entry({ why: `${e.name}: ${err.code ?? err.message}` }));
    }
  }
  return out.sort((a, b) => a.repo.localeCompare(b.repo));
}

/**
 * The models loadModel(name) can load without the network: the Hugging Face cache's, one entry per
 * revision name (or commit; gguf: a GGUF repo's .gguf files, loadModel(repo, { file })), then Ollama's and LM Studio's GGUF files (stores-node.js; options
 * ollamaDir, lmstudioDir, else the environment's). Each has its source ('huggingface', 'ollama',
 * 'lmstudio'), name (what loadModel takes) and bytes.
 */
export async function cachedModels(options = {}) {
  const snapshots = await scanHubCache(options.cacheDir ?? hubCacheDir());
  const hub = snapshots.filter((s) => !s.why).flatMap(({ repo, refs, commit, bytes, modelType, gguf }) =>
    (refs.length ? refs : [commit]).map((revision) => ({ source: 'huggingface', name: repo, repo, revision, commit, bytes, modelType, ...(gguf ? { gguf } : {}) })));
  const stores = scanStores(options).filter((s) => !s.why).map(({ source, name, bytes, file }) => ({ source, name, bytes, file }));
  return [...hub, ...stores];
}

/** Removes a repo's folder (every revision, its blobs) from the cache: Python's transformers will download it again. */
export async function deleteCachedModel(repo, options = {}) {
  const refusal = deleteRefusal(repo, 'deleteCachedModel');   // Ollama's and LM Studio's files are theirs
  if (refusal) throw new AttentionError(ErrorCode.INVALID_ARGUMENT, refusal);
  const id = repoArg(repo, 'deleteCachedModel');
  const dir = path.join(options.cacheDir ?? hubCacheDir(), `models--${id.replace('/', '--')}`);
  fs.rmSync(dir, { recursive: true, force: true });
}

/** The bytes loadModel(repo) would download: { files: [{ path, size }], total } (the hub's file list). */
export async function hubSize(repo, options = {}) {
  const ctx = hubContext(repoArg(repo, 'hubSize'), options);
  return hubSizeOf(ctx.repo, { revision: options.revision, hubUrl: ctx.hub, token: ctx.token, signal: options.signal, file: ctx.file });
}
