// gguf-config.js - the model config from a GGUF file's metadata: the keys llama.cpp reads
// (src/llama-model.cpp load_hparams) become the config.json keys attnmap's families read
// (web/model/families/), and config.js readConfig makes the config from them, so that a GGUF
// model and a safetensors one of the same shape have the same config.
//
//   ggufConfig(metadata, tensors = null)
//     metadata: parseGguf(...).metadata (a Map) or a plain object of the same keys and values
//     tensors:  parseGguf(...).tensors (or their names), when known: they say what the metadata does not
//     -> readConfig's config (family, n_layer, n_head, kvHeads, headDim, n_embd, intermediate,
//        vocab_size, n_positions, eps, ropeTheta, ropeScaling, qkvBias, qkNorm, tied, …) and
//        format: 'gguf', architecture, permutedQK, ropeFreqs (frozen)
//
// | GGUF key ({arch} = general.architecture)   | config.json key          | when absent (llama.cpp)   |
// |--------------------------------------------|--------------------------|---------------------------|
// | general.architecture: llama, qwen2, qwen3, gpt2 | model_type          | refused; others by name   |
// | {arch}.block_count                         | num_hidden_layers        | refused                   |
// | {arch}.context_length                      | max_position_embeddings  | refused                   |
// | {arch}.embedding_length                    | hidden_size              | refused                   |
// | {arch}.feed_forward_length                 | intermediate_size        | refused (attnmap needs it)|
// | {arch}.attention.head_count                | num_attention_heads      | refused (attnmap needs it)|
// | {arch}.attention.head_count_kv             | num_key_value_heads      | head_count                |
// | {arch}.attention.key_length                | head_dim                 | embedding / head_count    |
// | {arch}.attention.value_length              | (must equal key_length)  | embedding / head_count    |
// | {arch}.rope.dimension_count                | (must equal key_length)  | key_length                |
// | {arch}.attention.layer_norm_rms_epsilon    | rms_norm_eps             | refused                   |
// | {arch}.rope.freq_base                      | rope_theta               | 10000                     |
// | {arch}.rope.scaling.type, .factor          | none, or linear with factor 1; yarn, longrope … refused |
// | {arch}.vocab_size, else the length of tokenizer.ggml.tokens, else token_embd.weight's ne[1] |
// | {arch}.expert_count above 0                | refused: a mixture of experts                        |
// gpt2: block_count, context_length, embedding_length, feed_forward_length (n_inner),
// attention.head_count, attention.layer_norm_epsilon (layer_norm_epsilon).
// A size may be a per-layer array (llama.cpp's get_key_or_arr) when every layer has the same.
//
// From the tensors: tied when there is no output.weight (convert_hf_to_gguf.py leaves it out);
// llama's attention_bias when blk.0.attn_q.bias is there, its mlp_bias when blk.0.ffn_gate.bias is (qwen2 always has q/k/v biases, qwen3
// none); ropeFreqs when an arch llama file has rope_freqs.weight (Llama 3.1 and 3.2's factors, which
// divide RoPE's frequencies: gguf-weights.js checks it, families/llama.js applies it; llama.cpp
// reads it for arch llama only, so another's is an unexpected tensor). Without tensors: untied,
// no biases but qwen2's, no ropeFreqs.
// permutedQK: arch llama stores q and k rows permuted for interleaved RoPE (convert_hf_to_gguf.py
// LlamaModel.permute); qwen2, qwen3 and gpt2 do not.
//
// Failures: INVALID_MODEL "GGUF metadata: …" naming the key, what was expected and what came;
// TOO_LARGE for a size above 2^31 - 1; INVALID_ARGUMENT when metadata is not a Map or object.
import { ErrorCode, fail, describe, quote } from '../../core/errors.js';
import { readConfig } from './config.js';

const ARCHITECTURES = ['llama', 'qwen2', 'qwen3', 'gpt2'];
const MAX_DIM = 0x7fffffff;     // C int, as families/rules.js

const bad = (message) => fail(ErrorCode.INVALID_MODEL, `GGUF metadata: ${message}`);

