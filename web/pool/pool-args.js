// pool-args.js - the pool's arguments, each read once (pool.js): a call's inputs, mask and
// options copied into values of its own, so that what this thread checks is what the workers
// get, whatever a getter or a Proxy answers the next time; the time limits; and the error that
// says what a caller's getter or trap threw while it was read. Part of the pool; its public API
// is attention-pool*.js's.
import { AttentionError, ErrorCode, describe, fail } from '../core/errors.js';

const MAX_TIMEOUT = 0x7fffffff;   // ms: setTimeout's limit (about 24.8 days)
export const CALL_OPTIONS = ['causal', 'scale', 'mask', 'weights', 'rows', 'signal', 'timeout'];
const INPUTS = ['q', 'k', 'v'];

// what a caller's getter or Proxy trap threw, as an AttentionError naming what was being read
// (the engine failing to allocate a copy: OUT_OF_MEMORY, as attention() says it)
export function readError(what, e) {
  if (e instanceof RangeError && /allocation failed|out of memory/i.test(e.message)) {
    return new AttentionError(ErrorCode.OUT_OF_MEMORY, `${what}: the engine could not allocate a copy (${e.message})`, { cause: e });
  }
  let text;
  try { text = e instanceof Error ? e.message : String(e?.message ?? e); } catch { text = 'an exception that cannot be shown'; }
  const err = new AttentionError(ErrorCode.INVALID_ARGUMENT, `${what}: ${text}`, { cause: e });
  if (!Object.hasOwn(err, 'cause')) Object.defineProperty(err, 'cause', { value: e, writable: true, configurable: true });
  return err;
}

const isPlainProto = (p) => p === Object.prototype || p === null;

// A time limit (option `name`): undefined or null (none given), Infinity (none), or ms in (0, 2^31 - 1].
export function timeoutArg(t, fn, name = 'timeout') {
  if (t === undefined || t === null) return undefined;
  if (typeof t !== 'number' || !(t === Infinity || (t > 0 && t <= MAX_TIMEOUT))) {
    fail(ErrorCode.INVALID_ARGUMENT, `${fn}: ${name} must be a number of milliseconds, more than 0 and at most ${MAX_TIMEOUT}, or Infinity for none; received ${describe(t)}`);
  }
  return t;
}

// ----------------------------------------------------------------------------
// reading a call's arguments once
//
// The copies have the form attention() takes, so that attention() in this thread checks them
// and words the errors as it would for the caller's own values (a plain Float32Array or
// Float64Array is the one thing kept, not copied: see takeMatrix). Typed arrays are measured and
// copied through the engine's own accessors (a subclass's `get length()` is not asked). What
// is not copied because it is not a valid argument anyway (a ragged row, a wrong type) is
// passed on as it is (ctx.raw set when it is an object): attention() then rejects it, and
// should it accept it after all (a getter that answered differently), the call fails here.

const TYPED_PROTO = Object.getPrototypeOf(Uint8Array.prototype);
const TA_TAG = Object.getOwnPropertyDescriptor(TYPED_PROTO, Symbol.toStringTag).get;
const TA_LENGTH = Object.getOwnPropertyDescriptor(TYPED_PROTO, 'length').get;
const typedKind = (x) => TA_TAG.call(x);   // 'Float32Array', ... for a genuine typed array, else undefined
const isLength = (n) => Number.isInteger(n) && n >= 0 && n <= 0xffffffff;

function raw(ctx, x) {
  if ((x !== null && typeof x === 'object') || typeof x === 'function') ctx.raw = true;
  return x;
}

// a fresh typed array of type Type holding the elements of the genuine typed array src
function copyTyped(src, Type) {
  const n = TA_LENGTH.call(src), out = new Type(n);
  if (n > 0) out.set(src);
  return out;
}

// [rows, cols] copied from a shape, or the shape itself when it is not an array of two
function takeShape(shape, ctx) {
  if (!Array.isArray(shape)) return raw(ctx, shape);
  return shape.length === 2 ? [shape[0], shape[1]] : raw(ctx, shape);
}

// Where a read failed, for the message: a stage and the indices (no string built per value).
const AT_SELF = 0, AT_LENGTH = 1, AT_ROW = 2, AT_ROW_LENGTH = 3, AT_ITEM = 4, AT_SHAPE = 5, AT_DATA = 6, AT_DATA_LENGTH = 7, AT_DATA_ITEM = 8;
const PATHS = ['', '.length', '[i]', '[i].length', '[i][j]', '.shape', '.data', '.data.length', '.data[i]'];
const pathOf = (at, i, j) => PATHS[at].replace('i', String(i)).replace('j', String(j));

