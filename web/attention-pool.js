// attention-pool.js - attention on several cores: query rows split across workers, each with
// its own copy of the core, K and V. No SharedArrayBuffer, so no COOP/COEP headers needed.
//
//   import { createAttentionPool } from 'attnmap/pool';
//   const pool = await createAttentionPool();               // one worker per core, at most 8
//   const { output } = await pool.attention({ q, k, v }, { causal: true });
//   await pool.close();
//
// Each worker computes a contiguous range of query rows with attention(..., { weights: false,
// rows }), so the output is bit for bit the one createAttention() gives. Rows are split so that
// each worker gets the same work (with causal, later rows see more keys). The inputs are
// copied to every worker (structured clone): worth it from a few hundred rows on.
import { AttentionError, ErrorCode } from './attention.js';

const MAX_WORKERS = 8;
const fail = (code, message) => { throw new AttentionError(code, message); };
const toError = (e) => (e instanceof AttentionError ? e : new AttentionError(e?.code in ErrorCode ? e.code : ErrorCode.INVALID_ARGUMENT, String(e?.message ?? e)));

function defaultWorkers() {
  const cores = (typeof navigator === 'object' && navigator.hardwareConcurrency) || globalThis.process?.env?.ATTNMAP_CORES || 2;
  return Math.max(1, Math.min(MAX_WORKERS, Number(cores) || 2));
}

// A worker, browser or Node, behind one small interface. Node is asked first: libraries may
// install a global Worker there (onnxruntime-web does) that is not a Web Worker.
const isNode = typeof globalThis.process?.versions?.node === 'string' && typeof window === 'undefined';

