// gguf.js - reading a GGUF file (ggml's format: the files of llama.cpp, Ollama and LM Studio)
// without trusting it. Only the header is read here: the tensors' bytes stay in the file.
//
//   parseGguf(source, label = 'model.gguf')
//     source: a Uint8Array or ArrayBuffer (the whole file), or a source read by ranges: one made by
//     safetensors.js makeSource, or any { size, read(begin, end) -> Uint8Array } (a 2 GB file on
//     disk is never read whole: the header is read through a window that grows as needed)
//     -> { version, metadata: Map<key, value>, types: Map<key, type>, tensors, alignment, dataOffset, size }
//        value: a number (u8 … i32, f32, f64), a BigInt (u64, i64), a boolean, a string, or an
//        array: a typed array for numbers (Uint8Array … Float64Array, BigInt64Array for i64), a JS
//        array of booleans, strings or arrays; type: 'u32', 'string', 'array<string>', …
//        tensors: [{ name, shape, ne, type, typeName, blockSize, blockBytes, supported, offset, bytes }]
//        in the file's order; ne is ggml's order (ne[0] the contiguous dimension), shape PyTorch's
//        (ne reversed); offset is absolute (dataOffset + the file's relative offset)
//   openGguf(source, label)   the same as a promise, for a source whose reads are promises (a Blob)
//   GGML_TYPES, ggmlType(id)   ggml's tensor types as data (below)
//
// The format (ggml include/gguf.h and docs/gguf.md), little-endian:
//   "GGUF", version u32 (2 or 3: the same layout; 1 had u32 counts and is refused, as llama.cpp
//   does), tensor count u64, metadata count u64, then each metadata pair (key string, value type
//   u32, value), then each tensor info (name string, n_dims u32 ≤ 4, ne u64 × n_dims, type u32,
//   offset u64), padding to general.alignment (u32, a power of two, default 32), the data section.
//   A string is a u64 length and that many UTF-8 bytes; an array is an element type u32, a count
//   u64 and the elements (arrays may nest: docs/gguf.md).
// The rules are llama.cpp's gguf_init_from_file_impl (src/gguf.cpp), each refused by name: a key
// empty or twice, a tensor name of 64 bytes or more or twice, a dimension below 0, more than 2^53
// elements, an unknown or removed type, ne[0] not a multiple of the type's block, general.alignment
// not a u32 power of two, and the data laid out as ggml writes it: each tensor at the previous
// one's end rounded up to the alignment (so aligned, in order, with no overlap and no hole), its
// bytes inside the file. Stricter than llama.cpp: a bool other than 0 or 1 (the spec's rule),
// strings that are not UTF-8, and nested arrays deeper than MAX_NESTING.
//
// Every count and length is checked against the bytes left in the file before it is used (an
// array of 2^60 strings needs 2^63 bytes; a string of 2^60 bytes is longer than the file), so
// nothing is allocated or read from a size the file claims and cannot hold. Failures are
// AttentionErrors: INVALID_MODEL naming the key or tensor, what was expected and what came;
// TOO_LARGE for an honest file whose header is beyond MAX_HEADER_BYTES or has more than
// MAX_TENSORS tensors or MAX_KEYS keys; INVALID_ARGUMENT for a source that is not one.
import { ErrorCode, fail, asError, describe, quote } from '../../core/errors.js';
import { makeSource, isSource, bytesSource, runSync, runAsync } from './safetensors.js';

/** The most header bytes (metadata and tensor infos) read: far above any model's (~10 MB for a 256k vocabulary). */
export const MAX_HEADER_BYTES = 128 * 1024 * 1024;
/** The most tensors and metadata keys one file may list (a model has ~300 to ~3,000 tensors, ~40 keys). */
export const MAX_TENSORS = 1 << 20;
export const MAX_KEYS = 1 << 16;
/** How deep arrays may nest (docs/gguf.md allows nesting; llama.cpp reads none). */
export const MAX_NESTING = 8;
const MAX_NAME_BYTES = 63;                // ggml's GGML_MAX_NAME (64) with its terminating 0
const DEFAULT_ALIGNMENT = 32;             // GGUF_DEFAULT_ALIGNMENT
const FIRST_WINDOW = 64 * 1024, MAX_WINDOW = 8 * 1024 * 1024;

