// hub.js - models by name on the Hugging Face Hub, what Node (hub-node.js) and browsers
// (hub-browser.js) share: a repo id read, which of a repo's files attnmap needs, the URLs, and
// the hub's answers as typed errors.
//
//   parseRepoId('Qwen/Qwen2.5-0.5B')        -> 'Qwen/Qwen2.5-0.5B' (null: not a repo id)
//   chooseFiles(listing)                    -> the files to fetch, from the hub's file list
//   resolveUrl(hub, repo, revision, file)   -> hub/repo/resolve/revision/file
//
// Only what the runtime reads is ever fetched: config.json; model.safetensors, or
// model.safetensors.index.json and the shards it names; tokenizer.json and
// tokenizer_config.json, or vocab.json + merges.txt, or vocab.txt. Never *.bin, *.onnx or
// anything else a repo holds. A GGUF repo (Node, hub-node.js): one .gguf file alone, the one
// options.file names or the repo's only one (chooseGguf), which holds the config and tokenizer.
//
// What a hub (or whatever HF_ENDPOINT / hubUrl points at) can make a load hold, and for how long,
// is bounded (issue 35), in Node and browsers alike:
// - the file list: MAX_LISTING_BYTES, all pages together (TOO_LARGE beyond);
// - a file: the size the hub announced for it (its HEAD, else the listing), else 64 MiB for the
//   text files (config.json, the tokenizer's, the index: files-node.js's cap) and 4 GiB for the
//   weights (what wasm32 can hold); an announced size over those is TOO_LARGE before a byte comes;
// - an index naming more than MAX_SHARDS shards is INVALID_MODEL before any shard is fetched;
// - time: options.stallMs (default 30 s) with no answer or no bytes fails the file, and once
//   options.graceMs (default 60 s) have passed a file must average options.minRate bytes/s
//   (default 64 KiB/s; 0 for none), so a server that drips a byte now and then fails too: the
//   clocks of fetch-checkpoint.js, with the same option names.
import { AttentionError, ErrorCode, fail, quote, describe, formatBytes } from '../../core/errors.js';
import { MAX_SHARDS } from '../load/weights.js';   // weights.js's limit, applied here before a shard is fetched
import { ModelFetchError, MAX_TEXT_BYTES, MAX_WEIGHTS_BYTES, clocksOf, fetchWithin, bodyOf } from '../load/fetch-body.js';
import { stripBom } from '../load/text-files.js';

export { clocksOf, fetchWithin, bodyOf };

export const HUB_URL = 'https://huggingface.co';
export const INDEX = 'model.safetensors.index.json';
export const TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json', 'vocab.json', 'merges.txt', 'vocab.txt'];

// The file list, every page together. A model repo's top level is tens of entries (~250 bytes
// each as the tree API writes them, with lfs and xetHash); 16 MiB is over 60,000 of them, far
// past any repo attnmap can load, and little enough for a tab to hold and parse.
export const MAX_LISTING_BYTES = 16 * 1024 * 1024;

// org/name as the hub allows them: letters, digits, "-", "_", "."; no "--" or ".." (the cache's
// separator, a path); 96 characters a part
const PART = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9_])?$/;

/** 'org/name' or 'name' -> the repo id, or null when the string is not one. */
export function parseRepoId(s) {
  if (typeof s !== 'string' || s.includes('--') || s.includes('..')) return null;
  const parts = s.split('/');
  return parts.length <= 2 && parts.every((p) => PART.test(p)) ? s : null;
}

export const isCommit = (rev) => typeof rev === 'string' && /^[0-9a-f]{40}$/.test(rev);

/** A revision (branch, tag or commit) as a URL path segment allows: refs/pr/1 stays readable. */
export function readRevision(rev = 'main') {
  if (typeof rev !== 'string' || !/^[\w./-]{1,200}$/.test(rev) || rev.includes('..')) {
    fail(ErrorCode.INVALID_ARGUMENT, `loadModel: revision must be a branch, tag or commit of the repo; received ${typeof rev === 'string' ? quote(rev) : typeof rev}`);
  }
  return rev;
}

export const resolveUrl = (hub, repo, rev, file) => `${hub}/${repo}/resolve/${encodeURIComponent(rev)}/${file.split('/').map(encodeURIComponent).join('/')}`;
export const treeUrl = (hub, repo, rev) => `${hub}/api/models/${repo}/tree/${encodeURIComponent(rev)}`;

