// attention-worker.js - one worker of createAttentionPool (attention-pool.js). Runs as a
// Web Worker (module) in browsers and as a worker_threads Worker in Node.
//
// Protocol (structured clone, no SharedArrayBuffer):
//   -> { id, inputs, options }   an attention() call, options.rows = this worker's rows
//   <- { id, data, shape }       its output rows (data's buffer is transferred)
//   <- { id, error: { code, message } }
//   <- { ready: true } once, or { ready: false, error } when the core cannot load
import { createAttention } from './attention.js';

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

let attn = null;
try {
  attn = await createAttention();
} catch (e) {
  post({ ready: false, error: { code: e?.code ?? 'INVALID_ARGUMENT', message: String(e?.message ?? e) } });
}

if (attn) {
  listen(({ id, inputs, options }) => {
    try {
      const { output } = attn.attention(inputs, options);
      post({ id, data: output.data, shape: output.shape }, [output.data.buffer]);
    } catch (e) {
      post({ id, error: { code: e?.code ?? 'INVALID_ARGUMENT', message: String(e?.message ?? e) } });
    }
  });
  post({ ready: true });
}
