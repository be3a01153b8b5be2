// gguf-weights.js - a GGUF file's tensors under the names the families read (checkpoint.js
// matchTensors), so that a GGUF model loads through the same checks and fills as a safetensors
// one. llama.cpp's conventions (convert_hf_to_gguf.py), as tensor infos of safetensors.js's form
// ({ name, dtype, shape, begin, end, source }):
// - names, LLaMA family (llama, qwen2, qwen3): token_embd → model.embed_tokens, output_norm →
//   model.norm, output → lm_head (absent: tied), blk.N.attn_{norm,q,k,v,output,q_norm,k_norm} and
//   ffn_{norm,gate,up,down} (and the biases) → the layer's input_layernorm,
//   self_attn.{q,k,v,o}_proj, q_norm, k_norm, post_attention_layernorm, mlp.{gate,up,down}_proj;
//   arch llama's rope_freqs.weight keeps its name (below);
// - names, GPT-2 (gpt2): token_embd → wte, position_embd → wpe, output_norm → ln_f, output →
//   lm_head (older conversions wrote a copy of token_embd; GPT-2 ties it, so it is not read),
//   blk.N.attn_norm, attn_qkv, attn_output, ffn_norm, ffn_up, ffn_down (weight and bias) →
//   h.N.ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj;
// - shapes: ggml's ne is [in, out] for a matrix, the same bytes as PyTorch's (out, in) row-major
//   (parseGguf's shape is ne reversed);
// - arch llama: q and k rows (and their biases) permuted for interleaved RoPE (LlamaModel.permute:
//   head h's rows a·D/2 + b of Hugging Face's order stored at 2b + a): info.permute = { heads } says
//   the fill must undo it (unpermuteRows); qwen2 and qwen3 are stored as Hugging Face has them;
// - arch llama: rope_freqs.weight (Llama 3.1 and 3.2: what LlamaModel writes for rope_type
//   "llama3"), head_dim / 2 F32 factors that divide RoPE's frequencies (llama.cpp's ggml_rope_ext
//   freq_factors: θ_i = base^(-2i/D) / rope_freqs[i]); any other type or shape is refused, naming it
//   (families/llama.js divides the frequencies by it);
// - arch gpt2: convert_hf_to_gguf.py's GPT2Model transposes Conv1D's (in, out) c_attn, c_proj and
//   c_fc weights to (out, in): info.stored = { shape, transposed } says the fill reads the file's
//   (out, in) and puts it back (readStored). The GPT-2 forward runs on float32 weights (c_src/gpt2.c),
//   so a gpt2 file's tensors are F32, F16, BF16 or Q8_0, widened as they are read (Q8_0 as ggml's
//   dequantize_row_q8_0 does: each int8 times its block's float16 scale, in float32).
// Types: F32, F16 and BF16 are read as safetensors' are. A LLaMA-family matrix may also be of ggml's
// block-quantized types Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL and
// IQ4_XS (gguf.js QUANTIZED_TYPES): its info carries block { size, bytes }, and its bytes go into
// wasm memory as they are (safetensors.js copyTensor; the C dequantizes where it reads them,
// c_src/tensor.h). Any other type (Q8_1, Q8_K, the IQ2/IQ3/IQ1 and TQ types, MXFP4, …), and a
// quantized vector (norms and biases: F32, F16 or BF16) are refused by name.
//
//   ggufWeights(parsed, config, source) -> { tensors: Map(name → info), metadata: null, files: [label] }
//   unpermuteRows(dest, rows, rowLength, heads)   dest's rows back in Hugging Face's order, in place
//   readStored(info, dest)   a tensor with info.stored (gpt2) into dest (float32), in the family's layout
import { ErrorCode, fail, quote, shapeText } from '../../core/errors.js';
import { readTensor, readTensorAsync, copyTensor, f16Table } from './safetensors.js';
import { SUPPORTED_TYPES } from './gguf.js';

const bad = (message) => fail(ErrorCode.INVALID_MODEL, message);

