// Multi-head attention through the JS API: every case of tests/golden/mha.json (PyTorch's
// nn.MultiheadAttention), its relation to selfAttention, every bad input, memory, types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAttention, AttentionError } from '../../web/core/attention.js';
import { assertClose, expectError, mhaGolden, mhaCaseArgs as caseArgs } from '../helpers.js';

const data = mhaGolden();
const attn = await createAttention();
const byName = (name) => data.cases.find((c) => c.name === name);

const run = (c, extra) => attn.multiHeadAttention(...caseArgs(c, extra));
const same = (a, b, label) => assert.ok(a.length === b.length && a.every((x, i) => Object.is(x, b[i])), `${label}: not bit-identical`);

test('golden data is the version the tests expect', () => {
  assert.equal(data.version, 1);
  assert.equal(data.generator, 'tests/golden/make_mha.py');
  assert.ok(data.cases.length >= 15, `only ${data.cases.length} cases`);
});

for (const c of data.cases) {
  test(`golden mha ${c.name}`, () => {
    const r = run(c);
    const n = c.x.length, dm = c.x[0].length, m = c.kv ? c.kv.length : n, dh = dm / c.heads;
    assert.deepEqual(r.output.shape, [n, dm]);
    assert.deepEqual(r.concat.shape, [n, dm]);
    assertClose(r.output, c.expected.output, `${c.name} output`);
    assertClose(r.concat, c.expected.concat, `${c.name} concat`);
    assert.equal(r.weights.length, c.heads);
    assert.equal(r.heads.length, c.heads);
    for (let h = 0; h < c.heads; h++) {
      assert.deepEqual(r.weights[h].shape, [n, m]);
      assert.deepEqual(r.heads[h].shape, [n, dh]);
      assertClose(r.weights[h], c.expected.weights[h], `${c.name} weights of head ${h}`);
      assertClose(r.heads[h], c.expected.concat.map((row) => row.slice(h * dh, (h + 1) * dh)), `${c.name} head ${h}`);
    }
  });
}

test('invariants on every golden case: rows sum to 1, masked weights exactly 0, a fully masked query outputs bo', () => {
  for (const c of data.cases) {
    const r = run(c);
    const [n, m] = r.weights[0].shape, dm = r.output.shape[1];
    for (let i = 0; i < n; i++) {
      const allowed = (j) => !(c.causal && j > i) && (!c.mask || c.mask[i][j]);
      const any = Array.from({ length: m }, (_, j) => allowed(j)).some(Boolean);
      for (const w of r.weights) {
        let sum = 0;
        for (let j = 0; j < m; j++) {
          const x = w.data[i * m + j];
          if (!allowed(j)) assert.equal(x, 0, `${c.name}: masked weight [${i}][${j}]`);
          sum += x;
        }
        if (any) assert.ok(Math.abs(sum - 1) <= 1e-6, `${c.name}: row ${i} sums to ${sum}`);
        else assert.equal(sum, 0);
      }
      if (!any) {
        assert.deepEqual(Array.from(r.concat.data.subarray(i * dm, (i + 1) * dm)), new Array(dm).fill(0));
        const bo = c.bo ? c.bo.map(Math.fround) : new Array(dm).fill(0);
        assert.deepEqual(Array.from(r.output.data.subarray(i * dm, (i + 1) * dm)), bo, `${c.name}: fully masked row ${i} is bo`);
      }
    }
  }
  assert.ok(data.cases.some((c) => c.mask && c.mask.some((row) => row.every((b) => !b))), 'a case with a fully masked row');
});

test('猫吃鱼, two heads: torch float32 and our float32 agree', () => {
  const c = byName('cat-eat-fish-2-heads');
  assert.deepEqual(c.tokens, ['猫', '吃', '鱼']);
  const r = run(c);
  assertClose(r.output, c.expected_f32.output, 'output vs torch float32');
  r.weights.forEach((w, h) => assertClose(w, c.expected_f32.weights[h], `weights ${h} vs torch float32`));
});