export const infoUrl = (hub, repo, rev) => `${hub}/api/models/${repo}/revision/${encodeURIComponent(rev)}`;

/**
 * The repo's top-level files, [{ path, size, type }], from the tree API, page after page (the
 * hub pages long lists and names the next page in a Link header, rel="next"). get(url) fetches
 * with the caller's headers and resolves to a Response. size: null when the entry gives none (an
 * unknown size, not 0). The pages together are read up to MAX_LISTING_BYTES.
 */
export async function listTree(get, url, repo, rev, clocks = clocksOf({}, 'loadModel')) {
  const out = [];
  let left = MAX_LISTING_BYTES;
  for (let next = url, pages = 0; next && pages < 100; pages++) {
    const res = await get(next);
    if (!res.ok) throw hubError(res, next, repo, rev);
    const html = notTheHub(res, next);
    if (html) throw html;
    const bytes = await readCapped(res, next, clocks, left, () => fail(ErrorCode.TOO_LARGE,
      `${next}: the file list of ${repo} (revision ${rev}) goes past ${formatBytes(MAX_LISTING_BYTES)}, all pages together; a model repo's is a few kB`));
    left -= bytes.length;
    let list = null;
    try { list = JSON.parse(new TextDecoder().decode(bytes)); } catch { /* below */ }
    if (!Array.isArray(list)) throw new ModelFetchError(`${next}: not the hub's file list`, next, res.status);
    // one by one: a spread of a long page (push(...list)) overflows the stack
    for (const f of list) if (f && typeof f.path === 'string') out.push({ path: f.path, size: sizeOf(f.lfs?.size ?? f.size), type: f.type });
    const link = /<([^>]+)>\s*;\s*rel="next"/.exec(res.headers.get('link') ?? '');
    next = link ? new URL(link[1], next).href : null;
  }
  return out;
}

