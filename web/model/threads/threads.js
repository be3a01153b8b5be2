// threads.js - the model build on threads (issue 26): one shared WebAssembly.Memory, the threaded
// build (web/wasm/attention-model-mt.wasm, build.sh) instantiated in this thread and in N - 1
// workers over it. The C cuts each heavy step into chunks that write disjoint outputs with the
// sums one thread does (c_src/parallel.h), so every thread count gives the same bits.
//
//   const t = await startThreads(module, n, spawn);   // spawn(workerData) -> a host's worker (below)
//   t.exports, t.memory      the instance of this thread: runtime.js uses it as it would the other build
//   t.count                  threads the C splits its jobs into (this one included)
//   t.drop(lost)             ends the workers of a failed call (threadFailed's e.lost): the jobs are
//                            split among this thread and the workers left
//   t.dispose()              ends every worker
//   await t.caller()         the off-thread caller (below), started on first use
//
// One job at a time: C calls env.attn_parallel(fn, job, threads) (the import below); this thread
// publishes it in a control block (a SharedArrayBuffer of its own, so that it never moves when
// wasm memory grows), wakes the workers, takes its turn (thread 0) and waits for the others.
// Worker i takes the turn of the thread its seat names (control[SEAT + i]) with attn_run_part:
// it takes the job's chunks until none is left (c_src/parallel.h), and says it is done in ACK + i
// (the job's GEN).
// A worker that does not answer within `timeout` ms fails the call with a typed error (a host's
// worker that died cannot say so while this thread waits: its messages need this thread's event
// loop); the error names the workers that did not answer, or that trapped, and runtime.js drops
// them (t.drop): the others take seats 1, 2, … and the model goes on with fewer threads.
//
// Waiting: a thread first spins on Atomics.load for up to SPIN_MS (the next job, or the other
// threads' end of one, mostly come within that: a sleeping thread's wake-up costs more, on a VM
// most), then Atomics.wait where the host allows it (Node's main thread, any worker); a
// browser's main thread may not block, so it spins on, a job taking a few ms.
//
// A host's spawn(workerData) starts a worker running thread-worker.js's serve with workerData =
// { module, memory, control, index, stack } and returns { ready: Promise, terminate() }.
import { ErrorCode, AttentionError } from '../../core/errors.js';
import { missingExports } from '../../core/instantiate.js';
import { WASM_MODEL_FUNCTIONS } from '../../core/exports.js';

// the control block, in Int32 slots: the job (its function, its data, the threads it runs on),
// then per worker i (1 .. MAX_THREADS - 1) the thread it is (SEAT + i, -1 once dropped) and the
// GEN of the last job it finished (ACK + i)
export const GEN = 0, FN = 1, JOB = 2, THREADS = 3, DONE = 4, STOP = 5, FAILED = 6, SEAT = 8, ACK = 24, CONTROL_SLOTS = 40;
const STACK_BYTES = 256 * 1024;        // each worker's wasm stack (the C uses a few KiB)
const INITIAL_PAGES = 16, MAX_PAGES = 65536;   // the build's memory: 1 MiB at first, up to 4 GiB
export const DEFAULT_TIMEOUT = 60000;
const SPIN_MS = 2;

/** Polls control[slot] while it holds `value`, for up to SPIN_MS; true if it changed. */
export function spinWhile(control, slot, value) {
  for (const end = performance.now() + SPIN_MS; ;) {
    for (let i = 0; i < 1024; i++) if (Atomics.load(control, slot) !== value) return true;
    if (performance.now() > end) return false;
  }
}

const canWait = () => {
  // a browser's main thread (a Window) may not Atomics.wait; Node's main thread and workers may
  return typeof globalThis.window === 'undefined' || typeof globalThis.document === 'undefined';
};

/** The imports of the threaded build, for this thread (thread 0 and the waiting) or for a worker. */
export function threadImports(memory, parallel) {
  return { env: { memory, emscripten_notify_memory_growth() {}, attn_parallel: parallel } };
}

export async function startThreads(module, n, spawn, { timeout = DEFAULT_TIMEOUT } = {}) {
  const memory = new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum: MAX_PAGES, shared: true });
  const control = new Int32Array(new SharedArrayBuffer(CONTROL_SLOTS * 4));
  const t = { exports: null, memory, count: 1, workers: [], control, module, spawn, timeout, caller: null };
  const instance = await WebAssembly.instantiate(module, threadImports(memory, (fn, job, threads) => runJob(t, fn, job, threads, timeout)));
  const exports = instance.exports;
  const missing = missingExports({ ...exports, memory }, [...WASM_MODEL_FUNCTIONS, 'stackRestore']);   // the memory is ours
  if (missing.length) throw new AttentionError(ErrorCode.INVALID_ARGUMENT, `the threaded model build lacks ${missing.slice(0, 3).join(', ')}`);
  exports._initialize();
  t.exports = exports;
  try {
    for (let index = 1; index < n; index++) {
      const base = exports.malloc(STACK_BYTES) >>> 0;
      if (!base) throw new AttentionError(ErrorCode.OUT_OF_MEMORY, 'no memory for a thread\'s stack');
      control[SEAT + index] = index;
      const w = spawn({ module, memory, control, index, stack: base + STACK_BYTES });
      t.workers.push(Object.assign(w, { index }));
      await w.ready;
    }
  } catch (e) {
    disposeThreads(t);
    throw e instanceof AttentionError ? e : new AttentionError(ErrorCode.INVALID_ARGUMENT, `a model thread could not start: ${e?.message ?? e}`, { cause: e });
  }
  t.count = exports.attn_set_threads(n);
  t.dispose = () => disposeThreads(t);
  t.drop = (lost) => dropThreads(t, lost);
  t.caller = () => (t.callerStarted ??= startCaller(t));
  return t;
}

