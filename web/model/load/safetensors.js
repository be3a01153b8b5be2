// safetensors.js - reading a .safetensors file without trusting it.
//
//   parseSafetensors(bytes, label = 'model.safetensors')
//     bytes: Uint8Array | ArrayBuffer, the whole file, or a source (makeSource: a file read
//     piece by piece, model-node.js) of which only the header is read here
//     -> { tensors: Map<name, { name, dtype, shape, begin, end }>, metadata: { [key]: string } | null }
//        begin/end are byte offsets into `bytes` (absolute, header included), end exclusive
//   readTensor(bytes, info, out)            bytes: as above; read a piece (1 MiB) at a time
//     writes the tensor's values as float32 into out, a Float32Array of exactly prod(shape)
//     elements (a view into wasm memory is fine: nothing else of that size is allocated);
//     F32, F16 and BF16 are converted exactly; a NaN or ±Inf is refused (INVALID_MODEL)
//
// The format (huggingface/safetensors README, "Format", and SafeTensors::read_metadata):
//   8 bytes   N, little-endian u64
//   N bytes   UTF-8 JSON object, starting with '{' (may be padded with trailing spaces):
//             { name: { dtype, shape, data_offsets: [begin, end] }, "__metadata__"?: { str: str } }
//   the rest  the data section; data_offsets are relative to its start, little-endian, row-major
// and the rules the reference enforces, which this file enforces too: N ≤ 100,000,000, keys
// unique (at every level), nesting no deeper than the format's (3), the data section "entirely indexed" (the tensors, sorted by offset, tile it with no
// hole, no overlap and nothing after the last one: that rules out polyglot files),
// end − begin = prod(shape) · bits(dtype) / 8, empty tensors (a 0 in the shape) and 0-rank
// tensors (shape []) allowed.
//
// Every dtype of the spec is known here so that a file is laid out correctly whatever it holds
// (a GPT-2 export may keep a BOOL or U8 buffer next to its weights); only F32, F16 and BF16 can be
// read: readTensor, and checkpoint.js for the tensors a model uses, refuse the others by name.
//
// Every failure is an AttentionError: INVALID_MODEL for a broken or unsupported file (a header
// length beyond the file: not a safetensors file, or a truncated one), TOO_LARGE for a header
// above the limit in a file that has it, INVALID_ARGUMENT for arguments of the wrong type. Nothing is
// allocated from a size the file claims before that size has been checked against the file.
import { ErrorCode, fail, asError, describe, shapeText, quote } from '../../core/errors.js';

export const MAX_HEADER_BYTES = 100_000_000;     // the reference's MAX_HEADER_SIZE

/** Bits per element of every safetensors dtype (safetensors/src/tensor.rs, Dtype::bitsize). */
export const DTYPE_BITS = Object.freeze({
  BOOL: 8, U8: 8, I8: 8, F8_E5M2: 8, F8_E4M3: 8, F8_E8M0: 8, F8_E4M3FNUZ: 8, F8_E5M2FNUZ: 8,
  I16: 16, U16: 16, F16: 16, BF16: 16, I32: 32, U32: 32, F32: 32, F64: 64, I64: 64, U64: 64,
  C64: 64, F4: 4, F6_E2M3: 6, F6_E3M2: 6,
});

/** The dtypes readTensor converts to float32. */
export const READABLE_DTYPES = Object.freeze(['F32', 'F16', 'BF16']);

// genuine typed arrays, measured through the engine's own accessors (see web/core/args.js)
const TYPED_PROTO = Object.getPrototypeOf(Uint8Array.prototype);
const intrinsic = (name) => Object.getOwnPropertyDescriptor(TYPED_PROTO, name).get;
const TA_TAG = intrinsic(Symbol.toStringTag), TA_LENGTH = intrinsic('length');
const TA_BUFFER = intrinsic('buffer'), TA_OFFSET = intrinsic('byteOffset');
const AB_BYTES = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;

/** The most tensors one file may list: far above any checkpoint's (a 70 B model has ~700 a shard). */
export const MAX_TENSORS = 65_536;

const bad = (message) => fail(ErrorCode.INVALID_MODEL, message);
const q = (s) => quote(s);

// ----------------------------------------------------------------------------
// sources: where the file's bytes are read from