// A matrix argument -> { value, rows }: value its copy (number[][] with rows as arrays or
// Float64Arrays, or { shape, data } with data a fresh Float32Array, Float64Array or array),
// rows its number of rows when the copy has a valid form, else -1.
function takeMatrix(x, name, ctx) {
  let at = AT_SELF, i = -1, j = -1;
  try {
    if (Array.isArray(x)) {
      at = AT_LENGTH;
      const n = x.length;
      if (!isLength(n) || n === 0) return { value: raw(ctx, x), rows: -1 };
      const out = new Array(n);
      let cols = -1;
      for (i = 0; i < n; i++) {
        at = AT_ROW;
        const row = x[i], kind = typedKind(row);
        let copy;
        if (kind !== undefined && !kind.startsWith('Big')) {
          copy = copyTyped(row, Float64Array);
        } else if (Array.isArray(row)) {
          at = AT_ROW_LENGTH;
          const len = row.length;
          if (!isLength(len) || (i > 0 && len !== cols)) { out[i] = raw(ctx, row); return { value: out, rows: -1 }; }
          copy = new Array(len);
          at = AT_ITEM;
          for (j = 0; j < len; j++) copy[j] = row[j];
        } else {
          out[i] = raw(ctx, row);   // not a row: attention() says so
          return { value: out, rows: -1 };
        }
        if (i === 0) cols = copy.length;
        out[i] = copy;
        if (cols === 0 || copy.length !== cols) return { value: out, rows: -1 };
      }
      return { value: out, rows: n };
    }
    if (x !== null && typeof x === 'object' && 'shape' in x && 'data' in x) {
      at = AT_SHAPE;
      const shapeIn = x.shape;
      at = AT_DATA;
      const data = x.data;
      at = AT_SHAPE;
      const shape = takeShape(shapeIn, ctx);
      const valid = shape !== shapeIn && Number.isInteger(shape[0]) && shape[0] > 0 && Number.isInteger(shape[1]) && shape[1] > 0;
      at = AT_DATA;
      const kind = typedKind(data);
      let copy;
      if ((kind === 'Float32Array' || kind === 'Float64Array') && (data instanceof Float32Array || data instanceof Float64Array)) {
        // a plain Float32Array or Float64Array is kept as it is: attention() reads it once (a small
        // call computed here, with no copy to pay for); a call sent to workers copies it (flatMatrix)
        const Type = kind === 'Float32Array' ? Float32Array : Float64Array;
        copy = Object.getPrototypeOf(data) === Type.prototype ? data : copyTyped(data, Type);
      } else if (kind === undefined && Array.isArray(data)) {
        at = AT_DATA_LENGTH;
        const len = data.length;
        if (valid && len === shape[0] * shape[1]) {
          copy = new Array(len);
          at = AT_DATA_ITEM;
          for (i = 0; i < len; i++) copy[i] = data[i];
        } else {
          copy = raw(ctx, data);
        }
      } else {
        copy = raw(ctx, data);
      }
      return { value: { shape, data: copy }, rows: valid ? shape[0] : -1 };
    }
    return { value: raw(ctx, x), rows: -1 };
  } catch (e) {
    throw readError(`attention pool: reading inputs.${name}${pathOf(at, i, j)} failed`, e);
  }
}

// The inputs object -> { value, n, m }: value { q, k, v } of copies (and any unknown key, so
// that attention() names it), or the argument itself when it is not an object.
export function takeInputs(inputs, ctx) {
  if (inputs === null || typeof inputs !== 'object') return { value: inputs, n: -1, m: -1 };
  let unknown;
  try {
    if (Array.isArray(inputs)) return { value: raw(ctx, inputs), n: -1, m: -1 };
    for (const key in inputs) {
      if (!INPUTS.includes(key) && Object.hasOwn(inputs, key)) { unknown = key; break; }
    }
  } catch (e) {
    throw readError('attention pool: reading the names of the inputs failed', e);
  }
  if (unknown !== undefined) {
    const value = {};
    Object.defineProperty(value, unknown, { value: undefined, enumerable: true, writable: true, configurable: true });
    return { value, n: -1, m: -1 };
  }
  const read = (name) => { try { return inputs[name]; } catch (e) { throw readError(`attention pool: reading inputs.${name} failed`, e); } };
  const q = takeMatrix(read('q'), 'q', ctx), k = takeMatrix(read('k'), 'k', ctx), v = takeMatrix(read('v'), 'v', ctx);
  return { value: { q: q.value, k: k.value, v: v.value }, n: q.rows, m: k.rows };
}

