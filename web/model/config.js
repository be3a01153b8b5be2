// config.js - a GPT-2 config.json, read as Hugging Face's GPT2Config reads it, and refused when
// it asks for maths the runtime does not do.
//
//   readConfig(config)    config: an object or its JSON text
//     -> { n_layer, n_head, n_embd, vocab_size, n_positions, layer_norm_epsilon, raw }  (frozen)
//        raw is the object that was read (the parsed JSON for a text)
//
// Failures: INVALID_ARGUMENT when config is neither an object nor a string; INVALID_MODEL for a
// text that is not a JSON object, a missing or malformed size, or a supported-maths key with an
// unsupported value (named in the message); TOO_LARGE for a size above 2^31 - 1.
//
// The keys, from transformers' GPT2Config (configuration_gpt2.py: __init__, attribute_map) and
// what GPT2Model / GPT2LMHeadModel read from PretrainedConfig:
//
// | key                              | HF default   | here                                                   |
// |----------------------------------|--------------|--------------------------------------------------------|
// | n_layer  (alias num_hidden_layers)     | 12     | required, positive integer                             |
// | n_head   (alias num_attention_heads)   | 12     | required, positive integer dividing n_embd             |
// | n_embd   (alias hidden_size)           | 768    | required, positive integer                             |
// | vocab_size                             | 50257  | required, positive integer                             |
// | n_positions (alias max_position_embeddings) | 1024 | required, positive integer                        |
// | layer_norm_epsilon               | 1e-5         | positive finite number; 1e-5 when absent               |
// | n_inner                          | null (=4C)   | null, absent or 4·n_embd; anything else refused        |
// | activation_function              | "gelu_new"   | "gelu_new" or "gelu_pytorch_tanh" (the same tanh       |
// |                                  |              | formula in HF's activations.py); others refused        |
// | scale_attn_weights               | true         | true; false (no 1/√d scaling) refused                  |
// | scale_attn_by_inverse_layer_idx  | false        | false; true (scores / (layer + 1)) refused             |
// | reorder_and_upcast_attn          | false        | false; true refused (another order of the scaling)     |
// | add_cross_attention              | false        | false; true (cross-attention blocks) refused           |
// | tie_word_embeddings              | true         | true; false (an lm_head of its own) refused            |
// | pruned_heads                     | {}           | empty; heads pruned (smaller c_attn) refused           |
// | model_type                       | "gpt2"       | "gpt2"; any other model refused                        |
// | n_ctx                            | (not read)   | ignored: GPT2Config no longer reads it, the causal     |
// |                                  |              | mask is sized by n_positions; NOT an alias here        |
// | layer_norm_eps                   | (not read)   | ignored, as GPT2Config does (only layer_norm_epsilon)  |
// | resid_pdrop, embd_pdrop, attn_pdrop, summary_first_dropout | 0.1 | ignored: dropout is off at inference  |
// | summary_type, summary_use_proj, summary_activation, summary_proj_to_labels | | ignored: GPT2DoubleHeadsModel's head |
// | initializer_range, use_cache, output_attentions, output_hidden_states, return_dict | | ignored: no effect on the forward maths |
// | bos/eos/pad_token_id, architectures, task_specific_params, id2label, label2id, num_labels, problem_type | | ignored: tokenizer and task keys |
// | torch_dtype, dtype, attn_implementation, _attn_implementation, transformers_version, _name_or_path | | ignored: weights become float32; eager/sdpa/flash compute the same |
// | is_encoder_decoder, is_decoder, chunk_size_feed_forward | | ignored: GPT2Model does not read them        |
// | anything else                    |              | ignored                                                |
//
// A key and its alias both present with different values are refused (HF would silently take
// the alias). A key given null counts as absent except where HF gives null a meaning (n_inner).
import { ErrorCode, fail, asError, describe } from '../core/errors.js';
import { stripBom } from './text-files.js';

const MAX_DIM = 0x7fffffff;     // C int, as web/core/args.js

const bad = (message) => fail(ErrorCode.INVALID_MODEL, `config: ${message}`);
const has = (obj, key) => Object.hasOwn(obj, key) && obj[key] !== null && obj[key] !== undefined;

// [name, HF alias or null]
const SIZES = [['n_layer', 'num_hidden_layers'], ['n_head', 'num_attention_heads'], ['n_embd', 'hidden_size'],
  ['vocab_size', null], ['n_positions', 'max_position_embeddings']];

