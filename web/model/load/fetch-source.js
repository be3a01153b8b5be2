// fetch-source.js - a weights file over http(s) as a source (safetensors.js makeSource): its
// bytes go where the reader asks for them, a tensor's place in wasm memory, as they come, and the
// file is never held whole (issue 39 item 10). fetch-checkpoint.js makes one for a safetensors
// file above what a checkpoint reads whole (WHOLE_BYTES), and for a GGUF file above it, once it
// has read and checked the header.
//
//   const src = streamSource({ url, size, head, rest, body, ranges, limits, lane, ends });
//   await src.readInto(begin, dest); const bytes = await src.read(begin, end);   // as any source
//   src.expect(begin, end)   the reader will read these bytes (loadModel: the tensors the model uses)
//   src.watch(fn)            fn(n) for each n bytes that come (loadModel's onProgress)
//   src.close()              the open download cancelled, what is kept dropped (a later read fetches again)
//
// One download is open at a time for a checkpoint (its `lane`: a shard's download ends when
// another's starts), read in the file's order. A read at the download's position takes the bytes
// as they come: each chunk copied once, into dest. A read further on passes over the bytes before
// it: a tensor there that will be read later is kept while what is kept stays within STAGE_BYTES,
// the rest is dropped, at most SKIP_BYTES of it; else, and for a read behind the position, the
// download is cancelled and a new request asks for the rest of the file from there (Range:
// bytes=begin-). The families read the embeddings, the final norm, then layer by layer; the file
// has its tensors by name (model.layers.10 before model.layers.2, model.norm last): a model of 30
// layers costs a few dozen requests, and holds at most STAGE_BYTES besides its weights.
//
// A server that ignores Range (200 and the whole file: python -m http.server), one that answers
// other bytes than asked, and a request with Range that cannot be made (another host without CORS
// for it): the file is read whole into one array, as every file was before, its first bytes
// checked against the header read first (INVALID_MODEL: the file changed on the server). Every
// request keeps the first one's guards: the clocks (one for the file, over all its requests:
// fetch-body.js), a body that goes on past the file's end (INVALID_MODEL), one that ends before
// the bytes asked for (INVALID_MODEL, a truncated file; ModelFetchError when it broke off).
import { AttentionError, ErrorCode, fail, formatBytes } from '../../core/errors.js';
import { makeSource } from './safetensors.js';
import { ModelFetchError, fetchWithin, bodyOf } from './fetch-body.js';

export const WHOLE_BYTES = 16 * 1024 * 1024;   // the weights files a checkpoint reads whole, together
export const STAGE_BYTES = 32 * 1024 * 1024;   // the tensors a file keeps for a later read, at most
const SKIP_BYTES = 4 * 1024 * 1024;            // bytes passed over and dropped rather than a new request
const PIECE_BYTES = 1 << 20;                   // read(begin, end)'s buffer (safetensors.js reads 1 MiB pieces)
const HINT = '; a page opened from disk cannot fetch, and another host needs CORS and connect-src';

const invalid = (url, what) => fail(ErrorCode.INVALID_MODEL, `${url}: ${what}`);
const httpError = (url, res) => new ModelFetchError(`${url}: HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`, url, res.status);

/** A checkpoint's downloads: the one open (drop() ends it) and what may still be read whole. */
export const newLane = () => ({ drop: null, whole: WHOLE_BYTES });
export const closeLane = (lane) => { lane.drop?.(); lane.drop = null; };

/** A new array of n bytes; an engine that cannot give it says OUT_OF_MEMORY, not a RangeError. */
export function alloc(n, url) {
  try {
    return new Uint8Array(n);
  } catch (e) {
    throw new AttentionError(ErrorCode.OUT_OF_MEMORY, `${url}: ${formatBytes(n)} could not be allocated for the file (${e.message})`);
  }
}

/** What a safetensors file's size is made of (n: its header's length), for the errors. */
export const safetensorsEnds = (n) => `its header describes (8 + ${n} + the data); a safetensors file ends with its last tensor`;

/**
 * The whole file, of the size its header gives (ends: how, safetensorsEnds), from a body whose
 * first chunks were read already: a body that goes on past it, or ends before it, is INVALID_MODEL.
 */
export async function readWhole(body, url, size, ends, chunks = []) {
  const file = alloc(size, url);
  const longer = () => invalid(url, `the body goes on past the ${size} bytes ${ends}`);
  let at = 0;
  const put = (chunk) => {
    if (at + chunk.length > size) longer();
    file.set(chunk, at);
    at += chunk.length;
  };
  chunks.forEach(put);
  while (at < size) {
    const chunk = await body.next();
    if (chunk === null) {
      body.ended();
      invalid(url, `the file ends after ${at} bytes; its header describes ${size} (a truncated file?)`);
    }
    put(chunk);
  }
  // the end: known when the server announced this very size; else nothing more may come
  if (body.total !== size) for (let more; (more = await body.next()) !== null;) if (more.length) longer();
  return file;
}

