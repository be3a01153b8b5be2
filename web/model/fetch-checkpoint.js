// fetch-checkpoint.js - a checkpoint folder fetched over http(s), as loadModel takes it: what
// <attention-heatmap model="/path/to/folder/"> loads (model-node.js reads a folder from disk).
//
//   import { loadModel } from 'attnmap/model';
//   import { fetchCheckpoint } from '.../web/model/fetch-checkpoint.js';
//   const model = await loadModel(await fetchCheckpoint('/models/toy/', document.baseURI));
//
// The folder's URL is resolved against base (a page: document.baseURI) and gets a trailing "/".
// config.json first (a missing folder costs one request), then model.safetensors and the tokenizer:
// vocab.json + merges.txt (GPT-2's BPE), else vocab.txt (WordPiece). The tokenizer files are
// optional: a 404 on them is no error (the browser still logs the 404). Same-origin requests need
// only `connect-src 'self'`; another host needs CORS.
//
// A file that cannot be fetched (HTTP status other than 2xx, network error, CSP, CORS, file://)
// rejects with a ModelFetchError naming its URL and the HTTP status; a file that is there but
// broken is loadModel's AttentionError (INVALID_MODEL).

export class ModelFetchError extends Error {
  constructor(message, url, status) {
    super(message);
    this.name = 'ModelFetchError';
    this.url = url;
    this.status = status;       // 0: no HTTP answer
  }
}

/** One file: text or bytes; undefined for an optional file that answers 404. */
async function get(url, bytes, optional) {
  let res;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new ModelFetchError(`${url}: could not be fetched (${e.message}; a page opened from disk cannot fetch, ` +
      'and another host needs CORS and connect-src)', url, 0);
  }
  if (optional && res.status === 404) return undefined;
  if (!res.ok) throw new ModelFetchError(`${url}: HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`, url, res.status);
  return bytes ? new Uint8Array(await res.arrayBuffer()) : res.text();
}

/** The folder's files as loadModel({ config, weights, vocab, merges } or { config, weights, vocabTxt }) takes them. */
export async function fetchCheckpoint(folder, base) {
  const url = new URL(folder, base);
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  const at = (name) => new URL(name, url).href;
  const config = await get(at('config.json'), false, false);
  const [weights, vocab] = await Promise.all([get(at('model.safetensors'), true, false), get(at('vocab.json'), false, true)]);
  if (vocab !== undefined) return { config, weights, vocab, merges: await get(at('merges.txt'), false, false) };
  const vocabTxt = await get(at('vocab.txt'), false, true);
  return vocabTxt === undefined ? { config, weights } : { config, weights, vocabTxt };
}