// ----------------------------------------------------------------------------
// ggml's tensor types (ggml/include/ggml.h enum ggml_type; block sizes and bytes per block from
// src/ggml.c type_traits and src/ggml-common.h's block structs). Bytes of a tensor =
// ne[0] / block · bytes per block · ne[1] · ne[2] · ne[3]. `supported`: the types attnmap's
// kernels read (issue 38). Removed types keep their id with block 0: a file that has one is refused.
//   [id, name, block, bytes per block, supported]
const TYPE_ROWS = [
  [0, 'F32', 1, 4, true], [1, 'F16', 1, 2, true], [2, 'Q4_0', 32, 18, true], [3, 'Q4_1', 32, 20, true],
  [4, 'Q4_2', 0, 0, false], [5, 'Q4_3', 0, 0, false],
  [6, 'Q5_0', 32, 22, true], [7, 'Q5_1', 32, 24, true], [8, 'Q8_0', 32, 34, true], [9, 'Q8_1', 32, 36, false],
  [10, 'Q2_K', 256, 84, true], [11, 'Q3_K', 256, 110, true], [12, 'Q4_K', 256, 144, true],
  [13, 'Q5_K', 256, 176, true], [14, 'Q6_K', 256, 210, true], [15, 'Q8_K', 256, 292, false],
  [16, 'IQ2_XXS', 256, 66, false], [17, 'IQ2_XS', 256, 74, false], [18, 'IQ3_XXS', 256, 98, false],
  [19, 'IQ1_S', 256, 50, false], [20, 'IQ4_NL', 32, 18, true], [21, 'IQ3_S', 256, 110, false],
  [22, 'IQ2_S', 256, 82, false], [23, 'IQ4_XS', 256, 136, true],
  [24, 'I8', 1, 1, false], [25, 'I16', 1, 2, false], [26, 'I32', 1, 4, false], [27, 'I64', 1, 8, false],
  [28, 'F64', 1, 8, false], [29, 'IQ1_M', 256, 56, false], [30, 'BF16', 1, 2, true],
  [31, 'Q4_0_4_4', 0, 0, false], [32, 'Q4_0_4_8', 0, 0, false], [33, 'Q4_0_8_8', 0, 0, false],
  [34, 'TQ1_0', 256, 54, false], [35, 'TQ2_0', 256, 66, false],
  [36, 'IQ4_NL_4_4', 0, 0, false], [37, 'IQ4_NL_4_8', 0, 0, false], [38, 'IQ4_NL_8_8', 0, 0, false],
  [39, 'MXFP4', 32, 17, false], [40, 'NVFP4', 64, 36, false], [41, 'Q1_0', 128, 18, false], [42, 'Q2_0', 64, 18, false],
];

/** ggml's types by id: { id, name, blockSize, blockBytes, supported, removed }. */
export const GGML_TYPES = Object.freeze(TYPE_ROWS.map(([id, name, blockSize, blockBytes, supported]) =>
  Object.freeze({ id, name, blockSize, blockBytes, supported, removed: blockSize === 0 })));

/** The type with this id, or undefined. */
export const ggmlType = (id) => GGML_TYPES[id];

/** The names of the types attnmap reads, for messages. */
export const SUPPORTED_TYPES = Object.freeze(GGML_TYPES.filter((t) => t.supported).map((t) => t.name));

/** The block-quantized types among them (Q8_0, Q4_K, …): a matrix's, kept in ggml's blocks in wasm memory (c_src/tensor.h). */
export const QUANTIZED_TYPES = Object.freeze(GGML_TYPES.filter((t) => t.supported && t.blockSize > 1));