// options.mask -> its copy (boolean[][] of arrays, or { shape, data: fresh Uint8Array }); n and m
// bound what is copied (-1: unknown, the call fails on q or k first)
function takeMask(mask, n, m, ctx) {
  if (mask === undefined || mask === null) return mask;
  let at = AT_SELF, i = -1, j = -1;
  try {
    if (Array.isArray(mask)) {
      at = AT_LENGTH;
      if (mask.length !== n) return raw(ctx, mask);
      const out = new Array(n);
      for (i = 0; i < n; i++) {
        at = AT_ROW;
        const row = mask[i];
        if (!Array.isArray(row)) { out[i] = raw(ctx, row); return out; }
        at = AT_ROW_LENGTH;
        if (row.length !== m) { out[i] = raw(ctx, row); return out; }
        const copy = new Array(m);
        at = AT_ITEM;
        for (j = 0; j < m; j++) copy[j] = row[j];
        out[i] = copy;
      }
      return out;
    }
    if (typeof mask === 'object' && 'shape' in mask && 'data' in mask) {
      at = AT_SHAPE;
      const shapeIn = mask.shape;
      at = AT_DATA;
      const data = mask.data;
      at = AT_SHAPE;
      const shape = takeShape(shapeIn, ctx);
      at = AT_DATA;
      const copy = typedKind(data) === 'Uint8Array' && data instanceof Uint8Array ? copyTyped(data, Uint8Array) : raw(ctx, data);
      return { shape, data: copy };
    }
    return raw(ctx, mask);
  } catch (e) {
    throw readError(`attention pool: reading options.mask${pathOf(at, i, j)} failed`, e);
  }
}

// The options object -> { plain, unknown, causal, scale, mask, weights, rows, rowsCopied, signal,
// timeout }, each option read once. Options that are not a plain object are not read (plain false).
export function takeOptions(options, n, m, ctx) {
  const o = { plain: true };
  if (options === undefined || options === null) return o;
  if (typeof options !== 'object') return { plain: false };
  let proto;
  try { proto = Object.getPrototypeOf(options); } catch (e) { throw readError('attention pool: reading options failed', e); }
  if (!isPlainProto(proto)) return { plain: false };
  try {
    for (const key in options) {
      if (!CALL_OPTIONS.includes(key) && Object.hasOwn(options, key)) { o.unknown = key; return o; }
    }
  } catch (e) {
    throw readError('attention pool: reading the names of the options failed', e);
  }
  for (const key of CALL_OPTIONS) {
    try { o[key] = options[key]; } catch (e) { throw readError(`attention pool: reading options.${key} failed`, e); }
  }
  o.mask = takeMask(o.mask, n, m, ctx);
  const rows = o.rows;
  try {
    if (Array.isArray(rows) && rows.length === 2) { o.rows = [rows[0], rows[1]]; o.rowsCopied = true; }
    else o.rows = raw(ctx, rows);
  } catch (e) {
    throw readError('attention pool: reading options.rows failed', e);
  }
  return o;
}

// A checked copy (takeMatrix) as { data: Float32Array, shape }: the float32 values the core reads.
export function flatMatrix(x) {
  if (Array.isArray(x)) {
    const rows = x.length, cols = x[0].length, data = new Float32Array(rows * cols);
    for (let i = 0; i < rows; i++) data.set(x[i], i * cols);
    return { data, shape: [rows, cols] };
  }
  const { data, shape } = x;     // (the caller's own Float32Array, or a copy: copied again, no matter)
  const out = new Float32Array(data.length);
  out.set(data);
  return { data: out, shape };
}

export function flatMask(mask, n, m) {
  if (mask === undefined || mask === null) return undefined;
  if (Array.isArray(mask)) {
    const data = new Uint8Array(n * m);
    for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) data[i * m + j] = mask[i][j] ? 1 : 0;
    return { data, shape: [n, m] };
  }
  return { data: mask.data, shape: [n, m] };   // a copy already
}