/** A size as the hub writes one (a listing's size, a header's digits), or null: unknown. */
export function sizeOf(v) {
  const n = typeof v === 'string' && /^\s*\d{1,16}\s*$/.test(v) ? Number(v) : v;
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/**
 * The files attnmap needs from a repo's listing ([{ path, size }], the hub's tree): { files:
 * [{ path, size }], sharded } with the shards, when there is no model.safetensors, every
 * *.safetensors at the top (the index names them; hub-*.js fetch the ones it names).
 */
export function chooseFiles(listing, repo) {
  const have = new Map(listing.filter((f) => f.type !== 'directory').map((f) => [f.path, f]));
  if (!have.has('config.json')) fail(ErrorCode.INVALID_MODEL, `${repo} has no config.json: not a transformers checkpoint attnmap can run`);
  const files = [have.get('config.json')];
  const single = have.get('model.safetensors');
  const sharded = !single && have.has(INDEX);
  if (single) files.push(single);
  else if (sharded) files.push(have.get(INDEX), ...[...have.values()].filter((f) => /^[^/]+\.safetensors$/.test(f.path)));
  else {
    const other = [...have.keys()].filter((p) => /\.(bin|pt|pth|ckpt|gguf|onnx|h5|msgpack)$/.test(p)).slice(0, 3);
    fail(ErrorCode.INVALID_MODEL, `${repo} has no model.safetensors nor ${INDEX}${other.length ? ` (only ${other.join(', ')}: attnmap reads safetensors)` : ''}`);
  }
  const tokenizer = have.has('tokenizer.json') ? ['tokenizer.json', 'tokenizer_config.json'] : ['vocab.json', 'merges.txt', 'vocab.txt', 'tokenizer_config.json'];
  for (const t of tokenizer) if (have.has(t)) files.push(have.get(t));
  return { files, sharded };
}

// ----------------------------------------------------------------------------
// GGUF repos ('Qwen/Qwen2.5-0.5B-Instruct-GGUF'): one file of the repo's top level

const MAX_NAMED = 10;   // the GGUF files an error lists
// a name options.file may be: letters, digits, '_', '.', '+', '-', ending .gguf, no folder
const GGUF_NAME = /^[\w+-][\w.+-]{0,250}\.gguf$/i;

/** Whether a file of a repo is a GGUF model: a .gguf at the top, not hidden, not a vision
 * projector (mmproj-*.gguf, as stores-node.js counts LM Studio's). */
export const isModelGguf = (name) => typeof name === 'string' && GGUF_NAME.test(name) && !/^mmproj/i.test(name);

/** options.file: undefined, or the name of a .gguf file at the top of the repo (or folder); else INVALID_ARGUMENT. */
export function readGgufFile(file) {
  if (file === undefined) return undefined;
  if (typeof file !== 'string' || !GGUF_NAME.test(file) || file.includes('..')) {
    fail(ErrorCode.INVALID_ARGUMENT, `loadModel: file must name a .gguf file at the top of the repo or folder, such as "qwen2.5-0.5b-instruct-q4_0.gguf" (letters, digits, "_", ".", "+", "-"; no folder, no ".."); received ${describe(file)}`);
  }
  return file;
}

// names as an error lists them: the first MAX_NAMED, and how many more
const named = (names) => `${names.slice(0, MAX_NAMED).join(', ')}${names.length > MAX_NAMED ? `, and ${names.length - MAX_NAMED} more` : ''}`;

/** The one GGUF model among names (null: none); several are INVALID_ARGUMENT naming them, as the
 * caller must say which. where: what holds them ('', ' in its cached snapshot'). */
export function onlyGguf(names, repo, where = '') {
  const ggufs = names.filter(isModelGguf).sort();
  if (ggufs.length <= 1) return ggufs[0] ?? null;
  return fail(ErrorCode.INVALID_ARGUMENT, `loadModel: ${repo} holds ${ggufs.length} GGUF files${where}; say which with { file } (the CLI: --file): ${named(ggufs)}`);
}

/**
 * The GGUF file to fetch from a repo's listing ([{ path, size, type }]): { path, size }, or null
 * when the repo is to be read as a safetensors checkpoint (no file asked for, and config.json with
 * safetensors weights there, or no .gguf at all: chooseFiles then). file (readGgufFile's): the one
 * asked for, which must be there.
 */
export function chooseGguf(listing, repo, file) {
  const have = new Map(listing.filter((f) => f.type !== 'directory').map((f) => [f.path, f]));
  if (file !== undefined) {
    if (have.has(file)) return have.get(file);
    const ggufs = [...have.keys()].filter(isModelGguf).sort();
    const safetensors = have.has('model.safetensors') || have.has(INDEX);
    fail(ErrorCode.INVALID_ARGUMENT, `loadModel: ${repo} has no file ${file}; ${ggufs.length ? `its GGUF files: ${named(ggufs)}`
      : `it holds no .gguf file${safetensors ? ' (a safetensors checkpoint: load it without { file })' : ''}`}`);
  }
  if (have.has('config.json') && (have.has('model.safetensors') || have.has(INDEX))) return null;
  const name = onlyGguf([...have.keys()], repo);
  return name === null ? null : have.get(name);
}

/** The shard names an index file lists (plain file names only: weights.js refuses the rest). */
export function shardNames(indexText) {
  let map;
  try { map = JSON.parse(indexText).weight_map; } catch { return []; }
  if (!map || typeof map !== 'object') return [];
  return [...new Set(Object.values(map))].filter((n) => typeof n === 'string' && /^[\w.-]+\.safetensors$/.test(n) && !n.includes('..'));
}

/** The shards to download: shardNames, refused (INVALID_MODEL) before any is fetched when the
 * index names more than weights.js would read. */
export function shardsToFetch(indexText) {
  let map;
  try { map = JSON.parse(stripBom(indexText)).weight_map; } catch { return []; }
  const count = map && typeof map === 'object' ? new Set(Object.values(map)).size : 0;
  if (count > MAX_SHARDS) fail(ErrorCode.INVALID_MODEL, `${INDEX} names ${count} shards; at most ${MAX_SHARDS} are read, and none was downloaded`);
  return shardNames(stripBom(indexText));
}

/** The hub's answer to a request as an error: a gated or missing repo, a missing file, a page that is not the hub. */
export function hubError(res, url, repo, what) {
  const code = res.headers.get('x-error-code') ?? '';
  const say = (message) => new ModelFetchError(`${url}: ${message}`, url, res.status);
  if (res.status === 401 || res.status === 403) {
    return say(`HTTP ${res.status}: ${repo} is gated or private: accept its license on the hub and give a token (HF_TOKEN, or options.token)`);
  }
  if (res.status === 404) {
    if (code === 'RevisionNotFound') return say(`HTTP 404: ${repo} has no revision ${what}`);
    if (code === 'EntryNotFound') return say(`HTTP 404: ${repo} has no file ${what}`);
    return say(`HTTP 404: no repo ${repo} on the hub`);
  }
  return say(`HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`);
}

/** A hub answer that is HTML (a misconfigured HF_ENDPOINT, a captive portal) instead of JSON or a file. */
export function notTheHub(res, url) {
  if (!/^text\/html\b/i.test(res.headers.get('content-type') ?? '')) return null;
  return new ModelFetchError(`${url}: the server answered with an HTML page, not the hub's API (is HF_ENDPOINT or hubUrl the hub?)`, url, res.status);
}

/** A repo id ('ORG/NAME' or 'NAME'), or INVALID_ARGUMENT naming fn. */
export function repoArg(repo, fn) {
  const id = parseRepoId(repo);
  if (!id) fail(ErrorCode.INVALID_ARGUMENT, `${fn}: expected a Hugging Face repo id such as "Qwen/Qwen2.5-0.5B"; received ${describe(repo)}`);
  return id;
}

// ----------------------------------------------------------------------------
// caps and clocks (see the top of this file)

// a small body (a file list, the model info) up to cap bytes; over(): what to throw beyond
async function readCapped(res, url, clocks, cap, over) {
  if ((sizeOf(res.headers.get('content-length')) ?? 0) > cap) { await res.body?.cancel(); over(); }
  const body = bodyOf(res, url, clocks, { what: 'the answer' }), chunks = [];
  let n = 0;
  for (let chunk; (chunk = await body.next()) !== null;) {
    if (n + chunk.length > cap) { body.cancel(); over(); }
    chunks.push(chunk);
    n += chunk.length;
  }
  const out = new Uint8Array(n);
  for (let i = 0, at = 0; i < chunks.length; at += chunks[i].length, i++) out.set(chunks[i], at);
  return out;
}

/** The model info's JSON, read as the file list is (MAX_LISTING_BYTES), or null when not JSON. */
export async function readInfo(res, url, clocks) {
  const bytes = await readCapped(res, url, clocks, MAX_LISTING_BYTES, () => fail(ErrorCode.TOO_LARGE,
    `${url}: the hub's model info goes past ${formatBytes(MAX_LISTING_BYTES)}; a model's is a few kB`));
  try { return JSON.parse(new TextDecoder().decode(bytes)); } catch { return null; }
}

const isTextFile = (file) => file === 'config.json' || file === INDEX || TOKENIZER_FILES.includes(file);

/**
 * The most bytes a file may have: the size the hub announced (null: none), else the cap of its
 * kind; an announced size over that cap is TOO_LARGE before a byte is fetched.
 */
export function limitOf(file, size, url) {
  const text = isTextFile(file), cap = text ? MAX_TEXT_BYTES : MAX_WEIGHTS_BYTES;
  const kind = text ? 'a config, tokenizer or index file is read' : 'a file of weights is read, as wasm32 holds no more,';
  if (size !== null && size > cap) fail(ErrorCode.TOO_LARGE, `${url}: the hub announces ${formatBytes(size)} (${size} bytes) for ${file}; ${kind} up to ${formatBytes(cap)}`);
  return size ?? cap;
}

/** The error for a body that went past limitOf's limit. */
export function overError(file, url, size, limit, after = '') {
  if (size !== null) return new ModelFetchError(`${url}: more than the ${size} bytes the hub announced for ${file} came${after}`, url, 200);
  return new AttentionError(ErrorCode.TOO_LARGE, `${url}: ${file} went past ${formatBytes(limit)} (${limit} bytes) and the hub announced no size; ` +
    `${isTextFile(file) ? 'a config, tokenizer or index file' : 'a file of weights'} is read up to that${after}`);
}

/**
 * onProgress for a load by name, which reports each file twice: its download, then its reading
 * into wasm memory (from 0 again). Events that would take a file's count back are dropped, so
 * a progress bar only moves forward; a load from the cache reports the reading alone.
 */
export function forwardOnly(onProgress) {
  if (typeof onProgress !== 'function') return onProgress;
  const last = new Map();
  return (e) => {
    const prev = last.get(e.file);
    if (prev !== undefined && e.loaded <= prev) return;
    last.set(e.file, e.loaded);
    onProgress(e);
  };
}

export { AttentionError };
