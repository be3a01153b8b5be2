// hub-node.js - loadModel('Qwen/Qwen2.5-0.5B') in Node: the Hugging Face cache first (what
// Python's transformers already downloaded loads with no network at all), else the hub, into
// that same cache in Python's layout, so that Python sees the files too.
//
//   const { dir } = await hubSnapshot('Qwen/Qwen2.5-0.5B', { revision, offline, cacheDir, hubUrl, token, onProgress, stallMs, minRate, graceMs });
//   const { dir, gguf } = await hubSnapshot('Qwen/Qwen2.5-0.5B-Instruct-GGUF', { file: 'qwen2.5-0.5b-instruct-q4_0.gguf', … });
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
// A GGUF repo: options.file (a .gguf at the repo's top), else the repo's one .gguf (hub.js
// chooseGguf; several: an error naming them), is the only file fetched, as any other file is
// below; a snapshot holding it (or, with no file asked for and no safetensors checkpoint there,
// holding one .gguf) is used as it is. hubSnapshot's answer then names it: { gguf }.
//
// Downloads (the hub's HTTP API, as huggingface_hub uses it): the file list from
// /api/models/REPO/tree/REVISION (sizes known before the first byte: onProgress's total); each
// file from /REPO/resolve/REVISION/FILE, whose answer names the commit (X-Repo-Commit), the blob
// (X-Linked-Etag or ETag) and its size (X-Linked-Size or Content-Length), and for a large file
// redirects (302) to a download host. The token (options.token, HF_TOKEN, or HF_HOME/token) is
// sent to the hub's own origin only (scheme, host and port): never to the host a redirect leads
// to, nor over http after https. An interrupted file resumes from its .incomplete part (a Range
// request) when the server answers from where it stopped, else starts again (a part as long as
// the file or longer, a 416, a 206 from another offset); a blob named by a sha256 (an LFS file's
// ETag) is checked against it before it takes that name, as Python's tools read it too. A size
// the hub does not give is unknown, not 0; no file is written past its size (hub.js: the caps
// and the clocks, options.stallMs, minRate, graceMs), and what went wrong deletes the part.
// The cache is read as the folder loader reads (files-node.js): a ref or snapshot file that is
// not a regular file (a FIFO, a link to /dev/zero) is not cached, and a download replaces it.
//
// Why not @huggingface/hub's downloadFileToCacheDir (npm): it asks the hub's paths-info API even
// when the file is cached under main (no offline load), does not write refs/main (Python then
// cannot find the snapshot by branch), and logs with console.debug. `attnmap cache` lists the cache
// with a scanner of its own (hub-cache-node.js), which reports a broken entry instead of failing.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ErrorCode, fail } from '../../core/errors.js';
import { ModelFetchError } from '../load/fetch-body.js';
import { readText } from '../load/files-node.js';
import { HUB_URL, INDEX, isCommit, readRevision, resolveUrl, treeUrl, listTree, chooseFiles, shardNames, shardsToFetch, hubError,
  clocksOf, fetchWithin, bodyOf, sizeOf, limitOf, overError, readGgufFile, chooseGguf, onlyGguf, isModelGguf } from './hub.js';

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
    repo, hub, cache, revision: readRevision(options.revision ?? 'main'), file: readGgufFile(options.file),
    repoDir: path.join(cache, `models--${repo.replace('/', '--')}`),
    offline: options.offline ?? truthy(env.HF_HUB_OFFLINE),
    token: tokenOf(options, env), hubOrigin: new URL(hub).origin, clocks: clocksOf(options, 'loadModel'),
    onProgress: typeof options.onProgress === 'function' ? options.onProgress : () => {},
  };
}

// ----------------------------------------------------------------------------
// the cache

