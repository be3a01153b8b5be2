// hub-browser.js - loadModel('Qwen/Qwen2.5-0.5B') in a browser: the files from the Hugging Face
// Hub, kept in the Cache API (cache "attnmap-models") so that a second visit loads offline.
//
//   const files = await hubFiles('Qwen/Qwen2.5-0.5B', { revision, hubUrl, token, onProgress, cache, signal });
//   await hubSize('Qwen/Qwen2.5-0.5B')        // the bytes a load would download (the hub's file list)
//   await cachedModels() / await deleteCachedModel(repo)
//
// The cache first: the revision's commit (remembered under a key of its own) and every file of
// that commit in the Cache API: no request at all. Else the hub (hub.js for which files): the
// file list (/api/models/REPO/tree/REVISION, so onProgress has a total before the first byte),
// then each file from /REPO/resolve/REVISION/FILE, streamed, into the cache under its commit's
// URL. The weights are handed to loadModel as Blobs from the cache, which it reads slice by
// slice: the browser keeps them on disk, not twice in memory. cache: false keeps nothing (the
// files are then Blobs in memory). The token goes in an Authorization header, which browsers
// drop when a redirect leaves the hub's origin (Fetch: "cross-origin redirect"). A full quota is
// an AttentionError (TOO_LARGE) saying how much was asked for. Sizes and time are bounded as
// hub.js says (the caps; options.stallMs, minRate, graceMs). Cache keys name their repo exactly:
// deleteCachedModel('gpt2') leaves 'gpt2/large-thing' alone.
// A GGUF repo: options.file (a .gguf at the repo's top), else the repo's one .gguf (hub.js
// chooseGguf: several are an error naming them), is the one file fetched, and loadModel gets it
// as { gguf: File }; the commit's list of kept files grows with each file asked for, so another
// quantization of the same repo is one more download.
import { AttentionError, ErrorCode, fail, formatBytes } from '../../core/errors.js';
import { ModelFetchError } from '../load/fetch-body.js';
import { HUB_URL, INDEX, isCommit, parseRepoId, repoArg, readRevision, resolveUrl, treeUrl, infoUrl, listTree, chooseFiles, shardsToFetch,
  hubError, notTheHub, clocksOf, fetchWithin, bodyOf, readInfo, limitOf, overError, readGgufFile, chooseGguf, onlyGguf, isModelGguf } from './hub.js';

const CACHE = 'attnmap-models';
const REFS = '/api/attnmap/refs/';
const refKey = (hub, repo, rev) => `${hub}${REFS}${repo}/${encodeURIComponent(rev)}`;

// a key refKey made, read back: { hub, repo, revision } for a ref, { hub, repo, commit } for the
// list of a commit's files (refKey(…, commit)/files); null for another key or a repo id that is
// not one
function refOf(url) {
  const at = url.indexOf(REFS);
  if (at < 0) return null;
  const hub = url.slice(0, at), parts = url.slice(at + REFS.length).split('/');
  const files = parts.length >= 3 && parts.at(-1) === 'files' && isCommit(parts.at(-2));
  const repo = parseRepoId(parts.slice(0, files ? -2 : -1).join('/'));
  if (!repo) return null;
  if (files) return { hub, repo, commit: parts.at(-2) };
  try { return { hub, repo, revision: decodeURIComponent(parts.at(-1)) }; } catch { return null; }
}

// whether url is one of repo's files as resolveUrl(hub, repo, commit, file) made it, for one of hubs
const isFileOf = (url, repo, hubs) => hubs.some((hub) => url.startsWith(`${hub}/${repo}/resolve/`) &&
  /^[0-9a-f]{40}\/[^/]+$/.test(url.slice(`${hub}/${repo}/resolve/`.length)));

function contextOf(repo, options = {}) {
  const hub = String(options.hubUrl ?? HUB_URL).replace(/\/+$/, '');
  return {
    repo, hub, revision: readRevision(options.revision ?? 'main'), file: readGgufFile(options.file), token: options.token ?? null, signal: options.signal, clocks: clocksOf(options, 'loadModel'),
    onProgress: typeof options.onProgress === 'function' ? options.onProgress : () => {},
    useCache: options.cache !== false && typeof caches === 'object',
  };
}

function hubFetch(ctx, url) {
  const headers = ctx.token && new URL(url).origin === new URL(ctx.hub).origin ? { authorization: `Bearer ${ctx.token}` } : {};
  return fetchWithin(url, { headers }, ctx.clocks, ctx.signal, '; the hub needs a network, and a page\'s connect-src must allow it');
}

const listFiles = (ctx) => listTree((u) => hubFetch(ctx, u), treeUrl(ctx.hub, ctx.repo, ctx.commit ?? ctx.revision), ctx.repo, ctx.revision, ctx.clocks);