/**
 * A file to read from without holding it whole: { size, read(begin, end) -> Uint8Array,
 * readInto?(begin, dest), async }. read returns the bytes [begin, end) (end <= size), a view that
 * may be reused by the next read, or with async a promise of them (a File, slice by slice:
 * weights.js blobSource); readInto, when there, fills dest from offset begin (a file read
 * straight into wasm memory). model-node.js makes one of a file; bytes in memory are one too
 * (bytesSource). Made by makeSource, so that it cannot be confused with bytes. extra: methods a
 * source may have besides (a download's, fetch-source.js: expect, watch, close).
 */
const SOURCE = Symbol('attnmap.source');
export const makeSource = (size, read, readInto, async = false, extra = {}) => Object.freeze({ ...extra, [SOURCE]: true, size, read, readInto, async });
export const isSource = (x) => x !== null && typeof x === 'object' && x[SOURCE] === true;

/** Bytes in memory as a source (a Uint8Array or an ArrayBuffer, checked as fileBytes checks them). */
export function bytesSource(bytes, fn = 'parseSafetensors') {
  const file = fileBytes(bytes, fn);
  return makeSource(file.length, (begin, end) => file.subarray(begin, end), (begin, dest) => dest.set(file.subarray(begin, begin + dest.length)));
}

const sourceOf = (x, fn) => (isSource(x) ? x : bytesSource(x, fn));

// The file as a fresh Uint8Array over the same memory (never a copy).
function fileBytes(bytes, fn) {
  let isBuffer = false;
  try { AB_BYTES.call(bytes); isBuffer = true; } catch { /* not an ArrayBuffer */ }
  if (TA_TAG.call(bytes) === 'Uint8Array' || isBuffer) {
    try {
      return isBuffer ? new Uint8Array(bytes) : new Uint8Array(TA_BUFFER.call(bytes), TA_OFFSET.call(bytes), TA_LENGTH.call(bytes));
    } catch {
      fail(ErrorCode.INVALID_ARGUMENT, `${fn}: bytes is detached (its ArrayBuffer was transferred to a worker, or was wasm memory that grew): pass the file's bytes again`);
    }
  }
  if (bytes instanceof Uint8Array || bytes instanceof ArrayBuffer) {
    fail(ErrorCode.INVALID_ARGUMENT, `${fn}: bytes looks like a ${bytes instanceof Uint8Array ? 'Uint8Array' : 'n ArrayBuffer'} but is not one (a Proxy or an object given its prototype): pass the Uint8Array or ArrayBuffer itself`);
  }
  return fail(ErrorCode.INVALID_ARGUMENT, `${fn}: bytes must be a Uint8Array or an ArrayBuffer holding the whole .safetensors file; received ${describe(bytes)}`);
}

// ----------------------------------------------------------------------------
// parseSafetensors

export function parseSafetensors(bytes, label = 'model.safetensors') {
  try {
    return runSync(parseSteps(bytes, label, 'parseSafetensors'));
  } catch (e) {
    throw asError(e, 'parseSafetensors');     // a throwing getter or a detached buffer: INVALID_ARGUMENT
  }
}

/** parseSafetensors for a source whose reads are promises (a File, slice by slice): resolves to the same. */
export async function openSafetensors(source, label = 'model.safetensors') {
  try {
    return await runAsync(parseSteps(source, label, 'openSafetensors'));
  } catch (e) {
    throw asError(e, 'openSafetensors');
  }
}

// The reading, written once for both: a generator that yields what it needs read ({ src, begin,
// end } for bytes back, or { src, begin, dest } to fill dest) and gets it back; runSync and
// runAsync drive it over a source whose reads return bytes or promises of them. check(got, step)
// sees each answer before the generator does (gguf.js checks what a caller's source returned).
export function runSync(steps, check = (got) => got) {
  let r = steps.next();
  while (!r.done) r = steps.next(check(readStep(r.value), r.value));
  return r.value;
}

export async function runAsync(steps, check = (got) => got) {
  let r = steps.next();
  while (!r.done) r = steps.next(check(await readStep(r.value), r.value));
  return r.value;
}

function readStep({ src, begin, end, dest }) {
  if (dest === undefined) return src.read(begin, end);
  if (src.readInto) return src.readInto(begin, dest);
  const bytes = src.read(begin, begin + dest.length);
  if (typeof bytes?.then === 'function') return bytes.then((b) => { dest.set(b); });
  dest.set(bytes);
  return undefined;
}

