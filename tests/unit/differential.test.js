// Differential check: thousands of random shapes and options through the JS API, against a
// float64 reference written here in plain JS, with the project's one tolerance
// (tests/helpers.js ATOL/RTOL). Seeded: the seed is printed, DIFF_SEED=<seed> replays a run,
// DIFF_CASES=<count> changes the number of attention() cases.
//
// Shapes: n, m, d_k, d_v from 1 to 80 (odd ones included); options: causal, masks (with
// fully masked rows), custom scale (0 included), weights true and false, so that both the row
// path and the tiled path (weights: false, m >= 32) run, and the first long calls are cut
// into row ranges by the wrapper. Some cases go through selfAttention and
// multiHeadAttention too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { createAttention } from '../../web/core/attention.js';
import { assertClose, referenceAttention as reference } from '../helpers.js';

const SEED = process.env.DIFF_SEED !== undefined ? Number(process.env.DIFF_SEED) >>> 0 : crypto.randomBytes(4).readUInt32LE(0);
const CASES = Number(process.env.DIFF_CASES || 5000);
console.log(`# differential seed ${SEED} (replay: DIFF_SEED=${SEED} node --test tests/differential.test.js)`);

// mulberry32: small, fast, good enough to draw test cases
function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = (xs) => xs[Math.floor(next() * xs.length)];
  return { next, int, pick, chance: (p) => next() < p };
}

const attn = await createAttention();
const fround = Math.fround;

// ----------------------------------------------------------------------------
// the reference, in float64, on the float32 values the core receives

/** a (n, c) · b (c, p) in float64, plus an optional bias (p). */
function matmul(a, b, n, c, p, bias) {
  const out = new Float64Array(n * p);
  for (let i = 0; i < n; i++) {
    for (let t = 0; t < c; t++) { const x = a[i * c + t]; for (let j = 0; j < p; j++) out[i * p + j] += x * b[t * p + j]; }
    if (bias) for (let j = 0; j < p; j++) out[i * p + j] += bias[j];
  }
  return out;
}

// ----------------------------------------------------------------------------
// drawing cases

function drawDim(r) {
  const u = r.next();
  if (u < 0.3) return r.int(1, 8);
  if (u < 0.7) return r.int(9, 40);
  return r.int(41, 80);
}

/** Values as float32 (a Float32Array); amplitude a; some exact zeros, -0 and repeated rows. */
function drawValues(r, rows, cols, a) {
  const x = new Float32Array(rows * cols);
  for (let i = 0; i < x.length; i++) x[i] = (r.next() * 2 - 1) * a;
  if (r.chance(0.1)) x[r.int(0, x.length - 1)] = 0;
  if (r.chance(0.05)) x[r.int(0, x.length - 1)] = -0;
  if (rows > 1 && r.chance(0.1)) x.copyWithin(0, cols, 2 * cols);  // a repeated row (ties)
  return x;
}

/** The same matrix in one of the argument forms the API takes. */
function asArgument(r, x, rows, cols) {
  switch (r.int(0, 3)) {
    case 0: return { data: x, shape: [rows, cols] };
    case 1: return { data: Float64Array.from(x), shape: [rows, cols] };
    case 2: return Array.from({ length: rows }, (_, i) => Array.from(x.subarray(i * cols, (i + 1) * cols)));
    default: return Array.from({ length: rows }, (_, i) => x.slice(i * cols, (i + 1) * cols));  // Float32Array rows
  }
}

function drawMask(r, n, m) {
  const density = r.pick([0.1, 0.5, 0.9]);
  const mask = Array.from({ length: n }, () => Array.from({ length: m }, () => r.chance(density)));
  for (let i = 0; i < n; i++) if (r.chance(0.1)) mask[i].fill(false);  // fully masked rows
  if (r.chance(0.5)) return { rows: mask, arg: mask };
  return { rows: mask, arg: { data: Uint8Array.from(mask.flat(), (b) => (b ? r.int(1, 255) : 0)), shape: [n, m] } };
}

function drawScale(r, dk) {
  if (r.chance(0.6)) return undefined;
  return r.pick([0, 1e-3, r.next() * 2 / Math.sqrt(dk), 1 / dk, -0]);
}

// ----------------------------------------------------------------------------

let worst = 0, worstLabel = '';
const track = (d, label) => { if (d > worst) { worst = d; worstLabel = label; } };
const stats = { rowPath: 0, tiledPath: 0, masked: 0, causal: 0, fullyMaskedRows: 0, scaleZero: 0, self: 0, mha: 0 };

