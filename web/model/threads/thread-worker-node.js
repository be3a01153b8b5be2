// thread-worker-node.js - a model thread in Node (worker_threads): thread-worker.js's loop.
import { parentPort, workerData } from 'node:worker_threads';
import { serve, serveCaller } from './thread-worker.js';

if (!parentPort || !workerData?.memory) throw new Error('attnmap: thread-worker-node.js is a model thread, started by loadModel({ threads })');
const up = () => parentPort.postMessage('up');
if (workerData.caller) serveCaller(workerData, up, (fn) => parentPort.on('message', fn), (m) => parentPort.postMessage(m));
else serve(workerData, up);