// the commit the revision names (the model info's sha): every file is then fetched and kept under it
async function pinCommit(ctx) {
  const url = infoUrl(ctx.hub, ctx.repo, ctx.revision), res = await hubFetch(ctx, url);
  if (!res.ok) throw hubError(res, url, ctx.repo, ctx.revision);
  const html = notTheHub(res, url);
  if (html) throw html;
  const sha = (await readInfo(res, url, ctx.clocks))?.sha;
  if (!/^[0-9a-f]{40}$/.test(sha ?? '')) throw new ModelFetchError(`${url}: the hub's answer names no commit`, url, res.status);
  ctx.commit = sha;
}

/**
 * The bytes loading repo (options.file: one of a GGUF repo's files) would download:
 * { files: [{ path, size }], total }, and for a repo with .gguf files gguf: [{ path, size }], each
 * of them; with several and no options.file, files is empty: loadModel needs one as { file }.
 */
export async function hubSize(repo, options = {}) {
  const ctx = contextOf(repo, options);
  await pinCommit(ctx);
  const listing = await listFiles(ctx);
  const gguf = listing.filter((f) => f.type !== 'directory' && isModelGguf(f.path)).map(({ path, size }) => ({ path, size })).sort((a, b) => (a.path < b.path ? -1 : 1));
  let files = [];
  try {
    files = filesOf(listing, ctx);
  } catch (e) {
    if (ctx.file !== undefined || gguf.length < 2 || e?.code !== ErrorCode.INVALID_ARGUMENT) throw e;   // several, none asked for: the choice
  }
  return { files, total: files.reduce((sum, f) => sum + (f.size ?? 0), 0), ...(gguf.length ? { gguf } : {}) };
}

// one file from the hub (at the pinned commit), streamed with progress: { blob }; size: the
// listing's (null: none), past which, or past the cap of its kind, nothing is kept
async function download(ctx, file, size) {
  const url = resolveUrl(ctx.hub, ctx.repo, ctx.commit ?? ctx.revision, file), limit = limitOf(file, size, url), res = await hubFetch(ctx, url);
  if (!res.ok) throw hubError(res, url, ctx.repo, file);
  const body = bodyOf(res, url, ctx.clocks, { what: `the download of ${file}`, signal: ctx.signal }), chunks = [];
  let loaded = 0;
  ctx.onProgress({ file, loaded, total: size });
  for (let chunk; (chunk = await body.next()) !== null;) {
    if (loaded + chunk.length > limit) {
      body.cancel();
      throw overError(file, url, size, limit);
    }
    chunks.push(chunk);
    loaded += chunk.length;
    ctx.onProgress({ file, loaded, total: size });
  }
  if (size !== null && loaded !== size) throw new ModelFetchError(`${url}: ${file} has ${loaded} bytes but the hub said ${size}`, url, res.status);
  return { blob: new Blob(chunks) };
}

async function store(cache, key, body, type) {
  try {
    await cache.put(key, new Response(body, { headers: { 'content-type': type } }));
  } catch (e) {
    if (e?.name !== 'QuotaExceededError') throw e;
    const size = typeof body === 'string' ? body.length : body.size;
    fail(ErrorCode.TOO_LARGE, `the browser's storage refused ${formatBytes(size)} for ${key} (${e.name}: its quota is full): free some space, or load with { cache: false }`);
  }
}

// the files a load reads from a listing ([{ path, size }]): a GGUF repo's one file, or a checkpoint's
const filesOf = (listing, ctx) => { const gguf = chooseGguf(listing, ctx.repo, ctx.file); return gguf ? [gguf] : chooseFiles(listing, ctx.repo).files; };

// the names kept for a commit ([] when none)
async function keptNames(cache, ctx, commit) {
  const listed = await cache.match(`${refKey(ctx.hub, ctx.repo, commit)}/files`);
  return listed ? JSON.parse(await listed.text()) : [];
}

// of the names kept for a commit, those this load reads (null: not there): the .gguf asked for, a
// checkpoint's files, or a GGUF repo's one .gguf
function wanted(names, ctx) {
  if (ctx.file !== undefined) return names.includes(ctx.file) ? [ctx.file] : null;
  if (names.includes('config.json')) return names.filter((n) => !n.endsWith('.gguf'));
  const gguf = onlyGguf(names, ctx.repo, ' in the Cache API');   // several: say which
  return gguf === null ? null : [gguf];
}

// the files of the cached commit, or null when the cache lacks the ref or any file
async function fromCache(ctx, cache) {
  const ref = await cache.match(refKey(ctx.hub, ctx.repo, ctx.revision));
  if (!ref) return null;
  const commit = (await ref.text()).trim(), get = async (file) => (await cache.match(resolveUrl(ctx.hub, ctx.repo, commit, file)))?.blob();
  const names = wanted(await keptNames(cache, ctx, commit), ctx), blobs = {};
  if (!names?.length) return null;
  for (const name of names) {
    const blob = await get(name);
    if (!blob) return null;
    blobs[name] = blob;
  }
  return blobs;
}

