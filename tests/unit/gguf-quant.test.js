// gguf-quant.test.js - loadModel from GGUF files whose matrices are ggml's quantized blocks (issue
// 38, item 3): Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL and IQ4_XS,
// kept in wasm memory as the file has them. Each model is written twice, as convert_hf_to_gguf.py
// lays a file out (tests/gguf-writer.js; names, metadata, random blocks and arch llama's q and k
// rows permuted by scripts/gguf-writer.js): once with its matrices as random valid blocks of the
// type (random bytes, finite float16 scales, subnormal ones among them), once as F32 holding
// those blocks' values as this file's own dequantizer gives them (written from ggml's
// dequantize_row_* loops, float by float in ggml's order: Math.fround after each product and
// sum). The C dequantizes exactly and sums in the F32 kernel's order (c_src/tensor.h), so the
// quantized model's logits (a forward of 40 tokens and of one, the kernels' two paths) and every
// attention map must be the F32 twin's bits: no tolerance.
// Models: the golden LLaMA, Qwen2 and Qwen3 checkpoints (tests/golden/llama; their matrices of
// a multiple of 32 columns quantized, the rest left as they are: mixed files, as llama.cpp's
// fallbacks make), and wider llama (one file a type), qwen2 and qwen3 (every type in one file)
// models whose matrices all have a multiple of 256 columns; the llama ones on 2 threads too.
// Then what is refused: a type attnmap does not read (Q8_1, IQ2_XXS) and a quantized vector
// (INVALID_MODEL naming the tensor and type), a block whose scale is NaN or ±Infinity
// (NON_FINITE naming the tensor), ne[0] not a multiple of the block (INVALID_MODEL). And the
// memory: a Q4_0 model's weights take their blocks' bytes, not float32's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel } from '../../web/model/model-node.js';
import { parseSafetensors, readTensor, copyTensor, bytesSource } from '../../web/model/load/safetensors.js';
import { parseGguf } from '../../web/model/load/gguf.js';
import { ggufConfig } from '../../web/model/load/gguf-config.js';
import { ggufWeights } from '../../web/model/load/gguf-weights.js';
import { matchTensors } from '../../web/model/load/checkpoint.js';
import { createRuntime, useThreadHost } from '../../web/model/runtime.js';
import { spawnNode, build, cores } from '../../web/model/threads/threads-node.js';
import { writeGguf } from '../gguf-writer.js';
import { BLOCKS, rng, randomBlocks, ggufMetadata, ggufName, hfName, permuteRows } from '../../scripts/gguf-writer.js';
import { writeSafetensors } from '../model-helpers.js';
import { root } from '../helpers.js';

const f = Math.fround;

// ggml's blocks (scripts/gguf-writer.js's BLOCKS): values and bytes a block, where the float16 scales are
const TYPES = BLOCKS;
const NAMES = Object.keys(TYPES);
const SMALL = NAMES.filter((t) => TYPES[t].block === 32);

// ----------------------------------------------------------------------------
// the reference dequantizer: block at b[o …] -> y[0 … block), ggml's loops, each float op rounded

function half(h) {
  const sign = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
  if (e === 0) return sign * m * 2 ** -24;
  return e === 31 ? (m ? NaN : sign * Infinity) : sign * (1024 + m) * 2 ** (e - 25);
}
const h16 = (b, o) => half(b[o] | (b[o + 1] << 8));
const i8 = (x) => (x << 24) >> 24;
const u32 = (b, o) => (b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0;
const KVALUES = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113];

// the 6-bit scale and min of sub-block j of Q4_K and Q5_K (12 bytes at s)
function scaleMin(b, s, j) {
  if (j < 4) return [b[s + j] & 63, b[s + j + 4] & 63];
  return [(b[s + j + 4] & 0xf) | ((b[s + j - 4] >> 6) << 4), (b[s + j + 4] >> 4) | ((b[s + j] >> 6) << 4)];
}

