// gpt2.js - the GPT-2 family (Hugging Face's GPT2LMHeadModel): its config.json rules, its tensors,
// and how web/model/runtime.js runs it (c_src/gpt2.c). One module of web/model/families/.
//
// config.json, read as transformers' GPT2Config reads it (configuration_gpt2.py: __init__,
// attribute_map), and what GPT2Model / GPT2LMHeadModel read from PretrainedConfig:
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
//
// Tensors (PyTorch order; HF's Conv1D stores weights as (in, out), so x · W needs no transpose),
// with C = n_embd, V = vocab_size, P = n_positions:
//   wte (V, C)   wpe (P, C)   ln1_w ln1_b ln2_w ln2_b lnf_w lnf_b (C)
//   qkv_w (C, 3C)  qkv_b (3C)   attproj_w (C, C)  attproj_b (C)
//   fc_w (C, 4C)   fc_b (4C)    fcproj_w (4C, C)  fcproj_b (C)
// Names: `wte.weight`, `wpe.weight`, `h.{i}.ln_1.weight|bias`, `h.{i}.attn.c_attn.weight|bias`,
// `h.{i}.attn.c_proj.weight|bias`, `h.{i}.ln_2.weight|bias`, `h.{i}.mlp.c_fc.weight|bias`,
// `h.{i}.mlp.c_proj.weight|bias`, `ln_f.weight|bias`, all with `transformer.` in front or none.
// Accepted and ignored: `h.{i}.attn.bias` and `h.{i}.attn.masked_bias` (the causal-mask buffers
// older exports saved; any shape and dtype), and `lm_head.weight` (never prefixed, as
// GPT2LMHeadModel saves it), which must have wte's shape: it is tied to wte, and wte is used.
import { ErrorCode, fail, describe, shapeText } from '../../core/errors.js';
import { reserve, cString } from '../../core/memory.js';
import { positiveSize, flag, has, epsilonOf, bad } from './rules.js';


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

/** config.json (parsed) -> the sizes the runtime uses, GPT-2's names and the family's common ones. */
function readConfig(raw) {
  const out = {};
  for (const [key, alias] of SIZES) out[key] = positiveSize(raw, key, alias);
  if (out.n_embd % out.n_head !== 0) bad(`n_embd = ${out.n_embd} is not a multiple of n_head = ${out.n_head}`);
  out.layer_norm_epsilon = epsilonOf(raw, 'layer_norm_epsilon', 1e-5);
  checkMaths(raw, out.n_embd);
  return {
    family: 'gpt2', ...out, layers: out.n_layer, heads: out.n_head, kvHeads: out.n_head,
    headDim: out.n_embd / out.n_head, hidden: out.n_embd,
  };
}

// the keys that would change the forward pass, each refused by name
function checkMaths(raw, C) {
  if (has(raw, 'activation_function') && !ACTIVATIONS.includes(raw.activation_function)) {
    bad(`activation_function is ${describe(raw.activation_function)}; supported: ${ACTIVATIONS.map((a) => `"${a}"`).join(', ')} (GELU, tanh approximation)`);
  }
  if (has(raw, 'n_inner') && raw.n_inner !== 4 * C) {
    bad(`n_inner is ${describe(raw.n_inner)}; supported: null or 4 · n_embd = ${4 * C}`);
  }
  for (const [key, allowed, meaning] of FLAGS) flag(raw, key, allowed, meaning);
  if (has(raw, 'pruned_heads')) {
    const p = raw.pruned_heads;
    if (typeof p !== 'object' || Array.isArray(p) || Object.keys(p).length > 0) {
      bad(`pruned_heads is ${describe(p)}; pruned heads are not supported (expected {})`);
    }
  }
}

// ----------------------------------------------------------------------------
// the tensors (web/model/load/checkpoint.js's rules)