const exists = (p) => { try { fs.statSync(p); return true; } catch { return false; } };
// a regular file, links followed (stat, which does not open it: a FIFO cannot hang it)
const isRegular = (p) => { try { return fs.statSync(p).isFile(); } catch { return false; } };
// a cached text file, or null when it is absent or not one to read (files-node.js's rules: a
// FIFO, a device, over the size cap): not cached, which a download then replaces
const cachedText = (p, maxBytes) => { try { return readText(p, maxBytes) ?? null; } catch { return null; } };

function readRef(ctx) {
  if (isCommit(ctx.revision)) return ctx.revision;
  const commit = cachedText(path.join(ctx.repoDir, 'refs', ctx.revision), 4096)?.trim();
  return isCommit(commit) ? commit : null;
}

// whether a snapshot folder holds config.json and all the weights
function hasCheckpoint(dir) {
  if (!isRegular(path.join(dir, 'config.json'))) return false;
  if (isRegular(path.join(dir, 'model.safetensors'))) return true;
  const index = cachedText(path.join(dir, INDEX));
  if (index === null) return false;
  const shards = shardNames(index);
  return shards.length > 0 && shards.every((s) => isRegular(path.join(dir, s)));
}

// the GGUF models a snapshot folder holds (regular files, links followed), by name
function cachedGgufs(dir) {
  let names;
  try { names = fs.readdirSync(dir); } catch { return []; }
  return names.filter((n) => isModelGguf(n) && isRegular(path.join(dir, n)));
}

/**
 * The cached snapshot's folder when it holds config.json and all the weights, else null; for a
 * GGUF repo { dir, commit, gguf } when it holds ctx.file, or (no file asked for) its one .gguf.
 */
export function cachedSnapshot(ctx) {
  const commit = readRef(ctx);
  if (!commit) return null;
  const dir = path.join(ctx.repoDir, 'snapshots', commit);
  if (ctx.file !== undefined) return isRegular(path.join(dir, ctx.file)) ? { dir, commit, gguf: ctx.file } : null;
  if (hasCheckpoint(dir)) return { dir, commit };
  const gguf = onlyGguf(cachedGgufs(dir), ctx.repo, ' in its cached snapshot');   // several: say which
  return gguf === null ? null : { dir, commit, gguf };
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
  const ref = path.join(ctx.repoDir, 'refs', ctx.revision), tmp = `${ref}.${process.pid}.tmp`;
  fs.mkdirSync(path.dirname(ref), { recursive: true });
  // written beside it and renamed over it: whatever was there (a FIFO, which a write would wait
  // on forever) is replaced, and a reader sees the old commit or the new one
  fs.writeFileSync(tmp, commit);
  fs.renameSync(tmp, ref);
}

// ----------------------------------------------------------------------------
// the hub

// fetch with the token for the hub's own origin only; redirects followed here, so that a hop to
// another origin (another host or port, or http after https) goes without it. metadata: stop at
// a redirect to another origin and return it, as huggingface_hub's get_hf_file_metadata does
// (the redirect's own headers name the commit and blob; the download host's do not): { res, url }
// with url where the redirect points. Each answer must come within the stall clock.
async function hubFetch(ctx, url, init = {}, { metadata = false } = {}) {
  for (let hops = 0; hops < 5; hops++) {
    const headers = { ...init.headers };
    if (ctx.token && new URL(url).origin === ctx.hubOrigin) headers.authorization = `Bearer ${ctx.token}`;
    const res = await fetchWithin(url, { ...init, headers, redirect: 'manual' }, ctx.clocks);
    if (res.status < 300 || res.status >= 400 || !res.headers.get('location')) return { res, url };
    await res.body?.cancel();
    const next = new URL(res.headers.get('location'), url).href;
    if (metadata && new URL(next).origin !== new URL(url).origin) return { res, url: next };
    url = next;
  }
  throw new ModelFetchError(`${url}: more than 5 redirects`, url, 0);
}

/** The repo's files at the revision: [{ path, size }] from the hub's tree. */
const listFiles = (ctx) => listTree(async (u) => (await hubFetch(ctx, u)).res, treeUrl(ctx.hub, ctx.repo, ctx.revision), ctx.repo, ctx.revision, ctx.clocks);

