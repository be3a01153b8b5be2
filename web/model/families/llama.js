// llama.js - the LLaMA family (Hugging Face's LlamaForCausalLM, Qwen2ForCausalLM,
// Qwen3ForCausalLM: Llama 3.x, SmolLM2, TinyLlama, Qwen2.5, Qwen3): its config.json rules, its
// tensors, and how web/model/runtime.js runs it (c_src/llama.h). One module of web/model/families/.
//
// config.json (transformers' configuration_llama.py, configuration_qwen2.py, configuration_qwen3.py):
// | key                          | here                                                            |
// |------------------------------|-----------------------------------------------------------------|
// | model_type                   | llama, qwen2 or qwen3                                           |
// | hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, vocab_size,           |
// | max_position_embeddings      | required, positive integers                                     |
// | num_key_value_heads          | default num_attention_heads; must divide it (GQA)              |
// | head_dim                     | default hidden_size / num_attention_heads; even                 |
// | rms_norm_eps                 | default 1e-6; positive, a float32 above 0                       |
// | rope_theta, rope_scaling     | older files; default 10000, none                                |
// | rope_parameters              | newer files: { rope_type, rope_theta, scaling keys }            |
// | rope type                    | "default" or "llama3" (factor, low_freq_factor,                  |
// |                              | high_freq_factor, original_max_position_embeddings); any other  |
// |                              | (linear, dynamic, yarn, longrope, …) refused by name            |
// | tie_word_embeddings          | default false; true: logits through embed_tokens                |
// | hidden_act                   | "silu" only                                                     |
// | attention_bias               | llama, qwen3: biases on q, k, v and o_proj (default false);     |
// |                              | qwen2 has none of the key: q, k, v always have biases, o none   |
// | mlp_bias                     | llama: biases on gate, up, down (default false)                 |
// | use_sliding_window           | false only; then sliding_window and max_window_layers are not   |
// |                              | read (HF's own versions disagree on them; issue #38002)          |
// | layer_types                  | when given, "full_attention" in every layer                     |
// | pretraining_tp, attention_dropout, initializer_range, use_cache, bos/eos/pad ids, torch_dtype, |
// | dtype, architectures, transformers_version …  | ignored: no effect on the forward maths       |
// Qwen3 adds an RMSNorm over each head of q and k (q_norm, k_norm) before RoPE.
//
// Tensors (nn.Linear's (out, in)), names after "model." (or none, as LlamaModel saves them):
// embed_tokens.weight (V, C), norm.weight (C), layers.{i}.input_layernorm.weight (C),
// layers.{i}.post_attention_layernorm.weight (C), layers.{i}.self_attn.{q,k,v,o}_proj.weight
// (H·D, C), (G·D, C), (G·D, C), (C, H·D) and .bias where the config says, layers.{i}.self_attn.
// {q,k}_norm.weight (D) for qwen3, layers.{i}.mlp.{gate,up,down}_proj.weight (F, C), (F, C),
// (C, F); lm_head.weight (V, C), never prefixed, when not tied (when tied and stored anyway, it
// is ignored). Accepted and ignored: layers.{i}.self_attn.rotary_emb.inv_freq (older exports).
// A GGUF file of arch llama may add rope_freqs.weight (head_dim / 2), never prefixed (config.ropeFreqs,
// load/gguf-config.js): Llama 3.1's scaling as llama.cpp applies it, factors dividing RoPE's frequencies.
// Matrices keep their dtype in wasm memory (BF16 stays 2 bytes); vectors become float32.
import { ErrorCode, fail, describe, shapeText } from '../../core/errors.js';
import { reserve, cString } from '../../core/memory.js';
import { uploadTable, DTYPES } from './table.js';
import { positiveSize, flag, has, epsilonOf, bad } from './rules.js';

const MODEL_TYPES = ['llama', 'qwen2', 'qwen3'];
const ROPE_TYPES = ['default', 'llama3'];
const ATTN_OK = 0;   // c_src/attention.h

