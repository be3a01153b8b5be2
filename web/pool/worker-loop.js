// worker-loop.js - what a pool worker does, for any host: attention-worker.js (a Web Worker) and
// attention-worker-node.js (worker_threads) give it their post and listen.
//
// Protocol (structured clone, no SharedArrayBuffer):
//   -> { init: { module, relaxed } }   first: the core's WebAssembly.Module, from the pool's thread
//   -> { id, inputs, options }         an attention() call, options.rows = this worker's rows
//   <- { id, data, shape }             its output rows (data's buffer transferred when its own)
//   <- { id, error: { code, message } }
//   <- { ready: true, relaxed } once, or { ready: false, error } when the core cannot start
// Calls may come right behind init (a replacement worker gets the calls that were queued on the
// one it replaces): they wait for the core, in order. The worker carries no wasm of its own.
import { instantiate } from '../core/instantiate.js';

// an error as the message the pool turns back into an AttentionError
const failure = (e) => ({ code: e?.code ?? 'INVALID_ARGUMENT', message: String(e?.message ?? e) });

function start(init) {
  if (!(init.module instanceof WebAssembly.Module)) {
    return Promise.reject(new Error('the pool sent no WebAssembly.Module (a pool and a worker of different versions?)'));
  }
  return instantiate(init.module, init.relaxed === true);
}

export function serve(post, listen) {
  let loading = null, attn = null;
  listen(async (msg) => {
    if (msg.init) {
      loading = start(msg.init);
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
}
