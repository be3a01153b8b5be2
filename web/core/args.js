// args.js - reading and checking the arguments, before anything touches wasm memory. A
// checked argument records what was read ({ name, rows, cols, nested, src, kind }); the
// writers in memory.js copy exactly that much, whatever a getter does in between.
import { ErrorCode, fail, describe, shapeText, shapeStr, changed } from './errors.js';

export const FLT_MAX = 3.4028234663852886e38;
const MAX_DIM = 0x7fffffff;          // C int

// A typed array's own getters can lie (a subclass's `get length()`, a Proxy whose length
// changes between reads), and TypedArray.prototype.set copies the real elements whatever
// `length` said. So genuine typed arrays are measured and copied through the engine's own
// accessors, read off %TypedArray%.prototype once, and everything else element by element,
// never past the count that was checked.
const TYPED_PROTO = Object.getPrototypeOf(Uint8Array.prototype);
const intrinsic = (name) => Object.getOwnPropertyDescriptor(TYPED_PROTO, name).get;
const TA_TAG = intrinsic(Symbol.toStringTag), TA_LENGTH = intrinsic('length');
const TA_BUFFER = intrinsic('buffer'), TA_OFFSET = intrinsic('byteOffset');

// 'Float32Array', 'Uint8Array', ... for a genuine typed array (its internal slots, whatever its
// prototype says); undefined for anything else, a Proxy included
const typedKind = (x) => TA_TAG.call(x);

// The first `count` elements of a genuine typed array as a fresh view of the same memory, or
// null when it has fewer now (a getter shrank or detached it since it was checked).
export function exactView(src, Type, count) {
  if (TA_LENGTH.call(src) < count) return null;
  return new Type(TA_BUFFER.call(src), TA_OFFSET.call(src), count);
}

// the number of elements, read once: the real one for a genuine typed array
const lengthOf = (x, kind) => (kind ? TA_LENGTH.call(x) : x.length);

// A matrix argument, checked but not yet copied: { name, rows, cols, kind, src }.
export function matrixArg(value, name) {
  if (value === undefined) fail(ErrorCode.INVALID_ARGUMENT, `${name} is missing: expected a matrix (number[][] or { data, shape })`);
  if (Array.isArray(value)) {
    const rows = value.length;
    if (rows === 0) fail(ErrorCode.INVALID_ARGUMENT, `${name} is empty: expected at least one row`);
    const first = value[0];
    if (!isRow(first)) {
      fail(ErrorCode.INVALID_ARGUMENT, `${name} must be an array of rows (number[][]); ${name}[0] is ${describe(first)}`);
    }
    const cols = first.length;
    if (cols === 0) fail(ErrorCode.INVALID_ARGUMENT, `${name} is empty: ${name}[0] has no columns`);
    for (let i = 1; i < rows; i++) {
      const row = value[i];
      if (!isRow(row)) {
        fail(ErrorCode.INVALID_ARGUMENT, `${name}[${i}] must be an array of numbers; received ${describe(row)}`);
      }
      if (row.length !== cols) {
        fail(ErrorCode.INVALID_ARGUMENT, `${name} is ragged: ${name}[0] has ${cols} columns but ${name}[${i}] has ${row.length}`);
      }
    }
    checkDims(rows, cols, name);
    return { name, rows, cols, nested: true, src: value };
  }
  if (value !== null && typeof value === 'object' && 'shape' in value && 'data' in value) {
    const { shape, data } = value;
    // each entry read once, shape[1] only after shape[0] passed
    const rows = Array.isArray(shape) && shape.length === 2 ? shape[0] : -1;
    const cols = Number.isInteger(rows) && rows >= 0 ? shape[1] : -1;
    if (!(Number.isInteger(rows) && rows >= 0 && Number.isInteger(cols) && cols >= 0)) {
      fail(ErrorCode.INVALID_ARGUMENT, `${name}.shape must be [rows, cols] of non-negative integers; received ${shapeText(shape)}`);
    }
    if (rows === 0 || cols === 0) fail(ErrorCode.INVALID_ARGUMENT, `${name} is empty: shape ${shapeStr(rows, cols)}`);
    if (!(data instanceof Float32Array || data instanceof Float64Array || Array.isArray(data))) {
      fail(ErrorCode.INVALID_ARGUMENT, `${name}.data must be a Float32Array, a Float64Array or a number[]; received ${describe(data)}`);
    }
    checkDims(rows, cols, name);
    const kind = typedKind(data), length = lengthOf(data, kind);
    if (length !== rows * cols) {
      fail(ErrorCode.SHAPE_MISMATCH, `${name}.data has ${length} values but shape ${shapeStr(rows, cols)} needs ${rows * cols}`);
    }
    return { name, rows, cols, nested: false, src: data, kind };
  }
  return fail(ErrorCode.INVALID_ARGUMENT, `${name} must be a matrix: number[][] or { data: Float32Array | number[], shape: [rows, cols] }; received ${describe(value)}`);
}

