// pool-workers.js - the pool's workers (pool.js): their start-up, the queue of parts each one
// holds, and their faults (a worker that fails or exits, one that is replaced because it holds a
// part whose call has ended). Part of the pool; its public API is attention-pool*.js's.
import { AttentionError, ErrorCode } from '../core/errors.js';

const noop = () => {};
const toError = (e) => (e instanceof AttentionError ? e
  : new AttentionError(typeof e?.code === 'string' && Object.hasOwn(ErrorCode, e.code) ? e.code : ErrorCode.INVALID_ARGUMENT, String(e?.message ?? e)));
export const timeoutError = (what, ms) => new DOMException(`${what} did not finish within ${ms} ms (timeout)`, 'TimeoutError');

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
export async function startAll(pool, ms) {
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
export function pump(slot) {
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

export const partsOf = (slot) => { const parts = [...slot.sent, ...slot.waiting]; slot.sent = []; slot.waiting = []; return parts; };

// the slot's worker failed or exited: its calls fail, later calls too
function lost(slot, err) {
  slot.dead = true;
  try { Promise.resolve(slot.w.terminate()).catch(noop); } catch { /* gone already */ }
  for (const p of partsOf(slot)) p.call.fail(err);
}

// Terminate the slot's worker (it holds a part whose call has ended) and start another, which
// gets the other parts it held, then those waiting.
export function replace(pool, slot) {
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
