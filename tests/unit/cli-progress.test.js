// cli-progress.test.js - bin/progress.js, the CLI's download progress (issue 23): on a terminal
// one line per file redrawn in place with the file, MB so far and of the total, the rate and a
// bar; nothing at all when stderr is a file or a pipe. The clock is the test's: no wall time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { progressBar } from '../../bin/progress.js';

const stream = (isTTY) => { const out = []; return { isTTY, out, write: (s) => { out.push(s); return true; } }; };

test('progress on a terminal: file, MB of the total, MB/s and a bar, redrawn in place; a new line per file', () => {
  const s = stream(true);
  let clock = 10_000;
  const onProgress = progressBar(s, () => clock);
  onProgress({ file: 'model.safetensors', loaded: 0, total: 4e6 });
  clock = 11_000; onProgress({ file: 'model.safetensors', loaded: 2e6, total: 4e6 });
  clock = 11_050; onProgress({ file: 'model.safetensors', loaded: 2.5e6, total: 4e6 });   // within 100 ms of the last redraw: skipped
  clock = 12_000; onProgress({ file: 'model.safetensors', loaded: 4e6, total: 4e6 });
  clock = 12_500; onProgress({ file: 'config.json', loaded: 700, total: null });
  assert.deepEqual(s.out, [
    '\rmodel.safetensors  0.0 / 4.0 MB  0.0 MB/s [························]',
    '\rmodel.safetensors  2.0 / 4.0 MB  2.0 MB/s [############············]',
    '\rmodel.safetensors  4.0 / 4.0 MB  2.0 MB/s [########################]',
    '\n',
    '\rconfig.json  0.0 MB  0.0 MB/s',
  ]);
});

test('progress when stderr is not a terminal: no callback, so loadModel reports nothing', () => {
  assert.equal(progressBar(stream(false)), undefined);
  assert.equal(progressBar(stream(undefined)), undefined);
});