// kind -> [name after h.{i}. (or the whole name), shape as a function of the config, its origin]
const GLOBAL = [
  ['wte', 'wte.weight', (c) => [c.vocab_size, c.n_embd], '(vocab_size, n_embd)'],
  ['wpe', 'wpe.weight', (c) => [c.n_positions, c.n_embd], '(n_positions, n_embd)'],
];
const BLOCK = [
  ['ln1_w', 'ln_1.weight', (c) => [c.n_embd], '(n_embd)'],
  ['ln1_b', 'ln_1.bias', (c) => [c.n_embd], '(n_embd)'],
  ['qkv_w', 'attn.c_attn.weight', (c) => [c.n_embd, 3 * c.n_embd], '(n_embd, 3·n_embd)'],
  ['qkv_b', 'attn.c_attn.bias', (c) => [3 * c.n_embd], '(3·n_embd)'],
  ['attproj_w', 'attn.c_proj.weight', (c) => [c.n_embd, c.n_embd], '(n_embd, n_embd)'],
  ['attproj_b', 'attn.c_proj.bias', (c) => [c.n_embd], '(n_embd)'],
  ['ln2_w', 'ln_2.weight', (c) => [c.n_embd], '(n_embd)'],
  ['ln2_b', 'ln_2.bias', (c) => [c.n_embd], '(n_embd)'],
  ['fc_w', 'mlp.c_fc.weight', (c) => [c.n_embd, 4 * c.n_embd], '(n_embd, 4·n_embd)'],
  ['fc_b', 'mlp.c_fc.bias', (c) => [4 * c.n_embd], '(4·n_embd)'],
  ['fcproj_w', 'mlp.c_proj.weight', (c) => [4 * c.n_embd, c.n_embd], '(4·n_embd, n_embd)'],
  ['fcproj_b', 'mlp.c_proj.bias', (c) => [c.n_embd], '(n_embd)'],
];
const FINAL = [
  ['lnf_w', 'ln_f.weight', (c) => [c.n_embd], '(n_embd)'],
  ['lnf_b', 'ln_f.bias', (c) => [c.n_embd], '(n_embd)'],
];
const GLOBAL_NAMES = new Set([...GLOBAL, ...FINAL].map((e) => e[1]));
const BLOCK_NAMES = new Set(BLOCK.map((e) => e[1]));
const BUFFERS = new Set(['attn.bias', 'attn.masked_bias']);
const LAYER = /^h\.(0|[1-9][0-9]{0,9})\.(.+)$/;

function checkpoint(config) {
  return {
    architecture: 'GPT-2',
    prefixes: ['', 'transformer.'],
    unprefixed: new Set(['lm_head.weight']),
    known: (rest) => GLOBAL_NAMES.has(rest) || BLOCK_NAMES.has(LAYER.exec(rest)?.[2]),
    layerOf: (rest) => { const m = LAYER.exec(rest); return m && (BLOCK_NAMES.has(m[2]) || BUFFERS.has(m[2])) ? Number(m[1]) : null; },
    extra(rest, info, tensors, prefix) {
      if (rest === 'lm_head.weight') {
        const wte = tensors.get(`${prefix}wte.weight`);
        if (wte && !(wte.shape.length === info.shape.length && wte.shape.every((d, i) => d === info.shape[i]))) {
          fail(ErrorCode.INVALID_MODEL, `tensor "lm_head.weight" has shape ${shapeText(info.shape)} but wte.weight has ${shapeText(wte.shape)}: GPT-2 ties them, and an untied output layer is not supported`);
        }
        return 'tied to wte.weight (GPT-2 shares the input and output embeddings)';
      }
      const m = LAYER.exec(rest);
      return m && BUFFERS.has(m[2]) ? 'the causal-mask buffer of older exports (the runtime masks by position)' : undefined;
    },
    params() {
      const out = [];
      const add = ([kind, name, shapeOf, origin], layer) => out.push({ kind, layer, name: layer < 0 ? name : `h.${layer}.${name}`, shape: shapeOf(config), origin });
      for (const e of GLOBAL) add(e, -1);
      for (let i = 0; i < config.n_layer; i++) for (const e of BLOCK) add(e, i);
      for (const e of FINAL) add(e, -1);
      return out;
    },
  };
}

// ----------------------------------------------------------------------------
// how runtime.js runs it (c_src/gpt2.h): the parameters in one float32 block in C's layout,
// filled kind by kind, checked, then the weight matrices packed for the forward pass

// the parameter kinds, in the order of gpt2.h's attn_gpt2_param; stacked over the layers or not
const KINDS = ['wte', 'wpe', 'ln1_w', 'ln1_b', 'qkv_w', 'qkv_b', 'attproj_w', 'attproj_b',
  'ln2_w', 'ln2_b', 'fc_w', 'fc_b', 'fcproj_w', 'fcproj_b', 'lnf_w', 'lnf_b'];
const STACKED = (kind) => !['wte', 'wpe', 'lnf_w', 'lnf_b'].includes(kind);
const SHAPES = Object.fromEntries([...GLOBAL, ...BLOCK, ...FINAL].map(([kind, , shapeOf]) => [kind, shapeOf]));
const ATTN_OK = 0, ATTN_ERR_NON_FINITE = 4, ATTN_ERR_TOO_LARGE = 6;
const CONFIG_BYTES = 24, OFFSETS_BYTES = 4 * (KINDS.length + 1);   // wasm32: int, float, size_t are 4 bytes

function readModelConfig(config) {
  const c = { family: 'gpt2' };
  for (const key of ['n_layer', 'n_head', 'n_embd', 'vocab_size', 'n_positions']) {
    const v = config[key];
    if (!Number.isInteger(v) || v < 1 || v > 0x7fffffff) fail(ErrorCode.INVALID_MODEL, `upload: config.${key} must be a positive integer; received ${describe(v)}`);
    c[key] = v;
  }
  if (c.n_embd % c.n_head !== 0) fail(ErrorCode.INVALID_MODEL, `upload: config.n_head = ${c.n_head} must divide n_embd = ${c.n_embd}`);
  const eps = config.layer_norm_epsilon ?? 1e-5;
  if (typeof eps !== 'number' || !(eps > 0) || !Number.isFinite(Math.fround(eps)) || Math.fround(eps) === 0) {
    fail(ErrorCode.INVALID_MODEL, `upload: config.layer_norm_epsilon must be a positive float32; received ${describe(eps)}`);
  }
  c.layer_norm_epsilon = eps;
  return Object.freeze(c);
}