// ----------------------------------------------------------------------------
// metadata value types (gguf.h enum gguf_type): [name, bytes, typed array]
const VALUE_TYPES = [
  ['u8', 1, Uint8Array], ['i8', 1, Int8Array], ['u16', 2, Uint16Array], ['i16', 2, Int16Array],
  ['u32', 4, Uint32Array], ['i32', 4, Int32Array], ['f32', 4, Float32Array], ['bool', 1, null],
  ['string', 8, null], ['array', 12, null], ['u64', 8, BigUint64Array], ['i64', 8, BigInt64Array],
  ['f64', 8, Float64Array],
];
const T_BOOL = 7, T_STRING = 8, T_ARRAY = 9;
// bytes[1] of a string or array is its smallest size in the file: its length or header alone

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const UTF8 = new TextDecoder('utf-8', { fatal: true }), ENCODER = new TextEncoder();

// ----------------------------------------------------------------------------
// entry points

export function parseGguf(source, label = 'model.gguf') {
  try {
    return runSync(parseSteps(source, label, 'parseGguf'), checkSync);
  } catch (e) {
    throw asError(e, 'parseGguf');
  }
}

export async function openGguf(source, label = 'model.gguf') {
  try {
    return await runAsync(parseSteps(source, label, 'openGguf'), checkRead);
  } catch (e) {
    throw asError(e, 'openGguf');
  }
}

// The parser is a generator: it yields { src, begin, end } for bytes and gets them back, driven
// by safetensors.js's runSync and runAsync, so one parser serves sources whose reads return bytes
// and sources whose reads return promises; checkRead sees what a caller's source returned.
const checkSync = (bytes, step) => {
  if (typeof bytes?.then === 'function') fail(ErrorCode.INVALID_ARGUMENT, 'parseGguf: this source reads asynchronously (a Blob or a File); use openGguf');
  return checkRead(bytes, step);
};

function checkRead(bytes, { begin, end }) {
  if (!(bytes instanceof Uint8Array) || bytes.length !== end - begin) {
    fail(ErrorCode.INVALID_ARGUMENT, `the source's read(${begin}, ${end}) returned ${describe(bytes)}; expected a Uint8Array of ${end - begin} bytes (did the file change while it was read?)`);
  }
  return bytes;
}

function sourceOf(x, fn) {
  if (isSource(x)) return x;
  if (x !== null && typeof x === 'object' && !ArrayBuffer.isView(x) && !(x instanceof ArrayBuffer) && typeof x.read === 'function') {
    const { size } = x;
    if (!Number.isSafeInteger(size) || size < 0) fail(ErrorCode.INVALID_ARGUMENT, `${fn}: source.size must be a non-negative integer; received ${describe(size)}`);
    return makeSource(size, (begin, end) => x.read(begin, end));
  }
  return bytesSource(x, fn);
}

// ----------------------------------------------------------------------------
// the cursor: the file's header read through a window

class Cursor {
  constructor(src, label) {
    this.src = src;
    this.size = src.size;
    this.label = label;
    this.pos = 0;                 // the next byte to read, an offset in the file
    this.at = 0;                  // the file offset of buf[0]
    this.buf = new Uint8Array(0);
    this.view = new DataView(this.buf.buffer);
    this.window = FIRST_WINDOW;
  }

  left() { return this.size - this.pos; }
  has(n) { return this.pos + n <= this.at + this.buf.length; }

  // the read that brings [pos, pos + n) into the window, after checking the file has them
  want(n, what) {
    if (n > this.left()) this.bad(`the file ends at byte ${this.size}, ${this.left()} bytes after ${what} begins at byte ${this.pos}, which needs ${n}: a truncated file, or a length that lies`);
    if (this.pos + n > MAX_HEADER_BYTES) {
      fail(ErrorCode.TOO_LARGE, `${this.label}: ${what} at byte ${this.pos} takes the header past ${MAX_HEADER_BYTES} bytes, the most attnmap reads`);
    }
    const end = Math.min(this.size, this.pos + Math.max(n, this.window));
    this.window = Math.min(MAX_WINDOW, this.window * 2);
    return { src: this.src, begin: this.pos, end };
  }

