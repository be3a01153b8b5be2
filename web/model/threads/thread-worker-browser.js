// thread-worker-browser.js - a model thread in a browser (a module Web Worker, threads-browser.js):
// its first message is the workerData, then thread-worker.js's loop (Atomics.wait is allowed in
// a worker).
import { serve } from './thread-worker.js';

self.onmessage = (e) => {
  self.onmessage = null;
  serve(e.data, () => self.postMessage('up'));
};