// Q3_K's 16 scales (12 bytes at s): 4 low bits and 2 high bits each, unpacked as ggml's aux words
function q3Scales(b, s) {
  const m1 = 0x03030303, m2 = 0x0f0f0f0f, a0 = u32(b, s), a1 = u32(b, s + 4), tmp = u32(b, s + 8);
  const words = [(a0 & m2) | ((tmp & m1) << 4), (a1 & m2) | (((tmp >>> 2) & m1) << 4),
    ((a0 >>> 4) & m2) | (((tmp >>> 4) & m1) << 4), ((a1 >>> 4) & m2) | (((tmp >>> 6) & m1) << 4)];
  return words.flatMap((w) => [0, 1, 2, 3].map((k) => i8(w >>> (8 * k))));
}

const DEQUANT = {
  Q8_0(b, o, y) {
    const d = h16(b, o);
    for (let j = 0; j < 32; j++) y[j] = f(i8(b[o + 2 + j]) * d);
  },
  Q4_0(b, o, y) {
    const d = h16(b, o);
    for (let j = 0; j < 16; j++) { y[j] = f(((b[o + 2 + j] & 15) - 8) * d); y[j + 16] = f(((b[o + 2 + j] >> 4) - 8) * d); }
  },
  Q4_1(b, o, y) {
    const d = h16(b, o), m = h16(b, o + 2);
    for (let j = 0; j < 16; j++) { y[j] = f(f((b[o + 4 + j] & 15) * d) + m); y[j + 16] = f(f((b[o + 4 + j] >> 4) * d) + m); }
  },
  Q5_0(b, o, y) {
    const d = h16(b, o), qh = u32(b, o + 2);
    for (let j = 0; j < 16; j++) {
      const h0 = ((qh >>> j) << 4) & 0x10, h1 = (qh >>> (j + 12)) & 0x10;
      y[j] = f(((b[o + 6 + j] & 15 | h0) - 16) * d);
      y[j + 16] = f(((b[o + 6 + j] >> 4 | h1) - 16) * d);
    }
  },
  Q5_1(b, o, y) {
    const d = h16(b, o), m = h16(b, o + 2), qh = u32(b, o + 4);
    for (let j = 0; j < 16; j++) {
      const h0 = ((qh >>> j) << 4) & 0x10, h1 = (qh >>> (j + 12)) & 0x10;
      y[j] = f(f((b[o + 8 + j] & 15 | h0) * d) + m);
      y[j + 16] = f(f((b[o + 8 + j] >> 4 | h1) * d) + m);
    }
  },
  IQ4_NL(b, o, y) {
    const d = h16(b, o);
    for (let j = 0; j < 16; j++) { y[j] = f(d * KVALUES[b[o + 2 + j] & 15]); y[j + 16] = f(d * KVALUES[b[o + 2 + j] >> 4]); }
  },
  Q2_K(b, o, y) {
    const d = h16(b, o + 80), min = h16(b, o + 82);
    let n = 0, is = 0;
    for (let q = o + 16; q < o + 80; q += 32) {
      for (let shift = 0; shift < 8; shift += 2) {
        for (const half16 of [0, 16]) {
          const sc = b[o + is++], dl = f(d * (sc & 15)), ml = f(min * (sc >> 4));
          for (let l = 0; l < 16; l++) y[n++] = f(f(dl * ((b[q + half16 + l] >> shift) & 3)) - ml);
        }
      }
    }
  },
  Q3_K(b, o, y) {
    const d = h16(b, o + 108), scales = q3Scales(b, o + 96);
    let n = 0, is = 0, m = 1;
    for (let q = o + 32; q < o + 96; q += 32) {
      for (let shift = 0; shift < 8; shift += 2, m <<= 1) {
        for (const half16 of [0, 16]) {
          const dl = f(d * (scales[is++] - 32));
          for (let l = 0; l < 16; l++) y[n++] = f(dl * (((b[q + half16 + l] >> shift) & 3) - (b[o + half16 + l] & m ? 0 : 4)));
        }
      }
    }
  },
  Q4_K(b, o, y) {
    const d = h16(b, o), min = h16(b, o + 2);
    let n = 0;
    for (let j = 0, q = o + 16; j < 8; j += 2, q += 32) {
      const [s1, m1] = scaleMin(b, o + 4, j), [s2, m2] = scaleMin(b, o + 4, j + 1);
      const d1 = f(d * s1), n1 = f(min * m1), d2 = f(d * s2), n2 = f(min * m2);
      for (let l = 0; l < 32; l++) y[n++] = f(f(d1 * (b[q + l] & 15)) - n1);
      for (let l = 0; l < 32; l++) y[n++] = f(f(d2 * (b[q + l] >> 4)) - n2);
    }
  },
  Q5_K(b, o, y) {
    const d = h16(b, o), min = h16(b, o + 2), qh = o + 16;
    let n = 0;
    for (let j = 0, q = o + 48, u1 = 1, u2 = 2; j < 8; j += 2, q += 32, u1 <<= 2, u2 <<= 2) {
      const [s1, m1] = scaleMin(b, o + 4, j), [s2, m2] = scaleMin(b, o + 4, j + 1);
      const d1 = f(d * s1), n1 = f(min * m1), d2 = f(d * s2), n2 = f(min * m2);
      for (let l = 0; l < 32; l++) y[n++] = f(f(d1 * ((b[q + l] & 15) + (b[qh + l] & u1 ? 16 : 0))) - n1);
      for (let l = 0; l < 32; l++) y[n++] = f(f(d2 * ((b[q + l] >> 4) + (b[qh + l] & u2 ? 16 : 0))) - n2);
    }
  },
  Q6_K(b, o, y) {
    const d = h16(b, o + 208);
    for (let half128 = 0; half128 < 2; half128++) {
      const ql = o + 64 * half128, qh = o + 128 + 32 * half128, sc = o + 192 + 8 * half128, out = 128 * half128;
      for (let l = 0; l < 32; l++) {
        const is = l >> 4, h = b[qh + l];
        const q = [(b[ql + l] & 15 | (h & 3) << 4) - 32, (b[ql + l + 32] & 15 | ((h >> 2) & 3) << 4) - 32,
          (b[ql + l] >> 4 | ((h >> 4) & 3) << 4) - 32, (b[ql + l + 32] >> 4 | ((h >> 6) & 3) << 4) - 32];
        for (let r = 0; r < 4; r++) y[out + l + 32 * r] = f(f(d * i8(b[sc + is + 2 * r])) * q[r]);
      }
    }
  },
  IQ4_XS(b, o, y) {
    const d = h16(b, o), high = b[o + 2] | (b[o + 3] << 8);
    for (let ib = 0; ib < 8; ib++) {
      const ls = ((b[o + 4 + (ib >> 1)] >> (4 * (ib % 2))) & 15) | (((high >> (2 * ib)) & 3) << 4);
      const dl = f(d * (ls - 32)), qs = o + 8 + 16 * ib;
      for (let j = 0; j < 16; j++) { y[32 * ib + j] = f(dl * KVALUES[b[qs + j] & 15]); y[32 * ib + j + 16] = f(dl * KVALUES[b[qs + j] >> 4]); }
    }
  },
};

