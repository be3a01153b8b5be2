// RoPE (attn.rope, c_src/attention.c attn_rope) against PyTorch: tests/golden/rope.json, made by
// tests/golden/make_rope.py (Hugging Face LLaMA's rotate-half, written out from the maths). Then
// the property that makes RoPE a *relative* encoding, and every bad input's AttentionError.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createAttention, AttentionError, toRows } from '../../web/core/attention.js';
import { root, assertClose, ATOL, RTOL } from '../helpers.js';
import { ropeModel, ROPE_BASE } from '../../web/page/page-rope.js';

const data = JSON.parse(fs.readFileSync(path.join(root, 'tests/golden/rope.json'), 'utf8'));
const attn = await createAttention();

test('golden data is the version the tests expect', () => {
  assert.equal(data.version, 1);
  assert.ok(data.cases.length >= 18 && data.page.length >= 4);
  const grid = new Set(data.cases.map((c) => `${c.d} ${c.base} ${c.offset}`));
  for (const d of [4, 8, 64]) for (const base of [10000, 1e6]) for (const offset of [0, 1, 7]) assert.ok(grid.has(`${d} ${base} ${offset}`), `d ${d} base ${base} offset ${offset}`);
});

for (const c of data.cases) {
  test(`golden rope ${c.name}`, () => {
    const r = attn.rope({ x: c.x }, { base: c.base, offset: c.offset, heads: c.heads });
    assert.deepEqual(r.output.shape, [c.x.length, c.heads * c.d]);
    assertClose(r.output, c.expected, `${c.name} vs float64`);
    // θ: base^(-2i/d) rounded once to float32, as the core does (the same bits); PyTorch's float32
    // 1 / base^(2i/d) rounds twice (the power, then the quotient): within two roundings
    assert.deepEqual(Array.from(r.theta), c.theta.map(Math.fround), `${c.name} theta`);
    assertClose(r.theta, c.theta_hf_f32, `${c.name} theta vs torch float32`, { atol: 0, rtol: 2.4e-7 });
    // PyTorch's own float32 path (the angle rounded to float32 before cos/sin): within the tolerance
    // where it is itself within the tolerance of float64; else within its own error
    const torchErr = c.hf_f32_error;
    if (torchErr <= ATOL) assertClose(r.output, c.expected_hf_f32, `${c.name} vs torch float32`);
    else assertClose(r.output, c.expected_hf_f32, `${c.name} vs torch float32 (its error ${torchErr})`, { atol: ATOL + torchErr, rtol: RTOL });
  });
}

test('float32 angles: PyTorch\'s float32 path is 8e-3 off at position 100000, the core is not', () => {
  const c = data.cases.find((x) => x.offset === 100000);
  assert.ok(c.hf_f32_error > 1e-3, `torch float32 error ${c.hf_f32_error}`);
  assertClose(attn.rope({ x: c.x }, { base: c.base, offset: c.offset }).output, c.expected, 'core vs float64');
});

test('the page\'s q and k (X = E[token], seeded W_q, W_k): rotated as PyTorch does, maps equal when shifted', () => {
  for (const c of data.page) {
    const m = ropeModel(attn, { tokens: c.tokens, seed: c.seed, dk: c.dk });
    assert.equal(m.base, ROPE_BASE);
    assertClose(m.e.flat(), c.e, `${c.name} E`);
    assertClose(m.q.flat(), c.q, `${c.name} q`);
    assertClose(m.k.flat(), c.k, `${c.name} k`);
    assertClose(m.qr.flat(), c.q_rope, `${c.name} q after RoPE`);
    assertClose(m.kr.flat(), c.k_rope, `${c.name} k after RoPE`);
    assertClose(m.weights.flat(), c.weights, `${c.name} map`);
    assertClose(m.plain.flat(), c.weights_no_rope, `${c.name} map without RoPE`);
    const s = ropeModel(attn, { tokens: c.tokens, seed: c.seed, dk: c.dk }, { offset: 1 });
    assertClose(s.qr.flat(), c.q_rope_shifted, `${c.name} q at positions 1..n`);
    assertClose(s.weights.flat(), c.weights_shifted, `${c.name} map at positions 1..n`);
  }
});

// ----------------------------------------------------------------------------------------------
// q_i·k_j after RoPE at positions (i, j) equals the same at (i + s, j + s)

function scores(q, k) {
  return q.map((qi) => k.map((kj) => qi.reduce((acc, v, c) => acc + v * kj[c], 0)));
}

test('shift invariance: the scores q_i·k_j at (i + s, j + s) equal those at (i, j) to float tolerance', () => {
  let seed = 7;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  for (const [d, base] of [[2, 10000], [8, 10000], [64, 1e6], [128, 500000]]) {
    const n = 6, q = Array.from({ length: n }, () => Array.from({ length: d }, rand)), k = Array.from({ length: n }, () => Array.from({ length: d }, rand));
    const at = (offset) => scores(toRows(attn.rope({ x: q }, { base, offset }).output), toRows(attn.rope({ x: k }, { base, offset }).output));
    const s0 = at(0);
    for (const shift of [1, 7, 1000]) {
      const s1 = at(shift);
      let gap = 0;
      s0.forEach((row, i) => row.forEach((v, j) => { gap = Math.max(gap, Math.abs(v - s1[i][j])); }));
      assert.ok(gap <= 1e-5 * Math.sqrt(d), `d ${d} base ${base} shift ${shift}: the scores moved by ${gap}`);
    }
    // and the map (softmax of the scores / √d) moves by float rounding only
    const map = (offset) => toRows(attn.attention({ q: attn.rope({ x: q }, { base, offset }).output, k: attn.rope({ x: k }, { base, offset }).output, v: k }).weights);
    assertClose(map(5).flat(), map(0).flat(), `d ${d} map shifted by 5`, { atol: 1e-6, rtol: 0 });
  }
});

