// attention-worker.js - a worker of createAttentionPool in browsers (a module Web Worker), also
// the "./pool/worker" export for bundlers that need it named (esbuild, Rollup: see the README).
// What it does: worker-loop.js.
import { serve } from './worker-loop.js';

if (typeof WorkerGlobalScope !== 'function' || !(self instanceof WorkerGlobalScope)) {
  throw new Error('attnmap/pool/worker is the pool\'s worker script, started by createAttentionPool: import attnmap/pool instead');
}

serve((msg, transfer) => self.postMessage(msg, transfer ?? []), (fn) => { self.onmessage = (e) => fn(e.data); });