/** Every value of a tensor's blocks, as float32. */
function dequantize(type, bytes, count) {
  const { block, bytes: size } = TYPES[type], out = new Float32Array(count);
  for (let i = 0; i < count / block; i++) DEQUANT[type](bytes, i * size, out.subarray(i * block, (i + 1) * block));
  return out;
}

// ----------------------------------------------------------------------------
// random blocks and values

const f32Bytes = (values) => new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
const randomFloats = (count, center, spread, next) => Float32Array.from({ length: count }, () => center + spread * (2 * next() - 1));

// ----------------------------------------------------------------------------
// a model as GGUF files: tensors [{ name (llama.cpp's), shape (PyTorch's), type, data }]

/** The GGUF file of a LLaMA-family model: config (config.json's keys), its tensors in Hugging Face's row order. */
function ggufOf(arch, c, tensors) {
  const H = c.num_attention_heads, G = c.num_key_value_heads ?? H;
  const permuted = (t) => arch === 'llama' && /attn_[qk]\.(weight|bias)$/.test(t.name)
    ? { ...t, data: permuteRows(t.data, t.shape[0], t.name.includes('attn_q') ? H : G) } : t;
  return writeGguf({ metadata: ggufMetadata(arch, c), tensors: tensors.map(permuted) }).bytes;
}

