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
// tokenizer_config.json, or vocab.json + merges.txt, or vocab.txt. Never *.bin, *.onnx, *.gguf
// or anything else a repo holds.
import { AttentionError, ErrorCode, fail, quote } from '../core/errors.js';
import { ModelFetchError } from './fetch-checkpoint.js';

export const HUB_URL = 'https://huggingface.co';
export const INDEX = 'model.safetensors.index.json';
export const TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json', 'vocab.json', 'merges.txt', 'vocab.txt'];

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
 * with the caller's headers and resolves to a Response.
 */
export async function listTree(get, url, repo, rev) {
  const out = [];
  for (let next = url, pages = 0; next && pages < 100; pages++) {
    const res = await get(next);
    if (!res.ok) throw hubError(res, next, repo, rev);
    const html = notTheHub(res, next);
    if (html) throw html;
    const list = await res.json().catch(() => null);
    if (!Array.isArray(list)) throw new ModelFetchError(`${next}: not the hub's file list`, next, res.status);
    out.push(...list.filter((f) => f && typeof f.path === 'string').map((f) => ({ path: f.path, size: f.lfs?.size ?? f.size ?? 0, type: f.type })));
    const link = /<([^>]+)>\s*;\s*rel="next"/.exec(res.headers.get('link') ?? '');
    next = link ? new URL(link[1], next).href : null;
  }
  return out;
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

/** The shard names an index file lists (plain file names only: weights.js refuses the rest). */
export function shardNames(indexText) {
  let map;
  try { map = JSON.parse(indexText).weight_map; } catch { return []; }
  if (!map || typeof map !== 'object') return [];
  return [...new Set(Object.values(map))].filter((n) => typeof n === 'string' && /^[\w.-]+\.safetensors$/.test(n) && !n.includes('..'));
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