test(`attention(): ${CASES} random cases against a float64 reference`, () => {
  const r = rng(SEED);
  for (let t = 0; t < CASES; t++) {
    const n = drawDim(r), m = r.chance(0.35) ? r.int(32, 80) : drawDim(r), dk = drawDim(r), dv = drawDim(r);
    const a = r.pick([0.5, 1, 2]);
    const q = drawValues(r, n, dk, a), k = drawValues(r, m, dk, a), v = drawValues(r, m, dv, a);
    const causal = r.chance(0.3), mask = r.chance(0.3) ? drawMask(r, n, m) : null;
    const scale = drawScale(r, dk), weights = r.chance(0.5);
    const options = { causal, weights };
    if (scale !== undefined) options.scale = scale;
    if (mask) options.mask = mask.arg;
    const label = `case ${t} (DIFF_SEED=${SEED}): n ${n} m ${m} d_k ${dk} d_v ${dv} causal ${causal} mask ${!!mask} scale ${scale} weights ${weights}`;

    const res = attn.attention({ q: asArgument(r, q, n, dk), k: asArgument(r, k, m, dk), v: asArgument(r, v, m, dv) }, options);
    const allowed = (i, j) => !(causal && j > i) && (!mask || mask.rows[i][j]);
    const eff = scale === undefined ? fround(1 / Math.sqrt(dk)) : fround(scale);
    const ref = reference(q, k, v, n, m, dk, dv, eff, allowed);

    assert.deepEqual(res.output.shape, [n, dv], label);
    track(assertClose(res.output, ref.output, `${label}: output`), `${label}: output`);
    if (weights) {
      assert.deepEqual(res.weights.shape, [n, m], label);
      track(assertClose(res.weights, ref.weights, `${label}: weights`), `${label}: weights`);
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < m; j++) if (!allowed(i, j)) assert.equal(res.weights.data[i * m + j], 0, `${label}: masked weights[${i}][${j}]`);
      }
    } else {
      assert.equal(res.weights, undefined, label);
    }
    stats[weights || m < 32 ? 'rowPath' : 'tiledPath']++;
    if (mask) stats.masked++;
    if (causal) stats.causal++;
    if (scale === 0) stats.scaleZero++;
    for (let i = 0; i < n; i++) if (!Array.from({ length: m }, (_, j) => allowed(i, j)).some(Boolean)) stats.fullyMaskedRows++;
  }
  console.log(`# attention: ${CASES} cases, row path ${stats.rowPath}, tiled path ${stats.tiledPath}, masked ${stats.masked}, ` +
    `causal ${stats.causal}, scale 0 ${stats.scaleZero}, fully masked rows ${stats.fullyMaskedRows}`);
  assert.ok(stats.tiledPath > CASES / 10 && stats.rowPath > CASES / 10, 'both kernels ran');
});

test('selfAttention(): random cases, every intermediate against float64', () => {
  const r = rng(SEED ^ 0x5e1f);
  const count = Math.max(50, Math.round(CASES / 10));
  for (let t = 0; t < count; t++) {
    const n = r.int(1, 40), dm = r.int(1, 24), dk = r.int(1, 24), dv = r.int(1, 24);
    const x = drawValues(r, n, dm, 1), wq = drawValues(r, dm, dk, 0.5), wk = drawValues(r, dm, dk, 0.5), wv = drawValues(r, dm, dv, 0.5);
    const causal = r.chance(0.4), mask = r.chance(0.3) ? drawMask(r, n, n) : null, scale = drawScale(r, dk);
    const options = { causal };
    if (scale !== undefined) options.scale = scale;
    if (mask) options.mask = mask.arg;
    const label = `self case ${t} (DIFF_SEED=${SEED}): n ${n} d_model ${dm} d_k ${dk} d_v ${dv} causal ${causal} mask ${!!mask} scale ${scale}`;
    const res = attn.selfAttention({ x: asArgument(r, x, n, dm), wq: asArgument(r, wq, dm, dk), wk: asArgument(r, wk, dm, dk), wv: asArgument(r, wv, dm, dv) }, options);
    const Q = matmul(x, wq, n, dm, dk), K = matmul(x, wk, n, dm, dk), V = matmul(x, wv, n, dm, dv);
    for (const [name, e] of [['q', Q], ['k', K], ['v', V]]) track(assertClose(res[name], e, `${label}: ${name}`), `${label}: ${name}`);
    // the rest from the core's own float32 Q, K, V (the projections' rounding is checked above)
    const q32 = res.q.data, k32 = res.k.data, v32 = res.v.data;
    const eff = scale === undefined ? fround(1 / Math.sqrt(dk)) : fround(scale);
    const scores = matmul(q32, Float64Array.from({ length: dk * n }, (_, i) => k32[(i % n) * dk + Math.floor(i / n)]), n, dk, n);
    track(assertClose(res.scores, scores, `${label}: scores`), `${label}: scores`);
    track(assertClose(res.scaled, scores.map((s) => s * eff), `${label}: scaled`), `${label}: scaled`);
    const allowed = (i, j) => !(causal && j > i) && (!mask || mask.rows[i][j]);
    const ref = reference(q32, k32, v32, n, n, dk, dv, eff, allowed);
    track(assertClose(res.weights, ref.weights, `${label}: weights`), `${label}: weights`);
    track(assertClose(res.output, ref.output, `${label}: output`), `${label}: output`);
    stats.self++;
  }
});

