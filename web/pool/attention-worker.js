// attention-worker.js - one worker of createAttentionPool (attention-pool.js). Runs as a
// Web Worker (module) in browsers and as a worker_threads Worker in Node.
//
// Protocol (structured clone, no SharedArrayBuffer):
//   -> { init: { relaxed } }     first: load the core (createAttention({ relaxed }))
//   -> { id, inputs, options }   an attention() call, options.rows = this worker's rows
//   <- { id, data, shape }       its output rows (data's buffer transferred when its own)
//   <- { id, error: { code, message } }
//   <- { ready: true } once, or { ready: false, error } when the core cannot load
// Calls may come right behind init (a replacement worker gets the calls that were queued on the
// one it replaces): they wait for the core, in order.
import { createAttention } from '../core/attention.js';

const inBrowser = typeof self === 'object' && typeof self.postMessage === 'function' && typeof WorkerGlobalScope === 'function';
let post, listen;
if (inBrowser) {
  post = (msg, transfer) => self.postMessage(msg, transfer ?? []);
  listen = (fn) => { self.onmessage = (e) => fn(e.data); };
} else {
  // the module name is built so that bundlers for the browser do not try to resolve it
  const { parentPort } = await import(/* @vite-ignore */ ['node', 'worker_threads'].join(':'));
  post = (msg, transfer) => parentPort.postMessage(msg, transfer ?? []);
  listen = (fn) => parentPort.on('message', fn);
}

// an error as the message the pool turns back into an AttentionError
const failure = (e) => ({ code: e?.code ?? 'INVALID_ARGUMENT', message: String(e?.message ?? e) });

let loading = null, attn = null;
listen(async (msg) => {
  if (msg.init) {
    loading = createAttention({ relaxed: msg.init.relaxed === true });
    try {
      attn = await loading;
      post({ ready: true, relaxed: attn.relaxed });
    } catch (e) {
      post({ ready: false, error: failure(e) });
    }
    return;
  }
  const { id, inputs, options } = msg;
  try {
    const core = attn ?? await loading;
    if (!core) throw new Error('the worker got a call before init');
    const { output } = core.attention(inputs, options);
    // a small output is a view of a buffer shared with other results: sent as a copy of its own
    const data = output.data.byteLength === output.data.buffer.byteLength ? output.data : output.data.slice();
    post({ id, data, shape: output.shape }, [data.buffer]);
  } catch (e) {
    post({ id, error: failure(e) });
  }
});