// a row of a number[][]: an array, or a typed array of numbers (not a DataView)
export const isRow = (r) => Array.isArray(r) || (ArrayBuffer.isView(r) && !(r instanceof DataView) && typeof r[0] !== 'bigint');

function checkDims(rows, cols, name) {
  if (rows > MAX_DIM || cols > MAX_DIM) fail(ErrorCode.TOO_LARGE, `${name} of shape ${shapeStr(rows, cols)} is too large`);
}

export function maskArg(value, n, m) {
  if (value === undefined || value === null) return null;
  if (Array.isArray(value)) {
    if (value.length !== n) {
      fail(ErrorCode.SHAPE_MISMATCH, `mask must have shape ${shapeStr(n, m)} (queries, keys); received ${value.length} rows`);
    }
    for (let i = 0; i < n; i++) {
      const row = value[i];
      if (!Array.isArray(row)) fail(ErrorCode.INVALID_ARGUMENT, `mask[${i}] must be an array of booleans; received ${describe(row)}`);
      if (row.length !== m) {
        fail(ErrorCode.SHAPE_MISMATCH, `mask must have shape ${shapeStr(n, m)} (queries, keys); mask[${i}] has ${row.length} columns`);
      }
    }
    return { nested: true, src: value };
  }
  if (value !== null && typeof value === 'object' && 'shape' in value && 'data' in value) {
    const { shape, data } = value;
    if (!Array.isArray(shape) || shape.length !== 2 || shape[0] !== n || shape[1] !== m) {
      fail(ErrorCode.SHAPE_MISMATCH, `mask must have shape ${shapeStr(n, m)} (queries, keys); received shape ${shapeText(shape)}`);
    }
    if (!(data instanceof Uint8Array)) fail(ErrorCode.INVALID_ARGUMENT, `mask.data must be a Uint8Array (nonzero = may attend); received ${describe(data)}`);
    const kind = typedKind(data), length = lengthOf(data, kind);
    if (length !== n * m) fail(ErrorCode.SHAPE_MISMATCH, `mask.data has ${length} values but shape ${shapeStr(n, m)} needs ${n * m}`);
    return { nested: false, src: data, kind };
  }
  return fail(ErrorCode.INVALID_ARGUMENT, `mask must be boolean[][] or { data: Uint8Array, shape: [${n}, ${m}] }; received ${describe(value)}`);
}

const OPTION_KEYS = {
  attention: ['causal', 'scale', 'mask', 'weights', 'rows'],
  selfAttention: ['causal', 'scale', 'mask'],
  multiHeadAttention: ['heads', 'kvHeads', 'causal', 'scale', 'mask', 'weights'],
  rope: ['base', 'offset', 'heads'],
};

// names.includes(key), as a loop the optimising compiler inlines (a call per key otherwise)
const isOneOf = (key, names) => {
  for (let i = 0; i < names.length; i++) if (names[i] === key) return true;
  return false;
};

export const isPlain = (o) => { const p = Object.getPrototypeOf(o); return p === Object.prototype || p === null; };

const DEFAULT_OPTIONS = Object.freeze({ causal: false, scale: undefined, mask: undefined, weights: true });