function* parseSteps(bytes, label, fn) {
  if (typeof label !== 'string') fail(ErrorCode.INVALID_ARGUMENT, `${fn}: label must be a string; received ${describe(label)}`);
  const src = sourceOf(bytes, fn), size = src.size;
  // step 1: the header's length, checked against the file and the limit before anything is read
  if (size < 8) bad(`${label}: the file has ${size} bytes; a safetensors file starts with an 8-byte header length`);
  const head = yield { src, begin: 0, end: 8 };
  const n = new DataView(head.buffer, head.byteOffset, 8).getBigUint64(0, true);
  if (n > BigInt(size - 8)) {
    bad(`${label}: not a safetensors file, or a truncated one: its first 8 bytes give a header length of ${n} bytes ` +
      `but the file has only ${size - 8} bytes after them`);
  }
  if (n > BigInt(MAX_HEADER_BYTES)) fail(ErrorCode.TOO_LARGE, `${label}: the header length says ${n} bytes; at most ${MAX_HEADER_BYTES} are read`);
  // step 2: the JSON header
  const header = readHeader(yield { src, begin: 8, end: 8 + Number(n) }, label);
  const dataStart = 8 + Number(n), dataLength = size - dataStart;
  // step 3: each entry on its own, then the layout of the data section as a whole
  let metadata = null;
  const tensors = new Map();
  for (const name of Object.keys(header)) {
    const entry = header[name];
    if (name === '__metadata__') metadata = readMetadata(entry, label);
    else tensors.set(name, tensorInfo(name, entry, dataStart, dataLength, label));
  }
  checkLayout(tensors, dataStart, dataLength, label);
  return { tensors, metadata, source: src };
}

function readHeader(raw, label) {
  if (raw.length === 0 || raw[0] !== 0x7b) {
    bad(`${label}: not a safetensors file: the header must be a JSON object starting with "{"; it starts with ${raw.length ? `byte 0x${raw[0].toString(16).padStart(2, '0')}` : 'nothing (length 0)'}`);
  }
  let text, header;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    bad(`${label}: the header is not valid UTF-8`);
  }
  scanHeader(text, label);   // before JSON.parse: nesting, duplicates and counts cost it nothing
  try {
    header = JSON.parse(text);
  } catch (e) {
    bad(`${label}: the header is not valid JSON (${e.message})`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    bad(`${label}: the header must be a JSON object { name: { dtype, shape, data_offsets } }; received ${describe(header)}`);
  }
  return header;
}

// The format nests three deep at most: the header object, an entry (or __metadata__), an array
// (shape, data_offsets). One pass over the text, before JSON.parse, refuses deeper nesting, a key
// twice in any object (JSON.parse keeps the last silently, the reference refuses it), and more
// than MAX_TENSORS entries; it leaves every other question about the text to JSON.parse.
const MAX_DEPTH = 3;

function scanHeader(text, label) {
  const keys = [];               // one Set per open object, null per open array
  let entries = 0, expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {                                           // a string: find its end
      let j = i + 1;
      while (j < text.length && text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c ? 2 : 1;
      if (j >= text.length) return;                           // unterminated: JSON.parse says so
      if (expectKey && keys.length && keys[keys.length - 1]) checkKey(keys, text.slice(i, j + 1), entries, label);
      if (expectKey && keys.length === 1) entries++;
      if (entries > MAX_TENSORS) bad(`${label}: the header lists more than ${MAX_TENSORS} tensors`);
      expectKey = false;
      i = j;
    } else if (c === 0x7b || c === 0x5b) {
      keys.push(c === 0x7b ? new Set() : null);
      if (keys.length > MAX_DEPTH) bad(`${label}: the header nests deeper than the format's ${MAX_DEPTH} levels (header, entry, shape) at byte ${i}`);
      expectKey = c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) {
      keys.pop();
      expectKey = false;
    } else if (c === 0x2c) {
      expectKey = keys.length > 0 && keys[keys.length - 1] !== null;
    }
  }
}

