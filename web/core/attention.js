// attention.js - the JavaScript face of the C core (c_src/attention.c and c_src/mha.c, built
// by build.sh).
//
//   import { createAttention, AttentionError } from 'attnmap';
//   const attn = await createAttention();
//   const { weights } = attn.attention({ q, k, v });
//
// The wrapper owns wasm memory: every call lays out one block, writes the inputs, calls C
// and copies the results out (see copyOut). Nothing returned is a view into wasm memory.
// Every bad input becomes an AttentionError before C sees it.
import wasmBase64 from '../wasm/attention-wasm.js';

/** Error codes, stable across versions. */
export const ErrorCode = Object.freeze({
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  SHAPE_MISMATCH: 'SHAPE_MISMATCH',
  NON_FINITE: 'NON_FINITE',
  TOO_LARGE: 'TOO_LARGE',
  OUT_OF_MEMORY: 'OUT_OF_MEMORY',
});

export class AttentionError extends Error {
  constructor(code, message, options) {
    super(message, options);
    this.name = 'AttentionError';
    this.code = code;
  }
}

const fail = (code, message) => { throw new AttentionError(code, message); };
const noop = () => {};

// C statuses (attention.h) -> error codes
const ATTN_OK = 0, ATTN_ERR_NON_FINITE = 4, ATTN_ERR_OVERFLOW = 5, ATTN_ERR_TOO_LARGE = 6;
const ATTN_CAUSAL = 1;
const FLT_MAX = 3.4028234663852886e38;
const MAX_DIM = 0x7fffffff;          // C int
const MAX_BYTES = 0xffff0000;        // wasm32 addresses (4 GiB) less a little for the heap itself

// ----------------------------------------------------------------------------
// loading

function decodeBase64(s) {
  if (typeof Buffer === 'function') return new Uint8Array(Buffer.from(s, 'base64'));
  const bin = atob(s), out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// A module using f32x4.relaxed_madd validates only where the engine has relaxed SIMD.
const RELAXED_PROBE = (() => {
  const c = [0xfd, 12, ...new Array(16).fill(0)], body = [0, ...c, ...c, ...c, 0xfd, 0x85, 0x02, 0x0b];
  return new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 0x60, 0, 1, 0x7b, 3, 2, 1, 0, 10, body.length + 2, 1, body.length, ...body]);
})();

/** Whether this engine runs wasm relaxed SIMD (fused multiply-add), which createAttention() then uses. */
export function hasRelaxedSimd() {
  try { return WebAssembly.validate(RELAXED_PROBE); } catch { return false; }
}

async function toModule(source, relaxed) {
  if ((source === undefined || source === null) && relaxed) {
    return WebAssembly.compile(decodeBase64((await import('../wasm/attention-relaxed-wasm.js')).default));
  }
  if (source === undefined || source === null) return WebAssembly.compile(decodeBase64(wasmBase64));
  if (source instanceof WebAssembly.Module) return source;
  source = await source;
  if (typeof Response === 'function' && source instanceof Response) {
    if (!source.ok) fail(ErrorCode.INVALID_ARGUMENT, `createAttention: fetching the wasm failed: HTTP ${[source.status, source.statusText].filter(Boolean).join(' ')} for ${source.url || 'the response'}`);
    return WebAssembly.compile(await source.arrayBuffer());
  }
  if (source instanceof DataView) return WebAssembly.compile(new Uint8Array(source.buffer, source.byteOffset, source.byteLength));
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return WebAssembly.compile(source);
  return fail(ErrorCode.INVALID_ARGUMENT,
    `createAttention: options.wasm must be a WebAssembly.Module, an ArrayBuffer, a typed array or a Response; received ${describe(source)}`);
}

const shared = { default: null, relaxed: null };

/**
 * Load the WebAssembly core and return the attention API. Without options, the wasm
 * embedded in the package is compiled and instantiated once and shared by every caller.
 * options.wasm: a WebAssembly.Module, the .wasm bytes, or a Response, for hosts that fetch it.
 * options.relaxed (default true): the build with fused multiply-add (wasm relaxed SIMD) where
 * the engine has it (api.relaxed tells), else the default build. It changes the last bits of
 * long weights-free calls only, and may give other last bits on other CPUs; false gives the
 * same bits on every engine and CPU.
 */
export function createAttention(options = {}) {
  let wasm, relaxed;
  try {
    if (options === null || typeof options !== 'object' || !isPlain(options)) {
      fail(ErrorCode.INVALID_ARGUMENT, `createAttention: options must be a plain object like { wasm }; received ${describe(options)}`);
    }
    ({ wasm, relaxed } = options);
    if (relaxed !== undefined && typeof relaxed !== 'boolean') fail(ErrorCode.INVALID_ARGUMENT, `createAttention: relaxed must be true or false; received ${describe(relaxed)}`);
    // options.wasm is one build: only an explicit relaxed: true conflicts with it
    if (relaxed === true && wasm !== undefined) fail(ErrorCode.INVALID_ARGUMENT, 'createAttention: pass either wasm or relaxed, not both (the relaxed build is attnmap/attention-relaxed.wasm)');
  } catch (e) {
    return Promise.reject(asError(e, 'createAttention: reading options failed'));
  }
  if (wasm === undefined) {
    const key = relaxed !== false && hasRelaxedSimd() ? 'relaxed' : 'default';
    // the relaxed build is a file of its own (attention-relaxed-wasm.js): a host that did not
    // copy it gets the default build, and api.relaxed says so; later calls reuse that answer
    // (no second request for the missing file), unless the default build failed too
    shared[key] ??= instantiate(undefined, key === 'relaxed').catch((e) => {
      if (key === 'default') { shared.default = null; throw e; }
      return createAttention({ relaxed: false }).catch((e2) => { shared.relaxed = null; throw e2; });
    });
    return shared[key];
  }
  return instantiate(wasm, false);
}

