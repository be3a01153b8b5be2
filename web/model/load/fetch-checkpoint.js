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
// What a server can make the page hold, and for how long, is bounded (issue 35):
// - the weights (model.safetensors, each shard) are read as far as their header says the file
//   goes (8 + the header's length + the largest data_offsets end); a Content-Length or a header
//   over what wasm32 can hold (4 GiB, the shards together) is TOO_LARGE before the rest is read;
//   a body that goes on past that size, or ends before it, INVALID_MODEL. Files of up to 16 MiB
//   together (fetch-source.js WHOLE_BYTES: the toy, a small shard) are read whole, each into one
//   array of its size; a larger one is returned as a source, its header read (issue 39 item 10):
//   loadModel reads each tensor from the download straight into its place in wasm memory, by
//   Range requests where the order of the file is not the model's, never the file whole
//   (fetch-source.js; a server that ignores Range: the file whole, as before);
// - the text files (config.json, the tokenizer's, the index) are read up to 64 MiB each, as the
//   folder loader reads them from disk (files-node.js): TOO_LARGE beyond, at once when a
//   Content-Length says so;
// - options.stallMs (default 30 s): no answer, or no bytes, for that long fails the file;
//   options.minRate (bytes/s, default 64 KiB/s; 0 for none) and options.graceMs (default 60 s):
//   once graceMs have passed since the answer came, a file must average minRate, so a server that
//   drips a byte now and then, which resets the stall clock every time, fails too. At 64 KiB/s a
//   500 MB model may take up to 2 h; 4 GiB, 18 h.
//
// A file that cannot be fetched (HTTP status other than 2xx, network error, CSP, CORS, file://,
// an HTML page where a required file should be), a body that stalls, drips or breaks off, rejects
// with a ModelFetchError naming its URL and the HTTP status; a file that is there but broken is
// an AttentionError INVALID_MODEL, one too large TOO_LARGE (with the URL and both sizes), as
// loadModel's own; options of the wrong kind INVALID_ARGUMENT.
import { ErrorCode, fail, describe, formatBytes, quote } from '../../core/errors.js';
import { MAX_HEADER_BYTES, MAX_TENSORS, isSource, makeSource } from './safetensors.js';
import { openGguf } from './gguf.js';
import { MAX_SHARDS } from './weights.js';
import { ModelFetchError, MAX_TEXT_BYTES, MAX_WEIGHTS_BYTES, clocksOf, fetchWithin, bodyOf } from './fetch-body.js';
import { alloc, readWhole, safetensorsEnds, streamSource, newLane, closeLane, WHOLE_BYTES } from './fetch-source.js';

export { ModelFetchError };

const FIRST_BYTES = 64 * 1024;        // a text of unknown size: the buffer starts so, and doubles
const HTML = Symbol('an HTML page');
const LT = 0x3c;                      // "<"

const invalid = (url, what) => fail(ErrorCode.INVALID_MODEL, `${url}: ${what}`);
const isHtmlType = (res) => /^text\/html\b/i.test(res.headers.get('content-type') ?? '');
// a compressed body: its Content-Length counts other bytes than the file's, and a Range would too
const isEncoded = (res) => !/^\s*(identity)?\s*$/i.test(res.headers.get('content-encoding') ?? '');
const GGUF_READ = 'a GGUF file is read';

// ----------------------------------------------------------------------------
// a text file (up to MAX_TEXT_BYTES) or a GGUF file (up to MAX_WEIGHTS_BYTES): read to its end

const readText = (body, url) => readAll(body, url, MAX_TEXT_BYTES, 'a config, tokenizer or index file is read');

// The body into one array of at most cap bytes: the size announced, grown by doubling only when it
// said none, or less (a compressed body: Content-Length counts what came over the wire). HTML when
// it starts with "<" (a file of ours never does); first(bytes) checks the first 4 bytes, if given.
async function readAll(body, url, cap, what, first) {
  const g = growing(body, url, cap, what, first);
  if (await g.upTo(Infinity) === HTML) return HTML;
  body.ended();
  return g.bytes.subarray(0, g.at);
}

