// threads-copy.js - a worker of bench/threads.js's ceiling: its own copy of the checkpoint on one
// thread (workerData.dir). Each time it is asked ({ ids, go }) it waits for `go`, runs a forward
// over ids and answers with its time (ms). Two of them at once show what this machine gives two
// busy cores: no split of one forward can beat that.
import { parentPort, workerData } from 'node:worker_threads';
import { loadModel } from '../web/model/model-node.js';

const model = await loadModel(workerData.dir, { threads: 1 });
parentPort.on('message', ({ ids, go }) => {
  while (Atomics.load(go, 0) === 0) Atomics.wait(go, 0, 0);   // copies asked together start together
  const t0 = performance.now();
  model.forward(ids);
  parentPort.postMessage(performance.now() - t0);
});
parentPort.postMessage('up');
