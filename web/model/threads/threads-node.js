// threads-node.js - what threads.js needs in Node: the threaded build (web/wasm/attention-model-mt,
// in base64) and spawn, a worker_threads Worker running thread-worker-node.js, unref'd (a model
// left undisposed does not keep the process alive).
import { Worker } from 'node:worker_threads';
import os from 'node:os';
import build from '../../wasm/attention-model-mt-wasm.js';

export { build };

export function spawnNode(workerData) {
  const w = new Worker(new URL('./thread-worker-node.js', import.meta.url), { workerData, execArgv: [] });
  const ready = new Promise((resolve, reject) => {
    w.once('message', () => { w.unref(); resolve(); });
    w.once('error', reject);
    w.once('exit', (code) => reject(new Error(`the model thread exited (code ${code}) before it started`)));
  });
  w.on('error', () => {});   // after the start: a thread that dies is found by its timeout (threads.js)
  const exited = new Promise((resolve) => w.once('exit', resolve));
  // the caller's calls and answers after 'up' (threads.js); held (ref'd) while a call is under way
  const listen = (fn) => ready.then(() => w.on('message', fn));
  return { ready, exited, terminate: () => w.terminate(), post: (m) => w.postMessage(m), listen, hold: (on) => (on ? w.ref() : w.unref()) };
}

// the cores: runtime.js's default thread count (up to 8) and the most threads a model runs on
export const cores = () => (typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length);
