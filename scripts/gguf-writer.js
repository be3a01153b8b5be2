// gguf-writer.js - GGUF files of LLaMA-family models whose matrices are random valid blocks of
// ggml's quantized types, for the tests (tests/unit/gguf-quant.test.js, small files in memory
// through tests/gguf-writer.js) and the benchmark (bench/gguf.js, files of real models' sizes
// streamed to disk a tensor at a time).
//
//   import { BLOCKS, rng, randomBlocks, ggufMetadata, gpt2Metadata, ggufName, hfName, permuteRows, writeGgufFile } from './scripts/gguf-writer.js';
//
//   BLOCKS[type]                    ggml's block (ggml-common.h): values and bytes a block, where its float16 scales are
//   randomBlocks(type, rows, cols, next, { scale })   random bytes with finite float16 scales
//   ggufMetadata(arch, config)      the {arch}.* keys llama.cpp reads, from config.json's
//   gpt2Metadata(config)            the same for a GPT-2 (arch gpt2, GPT2Model.set_gguf_parameters)
//   ggufName(hf), hfName(gguf)      a tensor's name in llama.cpp's files from Hugging Face's, and back
//                                   (the LLaMA family's and GPT-2's: h.N.attn.c_attn.weight <-> blk.N.attn_qkv.weight)
//   permuteRows(bytes, rows, heads) convert_hf_to_gguf.py's permute() of arch llama's q and k, on rows of bytes
//   writeGgufFile(file, { metadata, tensors })   a file written tensor by tensor (below)
import fs from 'node:fs';
import { gv, tensorBytes, writeGguf } from '../tests/gguf-writer.js';

// values and bytes a block, and each float16 scale's byte in the block with the size it should
// give the values (about 0.1 to 0.3 in magnitude: `size` / the largest factor the quants put on it)
export const BLOCKS = {
  Q8_0: { block: 32, bytes: 34, scales: [[0, 0.3 / 127]] },
  Q4_0: { block: 32, bytes: 18, scales: [[0, 0.3 / 8]] },
  Q4_1: { block: 32, bytes: 20, scales: [[0, 0.3 / 15], [2, 0.15]] },
  Q5_0: { block: 32, bytes: 22, scales: [[0, 0.3 / 16]] },
  Q5_1: { block: 32, bytes: 24, scales: [[0, 0.3 / 31], [2, 0.15]] },
  Q2_K: { block: 256, bytes: 84, scales: [[80, 0.3 / 45], [82, 0.15 / 15]] },
  Q3_K: { block: 256, bytes: 110, scales: [[108, 0.3 / 128]] },
  Q4_K: { block: 256, bytes: 144, scales: [[0, 0.3 / 945], [2, 0.15 / 63]] },
  Q5_K: { block: 256, bytes: 176, scales: [[0, 0.3 / 1953], [2, 0.15 / 63]] },
  Q6_K: { block: 256, bytes: 210, scales: [[208, 0.3 / 4096]] },
  IQ4_NL: { block: 32, bytes: 18, scales: [[0, 0.3 / 127]] },
  IQ4_XS: { block: 256, bytes: 136, scales: [[0, 0.3 / 4064]] },
};

/** xorshift32 in [0, 1), seeded. */
export function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; return (x >>> 0) / 2 ** 32; };
}

// a float16 of random sign and mantissa whose size is about `size` (down to subnormals)
function scaleBits(size, next) {
  const e = Math.max(0, Math.floor(Math.log2(size)) + 15 - Math.floor(next() * 3));
  return (next() < 0.5 ? 0x8000 : 0) | e << 10 | Math.floor(next() * 1024);
}

/** rows × cols / block random blocks of `type`, every float16 scale finite; scale multiplies the values' size. */
export function randomBlocks(type, rows, cols, next, { scale = 1 } = {}) {
  const { block, bytes, scales } = BLOCKS[type], n = rows * cols / block, out = new Uint8Array(n * bytes);
  for (let i = 0; i < out.length; i++) out[i] = Math.floor(next() * 256);
  for (let i = 0; i < n; i++) {
    for (const [at, size] of scales) {
      const h = scaleBits(size * scale, next);
      out[i * bytes + at] = h & 0xff;
      out[i * bytes + at + 1] = h >> 8;
    }
  }
  return out;
}