// keys that must hold one value when present: [name, value allowed, what the others would mean]
const FLAGS = [
  ['scale_attn_weights', true, 'attention scores not scaled by 1/√d_head'],
  ['scale_attn_by_inverse_layer_idx', false, 'attention scores also divided by layer + 1'],
  ['reorder_and_upcast_attn', false, 'keys scaled before the dot product, in another order'],
  ['add_cross_attention', false, 'cross-attention blocks in every layer'],
  ['tie_word_embeddings', true, 'an output projection of its own instead of wte'],
];

const ACTIVATIONS = ['gelu_new', 'gelu_pytorch_tanh'];

export function readConfig(config) {
  try {
    return read(config);
  } catch (e) {
    throw asError(e, 'readConfig: reading the config failed');
  }
}

function read(config) {
  let raw = config;
  if (typeof config === 'string') {
    try { raw = JSON.parse(stripBom(config)); } catch (e) { bad(`not valid JSON (${e.message})`); }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) bad(`config.json must hold a JSON object; it holds ${describe(raw)}`);
  } else if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    fail(ErrorCode.INVALID_ARGUMENT, `readConfig: config must be an object (config.json parsed) or its JSON text; received ${describe(config)}`);
  }
  const out = { raw };
  for (const [key, alias] of SIZES) out[key] = size(raw, key, alias);
  if (out.n_embd % out.n_head !== 0) bad(`n_embd = ${out.n_embd} is not a multiple of n_head = ${out.n_head}`);
  out.layer_norm_epsilon = epsilon(raw);
  checkMaths(raw, out.n_embd);
  return Object.freeze(out);
}

// a required positive integer, under its name or HF's alias
function size(raw, key, alias) {
  const a = has(raw, key), b = alias !== null && has(raw, alias);
  if (!a && !b) bad(`${key} is missing${alias ? ` (nor is its alias ${alias} given)` : ''}: expected a positive integer`);
  if (a && b && raw[key] !== raw[alias]) bad(`${key} = ${describe(raw[key])} and its alias ${alias} = ${describe(raw[alias])} disagree`);
  const name = a ? key : alias, value = raw[name];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) bad(`${name} must be a positive integer; received ${describe(value)}`);
  if (value > MAX_DIM) fail(ErrorCode.TOO_LARGE, `config: ${name} = ${value} is above ${MAX_DIM}`);
  return value;
}

function epsilon(raw) {
  if (!has(raw, 'layer_norm_epsilon')) return 1e-5;
  const e = raw.layer_norm_epsilon;
  if (typeof e !== 'number' || !Number.isFinite(e) || e <= 0) bad(`layer_norm_epsilon must be a positive finite number; received ${describe(e)}`);
  if (Math.fround(e) === 0) bad(`layer_norm_epsilon = ${e} underflows to 0 in float32, which the runtime computes in (the smallest it keeps is about 1.4e-45)`);
  if (!Number.isFinite(Math.fround(e))) bad(`layer_norm_epsilon = ${e} is beyond float32's range (about 3.4e38)`);
  return e;
}

// the keys that would change the forward pass, each refused by name
function checkMaths(raw, C) {
  if (has(raw, 'model_type') && raw.model_type !== 'gpt2') bad(`model_type is ${describe(raw.model_type)}; only "gpt2" is supported`);
  if (has(raw, 'activation_function') && !ACTIVATIONS.includes(raw.activation_function)) {
    bad(`activation_function is ${describe(raw.activation_function)}; supported: ${ACTIVATIONS.map((a) => `"${a}"`).join(', ')} (GELU, tanh approximation)`);
  }
  if (has(raw, 'n_inner') && raw.n_inner !== 4 * C) {
    bad(`n_inner is ${describe(raw.n_inner)}; supported: null or 4 · n_embd = ${4 * C}`);
  }
  for (const [key, allowed, meaning] of FLAGS) {
    if (!has(raw, key)) continue;
    const v = raw[key];
    if (typeof v !== 'boolean') bad(`${key} must be true or false; received ${describe(v)}`);
    if (v !== allowed) bad(`${key}: ${v} is not supported (${meaning}); only ${allowed} is`);
  }
  if (has(raw, 'pruned_heads')) {
    const p = raw.pruned_heads;
    if (typeof p !== 'object' || Array.isArray(p) || Object.keys(p).length > 0) {
      bad(`pruned_heads is ${describe(p)}; pruned heads are not supported (expected {})`);
    }
  }
}
