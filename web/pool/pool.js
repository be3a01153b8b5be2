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
//
// The parts: pool-args.js reads a call's arguments once; pool-workers.js starts the workers,
// keeps their queues and replaces a faulty one; this file holds the pool's options, the calls and
// createPool.
import { createAttention } from '../core/attention.js';
import { AttentionError, ErrorCode, describe, fail } from '../core/errors.js';
import { moduleOf } from '../core/instantiate.js';
import { CALL_OPTIONS, readError, timeoutArg, takeInputs, takeOptions, flatMatrix, flatMask } from './pool-args.js';
import { timeoutError, startAll, pump, replace, partsOf } from './pool-workers.js';

const MAX_WORKERS = 8;
// Multiply-adds of a call (rows × keys seen × (d_k + d_v)) below which this thread computes it:
// measured by `node bench/bench.js` (the pool section's crossover, docs/BENCHMARKS.md).
export const INLINE_BELOW = 24_000_000;
const POOL_OPTIONS = ['workers', 'workerUrl', 'relaxed', 'timeout', 'startTimeout', 'inlineBelow'];
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