/**
 * The file as a source. head: its first bytes (a safetensors file's 8 + n, the length and the
 * header; a GGUF file's header and what came with it; checked by fetch-checkpoint.js); body: the
 * download they came from, at rest (the bytes after them that came in the same chunk); ranges:
 * every tensor's [begin, end) in the file, what is read unless expect() says otherwise; limits:
 * the clocks; lane: newLane()'s, shared by the checkpoint's files; ends: what makes the file's
 * size, for the errors (default: a safetensors file's, safetensorsEnds).
 */
export function streamSource({ url, size, head, rest, body, ranges, limits, lane, ends = safetensorsEnds(head.length - 8) }) {
  // wanted: the reads to come (every tensor's, until expect() names them); staged: tensors kept for them
  const s = { url, size, head, ends, limits, lane, clock: body.clock, stream: null, staged: [], stagedBytes: 0, whole: null,
    scratch: null, wanted: [], given: false, sorted: true, byEnd: new Map(), counted: 0, onBytes: null };
  s.drop = () => drop(s);
  for (const [begin, end] of ranges) want(s, begin, end);
  open(s, body, head.length, 0, rest);
  came(s, head.length + (rest?.length ?? 0));
  return makeSource(size, (begin, end) => read(s, begin, end), (begin, dest) => fill(s, begin, dest), true, {
    name: url,   // for the errors (model.js labels a GGUF file so)
    expect: (begin, end) => {
      if (!s.given) Object.assign(s, { wanted: [], given: true, byEnd: new Map() });
      want(s, begin, end);
    },
    watch: (fn) => { s.onBytes = fn; fn(s.counted); },
    close: () => { drop(s); Object.assign(s, { staged: [], stagedBytes: 0, whole: null, scratch: null }); },
  });
}

// ----------------------------------------------------------------------------
// the download: open (it ends the lane's other one), end, take bytes from

function drop(s) {
  if (s.stream) s.stream.body.cancel();
  s.stream = null;
  if (s.lane.drop === s.drop) s.lane.drop = null;
}

function open(s, body, at, from, rest = null) {
  if (s.lane.drop !== s.drop) closeLane(s.lane);
  s.lane.drop = s.drop;
  s.stream = { body, at, from, rest };
}

const came = (s, k) => { s.counted += k; s.onBytes?.(k); };

// the next bytes of the download, at most k: a view of a chunk, or null at its end
async function take(s, k) {
  const st = s.stream;
  let c = st.rest;
  st.rest = null;
  while (!c || c.length === 0) {
    c = await st.body.next();
    if (c === null) return null;
    came(s, c.length);
  }
  if (c.length > k) { st.rest = c.subarray(k); c = c.subarray(0, k); }
  st.at += c.length;
  return c;
}

function truncated(s) {
  s.stream.body.ended();
  invalid(s.url, `the file ends after ${s.stream.at} bytes; its header describes ${s.size} (a truncated file?)`);
}
const longer = (s) => invalid(s.url, `the body goes on past the ${s.size} bytes ${s.ends}`);

// dest.length bytes from the download's position into dest, chunk by chunk; at the file's end,
// the body must end too
async function streamInto(s, dest) {
  for (let got = 0; got < dest.length;) {
    const c = await take(s, dest.length - got);
    if (c === null) truncated(s);
    dest.set(c, got);
    got += c.length;
  }
  const st = s.stream;
  if (st.at < s.size) return;
  if (st.rest?.length) longer(s);
  if (st.body.total !== s.size - st.from) for (let more; (more = await st.body.next()) !== null;) if (more.length) longer(s);
  drop(s);
}

async function skipTo(s, to) {
  while (s.stream.at < to) if ((await take(s, to - s.stream.at)) === null) truncated(s);
}

// ----------------------------------------------------------------------------
// the reads to come, and the tensors kept for them

// a read of [begin, end) to come (a tensor read twice: twice)
function want(s, begin, end) {
  const t = s.byEnd.get(end);
  if (t && t.begin === begin) { t.left++; return; }
  const entry = { begin, end, left: 1 };
  s.wanted.push(entry);
  s.byEnd.set(end, entry);
  s.sorted = false;
}

// a read of [begin, end) done: the tensor it ends has one read less; a kept one is dropped when
// none is left
function done(s, begin, end) {
  const t = s.byEnd.get(end);
  if (!t || t.begin > begin) return;
  t.left = Math.max(0, t.left - 1);
  if (t.left > 0) return;
  const i = s.staged.findIndex((x) => x.begin === t.begin && x.end === t.end);
  if (i >= 0) s.stagedBytes -= s.staged.splice(i, 1)[0].bytes.length;
}

const keptAt = (s, begin, end) => s.staged.find((x) => x.begin <= begin && end <= x.end);

