// attention-worker-node.js - a worker of createAttentionPool in Node (worker_threads).
// What it does: worker-loop.js.
import { parentPort } from 'node:worker_threads';
import { serve } from './worker-loop.js';

if (!parentPort) throw new Error('attnmap/pool/worker is the pool\'s worker script, started by createAttentionPool: import attnmap/pool instead');

serve((msg, transfer) => parentPort.postMessage(msg, transfer ?? []), (fn) => parentPort.on('message', fn));