// concat·W_O + b_O in float64 from float32 values
function project(mat, w, b) {
  const [n, c] = mat.shape, p = w[0].length, out = [];
  for (let i = 0; i < n; i++) {
    const row = [];
    for (let j = 0; j < p; j++) {
      let s = b ? Math.fround(b[j]) : 0;
      for (let t = 0; t < c; t++) s += mat.data[i * c + t] * Math.fround(w[t][j]);
      row.push(s);
    }
    out.push(row);
  }
  return out;
}

test('one head is selfAttention followed by W_O', () => {
  for (const c of [byName('one-head'), byName('cat-eat-fish-2-heads'), byName('no-bias')]) {
    const causal = c.name !== 'one-head';
    // no biases: selfAttention has none
    const r = attn.multiHeadAttention({ x: c.x, wq: c.wq, wk: c.wk, wv: c.wv, wo: c.wo }, { heads: 1, causal });
    const s = attn.selfAttention({ x: c.x, wq: c.wq, wk: c.wk, wv: c.wv }, { causal });
    same(r.weights[0].data, s.weights.data, `${c.name} weights`);
    same(r.heads[0].data, s.output.data, `${c.name} head output`);
    same(r.concat.data, s.output.data, `${c.name} concat`);
    assertClose(r.output, project(s.output, c.wo, null), `${c.name} output = selfAttention·W_O`);
    // with biases: Q = X·W_Q + b_Q is selfAttention on [X | 1] with the bias as an extra row of W
    if (c.bq) {
      const xa = c.x.map((row) => [...row, 1]);
      const aug = (w, b) => [...w, b];
      const rb = attn.multiHeadAttention({ x: c.x, wq: c.wq, wk: c.wk, wv: c.wv, wo: c.wo, bq: c.bq, bk: c.bk, bv: c.bv, bo: c.bo }, { heads: 1 });
      const sb = attn.selfAttention({ x: xa, wq: aug(c.wq, c.bq), wk: aug(c.wk, c.bk), wv: aug(c.wv, c.bv) });
      assertClose(rb.weights[0], Array.from(sb.weights.data), `${c.name} weights with biases`);
      assertClose(rb.output, project(sb.output, c.wo, c.bo), `${c.name} output with biases`);
    }
  }
});

test('heads are the columns of concat, weights an array of (n, m), all copies', () => {
  const c = byName('odd-width-15-3x5');
  const r = run(c);
  const [n, dm] = r.concat.shape, dh = dm / c.heads;
  for (let h = 0; h < c.heads; h++) {
    for (let i = 0; i < n; i++) {
      same(Array.from(r.heads[h].data.subarray(i * dh, (i + 1) * dh)), Array.from(r.concat.data.subarray(i * dm + h * dm / c.heads, i * dm + (h + 1) * dh)), `head ${h} row ${i}`);
    }
    assert.ok(r.heads[h].data instanceof Float32Array && r.weights[h].data instanceof Float32Array);
  }
  const before = Array.from(r.weights[1].data);
  run(byName('causal'));
  assert.deepEqual(Array.from(r.weights[1].data), before, 'not a view into wasm memory');
  assert.ok(r.output.data.buffer.byteLength <= 8192, 'a copy, not wasm memory');
});

test('weights: false omits the weights, keeps heads and concat, same results', () => {
  for (const c of [byName('mask-fully-masked-row'), byName('gqa-cross-mask'), byName('head-width-64')]) {
    const a = run(c), b = run(c, { weights: false });
    assert.equal('weights' in b, false);
    assertClose(b.output, Array.from(a.output.data), `${c.name} output`);
    assertClose(b.concat, Array.from(a.concat.data), `${c.name} concat`);
    assert.equal(b.heads.length, c.heads);
  }
});

