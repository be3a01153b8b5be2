// The argument readers under a property test: thousands of seeded random calls of attention,
// selfAttention and multiHeadAttention in which one argument is hostile: a typed-array subclass
// whose `length` lies (shorter or longer than the real one), a Proxy over a typed array or an
// array whose `length` changes between reads, index getters, a mask subclass, a bias that lies,
// getters that throw, getters that detach another argument's buffer after it was checked.
// The property: every call either returns results of the promised shapes or throws an
// AttentionError with a known code, and afterwards the same instance still gives, bit for bit,
// what a fresh instance gives for a call of 40+ rows (issue 11: one lying `length` used to
// overflow the heap, and every later call of 40 rows or more trapped).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createAttention, AttentionError, ErrorCode } from '../../web/core/attention.js';
import { root, seeded } from '../helpers.js';

const CODES = new Set(Object.values(ErrorCode));
const wasm = fs.readFileSync(path.join(root, 'web/wasm/attention.wasm'));

// The canary: 48 queries × 64 keys, both the row path (weights) and the tiled path, then a
// call whose buffers (1.4 MiB) outgrow the kept scratch block, so that it needs a fresh block
// from the heap: a heap whose bookkeeping was overwritten fails there.
const r7 = seeded(7);
const mat = (rows, cols) => ({ data: Float32Array.from({ length: rows * cols }, () => r7() * 2 - 1), shape: [rows, cols] });
const CQ = mat(48, 16), CK = mat(64, 16), CV = mat(64, 8), BIG = mat(600, 4);
function canary(attn) {
  const a = attn.attention({ q: CQ, k: CK, v: CV }, { causal: true });
  const b = attn.attention({ q: CQ, k: CK, v: CV }, { weights: false });
  const c = attn.attention({ q: BIG, k: BIG, v: BIG });
  return [...a.output.data, ...a.weights.data, ...b.output.data, ...c.output.data.subarray(0, 64)];
}

// hostile forms of a (rows, cols) matrix argument; `rand` picks the numbers
function hostileMatrix(rand, rows, cols, pick) {
  const count = rows * cols;
  const values = Array.from({ length: count }, () => rand() - 0.5);
  const real = (extra) => Float32Array.from({ length: Math.max(0, count + extra) }, (_, i) => values[i] ?? 0.25);
  const lie = (Base, realExtra, claimed) => {
    class Lying extends Base { get length() { return claimed; } }
    const x = new Lying(Math.max(0, count + realExtra));
    x.set(real(realExtra).subarray(0, x.length));
    return x;
  };
  switch (pick) {
    case 0: return { data: lie(Float32Array, 50000, count), shape: [rows, cols] };        // claims count, holds 50,000 more
    case 1: return { data: lie(Float64Array, 50000, count), shape: [rows, cols] };
    case 2: return { data: lie(Float32Array, -1, count), shape: [rows, cols] };            // holds one fewer
    case 3: {                                                                                // length changes on every read
      let reads = 0;
      const target = real(50000);
      return { data: new Proxy(target, { get: (t, key) => (key === 'length' ? (reads++ === 0 ? count : t.length) : t[key]) }), shape: [rows, cols] };
    }
    case 4: {                                                                                // an array whose length grows after the check
      let reads = 0;
      const target = values.slice();
      return { data: new Proxy(target, { get: (t, key) => (key === 'length' ? (reads++ === 0 ? count : count + 50000) : t[key]) }), shape: [rows, cols] };
    }
    case 5: {                                                                                // index getters that change their answer
      const arr = values.slice();
      let calls = 0;
      Object.defineProperty(arr, 0, { get: () => (calls++ ? 1e39 : 0.5) });
      return { data: arr, shape: [rows, cols] };
    }
    case 6: return Array.from({ length: rows }, () => lie(Float32Array, 10000, cols)); // rows that lie
    case 7: return { data: real(0), get shape() { throw new Error('shape getter'); } };
    default: return { data: real(0), shape: [rows, cols] };                                  // honest
  }
}

function hostileMask(rand, n, m, pick) {
  class LyingMask extends Uint8Array { get length() { return n * m; } }
  switch (pick) {
    case 0: { const x = new LyingMask(n * m + 60000); x.fill(1); return { data: x, shape: [n, m] }; }
    case 1: { const x = new LyingMask(Math.max(0, n * m - 1)); x.fill(1); return { data: x, shape: [n, m] }; }
    case 2: {
      let reads = 0;
      const t = new Uint8Array(n * m + 60000).fill(1);
      return { data: new Proxy(t, { get: (o, key) => (key === 'length' ? (reads++ === 0 ? n * m : o.length) : o[key]) }), shape: [n, m] };
    }
    default: return undefined;
  }
}

function checkShape(matrix, rows, cols, what) {
  assert.deepEqual(matrix.shape, [rows, cols], what);
  assert.equal(matrix.data.length, rows * cols, what);
}