function checkKey(keys, quoted, entries, label) {
  let key;
  try { key = JSON.parse(quoted); } catch { return; }           // a bad escape: JSON.parse says so
  const seen = keys[keys.length - 1];
  if (seen.has(key)) {
    bad(`${label}: the header has the key ${q(key)} twice${keys.length > 1 ? ` inside one entry (entry ${entries})` : ''} (the safetensors format disallows duplicate keys)`);
  }
  seen.add(key);
}

function readMetadata(entry, label) {
  if (entry === null) return null;
  if (typeof entry !== 'object' || Array.isArray(entry)) bad(`${label}: "__metadata__" must be an object of strings; received ${describe(entry)}`);
  const out = Object.create(null);
  for (const key of Object.keys(entry)) {
    if (typeof entry[key] !== 'string') bad(`${label}: "__metadata__" values must be strings; ${q(key)} is ${describe(entry[key])}`);
    out[key] = entry[key];
  }
  return out;
}

// prod(shape), or -1 when it passes 2^53
function elementCount(shape) {
  if (shape.includes(0)) return 0;
  let count = 1;
  for (const d of shape) {
    count *= d;
    if (count > Number.MAX_SAFE_INTEGER) return -1;
  }
  return count;
}

function tensorInfo(name, entry, dataStart, dataLength, label) {
  const t = `${label}: tensor ${q(name)}`;
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) bad(`${t} must be an object { dtype, shape, data_offsets }; received ${describe(entry)}`);
  const { dtype, shape, data_offsets: offsets } = entry;
  if (typeof dtype !== 'string' || !Object.hasOwn(DTYPE_BITS, dtype)) {
    bad(`${t} has dtype ${typeof dtype === 'string' ? q(dtype) : describe(dtype)}, which is not a safetensors dtype (attnmap reads ${READABLE_DTYPES.join(', ')})`);
  }
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    bad(`${t} has shape ${shapeText(shape)}; expected an array of non-negative integers`);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)) {
    bad(`${t} has data_offsets ${shapeText(offsets)}; expected [begin, end], two non-negative integers`);
  }
  const [begin, end] = offsets;
  if (begin > end) bad(`${t} has data_offsets [${begin}, ${end}]: begin is after end`);
  if (end > dataLength) bad(`${t} has data_offsets [${begin}, ${end}] but the data section has only ${dataLength} bytes`);
  const count = elementCount(shape);
  if (count < 0) bad(`${t} has shape ${shapeText(shape)}, more than 2^53 elements: the file cannot hold it`);
  const bits = count * DTYPE_BITS[dtype];
  if (bits % 8 !== 0) bad(`${t} has shape ${shapeText(shape)} × ${dtype} = ${bits} bits, not a whole number of bytes`);
  if (end - begin !== bits / 8) {
    bad(`${t} has data_offsets [${begin}, ${end}] (${end - begin} bytes) but shape ${shapeText(shape)} × ${dtype} needs ${bits / 8} bytes`);
  }
  return { name, dtype, shape: shape.slice(), begin: dataStart + begin, end: dataStart + end };
}

// Sorted by offset, the tensors must tile the data section exactly.
function checkLayout(tensors, dataStart, dataLength, label) {
  const sorted = [...tensors.values()].sort((a, b) => a.begin - b.begin || a.end - b.end);
  const rel = (x) => x - dataStart;
  let at = dataStart, last = null;
  for (const t of sorted) {
    if (t.begin < at) {
      bad(`${label}: tensors ${q(last.name)} [${rel(last.begin)}, ${rel(last.end)}] and ${q(t.name)} [${rel(t.begin)}, ${rel(t.end)}] overlap`);
    }
    if (t.begin > at) {
      bad(`${label}: bytes [${rel(at)}, ${rel(t.begin)}) of the data section belong to no tensor (the format allows no holes)`);
    }
    at = t.end;
    last = t;
  }
  if (rel(at) !== dataLength) {
    bad(`${label}: the tensors end at byte ${rel(at)} of the data section but it has ${dataLength} bytes (the format allows nothing after the last tensor)`);
  }
}