// llama.cpp's names -> the family's: the tensors outside the blocks, a block's (after blk.N.), and
// the prefix of block N's names
const LLAMA = {
  global: { 'token_embd.weight': 'model.embed_tokens.weight', 'output_norm.weight': 'model.norm.weight', 'output.weight': 'lm_head.weight' },
  layer: {
    'attn_norm.weight': 'input_layernorm.weight', 'ffn_norm.weight': 'post_attention_layernorm.weight',
    'attn_q.weight': 'self_attn.q_proj.weight', 'attn_q.bias': 'self_attn.q_proj.bias',
    'attn_k.weight': 'self_attn.k_proj.weight', 'attn_k.bias': 'self_attn.k_proj.bias',
    'attn_v.weight': 'self_attn.v_proj.weight', 'attn_v.bias': 'self_attn.v_proj.bias',
    'attn_output.weight': 'self_attn.o_proj.weight', 'attn_output.bias': 'self_attn.o_proj.bias',
    'attn_q_norm.weight': 'self_attn.q_norm.weight', 'attn_k_norm.weight': 'self_attn.k_norm.weight',
    'ffn_gate.weight': 'mlp.gate_proj.weight', 'ffn_up.weight': 'mlp.up_proj.weight', 'ffn_down.weight': 'mlp.down_proj.weight',
    'ffn_gate.bias': 'mlp.gate_proj.bias', 'ffn_up.bias': 'mlp.up_proj.bias', 'ffn_down.bias': 'mlp.down_proj.bias',
  },
  block: (i) => `model.layers.${i}.`,
};
const GPT2 = {
  global: {
    'token_embd.weight': 'wte.weight', 'position_embd.weight': 'wpe.weight', 'output.weight': 'lm_head.weight',
    'output_norm.weight': 'ln_f.weight', 'output_norm.bias': 'ln_f.bias',
  },
  layer: {
    'attn_norm.weight': 'ln_1.weight', 'attn_norm.bias': 'ln_1.bias',
    'attn_qkv.weight': 'attn.c_attn.weight', 'attn_qkv.bias': 'attn.c_attn.bias',
    'attn_output.weight': 'attn.c_proj.weight', 'attn_output.bias': 'attn.c_proj.bias',
    'ffn_norm.weight': 'ln_2.weight', 'ffn_norm.bias': 'ln_2.bias',
    'ffn_up.weight': 'mlp.c_fc.weight', 'ffn_up.bias': 'mlp.c_fc.bias',
    'ffn_down.weight': 'mlp.c_proj.weight', 'ffn_down.bias': 'mlp.c_proj.bias',
  },
  block: (i) => `h.${i}.`,
};
const NAMES = { llama: LLAMA, gpt2: GPT2 };
// the tensors whose rows llama's conversion permuted, and the config's head count for each
const PERMUTED = { 'attn_q.weight': 'n_head', 'attn_q.bias': 'n_head', 'attn_k.weight': 'kvHeads', 'attn_k.bias': 'kvHeads' };
// the gpt2 matrices GPT2Model transposed, and the types a gpt2 file's tensors are read in
const TRANSPOSED = new Set(['attn_qkv.weight', 'attn_output.weight', 'ffn_up.weight', 'ffn_down.weight']);
const GPT2_TYPES = ['F32', 'F16', 'BF16', 'Q8_0'];
const ROPE_FREQS = 'rope_freqs.weight';

function nameOf(names, name) {
  if (Object.hasOwn(names.global, name)) return { hf: names.global[name], part: name };
  const m = /^blk\.(\d{1,6})\.(.+)$/.exec(name);
  if (!m || !Object.hasOwn(names.layer, m[2])) return null;
  return { hf: names.block(Number(m[1])) + names.layer[m[2]], part: m[2] };
}

export function ggufWeights(parsed, config, source, label = 'model.gguf') {
  const names = NAMES[config.family];
  if (!names) bad(`${label}: a GGUF file of architecture ${quote(config.architecture ?? config.family)} is not read (llama, qwen2, qwen3 and gpt2 are)`);
  const tensors = new Map();
  for (const t of parsed.tensors) {
    if (t.name === ROPE_FREQS && config.ropeFreqs) {
      tensors.set(ROPE_FREQS, ropeFreqsInfo(t, config, source, label));
      continue;
    }
    const to = nameOf(names, t.name);
    if (!to) bad(`${label}: unexpected tensor ${quote(t.name)}: not a tensor of a ${config.architecture} model as llama.cpp writes it`);
    const info = { name: to.hf, dtype: t.typeName, shape: t.shape.slice(), begin: t.offset, end: t.offset + t.bytes, source, ...blockOf(t, label) };
    if (config.permutedQK && Object.hasOwn(PERMUTED, to.part)) info.permute = { heads: config[PERMUTED[to.part]] };
    if (config.family === 'gpt2') Object.assign(info, gpt2Layout(t, to.part, label));
    tensors.set(to.hf, info);
  }
  return { tensors, metadata: null, files: [label] };
}

// a supported type's { block } for a quantized matrix ({} for F32, F16, BF16); the rest refused by name
function blockOf(t, label) {
  if (!SUPPORTED_TYPES.includes(t.typeName)) bad(`${label}: tensor ${quote(t.name)} is ${t.typeName}; attnmap reads GGUF tensors of type ${SUPPORTED_TYPES.join(', ')}`);
  if (t.blockSize === 1) return {};
  if (t.ne.length !== 2) bad(`${label}: tensor ${quote(t.name)} is ${t.typeName} with ${t.ne.length} dimension${t.ne.length === 1 ? '' : 's'}: attnmap reads quantized matrices; a vector (a norm, a bias) must be F32, F16 or BF16`);
  return { block: { size: t.blockSize, bytes: t.blockBytes, code: t.type << 8 } };   // code: c_src/tensor.h's dtype (ggml id << 8)
}