test('property: hostile argument readers never corrupt the instance (3,000 seeded calls)', async () => {
  const attn = await createAttention({ wasm });
  const expected = canary(await createAttention({ wasm }));
  const rand = seeded(2026);
  const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
  let returned = 0, refused = 0;
  for (let iter = 0; iter < 3000; iter++) {
    const op = int(0, 2), n = int(1, 12), m = int(1, 12), d = 4 * int(1, 3);
    const slot = int(0, 4), pick = int(0, 8);
    const honest = (rows, cols) => hostileMatrix(rand, rows, cols, 8);
    const arg = (i, rows, cols) => (i === slot ? hostileMatrix(rand, rows, cols, pick) : honest(rows, cols));
    let call;
    if (op === 0) {
      const inputs = { q: arg(0, n, d), k: arg(1, m, d), v: arg(2, m, 3) };
      const mask = slot === 3 ? hostileMask(rand, n, m, int(0, 3)) : undefined;
      // a getter that detaches q's buffer after q was checked (it is read after q)
      if (slot === 4 && inputs.q.data instanceof Float32Array) {
        const v = inputs.v;
        Object.defineProperty(inputs, 'v', { enumerable: true, get: () => { structuredClone(inputs.q.data.buffer, { transfer: [inputs.q.data.buffer] }); return v; } });
      }
      call = () => {
        const r = attn.attention(inputs, mask ? { mask } : undefined);
        checkShape(r.output, n, 3, 'output'); checkShape(r.weights, n, m, 'weights');
      };
    } else if (op === 1) {
      const inputs = { x: arg(0, n, d), wq: arg(1, d, 4), wk: arg(2, d, 4), wv: arg(3, d, 4) };
      call = () => { const r = attn.selfAttention(inputs, { causal: true }); checkShape(r.weights, n, n, 'weights'); };
    } else {
      const lyingBias = slot === 4 ? (() => { class L extends Float32Array { get length() { return d; } } return new L(d + 40000).fill(0.1); })() : undefined;
      const inputs = { x: arg(0, n, d), wq: arg(1, d, d), wk: arg(2, d, d), wv: arg(3, d, d), wo: honest(d, d), bq: lyingBias };
      call = () => { const r = attn.multiHeadAttention(inputs, { heads: 2 }); checkShape(r.output, n, d, 'output'); };
    }
    try {
      call();
      returned++;
    } catch (e) {
      if (e instanceof assert.AssertionError) throw e;
      assert.ok(e instanceof AttentionError, `call ${iter} (op ${op}, slot ${slot}, pick ${pick}) threw ${e?.constructor?.name}: ${e?.message}`);
      assert.ok(CODES.has(e.code), `call ${iter}: unknown code ${e.code}`);
      refused++;
    }
    if (iter % 50 === 49 || pick !== 8) {
      let got;
      try { got = canary(attn); } catch (e) { assert.fail(`after call ${iter} (op ${op}, slot ${slot}, pick ${pick}) the instance fails: ${e}`); }
      assert.deepEqual(got, expected, `after call ${iter} (op ${op}, slot ${slot}, pick ${pick}) the instance gives other numbers`);
    }
  }
  assert.ok(returned > 300 && refused > 300, `both outcomes exercised: ${returned} returned, ${refused} refused`);
});

test('a Float32Array subclass whose length lies is measured by its real length (issue 11 reproduction)', async () => {
  const attn = await createAttention({ wasm });
  class Lying extends Float32Array { get length() { return 12; } }
  const q = new Lying(50000).fill(0.5);
  assert.throws(() => attn.attention({ q: { data: q, shape: [3, 4] }, k: [[1, 2, 3, 4]], v: [[1]] }),
    (e) => e instanceof AttentionError && e.code === 'SHAPE_MISMATCH' && /q\.data has 50000 values but shape \(3, 4\) needs 12/.test(e.message));
  const big = { data: new Float32Array(40 * 8).fill(0.1), shape: [40, 8] };
  assert.equal(attn.attention({ q: big, k: big, v: big }).output.shape[0], 40);
});

test('what a caller\'s getter or Proxy trap throws comes out as AttentionError INVALID_ARGUMENT', async () => {
  const attn = await createAttention({ wasm });
  const trap = new Proxy({}, { has() { throw new Error('has trap'); }, get() { throw new Error('get trap'); } });
  const inputs = [
    ['attention', { q: trap, k: [[1]], v: [[1]] }, undefined],
    ['attention', { q: [[1]], k: [[1]], v: [[1]] }, trap],
    ['selfAttention', { get x() { throw new TypeError('x getter'); }, wq: [[1]], wk: [[1]], wv: [[1]] }, undefined],
    ['multiHeadAttention', { x: [[1, 2]], wq: trap, wk: [[1, 0], [0, 1]], wv: [[1, 0], [0, 1]], wo: [[1, 0], [0, 1]] }, { heads: 1 }],
    ['multiHeadAttention', { x: [[1, 2]], wq: [[1, 0], [0, 1]], wk: [[1, 0], [0, 1]], wv: [[1, 0], [0, 1]], wo: [[1, 0], [0, 1]] }, { get heads() { throw new Error('heads getter'); } }],
  ];
  for (const [fn, args, options] of inputs) {
    assert.throws(() => attn[fn](args, options), (e) => e instanceof AttentionError && e.code === 'INVALID_ARGUMENT' && e.message.startsWith(fn),
      `${fn} with a throwing getter`);
  }
});