// anything thrown by the host (a getter, a Proxy trap, the engine) as an AttentionError whose
// cause is the original
function asError(e, what) {
  if (e instanceof AttentionError) return e;
  let text;
  try { text = e && e.message ? e.message : String(e); } catch { text = 'an exception that cannot be shown'; }
  return new AttentionError(ErrorCode.INVALID_ARGUMENT, `${what}: ${text}`, { cause: e });
}

const REQUIRED_EXPORTS = ['memory', 'malloc', 'free', '_initialize', 'attn_forward', 'attn_forward_rows', 'attn_self_forward', 'attn_workspace_size', 'attn_default_scale', 'attn_status_string'];

async function instantiate(source, relaxed) {
  let module, instance;
  try {
    module = await toModule(source, relaxed);
    instance = await WebAssembly.instantiate(module, { env: { emscripten_notify_memory_growth() {} } });
  } catch (e) {
    // the embedded core failing is the host's doing (a CSP without 'wasm-unsafe-eval', no
    // WebAssembly at all): the engine's own error says so; a bad options.wasm is an argument error
    if (source === undefined) throw e;
    throw asError(e, 'createAttention: options.wasm is not a usable WebAssembly module');
  }
  const missing = REQUIRED_EXPORTS.filter((name) => !(name in instance.exports));
  if (missing.length) {
    throw new AttentionError(ErrorCode.INVALID_ARGUMENT,
      `createAttention: options.wasm is not the attnmap core (it lacks ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''}); pass attnmap/attention.wasm`);
  }
  instance.exports._initialize();
  return makeApi(instance.exports, relaxed);
}

// ----------------------------------------------------------------------------
// argument checking

function describe(x) {
  try {
    if (x === null) return 'null';
    if (x === undefined) return 'undefined';
    if (Array.isArray(x)) return `an array of length ${x.length}`;
    if (x instanceof DataView) return `a DataView of ${x.byteLength} bytes`;
    if (ArrayBuffer.isView(x)) return `a ${x.constructor.name} of length ${x.length}`;
    if (typeof x === 'function') return 'a function';
    if (typeof x === 'symbol') return 'a symbol';
    if (typeof x === 'bigint') return `the BigInt ${x}n`;
    if (typeof x === 'string') return `the string ${JSON.stringify(x.length > 40 ? x.slice(0, 40) + '…' : x)}`;
    if (typeof x === 'object') {
      const proto = Object.getPrototypeOf(x);
      if (proto !== Object.prototype && proto !== null) return `a ${proto?.constructor?.name || 'non-plain object'}`;
      const keys = Object.keys(x);
      return `an object with keys [${keys.slice(0, 8).join(', ')}${keys.length > 8 ? ', …' : ''}]`;
    }
    return `${typeof x} ${String(x)}`;
  } catch {
    return 'a value that cannot be inspected';
  }
}

// a shape for messages: every element shown, BigInt and NaN included
function shapeText(shape) {
  try {
    return Array.isArray(shape) ? `[${shape.slice(0, 4).map((d) => (typeof d === 'bigint' ? `${d}n` : typeof d === 'string' ? JSON.stringify(d) : String(d))).join(', ')}${shape.length > 4 ? ', …' : ''}]` : describe(shape);
  } catch {
    return 'a shape that cannot be inspected';
  }
}

const shapeStr = (r, c) => `(${r}, ${c})`;

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
function exactView(src, Type, count) {
  if (TA_LENGTH.call(src) < count) return null;
  return new Type(TA_BUFFER.call(src), TA_OFFSET.call(src), count);
}

// the number of elements, read once: the real one for a genuine typed array
const lengthOf = (x, kind) => (kind ? TA_LENGTH.call(x) : x.length);