// The body read into one array of at most cap bytes (TOO_LARGE beyond, saying `what` is read up to
// it; at once when the Content-Length says so), the size announced or doubling: g.upTo(end) reads
// until g.at reaches end or the body ends, and gives HTML when its first byte is "<" (else null);
// first(bytes) checks the first 4 bytes, if given; start: the array's first size. readAll reads
// to the end, fetchGguf a header.
function growing(body, url, cap, what, first, start = body.total ?? FIRST_BYTES) {
  const over = (size) => fail(ErrorCode.TOO_LARGE, `${url}: ${size}; ${what} up to ${formatBytes(cap)} (${cap} bytes)`);
  if (body.total > cap) over(`the server announces ${formatBytes(body.total)} (Content-Length ${body.total})`);
  const g = { bytes: alloc(Math.min(cap, start), url), at: 0 };
  g.upTo = async (end) => {
    for (let chunk; g.at < end && (chunk = await body.next()) !== null;) {
      if (g.at === 0 && chunk.length > 0 && chunk[0] === LT) return HTML;
      if (g.at + chunk.length > cap) over(`more than ${formatBytes(cap)} came (${g.at + chunk.length} bytes, and the body went on)`);
      if (g.at + chunk.length > g.bytes.length) {
        const bigger = alloc(Math.min(cap, Math.max(2 * g.bytes.length, g.at + chunk.length)), url);
        bigger.set(g.bytes.subarray(0, g.at));
        g.bytes = bigger;
      }
      g.bytes.set(chunk, g.at);
      if (first && g.at < 4 && g.at + chunk.length >= 4) first(g.bytes.subarray(0, 4));
      g.at += chunk.length;
    }
    return null;
  };
  return g;
}

// ----------------------------------------------------------------------------
// model.safetensors or a shard: the header from the first bytes, then the file it describes

// budget: { left, spent }: what wasm32 can still hold, and what the shards before this one took;
// lane: the checkpoint's downloads (fetch-source.js). The file whole (bytes), or a source over the
// download, its header read; encoded: the body is compressed (a Range would count other bytes)
async function readWeights(body, url, { budget, lane, encoded, limits }) {
  const tooLarge = (what) => fail(ErrorCode.TOO_LARGE, `${url}: ${what}; the weights must fit in what wasm32 can hold, ` +
    `${formatBytes(MAX_WEIGHTS_BYTES)}${budget.spent ? ` (${formatBytes(budget.left)} after the ${formatBytes(budget.spent)} of the shards before it)` : ''}`);
  if (body.total > budget.left) tooLarge(`the server announces ${formatBytes(body.total)} (Content-Length ${body.total})`);
  const head = await headOf(body, url);
  if (head === HTML) return HTML;
  // the size the header implies, checked before anything of that size is allocated
  const { chunks, n } = head, first = joined(chunks, 8 + n), { end, ranges } = dataOf(first.subarray(8), url), size = 8 + n + end;
  if (size > budget.left) tooLarge(`its header describes a file of ${formatBytes(size)} (${size} bytes)`);
  budget.left -= size;
  budget.spent += size;
  if (size <= lane.whole || encoded) {
    lane.whole = Math.max(0, lane.whole - size);
    return readWhole(body, url, size, safetensorsEnds(n), chunks);    // the file into one array of that size: not a byte more is kept
  }
  const got = chunks.reduce((a, c) => a + c.length, 0), last = chunks[chunks.length - 1];
  const rest = last.subarray(last.length - (got - 8 - n));     // the bytes after the header in its last chunk
  return streamSource({ url, size, head: first, rest, body, ranges: ranges.map(([b, e]) => [8 + n + b, 8 + n + e]), limits, lane });
}

// the first chunks, up to the end of the JSON header: { chunks, n } (n: the header's length), or
// HTML; at most 8 + MAX_HEADER_BYTES and one chunk are held
async function headOf(body, url) {
  const chunks = [];
  let got = 0, n = -1;
  while (n < 0 || got < 8 + n) {
    const chunk = await body.next();
    if (chunk === null) {
      body.ended();
      invalid(url, `the file ends after ${got} bytes, inside its header` + (n < 0 ? ' (a safetensors file starts with an 8-byte header length)' : ` (its first 8 bytes give a header of ${n} bytes)`));
    }
    chunks.push(chunk);
    got += chunk.length;
    if (n < 0 && got >= 8) n = headerLength(joined(chunks, 8), body.total, url);
    if (n === HTML) return HTML;
  }
  return { chunks, n };
}

// the first k bytes of the chunks, as one array
function joined(chunks, k) {
  const out = new Uint8Array(k);
  for (let i = 0, at = 0; at < k; at += chunks[i].length, i++) out.set(chunks[i].subarray(0, k - at), at);
  return out;
}

// The header's length from the first 8 bytes (little-endian u64), or HTML: "<!doctype" or
// "<html" read so is far above any header (a header's length may well start with 0x3c).
// The limits as safetensors.js has them, which checks the whole file again later.
function headerLength(first, total, url) {
  const n = new DataView(first.buffer).getBigUint64(0, true);
  if (n > BigInt(MAX_HEADER_BYTES) && first[0] === LT) return HTML;
  if (n > BigInt(MAX_WEIGHTS_BYTES) || (total !== undefined && n > BigInt(Math.max(0, total - 8)))) {
    invalid(url, `not a safetensors file, or a truncated one: its first 8 bytes give a header length of ${n} bytes` +
      (total === undefined ? '' : ` but the server announces only ${Math.max(0, total - 8)} bytes after them`));
  }
  if (n > BigInt(MAX_HEADER_BYTES)) fail(ErrorCode.TOO_LARGE, `${url}: the header length says ${n} bytes; at most ${MAX_HEADER_BYTES} are read`);
  return Number(n);
}

