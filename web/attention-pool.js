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
import { AttentionError, ErrorCode, createAttention } from './attention.js';

const MAX_WORKERS = 8;
const fail = (code, message) => { throw new AttentionError(code, message); };
const toError = (e) => (e instanceof AttentionError ? e
  : new AttentionError(typeof e?.code === 'string' && Object.hasOwn(ErrorCode, e.code) ? e.code : ErrorCode.INVALID_ARGUMENT, String(e?.message ?? e)));

async function defaultWorkers() {
  let cores = typeof navigator === 'object' ? navigator.hardwareConcurrency : undefined;
  if (!cores && isNode) {
    const os = await import(/* @vite-ignore */ ['node', 'os'].join(':'));
    cores = os.availableParallelism?.() ?? os.cpus().length;
  }
  return Math.max(1, Math.min(MAX_WORKERS, Number.isInteger(cores) ? cores : 2));
}

const isPlain = (o) => o !== null && typeof o === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(o));

// A checked matrix argument as { data: Float32Array, shape }, compact (a view of a larger buffer
// would send the whole buffer to every worker), holding the float32 values the core would read.
function flatMatrix(x) {
  if (Array.isArray(x)) {
    const rows = x.length, cols = x[0].length, data = new Float32Array(rows * cols);
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) data[i * cols + j] = x[i][j];
    return { data, shape: [rows, cols] };
  }
  const { data, shape } = x;
  return { data: data instanceof Float32Array ? data.slice() : Float32Array.from(data), shape: [shape[0], shape[1]] };
}

function flatMask(mask, n, m) {
  if (mask === undefined || mask === null) return undefined;
  if (Array.isArray(mask)) {
    const data = new Uint8Array(n * m);
    for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) data[i * m + j] = mask[i][j] ? 1 : 0;
    return { data, shape: [n, m] };
  }
  return { data: mask.data.slice(), shape: [n, m] };
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


/**
 * Start `workers` workers (default: one per core, at most 8), each loading the core.
 * options.workerUrl: where attention-worker.js is served, for hosts that move it.
 */
export async function createAttentionPool(options = {}) {
  if (options === null || typeof options !== 'object') {
    fail(ErrorCode.INVALID_ARGUMENT, `createAttentionPool: options must be an object like { workers: 2 }; received ${String(options)}`);
  }
  const { workers: count = await defaultWorkers(), workerUrl, relaxed = true } = options;
  if (typeof relaxed !== 'boolean') fail(ErrorCode.INVALID_ARGUMENT, `createAttentionPool: relaxed must be true or false; received ${String(relaxed)}`);
  if (!Number.isInteger(count) || count < 1 || count > 64) {
    fail(ErrorCode.INVALID_ARGUMENT, `createAttentionPool: workers must be an integer from 1 to 64; received ${String(count)}`);
  }
  // in this thread, the same core checks every call first (one query row computed), so that a
  // bad call fails as attention() fails, whatever the inputs are made of
  const local = await createAttention({ relaxed });
  const pending = new Map();   // id -> { resolve, reject, state }
  let nextId = 1, closed = false;

  const ready = [];
  const pool = [];
  for (let i = 0; i < count; i++) {
    let w;
    try {
      w = await spawn(workerUrl);
    } catch (e) {
      for (const st of pool) st.w.terminate();
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
      } catch (e) {   // DataCloneError: not expected (the inputs are plain typed arrays by now), kept as a net
        pending.delete(id);
        reject(new AttentionError(ErrorCode.INVALID_ARGUMENT, `attention pool: the inputs cannot be sent to a worker (${e?.message ?? e}); pass number[][] or { data: Float32Array, shape }`));
        return;
      }
      if (state.inFlight++ === 0) state.w.busy();
    });
  }

  return Object.freeze({
    /** The number of workers. */
    size: count,
    /** True when the workers run the fused multiply-add build (the default where the engine has relaxed SIMD). */
    relaxed: usesRelaxed,
    /**
     * attention(inputs, options) with `weights: false`, its query rows split across the
     * workers. Resolves to { output }, bit for bit what createAttention() gives.
     */
    async attention(inputs, options) {
      if (closed) fail(ErrorCode.INVALID_ARGUMENT, 'attention pool: the pool is closed');
      // options read once, as attention() reads them; anything but a plain object fails there
      if (options !== undefined && options !== null && !isPlain(options)) local.attention(inputs, options);
      const o = options === undefined || options === null ? {} : { ...options };
      if (o.weights === true) {
        fail(ErrorCode.INVALID_ARGUMENT, 'attention pool: returns the output only; leave weights out or pass { weights: false } (the n×m weights need createAttention().attention)');
      }
      const wanted = o.rows;
      const pair = Array.isArray(wanted) && wanted.length === 2 && Number.isInteger(wanted[0]) && Number.isInteger(wanted[1]) &&
        wanted[0] >= 0 && wanted[0] < wanted[1] ? [wanted[0], wanted[1]] : null;
      // the check: attention() itself on the first requested row (a bad rows value fails as given)
      try {
        local.attention(inputs, { ...o, weights: false, rows: pair ? [pair[0], pair[0] + 1] : wanted ?? [0, 1] });
      } catch (e) {
        if (pair && e.code === ErrorCode.INVALID_ARGUMENT && /^rows /.test(e.message)) local.attention(inputs, { ...o, weights: false, rows: pair });
        throw e;
      }
      // checked: now the same numbers as plain typed arrays, which structured clone copies as is
      const q = flatMatrix(inputs.q), k = flatMatrix(inputs.k), v = flatMatrix(inputs.v);
      const n = q.shape[0], m = k.shape[0];
      const [r0, r1] = pair ?? [0, n];
      if (r1 > n) local.attention(inputs, { ...o, weights: false, rows: [r0, r1] });   // fails: rows past n
      const opts = { causal: o.causal, scale: o.scale, mask: flatMask(o.mask, n, m), weights: false };
      const ranges = splitRows(r0, r1, m, o.causal === true, count);
      const parts = await Promise.all(ranges.map((rows, i) => send(pool[i], { q, k, v }, { ...opts, rows })));
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
