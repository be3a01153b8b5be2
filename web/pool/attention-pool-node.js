// attention-pool-node.js - createAttentionPool for Node (worker_threads); the "./pool" export
// under the "node" condition. Browsers get attention-pool.js. The pool: pool.js.
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { createPool, splitRows, INLINE_BELOW } from './pool.js';

export { splitRows, INLINE_BELOW };

const node = {
  cores: async () => os.availableParallelism?.() ?? os.cpus().length,
  spawner: async (url) => (onMessage, onError) => {
    const where = url ?? new URL('./attention-worker-node.js', import.meta.url);
    // execArgv []: the worker needs none of the main script's flags (-e, --input-type, loaders),
    // and V8's flags (such as --experimental-wasm-relaxed-simd) apply to the whole process anyway
    const w = new Worker(where, { execArgv: [] });
    // an error before the worker's first message ('online' comes before its module loads) is the
    // script failing to load: not found, or it threw while loading
    let spoke = false;
    w.on('message', (msg) => { spoke = true; onMessage(msg); });
    w.on('error', (e) => onError(spoke ? e : new Error(`the worker script failed to load (${String(where)}): ${e?.message ?? e}`)));
    w.on('exit', (code) => onError(new Error(`the worker exited (code ${code})`)));
    // a Node worker keeps the process alive only while it holds parts (busy)
    return { post: (msg) => w.postMessage(msg), busy: () => w.ref(), idle: () => w.unref(), terminate: () => w.terminate() };
  },
};

/**
 * Start `workers` workers (default: one per core, at most 8), each running the core.
 * options.workerUrl: where a worker script is, for hosts that move it (a file URL or path).
 * options.timeout: the default time limit of each call in ms (and of the workers' start).
 * options.startTimeout: the time limit of the workers' start in ms (default: options.timeout).
 */
export function createAttentionPool(options) {
  return createPool(options, node);
}