test('position 0 is the identity, the heads rotate alike, and every pair keeps its length', () => {
  const x = [[1, 2, 3, 4, 5, 6, 7, 8], [-1, 0.5, 2, -3, 0.25, 1, -2, 4]];
  const r = toRows(attn.rope({ x }, { heads: 2 }).output);
  assert.deepEqual(r[0], x[0]);
  const one = toRows(attn.rope({ x: x.map((row) => row.slice(0, 4)) }).output), two = toRows(attn.rope({ x: x.map((row) => row.slice(4)) }).output);
  assert.deepEqual(r[1], [...one[1], ...two[1]]);
  for (let i = 0; i < 2; i++) {
    for (const h of [0, 4]) {
      const before = Math.hypot(x[1][h + i], x[1][h + i + 2]), after = Math.hypot(r[1][h + i], r[1][h + i + 2]);
      assert.ok(Math.abs(before - after) < 1e-6, `pair ${i} head ${h / 4}: ${before} -> ${after}`);
    }
  }
  // pair 0 (θ_0 = 1) at position 1 turns by exactly 1 radian
  const p = toRows(attn.rope({ x: [[0, 0], [1, 0]] }).output)[1];
  assert.deepEqual(p, [Math.fround(Math.cos(1)), Math.fround(Math.sin(1))]);
  // typed input, the result a copy
  const data = new Float32Array([1, 0, 0, 1]);
  const t = attn.rope({ x: { data, shape: [1, 4] } }, { offset: 3 });
  assert.ok(t.output.data instanceof Float32Array && t.output.data.buffer !== data.buffer);
  assert.equal(t.theta.length, 2);
  assert.equal(t.theta[0], 1);
  assert.equal(t.theta[1], Math.fround(1 / 100));
});

test('bad input: an AttentionError with a code, before anything is computed', () => {
  const x = [[1, 2, 3, 4]];
  const bad = (inputs, options, code, re) => assert.throws(() => attn.rope(inputs, options), (e) => {
    assert.ok(e instanceof AttentionError, e);
    assert.equal(e.code, code, e.message);
    if (re) assert.match(e.message, re);
    return true;
  });
  bad(undefined, undefined, 'INVALID_ARGUMENT', /first argument/);
  bad({}, undefined, 'INVALID_ARGUMENT', /x is missing/);
  bad({ x, q: x }, undefined, 'INVALID_ARGUMENT', /unknown input "q"/);
  bad({ x: [] }, undefined, 'INVALID_ARGUMENT', /empty/);
  bad({ x: [[1, 2], [3]] }, undefined, 'INVALID_ARGUMENT', /ragged/);
  bad({ x: [[1, 2, 3]] }, undefined, 'SHAPE_MISMATCH', /even width/);
  bad({ x }, { heads: 3 }, 'SHAPE_MISMATCH', /even width/);
  bad({ x }, { heads: 4 }, 'SHAPE_MISMATCH', /even width/);
  bad({ x }, { heads: 0 }, 'INVALID_ARGUMENT', /heads/);
  bad({ x }, { heads: 1.5 }, 'INVALID_ARGUMENT', /heads/);
  bad({ x }, { base: 0.5 }, 'INVALID_ARGUMENT', /base/);
  bad({ x }, { base: NaN }, 'INVALID_ARGUMENT', /base/);
  bad({ x }, { base: Infinity }, 'INVALID_ARGUMENT', /base/);
  bad({ x }, { base: '10000' }, 'INVALID_ARGUMENT', /base/);
  bad({ x }, { offset: -1 }, 'INVALID_ARGUMENT', /offset/);
  bad({ x }, { offset: 0.5 }, 'INVALID_ARGUMENT', /offset/);
  bad({ x }, { offset: 2 ** 20 }, 'INVALID_ARGUMENT', /2\^20/);
  bad({ x: [[1, 2], [3, 4]] }, { offset: 2 ** 20 - 1 }, 'INVALID_ARGUMENT', /2\^20/);
  bad({ x }, { causal: true }, 'INVALID_ARGUMENT', /unknown option "causal"/);
  bad({ x }, 'fast', 'INVALID_ARGUMENT', /options/);
  bad({ x: [[1, NaN, 3, 4]] }, undefined, 'NON_FINITE', /x\[0\]\[1\]/);
  bad({ x: [[1, 2, Infinity, 4]] }, undefined, 'NON_FINITE', /x\[0\]\[2\]/);
  bad({ x: [[3e38, 3e38]] }, { offset: 1 }, 'NON_FINITE', /overflows/);
  // the last position is allowed, and a getter that throws becomes INVALID_ARGUMENT
  assert.equal(attn.rope({ x: [[1, 0]] }, { offset: 2 ** 20 - 1 }).output.shape[0], 1);
  bad({ get x() { throw new Error('boom'); } }, undefined, 'INVALID_ARGUMENT', /boom/);
});

test('the one-file embed\'s build has no RoPE: rope says so, by name, and the instance goes on', async () => {
  const embed = await createAttention({ wasm: fs.readFileSync(path.join(root, 'web/wasm/attention-embed.wasm')) });
  assert.throws(() => embed.rope({ x: [[1, 0, 0, 1]] }), (e) => e instanceof AttentionError && e.code === 'INVALID_ARGUMENT' && /attention-embed\.wasm.*has no RoPE/.test(e.message));
  const { weights } = embed.attention({ q: [[1, 0]], k: [[1, 0], [0, 1]], v: [[1], [2]] }, { weights: true });
  assert.equal(weights.data.length, 2);
});