// a file's blob, downloaded (or resumed) into blobs/ETAG and linked into snapshots/COMMIT/;
// listed: the size the file list gave (null: none)
async function download(ctx, file, listed) {
  const url = resolveUrl(ctx.hub, ctx.repo, ctx.commit ?? ctx.revision, file);   // once one file named the commit, that commit
  const head = await hubFetch(ctx, url, { method: 'HEAD' }, { metadata: true });
  if (!head.res.ok && !(head.res.status >= 300 && head.res.status < 400)) throw hubError(head.res, url, ctx.repo, file);
  const meta = metaOf(head.res, url, ctx, file), size = meta.size ?? listed;
  const blob = path.join(ctx.repoDir, 'blobs', meta.etag);
  fs.mkdirSync(path.dirname(blob), { recursive: true });
  if (!(isRegular(blob) && size !== null && fs.statSync(blob).size === size)) await fetchBlob(ctx, head.url, blob, { file, size, etag: meta.etag });
  linkSnapshot(ctx, meta.commit, file, meta.etag);
  return meta.commit;
}

// the commit, blob id and size the hub's answer names (the redirect's own headers, as Python
// reads them). The size: X-Linked-Size, or the Content-Length of a 2xx (a redirect's counts its
// own few bytes); none is null, unknown
function metaOf(res, url, ctx, file) {
  const commit = res.headers.get('x-repo-commit');
  const etag = (res.headers.get('x-linked-etag') ?? res.headers.get('etag') ?? '').replace(/^W\//, '').replace(/"/g, '');
  if (!isCommit(commit) || !/^[\w-]{8,128}$/.test(etag)) {
    throw new ModelFetchError(`${url}: the answer does not name the commit and blob of ${file} (X-Repo-Commit, ETag): is ${ctx.hub} the hub?`, url, res.status);
  }
  const size = sizeOf(res.headers.get('x-linked-size')) ?? (res.ok ? sizeOf(res.headers.get('content-length')) : null);
  return { commit, etag, size };
}

// the bytes of BLOB.incomplete an earlier try left, or 0: dropped when it is as long as the file
// or longer (a resume would ask past the end), or not a plain file of ours (a link, a FIFO: not
// written through)
function partLength(part, size) {
  let st;
  try { st = fs.lstatSync(part); } catch { return 0; }
  if (st.isFile() && (size === null || st.size < size)) return st.size;
  fs.rmSync(part, { force: true });
  return 0;
}

// the offset a 206 starts at (Content-Range: bytes START-END/SIZE), or -1 when it does not say
const rangeStart = (res) => Number(/^bytes\s+(\d+)-\d+\/(?:\d+|\*)$/.exec(res.headers.get('content-range') ?? '')?.[1] ?? -1);

// GET the file from have on (a Range request when have > 0): { res, final, from }, starting again
// from 0 when the server cannot answer from there (416, or a 206 from another offset)
async function getFrom(ctx, url, part, have, file) {
  for (;;) {
    const { res, url: final } = await hubFetch(ctx, url, { headers: have ? { range: `bytes=${have}-` } : {} });
    const from = res.status === 206 ? rangeStart(res) : 0;
    if (have && (res.status === 416 || (res.status === 206 && from !== have))) {
      await res.body?.cancel();
      fs.rmSync(part, { force: true });
      have = 0;
      continue;
    }
    if (!res.ok) throw hubError(res, final, ctx.repo, file);
    if (from !== 0 && from !== have) throw new ModelFetchError(`${final}: ${file}: a 206 from byte ${from} (Content-Range), not the ${have} asked for`, final, res.status);
    return { res, final, from };
  }
}

// the sha256 of the first n bytes of a part file, to go on with as the rest comes
function hashOf(part, n) {
  const hash = crypto.createHash('sha256');
  if (n === 0) return hash;
  const buf = Buffer.alloc(1 << 20), fd = fs.openSync(part, 'r');
  try {
    for (let at = 0; at < n;) {
      const k = fs.readSync(fd, buf, 0, Math.min(buf.length, n - at), at);
      if (k === 0) break;
      hash.update(buf.subarray(0, k));
      at += k;
    }
  } finally {
    fs.closeSync(fd);
  }
  return hash;
}

// GET the bytes into BLOB.incomplete, from where an earlier try stopped, check them, rename it
async function fetchBlob(ctx, url, blob, { file, size, etag }) {
  const part = `${blob}.incomplete`, limit = limitOf(file, size, url);
  const { res, final, from } = await getFrom(ctx, url, part, partLength(part, size), file);
  const lfs = /^[0-9a-f]{64}$/.test(etag), hash = lfs ? hashOf(part, from) : null;
  const body = bodyOf(res, final, ctx.clocks, { what: `the download of ${file}`, from, after: '; the next load resumes it' });
  const fd = fs.openSync(part, from ? 'a' : 'w');
  let loaded = from;
  try {
    ctx.onProgress({ file, loaded, total: size });
    for (let chunk; (chunk = await body.next()) !== null;) {
      if (loaded + chunk.length > limit) {
        body.cancel();
        fs.rmSync(part, { force: true });
        throw overError(file, final, size, limit, '; the partial file was deleted');
      }
      fs.writeSync(fd, chunk);
      hash?.update(chunk);
      loaded += chunk.length;
      ctx.onProgress({ file, loaded, total: size });
    }
  } finally {
    fs.closeSync(fd);
  }
  if (size !== null && loaded !== size) {
    throw new ModelFetchError(`${final}: ${file} has ${loaded} bytes but the hub said ${size}; the next load resumes or starts it again`, final, res.status);
  }
  const got = hash?.digest('hex');
  if (lfs && got !== etag) {
    fs.rmSync(part, { force: true });
    throw new ModelFetchError(`${final}: ${file} is not the file the hub named: its sha256 is ${got}, expected ${etag} (its ETag); the download was deleted`, final, res.status);
  }
  fs.renameSync(part, blob);
}

// a GGUF repo's one file ({ path, size } of the listing) into the cache: hubSnapshot's answer
async function ggufSnapshot(ctx, { path: file, size }) {
  const commit = ctx.commit = await download(ctx, file, size);
  writeRef(ctx, commit);
  return { dir: path.join(ctx.repoDir, 'snapshots', commit), commit, downloaded: [file], gguf: file };
}

/**
 * The repo's snapshot folder in the cache, downloading what it lacks unless offline:
 * { dir, commit, downloaded: [file names] }, and gguf (the file's name in dir) for a GGUF repo.
 */
export async function hubSnapshot(repo, options = {}) {
  const ctx = hubContext(repo, options);
  const cached = cachedSnapshot(ctx);
  if (cached) return { ...cached, downloaded: [] };
  if (ctx.offline) {
    fail(ErrorCode.FETCH_FAILED, `${ctx.file === undefined ? repo : `${ctx.file} of ${repo}`} (revision ${ctx.revision}) is not in the Hugging Face cache at ${ctx.cache}, and offline is set${options.offline === undefined ? ' (HF_HUB_OFFLINE)' : ''}: nothing was downloaded`);
  }
  const listing = await listFiles(ctx);
  const gguf = chooseGguf(listing, repo, ctx.file);
  if (gguf) return ggufSnapshot(ctx, gguf);
  const { files } = chooseFiles(listing, repo);
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
    for (const shard of shardsToFetch(readText(path.join(dir, INDEX)))) {   // over MAX_SHARDS: refused before any
      await download(ctx, shard, sizes.get(shard) ?? null);
      downloaded.push(shard);
    }
  }
  writeRef(ctx, commit);
  return { dir, commit, downloaded };
}
