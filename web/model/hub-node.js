// hub-node.js - loadModel('Qwen/Qwen2.5-0.5B') in Node: the Hugging Face cache first (what
// Python's transformers already downloaded loads with no network at all), else the hub, into
// that same cache in Python's layout, so that Python sees the files too.
//
//   const { folder } = await hubSnapshot('Qwen/Qwen2.5-0.5B', { revision, offline, cacheDir, hubUrl, token, onProgress });
//
// The cache (huggingface_hub's constants.py and file_download.py):
//   CACHE = options.cacheDir, else HF_HUB_CACHE, else HF_HOME/hub, else XDG_CACHE_HOME/huggingface/hub,
//           else ~/.cache/huggingface/hub
//   CACHE/models--ORG--NAME/refs/REVISION          the commit a branch or tag names
//   CACHE/models--ORG--NAME/snapshots/COMMIT/FILE  a relative link to ../../blobs/ETAG
//   CACHE/models--ORG--NAME/blobs/ETAG             the bytes (ETAG.incomplete while downloading)
// A snapshot with config.json and the weights (model.safetensors, or the index and every shard
// it names) is used as it is: no network, not even to ask whether main moved. options.offline
// (or HF_HUB_OFFLINE=1) never touches the network: what is not cached is an error naming it.
//
// Downloads (the hub's HTTP API, as huggingface_hub uses it): the file list from
// /api/models/REPO/tree/REVISION (sizes known before the first byte: onProgress's total); each
// file from /REPO/resolve/REVISION/FILE, whose answer names the commit (X-Repo-Commit), the blob
// (X-Linked-Etag or ETag) and its size (X-Linked-Size or Content-Length), and for a large file
// redirects (302) to a download host. The token (options.token, HF_TOKEN, or HF_HOME/token) is
// sent to the hub's own host only, never to the host a redirect leads to. An interrupted file
// resumes from its .incomplete part (a Range request); a file whose size is not what the hub
// said is refused.
//
// Why not @huggingface/hub's downloadFileToCacheDir (npm): it asks the hub's paths-info API even
// when the file is cached under main (no offline load), does not write refs/main (Python then
// cannot find the snapshot by branch), and logs with console.debug. Its getHFHubCachePath and
// scanCacheDir are used for what they do (the default cache folder; `attnmap cache`).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ErrorCode, fail } from '../core/errors.js';
import { ModelFetchError } from './fetch-checkpoint.js';
import { HUB_URL, INDEX, isCommit, readRevision, resolveUrl, treeUrl, listTree, chooseFiles, shardNames, hubError } from './hub.js';

const truthy = (v) => ['1', 'true', 'yes', 'on'].includes(String(v ?? '').toLowerCase());

/** The cache folder, as huggingface_hub finds it. */
export function hubCacheDir(env = process.env) {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  if (env.HF_HOME) return path.join(env.HF_HOME, 'hub');
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'huggingface', 'hub');
}

function tokenOf(options, env) {
  if (options.token !== undefined) return options.token || null;
  if (env.HF_TOKEN) return env.HF_TOKEN;
  const file = env.HF_TOKEN_PATH || path.join(env.HF_HOME || path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'huggingface'), 'token');
  try { return fs.readFileSync(file, 'utf8').trim() || null; } catch { return null; }
}

/** The settings of one load: where, what, and whether the network may be used. */
export function hubContext(repo, options = {}, env = process.env) {
  const hub = String(options.hubUrl ?? env.HF_ENDPOINT ?? HUB_URL).replace(/\/+$/, '');
  const cache = options.cacheDir ?? hubCacheDir(env);
  return {
    repo, hub, cache, revision: readRevision(options.revision ?? 'main'),
    repoDir: path.join(cache, `models--${repo.replace('/', '--')}`),
    offline: options.offline ?? truthy(env.HF_HUB_OFFLINE),
    token: tokenOf(options, env), hubHost: new URL(hub).host,
    onProgress: typeof options.onProgress === 'function' ? options.onProgress : () => {},
  };
}

// ----------------------------------------------------------------------------
// the cache

