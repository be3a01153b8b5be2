// thread-worker-browser.js - a model thread in a browser (a module Web Worker, threads-browser.js):
// its first message is the workerData, then thread-worker.js's loop (Atomics.wait is allowed in
// a worker).
// The caller (workerData.caller) then takes each later message as a call.
import { serve, serveCaller } from './thread-worker.js';

self.onmessage = (e) => {
  self.onmessage = null;
  const up = () => self.postMessage('up');
  if (!e.data.caller) return serve(e.data, up);
  serveCaller(e.data, up, (fn) => { self.onmessage = (m) => fn(m.data); }, (m) => self.postMessage(m));
};
