// The native build of multi-head attention (gcc, under ASan + UBSan) against PyTorch
// (tests/golden/mha.json) and against the wasm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { createAttention } from '../../web/core/attention.js';
import { root, assertClose, mhaGolden, mhaCaseArgs } from '../helpers.js';

execFileSync('make', ['-s', '-C', path.join(root, 'c_src'), 'harness'], { stdio: 'inherit' });
const harness = path.join(root, 'build/native/harness_mha');
const data = mhaGolden();
const attn = await createAttention();

// tests/native/c/harness_mha.c's input format; the inputs are float32 values, so 9 digits are exact
function encode(c, wantWeights = true) {
  const nums = (rows) => rows.flat().map((x) => x.toPrecision(9)).join(' ');
  const n = c.x.length, dm = c.x[0].length, m = c.kv ? c.kv.length : n;
  const hasBias = c.bq !== null;
  const head = ['mha', n, m, dm, c.heads, c.kv_heads, -1, c.causal ? 1 : 0, c.kv ? 1 : 0, hasBias ? 1 : 0, c.mask ? 1 : 0, wantWeights ? 1 : 0];
  const parts = [head.join(' '), nums(c.x)];
  if (c.kv) parts.push(nums(c.kv));
  parts.push(nums(c.wq), nums(c.wk), nums(c.wv), nums(c.wo));
  if (hasBias) parts.push(nums(c.bq), nums(c.bk), nums(c.bv), nums(c.bo));
  if (c.mask) parts.push(c.mask.flat().map(Number).join(' '));
  return parts.join(' ') + '\n';
}

function decode(text) {
  const results = [];
  let cur;
  for (const line of text.trim().split('\n')) {
    const [name, ...rest] = line.split(' ');
    if (name === 'status') { cur = { status: Number(rest[0]) }; results.push(cur); continue; }
    const [rows, cols, ...vals] = rest;
    cur[name] = { data: Float32Array.from(vals, Number), shape: [Number(rows), Number(cols)] };
  }
  return results;
}

const input = data.cases.map((c) => encode(c)).join('') + data.cases.map((c) => encode(c, false)).join('');
const results = decode(execFileSync(harness, { input, maxBuffer: 1 << 26 }).toString());
const count = data.cases.length;

test('the harness ran every golden case, with and without weights', () => {
  assert.equal(results.length, 2 * count);
});

data.cases.forEach((c, i) => {
  test(`native mha ${c.name} agrees with PyTorch`, () => {
    const r = results[i], q = results[count + i];
    assert.equal(r.status, 0);
    assertClose(r.output, c.expected.output, `native ${c.name} output`);
    assertClose(r.concat, c.expected.concat, `native ${c.name} concat`);
    assertClose(r.weights, c.expected.weights.flat(), `native ${c.name} weights`);
    assert.equal(q.status, 0);
    assert.equal(q.weights, undefined);
    assertClose(q.output, c.expected.output, `native ${c.name} output without weights`);
  });
});

test('native and wasm agree within the tolerance on every case (and report how many are bit-identical)', (t) => {
  let identical = 0, total = 0;
  data.cases.forEach((c, i) => {
    const w = attn.multiHeadAttention(...mhaCaseArgs(c));
    const wasm = { output: w.output.data, concat: w.concat.data, weights: Float32Array.from(w.weights.flatMap((h) => Array.from(h.data))) };
    for (const key of ['output', 'concat', 'weights']) {
      total++;
      assertClose(results[i][key], wasm[key], `native vs wasm ${c.name} ${key}`);
      if (results[i][key].data.every((x, j) => Object.is(x, wasm[key][j]))) identical++;
    }
  });
  t.diagnostic(`${identical} of ${total} result matrices are bit-identical between native and wasm`);
});