// rope_freqs.weight exactly as llama.cpp reads it: F32, head_dim / 2 values
function ropeFreqsInfo(t, config, source, label) {
  const half = config.headDim / 2, what = `${label}: tensor "${ROPE_FREQS}" (RoPE's frequency factors, Llama 3's scaling)`;
  if (t.typeName !== 'F32') bad(`${what} is ${t.typeName}; expected F32, as llama.cpp writes and reads it`);
  if (t.ne.length !== 1 || t.ne[0] !== half) bad(`${what} has shape ${shapeText(t.shape)}; expected ${shapeText([half])}: one factor per pair of a head's head_dim = ${config.headDim} dimensions`);
  return { name: ROPE_FREQS, dtype: 'F32', shape: [half], begin: t.offset, end: t.offset + t.bytes, source };
}

// a gpt2 file's tensor: a type the GPT-2 forward's float32 weights can be read from (the output
// copy, which is not read, may be any type blockOf takes); stored = { shape, transposed } when the
// fill must widen (Q8_0) or transpose it (readStored): a transposed one's family shape is then
// Conv1D's (in, out), ggml's ne
function gpt2Layout(t, part, label) {
  if (part !== 'output.weight' && !GPT2_TYPES.includes(t.typeName)) {
    bad(`${label}: tensor ${quote(t.name)} is ${t.typeName}; a gpt2 file's tensors are read as ${GPT2_TYPES.join(', ')} (the GPT-2 forward runs on float32 weights, widened as they are read)`);
  }
  const transposed = TRANSPOSED.has(part);
  if (!transposed && t.blockSize === 1) return {};
  return { shape: transposed ? t.ne.slice() : t.shape.slice(), stored: { shape: t.shape.slice(), transposed } };
}

/**
 * dest holds `rows` rows of rowLength elements (a matrix's rows, or a bias: rowLength 1) in
 * llama.cpp's order; each head's D = rows / heads rows go back to Hugging Face's: row 2b + a of a
 * head is its row a·D/2 + b. dest: a typed array of the values, or the bytes (rowLength in bytes:
 * 2 a value for BF16 or F16, cols / block blocks for a quantized row, whose blocks never span rows).
 */
export function unpermuteRows(dest, rows, rowLength, heads) {
  const D = rows / heads, half = D / 2;
  if (!Number.isInteger(D) || D % 2 !== 0) bad(`a permuted q or k of ${rows} rows does not split into ${heads} heads of an even width`);
  for (let h = 0; h < heads; h++) {
    const at = h * D * rowLength, head = dest.slice(at, at + D * rowLength);
    for (let a = 0; a < 2; a++) {
      for (let b = 0; b < half; b++) {
        const from = (2 * b + a) * rowLength, to = at + (a * half + b) * rowLength;
        dest.set(head.subarray(from, from + rowLength), to);
      }
    }
  }
}

// ----------------------------------------------------------------------------
// a gpt2 file's tensor, widened and transposed as it is read

/**
 * The values of a tensor whose info has stored = { shape, transposed } (gguf-weights.js's gpt2
 * tensors) into dest (a Float32Array of its count) in the family's layout: read as the file has
 * it (stored.shape; F32, F16, BF16 by safetensors.js, Q8_0 dequantized here), then transposed
 * from (out, in) to (in, out) when stored.transposed. A promise when the source's reads are.
 */
export function readStored(info, dest) {
  const asStored = { ...info, shape: info.stored.shape }, [rows, cols] = info.stored.shape;
  const floats = info.stored.transposed ? new Float32Array(dest.length) : dest;
  let done;
  if (info.block) {
    const bytes = new Uint8Array(info.end - info.begin);
    done = after(copyTensor(info.source, asStored, bytes), () => dequantizeQ8(bytes, floats));
  } else {
    done = info.source.async ? readTensorAsync(info.source, asStored, floats) : readTensor(info.source, asStored, floats);
  }
  return info.stored.transposed ? after(done, () => transpose(floats, rows, cols, dest)) : done;
}

// k() now, or when v (a promise) resolves
const after = (v, k) => (typeof v?.then === 'function' ? v.then(k) : k());

// Q8_0 blocks (ggml-common.h block_q8_0: a float16 scale d, then 32 int8 q) -> q·d in float32,
// as ggml's dequantize_row_q8_0 (an int8 times a float16 is exact in double: one rounding, float32's)
function dequantizeQ8(bytes, out) {
  const half = f16Table();   // a float16 scale, exactly
  for (let b = 0, at = 0; at < bytes.length; b++, at += 34) {
    const d = half[bytes[at] | (bytes[at + 1] << 8)];
    for (let j = 0; j < 32; j++) out[32 * b + j] = ((bytes[at + 2 + j] << 24) >> 24) * d;
  }
}


// src (rows, cols) -> dest (cols, rows)
function transpose(src, rows, cols, dest) {
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) dest[c * rows + r] = src[r * cols + c];
}