/** The metadata of a LLaMA-family GGUF file (general.architecture and {arch}.*), from config.json's keys. */
export function ggufMetadata(arch, c) {
  const H = c.num_attention_heads, G = c.num_key_value_heads ?? H, D = c.head_dim ?? c.hidden_size / H;
  return [
    ['general.architecture', gv.str(arch)],
    [`${arch}.block_count`, gv.u32(c.num_hidden_layers)],
    [`${arch}.context_length`, gv.u32(c.max_position_embeddings)],
    [`${arch}.embedding_length`, gv.u32(c.hidden_size)],
    [`${arch}.feed_forward_length`, gv.u32(c.intermediate_size)],
    [`${arch}.attention.head_count`, gv.u32(H)],
    [`${arch}.attention.head_count_kv`, gv.u32(G)],
    [`${arch}.attention.key_length`, gv.u32(D)],
    [`${arch}.attention.value_length`, gv.u32(D)],
    [`${arch}.attention.layer_norm_rms_epsilon`, gv.f32(c.rms_norm_eps)],
    [`${arch}.rope.freq_base`, gv.f32(c.rope_theta)],
    [`${arch}.vocab_size`, gv.u32(c.vocab_size)],
  ];
}

/** The metadata of a gpt2 GGUF file, from a GPT-2 config.json's keys (feed_forward_length 4 · n_embd, as GPT2Model writes). */
export function gpt2Metadata(c) {
  return [
    ['general.architecture', gv.str('gpt2')],
    ['gpt2.block_count', gv.u32(c.n_layer)],
    ['gpt2.context_length', gv.u32(c.n_positions)],
    ['gpt2.embedding_length', gv.u32(c.n_embd)],
    ['gpt2.feed_forward_length', gv.u32(4 * c.n_embd)],
    ['gpt2.attention.head_count', gv.u32(c.n_head)],
    ['gpt2.attention.layer_norm_epsilon', gv.f32(c.layer_norm_epsilon ?? 1e-5)],
    ['gpt2.vocab_size', gv.u32(c.vocab_size)],
  ];
}

// GPT-2's names (no prefix) -> llama.cpp's (its tensor map for MODEL_ARCH.GPT2)
const GPT2_GLOBAL = {
  'wte.weight': 'token_embd.weight', 'wpe.weight': 'position_embd.weight', 'ln_f.weight': 'output_norm.weight',
  'ln_f.bias': 'output_norm.bias', 'lm_head.weight': 'output.weight',
};
const GPT2_LAYER = {
  'ln_1.weight': 'attn_norm.weight', 'ln_1.bias': 'attn_norm.bias', 'attn.c_attn.weight': 'attn_qkv.weight',
  'attn.c_attn.bias': 'attn_qkv.bias', 'attn.c_proj.weight': 'attn_output.weight', 'attn.c_proj.bias': 'attn_output.bias',
  'ln_2.weight': 'ffn_norm.weight', 'ln_2.bias': 'ffn_norm.bias', 'mlp.c_fc.weight': 'ffn_up.weight', 'mlp.c_fc.bias': 'ffn_up.bias',
  'mlp.c_proj.weight': 'ffn_down.weight', 'mlp.c_proj.bias': 'ffn_down.bias',
};
const GPT2_UNLAYER = Object.fromEntries(Object.entries(GPT2_LAYER).map(([hf, g]) => [g, hf]));
const GPT2_UNGLOBAL = Object.fromEntries(Object.entries(GPT2_GLOBAL).map(([hf, g]) => [g, hf]));

// Hugging Face's names -> llama.cpp's (convert_hf_to_gguf.py's tensor map for the LLaMA family)
const GLOBAL = { 'model.embed_tokens.weight': 'token_embd.weight', 'model.norm.weight': 'output_norm.weight', 'lm_head.weight': 'output.weight' };
const LAYER = {
  'input_layernorm.weight': 'attn_norm.weight', 'post_attention_layernorm.weight': 'ffn_norm.weight',
  'self_attn.q_proj.weight': 'attn_q.weight', 'self_attn.q_proj.bias': 'attn_q.bias', 'self_attn.k_proj.weight': 'attn_k.weight',
  'self_attn.k_proj.bias': 'attn_k.bias', 'self_attn.v_proj.weight': 'attn_v.weight', 'self_attn.v_proj.bias': 'attn_v.bias',
  'self_attn.o_proj.weight': 'attn_output.weight', 'self_attn.q_norm.weight': 'attn_q_norm.weight', 'self_attn.k_norm.weight': 'attn_k_norm.weight',
  'mlp.gate_proj.weight': 'ffn_gate.weight', 'mlp.up_proj.weight': 'ffn_up.weight', 'mlp.down_proj.weight': 'ffn_down.weight',
};
const UNLAYER = Object.fromEntries(Object.entries(LAYER).map(([hf, g]) => [g, hf]));
const UNGLOBAL = Object.fromEntries(Object.entries(GLOBAL).map(([hf, g]) => [g, hf]));