/** config.json (parsed) -> the sizes and switches the runtime uses. */
function readConfig(raw) {
  const type = raw.model_type;
  const c = {
    family: 'llama', modelType: type,
    n_layer: positiveSize(raw, 'num_hidden_layers'), n_head: positiveSize(raw, 'num_attention_heads'),
    n_embd: positiveSize(raw, 'hidden_size'), intermediate: positiveSize(raw, 'intermediate_size'),
    vocab_size: positiveSize(raw, 'vocab_size'), n_positions: positiveSize(raw, 'max_position_embeddings'),
  };
  c.kvHeads = has(raw, 'num_key_value_heads') ? positiveSize(raw, 'num_key_value_heads') : c.n_head;
  if (c.n_head % c.kvHeads !== 0) bad(`num_attention_heads = ${c.n_head} is not a multiple of num_key_value_heads = ${c.kvHeads}`);
  c.headDim = has(raw, 'head_dim') ? positiveSize(raw, 'head_dim') : c.n_embd / c.n_head;
  if (!Number.isInteger(c.headDim)) bad(`hidden_size = ${c.n_embd} is not a multiple of num_attention_heads = ${c.n_head} (and no head_dim is given)`);
  if (c.headDim % 2 !== 0) bad(`head_dim = ${c.headDim} is odd; RoPE rotates pairs`);
  c.eps = epsilonOf(raw, 'rms_norm_eps', 1e-6);
  c.tied = has(raw, 'tie_word_embeddings') ? booleanOf(raw, 'tie_word_embeddings') : false;
  Object.assign(c, biasesOf(raw, type), { qkNorm: type === 'qwen3' }, ropeOf(raw));
  checkMaths(raw);
  return { ...c, layers: c.n_layer, heads: c.n_head, hidden: c.n_embd };
}

function booleanOf(raw, key) {
  if (typeof raw[key] !== 'boolean') bad(`${key} must be true or false; received ${describe(raw[key])}`);
  return raw[key];
}

// which projections have biases: the key that says so differs by model_type (see the table)
function biasesOf(raw, type) {
  if (type === 'qwen2') return { qkvBias: true, oBias: false, mlpBias: false };
  const attention = has(raw, 'attention_bias') ? booleanOf(raw, 'attention_bias') : false;
  const mlp = type === 'llama' && has(raw, 'mlp_bias') ? booleanOf(raw, 'mlp_bias') : false;
  return { qkvBias: attention, oBias: attention, mlpBias: mlp };
}

function checkMaths(raw) {
  if (has(raw, 'hidden_act') && raw.hidden_act !== 'silu') bad(`hidden_act is ${describe(raw.hidden_act)}; only "silu" (SwiGLU) is supported`);
  flag(raw, 'use_sliding_window', false, 'sliding-window attention');
  if (has(raw, 'layer_types')) {
    const t = raw.layer_types;
    if (!Array.isArray(t) || t.some((x) => x !== 'full_attention')) bad(`layer_types is ${describe(t)}; only "full_attention" layers are supported (sliding-window attention is not)`);
  }
}

// RoPE's settings from either vintage -> { ropeTheta, ropeScaling: null | { factor, low, high, original } }
function ropeOf(raw) {
  const p = has(raw, 'rope_parameters') ? raw.rope_parameters : null;
  if (p !== null && (typeof p !== 'object' || Array.isArray(p))) bad(`rope_parameters must be an object; received ${describe(p)}`);
  const scaling = p ?? (has(raw, 'rope_scaling') ? raw.rope_scaling : null);
  if (scaling !== null && (typeof scaling !== 'object' || Array.isArray(scaling))) bad(`rope_scaling must be an object or null; received ${describe(scaling)}`);
  const theta = p && has(p, 'rope_theta') ? p.rope_theta : has(raw, 'rope_theta') ? raw.rope_theta : 10000;
  if (typeof theta !== 'number' || !(theta > 1) || !Number.isFinite(theta)) bad(`rope_theta must be a finite number above 1; received ${describe(theta)}`);
  const type = scaling === null ? 'default' : scaling.rope_type ?? scaling.type ?? 'default';
  if (!ROPE_TYPES.includes(type)) bad(`the RoPE type ${describe(type)} is not supported; supported: ${ROPE_TYPES.map((t) => `"${t}"`).join(', ')}`);
  if (type === 'default') return { ropeTheta: theta, ropeScaling: null };
  const num = (key, fallback) => {
    const v = has(scaling, key) ? scaling[key] : fallback;
    if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v)) bad(`the llama3 RoPE scaling's ${key} must be a positive number; received ${describe(v)}`);
    return v;
  };
  const s = { factor: num('factor'), low: num('low_freq_factor'), high: num('high_freq_factor'),
    original: num('original_max_position_embeddings', raw.max_position_embeddings) };
  if (!(s.high > s.low)) bad(`the llama3 RoPE scaling needs high_freq_factor > low_freq_factor; received ${s.high} and ${s.low}`);
  if (!(s.factor >= 1)) bad(`the llama3 RoPE scaling's factor must be at least 1 (it divides the long wavelengths' frequencies); received ${s.factor}`);
  return { ropeTheta: theta, ropeScaling: s };
}