  fill(bytes) {
    this.at = this.pos;
    this.buf = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  }

  // readers of values already in the window
  u8() { return this.buf[this.pos++ - this.at]; }
  u32() { const v = this.view.getUint32(this.pos - this.at, true); this.pos += 4; return v; }
  u64() { const v = this.view.getBigUint64(this.pos - this.at, true); this.pos += 8; return v; }
  bytes(n) { const b = this.buf.subarray(this.pos - this.at, this.pos - this.at + n); this.pos += n; return b; }

  bad(message) { fail(ErrorCode.INVALID_MODEL, `${this.label}: ${message}`); }
}

// bytes [pos, pos + n) into the window (a read only when they are not there yet)
function* need(c, n, what) {
  if (!c.has(n)) c.fill(yield c.want(n, what));
}

// a u64 count or length checked against the bytes left, each element taking at least `each`
function countOf(c, n, each, what) {
  if (n * BigInt(each) > BigInt(c.left())) {
    c.bad(`${what} is ${n}, which needs at least ${n * BigInt(each)} bytes, but only ${c.left()} bytes are left in the file`);
  }
  return Number(n);
}

function* readString(c, what) {
  yield* need(c, 8, `the length of ${what}`);
  const n = countOf(c, c.u64(), 1, `the length of ${what}`);
  yield* need(c, n, what);
  return decode(c, c.bytes(n), what);
}

// the string at pos when the window holds all of it (a vocabulary's 150,000 tokens are read
// without a generator each), else undefined: readString reads it, with its checks and messages
function stringInWindow(c, what, i) {
  if (!c.has(8)) return undefined;
  const at = c.pos - c.at, n = c.view.getUint32(at, true);
  if (c.view.getUint32(at + 4, true) !== 0 || !c.has(8 + n)) return undefined;
  c.pos += 8;
  return decode(c, c.bytes(n), what, i);
}

function decode(c, b, what, i = -1) {
  const short = b.length <= 64 ? shortUtf8(b) : null;
  if (short !== null) return short;
  try {
    return UTF8.decode(b);
  } catch {
    return c.bad(`${what}${i < 0 ? '' : `[${i}]`} is not valid UTF-8`);
  }
}

// A short string's UTF-8 decoded by hand (TextDecoder costs ~0.5 µs a call, a vocabulary has
// 150,000 tokens), or null for anything but well-formed 1- to 3-byte sequences and 4-byte ones
// up to U+10FFFF: TextDecoder then decides, and refuses what is not UTF-8.
const units = [];
function shortUtf8(b) {
  units.length = 0;
  for (let k = 0; k < b.length;) {
    const x = b[k];
    if (x < 0x80) { units.push(x); k += 1; continue; }
    if (x >= 0xc2 && x < 0xe0 && k + 1 < b.length && (b[k + 1] & 0xc0) === 0x80) {
      units.push(((x & 0x1f) << 6) | (b[k + 1] & 0x3f)); k += 2; continue;
    }
    if (x >= 0xe0 && x < 0xf0 && k + 2 < b.length && (b[k + 1] & 0xc0) === 0x80 && (b[k + 2] & 0xc0) === 0x80) {
      const u = ((x & 0x0f) << 12) | ((b[k + 1] & 0x3f) << 6) | (b[k + 2] & 0x3f);
      if (u < 0x800 || (u >= 0xd800 && u < 0xe000)) return null;                    // overlong, a surrogate
      units.push(u); k += 3; continue;
    }
    if (x >= 0xf0 && x < 0xf5 && k + 3 < b.length && (b[k + 1] & 0xc0) === 0x80 && (b[k + 2] & 0xc0) === 0x80 && (b[k + 3] & 0xc0) === 0x80) {
      const u = ((x & 0x07) << 18) | ((b[k + 1] & 0x3f) << 12) | ((b[k + 2] & 0x3f) << 6) | (b[k + 3] & 0x3f);
      if (u < 0x10000 || u > 0x10ffff) return null;
      units.push(0xd800 + ((u - 0x10000) >> 10), 0xdc00 + ((u - 0x10000) & 0x3ff)); k += 4; continue;
    }
    return null;
  }
  return String.fromCharCode.apply(null, units);
}