/**
 * The files of a model: quantized, the GGUF file with each matrix typeOf(name, shape) picks
 * (undefined: left as it is) as random blocks; twin, the GGUF file with those matrices as F32 of
 * the blocks' values; checkpoint, the twin as config.json and model.safetensors (Hugging Face's
 * names and row order: no permutation, no GGUF reader on that side).
 */
function twins(arch, c, tensors, typeOf, seed) {
  const next = rng(seed), quantized = [], twin = [];
  for (const t of tensors) {
    const type = t.shape.length === 2 ? typeOf(t.name, t.shape) : undefined;
    if (!type) { quantized.push(t); twin.push(t); continue; }
    const [rows, cols] = t.shape, blocks = randomBlocks(type, rows, cols, next);
    quantized.push({ ...t, type, data: blocks });
    twin.push({ ...t, type: 'F32', data: f32Bytes(dequantize(type, blocks, rows * cols)) });
  }
  const weights = writeSafetensors(new Map(twin.map((t) => [hfName(t.name), { shape: t.shape, dtype: t.type, bytes: t.data }])));
  return { quantized: ggufOf(arch, c, quantized), twin: ggufOf(arch, c, twin), checkpoint: { config: c, weights } };
}

// the golden checkpoints (tests/golden/llama) under llama.cpp's names, as their files store them
function golden(name) {
  const dir = path.join(root, 'tests/golden/llama', name), c = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const bytes = new Uint8Array(fs.readFileSync(path.join(dir, 'model.safetensors'))), tensors = [];
  for (const [hf, info] of parseSafetensors(bytes).tensors) {
    if (hf === 'lm_head.weight' && c.tie_word_embeddings) continue;
    tensors.push({ name: ggufName(hf), shape: info.shape, type: info.dtype, data: bytes.slice(info.begin, info.end) });
  }
  return { arch: c.model_type, c, tensors };
}

// a wider model of random values whose matrices all have a multiple of 256 columns
function wide(arch, { heads, kvHeads, headDim, tied, biases, qkNorm }, seed) {
  const C = 256, F = 512, V = 40, L = 2, next = rng(seed);
  const c = {
    model_type: arch, num_attention_heads: heads, num_key_value_heads: kvHeads, head_dim: headDim, hidden_size: C,
    intermediate_size: F, num_hidden_layers: L, vocab_size: V, max_position_embeddings: 64, rms_norm_eps: 1e-5,
    rope_theta: 10000, tie_word_embeddings: tied,
  };
  const vector = (name, n, center, spread) => ({ name, shape: [n], type: 'F32', data: f32Bytes(randomFloats(n, center, spread, next)) });
  const matrix = (name, rows, cols) => ({ name, shape: [rows, cols], type: 'F32', data: f32Bytes(randomFloats(rows * cols, 0, 0.1, next)) });
  const tensors = [matrix('token_embd.weight', V, C), vector('output_norm.weight', C, 1, 0.2)];
  if (!tied) tensors.push(matrix('output.weight', V, C));
  for (let i = 0; i < L; i++) {
    const b = `blk.${i}.`;
    tensors.push(vector(`${b}attn_norm.weight`, C, 1, 0.2), matrix(`${b}attn_q.weight`, heads * headDim, C),
      matrix(`${b}attn_k.weight`, kvHeads * headDim, C), matrix(`${b}attn_v.weight`, kvHeads * headDim, C));
    if (biases) tensors.push(vector(`${b}attn_q.bias`, heads * headDim, 0, 0.1), vector(`${b}attn_k.bias`, kvHeads * headDim, 0, 0.1), vector(`${b}attn_v.bias`, kvHeads * headDim, 0, 0.1));
    if (qkNorm) tensors.push(vector(`${b}attn_q_norm.weight`, headDim, 1, 0.2), vector(`${b}attn_k_norm.weight`, headDim, 1, 0.2));
    tensors.push(matrix(`${b}attn_output.weight`, C, heads * headDim), vector(`${b}ffn_norm.weight`, C, 1, 0.2),
      matrix(`${b}ffn_gate.weight`, F, C), matrix(`${b}ffn_up.weight`, F, C), matrix(`${b}ffn_down.weight`, C, F));
  }
  return { arch, c, tensors };
}