// RoPE's frequencies (D/2, float32) made in wasm memory by C's attn_rope_frequencies (c_src/rope.c,
// llama3 scaling included: the one RoPE, the page's too), then, for a GGUF file with
// rope_freqs.weight (c.ropeFreqs), each divided by its factor as llama.cpp does (θ_i / rope_freqs[i],
// rounded once to float32) -> table.js's { at, dtype, count, bytes }. A generator: the factors are
// read by the runtime's fill.
function* ropeFrequencies(rt, c, fill, tensors) {
  const factors = c.ropeFreqs ? yield* ropeFactors(fill, tensors, c) : null;
  const { mem } = rt, { exports } = mem, s = c.ropeScaling, bytes = c.headDim / 2 * 4;
  const at = reserve(mem, bytes, () => 'RoPE\'s frequencies');
  let scaling = 0;
  try {
    if (s) {   // attn_rope_scaling: factor, low_freq_factor, high_freq_factor, original_max_positions (doubles)
      scaling = reserve(mem, 32, () => 'RoPE\'s scaling');
      new Float64Array(mem.memory.buffer, scaling, 4).set([s.factor, s.low, s.high, s.original]);
    }
    const status = exports.attn_rope_frequencies(at, c.headDim, c.ropeTheta, scaling);
    if (status !== ATTN_OK) fail(ErrorCode.INVALID_MODEL, `upload: RoPE's frequencies: ${cString(mem, exports.attn_status_string(status))}`);
    if (factors) divideFrequencies(new Float32Array(mem.memory.buffer, at, c.headDim / 2), factors);
  } catch (e) {
    mem.free(at);
    throw e;
  } finally {
    if (scaling) mem.free(scaling);
  }
  return { at, dtype: DTYPES.F32, count: 0, bytes };
}

// rope_freqs.weight's D/2 factors (float32, finite: safetensors.js readTensor), each positive
function* ropeFactors(fill, tensors, c) {
  const entry = tensors?.get('rope_freqs');
  if (!entry) fail(ErrorCode.INVALID_MODEL, 'upload: the config says the file has rope_freqs.weight (ropeFreqs) but no such tensor was given');
  const factors = new Float32Array(c.headDim / 2);
  yield fill('rope_freqs', -1, factors, entry.shape);
  const i = factors.findIndex((r) => !(r > 0));
  if (i >= 0) fail(ErrorCode.INVALID_MODEL, `upload: tensor "rope_freqs.weight" holds ${factors[i]} at index ${i}; RoPE's frequency factors divide the frequencies and must be positive (Llama 3's are 1 and up)`);
  return factors;
}

// θ_i / factor_i, rounded once (float32 / float32 in double is exact before the rounding); each must
// stay in [0, 1], where rope.c's angles are computed (c_src/llama.c checks it too)
function divideFrequencies(theta, factors) {
  for (let i = 0; i < theta.length; i++) {
    const f = theta[i] / factors[i];
    if (!(f <= 1)) fail(ErrorCode.INVALID_MODEL, `upload: tensor "rope_freqs.weight" holds ${factors[i]} at index ${i}, which makes RoPE's frequency ${theta[i]} / ${factors[i]} = ${f}, above 1 (each factor must be at least the frequency it divides)`);
    theta[i] = f;
  }
}

