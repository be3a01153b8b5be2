// The native build of the same C (gcc, under ASan + UBSan) against PyTorch and against the wasm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { createAttention } from '../../web/core/attention.js';
import { root, golden, assertClose, caseOptions } from '../helpers.js';

execFileSync('make', ['-s', '-C', path.join(root, 'c_src'), 'harness'], { stdio: 'inherit' });
const harness = path.join(root, 'build/native/harness');
const data = golden();
const attn = await createAttention();

// tests/native/c/harness.c's input format
function encode(c) {
  const nums = (rows) => rows.flat().map((x) => x.toPrecision(9)).join(' ');
  const mask = c.mask ? ' ' + c.mask.flat().map(Number).join(' ') : '';
  const scale = c.scale ?? -1, flags = c.causal ? 1 : 0, hasMask = c.mask ? 1 : 0;
  if (c.kind === 'sdpa') {
    return `sdpa ${c.q.length} ${c.k.length} ${c.q[0].length} ${c.v[0].length} ${scale} ${flags} ${hasMask} ` +
      `${nums(c.q)} ${nums(c.k)} ${nums(c.v)}${mask}\n`;
  }
  return `self ${c.x.length} ${c.x[0].length} ${c.wq[0].length} ${c.wv[0].length} ${scale} ${flags} ${hasMask} ` +
    `${nums(c.x)} ${nums(c.wq)} ${nums(c.wk)} ${nums(c.wv)}${mask}\n`;
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

// scale as text: the golden scales are float32-exact or short decimals; 9 digits round-trip float32
const results = decode(execFileSync(harness, { input: data.cases.map(encode).join(''), maxBuffer: 1 << 26 }).toString());

test('the harness ran every golden case', () => {
  assert.equal(results.length, data.cases.length);
});

data.cases.forEach((c, i) => {
  if (c.name === 'large-offset-pos-f32-rounding') return;  // float32 cannot meet the tolerance: see golden.test.js
  test(`native ${c.kind} ${c.name} agrees with PyTorch`, () => {
    assert.equal(results[i].status, 0);
    for (const key of Object.keys(c.expected)) assertClose(results[i][key], c.expected[key], `native ${c.name} ${key}`);
  });
});

test('native and wasm agree within the tolerance on every case (and report how many are bit-identical)', (t) => {
  let identical = 0, total = 0;
  data.cases.forEach((c, i) => {
    const w = c.kind === 'sdpa' ? attn.attention({ q: c.q, k: c.k, v: c.v }, caseOptions(c))
      : attn.selfAttention({ x: c.x, wq: c.wq, wk: c.wk, wv: c.wv }, caseOptions(c));
    for (const key of Object.keys(c.expected)) {
      total++;
      assertClose(results[i][key], w[key].data, `native vs wasm ${c.name} ${key}`);
      if (results[i][key].data.every((x, j) => Object.is(x, w[key].data[j]))) identical++;
    }
  });
  t.diagnostic(`${identical} of ${total} result matrices are bit-identical between native and wasm`);
});