const WIDE = {
  llama: (seed) => wide('llama', { heads: 4, kvHeads: 2, headDim: 64, tied: false }, seed),
  qwen2: (seed) => wide('qwen2', { heads: 4, kvHeads: 1, headDim: 64, tied: true, biases: true }, seed),
  qwen3: (seed) => wide('qwen3', { heads: 2, kvHeads: 1, headDim: 256, tied: true, qkNorm: true }, seed),   // head_dim ≠ hidden / heads
};

// every type in one file: the matrices in the file's order take the types in turn
function everyType(names) {
  let i = 0;
  return (name, [, cols]) => {
    const fitting = names.filter((t) => cols % TYPES[t].block === 0);
    return fitting.length ? fitting[i++ % fitting.length] : undefined;
  };
}

// ----------------------------------------------------------------------------
// running them

const bytesOf = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

// the logits of 40 tokens and every attention map, then the logits of one token (n = 1: the
// kernels' other path), as bytes
function run(model) {
  const ids = Array.from({ length: 40 }, (_, i) => (i * 7 + 3) % model.config.vocab_size);
  const r = model.forward(ids, { attention: true }), one = model.forward([ids[5]]);
  return Buffer.concat([bytesOf(r.logits.data), ...r.attention.flat().map((m) => bytesOf(m.data)), bytesOf(one.logits.data)]);
}

async function runFile(files, options) {
  const model = await loadModel(files, options);
  try {
    assert.equal(model.threads, options.threads, 'the threads asked for');
    return run(model);
  } finally {
    model.dispose();
  }
}

// the quantized file's bits against its F32 twin's, as GGUF and as safetensors (and a sanity
// check that they are numbers at all)
async function sameBits({ quantized, twin, checkpoint }, label, options = {}) {
  assert.ok(parseGguf(quantized).tensors.some((t) => t.blockSize > 1), `${label}: the file has quantized tensors`);
  const want = await runFile(checkpoint, { threads: 1 });
  assert.ok((await runFile({ gguf: twin }, { threads: 1 })).equals(want), `${label}: the F32 GGUF twin has the bits of its safetensors checkpoint`);
  const got = await runFile({ gguf: quantized }, { threads: 1, ...options });
  const logits = new Float32Array(want.buffer, want.byteOffset, 8);
  assert.ok(logits.every(Number.isFinite) && logits.some((x) => x !== 0), `${label}: the twin's logits are finite and not all 0`);
  if (!got.equals(want)) {
    const a = new Float32Array(got.buffer, got.byteOffset, got.length / 4), b = new Float32Array(want.buffer, want.byteOffset, want.length / 4);
    const i = a.findIndex((x, k) => !Object.is(x, b[k]));
    assert.fail(`${label}: not the F32 twin's bits: float ${i} of ${a.length} is ${a[i]}, the twin's ${b[i]}`);
  }
}