// ----------------------------------------------------------------------------
// the tensors (web/model/load/checkpoint.js's rules)

// [kind, name after layers.{i}. (or the whole name), shape, its origin, when present];
// rope_freqs.weight: a GGUF file's (load/gguf-weights.js), never prefixed
const ROPE_FREQS = 'rope_freqs.weight';
const GLOBAL = [
  ['embed', 'embed_tokens.weight', (c) => [c.vocab_size, c.n_embd], '(vocab_size, hidden_size)', () => true],
  ['norm', 'norm.weight', (c) => [c.n_embd], '(hidden_size)', () => true],
  ['rope_freqs', ROPE_FREQS, (c) => [c.headDim / 2], '(head_dim / 2)', (c) => c.ropeFreqs === true],
];
const BLOCK = [
  ['ln1', 'input_layernorm.weight', (c) => [c.n_embd], '(hidden_size)', () => true],
  ['wq', 'self_attn.q_proj.weight', (c) => [c.n_head * c.headDim, c.n_embd], '(num_attention_heads·head_dim, hidden_size)', () => true],
  ['bq', 'self_attn.q_proj.bias', (c) => [c.n_head * c.headDim], '(num_attention_heads·head_dim)', (c) => c.qkvBias],
  ['wk', 'self_attn.k_proj.weight', (c) => [c.kvHeads * c.headDim, c.n_embd], '(num_key_value_heads·head_dim, hidden_size)', () => true],
  ['bk', 'self_attn.k_proj.bias', (c) => [c.kvHeads * c.headDim], '(num_key_value_heads·head_dim)', (c) => c.qkvBias],
  ['wv', 'self_attn.v_proj.weight', (c) => [c.kvHeads * c.headDim, c.n_embd], '(num_key_value_heads·head_dim, hidden_size)', () => true],
  ['bv', 'self_attn.v_proj.bias', (c) => [c.kvHeads * c.headDim], '(num_key_value_heads·head_dim)', (c) => c.qkvBias],
  ['qnorm', 'self_attn.q_norm.weight', (c) => [c.headDim], '(head_dim)', (c) => c.qkNorm],
  ['knorm', 'self_attn.k_norm.weight', (c) => [c.headDim], '(head_dim)', (c) => c.qkNorm],
  ['wo', 'self_attn.o_proj.weight', (c) => [c.n_embd, c.n_head * c.headDim], '(hidden_size, num_attention_heads·head_dim)', () => true],
  ['bo', 'self_attn.o_proj.bias', (c) => [c.n_embd], '(hidden_size)', (c) => c.oBias],
  ['ln2', 'post_attention_layernorm.weight', (c) => [c.n_embd], '(hidden_size)', () => true],
  ['wgate', 'mlp.gate_proj.weight', (c) => [c.intermediate, c.n_embd], '(intermediate_size, hidden_size)', () => true],
  ['bgate', 'mlp.gate_proj.bias', (c) => [c.intermediate], '(intermediate_size)', (c) => c.mlpBias],
  ['wup', 'mlp.up_proj.weight', (c) => [c.intermediate, c.n_embd], '(intermediate_size, hidden_size)', () => true],
  ['bup', 'mlp.up_proj.bias', (c) => [c.intermediate], '(intermediate_size)', (c) => c.mlpBias],
  ['wdown', 'mlp.down_proj.weight', (c) => [c.n_embd, c.intermediate], '(hidden_size, intermediate_size)', () => true],
  ['bdown', 'mlp.down_proj.bias', (c) => [c.n_embd], '(hidden_size)', (c) => c.mlpBias],
];
const LM_HEAD = ['lm_head', 'lm_head.weight', (c) => [c.vocab_size, c.n_embd], '(vocab_size, hidden_size)', (c) => !c.tied];
const LAYER = /^layers\.(0|[1-9][0-9]{0,9})\.(.+)$/;
const ROTARY = 'self_attn.rotary_emb.inv_freq';