test('multiHeadAttention(): random heads, grouped-query, cross-attention, biases', { skip: typeof attn.multiHeadAttention !== 'function' && 'no multiHeadAttention in this build' }, () => {
  const r = rng(SEED ^ 0x3a11);
  const count = Math.max(50, Math.round(CASES / 10));
  for (let t = 0; t < count; t++) {
    const heads = r.int(1, 6), dh = r.int(1, 8), dm = heads * dh;
    const divisors = Array.from({ length: heads }, (_, i) => i + 1).filter((g) => heads % g === 0);
    const g = r.pick(divisors), dkv = g * dh;
    const n = r.int(1, 24), cross = r.chance(0.4), m = cross ? r.int(1, 48) : n;
    const x = drawValues(r, n, dm, 1), kv = cross ? drawValues(r, m, dm, 1) : null;
    const w = (rows, cols) => drawValues(r, rows, cols, 1 / Math.sqrt(rows));
    const wq = w(dm, dm), wk = w(dm, dkv), wv = w(dm, dkv), wo = w(dm, dm);
    const bias = (len) => (r.chance(0.5) ? drawValues(r, 1, len, 0.5) : null);
    const bq = bias(dm), bk = bias(dkv), bv = bias(dkv), bo = bias(dm);
    const causal = r.chance(0.3), mask = r.chance(0.3) ? drawMask(r, n, m) : null, scale = drawScale(r, dh);
    const weights = r.chance(0.5);
    const inputs = { x: asArgument(r, x, n, dm), wq: asArgument(r, wq, dm, dm), wk: asArgument(r, wk, dm, dkv), wv: asArgument(r, wv, dm, dkv), wo: asArgument(r, wo, dm, dm) };
    if (kv) inputs.kv = asArgument(r, kv, m, dm);
    for (const [name, b] of [['bq', bq], ['bk', bk], ['bv', bv], ['bo', bo]]) if (b) inputs[name] = r.chance(0.5) ? b : Array.from(b);
    const options = { heads, causal, weights };
    if (g !== heads || r.chance(0.5)) options.kvHeads = g;
    if (scale !== undefined) options.scale = scale;
    if (mask) options.mask = mask.arg;
    const label = `mha case ${t} (DIFF_SEED=${SEED}): n ${n} m ${m} d_model ${dm} heads ${heads} kvHeads ${g} cross ${cross} causal ${causal} mask ${!!mask} scale ${scale} weights ${weights}`;
    const res = attn.multiHeadAttention(inputs, options);

    const Q = matmul(x, wq, n, dm, dm, bq), K = matmul(kv ?? x, wk, m, dm, dkv, bk), V = matmul(kv ?? x, wv, m, dm, dkv, bv);
    const eff = scale === undefined ? fround(1 / Math.sqrt(dh)) : fround(scale);
    const allowed = (i, j) => !(causal && j > i) && (!mask || mask.rows[i][j]);
    const concat = new Float64Array(n * dm);
    for (let h = 0; h < heads; h++) {
      const kvh = Math.floor(h / (heads / g));
      const cols = (A, rows, width, c0) => Float64Array.from({ length: rows * dh }, (_, i) => A[Math.floor(i / dh) * width + c0 + (i % dh)]);
      const ref = reference(cols(Q, n, dm, h * dh), cols(K, m, dkv, kvh * dh), cols(V, m, dkv, kvh * dh), n, m, dh, dh, eff, allowed);
      if (weights) track(assertClose(res.weights[h], ref.weights, `${label}: weights[${h}]`), `${label}: weights[${h}]`);
      track(assertClose(res.heads[h], ref.output, `${label}: heads[${h}]`), `${label}: heads[${h}]`);
      for (let i = 0; i < n; i++) for (let c = 0; c < dh; c++) concat[i * dm + h * dh + c] = ref.output[i * dh + c];
    }
    track(assertClose(res.concat, concat, `${label}: concat`), `${label}: concat`);
    track(assertClose(res.output, matmul(concat, wo, n, dm, dm, bo), `${label}: output`), `${label}: output`);
    stats.mha++;
  }
});

test('report', () => {
  console.log(`# largest difference ${worst.toExponential(3)} (${worstLabel}); tolerance ${1e-5} + ${1.3e-6}·|e|`);
  assert.ok(worst > 0, 'the comparisons ran');
});
