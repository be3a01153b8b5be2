// threads-copy.js - a worker of bench/threads.js's ceiling: its own copy of the checkpoint on one
// thread (workerData.dir), which runs `rounds` forwards over workerData.ids each time it is asked
// and answers with their times (ms). Two of them at once show what this machine gives two busy
// cores: no split of one forward can beat that.
import { parentPort, workerData } from 'node:worker_threads';
import { loadModel } from '../web/model/model-node.js';

const model = await loadModel(workerData.dir, { threads: 1 });
model.forward(workerData.ids);   // the warm-up
parentPort.on('message', ({ rounds, go }) => {
  while (Atomics.load(go, 0) === 0) Atomics.wait(go, 0, 0);   // both copies start together
  const ms = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    model.forward(workerData.ids);
    ms.push(performance.now() - t0);
  }
  parentPort.postMessage(ms);
});
parentPort.postMessage('up');
