// torch-rng.js - PyTorch's CPU random generator, bit for bit, for "re-draw the weights from a seed".
//
//   import { episodeWeights, manualSeed } from 'attnmap/torch-rng';
//   const { x, wq, wk, wv } = episodeWeights(0, 3, 8);   // what the episode's snippet prints after
//                                                        // torch.manual_seed(0)
//   const g = manualSeed(42);                            // or step by step:
//   const X = g.randn(3, 8);                             //   torch.randn(3, 8)
//   const { weight, T } = g.linear(8, 8);                //   nn.Linear(8, 8, bias=False).weight
//
// Checked against PyTorch 1.13 (float32, CPU, default generator) by tests/torch-rng.test.js.
// What is reproduced:
//
// - The engine is at::mt19937: MT19937 seeded with the low 32 bits of the 64-bit seed
//   (init_genrand), so seeds s and s + 2**32 give the same numbers. manual_seed also drops the
//   cached Box-Muller value.
// - Uniform float32 (uniform_, used by nn.Linear): one 32-bit draw, x = (r & 0xffffff) * 2**-24,
//   value = fma(x, to - from, from) in float32, from/to being float32(-bound)/float32(bound). The
//   fused multiply-add matters: the AVX2 kernel is compiled with FMA contraction, and a separate
//   multiply and add differ from torch in about a third of the values.
// - nn.Linear(in, out).weight: kaiming_uniform_(a=sqrt(5)) computes, in float64,
//   bound = sqrt(3) * (sqrt(2 / (1 + a*a)) / sqrt(in)), then fills (out, in) row by row.
// - randn with fewer than 16 elements: at::normal_distribution<double>. Two 64-bit draws
//   (hi word first), u = (r & (2**53 - 1)) * 2**-53, r = sqrt(-2 log(1 - u2)), theta = 2 pi u1,
//   returns r cos(theta) rounded to float32 and caches r sin(theta) in the generator for the next
//   element, also across calls (only manual_seed clears it; the other paths leave it alone).
// - randn with 16 or more elements: normal_fill_AVX2. All n uniform floats are drawn first;
//   each block of 16 is turned into normals by Box-Muller over (i, i + 8) with u1 = 1 - data[i],
//   u2 = data[i + 8], using the float32 Cephes polynomials of avx_mathfun.h (log256_ps,
//   sincos256_ps), again with the multiply-adds fused as GCC contracts them. If n is not a
//   multiple of 16, 16 more uniforms are drawn and the last 16 elements are recomputed from them.
//
// The float64 path uses Math.log/sin/cos. They may differ from glibc's by an ulp of a float64,
// which could only change a value if it lies that close to the midpoint between two float32
// values (about one chance in 10^8; none seen in the checks). Everything else is exact float32
// arithmetic (Math.fround, plus an exact fused multiply-add), so it does not depend on the JS engine.

const MAX_DIM = 4096;
const MAX_SEED = 0xffffffffffffffffn;

// ----------------------------------------------------------------------------
// argument checks

// (<attention-heatmap> passes an integer from 0 to 2**53 - 1: see FULL_API in scripts/build-embed.js)
function checkSeed(seed) {
  FULL_API: if (typeof seed === 'bigint') {
    if (seed < 0n || seed > MAX_SEED) {
      throw new RangeError(`seed must be between 0 and 2**64 - 1, got ${seed}n`);
    }
    return Number(seed & 0xffffffffn);
  }
  FULL_API: if (typeof seed !== 'number') {
    throw new TypeError(`seed must be a number or a BigInt, got ${seed === null ? 'null' : typeof seed}`);
  }
  FULL_API: if (!Number.isInteger(seed) || seed < 0 || seed > Number.MAX_SAFE_INTEGER) {
    throw new RangeError(
      `seed must be an integer between 0 and 2**53 - 1 (use a BigInt up to 2**64 - 1 for larger seeds), got ${seed}`);
  }
  return seed % 0x100000000;
}

