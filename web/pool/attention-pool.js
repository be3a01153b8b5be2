// attention-pool.js - createAttentionPool for browsers (and Deno, Bun: hosts with module Web
// Workers); the "./pool" export's default. Node gets attention-pool-node.js. The pool: pool.js.
//
//   import { createAttentionPool } from 'attnmap/pool';
//   const pool = await createAttentionPool();
//   const { output } = await pool.attention({ q, k, v }, { causal: true });
//
// The worker is written `new Worker(new URL('./attention-worker.js', import.meta.url), ...)` in
// one expression: that is the form Vite and webpack find, bundle as a worker of its own and
// rename. esbuild and Rollup leave it as it is: their users build attnmap/pool/worker as a second
// entry named attention-worker.js beside the bundle (README, "The pool in a bundle").
import { createPool, splitRows, INLINE_BELOW } from './pool.js';

export { splitRows, INLINE_BELOW };

const noop = () => {};

// Where the default worker was looked for, for messages only: beside this module, or beside the
// bundle that holds it (esbuild, Rollup). Not `new URL(..., import.meta.url)` a second time: Vite
// would copy the unbundled worker as an asset, webpack warn of a "critical dependency".
const defaultUrl = () => String(import.meta.url).replace(/[^/?#]*([?#].*)?$/, 'attention-worker.js');

const browser = {
  cores: async () => (typeof navigator === 'object' ? navigator.hardwareConcurrency : undefined),
  spawner: async (url) => (onMessage, onError) => {
    const w = url ? new Worker(url, { type: 'module' }) : new Worker(new URL('./attention-worker.js', import.meta.url), { type: 'module' });
    w.onmessage = (e) => onMessage(e.data);
    w.onerror = (e) => {
      e.preventDefault?.();
      onError(new Error(e.message || `the worker script failed to load (${String(url ?? defaultUrl())})`));
    };
    return { post: (msg) => w.postMessage(msg), busy: noop, idle: noop, terminate: () => w.terminate() };
  },
};

/**
 * Start `workers` workers (default: one per core, at most 8), each running the core.
 * options.workerUrl: where attention-worker.js is served, for hosts that move it.
 * options.timeout: the default time limit of each call in ms (and of the workers' start).
 * options.startTimeout: the time limit of the workers' start in ms (default: options.timeout).
 */
export function createAttentionPool(options) {
  return createPool(options, browser);
}