// the dequantizer itself, on blocks whose values are known without the layouts' formulas
test('the reference dequantizer gives known values of hand-made blocks', () => {
  const q8 = new Uint8Array(34);
  q8.set([0x00, 0x38]);   // d = 0.5
  for (let j = 0; j < 32; j++) q8[2 + j] = (j * 8 - 128) & 0xff;
  assert.deepEqual(Array.from(dequantize('Q8_0', q8, 32)), Array.from({ length: 32 }, (_, j) => 0.5 * (j * 8 - 128)));
  const q4 = new Uint8Array(18);
  q4.set([0x00, 0x34]);   // d = 0.25; byte j: j low, 15 - j high
  for (let j = 0; j < 16; j++) q4[2 + j] = j | (15 - j) << 4;
  assert.deepEqual(Array.from(dequantize('Q4_0', q4, 32)), Array.from({ length: 32 }, (_, t) => 0.25 * (t < 16 ? t - 8 : 7 - (t - 16))));
  const iq = new Uint8Array(18);
  iq.set([0x00, 0x3c]);   // d = 1; byte j: j low, j high
  for (let j = 0; j < 16; j++) iq[2 + j] = j | j << 4;
  assert.deepEqual(Array.from(dequantize('IQ4_NL', iq, 32)), [...KVALUES, ...KVALUES]);
  // Q6_K: d = 1, every sub-block's scale 1, value t's 6 bits t % 64: t % 64 - 32
  const q6 = new Uint8Array(210);
  q6.set([0x00, 0x3c], 208);
  q6.fill(1, 192, 208);
  for (let t = 0; t < 256; t++) {
    const h = t >> 7, r = (t % 128) >> 5, l = t % 32, q = t % 64;
    q6[64 * h + 32 * (r % 2) + l] |= (q & 15) << (4 * (r >> 1));
    q6[128 + 32 * h + l] |= (q >> 4) << (2 * r);
  }
  assert.deepEqual(Array.from(dequantize('Q6_K', q6, 256)), Array.from({ length: 256 }, (_, t) => t % 64 - 32));
  // Q4_K: d = 1, dmin = 0.5, sub-block j's scale j + 1 and min 2j (the top bits of 4..7 packed as ggml does)
  const q4k = new Uint8Array(144);
  q4k.set([0x00, 0x3c, 0x00, 0x38]);
  for (let j = 0; j < 4; j++) { q4k[4 + j] = j + 1; q4k[8 + j] = 2 * j; q4k[12 + j] = (j + 5) | (2 * (j + 4)) << 4; }
  q4k.fill(0x93, 16);   // every value 3 in even sub-blocks, 9 in odd ones
  assert.deepEqual(Array.from(dequantize('Q4_K', q4k, 256)), Array.from({ length: 256 }, (_, t) => { const j = t >> 5; return (j + 1) * (j % 2 ? 9 : 3) - 0.5 * 2 * j; }));
});

for (const type of SMALL) {
  test(`the golden LLaMA with its matrices ${type}: the F32 twin's bits (logits, every map)`, async () => {
    const { arch, c, tensors } = golden('llama-f32');
    await sameBits(twins(arch, c, tensors, (name, [, cols]) => (cols % 32 === 0 ? type : undefined), 38 + NAMES.indexOf(type)), `llama-f32 ${type}`);
  });
}

for (const name of ['qwen2-bf16', 'qwen3-f16-headdim']) {
  test(`the golden ${name} with its matrices of 32-value blocks in every such type: the F32 twin's bits`, async () => {
    const { arch, c, tensors } = golden(name);
    await sameBits(twins(arch, c, tensors, everyType(SMALL), 7), name);
  });
}

for (const type of NAMES) {
  test(`a wider llama (q and k permuted) with its matrices ${type}: the F32 twin's bits`, async () => {
    const { arch, c, tensors } = WIDE.llama(100 + NAMES.indexOf(type));
    await sameBits(twins(arch, c, tensors, () => type, 200 + NAMES.indexOf(type)), `wide llama ${type}`);
  });
}

for (const arch of ['qwen2', 'qwen3']) {
  test(`a wider ${arch} with its matrices in all 12 types: the F32 twin's bits`, async () => {
    const m = WIDE[arch](300);
    await sameBits(twins(m.arch, m.c, m.tensors, everyType(NAMES), 301), `wide ${arch}`);
  });
}

