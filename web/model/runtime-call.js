// runtime-call.js - how the runtime (runtime.js) and heads.js make a call into the model build:
// here, its value at once, or by the threads' caller worker (threads.js), a promise, so that this
// thread (a page's main thread) is free while a long forward or map runs (issue 37). rt.offCall
// is true the while: the runtime refuses every other call until it ends.
//
//   return offThread(rt, (call) => settle(() => call('attn_heads_map', [...]), (status) => read(status), onError, cleanup));

export const callHere = (rt) => (name, args) => rt.exports[name](...args);

/** fn(call) with the caller's call (here's where the runtime has no threads); rt.offCall until it settles. */
export async function offThread(rt, fn) {
  rt.offCall = true;
  try {
    const call = rt.threads ? (await rt.threads.caller()).call : callHere(rt);
    return await fn(call);
  } finally {
    rt.offCall = false;
  }
}

// start() makes the call (a value or a promise); done(value) reads what it wrote; onError and
// cleanup run as a catch and a finally around both would, whichever way the call went
export function settle(start, done, onError, cleanup) {
  let v;
  try {
    v = start();
  } catch (e) {
    onError(e);
    cleanup();
    throw e;
  }
  if (typeof v?.then !== 'function') {
    try {
      return done(v);
    } catch (e) {
      onError(e);
      throw e;
    } finally {
      cleanup();
    }
  }
  return v.then(done).catch((e) => { onError(e); throw e; }).finally(cleanup);
}