// every file the load needs: from the hub (stored as they come), then the list of the commit's files and its ref
async function fromHub(ctx, cache) {
  await pinCommit(ctx);
  const files = filesOf(await listFiles(ctx), ctx), sizes = new Map(files.map((f) => [f.path, f.size])), blobs = {};
  const get = async (name) => {
    const { blob } = await download(ctx, name, sizes.get(name) ?? null);
    if (cache) await store(cache, resolveUrl(ctx.hub, ctx.repo, ctx.commit, name), blob, 'application/octet-stream');
    blobs[name] = blob;
  };
  for (const f of files) if (f.path === 'model.safetensors' || !/\.safetensors$/.test(f.path)) await get(f.path);
  if (blobs[INDEX] && !blobs['model.safetensors']) for (const shard of shardsToFetch(await blobs[INDEX].text())) await get(shard);
  if (cache) {
    const kept = new Set([...await keptNames(cache, ctx, ctx.commit), ...Object.keys(blobs)]);   // a GGUF repo's files asked for before
    await store(cache, `${refKey(ctx.hub, ctx.repo, ctx.commit)}/files`, JSON.stringify([...kept]), 'application/json');
    await store(cache, refKey(ctx.hub, ctx.repo, ctx.revision), ctx.commit, 'text/plain');
  }
  return blobs;
}

// the blobs by file name -> loadModel's { config, weights, tokenizer…, vocab…, vocabTxt }, or { gguf }
async function asFiles(blobs) {
  const gguf = Object.keys(blobs).find((name) => name.endsWith('.gguf'));
  if (gguf) return { gguf: new File([blobs[gguf]], gguf) };   // named: loadModel's errors say which file
  const text = (name) => blobs[name]?.text();
  const weights = blobs['model.safetensors'] ?? {
    index: await text(INDEX),
    shards: Object.fromEntries(Object.entries(blobs).filter(([name]) => /\.safetensors$/.test(name))),
  };
  const files = { config: await text('config.json'), weights };
  for (const [key, name] of [['tokenizer', 'tokenizer.json'], ['tokenizerConfig', 'tokenizer_config.json'], ['vocab', 'vocab.json'], ['merges', 'merges.txt'], ['vocabTxt', 'vocab.txt']]) {
    if (blobs[name]) files[key] = await text(name);
  }
  if (files.tokenizer) for (const key of ['vocab', 'merges', 'vocabTxt']) delete files[key];
  return files;
}

/** The repo's files as loadModel takes them, from the Cache API or the hub (see the top of this file). */
export async function hubFiles(repo, options = {}) {
  const ctx = contextOf(repo, options);
  const cache = ctx.useCache ? await caches.open(CACHE) : null;
  const cached = cache ? await fromCache(ctx, cache) : null;
  return asFiles(cached ?? await fromHub(ctx, cache));
}

/** The models kept in the Cache API: [{ source: 'huggingface', name, repo, revision, commit, bytes, gguf? }] (gguf: a GGUF repo's files kept). */
export async function cachedModels() {
  if (typeof caches !== 'object') return [];
  const cache = await caches.open(CACHE), out = [];
  for (const req of await cache.keys()) {
    const ref = refOf(req.url);
    if (!ref || ref.revision === undefined) continue;
    const { hub, repo, revision } = ref, commit = (await (await cache.match(req)).text()).trim();
    const listed = await cache.match(`${refKey(hub, repo, commit)}/files`);
    if (!listed) continue;
    let bytes = 0;
    const names = JSON.parse(await listed.text()), gguf = names.filter(isModelGguf).sort();
    for (const name of names) bytes += (await (await cache.match(resolveUrl(hub, repo, commit, name)))?.blob())?.size ?? 0;
    out.push({ source: 'huggingface', name: repo, repo, revision, commit, bytes, ...(gguf.length ? { gguf } : {}) });
  }
  return out;
}

/** Forgets a repo's cached files (every revision): its keys alone, the repo named exactly. */
export async function deleteCachedModel(repo) {
  repo = repoArg(repo, 'deleteCachedModel');
  if (typeof caches !== 'object') return;
  const cache = await caches.open(CACHE), keys = await cache.keys();
  // the hubs its keys were made for: those of the refs, and a hub at an origin's root
  const hubs = [...new Set(keys.map((req) => refOf(req.url)?.hub).filter((h) => h !== undefined))];
  for (const req of keys) {
    const ref = refOf(req.url);
    if (ref ? ref.repo === repo : isFileOf(req.url, repo, [...hubs, new URL(req.url).origin])) await cache.delete(req);
  }
}

export { AttentionError };
