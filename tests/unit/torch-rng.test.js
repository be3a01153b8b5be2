// web/rng/torch-rng.js against PyTorch: every case of tests/golden/torch-rng.json, bit for bit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { manualSeed, episodeWeights } from '../../web/rng/torch-rng.js';
import { root, golden } from '../helpers.js';

// Seeds up to 2**64 - 1 do not survive JSON.parse as numbers: read them as strings.
const text = fs.readFileSync(path.join(root, 'tests/golden/torch-rng.json'), 'utf8');
const data = JSON.parse(text.replace(/"seed":(\d+)/g, '"seed":"$1"'));
const seedOf = (s) => (BigInt(s) <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(s) : BigInt(s));

const hex = (x) => {
  const b = new Uint32Array(Float32Array.of(x).buffer)[0];
  return `0x${b.toString(16).padStart(8, '0')}`;
};

/** Exact comparison: same length and the same float32 bits everywhere (so -0 != +0). */
function assertBits(actual, expected, label) {
  const flat = Array.isArray(expected[0]) ? expected.flat() : expected;
  assert.ok(actual instanceof Float32Array, `${label}: not a Float32Array`);
  assert.equal(actual.length, flat.length, `${label}: ${actual.length} values, expected ${flat.length}`);
  for (const v of flat) assert.equal(Math.fround(v), v, `${label}: golden value ${v} is not a float32`);
  const want = Float32Array.from(flat);
  const a = new Uint32Array(actual.buffer, actual.byteOffset, actual.length);
  const e = new Uint32Array(want.buffer);
  for (let i = 0; i < e.length; i++) {
    if (a[i] !== e[i]) {
      let count = 0;
      for (let j = i; j < e.length; j++) if (a[j] !== e[j]) count++;
      assert.fail(`${label}: first difference at index ${i} of ${e.length}: got ${actual[i]} (${hex(actual[i])}), ` +
        `torch ${want[i]} (${hex(want[i])}); ${count} values differ`);
    }
  }
}

test('golden data: version, torch, AVX2 kernels, coverage', () => {
  assert.equal(data.version, 1);
  assert.match(data.torch, /^1\.13/);
  assert.equal(data.cpu_capability, 'AVX2');
  assert.equal(data.generator, 'tests/golden/make_torch_rng.py');
  for (const seed of ['0', '42']) {
    const ns = data.cases.filter((c) => c.seed === seed && c.d_model === 8 && c.d_k === 8).map((c) => c.n);
    for (let n = 1; n <= 16; n++) assert.ok(ns.includes(n), `seed ${seed}: no case with n = ${n}`);
  }
  for (const d of [4, 8, 16, 64]) assert.ok(data.cases.some((c) => c.d_model === d), `no case with d_model ${d}`);
  assert.ok(data.cases.some((c) => c.d_k !== c.d_v));
  assert.ok(data.cases.some((c) => c.n * c.d_model < 16) && data.cases.some((c) => c.n * c.d_model >= 16));
});

for (const c of data.cases) {
  const path = c.n * c.d_model < 16 ? 'float64 path' : 'vectorised path';
  test(`seed ${c.seed}: X (${c.n}×${c.d_model}, ${path}), W_q/W_k (${c.d_model}×${c.d_k}), W_v (${c.d_model}×${c.d_v})`, () => {
    const r = episodeWeights(seedOf(c.seed), c.n, c.d_model, c.d_k, c.d_v);
    assert.deepEqual(r.x.shape, [c.n, c.d_model]);
    assert.deepEqual(r.wq.shape, [c.d_model, c.d_k]);
    assert.deepEqual(r.wk.shape, [c.d_model, c.d_k]);
    assert.deepEqual(r.wv.shape, [c.d_model, c.d_v]);
    for (const key of ['x', 'wq', 'wk', 'wv']) assertBits(r[key].data, c[key], `seed ${c.seed} n ${c.n} ${key}`);
  });
}

for (const s of data.sequences) {
  test(`seed ${s.seed}: a sequence of randn and Linear calls on one generator`, () => {
    const g = manualSeed(seedOf(s.seed));
    s.ops.forEach(([op, a, b], k) => {
      const got = op === 'randn' ? g.randn(a, b) : g.linear(a, b).weight;
      assertBits(got, s.results[k], `seed ${s.seed} op ${k} ${op}(${a}, ${b})`);
    });
  });
}