/** A tensor's name in llama.cpp's files ('blk.3.attn_q.weight') from Hugging Face's ('model.layers.3.self_attn.q_proj.weight'). */
export function ggufName(hf) {
  const g = /^h\.(\d+)\.(.+)$/.exec(hf);
  if (g || Object.hasOwn(GPT2_GLOBAL, hf)) return gpt2Name(g, hf);
  const m = /^model\.layers\.(\d+)\.(.+)$/.exec(hf), name = m ? LAYER[m[2]] && `blk.${m[1]}.${LAYER[m[2]]}` : GLOBAL[hf];
  if (!name) throw new Error(`gguf-writer: no llama.cpp name for the tensor ${hf}`);
  return name;
}

function gpt2Name(m, hf) {
  const name = m ? GPT2_LAYER[m[2]] && `blk.${m[1]}.${GPT2_LAYER[m[2]]}` : GPT2_GLOBAL[hf];
  if (!name) throw new Error(`gguf-writer: no llama.cpp name for the GPT-2 tensor ${hf}`);
  return name;
}

/** Hugging Face's name of a tensor of llama.cpp's files: ggufName's inverse (arch 'gpt2': GPT-2's names). */
export function hfName(gguf, arch = 'llama') {
  if (arch === 'gpt2') {
    const g = /^blk\.(\d+)\.(.+)$/.exec(gguf), name = g ? GPT2_UNLAYER[g[2]] && `h.${g[1]}.${GPT2_UNLAYER[g[2]]}` : GPT2_UNGLOBAL[gguf];
    if (!name) throw new Error(`gguf-writer: no GPT-2 name for the tensor ${gguf}`);
    return name;
  }
  const m = /^blk\.(\d+)\.(.+)$/.exec(gguf), name = m ? UNLAYER[m[2]] && `model.layers.${m[1]}.${UNLAYER[m[2]]}` : UNGLOBAL[gguf];
  if (!name) throw new Error(`gguf-writer: no Hugging Face name for the tensor ${gguf}`);
  return name;
}

/** LlamaModel.permute (convert_hf_to_gguf.py) on rows of bytes: head h's row a·D/2 + b goes to row 2b + a. */
export function permuteRows(bytes, rows, heads) {
  const D = rows / heads, half2 = D / 2, w = bytes.length / rows, out = new Uint8Array(bytes.length);
  for (let h = 0; h < heads; h++) {
    for (let a = 0; a < 2; a++) {
      for (let b = 0; b < half2; b++) out.set(bytes.subarray((h * D + a * half2 + b) * w, (h * D + a * half2 + b + 1) * w), (h * D + 2 * b + a) * w);
    }
  }
  return out;
}

/**
 * A GGUF file written a tensor at a time (a 2 GB file needs one tensor's piece of memory): the
 * header as tests/gguf-writer.js lays it out (alignment 32), then each tensor's bytes.
 * tensors: [{ name, shape (PyTorch's order), type (ggml's name), pieces() }], pieces an iterable
 * of Uint8Arrays that together are the tensor's bytes. Returns the file's size in bytes.
 */
export function writeGgufFile(file, { metadata, tensors }) {
  const ALIGN = 32, sizes = tensors.map((t) => tensorBytes(t.type, [...t.shape].reverse()));
  const { bytes: header, at } = writeGguf({ metadata, tensors: tensors.map((t) => ({ name: t.name, shape: t.shape, type: t.type, data: new Uint8Array(0) })) });
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  let offset = 0;
  tensors.forEach((t, i) => {
    view.setBigUint64(at.tensors.get(t.name).offset, BigInt(offset), true);
    offset += Math.ceil(sizes[i] / ALIGN) * ALIGN;
  });
  const fd = fs.openSync(file, 'w'), zeros = new Uint8Array(ALIGN);
  try {
    fs.writeSync(fd, header);
    tensors.forEach((t, i) => {
      let written = 0;
      for (const piece of t.pieces()) written += fs.writeSync(fd, piece);
      if (written !== sizes[i]) throw new Error(`gguf-writer: tensor ${t.name} (${t.type} ${t.shape.join(' × ')}) takes ${sizes[i]} bytes; its pieces gave ${written}`);
      fs.writeSync(fd, zeros, 0, (ALIGN - (written % ALIGN)) % ALIGN);
    });
  } finally {
    fs.closeSync(fd);
  }
  return header.length + offset;
}