// ----------------------------------------------------------------------------
// the header

function* parseSteps(source, label, fn) {
  if (typeof label !== 'string') fail(ErrorCode.INVALID_ARGUMENT, `${fn}: label must be a string; received ${describe(label)}`);
  const c = new Cursor(sourceOf(source, fn), label);
  // step 1: magic, version, counts
  yield* need(c, Math.min(c.size, 4), 'the magic');
  if (c.size >= 4) checkMagic(c);
  yield* need(c, 24, 'the GGUF header (magic, version, tensor count, metadata count)');
  const version = readVersion(c);
  const nTensors = countOf(c, c.u64(), 24, 'the tensor count');
  const nKeys = countOf(c, c.u64(), 13, 'the metadata count');
  if (nTensors > MAX_TENSORS) fail(ErrorCode.TOO_LARGE, `${label}: the file lists ${nTensors} tensors; at most ${MAX_TENSORS} are read`);
  if (nKeys > MAX_KEYS) fail(ErrorCode.TOO_LARGE, `${label}: the file has ${nKeys} metadata keys; at most ${MAX_KEYS} are read`);
  // step 2: the metadata, and the alignment it sets
  const { metadata, types } = yield* readMetadata(c, nKeys);
  const alignment = alignmentOf(c, metadata, types);
  // step 3: the tensor infos, then the data section's layout
  const infos = [];
  const names = new Set();
  for (let i = 0; i < nTensors; i++) infos.push(yield* readTensorInfo(c, i, names));
  const dataOffset = nTensors > 0 ? alignUp(c.pos, alignment) : c.pos;
  if (dataOffset > c.size) c.bad(`the data section should start at byte ${dataOffset} (the header's end padded to the alignment ${alignment}) but the file has ${c.size} bytes`);
  const tensors = layout(c, infos, dataOffset, alignment);
  return { version, metadata, types, tensors, alignment, dataOffset, size: c.size };
}

function checkMagic(c) {
  const magic = c.buf.subarray(0, 4);
  if (String.fromCharCode(...magic) !== 'GGUF') {
    c.bad(`not a GGUF file: it starts with ${[...magic].map((b) => `0x${b.toString(16).padStart(2, '0')}`).join(' ')}, expected "GGUF" (0x47 0x47 0x55 0x46)`);
  }
}

function readVersion(c) {
  c.pos = 4;
  const version = c.u32();
  if ((version & 0xffff) === 0 && version !== 0) c.bad(`GGUF version ${version}: a big-endian file (its version reads as ${version >>> 24} the other way round); attnmap reads little-endian GGUF`);
  if (version === 1) c.bad('GGUF version 1 is no longer read (llama.cpp dropped it too); expected version 2 or 3: convert the model again');
  if (version !== 2 && version !== 3) c.bad(`GGUF version ${version}; expected 2 or 3`);
  return version;
}

function* readMetadata(c, nKeys) {
  const metadata = new Map(), types = new Map();
  for (let i = 0; i < nKeys; i++) {
    const key = yield* readString(c, `metadata key ${i}`);
    if (key.length === 0) c.bad(`metadata key ${i} is empty`);
    if (metadata.has(key)) c.bad(`the metadata key ${quote(key)} appears twice (keys ${[...metadata.keys()].indexOf(key)} and ${i})`);
    const what = `the value of ${quote(key)}`;
    yield* need(c, 4, `the type of ${what}`);
    const type = c.u32();
    const { value, typeName } = yield* readValue(c, type, what, 0);
    metadata.set(key, value);
    types.set(key, typeName);
  }
  return { metadata, types };
}