// The end of the data section: the largest data_offsets end, and each entry's [begin, end) that
// looks like one (what a download keeps for a later read: fetch-source.js). Only what the size
// needs is checked here; safetensors.js reads the header again, with all of the format's rules.
function dataOf(raw, url) {
  const bad = (what) => invalid(url, what);
  if (raw[0] !== 0x7b) bad(`not a safetensors file: the header must be a JSON object starting with "{"; it starts with ${raw.length ? `byte 0x${raw[0].toString(16).padStart(2, '0')}` : 'nothing (length 0)'}`);
  let header;
  try {
    header = JSON.parse(new TextDecoder().decode(raw));
  } catch (e) {
    bad(`the header is not valid JSON (${e.message})`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) bad(`the header must be a JSON object { name: { dtype, shape, data_offsets } }; received ${describe(header)}`);
  let end = 0;
  const ranges = [];
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const offsets = entry?.data_offsets;
    if (!Array.isArray(offsets) || !Number.isSafeInteger(offsets[1]) || offsets[1] < 0) {
      bad(`the header's entry ${quote(name)} has no data_offsets [begin, end] with an end in bytes; received ${describe(offsets)}`);
    }
    end = Math.max(end, offsets[1]);
    // (MAX_TENSORS at most: safetensors.js refuses a header of more)
    if (ranges.length < MAX_TENSORS && Number.isSafeInteger(offsets[0]) && offsets[0] >= 0 && offsets[0] <= offsets[1]) ranges.push([offsets[0], offsets[1]]);
  }
  return { end, ranges };
}

// ----------------------------------------------------------------------------
// one file, and the folder

/**
 * One file's bytes (a weights file: its bytes or a source over its download); undefined for an
 * optional file that is absent (404, or an HTML page).
 */
async function get(url, { optional, weights, limits, budget, lane }) {
  const res = await fetchWithin(url, {}, limits, undefined, '; a page opened from disk cannot fetch, and another host needs CORS and connect-src');
  const body = bodyOf(res, url, limits);
  let bytes;
  try {
    if (optional && res.status === 404) return undefined;
    if (!res.ok) throw new ModelFetchError(`${url}: HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`, url, res.status);
    bytes = isHtmlType(res) ? HTML : weights ? await readWeights(body, url, { budget, lane, encoded: isEncoded(res), limits }) : await readText(body, url);
    if (bytes !== HTML) return bytes;
    if (optional) return undefined;
    throw new ModelFetchError(`${url}: the server answered with an HTML page, not the file (a missing file behind a single-page app's fallback?)`, url, res.status);
  } finally {
    if (!isSource(bytes)) body.cancel();     // what was not read is not waited for (a body longer than its file, a 404's page)
  }
}

const text = (bytes) => (bytes === undefined ? undefined : new TextDecoder().decode(bytes));

const INDEX = 'model.safetensors.index.json';

/**
 * The folder's files as loadModel takes them: { config, weights, tokenizer?, tokenizerConfig? }
 * or { …, vocab, merges } or { …, vocabTxt }. weights: model.safetensors, or when it is absent
 * (404) { index, shards } from model.safetensors.index.json and the shards it names; each its
 * bytes, or above WHOLE_BYTES a source over its download (fetch-source.js), which loadModel reads
 * and closes (source.close() ends its download; a later read fetches again).
 */
export async function fetchCheckpoint(folder, base, options = {}) {
  const limits = clocksOf(options, 'fetchCheckpoint');
  const url = new URL(folder, base);
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  const listed = options?.files ? new Set(options.files) : null;
  const has = (name) => listed === null || listed.has(name);
  const budget = { left: MAX_WEIGHTS_BYTES, spent: 0 }, lane = newLane();       // the weights, all shards together
  const at = (name, optional, weights = false) => (has(name) ? get(new URL(name, url).href, { optional, weights, limits, budget, lane }) : Promise.resolve(undefined));
  at.folder = url;
  try {
    return await folderFiles(at, listed);
  } catch (e) {
    closeLane(lane);     // a download left open by a weights file fetched before the failure
    throw e;
  }
}