// the config struct (gpt2.h attn_gpt2_config), followed by room for the offsets of the layout
function writeConfig(mem, c) {
  const cfg = reserve(mem, CONFIG_BYTES + OFFSETS_BYTES, () => 'the model config');
  new Int32Array(mem.memory.buffer, cfg, 5).set([c.n_layer, c.n_head, c.n_embd, c.vocab_size, c.n_positions]);
  new Float32Array(mem.memory.buffer, cfg + 20, 1)[0] = c.layer_norm_epsilon;
  return cfg;
}

// the block's layout (offsets in floats of each kind, and the total), from C
function layout(rt, cfg) {
  const { mem, exports } = rt;
  const status = exports.attn_gpt2_param_layout(cfg + CONFIG_BYTES, cfg);
  if (status === ATTN_ERR_TOO_LARGE) fail(ErrorCode.TOO_LARGE, `upload: the parameters of this model do not fit in wasm32's 4 GiB`);
  if (status !== ATTN_OK) fail(ErrorCode.INVALID_MODEL, `upload: ${cString(mem, exports.attn_status_string(status))}`);
  return Array.from(new Uint32Array(mem.memory.buffer, cfg + CONFIG_BYTES, KINDS.length + 1));
}

// byte offset and float count of a kind's tensor for one layer (-1: not stacked)
function slot(block, offsets, L, kind, layer) {
  const k = KINDS.indexOf(kind);
  const count = (offsets[k + 1] - offsets[k]) / (layer < 0 ? 1 : L);
  return [block + 4 * (offsets[k] + Math.max(layer, 0) * count), count];
}

// fill(kind, layer, view, shape) for every tensor, in the order of the forward pass (yields
// what fill returns: runtime.js waits for a promise), then the checks and the packing
function* upload(rt, model, fill) {
  const { mem, exports } = rt, c = model.config, offsets = layout(rt, model.cfg), total = offsets[KINDS.length];
  const block = reserve(mem, total * 4, () => `the model's ${total} parameters`);
  const params = { pointer: block, count: total, bytes: total * 4, free: () => mem.free(block) };
  try {
    const order = [['wte', -1], ['wpe', -1]];
    for (let l = 0; l < c.n_layer; l++) for (const kind of KINDS) if (STACKED(kind)) order.push([kind, l]);
    order.push(['lnf_w', -1], ['lnf_b', -1]);
    for (const [kind, layer] of order) {
      const [at, count] = slot(block, offsets, c.n_layer, kind, layer);
      yield fill(kind, layer, new Float32Array(mem.memory.buffer, at, count), SHAPES[kind](c));
    }
    if (exports.attn_gpt2_check_params(model.cfg, block) === ATTN_ERR_NON_FINITE) findNonFinite(mem, block, offsets, c.n_layer);
    pack(rt, model.cfg, block);
  } catch (e) {
    params.free();
    throw e;
  }
  return params;
}

// the weight matrices into the order the forward pass reads them (gpt2.h attn_gpt2_pack), once,
// after the checks (which name indices in the checkpoint's order); the scratch is freed at once
function pack(rt, cfg, block) {
  const { mem, exports } = rt;
  const bytes = exports.attn_gpt2_pack_scratch_size(cfg) >>> 0;
  const scratch = reserve(mem, bytes, () => 'packing the weight matrices');
  const status = exports.attn_gpt2_pack(block, scratch, cfg);
  mem.free(scratch);
  if (status !== ATTN_OK) fail(ErrorCode.INVALID_MODEL, `upload: ${cString(mem, exports.attn_status_string(status))}`);
}

function findNonFinite(mem, block, offsets, L) {
  for (const kind of KINDS) {
    for (let l = 0; l < (STACKED(kind) ? L : 1); l++) {
      const [at, count] = slot(block, offsets, L, kind, STACKED(kind) ? l : -1);
      const view = new Float32Array(mem.memory.buffer, at, count);
      for (let i = 0; i < count; i++) {
        if (!Number.isFinite(view[i])) {
          fail(ErrorCode.NON_FINITE, `upload: parameter ${kind}${STACKED(kind) ? ` of layer ${l}` : ''} holds ${view[i]} at index ${i}: parameters must be finite`);
        }
      }
    }
  }
}

export default Object.freeze({
  name: 'gpt2',
  modelTypes: ['gpt2'],
  readConfig,
  checkpoint,
  runtime: Object.freeze({
    c: { forward: 'attn_gpt2_forward', workspaceSize: 'attn_gpt2_workspace_size', cacheSize: 'attn_gpt2_cache_size' },
    readModelConfig,
    writeConfig,
    upload,
    cacheShape: (c) => ({ blocks: c.n_layer * 2 * c.n_head, d: c.n_embd / c.n_head }),
  }),
});