const exists = (p) => { try { fs.statSync(p); return true; } catch { return false; } };

function readRef(ctx) {
  if (isCommit(ctx.revision)) return ctx.revision;
  try {
    const commit = fs.readFileSync(path.join(ctx.repoDir, 'refs', ctx.revision), 'utf8').trim();
    return isCommit(commit) ? commit : null;
  } catch { return null; }
}

/** The cached snapshot's folder when it holds config.json and all the weights, else null. */
export function cachedSnapshot(ctx) {
  const commit = readRef(ctx);
  if (!commit) return null;
  const dir = path.join(ctx.repoDir, 'snapshots', commit);
  if (!exists(path.join(dir, 'config.json'))) return null;
  if (exists(path.join(dir, 'model.safetensors'))) return { dir, commit };
  if (!exists(path.join(dir, INDEX))) return null;
  const shards = shardNames(fs.readFileSync(path.join(dir, INDEX), 'utf8'));
  return shards.length && shards.every((s) => exists(path.join(dir, s))) ? { dir, commit } : null;
}

// snapshots/COMMIT/FILE -> ../../blobs/ETAG, as huggingface_hub's _create_symlink makes it
function linkSnapshot(ctx, commit, file, etag) {
  const link = path.join(ctx.repoDir, 'snapshots', commit, file);
  fs.mkdirSync(path.dirname(link), { recursive: true });
  const target = path.relative(path.dirname(link), path.join(ctx.repoDir, 'blobs', etag));
  try { fs.unlinkSync(link); } catch { /* not there */ }
  fs.symlinkSync(target, link);
}

function writeRef(ctx, commit) {
  if (isCommit(ctx.revision)) return;
  const ref = path.join(ctx.repoDir, 'refs', ctx.revision);
  fs.mkdirSync(path.dirname(ref), { recursive: true });
  fs.writeFileSync(ref, commit);
}

// ----------------------------------------------------------------------------
// the hub

// fetch with the token for the hub's own host only; redirects followed here, so that a hop to
// another host goes without it. metadata: stop at a redirect to another host and return it, as
// huggingface_hub's get_hf_file_metadata does (the redirect's own headers name the commit and
// blob; the download host's do not): { res, url } with url where the redirect points
async function hubFetch(ctx, url, init = {}, { metadata = false } = {}) {
  for (let hops = 0; hops < 5; hops++) {
    const headers = { ...init.headers };
    if (ctx.token && new URL(url).host === ctx.hubHost) headers.authorization = `Bearer ${ctx.token}`;
    let res;
    try {
      res = await fetch(url, { ...init, headers, redirect: 'manual' });
    } catch (e) {
      throw new ModelFetchError(`${url}: could not be fetched (${e.cause?.code ?? e.message})`, url, 0);
    }
    if (res.status < 300 || res.status >= 400 || !res.headers.get('location')) return { res, url };
    await res.body?.cancel();
    const next = new URL(res.headers.get('location'), url).href;
    if (metadata && new URL(next).host !== new URL(url).host) return { res, url: next };
    url = next;
  }
  throw new ModelFetchError(`${url}: more than 5 redirects`, url, 0);
}

/** The repo's files at the revision: [{ path, size }] from the hub's tree. */
const listFiles = (ctx) => listTree(async (u) => (await hubFetch(ctx, u)).res, treeUrl(ctx.hub, ctx.repo, ctx.revision), ctx.repo, ctx.revision);

// a file's blob, downloaded (or resumed) into blobs/ETAG and linked into snapshots/COMMIT/
async function download(ctx, file, size) {
  const url = resolveUrl(ctx.hub, ctx.repo, ctx.commit ?? ctx.revision, file);   // once one file named the commit, that commit
  const head = await hubFetch(ctx, url, { method: 'HEAD' }, { metadata: true });
  if (!head.res.ok && !(head.res.status >= 300 && head.res.status < 400)) throw hubError(head.res, url, ctx.repo, file);
  const meta = metaOf(head.res, url, ctx, file);
  const blob = path.join(ctx.repoDir, 'blobs', meta.etag);
  fs.mkdirSync(path.dirname(blob), { recursive: true });
  if (!exists(blob) || fs.statSync(blob).size !== meta.size) await fetchBlob(ctx, head.url, blob, { file, size: meta.size ?? size });
  linkSnapshot(ctx, meta.commit, file, meta.etag);
  return meta.commit;
}

