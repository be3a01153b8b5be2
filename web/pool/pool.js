// pool.js - attention on several cores: query rows split across workers, each with
// its own copy of the core, K and V. No SharedArrayBuffer, so no COOP/COEP headers needed.
//
//   import { createAttentionPool } from 'attnmap/pool';
//   const pool = await createAttentionPool();               // one worker per core, at most 8
//   const { output } = await pool.attention({ q, k, v }, { causal: true });
//   await pool.close();
//
// This file is the pool itself, for any host: the two entries give it their workers.
//   attention-pool.js        browsers (and Deno, Bun): module Web Workers, attention-worker.js
//   attention-pool-node.js   Node: worker_threads, attention-worker-node.js
// package.json's "./pool" picks one by the "node" condition, so that a bundle for the browser
// never meets Node's modules and Node never meets a Web Worker.
//
// The workers get the core as a compiled WebAssembly.Module from this thread (the one the
// pool's own check runs, so every worker runs the same build); they carry no wasm of their own.
//
// Each worker computes a contiguous range of query rows with attention(..., { weights: false,
// rows }), so the output is bit for bit the one createAttention() gives. A call with less work
// than options.inlineBelow multiply-adds (default INLINE_BELOW, where 2 workers stopped paying
// for the copies and the messages in bench/pool.js) runs in this thread on the same core: the
// pool is never slower than not using it. The answer says which: { output, workers }. Rows are split so that
// each worker gets the same work (with causal, later rows see more keys). The inputs are
// copied to every worker (structured clone): worth it from a few hundred rows on.
//
// A call reads each of its arguments once, into copies of its own (takeInputs, takeOptions):
// what this thread checks is what the workers get, whatever a getter or a Proxy answers the
// next time. A call can be bounded ({ signal }, { timeout }): the workers still computing it
// when it is stopped are terminated and replaced, and the calls queued behind it go on there.
// The pool's { timeout } is every call's default limit and, unless { startTimeout } says
// otherwise, the limit of the workers' start too.
import { createAttention } from '../core/attention.js';
import { AttentionError, ErrorCode, describe, fail } from '../core/errors.js';
import { moduleOf } from '../core/instantiate.js';

const MAX_WORKERS = 8;
// Multiply-adds of a call (rows × keys seen × (d_k + d_v)) below which this thread computes it:
// measured by `node bench/bench.js` (the pool section's crossover, docs/BENCHMARKS.md).
export const INLINE_BELOW = 24_000_000;
const MAX_TIMEOUT = 0x7fffffff;   // ms: setTimeout's limit (about 24.8 days)
const CALL_OPTIONS = ['causal', 'scale', 'mask', 'weights', 'rows', 'signal', 'timeout'];
const POOL_OPTIONS = ['workers', 'workerUrl', 'relaxed', 'timeout', 'startTimeout', 'inlineBelow'];
const INPUTS = ['q', 'k', 'v'];
const noop = () => {};
const toError = (e) => (e instanceof AttentionError ? e
  : new AttentionError(typeof e?.code === 'string' && Object.hasOwn(ErrorCode, e.code) ? e.code : ErrorCode.INVALID_ARGUMENT, String(e?.message ?? e)));