// ----------------------------------------------------------------------------
// readTensor

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// the 65,536 float16 values as float32, built on first use (256 KiB); gguf-weights.js's Q8_0 scales too
let F16_TABLE = null;
export function f16Table() {
  if (F16_TABLE) return F16_TABLE;
  const table = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    if (exp === 0) table[h] = sign * mant * 2 ** -24;                       // ±0 and subnormals
    else if (exp === 31) table[h] = mant ? NaN : sign * Infinity;
    else table[h] = sign * (1024 + mant) * 2 ** (exp - 25);
  }
  return (F16_TABLE = table);
}

export function readTensor(bytes, info, out) {
  try {
    runSync(readSteps(bytes, info, out, 'readTensor'));
  } catch (e) {
    throw asError(e, 'readTensor');
  }
}

/** readTensor from a source whose reads are promises: resolves when out holds the values. */
export async function readTensorAsync(source, info, out) {
  try {
    await runAsync(readSteps(source, info, out, 'readTensorAsync'));
  } catch (e) {
    throw asError(e, 'readTensorAsync');
  }
}

/**
 * The tensor's bytes as the file stores them (no conversion) into dest, a Uint8Array of exactly
 * end - begin bytes (a view of wasm memory: a BF16 matrix stays BF16, a GGUF file's quantized
 * matrix stays in ggml's blocks: an info with block { size, bytes }, gguf-weights.js). Not checked
 * for NaN or ±Inf here: the caller checks (the model runtime does in C, c_src/linear.c
 * attn_first_non_finite). Returns a promise when the source's reads are promises.
 */
export function copyTensor(source, info, dest) {
  try {
    const steps = copySteps(source, info, dest);
    const first = steps.next();
    if (first.done) return undefined;
    const bytes = readStep(first.value);
    if (typeof bytes?.then !== 'function') { steps.next(bytes); return undefined; }
    return bytes.then((b) => { steps.next(b); }).catch((e) => { throw asError(e, 'copyTensor'); });
  } catch (e) {
    throw asError(e, 'copyTensor');
  }
}

function* copySteps(bytes, info, dest) {
  const file = sourceOf(bytes, 'copyTensor');
  const { begin, end } = checkInfo(file, info, 'copyTensor', true);
  if (TA_TAG.call(dest) !== 'Uint8Array' || TA_LENGTH.call(dest) !== end - begin) {
    fail(ErrorCode.INVALID_ARGUMENT, `copyTensor: dest must be a Uint8Array of ${end - begin} bytes; received ${describe(dest)}`);
  }
  yield { src: file, begin, dest };
}

// info checked against the file: the parseSafetensors entry it must be, or gguf-weights.js's of a
// GGUF tensor (of a block-quantized type: block { size, bytes }, whose bytes only copyTensor
// reads, as they are: `raw`)
function checkInfo(file, info, fn, raw = false) {
  if (info === null || typeof info !== 'object') fail(ErrorCode.INVALID_ARGUMENT, `${fn}: info must be an entry of parseSafetensors(...).tensors; received ${describe(info)}`);
  const { name, dtype, shape, begin, end, block } = info;
  const count = Array.isArray(shape) && shape.every((d) => Number.isSafeInteger(d) && d >= 0) ? elementCount(shape) : -1;
  if (count < 0 || !Number.isSafeInteger(begin) || !Number.isSafeInteger(end) || begin < 0 || end > file.size ||
      end - begin !== storedBytes(dtype, shape, count, block)) {
    fail(ErrorCode.INVALID_ARGUMENT, `${fn}: info must be an entry of parseSafetensors(...).tensors for these bytes; received { dtype: ${describe(dtype)}, shape: ${shapeText(shape)}, begin: ${describe(begin)}, end: ${describe(end)} }`);
  }
  if (block !== undefined && !raw) bad(`tensor ${q(String(name))} is ${dtype}, ggml's quantized blocks: its bytes are kept as they are (copyTensor), not read as float32`);
  if (block === undefined && !READABLE_DTYPES.includes(dtype)) bad(`tensor ${q(String(name))} has dtype ${dtype}; attnmap reads ${READABLE_DTYPES.join(', ')}`);
  return { name, dtype, shape, begin, end, count };
}

// the bytes a tensor of count values takes in the file: count · bits / 8, or for a block-quantized
// one (block { size, bytes }) rows of shape's last dimension / size blocks; -1 when it cannot be
function storedBytes(dtype, shape, count, block) {
  if (block === undefined) return Object.hasOwn(DTYPE_BITS, dtype) ? count * DTYPE_BITS[dtype] / 8 : -1;
  const { size, bytes } = block ?? {}, last = shape.length ? shape[shape.length - 1] : 1;
  if (!Number.isSafeInteger(size) || size < 1 || !Number.isSafeInteger(bytes) || bytes < 1 || last % size !== 0) return -1;
  return count / size * bytes;
}