// a failed call's workers (their indices) are ended; those left sit in seats 1, 2, …
function dropThreads(t, lost) {
  for (const w of t.workers) if (lost.includes(w.index)) { t.control[SEAT + w.index] = -1; w.terminate(); }
  t.workers = t.workers.filter((w) => !lost.includes(w.index));
  t.workers.forEach((w, seat) => { t.control[SEAT + w.index] = seat + 1; });
  Atomics.store(t.control, FAILED, 0);
  t.count = t.exports.attn_set_threads(t.workers.length + 1);
}

function disposeThreads(t) {
  Atomics.store(t.control, STOP, 1);
  Atomics.add(t.control, GEN, 1);
  Atomics.notify(t.control, GEN);
  for (const w of t.workers) w.terminate();
  t.workers = [];
  t.callerStarted?.then((c) => c.terminate(), () => {});
}

// ------------------------------------------------------------------------------------------------
// The off-thread caller (issue 37: a page's main thread never held for a whole forward): one more
// worker, with an instance of its own over the shared memory and a stack of its own, that makes
// one call into the build at a time (an export by name, numbers in, a number out) and takes
// thread 0's turn in the jobs that call publishes, as this thread would. This thread makes no call
// while one is under way (runtime.js refuses them), so the C's memory has one writer at a time.
//
//   const c = await t.caller();
//   const status = await c.call('attn_llama_forward', [ptr, …]);   // rejects with a typed error
async function startCaller(t) {
  const base = t.exports.malloc(STACK_BYTES) >>> 0;
  if (!base) throw new AttentionError(ErrorCode.OUT_OF_MEMORY, 'no memory for the caller thread\'s stack');
  const w = t.spawn({ module: t.module, memory: t.memory, control: t.control, index: 0, stack: base + STACK_BYTES, caller: true, timeout: t.timeout });
  try {
    await w.ready;
  } catch (e) {
    w.terminate();
    throw new AttentionError(ErrorCode.THREAD_FAILED, `the caller thread could not start: ${e?.message ?? e}`, { cause: e });
  }
  const pending = new Map();
  let next = 0;
  w.listen(({ id, value, error }) => {
    const p = pending.get(id);
    pending.delete(id);
    if (pending.size === 0) w.hold(false);
    if (!error) return p.resolve(value);
    // as the same call here would have thrown: a typed error as such, a trap as an Error (runtime.js types it)
    const e = Object.values(ErrorCode).includes(error.code) ? new AttentionError(error.code, error.message) : new Error(error.message);
    p.reject(error.lost ? Object.assign(e, { thread: true, lost: error.lost }) : e);
  });
  return {
    call: (name, args) => new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      w.hold(true);   // Node: a process awaiting the answer stays alive
      w.post({ id, name, args, workers: t.workers.map((x) => x.index) });
    }),
    terminate: () => {
      w.terminate();
      for (const p of pending.values()) p.reject(new AttentionError(ErrorCode.INVALID_ARGUMENT, 'the model was disposed during the call'));
      pending.clear();
    },
  };
}

// env.attn_parallel: thread 0 here (or in the caller), threads 1 .. threads - 1 in the workers,
// back when all are done. t: { exports, control, workers: [{ index }] } of the thread that calls.
export function runJob(t, fn, job, threads, timeout) {
  const c = t.control;
  c[FN] = fn; c[JOB] = job; c[THREADS] = threads;
  Atomics.store(c, DONE, 0);
  const gen = Atomics.add(c, GEN, 1) + 1;
  Atomics.notify(c, GEN);
  t.exports.attn_run_part(fn, job, 0, threads);
  waitOthers(t, gen, timeout);
}

function waitOthers(t, gen, timeout) {
  const c = t.control, others = t.workers.length, wait = canWait(), start = Date.now();
  for (let done; (done = Atomics.load(c, DONE)) < others;) {
    if (spinWhile(c, DONE, done)) continue;
    if (wait) Atomics.wait(c, DONE, done, 20);
    if (Date.now() - start > timeout) {
      const lost = t.workers.filter((w) => Atomics.load(c, ACK + w.index) !== gen).map((w) => w.index);
      throw threadFailed(t, lost, `${lost.length} of ${others} model threads did not finish a job within ${timeout} ms`);
    }
  }
  const failed = Atomics.load(c, FAILED);
  if (failed) throw threadFailed(t, [failed], `model thread ${failed} failed in a job (a trap in the wasm)`);
}

// runtime.js drops e.lost (t.drop) when the error comes through it
function threadFailed(t, lost, what) {
  const left = t.workers.length - lost.length + 1;
  const e = new AttentionError(ErrorCode.THREAD_FAILED, `${what}; the model goes on in ${left === 1 ? 'one thread' : `${left} threads`}`);
  return Object.assign(e, { thread: true, lost });
}