test('the tiled path (m >= 32, weights: false) agrees with the weights path', () => {
  const n = 40, m = 70, dm = 24, heads = 3;
  const rnd = (() => { let s = 7; return () => ((s = (s * 48271) % 2147483647) / 2147483647) - 0.5; })();
  const mat = (r, c, sc = 1) => Array.from({ length: r }, () => Array.from({ length: c }, () => rnd() * sc));
  const inputs = { x: mat(n, dm), kv: mat(m, dm), wq: mat(dm, dm, 0.5), wk: mat(dm, dm, 0.5), wv: mat(dm, dm, 0.5), wo: mat(dm, dm, 0.5), bo: mat(1, dm)[0] };
  for (const causal of [false, true]) {
    const a = attn.multiHeadAttention(inputs, { heads, causal });
    const b = attn.multiHeadAttention(inputs, { heads, causal, weights: false });
    assertClose(b.output, Array.from(a.output.data), `causal ${causal}`);
  }
});

test('argument forms: { data, shape }, Float64Array and number[] biases, kv omitted = kv: x', () => {
  const c = byName('cat-eat-fish-2-heads-bias');
  const [inputs, options] = caseArgs(c);
  const a = attn.multiHeadAttention(inputs, options);
  const flat = (rows) => ({ data: Float64Array.from(rows.flat()), shape: [rows.length, rows[0].length] });
  const b = attn.multiHeadAttention({
    x: flat(c.x), wq: flat(c.wq), wk: flat(c.wk), wv: flat(c.wv), wo: { data: Float32Array.from(c.wo.flat()), shape: [8, 8] },
    bq: Float64Array.from(c.bq), bk: Float32Array.from(c.bk), bv: c.bv, bo: Float32Array.from(c.bo),
  }, options);
  const k = attn.multiHeadAttention({ ...inputs, kv: c.x }, options);
  for (const r of [b, k]) {
    same(r.output.data, a.output.data, 'output');
    r.weights.forEach((w, h) => same(w.data, a.weights[h].data, `weights ${h}`));
  }
  // a boolean[][] mask and a Uint8Array mask agree
  const mask = [[true, false, true], [false, false, false], [true, true, true]];
  const m1 = attn.multiHeadAttention(inputs, { ...options, mask });
  const m2 = attn.multiHeadAttention(inputs, { ...options, mask: { data: Uint8Array.from(mask.flat(), Number), shape: [3, 3] } });
  same(m1.output.data, m2.output.data, 'mask forms');
  assert.equal(m1.weights[0].data[1], 0);
  // nn.MultiheadAttention's attn_mask (true = masked out) becomes mask by negation
  const attnMask = mask.map((row) => row.map((x) => !x));
  const m3 = attn.multiHeadAttention(inputs, { ...options, mask: attnMask.map((row) => row.map((x) => !x)) });
  same(m3.output.data, m1.output.data, 'negated attn_mask');
});

test('grouped-query attention equals multi-head attention with each kv head repeated', () => {
  const c = byName('gqa-4-heads-2-kv');
  const [inputs, options] = caseArgs(c);
  const dh = c.x[0].length / c.heads, group = c.heads / c.kv_heads;
  const repCols = (w) => w.map((row) => Array.from({ length: c.heads }, (_, h) => row.slice(Math.floor(h / group) * dh, (Math.floor(h / group) + 1) * dh)).flat());
  const full = attn.multiHeadAttention({ ...inputs, wk: repCols(c.wk), wv: repCols(c.wv), bk: repCols([c.bk])[0], bv: repCols([c.bv])[0] }, { heads: c.heads });
  const gqa = attn.multiHeadAttention(inputs, options);
  same(gqa.output.data, full.output.data, 'output');
  gqa.weights.forEach((w, h) => same(w.data, full.weights[h].data, `weights ${h}`));
  // heads sharing a kv head differ only through their queries: kvHeads = heads is the default
  const r = attn.multiHeadAttention({ ...inputs, wk: repCols(c.wk), wv: repCols(c.wv), bk: repCols([c.bk])[0], bv: repCols([c.bv])[0] }, { heads: c.heads, kvHeads: c.heads });
  same(r.output.data, full.output.data, 'explicit kvHeads = heads');
});