// (the element passes { causal } with a boolean and, when set, scale and heads: see FULL_API in
// scripts/build-embed.js)
export function optionsArg(options, fn) {
  if (options === undefined || options === null) return DEFAULT_OPTIONS;
  FULL_API: checkOptionKeys(options, fn);
  const { causal = false, scale, mask, weights = true, rows } = options;
  FULL_API: if (typeof causal !== 'boolean') fail(ErrorCode.INVALID_ARGUMENT, `causal must be true or false; received ${describe(causal)}`);
  FULL_API: if (typeof weights !== 'boolean') fail(ErrorCode.INVALID_ARGUMENT, `weights must be true or false; received ${describe(weights)}`);
  if (scale !== undefined && scale !== null &&
      (typeof scale !== 'number' || !Number.isFinite(scale) || scale < 0 || scale > FLT_MAX)) {
    fail(ErrorCode.INVALID_ARGUMENT, `scale must be a finite number >= 0 (default 1/√d_k); received ${describe(scale)}`);
  }
  let range;
  FULL_API: if (rows !== undefined && rows !== null) {
    range = Array.isArray(rows) && rows.length === 2 ? [rows[0], rows[1]] : null;   // each read once
    if (!range || !range.every((r) => Number.isInteger(r) && r >= 0)) {
      fail(ErrorCode.INVALID_ARGUMENT, `rows must be [begin, end], two integers with 0 <= begin < end <= n; received ${describe(rows)}`);
    }
    if (weights) fail(ErrorCode.INVALID_ARGUMENT, `rows needs { weights: false }: a range of query rows returns only their output rows`);
  }
  return { causal, scale: scale ?? undefined, mask, weights, rows: range };
}

// RoPE's options: { base = 10000, offset = 0, heads = 1 } (c_src/attention.h, attn_rope)
export const ROPE_MAX_POSITION = 2 ** 20;
export function ropeOptionsArg(options, n) {
  if (options === undefined || options === null) options = {};
  checkOptionKeys(options, 'rope');
  const { base = 10000, offset = 0, heads = 1 } = options;
  if (typeof base !== 'number' || !(base >= 1) || base > FLT_MAX) {
    fail(ErrorCode.INVALID_ARGUMENT, `rope: base must be a finite number >= 1 (LLaMA's rope_theta, 10000 by default); received ${describe(base)}`);
  }
  if (!Number.isInteger(offset) || offset < 0 || offset > ROPE_MAX_POSITION - n) {
    fail(ErrorCode.INVALID_ARGUMENT, `rope: offset must be an integer >= 0 with offset + n <= 2^20 (n = ${n} rows, at positions offset .. offset + n - 1); received ${describe(offset)}`);
  }
  return { base, offset, heads: headsArg(heads, 'rope: heads') };
}

// a plain object whose own keys are all options of fn
function checkOptionKeys(options, fn) {
  if (typeof options !== 'object' || !isPlain(options)) {
    fail(ErrorCode.INVALID_ARGUMENT, `${fn}: options must be a plain object like { causal: true }; received ${describe(options)}`);
  }
  const keys = OPTION_KEYS[fn];
  for (const key in options) {
    if (!isOneOf(key, keys) && Object.hasOwn(options, key)) {
      fail(ErrorCode.INVALID_ARGUMENT, `${fn}: unknown option "${key}"; expected one of ${keys.join(', ')}`);
    }
  }
}

// The inputs object: an object whose own keys are all among names. The callers then read
// each input by name (inputs.x, not inputs[name]: a keyed load of varying names is slow).
export function inputsObject(inputs, fn, names) {
  if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs)) {
    fail(ErrorCode.INVALID_ARGUMENT, `${fn}: the first argument must be an object { ${names.join(', ')} }; received ${describe(inputs)}`);
  }
  for (const key in inputs) {
    if (!isOneOf(key, names) && Object.hasOwn(inputs, key)) {
      fail(ErrorCode.INVALID_ARGUMENT, `${fn}: unknown input "${key}"; expected ${names.join(', ')}`);
    }
  }
}

