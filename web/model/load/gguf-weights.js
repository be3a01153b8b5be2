// gguf-weights.js - a GGUF file's tensors under the names the families read (checkpoint.js
// matchTensors), so that a GGUF model loads through the same checks and fills as a safetensors
// one. llama.cpp's conventions (convert_hf_to_gguf.py), as tensor infos of safetensors.js's form
// ({ name, dtype, shape, begin, end, source }):
// - names: token_embd → model.embed_tokens, output_norm → model.norm, output → lm_head (absent:
//   tied), blk.N.attn_{norm,q,k,v,output,q_norm,k_norm} and ffn_{norm,gate,up,down} (and the biases) → the
//   layer's input_layernorm, self_attn.{q,k,v,o}_proj, q_norm, k_norm, post_attention_layernorm,
//   mlp.{gate,up,down}_proj;
// - shapes: ggml's ne is [in, out] for a matrix, the same bytes as PyTorch's (out, in) row-major
//   (parseGguf's shape is ne reversed);
// - arch llama: q and k rows (and their biases) permuted for interleaved RoPE (LlamaModel.permute:
//   head h's rows a·D/2 + b of Hugging Face's order stored at 2b + a): info.permute = { heads } says
//   the fill must undo it (unpermuteRows); qwen2 and qwen3 are stored as Hugging Face has them.
// Types: F32, F16 and BF16 are read as safetensors' are. A matrix may also be of ggml's
// block-quantized types Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL and
// IQ4_XS (gguf.js QUANTIZED_TYPES): its info carries block { size, bytes }, and its bytes go into
// wasm memory as they are (safetensors.js copyTensor; the C dequantizes where it reads them,
// c_src/tensor.h). Any other type (Q8_1, Q8_K, the IQ2/IQ3/IQ1 and TQ types, MXFP4, …), a
// quantized vector (norms and biases: F32, F16 or BF16), and rope_freqs.weight (Llama 3.1's
// scaled RoPE: not read yet, issue 38) are refused by name.
//
//   ggufWeights(parsed, config, source) -> { tensors: Map(name → info), metadata: null, files: [label] }
//   unpermuteRows(dest, rows, rowLength, heads)   dest's rows back in Hugging Face's order, in place
import { ErrorCode, fail, quote } from '../../core/errors.js';
import { SUPPORTED_TYPES } from './gguf.js';

const bad = (message) => fail(ErrorCode.INVALID_MODEL, message);

const GLOBAL = { 'token_embd.weight': 'model.embed_tokens.weight', 'output_norm.weight': 'model.norm.weight', 'output.weight': 'lm_head.weight' };
const LAYER = {
  'attn_norm.weight': 'input_layernorm.weight', 'ffn_norm.weight': 'post_attention_layernorm.weight',
  'attn_q.weight': 'self_attn.q_proj.weight', 'attn_q.bias': 'self_attn.q_proj.bias',
  'attn_k.weight': 'self_attn.k_proj.weight', 'attn_k.bias': 'self_attn.k_proj.bias',
  'attn_v.weight': 'self_attn.v_proj.weight', 'attn_v.bias': 'self_attn.v_proj.bias',
  'attn_output.weight': 'self_attn.o_proj.weight', 'attn_output.bias': 'self_attn.o_proj.bias',
  'attn_q_norm.weight': 'self_attn.q_norm.weight', 'attn_k_norm.weight': 'self_attn.k_norm.weight',
  'ffn_gate.weight': 'mlp.gate_proj.weight', 'ffn_up.weight': 'mlp.up_proj.weight', 'ffn_down.weight': 'mlp.down_proj.weight',
  'ffn_gate.bias': 'mlp.gate_proj.bias', 'ffn_up.bias': 'mlp.up_proj.bias', 'ffn_down.bias': 'mlp.down_proj.bias',
};
// the tensors whose rows llama's conversion permuted, and the config's head count for each
const PERMUTED = { 'attn_q.weight': 'n_head', 'attn_q.bias': 'n_head', 'attn_k.weight': 'kvHeads', 'attn_k.bias': 'kvHeads' };

function nameOf(name) {
  if (Object.hasOwn(GLOBAL, name)) return { hf: GLOBAL[name] };
  const m = /^blk\.(\d{1,6})\.(.+)$/.exec(name);
  if (!m || !Object.hasOwn(LAYER, m[2])) return null;
  return { hf: `model.layers.${Number(m[1])}.${LAYER[m[2]]}`, part: m[2] };
}

export function ggufWeights(parsed, config, source, label = 'model.gguf') {
  if (config.family !== 'llama') bad(`${label}: a GGUF file of architecture ${quote(config.architecture ?? config.family)} is not read yet (llama, qwen2 and qwen3 are)`);
  const tensors = new Map();
  for (const t of parsed.tensors) {
    if (t.name === 'rope_freqs.weight') bad(`${label}: tensor "rope_freqs.weight" (Llama 3.1's scaled RoPE frequencies) is not read yet`);
    const to = nameOf(t.name);
    if (!to) bad(`${label}: unexpected tensor ${quote(t.name)}: not a tensor of a ${config.architecture} model as llama.cpp writes it`);
    const info = { name: to.hf, dtype: t.typeName, shape: t.shape.slice(), begin: t.offset, end: t.offset + t.bytes, source, ...blockOf(t, label) };
    if (config.permutedQK && Object.hasOwn(PERMUTED, to.part)) info.permute = { heads: config[PERMUTED[to.part]] };
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