function checkDim(value, name, min, max = MAX_DIM) {
  if (typeof value !== 'number') {
    throw new TypeError(`${name} must be a number, got ${value === null ? 'null' : typeof value}`);
  }
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${value}`);
  }
  return value;
}

// ----------------------------------------------------------------------------
// float32 helpers

const fround = Math.fround;
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const dv = new DataView(new ArrayBuffer(8));
const bitsOf = (x) => { f32[0] = x; return u32[0]; };
const fromBits = (b) => { u32[0] = b; return f32[0]; };

// fma(a, b, c) rounded once to float32, for float32 a, b, c. a*b is exact in float64 (24 + 24
// bits); s = a*b + c is then rounded once to float64, and TwoSum gives the exact remainder. Rounding
// s to float32 is right unless s lies exactly halfway between two float32 values while the remainder
// is not zero: then nudge s by one float64 ulp towards the exact value.
function fma32(a, b, c) {
  const p = a * b;
  const s = p + c;
  const bb = s - p;
  const err = (p - (s - bb)) + (c - bb);
  if (err === 0) return fround(s);
  dv.setFloat64(0, s);
  const lo = dv.getUint32(4);
  if ((lo & 0x1fffffff) !== 0x10000000) return fround(s);
  dv.setUint32(4, (err > 0) === (s > 0) ? lo + 1 : lo - 1);
  return fround(dv.getFloat64(0));
}

// ----------------------------------------------------------------------------
// avx_mathfun.h (Cephes single precision), one lane at a time

const C = (v) => fround(v);
const SQRTHF = C(0.7071067811865476);                // Cephes: 0.707106781186547524, the same double
const LOG_P = [7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
  1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1].map(C);
const LOG_Q1 = C(-2.12194440e-4);
const LOG_Q2 = C(0.693359375);
const DP1 = C(-0.78515625);
const DP2 = C(-2.4187564849853515625e-4);
const DP3 = C(-3.774894977445941e-8);                // Cephes: -3.77489497744594108e-8, the same double
const SIN_P = [-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1].map(C);
const COS_P = [2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2].map(C);
const FOPI = C(1.27323954473516);
const TWO_PI = C(2 * Math.PI);

// log256_ps for 0 < x <= 1 (here x = 1 - u >= 2**-24, never denormal)
function logf(x) {
  const b = bitsOf(x);
  let e = (b >>> 23) - 0x7f + 1;
  x = fromBits((b & 0x807fffff) | 0x3f000000);          // mantissa, in [0.5, 1)
  if (x < SQRTHF) { e -= 1; x = fround(fround(x - 1) + x); } else { x = fround(x - 1); }
  const z = fround(x * x);
  let y = LOG_P[0];
  for (let i = 1; i < 9; i++) y = fma32(y, x, LOG_P[i]);
  y = fround(y * x);
  y = fma32(y, z, fround(e * LOG_Q1));
  y = fma32(-z, 0.5, y);                                // z * 0.5 is exact: same as y - z/2
  x = fround(x + y);
  return fma32(e, LOG_Q2, x);                           // e * LOG_Q2 is exact too
}

// sincos256_ps for 0 <= x < 2 pi; writes [sin, cos] into out
function sincosf(x, out) {
  let j = Math.trunc(fround(x * FOPI));
  j = (j + 1) & ~1;
  const y = j;
  x = fma32(y, DP1, x);
  x = fma32(y, DP2, x);
  x = fma32(y, DP3, x);
  const signSin = (j & 4) !== 0;
  const signCos = ((j - 2) & 4) === 0;
  const z = fround(x * x);
  let c = fma32(fma32(COS_P[0], z, COS_P[1]), z, COS_P[2]);
  c = fround(c * z);
  c = fma32(c, z, -fround(z * 0.5));
  c = fround(c + 1);
  let s = fma32(fma32(SIN_P[0], z, SIN_P[1]), z, SIN_P[2]);
  s = fround(s * z);
  s = fma32(s, x, x);
  const poly = (j & 2) === 0;
  const sv = poly ? s : c;
  const cv = poly ? c : s;
  out[0] = signSin ? -sv : sv;
  out[1] = signCos ? -cv : cv;
}

// normal_fill_16_AVX2 with mean 0 and std 1 (fmadd(n, 1, 0) == n)
const sc = [0, 0];
function normalFill16(d, o) {
  for (let j = 0; j < 8; j++) {
    const u1 = fround(1 - d[o + j]);
    const u2 = d[o + j + 8];
    const radius = fround(Math.sqrt(fround(-2 * logf(u1))));
    sincosf(fround(TWO_PI * u2), sc);
    d[o + j] = fround(radius * sc[1]) + 0;              // + 0: fmadd(-0, std, mean = +0) is +0
    d[o + j + 8] = fround(radius * sc[0]) + 0;
  }
}

// ----------------------------------------------------------------------------
// the generator

const TWO_M24 = 2 ** -24;
const TWO_M53 = 2 ** -53;
const TWO_32 = 2 ** 32;

class TorchGenerator {
  #mt = new Uint32Array(624);
  #left = 1;
  #next = 0;
  #cachedNormal = null;
  #seed;

  constructor(seed) {
    this.#seed = seed;
    const mt = this.#mt;
    mt[0] = checkSeed(seed);
    for (let j = 1; j < 624; j++) {
      const p = mt[j - 1];
      mt[j] = Math.imul(1812433253, p ^ (p >>> 30)) + j;
    }
  }

  /** The seed this generator was created with (as given). */
  get initialSeed() { return this.#seed; }

  #twist() {
    const mt = this.#mt;
    for (let k = 0; k < 624; k++) {
      const y = (mt[k] & 0x80000000) | (mt[(k + 1) % 624] & 0x7fffffff);
      mt[k] = mt[(k + 397) % 624] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
    }
    this.#left = 624;
    this.#next = 0;
  }

  /** One 32-bit draw, as CPUGeneratorImpl::random(). */
  random() {
    if (--this.#left === 0) this.#twist();
    let y = this.#mt[this.#next++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  #uniform24() { return (this.random() & 0xffffff) * TWO_M24; }

  #uniform53() {
    const hi = this.random();
    const lo = this.random();
    return ((hi & 0x1fffff) * TWO_32 + lo) * TWO_M53;
  }

  #normal64() {
    if (this.#cachedNormal !== null) {
      const v = this.#cachedNormal;
      this.#cachedNormal = null;
      return v + 0;                                     // transformation::normal: v * 1 + 0
    }
    const u1 = this.#uniform53();
    const u2 = this.#uniform53();
    const r = Math.sqrt(-2 * Math.log(1 - u2));
    const theta = 2 * Math.PI * u1;
    this.#cachedNormal = r * Math.sin(theta);
    return r * Math.cos(theta) + 0;
  }

  /** torch.randn(rows, cols) as a row-major Float32Array. `cols` defaults to 1 (same stream as torch.randn(rows)). */
  randn(rows, cols = 1) {
    checkDim(rows, 'rows', 0);
    checkDim(cols, 'cols', 0);
    const n = rows * cols;
    const out = new Float32Array(n);
    if (n < 16) {
      for (let i = 0; i < n; i++) out[i] = this.#normal64();
      return out;
    }
    for (let i = 0; i < n; i++) out[i] = this.#uniform24();
    for (let i = 0; i + 16 <= n; i += 16) normalFill16(out, i);
    if (n % 16 !== 0) {
      for (let i = n - 16; i < n; i++) out[i] = this.#uniform24();
      normalFill16(out, n - 16);
    }
    return out;
  }

  /** tensor.uniform_(from, to) on a float32 tensor of `count` elements. */
  uniform(count, from, to) {
    checkDim(count, 'count', 0, MAX_DIM * MAX_DIM);
    // FULL_API: linear() passes finite -bound and bound
    FULL_API: if (typeof from !== 'number' || typeof to !== 'number') {
      throw new TypeError(`uniform needs numbers from and to, got ${typeof from} and ${typeof to}`);
    }
    const lo = fround(from);
    const span = fround(fround(to) - lo);
    FULL_API: if (!(from <= to) || !Number.isFinite(span)) {
      throw new RangeError(`uniform needs from <= to with a finite float32 range, got ${from}, ${to}`);
    }
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = fma32(this.#uniform24(), span, lo);
    return out;
  }

  /**
   * nn.Linear(inFeatures, outFeatures, bias=False): `weight` is torch's (out, in) row-major,
   * `T` its transpose (in, out), the episode's layout (Q = X · W_Q).
   */
  linear(inFeatures, outFeatures) {
    checkDim(inFeatures, 'inFeatures', 1);
    checkDim(outFeatures, 'outFeatures', 1);
    // kaiming_uniform_(a=math.sqrt(5)): gain = sqrt(2 / (1 + a ** 2)), std = gain / sqrt(fan_in),
    // bound = sqrt(3) * std, all float64 exactly as in torch/nn/init.py
    const a = Math.sqrt(5);
    const gain = Math.sqrt(2 / (1 + a * a));
    const bound = Math.sqrt(3) * (gain / Math.sqrt(inFeatures));
    const weight = this.uniform(inFeatures * outFeatures, -bound, bound);
    const T = new Float32Array(weight.length);
    for (let o = 0; o < outFeatures; o++) {
      for (let i = 0; i < inFeatures; i++) T[i * outFeatures + o] = weight[o * inFeatures + i];
    }
    return { weight, T };
  }
}

/** torch.manual_seed(seed): a fresh generator in the state torch's default CPU generator has after it. */
export function manualSeed(seed) {
  return new TorchGenerator(seed);
}

/**
 * The episode's snippet after torch.manual_seed(seed):
 *   X = torch.randn(n, d_model)
 *   W_q = nn.Linear(d_model, d_k, bias=False); W_k = ... (d_model, d_k); W_v = ... (d_model, d_v)
 * Weights are returned transposed, in the episode's layout: wq (d_model, d_k), Q = X · wq.
 */
export function episodeWeights(seed, n, dModel, dK = dModel, dV = dK) {
  checkDim(n, 'n', 1);
  checkDim(dModel, 'dModel', 1);
  checkDim(dK, 'dK', 1);
  checkDim(dV, 'dV', 1);
  const g = manualSeed(seed);
  const x = g.randn(n, dModel);
  const wq = g.linear(dModel, dK).T;
  const wk = g.linear(dModel, dK).T;
  const wv = g.linear(dModel, dV).T;
  return {
    x: { data: x, shape: [n, dModel] },
    wq: { data: wq, shape: [dModel, dK] },
    wk: { data: wk, shape: [dModel, dK] },
    wv: { data: wv, shape: [dModel, dV] },
  };
}
