// model-helpers.js - safetensors files and small random GPT-2 checkpoints for the tests (not a
// test file itself). The float16/bfloat16 rounding here is written apart from
// web/model/load/safetensors.js on purpose: the tests check one against the other and both against
// bit patterns worked out by hand.
import assert from 'node:assert/strict';
import { seeded } from './helpers.js';

// ----------------------------------------------------------------------------
// float32 -> float16 / bfloat16 bits, round to nearest, ties to even

const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);

/** The float16 bits nearest to x (ties to even); NaN -> 0x7e00, overflow -> ±Inf. */
export function toF16Bits(x) {
  f32[0] = x;
  const b = u32[0], sign = (b >>> 16) & 0x8000, exp = (b >>> 23) & 0xff, mant = b & 0x7fffff;
  if (exp === 0xff) return sign | (mant ? 0x7e00 : 0x7c00);
  // value = 1.mant · 2^(exp - 127); float16 normal exponents are -14 … 15
  const e = exp - 127;
  if (e > 15) return sign | 0x7c00;
  if (e >= -14) {
    let h = ((e + 15) << 10) | (mant >>> 13);
    const rest = mant & 0x1fff;                                   // 13 bits dropped
    if (rest > 0x1000 || (rest === 0x1000 && (h & 1))) h++;        // may carry into the exponent: still right
    return sign | h;
  }
  // a float16 subnormal (or 0): in units of 2^-24 the value is sig · 2^(e + 1), sig the 24-bit significand
  if (exp === 0) return sign;                                      // float32 subnormals are far below 2^-25
  const sig = mant | 0x800000, drop = -(e + 1);                    // drop >= 14 bits
  if (drop > 24) return sign;                                      // below half of 2^-24
  const h = Math.floor(sig / 2 ** drop), rem = sig - h * 2 ** drop, half = 2 ** (drop - 1);
  return sign | (rem > half || (rem === half && (h & 1)) ? h + 1 : h);
}

/** The bfloat16 bits nearest to x (ties to even); NaN -> 0x7fc0. */
export function toBF16Bits(x) {
  f32[0] = x;
  const b = u32[0];
  if (((b >>> 23) & 0xff) === 0xff && (b & 0x7fffff)) return ((b >>> 16) & 0x8000) | 0x7fc0;
  return ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
}