// A matrix argument, checked but not yet copied: { name, rows, cols, kind, src }.
function matrixArg(value, name) {
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
const isRow = (r) => Array.isArray(r) || (ArrayBuffer.isView(r) && !(r instanceof DataView) && typeof r[0] !== 'bigint');

function checkDims(rows, cols, name) {
  if (rows > MAX_DIM || cols > MAX_DIM) fail(ErrorCode.TOO_LARGE, `${name} of shape ${shapeStr(rows, cols)} is too large`);
}

function maskArg(value, n, m) {
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
};

// names.includes(key), as a loop the optimising compiler inlines (a call per key otherwise)
const isOneOf = (key, names) => {
  for (let i = 0; i < names.length; i++) if (names[i] === key) return true;
  return false;
};

const isPlain = (o) => { const p = Object.getPrototypeOf(o); return p === Object.prototype || p === null; };

const DEFAULT_OPTIONS = Object.freeze({ causal: false, scale: undefined, mask: undefined, weights: true });

function optionsArg(options, fn) {
  if (options === undefined || options === null) return DEFAULT_OPTIONS;
  if (typeof options !== 'object' || !isPlain(options)) {
    fail(ErrorCode.INVALID_ARGUMENT, `${fn}: options must be a plain object like { causal: true }; received ${describe(options)}`);
  }
  const keys = OPTION_KEYS[fn];
  for (const key in options) {
    if (!isOneOf(key, keys) && Object.hasOwn(options, key)) {
      fail(ErrorCode.INVALID_ARGUMENT, `${fn}: unknown option "${key}"; expected one of ${keys.join(', ')}`);
    }
  }
  const { causal = false, scale, mask, weights = true, rows } = options;
  if (typeof causal !== 'boolean') fail(ErrorCode.INVALID_ARGUMENT, `causal must be true or false; received ${describe(causal)}`);
  if (typeof weights !== 'boolean') fail(ErrorCode.INVALID_ARGUMENT, `weights must be true or false; received ${describe(weights)}`);
  if (scale !== undefined && scale !== null &&
      (typeof scale !== 'number' || !Number.isFinite(scale) || scale < 0 || scale > FLT_MAX)) {
    fail(ErrorCode.INVALID_ARGUMENT, `scale must be a finite number >= 0 (default 1/√d_k); received ${describe(scale)}`);
  }
  let range;
  if (rows !== undefined && rows !== null) {
    range = Array.isArray(rows) && rows.length === 2 ? [rows[0], rows[1]] : null;   // each read once
    if (!range || !range.every((r) => Number.isInteger(r) && r >= 0)) {
      fail(ErrorCode.INVALID_ARGUMENT, `rows must be [begin, end], two integers with 0 <= begin < end <= n; received ${describe(rows)}`);
    }
    if (weights) fail(ErrorCode.INVALID_ARGUMENT, `rows needs { weights: false }: a range of query rows returns only their output rows`);
  }
  return { causal, scale: scale ?? undefined, mask, weights, rows: range };
}

// The inputs object: an object whose own keys are all among names. The callers then read
// each input by name (inputs.x, not inputs[name]: a keyed load of varying names is slow).
function inputsObject(inputs, fn, names) {
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
function vectorArg(value, name, length, what) {
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
function headsArg(value, name) {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    fail(ErrorCode.INVALID_ARGUMENT, `${name} must be a positive integer; received ${describe(value)}`);
  }
  return value;
}

const SELF_INPUTS = ['x', 'wq', 'wk', 'wv'], ATTENTION_INPUTS = ['q', 'k', 'v'];
const MHA_INPUTS = ['x', 'wq', 'wk', 'wv', 'wo', 'bq', 'bk', 'bv', 'bo', 'kv'];

// ----------------------------------------------------------------------------
// the API object

function makeApi(exports, relaxed) {
  const { memory, malloc, free } = exports;
  let f32 = new Float32Array(memory.buffer);
  let u8 = new Uint8Array(memory.buffer);
  // growth detaches old views: refresh after anything that can grow memory (malloc)
  const views = () => {
    if (f32.buffer !== memory.buffer) { f32 = new Float32Array(memory.buffer); u8 = new Uint8Array(memory.buffer); }
  };

  // One scratch block is kept between calls (small calls then cost no malloc); a call that
  // needs more than KEEP_BYTES gets its own block, freed when it returns.
  const KEEP_BYTES = 1 << 20;
  // work done so far (m·(d_k + d_v) per row); see attention()
  let warmWork = 0;
  const WARM_WORK = 2 ** 27, FIRST_CHUNK = 2 ** 20;
  let scratch = 0, scratchBytes = 0;
  let busy = false;   // a call is writing into wasm memory

  // Lay out buffers of the given float counts in one block, 16-byte aligned.
  // Returns { offsets (bytes), extra, release() } or throws TOO_LARGE / OUT_OF_MEMORY;
  // whatFor() names the block in those errors (a function: no string is built per call).
  // The offsets are written over counts (a fresh array literal at every call site).
  function allocate(counts, extraBytes, whatFor) {
    const offsets = counts;
    let total = 0;
    for (let i = 0; i < counts.length; i++) { const c = counts[i]; offsets[i] = total; total += Math.ceil(c / 4) * 16; }
    const extraAt = total;
    total += Math.ceil(extraBytes / 16) * 16;
    if (total > MAX_BYTES) {
      const what = whatFor();
      fail(ErrorCode.TOO_LARGE, `${what} needs ${formatBytes(total)} of WebAssembly memory; wasm32 can address at most 4 GiB` +
        (what.includes('weights') ? ' (pass { weights: false } to skip the n×m weights)' : ''));
    }
    let base, release = noop;
    if (busy) {
      // called from inside another call (a getter): the scratch block holds that call's data
      base = malloc(total);
      if (base === 0) fail(ErrorCode.OUT_OF_MEMORY, `${whatFor()} needs ${formatBytes(total)} of WebAssembly memory and the allocation failed`);
      views();
      for (let i = 0; i < offsets.length; i++) offsets[i] += base;
      return { offsets, extra: base + extraAt, release: () => free(base) };
    }
    if (total <= scratchBytes) {
      base = scratch;   // no allocation: memory cannot have grown, the views are current
      for (let i = 0; i < offsets.length; i++) offsets[i] += base;
      return { offsets, extra: base + extraAt, release };
    } else if (total <= KEEP_BYTES) {
      if (scratch) free(scratch);
      scratch = 0; scratchBytes = 0;
      const size = Math.min(KEEP_BYTES, Math.max(total * 2, 4096));
      base = malloc(size);
      if (base !== 0) { scratch = base; scratchBytes = size; }
    } else {
      base = malloc(total);
      release = () => free(base);
    }
    if (base === 0) fail(ErrorCode.OUT_OF_MEMORY, `${whatFor()} needs ${formatBytes(total)} of WebAssembly memory and the allocation failed`);
    views();
    for (let i = 0; i < offsets.length; i++) offsets[i] += base;
    return { offsets, extra: base + extraAt, release };
  }

  // Results leave wasm memory as copies, never as views of it. A fresh ArrayBuffer costs V8
  // about 1 µs, more than a tutorial-sized call's C part, so the results of small calls (up to
  // POOL_MAX floats, 1 KiB, from the first result's start to the last one's end) are copied
  // into a shared 8 KiB ArrayBuffer (the slab), as Node's Buffer pool does; larger ones get an
  // ArrayBuffer of their own. A slab whose buffer was transferred away (length 0) is replaced.
  const SLAB_FLOATS = 2048, POOL_MAX = 256;
  let slab = new Float32Array(0), slabBuffer = slab.buffer, slabPos = 0;

  // Floats [start, end) of wasm memory copied into a fresh ArrayBuffer or the slab; returns
  // { buffer, at } (at: the copy's byte offset in buffer). slabBuffer is kept beside slab
  // because the .buffer getter is a call into the engine.
  function copyOut(start, end) {
    const count = end - start;
    if (count > POOL_MAX) return { buffer: f32.slice(start, end).buffer, at: 0 };
    if (slabPos + count > slab.length) {   // full, or detached (length 0)
      slab = new Float32Array(SLAB_FLOATS); slabBuffer = slab.buffer; slabPos = 0;
    }
    slab.set(f32.subarray(start, end), slabPos);
    const at = 4 * slabPos;
    slabPos = (slabPos + count + 3) & ~3;   // the next copy 16-byte aligned
    return { buffer: slabBuffer, at };
  }

  // Copy the matrices laid out from byte offsets[first] to offsets[last] + rows·cols floats
  // out of wasm memory in one copy; each result is a view of that copy.
  // dims = [rows0, cols0, rows1, cols1, ...].
  function readMatrices(offsets, first, dims) {
    const count = dims.length / 2, start = offsets[first] >>> 2;
    const end = (offsets[first + count - 1] >>> 2) + dims[dims.length - 2] * dims[dims.length - 1];
    const { buffer, at } = copyOut(start, end), base = at - 4 * start;
    const out = new Array(count);
    for (let i = 0; i < count; i++) {
      const rows = dims[2 * i], cols = dims[2 * i + 1];
      out[i] = { data: new Float32Array(buffer, base + offsets[first + i], rows * cols), shape: [rows, cols] };
    }
    return out;
  }

  // Copy a checked matrix argument into wasm memory at byte offset `at`.
  function writeMatrix(arg, at) {
    const { name, rows, cols, nested, src } = arg;
    let p = at >>> 2;
    const count = rows * cols;
    if (!nested) {
      // exactly the checked rows·cols values (a getter may have resized or detached data since)
      if (arg.kind === 'Float32Array' || arg.kind === 'Float64Array') {
        const view = exactView(src, arg.kind === 'Float32Array' ? Float32Array : Float64Array, count);
        if (view === null) changed(name);
        // float32 values are copied as is: NaN or ±inf among them makes the C core answer
        // NON_FINITE, and findNonFinite then names the value
        if (arg.kind === 'Float64Array') {
          for (let i = 0; i < count; i++) {
            const x = view[i];
            if (!(Math.abs(x) <= FLT_MAX)) badValue(name, x, Math.floor(i / cols), i % cols);
          }
        }
        f32.set(view, p);
        return;
      }
      // an array or an array-like (a Proxy): each value read once, so an index getter cannot
      // swap a checked number afterwards, and never past the checked count
      if (src.length !== count) changed(name);
      for (let i = 0; i < count; i++) {
        const x = src[i];
        if (typeof x !== 'number' || !(Math.abs(x) <= FLT_MAX)) badValue(name, x, Math.floor(i / cols), i % cols);
        f32[p + i] = x;
      }
      return;
    }
    for (let i = 0; i < rows; i++) {
      const row = src[i];
      if (!isRow(row) || row.length !== cols) changed(name);
      for (let j = 0; j < cols; j++) {
        const x = row[j];
        if (typeof x !== 'number' || !(Math.abs(x) <= FLT_MAX)) badValue(name, x, i, j);
        f32[p++] = x;
      }
    }
  }

  // Copy a checked vector argument into wasm memory at byte offset `at`.
  function writeVector(arg, at) {
    const { name, src, length } = arg;
    if (src.length !== length) changed(name);
    const p = at >>> 2;
    for (let i = 0; i < length; i++) {
      const x = src[i];   // read once (see writeMatrix)
      if (typeof x !== 'number' || !(Math.abs(x) <= FLT_MAX)) badValue(name, x, i);
      f32[p + i] = x;
    }
  }

  function writeMask(mask, at, n, m) {
    if (!mask.nested) {
      if (mask.kind === 'Uint8Array') {
        const view = exactView(mask.src, Uint8Array, n * m);
        if (view === null) changed('mask');
        u8.set(view, at);
        return;
      }
      const src = mask.src;   // an array-like (a Proxy): read once each, never past n·m
      if (src.length !== n * m) changed('mask');
      for (let i = 0; i < n * m; i++) u8[at + i] = src[i] ? 1 : 0;
      return;
    }
    let p = at;
    for (let i = 0; i < n; i++) {
      const row = mask.src[i];
      if (!Array.isArray(row) || row.length !== m) changed('mask');
      for (let j = 0; j < m; j++) {
        const b = row[j];
        if (typeof b !== 'boolean') fail(ErrorCode.INVALID_ARGUMENT, `mask[${i}][${j}] must be true or false (true = may attend); received ${describe(b)}`);
        u8[p++] = b ? 1 : 0;
      }
    }
  }

  function readMatrix(at, rows, cols) {
    const { buffer, at: offset } = copyOut(at >>> 2, (at >>> 2) + rows * cols);
    return { data: new Float32Array(buffer, offset, rows * cols), shape: [rows, cols] };
  }

  // Copy the matrix arguments in order. A Float32Array is copied without a JS pass (see
  // writeMatrix): when a later argument fails its check, the earlier copies are scanned first,
  // so that the error names the first bad value in argument order, as the C core would.
  function writeAll(args, at) {
    for (let i = 0; i < args.length; i++) {
      try {
        writeMatrix(args[i], at[i]);
      } catch (e) {
        findNonFinite(args.slice(0, i), at.slice(0, i));
        throw e;
      }
    }
  }

  // the mask (or biases) after the matrices: the same order of errors
  function afterMatrices(fn, args, at) {
    try { fn(); } catch (e) { findNonFinite(args, at); throw e; }
  }

  // After NON_FINITE: the first NaN or ±inf in the copies the C core read, named after its
  // argument (args: checked matrix arguments, at: their byte offsets in wasm memory).
  function findNonFinite(args, at) {
    views();
    for (let a = 0; a < args.length; a++) {
      const { name, rows, cols } = args[a], p = at[a] >>> 2;
      for (let i = 0; i < rows * cols; i++) {
        const x = f32[p + i];
        if (!Number.isFinite(x)) badValue(name, x, Math.floor(i / cols), i % cols);
      }
    }
  }

  function check(status, fn) {
    if (status === ATTN_OK) return;
    if (status === ATTN_ERR_NON_FINITE) fail(ErrorCode.NON_FINITE, `${fn}: an input holds NaN or Infinity`);
    if (status === ATTN_ERR_OVERFLOW) {
      fail(ErrorCode.NON_FINITE, `${fn}: the result overflows float32 (the inputs are finite but too large in magnitude)`);
    }
    if (status === ATTN_ERR_TOO_LARGE) fail(ErrorCode.TOO_LARGE, `${fn}: the sizes are too large`);
    // the JS checks above should make every other status impossible
    fail(ErrorCode.INVALID_ARGUMENT, `${fn}: ${cString(exports.attn_status_string(status))}`);
  }

  function cString(ptr) {
    views();
    let end = ptr;
    while (u8[end] !== 0) end++;
    return new TextDecoder().decode(u8.subarray(ptr, end));
  }

  // 1/√d_k as the C core computes it in float, remembered for the last d_k
  let lastDk = 0, lastScale = 0;
  function scaleFor(scale, dk) {
    if (scale !== undefined) return scale;
    if (dk !== lastDk) { lastScale = exports.attn_default_scale(dk); lastDk = dk; }
    return lastScale;
  }

  /** Scaled dot-product attention: q (n, d_k), k (m, d_k), v (m, d_v). */
  function attention(inputs, options) {
    inputsObject(inputs, 'attention', ATTENTION_INPUTS);
    const q = matrixArg(inputs.q, 'q'), k = matrixArg(inputs.k, 'k'), v = matrixArg(inputs.v, 'v');
    const opts = optionsArg(options, 'attention');
    const n = q.rows, m = k.rows, dk = q.cols, dv = v.cols;
    if (k.cols !== dk) {
      fail(ErrorCode.SHAPE_MISMATCH, `k must have shape (m, d_k) = (m, ${dk}) to match q ${shapeStr(n, dk)}; received k ${shapeStr(k.rows, k.cols)}`);
    }
    if (v.rows !== m) {
      fail(ErrorCode.SHAPE_MISMATCH, `v must have one row per key: shape (${m}, d_v) to match k ${shapeStr(m, dk)}; received v ${shapeStr(v.rows, v.cols)}`);
    }
    const mask = maskArg(opts.mask, n, m);
    // rows: [begin, end) of the queries only (the output of the others is not computed)
    const [r0, r1] = opts.rows ?? [0, n];
    if (r1 <= r0 || r1 > n) fail(ErrorCode.INVALID_ARGUMENT, `rows must be [begin, end] with 0 <= begin < end <= n = ${n}; received [${r0}, ${r1}]`);
    // with weights: false the C core needs a workspace of O(m·d), never n×m
    const workFloats = opts.weights ? n * m : Math.ceil((exports.attn_workspace_size(n, m, dk, dv) >>> 0) / 4);   // size_t: unsigned
    const { offsets, extra, release } = allocate(
      [n * dk, m * dk, m * dv, n * dv, workFloats],
      mask ? n * m : 0, () => (opts.weights ? `attention weights of shape ${shapeStr(n, m)}` : 'attention'));
    const pq = offsets[0], pk = offsets[1], pv = offsets[2], pout = offsets[3], pw = offsets[4];
    const outer = busy;
    busy = true;
    try {
      writeAll([q, k, v], [pq, pk, pv]);
      if (mask) afterMatrices(() => writeMask(mask, extra, n, m), [q, k, v], [pq, pk, pv]);
      const flags = opts.causal ? ATTN_CAUSAL : 0, scale = scaleFor(opts.scale, dk);
      const pweights = opts.weights ? pw : 0, pwork = opts.weights ? 0 : pw, pmask = mask ? extra : 0;
      // A fresh instance runs baseline-compiled wasm until the engine has optimised the hot
      // functions, and a call in progress never switches. So the first long calls are cut
      // into row ranges of growing size (same bits: rows are independent).
      const rowWork = m * (dk + dv);
      let rows = r1 - r0, status;
      if (warmWork < WARM_WORK && rows * rowWork > FIRST_CHUNK) rows = Math.max(1, Math.floor(FIRST_CHUNK / rowWork));
      for (let begin = r0; begin < r1; begin += rows, rows *= 2) {
        const end = Math.min(r1, begin + rows);
        status = exports.attn_forward_rows(pout, pweights, pwork, pq, pk, pv, pmask, n, m, dk, dv, scale, flags, begin, end);
        if (status !== ATTN_OK) break;
        warmWork += (end - begin) * rowWork;
      }
      if (status === ATTN_ERR_NON_FINITE) findNonFinite([q, k, v], [pq, pk, pv]);
      check(status, 'attention');
      if (!opts.weights) return { output: readMatrix(pout + r0 * dv * 4, r1 - r0, dv) };
      const [output, weights] = readMatrices(offsets, 3, [n, dv, n, m]);
      return { output, weights };
    } finally {
      busy = outer;
      release();
    }
  }

  /** The episode step by step: x (n, d_model), wq/wk (d_model, d_k), wv (d_model, d_v). */
  function selfAttention(inputs, options) {
    inputsObject(inputs, 'selfAttention', SELF_INPUTS);
    const x = matrixArg(inputs.x, 'x'), wq = matrixArg(inputs.wq, 'wq'), wk = matrixArg(inputs.wk, 'wk'), wv = matrixArg(inputs.wv, 'wv');
    const opts = optionsArg(options, 'selfAttention');
    const n = x.rows, dm = x.cols, dk = wq.cols, dv = wv.cols;
    for (let i = 1; i < 4; i++) {
      const w = i === 1 ? wq : i === 2 ? wk : wv;
      if (w.rows !== dm) {
        fail(ErrorCode.SHAPE_MISMATCH, `${w.name} must have shape (d_model, ${w.name === 'wv' ? 'd_v' : 'd_k'}) with d_model = ${dm} (the columns of x ${shapeStr(n, dm)}); received ${w.name} ${shapeStr(w.rows, w.cols)}` +
          (w.cols === dm ? ` (a PyTorch nn.Linear weight is (out, in): pass its transpose)` : ''));
      }
    }
    if (wk.cols !== dk) {
      fail(ErrorCode.SHAPE_MISMATCH, `wk must have shape (${dm}, ${dk}) like wq, so that Q·Kᵀ is defined; received wk ${shapeStr(wk.rows, wk.cols)}`);
    }
    const mask = maskArg(opts.mask, n, n);
    const { offsets, extra, release } = allocate(
      [n * dm, dm * dk, dm * dk, dm * dv, n * dk, n * dk, n * dv, n * n, n * n, n * n, n * dv],
      mask ? n * n : 0, () => `self-attention weights of shape ${shapeStr(n, n)}`);
    const px = offsets[0], pwq = offsets[1], pwk = offsets[2], pwv = offsets[3];
    const outer = busy;
    busy = true;
    try {
      writeAll([x, wq, wk, wv], [px, pwq, pwk, pwv]);
      if (mask) afterMatrices(() => writeMask(mask, extra, n, n), [x, wq, wk, wv], [px, pwq, pwk, pwv]);
      const status = exports.attn_self_forward(offsets[4], offsets[5], offsets[6], offsets[7], offsets[8], offsets[9], offsets[10], px, pwq, pwk, pwv,
        mask ? extra : 0, n, dm, dk, dv, scaleFor(opts.scale, dk), opts.causal ? ATTN_CAUSAL : 0);
      if (status === ATTN_ERR_NON_FINITE) findNonFinite([x, wq, wk, wv], [px, pwq, pwk, pwv]);
      check(status, 'selfAttention');
      const r = readMatrices(offsets, 4, [n, dk, n, dk, n, dv, n, n, n, n, n, n, n, dv]);
      return { q: r[0], k: r[1], v: r[2], scores: r[3], scaled: r[4], weights: r[5], output: r[6] };
    } finally {
      busy = outer;
      release();
    }
  }

  /**
   * Multi-head attention (episode 06), as torch.nn.MultiheadAttention computes it:
   * x (n, d_model), kv (m, d_model) optional, wq/wo (d_model, d_model), wk/wv (d_model, d_kv)
   * with d_kv = kvHeads·d_head, biases optional; options.heads divides d_model.
   */
  function multiHeadAttention(inputs, options) {
    const fn = 'multiHeadAttention';
    if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs)) {
      fail(ErrorCode.INVALID_ARGUMENT, `${fn}: the first argument must be an object { x, wq, wk, wv, wo, bq?, bk?, bv?, bo?, kv? }; received ${describe(inputs)}`);
    }
    for (const key of Object.keys(inputs)) {
      if (!MHA_INPUTS.includes(key)) fail(ErrorCode.INVALID_ARGUMENT, `${fn}: unknown input "${key}"; expected ${MHA_INPUTS.join(', ')}`);
    }
    const [x, wq, wk, wv, wo] = ['x', 'wq', 'wk', 'wv', 'wo'].map((name) => matrixArg(inputs[name], name));
    const kv = inputs.kv === undefined || inputs.kv === null ? null : matrixArg(inputs.kv, 'kv');
    if (options === undefined || options === null) {
      fail(ErrorCode.INVALID_ARGUMENT, `${fn}: options.heads is missing: pass { heads }, the number of heads (a positive integer dividing d_model)`);
    }
    const opts = optionsArg(options, fn);
    if (options.heads === undefined) fail(ErrorCode.INVALID_ARGUMENT, `${fn}: options.heads is missing: the number of heads, a positive integer dividing d_model`);
    const heads = headsArg(options.heads, 'heads');
    const kvHeads = options.kvHeads === undefined ? heads : headsArg(options.kvHeads, 'kvHeads');
    const n = x.rows, dm = x.cols, m = kv ? kv.rows : n;
    if (dm % heads !== 0) {
      fail(ErrorCode.SHAPE_MISMATCH, `heads = ${heads} does not divide d_model = ${dm} (the columns of x ${shapeStr(n, dm)}): each head takes d_model / heads columns`);
    }
    if (heads % kvHeads !== 0) {
      fail(ErrorCode.SHAPE_MISMATCH, `kvHeads = ${kvHeads} does not divide heads = ${heads}: each kv head serves heads / kvHeads query heads`);
    }
    const dh = dm / heads, dkv = kvHeads * dh;
    if (kv && kv.cols !== dm) {
      fail(ErrorCode.SHAPE_MISMATCH, `kv must have shape (m, d_model) = (m, ${dm}) like x ${shapeStr(n, dm)}; received kv ${shapeStr(kv.rows, kv.cols)}`);
    }
    const inProjHint = (w) => (w.rows === 3 * dm && w.cols === dm
      ? ` (nn.MultiheadAttention's in_proj_weight is (3·E, E): pass in_proj_weight[:E].T as wq, [E:2E].T as wk, [2E:].T as wv)` : '');
    for (const w of [wq, wo]) {
      if (w.rows !== dm || w.cols !== dm) {
        fail(ErrorCode.SHAPE_MISMATCH, `${w.name} must have shape (d_model, d_model) = ${shapeStr(dm, dm)} with d_model = ${dm} (the columns of x ${shapeStr(n, dm)}); received ${w.name} ${shapeStr(w.rows, w.cols)}` + inProjHint(w));
      }
    }
    for (const w of [wk, wv]) {
      if (w.rows !== dm || w.cols !== dkv) {
        const expected = kvHeads === heads ? `(d_model, d_model) = ${shapeStr(dm, dm)}` : `(d_model, kvHeads·d_head) = ${shapeStr(dm, dkv)}`;
        const gqaHint = kvHeads === heads && w.rows === dm && w.cols < dm && w.cols % dh === 0 && heads % (w.cols / dh) === 0
          ? ` (for grouped-query attention pass { kvHeads: ${w.cols / dh} })` : '';
        fail(ErrorCode.SHAPE_MISMATCH, `${w.name} must have shape ${expected} with d_model = ${dm}, heads = ${heads}, kvHeads = ${kvHeads}; received ${w.name} ${shapeStr(w.rows, w.cols)}` + (gqaHint || inProjHint(w)));
      }
    }
    const bq = vectorArg(inputs.bq, 'bq', dm, 'd_model, one per column of wq');
    const bk = vectorArg(inputs.bk, 'bk', dkv, 'one per column of wk');
    const bv = vectorArg(inputs.bv, 'bv', dkv, 'one per column of wv');
    const bo = vectorArg(inputs.bo, 'bo', dm, 'd_model, one per column of wo');
    const mask = maskArg(opts.mask, n, m);
    const workBytes = exports.attn_mha_workspace_size(n, m, dm, heads, kvHeads) >>> 0;
    if (workBytes === 0) fail(ErrorCode.TOO_LARGE, `${fn}: the sizes (n = ${n}, m = ${m}, d_model = ${dm}) are too large`);
    const { offsets, extra, release } = allocate(
      [n * dm, kv ? m * dm : 0, dm * dm, dm * dkv, dm * dkv, dm * dm,
        bq ? dm : 0, bk ? dkv : 0, bv ? dkv : 0, bo ? dm : 0,
        n * dm, n * dm, opts.weights ? heads * n * m : 0, Math.ceil(workBytes / 4)],
      mask ? n * m : 0, () => (opts.weights ? `multi-head attention weights of shape (${heads}, ${n}, ${m})` : 'multi-head attention'));
    const [px, pkv, pwq, pwk, pwv, pwo, pbq, pbk, pbv, pbo, pout, pcat, pw, pwork] = offsets;
    const outer = busy;
    busy = true;
    try {
      const mats = kv ? [x, kv, wq, wk, wv, wo] : [x, wq, wk, wv, wo], at = kv ? [px, pkv, pwq, pwk, pwv, pwo] : [px, pwq, pwk, pwv, pwo];
      writeAll(mats, at);
      afterMatrices(() => {
        for (const [b, p] of [[bq, pbq], [bk, pbk], [bv, pbv], [bo, pbo]]) if (b) writeVector(b, p);
        if (mask) writeMask(mask, extra, n, m);
      }, mats, at);
      const status = exports.attn_mha_forward(pout, pcat, opts.weights ? pw : 0, pwork,
        px, kv ? pkv : 0, pwq, pwk, pwv, pwo, bq ? pbq : 0, bk ? pbk : 0, bv ? pbv : 0, bo ? pbo : 0,
        mask ? extra : 0, n, m, dm, heads, kvHeads, scaleFor(opts.scale, dh), opts.causal ? ATTN_CAUSAL : 0);
      if (status === ATTN_ERR_NON_FINITE) findNonFinite(mats, at);
      check(status, fn);
      const dims = opts.weights ? [n, dm, n, dm, heads * n, m] : [n, dm, n, dm];
      const [output, concat, all] = readMatrices(offsets, 10, dims);
      // head h is columns [h·d_head, (h+1)·d_head) of concat: copied out, one matrix each
      const headOutputs = new Array(heads);
      for (let h = 0; h < heads; h++) {
        const data = new Float32Array(n * dh);
        for (let i = 0; i < n; i++) data.set(concat.data.subarray(i * dm + h * dh, i * dm + (h + 1) * dh), i * dh);
        headOutputs[h] = { data, shape: [n, dh] };
      }
      if (!opts.weights) return { output, heads: headOutputs, concat };
      const weights = new Array(heads);
      for (let h = 0; h < heads; h++) weights[h] = { data: all.data.subarray(h * n * m, (h + 1) * n * m), shape: [n, m] };
      return { output, weights, heads: headOutputs, concat };
    } finally {
      busy = outer;
      release();
    }
  }

  return Object.freeze({
    attention: guarded(attention, 'attention'),
    selfAttention: guarded(selfAttention, 'selfAttention'),
    multiHeadAttention: guarded(multiHeadAttention, 'multiHeadAttention'),
    /** True when this instance runs the fused multiply-add build (relaxed SIMD, picked where the engine has it). */
    relaxed,
    /** Bytes of WebAssembly memory in use by this instance (grows, never shrinks). */
    get memoryBytes() { return memory.buffer.byteLength; },
  });
}