export function ggufConfig(metadata, tensors = null) {
  const get = getter(metadata);
  const names = tensorNames(tensors);
  const arch = get('general.architecture');
  if (arch === undefined) bad('general.architecture is missing; expected one of llama, qwen2, qwen3, gpt2');
  if (typeof arch !== 'string') bad(`general.architecture must be a string; received ${describe(arch)}`);
  if (!ARCHITECTURES.includes(arch)) bad(`the architecture ${quote(arch)} is not supported; supported: ${ARCHITECTURES.join(', ')}`);
  const k = (key) => `${arch}.${key}`;
  const experts = optionalInt(get, k('expert_count'), 0, 0);
  if (experts > 0) bad(`${k('expert_count')} is ${experts}: a mixture of experts, which attnmap does not run`);
  const raw = arch === 'gpt2' ? gpt2Keys(get, k, names) : llamaKeys(get, k, arch, names);
  const ropeFreqs = arch === 'llama' && (names?.has('rope_freqs.weight') ?? false);
  return Object.freeze({ ...readConfig(raw), format: 'gguf', architecture: arch, permutedQK: arch === 'llama', ropeFreqs });
}

function getter(metadata) {
  if (metadata instanceof Map) return (key) => metadata.get(key);
  if (metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata)) return (key) => (Object.hasOwn(metadata, key) ? metadata[key] : undefined);
  return fail(ErrorCode.INVALID_ARGUMENT, `ggufConfig: metadata must be parseGguf's metadata (a Map) or an object; received ${describe(metadata)}`);
}

function tensorNames(tensors) {
  if (tensors === null || tensors === undefined) return null;
  if (!Array.isArray(tensors)) fail(ErrorCode.INVALID_ARGUMENT, `ggufConfig: tensors must be parseGguf's tensors or their names; received ${describe(tensors)}`);
  return new Map(tensors.map((t) => (typeof t === 'string' ? [t, null] : [t?.name, t])));
}

// the LLaMA family's keys (llama, qwen2, qwen3) as config.json has them
function llamaKeys(get, k, arch, names) {
  const sizes = commonSizes(get, k);
  const { n_head: heads, n_embd: embd } = sizes;
  const kvHeads = optionalInt(get, k('attention.head_count_kv'), heads, 1);
  if (heads % kvHeads !== 0) bad(`${k('attention.head_count')} = ${heads} is not a multiple of ${k('attention.head_count_kv')} = ${kvHeads}`);
  if (!get(k('attention.key_length')) && embd % heads !== 0) bad(`${k('embedding_length')} = ${embd} is not a multiple of ${k('attention.head_count')} = ${heads}, and no ${k('attention.key_length')} is given`);
  const headDim = optionalInt(get, k('attention.key_length'), embd / heads, 1);
  const valueDim = optionalInt(get, k('attention.value_length'), embd / heads, 1);
  if (valueDim !== headDim) bad(`${k('attention.value_length')} = ${valueDim} differs from ${k('attention.key_length')} = ${headDim}; attnmap's heads have one width`);
  if (headDim % 2 !== 0) bad(`${k('attention.key_length')} = ${headDim} is odd; RoPE rotates pairs`);
  const rot = optionalInt(get, k('rope.dimension_count'), headDim, 1);
  if (rot !== headDim) bad(`${k('rope.dimension_count')} = ${rot} but the heads are ${headDim} wide: partial RoPE is not supported`);
  const raw = {
    model_type: arch, num_hidden_layers: sizes.n_layer, num_attention_heads: heads, num_key_value_heads: kvHeads,
    head_dim: headDim, hidden_size: embd, intermediate_size: sizes.n_ff, vocab_size: vocabSize(get, k, names),
    max_position_embeddings: sizes.n_ctx, rms_norm_eps: positiveFloat(get, k('attention.layer_norm_rms_epsilon')),
    rope_theta: ropeTheta(get, k), tie_word_embeddings: names ? !names.has('output.weight') : false,
  };
  if (arch === 'llama') raw.attention_bias = names?.has('blk.0.attn_q.bias') ?? false;
  if (arch === 'llama') raw.mlp_bias = names?.has('blk.0.ffn_gate.bias') ?? false;
  return raw;
}

function gpt2Keys(get, k, names) {
  const s = commonSizes(get, k);
  return {
    model_type: 'gpt2', n_layer: s.n_layer, n_head: s.n_head, n_embd: s.n_embd, n_positions: s.n_ctx, n_inner: s.n_ff,
    vocab_size: vocabSize(get, k, names), layer_norm_epsilon: positiveFloat(get, k('attention.layer_norm_epsilon')),
  };
}