async function spawn(url) {
  if (!isNode) {
    const w = url ? new Worker(url, { type: 'module' }) : new Worker(new URL('./attention-worker.js', import.meta.url), { type: 'module' });
    return {
      post: (msg) => w.postMessage(msg),
      onMessage: (fn) => { w.onmessage = (e) => fn(e.data); },
      onError: (fn) => { w.onerror = (e) => { e.preventDefault?.(); fn(new Error(e.message || 'the worker script failed to load')); }; },
      busy: () => {}, idle: () => {},
      terminate: () => w.terminate(),
    };
  }
  const { Worker: NodeWorker } = await import(/* @vite-ignore */ ['node', 'worker_threads'].join(':'));
  // execArgv []: the worker needs none of the main script's flags (-e, --input-type, loaders),
  // and V8's flags (such as --experimental-wasm-relaxed-simd) apply to the whole process anyway
  const w = new NodeWorker(url ?? new URL('./attention-worker.js', import.meta.url), { execArgv: [] });
  return {
    post: (msg) => w.postMessage(msg),
    onMessage: (fn) => w.on('message', fn),
    onError: (fn) => { w.on('error', fn); w.on('exit', (code) => fn(new Error(`the worker exited (code ${code})`))); },
    busy: () => w.ref(), idle: () => w.unref(),
    terminate: () => w.terminate(),
  };
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

const rowsOf = (x) => (Array.isArray(x) ? x.length : Array.isArray(x?.shape) ? x.shape[0] : undefined);

/**
 * Start `workers` workers (default: one per core, at most 8), each loading the core.
 * options.workerUrl: where attention-worker.js is served, for hosts that move it.
 */
export async function createAttentionPool(options = {}) {
  if (options === null || typeof options !== 'object') {
    fail(ErrorCode.INVALID_ARGUMENT, `createAttentionPool: options must be an object like { workers: 2 }; received ${String(options)}`);
  }
  const { workers: count = defaultWorkers(), workerUrl, relaxed = false } = options;
  if (typeof relaxed !== 'boolean') fail(ErrorCode.INVALID_ARGUMENT, `createAttentionPool: relaxed must be true or false; received ${String(relaxed)}`);
  if (!Number.isInteger(count) || count < 1 || count > 64) {
    fail(ErrorCode.INVALID_ARGUMENT, `createAttentionPool: workers must be an integer from 1 to 64; received ${String(count)}`);
  }
  const pending = new Map();   // id -> { resolve, reject, worker }
  let nextId = 1, closed = false;

  const ready = [];
  const pool = [];
  for (let i = 0; i < count; i++) {
    let w;
    try {
      w = await spawn(workerUrl);
    } catch (e) {
      for (const p of pool) p.terminate();
      throw new AttentionError(ErrorCode.INVALID_ARGUMENT, `createAttentionPool: cannot start a worker: ${e?.message ?? e}`);
    }
    const state = { w, inFlight: 0 };
    ready.push(new Promise((resolve, reject) => {
      w.onMessage((msg) => {
        if ('ready' in msg) { if (msg.ready) resolve(msg.relaxed); else reject(toError(msg.error)); return; }
        const p = pending.get(msg.id);
        if (!p) return;
        pending.delete(msg.id);
        if (--state.inFlight === 0) w.idle();
        if (msg.error) p.reject(toError(msg.error));
        else p.resolve({ data: msg.data, shape: msg.shape });
      });
      w.onError((e) => {
        const err = new AttentionError(ErrorCode.INVALID_ARGUMENT, `attention pool: a worker failed: ${e?.message ?? e}`);
        reject(err);
        for (const [id, p] of pending) if (p.state === state) { pending.delete(id); p.reject(err); }
        state.dead = true;
      });
    }));
    pool.push(state);
    w.post({ init: { relaxed } });
  }
  let usesRelaxed;
  try {
    usesRelaxed = (await Promise.all(ready)).every(Boolean);
  } catch (e) {
    for (const s of pool) s.w.terminate();
    throw e;
  }
  // in Node an idle pool does not keep the process alive (a call in flight does)
  for (const s of pool) s.w.idle();

  function send(state, inputs, opts) {
    return new Promise((resolve, reject) => {
      if (state.dead) { reject(new AttentionError(ErrorCode.INVALID_ARGUMENT, 'attention pool: a worker has failed; create a new pool')); return; }
      const id = nextId++;
      pending.set(id, { resolve, reject, state });
      try {
        state.w.post({ id, inputs, options: opts });
      } catch (e) {   // DataCloneError: a function, a Proxy, ... among the inputs
        pending.delete(id);
        reject(new AttentionError(ErrorCode.INVALID_ARGUMENT, `attention pool: the inputs cannot be sent to a worker (${e?.message ?? e}); pass number[][] or { data: Float32Array, shape }`));
        return;
      }
      if (state.inFlight++ === 0) state.w.busy();
    });
  }

  let turn = 0;   // which worker takes a call that is not split
  return Object.freeze({
    /** The number of workers. */
    size: count,
    /** True when the workers run the fused multiply-add build ({ relaxed: true } where the engine has it). */
    relaxed: usesRelaxed,
    /**
     * attention(inputs, options) with `weights: false`, its query rows split across the
     * workers. Resolves to { output }, bit for bit what createAttention() gives.
     */
    async attention(inputs, options) {
      if (closed) fail(ErrorCode.INVALID_ARGUMENT, 'attention pool: the pool is closed');
      const plain = options === undefined || options === null ||
        (typeof options === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(options)));
      if (plain && options?.weights === true) {
        fail(ErrorCode.INVALID_ARGUMENT, 'attention pool: returns the output only; leave weights out or pass { weights: false } (the n×m weights need createAttention().attention)');
      }
      const n = rowsOf(inputs?.q), m = rowsOf(inputs?.k);
      const opts = plain ? { ...options, weights: false } : options;
      const [r0, r1] = plain && Array.isArray(options?.rows) ? options.rows : [0, n];
      const splittable = plain && Number.isInteger(n) && Number.isInteger(m) && m > 0 &&
        Number.isInteger(r0) && Number.isInteger(r1) && 0 <= r0 && r0 < r1 && r1 <= n;
      if (!splittable) {
        // let one worker check the arguments: its error is attention()'s own
        const part = await send(pool[turn++ % count], inputs, opts);
        return { output: part };
      }
      const ranges = splitRows(r0, r1, m, options?.causal === true, count);
      const parts = await Promise.all(ranges.map((rows, i) => send(pool[i], inputs, { ...opts, rows })));
      const dv = parts[0].shape[1];
      const data = new Float32Array((r1 - r0) * dv);
      for (let i = 0; i < parts.length; i++) data.set(parts[i].data, (ranges[i][0] - r0) * dv);
      return { output: { data, shape: [r1 - r0, dv] } };
    },
    /** Stop the workers; calls in progress are rejected. */
    async close() {
      if (closed) return;
      closed = true;
      const err = new AttentionError(ErrorCode.INVALID_ARGUMENT, 'attention pool: closed while the call was running');
      for (const [id, p] of pending) { pending.delete(id); p.reject(err); }
      await Promise.all(pool.map((s) => s.w.terminate()));
    },
  });
}