// An operation whose every failure is an AttentionError: what a caller's getter or Proxy trap
// throws while its arguments are read becomes INVALID_ARGUMENT, and an engine that cannot
// allocate a result OUT_OF_MEMORY. A trap of the wasm code itself (a bug) stays as it is.
function guarded(op, fn) {
  return function (inputs, options) {
    try {
      return op(inputs, options);
    } catch (e) {
      if (e instanceof AttentionError || e instanceof WebAssembly.RuntimeError) throw e;
      if (e instanceof RangeError && /allocation failed|out of memory/i.test(e.message)) {
        throw new AttentionError(ErrorCode.OUT_OF_MEMORY, `${fn}: the engine could not allocate the result (${e.message})`);
      }
      throw asError(e, `${fn}: reading the arguments failed`);
    }
  };
}

function changed(name) {
  fail(ErrorCode.INVALID_ARGUMENT, `${name} changed while it was being read (a getter or another call resized, replaced or detached it)`);
}

function badValue(name, x, i, j) {
  const where = j === undefined ? `${name}[${i}]` : `${name}[${i}][${j}]`;
  if (typeof x !== 'number') fail(ErrorCode.INVALID_ARGUMENT, `${where} must be a number; received ${describe(x)}`);
  if (Number.isNaN(x) || !Number.isFinite(x)) fail(ErrorCode.NON_FINITE, `${where} is ${x}: inputs must be finite numbers`);
  fail(ErrorCode.NON_FINITE, `${where} = ${x} is outside the float32 range (±3.4e38)`);
}

function formatBytes(b) {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let u = 0;
  while (b >= 1024 && u < units.length - 1) { b /= 1024; u++; }
  return `${u === 0 ? b : b.toFixed(1)} ${units[u]}`;
}

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