async function folderFiles(at, listed) {
  const config = text(await at('config.json', false));
  const both = await Promise.allSettled([weightsOf(at, listed), at('tokenizer.json', true)]);
  const failed = both.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  const [weights, tokenizer] = both.map((r) => r.value);
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

/** A URL whose path ends in .gguf: one GGUF file (fetchGguf), not a folder. */
export function isGgufUrl(name, base) {
  try { return /\.gguf$/i.test(new URL(name, base).pathname); } catch { return false; }
}

/**
 * A .gguf file by URL, as loadModel takes it: { gguf }, its bytes, or above WHOLE_BYTES with a
 * Content-Length and no Content-Encoding a source over its download (fetch-source.js: the header
 * read and checked here, each tensor then read into wasm memory as it comes; the file is never
 * held whole), which loadModel reads and closes. Read with the clocks of a folder's files, at
 * most what wasm32 can hold (TOO_LARGE, at once when a Content-Length says so); a file that does
 * not start with "GGUF" fails on its first bytes (INVALID_MODEL), not after the download. gguf.js
 * checks the rest.
 */
export async function fetchGguf(file, base, options = {}) {
  const limits = clocksOf(options, 'fetchGguf');
  const url = new URL(file, base).href;
  const res = await fetchWithin(url, {}, limits, undefined, '; a page opened from disk cannot fetch, and another host needs CORS and connect-src');
  const body = bodyOf(res, url, limits);
  let gguf;
  try {
    if (!res.ok) throw new ModelFetchError(`${url}: HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`, url, res.status);
    const magic = (b) => {
      if (String.fromCharCode(...b) !== 'GGUF') invalid(url, `not a GGUF file: it starts with bytes ${Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(' ')}, not "GGUF"`);
    };
    const whole = body.total === undefined || body.total <= WHOLE_BYTES || isEncoded(res);
    gguf = isHtmlType(res) ? HTML : whole ? await readAll(body, url, MAX_WEIGHTS_BYTES, GGUF_READ, magic) : await ggufStream(body, url, limits, magic);
    if (gguf === HTML) throw new ModelFetchError(`${url}: the server answered with an HTML page, not the file (a missing file behind a single-page app's fallback?)`, url, res.status);
    return { gguf };
  } finally {
    if (!isSource(gguf)) body.cancel();
  }
}

// A GGUF file of body.total bytes as a source over its download: the header read (gguf.js, through
// a buffer that grows as it asks for more) and checked against that size, then streamSource with
// what came so far as its head, every tensor's range as the reads to come. HTML when it starts
// with "<".
async function ggufStream(body, url, limits, magic) {
  const size = body.total, g = growing(body, url, MAX_WEIGHTS_BYTES, GGUF_READ, magic, FIRST_BYTES);
  const upTo = async (end) => {
    if (await g.upTo(end) === HTML) return HTML;
    if (g.at < end) {
      body.ended();
      invalid(url, `the file ends after ${g.at} bytes, inside its header; the server announced ${size} (a truncated file?)`);
    }
    return null;
  };
  if (await upTo(Math.min(4, size)) === HTML) return HTML;
  const header = makeSource(size, async (begin, end) => { await upTo(end); return g.bytes.subarray(begin, end); }, undefined, true);
  const { tensors } = await openGguf(header, url);
  const ranges = tensors.map((t) => [t.offset, t.offset + t.bytes]);
  return streamSource({ url, size, head: g.bytes.slice(0, g.at), body, ranges, limits, lane: newLane(), ends: 'the server announced (Content-Length)' });
}

// model.safetensors, or the index and its shards (a sharded checkpoint has no model.safetensors)
async function weightsOf(at, listed) {
  const sharded = listed ? !listed.has('model.safetensors') && listed.has(INDEX) : false;
  const single = sharded ? undefined : await at('model.safetensors', !listed, true);
  if (single !== undefined) return single;
  const indexBytes = await at(INDEX, true);
  if (indexBytes === undefined) {
    const missing = new URL('model.safetensors', at.folder).href;
    throw new ModelFetchError(`${missing}: HTTP 404 Not Found (nor is there a ${INDEX} for a sharded checkpoint)`, missing, 404);
  }
  const index = text(indexBytes);
  let names = [];
  try { names = [...new Set(Object.values(JSON.parse(index).weight_map ?? {}))].filter((n) => typeof n === 'string' && /^[\w.-]+$/.test(n) && !n.includes('..')); } catch { /* weights.js says what is wrong */ }
  // weights.js's limit before the first shard is asked for, as the hub applies it (issue 35)
  if (names.length > MAX_SHARDS) invalid(new URL(INDEX, at.folder).href, `names ${names.length} shards; at most ${MAX_SHARDS} are read, and none was fetched`);
  const shards = {};
  for (const name of names) shards[name] = await at(name, false, true);
  return { index, shards };
}
