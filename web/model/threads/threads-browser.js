// threads-browser.js - what threads.js needs in a browser, registered by model.js where the page
// is cross-origin isolated (crossOriginIsolated: COOP and COEP headers; elsewhere a shared memory
// cannot be sent to a worker, and the model runs on one thread): spawn, a module Web Worker
// running thread-worker-browser.js, and the threaded build, fetched from web/wasm/.
// Both URLs start from web/: two folders up from this module (web/model/threads/), or one up from
// web/dist/ for the classic bundle (web/dist/attnmap-model.js, which has no import.meta: the
// script's own URL, read while it runs), so they resolve alike from either.
const WORKER = 'model/threads/thread-worker-browser.js';
const BUILD = 'wasm/attention-model-mt.wasm';
const SCRIPT = globalThis.document?.currentScript?.src;
const BASE = import.meta.url ? new URL('../../', import.meta.url).href : SCRIPT ? new URL('../', SCRIPT).href : undefined;

export function spawnBrowser(workerData) {
  const w = new Worker(new URL(WORKER, BASE), { type: 'module' });
  const ready = new Promise((resolve, reject) => {
    w.onmessage = () => resolve();
    w.onerror = (e) => { e.preventDefault?.(); reject(new Error(`the model thread did not start (${e.message || WORKER})`)); };
  });
  w.postMessage(workerData);
  // the caller's calls and answers after 'up' (threads.js)
  const listen = (fn) => ready.then(() => { w.onmessage = (e) => fn(e.data); });
  return { ready, terminate: () => w.terminate(), post: (m) => w.postMessage(m), listen, hold() {} };
}

/** The threaded build's bytes (runtime.js compiles them once). */
export async function fetchBuild() {
  const url = new URL(BUILD, BASE);
  const r = await fetch(url);
  if (!r.ok) throw new Error(`fetching the threaded build failed: HTTP ${r.status} for ${url}`);
  return r.arrayBuffer();
}

/** Threads a browser may run: where crossOriginIsolated. */
export const canThread = () => globalThis.crossOriginIsolated === true && typeof Worker === 'function' && typeof BASE === 'string';