function commonSizes(get, k) {
  return {
    n_layer: requiredInt(get, k('block_count')), n_ctx: requiredInt(get, k('context_length')),
    n_embd: requiredInt(get, k('embedding_length')), n_ff: requiredInt(get, k('feed_forward_length')),
    n_head: requiredInt(get, k('attention.head_count')),
  };
}

// RoPE: llama.cpp's default scaling type is "linear" with factor 0 (none); anything that scales is refused
function ropeTheta(get, k) {
  const base = get(k('rope.freq_base'));
  const theta = base === undefined ? 10000 : base;
  if (typeof theta !== 'number' || !Number.isFinite(theta) || !(theta > 1)) bad(`${k('rope.freq_base')} must be a finite number above 1; received ${describe(theta)}`);
  const type = get(k('rope.scaling.type'));
  if (type !== undefined && type !== 'none' && type !== 'linear') bad(`${k('rope.scaling.type')} is ${describe(type)}; only "none" is supported (no RoPE scaling)`);
  for (const key of [k('rope.scaling.factor'), k('rope.scale_linear')]) {
    const f = get(key);
    if (f !== undefined && type !== 'none' && f !== 0 && f !== 1) bad(`${key} is ${describe(f)}: linear RoPE scaling, which is not supported (expected none, 0 or 1)`);
  }
  return theta;
}

function vocabSize(get, k, names) {
  if (get(k('vocab_size')) !== undefined) return requiredInt(get, k('vocab_size'));
  const tokens = get('tokenizer.ggml.tokens');
  if (Array.isArray(tokens) && tokens.length > 0) return tokens.length;
  if (tokens !== undefined) bad(`tokenizer.ggml.tokens must be a non-empty array of strings; received ${describe(tokens)}`);
  const embd = names?.get('token_embd.weight');
  if (embd?.ne?.length === 2) return intValue(embd.ne[1], 'the rows of token_embd.weight');
  return bad(`the vocabulary size is unknown: neither ${k('vocab_size')} nor tokenizer.ggml.tokens${names ? ' nor token_embd.weight\'s shape' : ''} is given`);
}

// ----------------------------------------------------------------------------
// values

// an integer key: a number or a BigInt (u64, i64), or a per-layer array of one value
function intValue(v, key) {
  let x = v;
  if (ArrayBuffer.isView(x) || Array.isArray(x)) {
    if (x.length === 0) bad(`${key} is an empty array; expected an integer or one per layer`);
    const first = x[0];
    for (let i = 1; i < x.length; i++) if (x[i] !== first) bad(`${key} varies by layer (${x[0]} in layer 0, ${x[i]} in layer ${i}); attnmap runs layers of one shape`);
    x = first;
  }
  if (typeof x === 'bigint') {
    if (x > BigInt(MAX_DIM)) fail(ErrorCode.TOO_LARGE, `GGUF metadata: ${key} = ${x} is above ${MAX_DIM}`);
    x = Number(x);
  }
  if (typeof x !== 'number' || !Number.isInteger(x)) bad(`${key} must be an integer; received ${describe(x)}`);
  if (x > MAX_DIM) fail(ErrorCode.TOO_LARGE, `GGUF metadata: ${key} = ${x} is above ${MAX_DIM}`);
  return x;
}

function requiredInt(get, key) {
  const v = get(key);
  if (v === undefined) bad(`${key} is missing; expected a positive integer`);
  const x = intValue(v, key);
  if (x < 1) bad(`${key} must be a positive integer; received ${x}`);
  return x;
}

function optionalInt(get, key, fallback, min) {
  const v = get(key);
  if (v === undefined) return fallback;
  const x = intValue(v, key);
  if (x < min) bad(`${key} must be at least ${min}; received ${x}`);
  return x;
}

function positiveFloat(get, key) {
  const v = get(key);
  if (v === undefined) bad(`${key} is missing; expected a positive number`);
  if (typeof v !== 'number' || !Number.isFinite(v) || !(v > 0)) bad(`${key} must be a positive finite number; received ${describe(v)}`);
  return v;
}