// the commit, blob id and size the hub's answer names (the redirect's own headers, as Python reads them)
function metaOf(res, url, ctx, file) {
  const commit = res.headers.get('x-repo-commit');
  const etag = (res.headers.get('x-linked-etag') ?? res.headers.get('etag') ?? '').replace(/^W\//, '').replace(/"/g, '');
  const size = Number(res.headers.get('x-linked-size') ?? res.headers.get('content-length'));
  if (!isCommit(commit) || !/^[\w-]{8,128}$/.test(etag)) {
    throw new ModelFetchError(`${url}: the answer does not name the commit and blob of ${file} (X-Repo-Commit, ETag): is ${ctx.hub} the hub?`, url, res.status);
  }
  return { commit, etag, size: Number.isSafeInteger(size) && size >= 0 ? size : null };
}

// GET the bytes into BLOB.incomplete, from where an earlier try stopped, then rename it
async function fetchBlob(ctx, url, blob, { file, size }) {
  const part = `${blob}.incomplete`;
  const have = exists(part) ? fs.statSync(part).size : 0;
  const { res, url: final } = await hubFetch(ctx, url, { headers: have ? { range: `bytes=${have}-` } : {} });
  if (!res.ok) throw hubError(res, final, ctx.repo, file);
  const resumed = res.status === 206 && have > 0;
  const fd = fs.openSync(part, resumed ? 'a' : 'w');
  let loaded = resumed ? have : 0;
  try {
    const reader = res.body.getReader();
    ctx.onProgress({ file, loaded, total: size });
    for (;;) {
      let step;
      try { step = await reader.read(); } catch (e) {
        throw new ModelFetchError(`${final}: the download of ${file} broke off after ${loaded} bytes (${e.cause?.code ?? e.message}); the next load resumes it`, final, res.status);
      }
      if (step.done) break;
      fs.writeSync(fd, step.value);
      loaded += step.value.length;
      ctx.onProgress({ file, loaded, total: size });
    }
  } finally {
    fs.closeSync(fd);
  }
  if (size !== null && loaded !== size) {
    throw new ModelFetchError(`${final}: ${file} has ${loaded} bytes but the hub said ${size}; the next load resumes or starts it again`, final, res.status);
  }
  fs.renameSync(part, blob);
}

/**
 * The repo's snapshot folder in the cache, downloading what it lacks unless offline:
 * { dir, commit, downloaded: [file names] }.
 */
export async function hubSnapshot(repo, options = {}) {
  const ctx = hubContext(repo, options);
  const cached = cachedSnapshot(ctx);
  if (cached) return { ...cached, downloaded: [] };
  if (ctx.offline) {
    fail(ErrorCode.FETCH_FAILED, `${repo} (revision ${ctx.revision}) is not in the Hugging Face cache at ${ctx.cache}, and offline is set${options.offline === undefined ? ' (HF_HUB_OFFLINE)' : ''}: nothing was downloaded`);
  }
  const { files } = chooseFiles(await listFiles(ctx), repo);
  let commit = null;
  const downloaded = [];
  for (const f of files) {
    if (/\.safetensors$/.test(f.path) && f.path !== 'model.safetensors') continue;   // shards: as the index names them, below
    commit = ctx.commit = await download(ctx, f.path, f.size);
    downloaded.push(f.path);
  }
  const dir = path.join(ctx.repoDir, 'snapshots', commit);
  if (exists(path.join(dir, INDEX)) && !exists(path.join(dir, 'model.safetensors'))) {
    const sizes = new Map(files.map((f) => [f.path, f.size]));
    for (const shard of shardNames(fs.readFileSync(path.join(dir, INDEX), 'utf8'))) {
      await download(ctx, shard, sizes.get(shard) ?? null);
      downloaded.push(shard);
    }
  }
  writeRef(ctx, commit);
  return { dir, commit, downloaded };
}
