// thread-worker.js - what a model thread does (threads.js), for any host: its entry gives it the
// workerData and a way to say it is up. It instantiates the threaded build over the shared
// memory (the data is already there: the first instance wrote it), moves its wasm stack to its
// own slice of that memory, then takes its seat's turn at each job the control block publishes
// until told to stop (or dropped: seat -1).
import { GEN, FN, JOB, THREADS, DONE, STOP, FAILED, SEAT, ACK, threadImports, spinWhile, runJob } from './threads.js';

export function serve({ module, memory, control, index, stack }, up) {
  const nested = () => { throw new Error('a model thread was asked to split its own turn'); };
  const { exports } = new WebAssembly.Instance(module, threadImports(memory, nested));
  exports.stackRestore(stack);
  let gen = Atomics.load(control, GEN);   // before saying so: a job published after up() is one to run
  up();
  for (;;) {
    // the next job mostly comes within a ms (the C's serial steps between two products): spin a
    // little before sleeping (threads.js)
    if (!spinWhile(control, GEN, gen)) Atomics.wait(control, GEN, gen);
    gen = Atomics.load(control, GEN);
    if (Atomics.load(control, STOP)) return;
    const threads = control[THREADS], thread = control[SEAT + index];
    if (thread < 0) return;
    if (thread >= threads) continue;
    try {
      exports.attn_run_part(control[FN], control[JOB], thread, threads);
    } catch {
      Atomics.store(control, FAILED, index);   // a trap: threads.js fails the call at once
    }
    if (Atomics.load(control, SEAT + index) < 0) return;   // dropped while it ran (too late): not a thread of the next job
    Atomics.store(control, ACK + index, gen);
    Atomics.add(control, DONE, 1);
    Atomics.notify(control, DONE);
  }
}

/**
 * The caller (threads.js's startCaller): each message { id, name, args, workers } is one call of
 * the export `name`, thread 0 of the jobs it publishes (the workers in seats `workers`); the
 * answer { id, value } or { id, error: { message, code, lost } }. It never takes a seat.
 */
export function serveCaller({ module, memory, control, stack, timeout }, up, listen, post) {
  const t = { exports: null, control, workers: [] };
  const { exports } = new WebAssembly.Instance(module, threadImports(memory, (fn, job, threads) => runJob(t, fn, job, threads, timeout)));
  t.exports = exports;
  exports.stackRestore(stack);
  listen(({ id, name, args, workers }) => {
    t.workers = workers.map((index) => ({ index }));
    try {
      post({ id, value: exports[name](...args) });
    } catch (e) {
      exports.stackRestore(stack);   // an exception through wasm frames leaves their stack
      post({ id, error: { message: String(e?.message ?? e), code: e?.code, lost: e?.lost } });
    }
  });
  up();
}
