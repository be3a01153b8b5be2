// fetch-checkpoint.js - a checkpoint folder fetched over http(s), as loadModel takes it: what
// loadModel(url) and <attention-heatmap model="/path/to/folder/"> load (model-node.js reads a
// folder from disk).
//
//   import { loadModel } from 'attnmap/model';
//   const model = await loadModel('/models/gpt2/');                    // fetchCheckpoint inside
//   const files = await fetchCheckpoint('/models/toy/', document.baseURI, { files: ['config.json', 'model.safetensors', 'vocab.txt'] });
//
// The folder's URL is resolved against base (a page: document.baseURI) and gets a trailing "/".
// config.json first (a missing folder costs one request), then model.safetensors and the tokenizer:
// vocab.json + merges.txt (GPT-2's BPE), else vocab.txt (WordPiece). The tokenizer files are
// optional: a 404 on them is no error (the browser still logs the 404), and neither is an HTML
// page in their place (an SPA's fallback answers every path with index.html and status 200).
// options.files, the names the folder holds, fetches those alone: no request for what is not there.
// Same-origin requests need only `connect-src 'self'`; another host needs CORS.
//
// A file that cannot be fetched (HTTP status other than 2xx, network error, CSP, CORS, file://,
// an HTML page where a required file should be), a body that stops (no bytes for
// options.stallMs, default 30 s) or breaks off, rejects with a ModelFetchError naming its URL and
// the HTTP status; a file that is there but broken is loadModel's AttentionError (INVALID_MODEL).
import { AttentionError, ErrorCode } from '../core/errors.js';

/** An AttentionError (code FETCH_FAILED) with the file's URL and the HTTP status (0: no answer). */
export class ModelFetchError extends AttentionError {
  constructor(message, url, status) {
    super(ErrorCode.FETCH_FAILED, message);
    this.name = 'ModelFetchError';
    this.url = url;
    this.status = status;       // 0: no HTTP answer
  }
}

const STALL_MS = 30_000;

// an HTML page: by its content type, or a first byte of "<" (a file of ours never starts so)
const isHtml = (res, first) => /^text\/html\b/i.test(res.headers.get('content-type') ?? '') || first === 0x3c;

// the body, chunk by chunk: a stall (no bytes for stallMs) or a cut cancels it and says so
async function readBody(res, url, stallMs) {
  const total = Number(res.headers.get('content-length') ?? NaN);
  const reader = res.body.getReader(), chunks = [];
  let received = 0, timer;
  const stall = () => new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new ModelFetchError(`${url}: no data for ${stallMs / 1000} s after ${received} bytes${Number.isFinite(total) ? ` of ${total}` : ''}: the server stalled`, url, res.status)), stallMs);
  });
  try {
    for (;;) {
      let step;
      try {
        step = await Promise.race([reader.read(), stall()]);
      } catch (e) {
        if (e instanceof ModelFetchError) throw e;
        throw new ModelFetchError(`${url}: the download broke off after ${received} bytes${Number.isFinite(total) ? ` of ${total}` : ''} (${e.message})`, url, res.status);
      } finally {
        clearTimeout(timer);
      }
      if (step.done) break;
      chunks.push(step.value);
      received += step.value.length;
    }
  } catch (e) {
    reader.cancel().catch(() => {});
    throw e;
  }
  if (Number.isFinite(total) && received < total) throw new ModelFetchError(`${url}: the download broke off after ${received} bytes of ${total}`, url, res.status);
  const out = new Uint8Array(received);
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.length; }
  return out;
}

/** One file's bytes; undefined for an optional file that is absent (404, or an HTML page). */
async function get(url, { optional, stallMs }) {
  let res;
  const headers = new AbortController(), timer = setTimeout(() => headers.abort(), stallMs);
  try {
    res = await fetch(url, { signal: headers.signal });
  } catch (e) {
    throw new ModelFetchError(headers.signal.aborted ? `${url}: no answer within ${stallMs / 1000} s`
      : `${url}: could not be fetched (${e.message}; a page opened from disk cannot fetch, and another host needs CORS and connect-src)`, url, 0);
  } finally {
    clearTimeout(timer);
  }
  if (optional && res.status === 404) return undefined;
  if (!res.ok) throw new ModelFetchError(`${url}: HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`, url, res.status);
  const bytes = await readBody(res, url, stallMs);
  if (isHtml(res, bytes[0])) {
    if (optional) return undefined;
    throw new ModelFetchError(`${url}: the server answered with an HTML page, not the file (a missing file behind a single-page app's fallback?)`, url, res.status);
  }
  return bytes;
}

const text = (bytes) => (bytes === undefined ? undefined : new TextDecoder().decode(bytes));

const INDEX = 'model.safetensors.index.json';

/**
 * The folder's files as loadModel takes them: { config, weights, tokenizer?, tokenizerConfig? }
 * or { …, vocab, merges } or { …, vocabTxt }. weights: model.safetensors, or when it is absent
 * (404) { index, shards } from model.safetensors.index.json and the shards it names.
 */
export async function fetchCheckpoint(folder, base, options = {}) {
  const url = new URL(folder, base);
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  const stallMs = options.stallMs ?? STALL_MS;
  const listed = options.files ? new Set(options.files) : null;
  const has = (name) => listed === null || listed.has(name);
  const at = (name, optional) => (has(name) ? get(new URL(name, url).href, { optional, stallMs }) : Promise.resolve(undefined));
  at.folder = url;
  const config = text(await at('config.json', false));
  const [weights, tokenizer] = await Promise.all([weightsOf(at, listed), at('tokenizer.json', true)]);
  const files = { config, weights };
  if (tokenizer !== undefined) {
    const tokenizerConfig = await at('tokenizer_config.json', true);
    return Object.assign(files, { tokenizer: text(tokenizer) }, tokenizerConfig === undefined ? {} : { tokenizerConfig: text(tokenizerConfig) });
  }
  const vocab = await at('vocab.json', true);
  if (vocab !== undefined) return Object.assign(files, { vocab: text(vocab), merges: text(await at('merges.txt', false)) });
  const vocabTxt = text(await at('vocab.txt', true));
  return vocabTxt === undefined ? files : Object.assign(files, { vocabTxt });
}

// model.safetensors, or the index and its shards (a sharded checkpoint has no model.safetensors)
async function weightsOf(at, listed) {
  const sharded = listed ? !listed.has('model.safetensors') && listed.has(INDEX) : false;
  const single = sharded ? undefined : await at('model.safetensors', !listed);
  if (single !== undefined) return single;
  const indexBytes = await at(INDEX, true);
  if (indexBytes === undefined) {
    const missing = new URL('model.safetensors', at.folder).href;
    throw new ModelFetchError(`${missing}: HTTP 404 Not Found (nor is there a ${INDEX} for a sharded checkpoint)`, missing, 404);
  }
  const index = text(indexBytes);
  let names = [];
  try { names = [...new Set(Object.values(JSON.parse(index).weight_map ?? {}))].filter((n) => typeof n === 'string' && /^[\w.-]+$/.test(n) && !n.includes('..')); } catch { /* weights.js says what is wrong */ }
  const shards = {};
  for (const name of names) shards[name] = await at(name, false);
  return { index, shards };
}