function* readSteps(bytes, info, out, fn) {
  const file = sourceOf(bytes, fn);
  const { name, dtype, shape, begin, count } = checkInfo(file, info, fn);
  if (TA_TAG.call(out) !== 'Float32Array' || TA_LENGTH.call(out) !== count) {
    fail(ErrorCode.INVALID_ARGUMENT, `${fn}: out must be a Float32Array of ${count} elements (shape ${shapeText(shape)}); received ${describe(out)}`);
  }
  const dst = new Float32Array(TA_BUFFER.call(out), TA_OFFSET.call(out), count);
  const firstBad = yield* readPieces(file, begin, dtype, dst);
  if (firstBad >= 0) {
    const raw = dst[firstBad];
    const what = Number.isNaN(raw) ? 'NaN' : raw > 0 ? 'Infinity' : '-Infinity';
    bad(`tensor ${q(String(name))} has a non-finite value (${what}) at index ${firstBad}${shape.length > 1 ? ` (${indexText(firstBad, shape)})` : ''}: weights must be finite`);
  }
}

// The tensor's values from the source into dst, converted piece by piece (never the whole tensor
// twice in memory); float32 straight into dst when the source can (readInto). Returns the first
// index of a non-finite value, or -1.
const PIECE_BYTES = 1 << 20;

function* readPieces(file, begin, dtype, dst) {
  const width = DTYPE_BITS[dtype] / 8;
  if (dtype === 'F32' && LITTLE_ENDIAN) {
    yield { src: file, begin, dest: new Uint8Array(dst.buffer, dst.byteOffset, dst.length * 4) };
    return firstNonFinite(dst);
  }
  const per = PIECE_BYTES / width;
  for (let i = 0; i < dst.length; i += per) {
    const n = Math.min(per, dst.length - i);
    const src = yield { src: file, begin: begin + i * width, end: begin + (i + n) * width }, out = dst.subarray(i, i + n);
    const bad = dtype === 'F32' ? readF32(src, out) : dtype === 'F16' ? readF16(src, out) : readBF16(src, out);
    if (bad >= 0) return i + bad;
  }
  return -1;
}

function firstNonFinite(dst) {
  for (let i = 0; i < dst.length; i++) { const x = dst[i]; if (x - x !== 0) return i; }
  return -1;
}

// flat index -> [i, j, ...] in a row-major shape
function indexText(flat, shape) {
  const idx = [];
  for (let d = shape.length - 1; d >= 0; d--) { idx.unshift(flat % shape[d]); flat = Math.floor(flat / shape[d]); }
  return `[${idx.join(', ')}]`;
}

// Each returns the first index of a non-finite value, or -1.
function readF32(src, dst) {
  if (LITTLE_ENDIAN) {
    new Uint8Array(dst.buffer, dst.byteOffset, src.length).set(src);      // any alignment, no copy of the tensor
  } else {
    const v = new DataView(src.buffer, src.byteOffset, src.length);
    for (let i = 0; i < dst.length; i++) dst[i] = v.getFloat32(4 * i, true);
  }
  return firstNonFinite(dst);
}

function readF16(src, dst) {
  const table = f16Table();
  let firstBad = -1;
  for (let i = 0; i < dst.length; i++) {
    const h = src[2 * i] | (src[2 * i + 1] << 8);
    if ((h & 0x7c00) === 0x7c00 && firstBad < 0) firstBad = i;
    dst[i] = table[h];
  }
  return firstBad;
}

function readBF16(src, dst) {
  const bits = new Uint32Array(dst.buffer, dst.byteOffset, dst.length);   // a bfloat16 is the top half of a float32
  let firstBad = -1;
  for (let i = 0; i < dst.length; i++) {
    const h = src[2 * i] | (src[2 * i + 1] << 8);
    if ((h & 0x7f80) === 0x7f80 && firstBad < 0) firstBad = i;
    bits[i] = h << 16 >>> 0;
  }
  return firstBad;
}
