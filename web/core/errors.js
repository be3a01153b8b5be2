// errors.js - the API's one error type, and the pieces of its messages: every failure is an
// AttentionError with a stable code and a message that names the argument and its shape.

/** Error codes, stable across versions. */
export const ErrorCode = Object.freeze({
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  SHAPE_MISMATCH: 'SHAPE_MISMATCH',
  NON_FINITE: 'NON_FINITE',
  TOO_LARGE: 'TOO_LARGE',
  OUT_OF_MEMORY: 'OUT_OF_MEMORY',
  INVALID_MODEL: 'INVALID_MODEL',
  FETCH_FAILED: 'FETCH_FAILED',
  THREAD_FAILED: 'THREAD_FAILED',
});

export class AttentionError extends Error {
  constructor(code, message, options) {
    super(message, options);
    this.name = 'AttentionError';
    this.code = code;
  }
}

export const fail = (code, message) => { throw new AttentionError(code, message); };

// anything thrown by the host (a getter, a Proxy trap, the engine) as an AttentionError whose
// cause is the original
export function asError(e, what) {
  if (e instanceof AttentionError) return e;
  let text;
  try { text = e && e.message ? e.message : String(e); } catch { text = 'an exception that cannot be shown'; }
  return new AttentionError(ErrorCode.INVALID_ARGUMENT, `${what}: ${text}`, { cause: e });
}

// An operation whose every failure is an AttentionError: what a caller's getter or Proxy trap
// throws while its arguments are read becomes INVALID_ARGUMENT, and an engine that cannot
// allocate a result OUT_OF_MEMORY. A trap of the wasm code itself (a bug) stays as it is.
export function guarded(op, fn) {
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

// ----------------------------------------------------------------------------
// message text

export function describe(x) {
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
export function shapeText(shape) {
  try {
    return Array.isArray(shape) ? `[${shape.slice(0, 4).map((d) => (typeof d === 'bigint' ? `${d}n` : typeof d === 'string' ? JSON.stringify(d) : String(d))).join(', ')}${shape.length > 4 ? ', …' : ''}]` : describe(shape);
  } catch {
    return 'a shape that cannot be inspected';
  }
}

export const shapeStr = (r, c) => `(${r}, ${c})`;

/** Text from the input, quoted for a message and cut to max characters with "…" (a file's line, a key, a name). */
export const quote = (s, max = 80) => JSON.stringify(s.length > max ? s.slice(0, max) + '…' : s);

export function formatBytes(b) {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let u = 0;
  while (b >= 1024 && u < units.length - 1) { b /= 1024; u++; }
  return `${u === 0 ? b : b.toFixed(1)} ${units[u]}`;
}

// an argument that a getter or another call resized, replaced or detached after its check
export function changed(name) {
  fail(ErrorCode.INVALID_ARGUMENT, `${name} changed while it was being read (a getter or another call resized, replaced or detached it)`);
}

// value x of argument `name` at [i] or [i][j] is not a float32 number
export function badValue(name, x, i, j) {
  const where = j === undefined ? `${name}[${i}]` : `${name}[${i}][${j}]`;
  if (typeof x !== 'number') fail(ErrorCode.INVALID_ARGUMENT, `${where} must be a number; received ${describe(x)}`);
  if (Number.isNaN(x) || !Number.isFinite(x)) fail(ErrorCode.NON_FINITE, `${where} is ${x}: inputs must be finite numbers`);
  fail(ErrorCode.NON_FINITE, `${where} = ${x} is outside the float32 range (±3.4e38)`);
}
