// model-bert-large.test.js - the one test in BERT's real shape (issue 25): a checkpoint in
// bert-base-chinese's exact shapes and layout (BertForPreTraining's file: 102,267,648 parameters in
// the encoder and pooler, the masked-LM and next-sentence heads beside them; random F32 weights,
// 412 MB, written at test time into the system's temp folder, never committed) loads from its
// folder in a fresh Node with a peak RSS of at most 1 GiB (the weights once, not file plus
// weights), and a 32-token forward with every layer's and head's attention gives finite logits
// over the whole vocabulary and rows of weights that sum to 1 over all 32 keys. The load and
// forward times and the memory are printed, not asserted (docs/BENCHMARKS.md has the timings).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { root } from '../helpers.js';
import { writeRandomCheckpoint, tensorsOf, SHAPES } from '../../scripts/random-checkpoint.js';

const RSS_LIMIT = 2 ** 30;

const CHILD = `
const { loadModel } = await import(${JSON.stringify(path.join(root, 'web/model/model-node.js'))});
const t0 = performance.now();
const model = await loadModel(process.argv[1]);
const loaded = performance.now() - t0;
const ids = Array.from({ length: 32 }, (_, i) => (i === 0 ? 101 : i === 31 ? 102 : 670 + 97 * i));
const t1 = performance.now();
const { logits, attention } = model.forward(ids, { attention: true });
const forward = performance.now() - t1;
let worst = 0, zeros = 0;
for (const heads of attention) for (const { data } of heads) {
  for (let i = 0; i < 32; i++) { let s = 0; for (let j = 0; j < 32; j++) { s += data[i * 32 + j]; zeros += data[i * 32 + j] === 0; } worst = Math.max(worst, Math.abs(s - 1)); }
}
process.stdout.write(JSON.stringify({
  loaded, forward, rss: process.resourceUsage().maxRSS * 1024, family: model.config.family, encoder: model.config.encoder,
  shape: logits.shape, finite: logits.data.every(Number.isFinite), maps: [attention.length, attention[0].length, ...attention[11][11].shape],
  worst, zeros,
}));
`;

test('a bert-base-chinese-shaped F32 checkpoint loads from its folder with peak RSS <= 1 GiB; 32 tokens with every head\'s attention', { timeout: 600_000 }, () => {
  const encoder = tensorsOf(SHAPES['bert-base-chinese']).filter(([name]) => name.startsWith('bert.'));
  assert.equal(encoder.reduce((n, [, shape]) => n + shape.reduce((a, b) => a * b, 1), 0), 102_267_648, 'bert-base-chinese\'s BertModel has 102,267,648 parameters');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-bert-base-'));
  try {
    const { bytes } = writeRandomCheckpoint('bert-base-chinese', dir, { dtype: 'F32' });
    const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', CHILD, dir], { encoding: 'utf8', maxBuffer: 1 << 20 }));
    console.log(`# bert-base-chinese shape: ${bytes} bytes of F32, loaded in ${(out.loaded / 1000).toFixed(1)} s, 32-token forward with all 144 heads' attention ${out.forward.toFixed(0)} ms, peak RSS ${(out.rss / 2 ** 20).toFixed(0)} MiB`);
    assert.deepEqual([out.family, out.encoder], ['bert', true]);
    assert.deepEqual(out.shape, [32, 21128]);
    assert.equal(out.finite, true);
    assert.deepEqual(out.maps, [12, 12, 32, 32]);
    assert.ok(out.worst <= 1e-5, `a row of weights sums to 1 ± ${out.worst}`);
    assert.equal(out.zeros, 0, 'no key is masked: every token sees every other');
    assert.ok(out.rss <= RSS_LIMIT, `peak RSS ${out.rss} bytes, over 1 GiB`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