test('bad inputs: INVALID_ARGUMENT', () => {
  const I = 'INVALID_ARGUMENT';
  const c = byName('cat-eat-fish-2-heads-bias');
  const [inputs] = caseArgs(c);
  const mha = (i, o) => attn.multiHeadAttention(i, o);
  expectError(() => mha(), I, /first argument must be an object \{ x, wq, wk, wv, wo/);
  expectError(() => mha([1], { heads: 2 }), I, /first argument/);
  expectError(() => mha({ ...inputs, wo: undefined }, { heads: 2 }), I, /wo is missing/);
  expectError(() => mha({ ...inputs, x: 'abc' }, { heads: 2 }), I, /x must be a matrix.*string/);
  expectError(() => mha({ ...inputs, Wq: c.wq }, { heads: 2 }), I, /unknown input "Wq"; expected x, wq/);
  expectError(() => mha(inputs), I, /options\.heads is missing/);
  expectError(() => mha(inputs, {}), I, /options\.heads is missing/);
  expectError(() => mha(inputs, 2), I, /options must be a plain object/);
  for (const heads of [0, -2, 2.5, NaN, Infinity, '2', null, true]) {
    expectError(() => mha(inputs, { heads }), I, /heads must be a positive integer; received/);
  }
  expectError(() => mha(inputs, { heads: 2, kvHeads: 0 }), I, /kvHeads must be a positive integer; received number 0/);
  expectError(() => mha(inputs, { heads: 2, kvHeads: 1.5 }), I, /kvHeads must be a positive integer/);
  expectError(() => mha(inputs, { heads: 2, head: 2 }), I, /unknown option "head"; expected one of heads, kvHeads/);
  expectError(() => mha(inputs, { heads: 2, causal: 'yes' }), I, /causal must be true or false/);
  expectError(() => mha(inputs, { heads: 2, weights: 0 }), I, /weights must be true or false/);
  expectError(() => mha(inputs, { heads: 2, scale: -1 }), I, /scale must be a finite number >= 0/);
  expectError(() => mha({ ...inputs, bq: 'abc' }, { heads: 2 }), I, /bq must be a vector: number\[\], Float32Array or Float64Array of length 8; received the string/);
  expectError(() => mha({ ...inputs, bo: { data: c.bo, shape: [1, 8] } }, { heads: 2 }), I, /bo must be a vector/);
  expectError(() => mha({ ...inputs, bk: new Int32Array(8) }, { heads: 2 }), I, /bk must be a vector.*Int32Array/);
  expectError(() => mha({ ...inputs, bv: [1, 2, 3, 4, 5, 6, 7, '8'] }, { heads: 2 }), I, /bv\[7\] must be a number; received the string "8"/);
  expectError(() => mha(inputs, { heads: 2, mask: [[1, 1, 1], [1, 1, 1], [1, 1, 1]] }), I, /mask\[0\]\[0\] must be true or false/);
});

test('bad inputs: SHAPE_MISMATCH names the argument and both shapes', () => {
  const S = 'SHAPE_MISMATCH';
  const c = byName('cat-eat-fish-2-heads-bias');
  const [inputs] = caseArgs(c);
  const mha = (i, o) => attn.multiHeadAttention(i, o);
  expectError(() => mha(inputs, { heads: 3 }), S, /heads = 3 does not divide d_model = 8 \(the columns of x \(3, 8\)\)/);
  expectError(() => mha(inputs, { heads: 16 }), S, /heads = 16 does not divide d_model = 8/);
  expectError(() => mha(inputs, { heads: 4, kvHeads: 3 }), S, /kvHeads = 3 does not divide heads = 4/);
  expectError(() => mha(inputs, { heads: 2, kvHeads: 4 }), S, /kvHeads = 4 does not divide heads = 2/);
  const cols = (w, k) => w.map((row) => row.slice(0, k));
  expectError(() => mha({ ...inputs, wq: cols(c.wq, 4) }, { heads: 2 }), S, /wq must have shape \(d_model, d_model\) = \(8, 8\).*received wq \(8, 4\)/);
  const inProj = [...c.wq, ...c.wk, ...c.wv];
  const e = expectError(() => mha({ ...inputs, wq: inProj }, { heads: 2 }), S, /received wq \(24, 8\)/);
  assert.match(e.message, /in_proj_weight is \(3·E, E\): pass in_proj_weight\[:E\]\.T as wq/);
  expectError(() => mha({ ...inputs, wk: cols(c.wk, 4) }, { heads: 2 }), S, /wk must have shape \(d_model, d_model\) = \(8, 8\).*received wk \(8, 4\) \(for grouped-query attention pass \{ kvHeads: 1 \}\)/);
  expectError(() => mha({ ...inputs, wv: cols(c.wv, 6) }, { heads: 2 }), S, /wv must have shape.*received wv \(8, 6\)$/);
  expectError(() => mha({ ...inputs, bk: c.bk.slice(0, 4), wk: cols(c.wk, 6) }, { heads: 4, kvHeads: 2 }), S, /wk must have shape \(d_model, kvHeads·d_head\) = \(8, 4\).*heads = 4, kvHeads = 2; received wk \(8, 6\)/);
  expectError(() => mha({ ...inputs, wo: c.wo.slice(0, 7) }, { heads: 2 }), S, /wo must have shape \(d_model, d_model\) = \(8, 8\).*received wo \(7, 8\)/);
  expectError(() => mha({ ...inputs, kv: [[1, 2, 3]] }, { heads: 2 }), S, /kv must have shape \(m, d_model\) = \(m, 8\) like x \(3, 8\); received kv \(1, 3\)/);
  expectError(() => mha({ ...inputs, bq: c.bq.slice(1) }, { heads: 2 }), S, /bq must have 8 values \(d_model, one per column of wq\); received 7/);
  // grouped-query: bk has d_kv = kvHeads·d_head values
  expectError(() => mha({ ...inputs, wk: cols(c.wk, 4), wv: cols(c.wv, 4) }, { heads: 2, kvHeads: 1 }), S, /bk must have 4 values \(one per column of wk\); received 8/);
  expectError(() => mha({ ...inputs, kv: c.x.slice(0, 2) }, { heads: 2, mask: [[true, true, true], [true, true, true], [true, true, true]] }), S, /mask must have shape \(3, 2\) \(queries, keys\); mask\[0\] has 3 columns/);
  expectError(() => mha({ ...inputs, x: { data: [1, 2, 3], shape: [1, 8] } }, { heads: 2 }), S, /x\.data has 3 values but shape \(1, 8\) needs 8/);
});

test('bad inputs: NON_FINITE names the position, also for overflow', () => {
  const N = 'NON_FINITE';
  const c = byName('cat-eat-fish-2-heads-bias');
  const [inputs] = caseArgs(c);
  const mha = (i, o) => attn.multiHeadAttention(i, o);
  expectError(() => mha({ ...inputs, x: [c.x[0], [...c.x[1].slice(0, 7), NaN], c.x[2]] }, { heads: 2 }), N, /x\[1\]\[7\] is NaN/);
  expectError(() => mha({ ...inputs, wo: [...c.wo.slice(0, 7), [...c.wo[7].slice(0, 7), Infinity]] }, { heads: 2 }), N, /wo\[7\]\[7\] is Infinity/);
  expectError(() => mha({ ...inputs, bq: [0, 0, 0, NaN, 0, 0, 0, 0] }, { heads: 2 }), N, /bq\[3\] is NaN/);
  expectError(() => mha({ ...inputs, bo: Float64Array.of(0, 0, 0, 0, 0, 0, 0, 1e39) }, { heads: 2 }), N, /bo\[7\] = 1e\+39 is outside the float32 range/);
  expectError(() => mha({ ...inputs, kv: [[0, 0, 0, 0, 0, 0, 0, -Infinity]] }, { heads: 2 }), N, /kv\[0\]\[7\] is -Infinity/);
  const big = c.wq.map((row) => row.map(() => 1e30));
  expectError(() => mha({ ...inputs, wq: big, wk: big }, { heads: 2 }), N, /multiHeadAttention: the result overflows float32/);
  expectError(() => mha({ ...inputs, bq: new Array(8).fill(3e38), x: c.x.map((r) => r.map(() => 3e38)), wq: c.wq.map((r) => r.map(() => 1)) }, { heads: 2 }), N, /overflows float32/);
});

test('bad inputs: TOO_LARGE suggests weights: false', () => {
  const n = 40000, w = [[1, 0], [0, 1]];
  const x = { data: new Float32Array(n * 2), shape: [n, 2] };
  const e = expectError(() => attn.multiHeadAttention({ x, wq: w, wk: w, wv: w, wo: w }, { heads: 2 }), 'TOO_LARGE', /weights of shape \(2, 40000, 40000\).*wasm32.*weights: false/);
  assert.match(e.message, /11\.9 GiB/);
  const r = attn.multiHeadAttention({ x: { data: new Float32Array(64 * 2).fill(1), shape: [64, 2] }, wq: w, wk: w, wv: w, wo: w }, { heads: 2, weights: false });
  assert.deepEqual(Array.from(r.output.data.subarray(0, 2)), [1, 1]);
});

test('the instance keeps working after every kind of error', () => {
  const c = byName('causal');
  const good = Array.from(run(c).output.data);
  const [inputs, options] = caseArgs(c);
  const bad = [
    () => attn.multiHeadAttention(inputs, { ...options, heads: 3 }),
    () => attn.multiHeadAttention({ ...inputs, bq: [NaN, 0, 0, 0, 0, 0, 0, 0] }, options),
    () => attn.multiHeadAttention({ ...inputs, wq: c.wq.map((r) => r.map(() => 1e30)), wk: c.wq.map((r) => r.map(() => 1e30)) }, options),
    () => attn.multiHeadAttention({ ...inputs, x: { data: new Float32Array(40000 * 8), shape: [40000, 8] } }, options),
  ];
  for (const fn of bad) {
    assert.throws(fn, AttentionError);
    assert.deepEqual(Array.from(run(c).output.data), good);
  }
});

test('3,000 calls, good and bad, do not grow WebAssembly memory', () => {
  const cases = ['cat-eat-fish-2-heads', 'gqa-cross-mask', 'head-width-64', 'mask-fully-masked-row'].map(byName);
  const args = cases.map((c) => caseArgs(c));
  const [inputs, options] = args[0];
  const call = (i) => {
    switch (i % 6) {
      case 0: attn.multiHeadAttention(...args[0]); break;
      case 1: attn.multiHeadAttention(args[1][0], { ...args[1][1], weights: false }); break;
      case 2: attn.multiHeadAttention(...args[2 + ((i >> 3) & 1)]); break;
      case 3: assert.throws(() => attn.multiHeadAttention({ ...inputs, bo: [0, 0, 0, 0, 0, 0, 0, NaN] }, options), AttentionError); break;
      case 4: assert.throws(() => attn.multiHeadAttention({ ...inputs, wq: inputs.wq.map((r) => r.map(() => 1e30)), wk: inputs.wq.map((r) => r.map(() => 1e30)) }, options), AttentionError); break;
      case 5: attn.attention({ q: [[1, 2]], k: [[1, 2], [3, 4]], v: [[1], [2]] }); break;
    }
  };
  for (let i = 0; i < 120; i++) call(i);   // warm up the allocator
  const before = attn.memoryBytes;
  for (let i = 0; i < 3000; i++) call(i);
  assert.equal(attn.memoryBytes, before);
});

test('multiHeadAttention is on the package export (its types are checked by tests/package.test.js)', async () => {
  const pkg = await import('attnmap');
  const a = await pkg.createAttention();
  assert.equal(a, attn);
  assert.equal(typeof a.multiHeadAttention, 'function');
});