function* readValue(c, type, what, depth) {
  if (type >= VALUE_TYPES.length) c.bad(`${what} has value type ${type}; GGUF's types are 0 to ${VALUE_TYPES.length - 1} (u8 … f64)`);
  const [name, width] = VALUE_TYPES[type];
  if (type === T_STRING) return { value: yield* readString(c, what), typeName: name };
  if (type === T_ARRAY) return yield* readArray(c, what, depth);
  yield* need(c, width, what);
  if (type === T_BOOL) return { value: readBool(c, what), typeName: name };
  const value = readNumber(c, type);
  return { value, typeName: name };
}

function readBool(c, what) {
  const b = c.u8();
  if (b > 1) c.bad(`${what} is a bool stored as ${b}; GGUF stores false as 0 and true as 1`);
  return b === 1;
}

function readNumber(c, type) {
  const v = c.view, at = c.pos - c.at;
  c.pos += VALUE_TYPES[type][1];
  switch (type) {
    case 0: return v.getUint8(at);
    case 1: return v.getInt8(at);
    case 2: return v.getUint16(at, true);
    case 3: return v.getInt16(at, true);
    case 4: return v.getUint32(at, true);
    case 5: return v.getInt32(at, true);
    case 6: return v.getFloat32(at, true);
    case 10: return v.getBigUint64(at, true);
    case 11: return v.getBigInt64(at, true);
    default: return v.getFloat64(at, true);
  }
}

// an array: element type, count, elements; the count checked against the file before anything is
// made of it (each element takes at least its type's bytes: 1 for a bool, 8 for a string's length)
function* readArray(c, what, depth) {
  if (depth >= MAX_NESTING) c.bad(`${what} nests arrays deeper than ${MAX_NESTING} levels`);
  yield* need(c, 12, `the element type and count of ${what}`);
  const type = c.u32(), rawCount = c.u64();
  if (type >= VALUE_TYPES.length) c.bad(`${what} is an array of value type ${type}; GGUF's types are 0 to ${VALUE_TYPES.length - 1} (u8 … f64)`);
  const [name, width, Typed] = VALUE_TYPES[type];
  const n = countOf(c, rawCount, width, `the element count of ${what} (an array of ${name})`);
  if (Typed) {
    yield* need(c, n * width, what);
    return { value: typedCopy(c, type, n), typeName: `array<${name}>` };
  }
  const out = new Array(n);
  if (type === T_BOOL) {
    yield* need(c, n, what);
    for (let i = 0; i < n; i++) out[i] = readBool(c, `${what}[${i}]`);
  } else if (type === T_STRING) {
    for (let i = 0; i < n; i++) out[i] = stringInWindow(c, what, i) ?? (yield* readString(c, `${what}[${i}]`));
  } else {
    for (let i = 0; i < n; i++) out[i] = (yield* readArray(c, `${what}[${i}]`, depth + 1)).value;
  }
  return { value: out, typeName: `array<${name}>` };
}

// n numbers of the window as a typed array of their own (the window's bytes are reused)
function typedCopy(c, type, n) {
  const [, width, Typed] = VALUE_TYPES[type];
  if (LITTLE_ENDIAN) return new Typed(c.bytes(n * width).slice().buffer);
  const out = new Typed(n);
  for (let i = 0; i < n; i++) out[i] = readNumber(c, type);
  return out;
}

function alignmentOf(c, metadata, types) {
  const key = 'general.alignment';
  if (!metadata.has(key)) return DEFAULT_ALIGNMENT;
  const a = metadata.get(key);
  if (types.get(key) !== 'u32') c.bad(`${key} must be a u32; it is a ${types.get(key)}`);
  if (a === 0 || (a & (a - 1)) !== 0) c.bad(`${key} is ${a}; it must be a power of two`);
  return a;
}

const alignUp = (x, a) => Math.ceil(x / a) * a;

// ----------------------------------------------------------------------------
// tensor infos