// what a caller's getter or Proxy trap threw, as an AttentionError naming what was being read
// (the engine failing to allocate a copy: OUT_OF_MEMORY, as attention() says it)
function readError(what, e) {
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
function timeoutArg(t, fn, name = 'timeout') {
  if (t === undefined || t === null) return undefined;
  if (typeof t !== 'number' || !(t === Infinity || (t > 0 && t <= MAX_TIMEOUT))) {
    fail(ErrorCode.INVALID_ARGUMENT, `${fn}: ${name} must be a number of milliseconds, more than 0 and at most ${MAX_TIMEOUT}, or Infinity for none; received ${describe(t)}`);
  }
  return t;
}

const timeoutError = (what, ms) => new DOMException(`${what} did not finish within ${ms} ms (timeout)`, 'TimeoutError');

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
function takeInputs(inputs, ctx) {
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
function takeOptions(options, n, m, ctx) {
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
function flatMatrix(x) {
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

function flatMask(mask, n, m) {
  if (mask === undefined || mask === null) return undefined;
  if (Array.isArray(mask)) {
    const data = new Uint8Array(n * m);
    for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) data[i * m + j] = mask[i][j] ? 1 : 0;
    return { data, shape: [n, m] };
  }
  return { data: mask.data, shape: [n, m] };   // a copy already
}

// ----------------------------------------------------------------------------
// workers

// A host's workers (the entries' `platform`): { cores(), spawner(url) }. cores() resolves to the
// number of cores or undefined; spawner(url) resolves to make(onMessage, onError), which starts a
// worker synchronously (replacements are started at once) and returns
// { post(msg), busy(), idle(), terminate() }; url is options.workerUrl or undefined (the default).

async function defaultWorkers(platform) {
  const cores = await platform.cores();
  return Math.max(1, Math.min(MAX_WORKERS, Number.isInteger(cores) ? cores : 2));
}

// Cut rows [r0, r1) into at most `parts` ranges of about equal work (work of row i: the keys
// it sees, plus a constant for the per-row overhead).
export function splitRows(r0, r1, m, causal, parts) {
  const work = (i) => (causal ? Math.min(i + 1, m) : m) + 16;
  let total = 0;
  for (let i = r0; i < r1; i++) total += work(i);
  const ranges = [];
  let begin = r0, acc = 0;
  for (let i = r0; i < r1 && ranges.length < parts - 1; i++) {
    acc += work(i);
    if (acc >= (total * (ranges.length + 1)) / parts) { ranges.push([begin, i + 1]); begin = i + 1; }
  }
  if (begin < r1) ranges.push([begin, r1]);
  return ranges;
}

// ----------------------------------------------------------------------------
// the pool's options

// createAttentionPool's options, each read once and checked -> { workerUrl, relaxed, count,
// timeout, startTimeout, inlineBelow }
async function poolOptions(options, platform) {
  if (options === null || typeof options !== 'object') {
    fail(ErrorCode.INVALID_ARGUMENT, `createAttentionPool: options must be an object like { workers: 2 }; received ${String(options)}`);
  }
  let unknown;
  try {
    for (const key in options) if (!POOL_OPTIONS.includes(key) && Object.hasOwn(options, key)) { unknown = key; break; }
  } catch (e) {
    throw readError('createAttentionPool: reading the names of the options failed', e);
  }
  if (unknown !== undefined) fail(ErrorCode.INVALID_ARGUMENT, `createAttentionPool: unknown option "${unknown}"; expected one of ${POOL_OPTIONS.join(', ')}`);
  const given = {};
  for (const key of POOL_OPTIONS) {
    try { given[key] = options[key]; } catch (e) { throw readError(`createAttentionPool: reading options.${key} failed`, e); }
  }
  const { workerUrl, relaxed = true } = given;
  if (typeof relaxed !== 'boolean') fail(ErrorCode.INVALID_ARGUMENT, `createAttentionPool: relaxed must be true or false; received ${String(relaxed)}`);
  const count = given.workers === undefined ? await defaultWorkers(platform) : given.workers;
  if (!Number.isInteger(count) || count < 1 || count > 64) {
    fail(ErrorCode.INVALID_ARGUMENT, `createAttentionPool: workers must be an integer from 1 to 64; received ${String(count)}`);
  }
  const timeout = timeoutArg(given.timeout, 'createAttentionPool') ?? Infinity;
  const startTimeout = timeoutArg(given.startTimeout, 'createAttentionPool', 'startTimeout') ?? timeout;
  const { inlineBelow = INLINE_BELOW } = given;
  if (typeof inlineBelow !== 'number' || !(inlineBelow >= 0)) {
    fail(ErrorCode.INVALID_ARGUMENT, `createAttentionPool: inlineBelow must be a number of multiply-adds, 0 (always split) to Infinity (never); received ${describe(inlineBelow)}`);
  }
  return { workerUrl, relaxed, count, timeout, startTimeout, inlineBelow };
}

// ----------------------------------------------------------------------------
// the workers: start-up, the queue of each, faults
//
// The pool's state: { local, count, timeout, init, make, slots, closed, nextId }. One slot per
// worker: { w, sent, waiting, dead, busy }. A worker holds at most DEPTH parts (sent, in order:
// sent[0] is the one it computes, the next one is there so that it starts at once); the parts
// behind them wait here (waiting), not in the worker. So when a call ends early (aborted, timed
// out, failed), its waiting parts are simply taken back, and a worker holding one of its parts
// is terminated and replaced, the other parts it held sent again to the new one: no worker is
// left computing a part nobody waits for (a stuck one would block the rest).
const DEPTH = 2;

// (Re)start a slot's worker; resolves to whether it runs the relaxed build.
function startWorker(pool, slot) {
  let settle;
  const ready = new Promise((resolve, reject) => { settle = { resolve, reject }; });
  const w = pool.make((msg) => {
    if (slot.w !== w) return;   // a replaced worker's last words
    if ('ready' in msg) {
      if (msg.ready) settle.resolve(msg.relaxed === true);
      else { const err = toError(msg.error); settle.reject(err); lost(slot, err); }
      return;
    }
    answered(slot, msg);
  }, (e) => {
    if (slot.w !== w) return;
    const err = new AttentionError(ErrorCode.INVALID_ARGUMENT, `attention pool: a worker failed: ${e?.message ?? e}`);
    settle.reject(err);
    lost(slot, err);
  });
  slot.w = w;
  w.post({ init: pool.init });
  return ready;
}

// Start every slot's worker; resolves to whether they all run the relaxed build. Within `ms`
// (Infinity: no limit), else a TimeoutError; on any failure the workers started are terminated.
async function startAll(pool, ms) {
  const ready = [];
  for (const slot of pool.slots) {
    try {
      ready.push(startWorker(pool, slot));
    } catch (e) {
      pool.closed = true;
      for (const s of pool.slots) if (s.w) s.w.terminate();
      throw new AttentionError(ErrorCode.INVALID_ARGUMENT, `createAttentionPool: cannot start a worker: ${e?.message ?? e}`);
    }
  }
  let usesRelaxed, timer;
  try {
    const all = Promise.all(ready);
    const limit = ms === Infinity ? [] : [new Promise((resolve, reject) => {
      timer = setTimeout(() => reject(timeoutError('createAttentionPool: the workers\' start', ms)), ms);
    })];
    usesRelaxed = (await Promise.race([all, ...limit])).every(Boolean);
  } catch (e) {
    pool.closed = true;
    for (const s of pool.slots) s.w.terminate();
    throw e;
  } finally {
    clearTimeout(timer);
  }
  // in Node an idle pool does not keep the process alive (a call in flight does)
  for (const s of pool.slots) { s.w.idle(); s.busy = false; }
  return usesRelaxed;
}

// Send the slot's next parts while its worker holds fewer than DEPTH. In Node a worker keeps
// the process alive only while it holds parts.
function pump(slot) {
  while (!slot.dead && slot.sent.length < DEPTH && slot.waiting.length) {
    const part = slot.waiting.shift();
    try {
      slot.w.post(part.msg);
      slot.sent.push(part);
    } catch (e) {   // DataCloneError: not expected (the inputs are plain typed arrays by now), kept as a net
      part.call.fail(new AttentionError(ErrorCode.INVALID_ARGUMENT, `attention pool: the inputs cannot be sent to a worker (${e?.message ?? e}); pass number[][] or { data: Float32Array, shape }`));
    }
  }
  const busy = slot.sent.length > 0;
  if (busy !== slot.busy) { slot.busy = busy; if (busy) slot.w.busy(); else slot.w.idle(); }
}

function answered(slot, msg) {
  const part = slot.sent[0];
  if (!part || part.id !== msg.id) return;
  slot.sent.shift();
  pump(slot);
  if (msg.error) part.call.fail(toError(msg.error));
  else part.call.done(part, { data: msg.data, shape: msg.shape });
}

const partsOf = (slot) => { const parts = [...slot.sent, ...slot.waiting]; slot.sent = []; slot.waiting = []; return parts; };

// the slot's worker failed or exited: its calls fail, later calls too
function lost(slot, err) {
  slot.dead = true;
  try { Promise.resolve(slot.w.terminate()).catch(noop); } catch { /* gone already */ }
  for (const p of partsOf(slot)) p.call.fail(err);
}

// Terminate the slot's worker (it holds a part whose call has ended) and start another, which
// gets the other parts it held, then those waiting.
function replace(pool, slot) {
  slot.waiting.unshift(...slot.sent);
  slot.sent = [];
  try { Promise.resolve(slot.w.terminate()).catch(noop); } catch { /* gone already */ }
  if (pool.closed || slot.dead) return;
  try {
    startWorker(pool, slot).catch(noop);   // a failure to start reaches the waiting parts through lost()
  } catch (e) {
    slot.w = { post: noop, busy: noop, idle: noop, terminate: noop };
    lost(slot, new AttentionError(ErrorCode.INVALID_ARGUMENT, `attention pool: cannot restart a worker: ${e?.message ?? e}`));
    return;
  }
  slot.busy = null;   // a new worker: ref'd or not, pump() says
  pump(slot);   // right behind init: the worker waits for its core, then computes them
}

// ----------------------------------------------------------------------------
// a call: its parts queued, and its end (every part answered, a failure, abort, time limit)

// Send one call's parts; resolves to their outputs in order. It ends on the first of: every
// part answered, a part failed, the signal aborted, the time limit, close().
function run(pool, ranges, inputs, opts, signal, ms) {
  return new Promise((resolve, reject) => {
    const outputs = new Array(ranges.length);
    let remaining = ranges.length, timer;
    const call = { parts: [], ended: false };
    const end = () => {
      call.ended = true;
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      takeBack(pool, call);
    };
    call.fail = (err) => { if (!call.ended) { end(); reject(err); } };
    call.done = (part, out) => {
      if (call.ended) return;
      outputs[part.index] = out;
      if (--remaining === 0) { end(); resolve(outputs); }
    };
    function onAbort() { call.fail(signal.reason); }
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
    if (ms !== Infinity) timer = setTimeout(() => call.fail(timeoutError('attention pool: the call', ms)), ms);
    queue(pool, call, ranges, inputs, opts);
  });
}

// one part per range, each on the waiting list of its slot
function queue(pool, call, ranges, inputs, opts) {
  for (let i = 0; i < ranges.length && !call.ended; i++) {
    const slot = pool.slots[i];
    if (slot.dead) { call.fail(new AttentionError(ErrorCode.INVALID_ARGUMENT, 'attention pool: a worker has failed; create a new pool')); break; }
    const id = pool.nextId++;
    const part = { id, index: i, call, slot, msg: { id, inputs, options: { ...opts, rows: ranges[i] } } };
    call.parts.push(part);
    slot.waiting.push(part);
    pump(slot);
  }
}

// an ended call's parts still waiting are taken back; a worker that holds one is replaced
function takeBack(pool, call) {
  for (const p of call.parts) {
    const { slot } = p, i = slot.sent.indexOf(p), j = slot.waiting.indexOf(p);
    if (i >= 0) { slot.sent.splice(i, 1); replace(pool, slot); } else if (j >= 0) slot.waiting.splice(j, 1);
  }
}

// ----------------------------------------------------------------------------
// pool.attention and pool.close

// attention() in this thread on the copies -> its result; its errors as they are, anything else
// (not expected: the copies are plain values) as an AttentionError
function check(local, inputs, options) {
  try {
    return local.attention(inputs, options);
  } catch (e) {
    throw e instanceof AttentionError ? e : readError('attention pool: reading the arguments failed', e);
  }
}

// A call's arguments, each read once into copies and checked by attention() in this thread
// (one query row computed), so that a bad call fails as attention() fails, whatever the inputs
// are made of -> { inputs: { q, k, v } as Float32Arrays, o: the options read, n, m, r0, r1, ms },
// or { output } when the call was small and computed here whole
function takeCall(pool, inputs, options) {
  const ctx = { raw: false };
  const x = takeInputs(inputs, ctx);
  const o = takeOptions(options, x.n, x.m, ctx);
  if (!o.plain) {   // attention() rejects them, after the inputs, in its own words (and if not, this does)
    check(pool.local, x.value, options);
    fail(ErrorCode.INVALID_ARGUMENT, `attention: options must be a plain object like { causal: true }; received ${describe(options)}`);
  }
  if (o.unknown !== undefined) {
    fail(ErrorCode.INVALID_ARGUMENT, `attention: unknown option "${o.unknown}"; expected one of ${CALL_OPTIONS.join(', ')}`);
  }
  if (o.weights === true) {
    fail(ErrorCode.INVALID_ARGUMENT, 'attention pool: returns the output only; leave weights out or pass { weights: false } (the n×m weights need createAttention().attention)');
  }
  const { signal } = o;
  if (signal !== undefined && signal !== null && !(typeof AbortSignal === 'function' && signal instanceof AbortSignal)) {
    fail(ErrorCode.INVALID_ARGUMENT, `attention pool: signal must be an AbortSignal (AbortController's signal, AbortSignal.timeout(ms)); received ${describe(signal)}`);
  }
  const ms = timeoutArg(o.timeout, 'attention pool') ?? pool.timeout;
  const base = { causal: o.causal, scale: o.scale, mask: o.mask, weights: o.weights ?? false };
  const wanted = o.rows;
  // small (inlineBelow): attention() here on the copies, which checks them as it computes them
  if (!ctx.raw && !signal?.aborted && small(pool, x, o)) {
    return { output: check(pool.local, x.value, { ...base, ...(wanted === undefined ? {} : { rows: wanted }) }).output };
  }
  const pair = o.rowsCopied && Number.isInteger(wanted[0]) && Number.isInteger(wanted[1]) &&
    wanted[0] >= 0 && wanted[0] < wanted[1] ? [wanted[0], wanted[1]] : null;
  // the check: attention() itself on the first requested row (a bad rows value fails as given)
  try {
    check(pool.local, x.value, { ...base, rows: pair ? [pair[0], pair[0] + 1] : wanted ?? [0, 1] });
  } catch (e) {
    if (pair && e.code === ErrorCode.INVALID_ARGUMENT && /^rows /.test(e.message)) check(pool.local, x.value, { ...base, rows: pair });
    throw e;
  }
  if (ctx.raw) {
    fail(ErrorCode.INVALID_ARGUMENT, 'attention pool: the inputs changed while they were being read (a getter or a Proxy answered differently)');
  }
  // checked: now the same numbers as plain typed arrays, which structured clone copies as is
  const q = flatMatrix(x.value.q), k = flatMatrix(x.value.k), v = flatMatrix(x.value.v);
  const n = q.shape[0], m = k.shape[0];
  const [r0, r1] = pair ?? [0, n];
  if (r1 > n) {   // fails: rows past n
    check(pool.local, x.value, { ...base, rows: [r0, r1] });
    fail(ErrorCode.INVALID_ARGUMENT, `rows must be [begin, end] with 0 <= begin < end <= n = ${n}; received [${r0}, ${r1}]`);
  }
  return { inputs: { q, k, v }, o, n, m, r0, r1, ms };
}

// Whether a call's work, query rows × keys each sees × (d_k + d_v), is below pool.inlineBelow
// (rows: options.rows when it is a pair of integers, else all; a bad one fails in attention())
function small(pool, x, o) {
  if (pool.inlineBelow === 0 || x.n < 1 || x.m < 1) return false;
  const cols = (a) => Number(Array.isArray(a) ? a[0]?.length : a?.shape?.[1]);   // NaN for a bad one: not small
  const [r0, r1] = Array.isArray(o.rows) && Number.isInteger(o.rows[0]) && Number.isInteger(o.rows[1]) ? o.rows : [0, x.n];
  return callWork(Math.max(0, r0), Math.min(x.n, r1), x.m, o.causal === true, cols(x.value.q) + cols(x.value.v)) < pool.inlineBelow;
}

async function poolAttention(pool, inputs, options) {
  if (pool.closed) fail(ErrorCode.INVALID_ARGUMENT, 'attention pool: the pool is closed');
  const call = takeCall(pool, inputs, options);
  if (call.output) return { output: call.output, workers: 0 };      // computed here (small)
  const { inputs: qkv, o, n, m, r0, r1, ms } = call;
  if (o.signal?.aborted) throw o.signal.reason;
  const opts = { causal: o.causal, scale: o.scale, mask: flatMask(o.mask, n, m), weights: false };
  const ranges = splitRows(r0, r1, m, o.causal === true, pool.count);
  const parts = await run(pool, ranges, qkv, opts, o.signal ?? undefined, ms);
  const dv = parts[0].shape[1];
  const data = new Float32Array((r1 - r0) * dv);
  for (let i = 0; i < parts.length; i++) data.set(parts[i].data, (ranges[i][0] - r0) * dv);
  return { output: { data, shape: [r1 - r0, dv] }, workers: ranges.length };
}

// The multiply-adds of rows [r0, r1) over m keys: each row's keys seen (causal: min(i + 1, m)) × d
function callWork(r0, r1, m, causal, d) {
  if (r1 <= r0) return 0;
  const tri = (k) => (k * (k + 1)) / 2;   // keys seen by rows [0, k) when k ≤ m
  const keys = causal ? tri(Math.min(r1, m)) - tri(Math.min(r0, m)) + Math.max(0, r1 - Math.max(r0, m)) * m : (r1 - r0) * m;
  return keys * d;
}

async function closePool(pool) {
  if (pool.closed) return;
  pool.closed = true;
  const err = new AttentionError(ErrorCode.INVALID_ARGUMENT, 'attention pool: closed while the call was running');
  for (const slot of pool.slots) for (const p of partsOf(slot)) p.call.fail(err);
  await Promise.all(pool.slots.map((s) => s.w.terminate()));
}

// ----------------------------------------------------------------------------

/**
 * Start `workers` workers (default: one per core, at most 8), each loading the core.
 * options.workerUrl: where the worker script is served, for hosts that move it.
 * options.timeout: the default time limit of each call in ms (and of the workers' start).
 * options.startTimeout: the time limit of the workers' start in ms (default: options.timeout).
 */
export async function createPool(options = {}, platform) {
  const { workerUrl, relaxed, count, timeout, startTimeout, inlineBelow } = await poolOptions(options, platform);
  // in this thread, the same core checks every call first (takeCall)
  const local = await createAttention({ relaxed });
  const init = { relaxed: local.relaxed, module: moduleOf(local) };
  const make = await platform.spawner(workerUrl);
  const pool = { local, count, timeout, inlineBelow, init, make, slots: [], closed: false, nextId: 1 };
  for (let i = 0; i < count; i++) pool.slots.push({ w: null, sent: [], waiting: [], dead: false, busy: false });
  const usesRelaxed = await startAll(pool, startTimeout);
  return Object.freeze({
    /** The number of workers. */
    size: count,
    /** True when the workers run the fused multiply-add build (the default where the engine has relaxed SIMD). */
    relaxed: usesRelaxed,
    /**
     * attention(inputs, options) with `weights: false`, its query rows split across the
     * workers, or computed here when it is small (inlineBelow). Resolves to { output, workers },
     * output bit for bit what createAttention() gives, workers how many computed it (0: here).
     * options.signal (AbortSignal) and options.timeout (ms) bound the call.
     */
    attention(inputs, options) {
      return poolAttention(pool, inputs, options);
    },
    /** Stop the workers; calls in progress are rejected. */
    close() {
      return closePool(pool);
    },
  });
}