/** float16 bits -> number (for the expected values of randomGpt2). */
export function fromF16Bits(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/** bfloat16 bits -> number. */
export function fromBF16Bits(h) {
  u32[0] = (h << 16) >>> 0;
  return f32[0];
}

// ----------------------------------------------------------------------------
// writing files

const BYTES = { F32: 4, F16: 2, BF16: 2 };

/** The bytes of one tensor's values in a dtype, little-endian. */
export function encode(data, dtype) {
  const out = new Uint8Array(data.length * BYTES[dtype]), view = new DataView(out.buffer);
  for (let i = 0; i < data.length; i++) {
    if (dtype === 'F32') view.setFloat32(4 * i, data[i], true);
    else view.setUint16(2 * i, dtype === 'F16' ? toF16Bits(data[i]) : toBF16Bits(data[i]), true);
  }
  return out;
}

/**
 * A safetensors file. tensors: object or Map, name -> { shape, data: Float32Array | number[],
 * dtype? } (dtype defaults to options.dtype, then F32), or { shape, dtype, bytes: Uint8Array }
 * for raw data. The header is padded with spaces to a multiple of 8, as the reference writer does.
 */
export function writeSafetensors(tensors, { metadata, dtype = 'F32' } = {}) {
  const entries = tensors instanceof Map ? [...tensors] : Object.entries(tensors);
  const header = {}, chunks = [];
  if (metadata) header.__metadata__ = metadata;
  let at = 0;
  for (const [name, t] of entries) {
    const type = t.dtype ?? dtype;
    const bytes = t.bytes ?? encode(t.data, type);
    header[name] = { dtype: type, shape: t.shape, data_offsets: [at, at + bytes.length] };
    chunks.push(bytes);
    at += bytes.length;
  }
  return rawSafetensors(JSON.stringify(header), chunks);
}

/** A file from header text (or bytes) as given and data chunks: for hostile files. */
export function rawSafetensors(headerText, chunks = [], { pad = true, length } = {}) {
  let head = typeof headerText === 'string' ? new TextEncoder().encode(headerText) : headerText;
  if (pad && head.length % 8) head = Uint8Array.from([...head, ...new Array(8 - (head.length % 8)).fill(0x20)]);
  const dataLength = chunks.reduce((s, c) => s + c.length, 0);
  const out = new Uint8Array(8 + head.length + dataLength);
  const n = length ?? head.length;
  new DataView(out.buffer).setUint32(0, n % 2 ** 32, true);
  new DataView(out.buffer).setUint32(4, Math.floor(n / 2 ** 32), true);
  out.set(head, 8);
  let at = 8 + head.length;
  for (const c of chunks) { out.set(c, at); at += c.length; }
  return out;
}

// ----------------------------------------------------------------------------
// a random GPT-2

/** The parameter names and shapes of a GPT-2 (without prefix), in file order. */
export function gpt2Shapes({ L, C, V, P }) {
  const shapes = [['wte.weight', [V, C]], ['wpe.weight', [P, C]]];
  for (let i = 0; i < L; i++) {
    shapes.push([`h.${i}.ln_1.weight`, [C]], [`h.${i}.ln_1.bias`, [C]],
      [`h.${i}.attn.c_attn.weight`, [C, 3 * C]], [`h.${i}.attn.c_attn.bias`, [3 * C]],
      [`h.${i}.attn.c_proj.weight`, [C, C]], [`h.${i}.attn.c_proj.bias`, [C]],
      [`h.${i}.ln_2.weight`, [C]], [`h.${i}.ln_2.bias`, [C]],
      [`h.${i}.mlp.c_fc.weight`, [C, 4 * C]], [`h.${i}.mlp.c_fc.bias`, [4 * C]],
      [`h.${i}.mlp.c_proj.weight`, [4 * C, C]], [`h.${i}.mlp.c_proj.bias`, [C]]);
  }
  shapes.push(['ln_f.weight', [C]], ['ln_f.bias', [C]]);
  return shapes;
}

/**
 * A seeded random GPT-2 checkpoint: { config (a config.json object), bytes (the .safetensors
 * file), tensors (Map name -> Float32Array: the values as stored, i.e. rounded to dtype) }.
 * Weights ~ U(-0.1, 0.1)·scale, LayerNorm weights around 1. hf: true adds the tensors HF
 * exports carry (h.{i}.attn.bias, h.{i}.attn.masked_bias, lm_head.weight).
 */
export function randomGpt2({ L = 2, H = 2, C = 8, V = 16, P = 8, dtype = 'F32', prefix = '', seed = 1, hf = false, eps = 1e-5 } = {}) {
  const rand = seeded(seed);
  const round = dtype === 'F16' ? (x) => fromF16Bits(toF16Bits(x)) : dtype === 'BF16' ? (x) => fromBF16Bits(toBF16Bits(x)) : (x) => x;
  const tensors = new Map(), file = new Map();
  for (const [name, shape] of gpt2Shapes({ L, C, V, P })) {
    const n = shape.reduce((a, b) => a * b, 1);
    const isNormWeight = /ln_[12f]\.weight$/.test(name);
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = round((isNormWeight ? 1 : 0) + (rand() * 2 - 1) * (isNormWeight ? 0.2 : 0.1));
    tensors.set(prefix + name, data);
    file.set(prefix + name, { shape, data, dtype });
  }
  if (hf) {
    for (let i = 0; i < L; i++) {
      const mask = new Float32Array(P * P);
      for (let r = 0; r < P; r++) for (let c = 0; c <= r; c++) mask[r * P + c] = 1;
      file.set(`${prefix}h.${i}.attn.bias`, { shape: [1, 1, P, P], data: mask, dtype: 'F32' });
      file.set(`${prefix}h.${i}.attn.masked_bias`, { shape: [], data: Float32Array.of(-1e4), dtype: 'F32' });
    }
    file.set('lm_head.weight', { shape: [V, C], data: tensors.get(`${prefix}wte.weight`), dtype });
  }
  const config = {
    activation_function: 'gelu_new', architectures: ['GPT2LMHeadModel'], model_type: 'gpt2',
    n_layer: L, n_head: H, n_embd: C, vocab_size: V, n_positions: P, n_ctx: P, n_inner: null,
    layer_norm_epsilon: eps, resid_pdrop: 0.1, embd_pdrop: 0.1, attn_pdrop: 0.1,
    scale_attn_weights: true, scale_attn_by_inverse_layer_idx: false, reorder_and_upcast_attn: false,
    bos_token_id: V - 1, eos_token_id: V - 1, torch_dtype: { F32: 'float32', F16: 'float16', BF16: 'bfloat16' }[dtype],
  };
  return { config, bytes: writeSafetensors(file, { metadata: { format: 'pt' } }), tensors };
}

/** The largest |a - b| over a nested array of expected numbers and a flat Float32Array of as many. */
export function maxDiff(nested, flat) {
  const want = nested.flat(Infinity);
  assert.equal(flat.length, want.length, 'element count');
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(want[i] - flat[i]));
  return worst;
}
