// Types for attnmap/pool/worker: a worker script of createAttentionPool. It exports nothing; it
// is named only so that bundlers without worker support (esbuild, Rollup) can build it as an
// entry of its own, written as attention-worker.js beside the bundle that imports attnmap/pool.
export {};