// the download from its position to `to`, keeping the tensors to be read there: false (nothing
// read) when they would pass STAGE_BYTES, or the bytes dropped SKIP_BYTES
async function passTo(s, to) {
  if (!s.sorted) { s.wanted.sort((a, b) => a.begin - b.begin); s.sorted = true; }
  const from = s.stream.at;
  const keep = s.wanted.filter((t) => t.left > 0 && t.begin >= from && t.end <= to && t.end > t.begin && !keptAt(s, t.begin, t.end));
  const kept = keep.reduce((a, t) => a + t.end - t.begin, 0);
  if (s.stagedBytes + kept > STAGE_BYTES || to - from - kept > SKIP_BYTES) return false;
  for (const t of keep) {
    await skipTo(s, t.begin);
    const bytes = alloc(t.end - t.begin, s.url);
    await streamInto(s, bytes);
    s.staged.push({ begin: t.begin, end: t.end, bytes });
    s.stagedBytes += bytes.length;
  }
  await skipTo(s, to);
  return true;
}

// ----------------------------------------------------------------------------
// a new download: from begin to the end (Range), or the file whole where that fails

async function seek(s, begin) {
  drop(s);
  let res;
  try {
    res = await fetchWithin(s.url, { headers: { Range: `bytes=${begin}-${s.size - 1}` } }, s.limits, undefined, HINT);
  } catch (e) {
    if (e instanceof ModelFetchError && e.unreachable) return readAll(s, null);   // Range refused before an answer (CORS)
    throw e;
  }
  const b = bodyOf(res, s.url, s.limits, { from: begin, clock: s.clock });
  if (res.status === 200) return readAll(s, res, b);
  if (res.status === 206 && rangeIs(res, begin, s.size)) return open(s, b, begin, begin);
  b.cancel();
  if (res.status === 206 || res.status === 416) return readAll(s, null);   // other bytes, or none: the file whole says what is wrong
  throw httpError(s.url, res);
}

// the file whole into one array (a server without Range): res and its body b, or a new request
async function readAll(s, res, b) {
  if (!res) {
    res = await fetchWithin(s.url, {}, s.limits, undefined, HINT);
    b = bodyOf(res, s.url, s.limits, { clock: s.clock });
  }
  open(s, b, 0, 0);
  try {
    if (!res.ok) throw httpError(s.url, res);
    const counting = { total: b.total, ended: b.ended, next: async () => { const c = await b.next(); if (c) came(s, c.length); return c; } };
    const file = await readWhole(counting, s.url, s.size, s.ends);
    if (file.subarray(0, s.head.length).some((x, i) => x !== s.head[i])) {
      invalid(s.url, `the file changed on the server: its first ${s.head.length} bytes (the header) differ from those the first request gave`);
    }
    Object.assign(s, { whole: file, staged: [], stagedBytes: 0 });
  } finally {
    drop(s);
  }
}

// ----------------------------------------------------------------------------
// the source's two reads

// dest filled from byte begin: from the whole file, the header, a kept tensor, or the download
async function fill(s, begin, dest) {
  const end = begin + dest.length, kept = keptAt(s, begin, end);
  if (s.whole) dest.set(s.whole.subarray(begin, end));
  else if (end <= s.head.length) dest.set(s.head.subarray(begin, end));
  else if (kept) dest.set(kept.bytes.subarray(begin - kept.begin, end - kept.begin));
  else {
    const st = s.stream;
    if (!st || st.at > begin || (st.at < begin && !(await passTo(s, begin)))) await seek(s, begin);
    if (s.whole) dest.set(s.whole.subarray(begin, end));
    else await streamInto(s, dest);
  }
  done(s, begin, end);
}

// the bytes [begin, end): a view of what is held, else of a buffer the next read reuses
async function read(s, begin, end) {
  const kept = keptAt(s, begin, end);
  const view = s.whole ? s.whole.subarray(begin, end) : end <= s.head.length ? s.head.subarray(begin, end)
    : kept ? kept.bytes.subarray(begin - kept.begin, end - kept.begin) : null;
  if (view) { done(s, begin, end); return view; }
  const out = end - begin > PIECE_BYTES ? alloc(end - begin, s.url) : (s.scratch ??= new Uint8Array(PIECE_BYTES)).subarray(0, end - begin);
  await fill(s, begin, out);
  return out;
}

// A 206 for the bytes asked, as far as the answer shows it (another host's Content-Range is
// visible only if exposed): Content-Range "bytes begin-(size - 1)/size" (or "/*"), else a
// Content-Length of size - begin, and no Content-Encoding (a range of compressed bytes)
function rangeIs(res, begin, size) {
  const range = res.headers.get('content-range'), length = res.headers.get('content-length'), coding = res.headers.get('content-encoding');
  if (coding && !/^\s*identity\s*$/i.test(coding)) return false;
  if (range !== null) {
    const m = /^\s*bytes\s+(\d+)-(\d+)\/(\d+|\*)\s*$/i.exec(range);
    return m !== null && Number(m[1]) === begin && Number(m[2]) === size - 1 && (m[3] === '*' || Number(m[3]) === size);
  }
  return length === null || Number(length) === size - begin;
}