test('on 2 threads: a wider llama in each type gives the bits of its F32 twin on 1', async () => {
  useThreadHost({ spawn: spawnNode, build, cores: () => 16 });
  try {
    for (const type of NAMES) {
      const { arch, c, tensors } = WIDE.llama(400 + NAMES.indexOf(type));
      await sameBits(twins(arch, c, tensors, () => type, 500 + NAMES.indexOf(type)), `wide llama ${type}, 2 threads`, { threads: 2 });
    }
  } finally {
    useThreadHost({ spawn: spawnNode, build, cores });
  }
});

// ----------------------------------------------------------------------------
// what is refused

const reject = (gguf, code, pattern) => assert.rejects(loadModel({ gguf }), (e) => {
  assert.equal(e.name, 'AttentionError', e.stack);
  assert.equal(e.code, code, e.message);
  assert.match(e.message, pattern);
  return true;
});

// the wide llama with some tensors replaced: { name: { type, data? } } (data: the writer's seeded bytes when absent)
function wideWith(changes) {
  const { arch, c, tensors } = WIDE.llama(600);
  return ggufOf(arch, c, tensors.map((t) => (changes[t.name] ? { ...t, ...changes[t.name] } : t)));
}

test('a type attnmap does not read, and a quantized vector: INVALID_MODEL naming the tensor and its type', async () => {
  const read = 'F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, BF16';
  const says = (name, type) => new RegExp(`tensor "${name.replaceAll('.', '\\.')}" is ${type}; attnmap reads GGUF tensors of type ${read}$`);
  await reject(wideWith({ 'blk.0.ffn_up.weight': { type: 'Q8_1', data: undefined } }), 'INVALID_MODEL', says('blk.0.ffn_up.weight', 'Q8_1'));
  await reject(wideWith({ 'blk.1.attn_v.weight': { type: 'IQ2_XXS', data: undefined } }), 'INVALID_MODEL', says('blk.1.attn_v.weight', 'IQ2_XXS'));
  await reject(wideWith({ 'blk.1.attn_v.weight': { type: 15, data: undefined } }), 'INVALID_MODEL', says('blk.1.attn_v.weight', 'Q8_K'));
  const norm = randomBlocks('Q8_0', 1, 256, rng(9));
  await reject(wideWith({ 'blk.0.attn_norm.weight': { type: 'Q8_0', data: norm } }), 'INVALID_MODEL',
    /tensor "blk\.0\.attn_norm\.weight" is Q8_0 with 1 dimension: attnmap reads quantized matrices; a vector \(a norm, a bias\) must be F32, F16 or BF16/);
});

test('a block whose float16 scale is NaN or ±Infinity: NON_FINITE naming the tensor', async () => {
  // [tensor, its Hugging Face name, type, block, byte of the scale in the block, float16 bits]
  const cases = [
    ['blk.1.ffn_up.weight', 'model.layers.1.mlp.up_proj.weight', 'Q4_0', 17, 0, 0x7e00],             // d NaN
    ['blk.0.attn_k.weight', 'model.layers.0.self_attn.k_proj.weight', 'Q4_K', 3, 2, 0x7c00],        // dmin +Inf
    ['token_embd.weight', 'model.embed_tokens.weight', 'Q6_K', 0, 208, 0xfc00],                      // d -Inf
    ['output.weight', 'lm_head.weight', 'Q5_1', 40, 2, 0xfe00],                                      // m NaN
  ];
  for (const [name, hf, type, block, at, bits] of cases) {
    const { shape: [rows, cols] } = WIDE.llama(600).tensors.find((t) => t.name === name);
    const data = randomBlocks(type, rows, cols, rng(block + 1)), { block: values, bytes } = TYPES[type];
    data[block * bytes + at] = bits & 0xff;
    data[block * bytes + at + 1] = bits >> 8;
    // the row in Hugging Face's order (arch llama's k rows are permuted in the file, put back before the check)
    const row = Math.floor(block * values / cols);
    await reject(wideWith({ [name]: { type, data } }), 'NON_FINITE',
      new RegExp(`^upload: tensor ${hf.replaceAll('.', '\\.')} \\(${type}\\) has a block whose scale is NaN or ±Infinity \\(the block of values from index ${block * values}: row ${row}\\)`));
  }
});