function* readTensorInfo(c, i, names) {
  const name = yield* readString(c, `the name of tensor ${i}`);
  const t = `tensor ${quote(name)}`;
  if (ENCODER.encode(name).length > MAX_NAME_BYTES) c.bad(`${t} (tensor ${i}) has a name of more than ${MAX_NAME_BYTES} bytes (ggml's limit)`);
  if (names.has(name)) c.bad(`the tensor name ${quote(name)} appears twice`);
  names.add(name);
  yield* need(c, 4, `the dimension count of ${t}`);
  const nDims = c.u32();
  if (nDims > 4) c.bad(`${t} has ${nDims} dimensions; ggml tensors have at most 4`);
  yield* need(c, 8 * nDims + 12, `the dimensions, type and offset of ${t}`);
  const ne = [];
  for (let d = 0; d < nDims; d++) ne.push(dimension(c, c.u64(), t, d));
  const typeId = c.u32();
  const type = ggmlType(typeId);
  if (!type) c.bad(`${t} has type ${typeId}, which is not a ggml type (ggml's types are 0 to ${GGML_TYPES.length - 1})`);
  if (type.removed) c.bad(`${t} has type ${typeId} (${type.name}), which ggml removed from GGUF files; convert the model again`);
  const offset = c.u64();
  return { name, ne, type, offset, bytes: byteSize(c, ne, type, t) };
}

function dimension(c, d, t, i) {
  if (d >= 1n << 63n) c.bad(`${t} has ne[${i}] = ${BigInt.asIntN(64, d)}; dimensions cannot be negative`);
  if (d > BigInt(Number.MAX_SAFE_INTEGER)) c.bad(`${t} has ne[${i}] = ${d}, above 2^53: no file can hold it`);
  return Number(d);
}

// ne[0] / block · bytes per block · ne[1] · ne[2] · ne[3], checked against the file at each step
function byteSize(c, ne, type, t) {
  const ne0 = ne.length ? ne[0] : 1;
  if (ne0 % type.blockSize !== 0) c.bad(`${t} has type ${type.name}, whose blocks hold ${type.blockSize} values, but ne[0] = ${ne0} is not a multiple of ${type.blockSize}`);
  if (ne.includes(0)) return 0;
  let bytes = ne0 / type.blockSize * type.blockBytes;
  for (let d = 1; d < ne.length && bytes <= c.size; d++) bytes *= ne[d];
  if (bytes > c.size) c.bad(`${t} has ne [${ne.join(', ')}] of type ${type.name}: ${bytes > Number.MAX_SAFE_INTEGER ? 'more than 2^53' : bytes} bytes, more than the file's ${c.size}`);
  return bytes;
}

// each tensor starts where the previous one ends, rounded up to the alignment (ggml's layout)
function layout(c, infos, dataOffset, alignment) {
  const out = [];
  let expected = 0, prev = null;
  for (const { name, ne, type, offset, bytes } of infos) {
    const t = `tensor ${quote(name)}`;
    if (offset % BigInt(alignment) !== 0n) c.bad(`${t} has offset ${offset}, not a multiple of the alignment ${alignment}`);
    if (offset > BigInt(c.size)) c.bad(`${t} has offset ${offset}, past the file's end (the data section starts at byte ${dataOffset} of ${c.size})`);
    const at = Number(offset);
    if (at < expected) c.bad(`${t} at offset ${at} overlaps ${quote(prev)}, which ends at ${expected} (with padding); tensors are laid out in order`);
    if (at > expected) c.bad(`${t} has offset ${at} but ${prev === null ? 'the first tensor starts' : `the one before, ${quote(prev)}, ends`} at ${expected} (with padding): ggml lays tensors out with no gap`);
    if (dataOffset + at + bytes > c.size) {
      c.bad(`${t} (${type.name}, ${bytes} bytes) at byte ${dataOffset + at} ends at byte ${dataOffset + at + bytes}, past the file's end at ${c.size}: a truncated file`);
    }
    out.push(Object.freeze({
      name, shape: ne.slice().reverse(), ne, type: type.id, typeName: type.name, blockSize: type.blockSize,
      blockBytes: type.blockBytes, supported: type.supported, offset: dataOffset + at, bytes,
    }));
    expected = alignUp(at + bytes, alignment);
    prev = name;
  }
  return out;
}