// An optional vector argument (a bias): null when absent, else { name, length, src }.
export function vectorArg(value, name, length, what) {
  if (value === undefined || value === null) return null;
  if (!(Array.isArray(value) || value instanceof Float32Array || value instanceof Float64Array)) {
    fail(ErrorCode.INVALID_ARGUMENT, `${name} must be a vector: number[], Float32Array or Float64Array of length ${length}; received ${describe(value)}`);
  }
  const received = lengthOf(value, typedKind(value));
  if (received !== length) {
    fail(ErrorCode.SHAPE_MISMATCH, `${name} must have ${length} values (${what}); received ${received}`);
  }
  return { name, length, src: value };
}

// heads / kvHeads: a positive integer
export function headsArg(value, name) {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    fail(ErrorCode.INVALID_ARGUMENT, `${name} must be a positive integer; received ${describe(value)}`);
  }
  return value;
}

export const SELF_INPUTS = ['x', 'wq', 'wk', 'wv'], ATTENTION_INPUTS = ['q', 'k', 'v'];
export const MHA_INPUTS = ['x', 'wq', 'wk', 'wv', 'wo', 'bq', 'bk', 'bv', 'bo', 'kv'];

/** A returned matrix as plain nested arrays: { data, shape } -> number[][]. */
export function toRows(matrix) {
  const m = matrixArg(matrix, 'toRows: matrix');
  if (m.nested || !(m.src instanceof Float32Array)) {
    fail(ErrorCode.INVALID_ARGUMENT, `toRows takes a matrix returned by the API, { data: Float32Array, shape }; received ${describe(matrix)}`);
  }
  const out = new Array(m.rows);
  for (let i = 0; i < m.rows; i++) out[i] = Array.from(m.src.slice(i * m.cols, (i + 1) * m.cols));
  return out;
}

// Token ids: an array or a typed array of numbers, refused by its length before any element is
// read (a huge or lying length costs nothing), then each element read once, checked as it is read.
//   idsArg(ids, name, { max, maxWhat, vocab }) -> Int32Array
//     max: the most ids taken (maxWhat(n): the message's words for that limit, given the count);
//     vocab: ids must be below it
// Every failure is INVALID_ARGUMENT; what a getter or a Proxy trap throws becomes one too.
const NUMBER_ARRAYS = new Set(['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array',
  'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array']);
export const MAX_IDS = 1 << 24;

// noun and bound word the elements (default: token ids below vocab_size); an index list passes its own
export function idsArg(ids, name, { max = MAX_IDS, maxWhat, vocab = MAX_DIM, noun = 'token id', bound } = {}) {
  bound ??= vocab === MAX_DIM ? '2^31' : `vocab_size = ${vocab}`;
  const kind = typedKind(ids);
  if (!Array.isArray(ids) && !NUMBER_ARRAYS.has(kind)) {
    fail(ErrorCode.INVALID_ARGUMENT, `${name} must be an array of token ids (integers); received ${describe(ids)}`);
  }
  let n;
  try { n = lengthOf(ids, kind); } catch (e) { fail(ErrorCode.INVALID_ARGUMENT, `${name}: its length cannot be read (${errorText(e)})`); }
  if (!Number.isSafeInteger(n) || n < 0) fail(ErrorCode.INVALID_ARGUMENT, `${name} has length ${describe(n)}; expected a count of token ids`);
  if (n === 0) fail(ErrorCode.INVALID_ARGUMENT, `${name} is empty: expected at least one ${noun}`);
  if (n > max) fail(ErrorCode.INVALID_ARGUMENT, maxWhat ? `${name}: ${maxWhat(n)}` : `${name} has ${n} ids; at most ${max} are taken`);
  const out = new Int32Array(n);
  const src = kind ? exactView(ids, globalThis[kind], n) : ids;
  if (src === null) changed(name);
  for (let i = 0; i < n; i++) {
    let x;
    try { x = src[i]; } catch (e) { fail(ErrorCode.INVALID_ARGUMENT, `${name}[${i}] cannot be read (${errorText(e)})`); }
    if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x >= vocab) {
      fail(ErrorCode.INVALID_ARGUMENT, `${name}[${i}] must be an integer ${noun} in [0, ${bound}); received ${describe(x)}`);
    }
    out[i] = x;
  }
  return out;
}

function errorText(e) {
  try { return String(e && e.message ? e.message : e).slice(0, 200); } catch { return 'an exception that cannot be shown'; }
}