test('ne[0] not a multiple of the type\'s block: INVALID_MODEL (gguf.js refuses the file)', async () => {
  const { arch, c, tensors } = golden('llama-f32');
  // attn_q has ne [32, 32]: blocks of 32 fit, of 256 do not
  const gguf = ggufOf(arch, c, tensors.map((t) => (t.name === 'blk.0.attn_q.weight' ? { ...t, type: 'Q4_K', data: new Uint8Array(144 * 4) } : t)));
  await reject(gguf, 'INVALID_MODEL', /tensor "blk\.0\.attn_q\.weight" has type Q4_K, whose blocks hold 256 values, but ne\[0\] = 32 is not a multiple of 256/);
});

// ----------------------------------------------------------------------------
// memory

// a GGUF file uploaded as loadModel does, without its forward: the runtime's { parameters, bytes }
async function uploaded(gguf) {
  const source = new Uint8Array(gguf), parsed = parseGguf(source), config = ggufConfig(parsed.metadata, parsed.tensors);
  const weights = ggufWeights(parsed, config, bytesSource(source));
  const tensors = matchTensors(config, weights), rt = await createRuntime();
  try {
    const fill = (kind, layer, dest) => {
      const { info } = tensors.get(kind, layer);
      return dest instanceof Float32Array ? readTensor(info.source, info, dest) : copyTensor(info.source, info, dest);
    };
    return { ...(await rt.upload(config, fill, { tensors })), tensors };
  } finally {
    rt.dispose();
  }
}

test('memory: a Q4_0 model\'s weights take 18 bytes a block of 32 values in wasm memory, under 0.3× its F32 twin\'s', async () => {
  const m = WIDE.qwen2(700);
  const files = twins(m.arch, m.c, m.tensors, () => 'Q4_0', 701);
  const q = await uploaded(files.quantized), twin = await uploaded(files.twin);
  assert.equal(q.parameters, twin.parameters);
  // the matrices' values, counted from the model's tensors: 4 bytes each in the twin, 18 / 32 in Q4_0
  const values = m.tensors.filter((t) => t.shape.length === 2).reduce((n, t) => n + t.shape[0] * t.shape[1], 0);
  assert.equal(twin.bytes - q.bytes, values * 4 - values / 32 * 18, 'the difference is the matrices\' bytes, float32 against Q4_0');
  assert.ok(q.bytes < 0.3 * twin.bytes, `${q.bytes} bytes against the twin's ${twin.bytes}`);
});

test('TOO_LARGE is reckoned from the blocks\' bytes: a Q4_0 embedding of 2^33 values takes 4.5 GiB, not float32\'s 32 GiB', async () => {
  const m = WIDE.qwen2(800), gguf = twins(m.arch, m.c, m.tensors, () => 'Q4_0', 801).quantized;
  const parsed = parseGguf(gguf), config = ggufConfig(parsed.metadata, parsed.tensors);
  const real = matchTensors(config, ggufWeights(parsed, config, null));
  const huge = { name: 'model.embed_tokens.weight', shape: [2 ** 23, 2 ** 10], info: { dtype: 'Q4_0', block: { size: 32, bytes: 18, code: 2 << 8 } } };
  const tensors = { ...real, get: (kind, layer = -1) => (kind === 'embed' ? huge : real.get(kind, layer)) };
  const rt = await createRuntime();
  try {
    await assert.rejects(async () => rt.upload(config, () => assert.fail('nothing is filled'), { tensors }),
      (e) => e.code === 'TOO_LARGE' && /the weights take 4\.5 GiB/.test(e.message));
  } finally {
    rt.dispose();
  }
});