function checkpoint(config) {
  const present = (list) => new Set(list.filter((e) => e[4](config)).map((e) => e[1]));
  const globals = present(GLOBAL), block = present(BLOCK);
  return {
    architecture: `${config.modelType} (LLaMA family) with this config`,
    prefixes: ['model.', ''],
    unprefixed: new Set(['lm_head.weight', ROPE_FREQS]),
    known: (rest) => globals.has(rest) || block.has(LAYER.exec(rest)?.[2]) || (rest === 'lm_head.weight' && !config.tied),
    layerOf: (rest) => { const m = LAYER.exec(rest); return m && (block.has(m[2]) || m[2] === ROTARY) ? Number(m[1]) : null; },
    extra(rest, info, tensors, prefix) {
      if (LAYER.exec(rest)?.[2] === ROTARY) return 'RoPE\'s frequencies as older exports saved them (computed from rope_theta instead)';
      if (rest !== 'lm_head.weight' || !config.tied) return undefined;
      const embed = tensors.get(`${prefix}embed_tokens.weight`);
      if (embed && shapeText(embed.shape) !== shapeText(info.shape)) {
        fail(ErrorCode.INVALID_MODEL, `tensor "lm_head.weight" has shape ${shapeText(info.shape)} but embed_tokens.weight has ${shapeText(embed.shape)}, and tie_word_embeddings is true`);
      }
      return 'tied to embed_tokens.weight (tie_word_embeddings is true)';
    },
    params() {
      const out = [];
      const add = ([kind, name, shapeOf, origin, when], layer) => {
        if (when(config)) out.push({ kind, layer, name: layer < 0 ? name : `layers.${layer}.${name}`, shape: shapeOf(config), origin });
      };
      for (const e of GLOBAL) add(e, -1);
      add(LM_HEAD, -1);
      for (let i = 0; i < config.n_layer; i++) for (const e of BLOCK) add(e, i);
      return out;
    },
  };
}

// ----------------------------------------------------------------------------
// how runtime.js runs it (c_src/llama.h): a table of typed tensors (table.js), in C's order
// (ATTN_LLAMA_*), with RoPE's frequencies made here

const TABLE = {
  globals: ['embed', 'norm', 'lm_head', 'inv_freq'],
  layer: ['ln1', 'wq', 'bq', 'wk', 'bk', 'wv', 'bv', 'qnorm', 'knorm', 'wo', 'bo', 'ln2', 'wgate', 'bgate', 'wup', 'bup', 'wdown', 'bdown'],
  matrices: new Set(['embed', 'lm_head', 'wq', 'wk', 'wv', 'wo', 'wgate', 'wup', 'wdown']),
  made: { inv_freq: ropeFrequencies },
  check: 'attn_llama_check',
};
const CONFIG_BYTES = 36;

function readModelConfig(config) {
  if (config.family !== 'llama' || !Number.isInteger(config.kvHeads) || !Number.isInteger(config.headDim)) {
    fail(ErrorCode.INVALID_ARGUMENT, `upload: config must be readConfig's result for a LLaMA-family model; received ${describe(config)}`);
  }
  return config;
}

// attn_llama_config: 8 ints and eps
function writeConfig(mem, c) {
  const cfg = reserve(mem, CONFIG_BYTES, () => 'the model config');
  new Int32Array(mem.memory.buffer, cfg, 8).set([c.n_layer, c.n_head, c.kvHeads, c.headDim, c.n_embd, c.intermediate, c.vocab_size, c.n_positions]);
  new Float32Array(mem.memory.buffer, cfg + 32, 1)[0] = c.eps;
  return cfg;
}

export default Object.freeze({
  name: 'llama',
  modelTypes: MODEL_TYPES,
  readConfig,
  checkpoint,
  runtime: Object.freeze({
    c: { forward: 'attn_llama_forward', workspaceSize: 'attn_llama_workspace_size', cacheSize: 'attn_llama_cache_size' },
    readModelConfig,
    writeConfig,
    upload: (rt, model, fill, tensors) => uploadTable(rt, model, fill, tensors, TABLE),
    cacheShape: (c) => ({ blocks: c.n_layer * 2 * c.kvHeads, d: c.headDim }),
  }),
});