test("the episode snippet's own X and W for seeds 0, 42, 2024 (tests/golden/attention.json)", () => {
  const cases = golden().cases.filter((c) => c.name.startsWith('episode-snippet-seed-'));
  assert.ok(cases.some((c) => c.name === 'episode-snippet-seed-0'));
  for (const c of cases) {
    const seed = Number(c.name.slice('episode-snippet-seed-'.length));
    const r = episodeWeights(seed, 3, 8);
    for (const key of ['x', 'wq', 'wk', 'wv']) assertBits(r[key].data, c[key], `${c.name} ${key}`);
  }
});

test('only the low 32 bits of the seed count; Number and BigInt seeds agree', () => {
  const ref = episodeWeights(5, 3, 8);
  for (const seed of [5n, 2 ** 32 + 5, 2n ** 32n + 5n, 2n ** 63n + 5n, 2n ** 64n - 2n ** 32n + 5n]) {
    const r = episodeWeights(seed, 3, 8);
    for (const key of ['x', 'wq', 'wk', 'wv']) assertBits(r[key].data, Array.from(ref[key].data), `seed ${seed} ${key}`);
  }
  assert.equal(manualSeed(2n ** 64n - 1n).randn(1, 1)[0], manualSeed(2 ** 32 - 1).randn(1, 1)[0]);
  assert.equal(manualSeed(Number.MAX_SAFE_INTEGER).random(), manualSeed(0xffffffff).random());
});

test('linear: weight is (out, in), T its transpose; a generator is a stream', () => {
  const g = manualSeed(3);
  const { weight, T } = g.linear(5, 2);
  assert.equal(weight.length, 10);
  for (let o = 0; o < 2; o++) for (let i = 0; i < 5; i++) assert.equal(T[i * 2 + o], weight[o * 5 + i]);
  const bound = 1 / Math.sqrt(5);
  for (const w of weight) assert.ok(w >= -bound && w < bound);
  // randn(2, 8) then randn(2, 8) is not randn(4, 8), but it is the same stream as torch's
  const h = manualSeed(3);
  assertBits(h.linear(5, 2).weight, Array.from(weight), 'same seed, same weights');
  assert.equal(manualSeed(0).randn(0, 5).length, 0);
});

test('bad arguments throw TypeError or RangeError with a clear message', () => {
  const badSeeds = [
    [-1, RangeError, /seed must be an integer between 0 and 2\*\*53 - 1/],
    [1.5, RangeError, /got 1\.5/],
    [NaN, RangeError, /got NaN/],
    [Infinity, RangeError, /seed/],
    [2 ** 53, RangeError, /BigInt/],
    [-1n, RangeError, /between 0 and 2\*\*64 - 1, got -1n/],
    [2n ** 64n, RangeError, /2\*\*64 - 1/],
    ['42', TypeError, /seed must be a number or a BigInt, got string/],
    [null, TypeError, /got null/],
    [undefined, TypeError, /got undefined/],
  ];
  for (const [seed, type, msg] of badSeeds) {
    assert.throws(() => manualSeed(seed), (e) => e instanceof type && msg.test(e.message), `seed ${String(seed)}`);
    assert.throws(() => episodeWeights(seed, 3, 8), type, `episodeWeights seed ${String(seed)}`);
  }
  const badSizes = [
    [[0, 0, 8], RangeError, /n must be an integer from 1 to 4096, got 0/],
    [[0, -1, 8], RangeError, /n must be .* got -1/],
    [[0, 2.5, 8], RangeError, /n must be .* got 2\.5/],
    [[0, 3, 4097], RangeError, /dModel must be an integer from 1 to 4096, got 4097/],
    [[0, 3, 8, 0], RangeError, /dK must be/],
    [[0, 3, 8, 8, NaN], RangeError, /dV must be .* got NaN/],
    [[0, '3', 8], TypeError, /n must be a number, got string/],
  ];
  for (const [args, type, msg] of badSizes) {
    assert.throws(() => episodeWeights(...args), (e) => e instanceof type && msg.test(e.message), `episodeWeights(${args})`);
  }
  const g = manualSeed(0);
  assert.throws(() => g.randn(-1, 2), /rows must be an integer from 0 to 4096, got -1/);
  assert.throws(() => g.randn(2, 1.5), RangeError);
  assert.throws(() => g.randn(5000, 1), RangeError);
  assert.throws(() => g.linear(0, 4), /inFeatures must be an integer from 1 to 4096, got 0/);
  assert.throws(() => g.linear(4, 4097), /outFeatures/);
  assert.throws(() => g.linear(4, 2n), TypeError);
  assert.throws(() => g.uniform(4, 1, 0), RangeError);
  // a failed call draws nothing
  assertBits(g.randn(3, 8), Array.from(manualSeed(0).randn(3, 8)), 'after errors');
});
