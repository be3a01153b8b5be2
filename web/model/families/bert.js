// bert.js - the BERT family (Hugging Face's BertModel, BertForMaskedLM, BertForPreTraining:
// bert-base-chinese, hfl/chinese-roberta-wwm-ext, bert-base-uncased): its config.json rules, its
// tensors, and how web/model/runtime.js runs it (c_src/bert.h): an encoder, no KV cache, every
// token seeing every other. One module of web/model/families/.
//
// config.json (transformers' configuration_bert.py):
// | key                          | here                                                            |
// |------------------------------|-----------------------------------------------------------------|
// | model_type                   | bert                                                            |
// | hidden_size, num_hidden_layers, num_attention_heads, intermediate_size, vocab_size,           |
// | max_position_embeddings      | required, positive integers; heads divide hidden_size           |
// | type_vocab_size              | default 2                                                       |
// | layer_norm_eps               | default 1e-12; positive, a float32 above 0                      |
// | hidden_act                   | "gelu" only (the exact erf form)                               |
// | position_embedding_type      | "absolute" only (relative_key and relative_key_query refused)   |
// | is_decoder, add_cross_attention | false only                                                   |
// | dropout keys, initializer_range, pad_token_id, use_cache, classifier_dropout, architectures,  |
// | torch_dtype, transformers_version …  | ignored: no effect on the forward maths                 |
//
// Tensors (nn.Linear's (out, in)), names after "bert." (BertForMaskedLM, BertForPreTraining) or
// none (BertModel); LayerNorms as .weight/.bias or the older .gamma/.beta:
// embeddings.{word,position,token_type}_embeddings.weight (V, C), (P, C), (Y, C),
// embeddings.LayerNorm (C); encoder.layer.{i}.attention.self.{query,key,value}.weight (C, C) and
// .bias (C), encoder.layer.{i}.attention.output.dense (C, C) + LayerNorm, encoder.layer.{i}.
// intermediate.dense (F, C), encoder.layer.{i}.output.dense (C, F) + LayerNorm. The masked-LM head,
// never prefixed, when the file has it: cls.predictions.transform.dense (C, C), its LayerNorm, and
// cls.predictions.bias (V); the decoder is the word table. Accepted and ignored: embeddings.
// position_ids (a buffer), pooler.* (for classification), cls.seq_relationship.* (next-sentence
// prediction), and the tied copies cls.predictions.decoder.weight and .decoder.bias, which must
// equal the word table and cls.predictions.bias (checked when loaded).
import { ErrorCode, fail, describe, shapeText } from '../../core/errors.js';
import { reserve } from '../../core/memory.js';
import { positiveSize, flag, has, epsilonOf, bad } from './rules.js';
import { uploadTable } from './table.js';

const HEAD_NAME = 'cls.predictions.transform.dense.weight';

/** config.json (parsed) -> the sizes and switches the runtime uses. */
function readConfig(raw) {
  const c = {
    family: 'bert', modelType: raw.model_type,
    n_layer: positiveSize(raw, 'num_hidden_layers'), n_head: positiveSize(raw, 'num_attention_heads'),
    n_embd: positiveSize(raw, 'hidden_size'), intermediate: positiveSize(raw, 'intermediate_size'),
    vocab_size: positiveSize(raw, 'vocab_size'), n_positions: positiveSize(raw, 'max_position_embeddings'),
  };
  c.types = has(raw, 'type_vocab_size') ? positiveSize(raw, 'type_vocab_size') : 2;
  if (c.n_embd % c.n_head !== 0) bad(`hidden_size = ${c.n_embd} is not a multiple of num_attention_heads = ${c.n_head}`);
  c.headDim = c.n_embd / c.n_head;
  c.eps = epsilonOf(raw, 'layer_norm_eps', 1e-12);
  if (has(raw, 'hidden_act') && raw.hidden_act !== 'gelu') bad(`hidden_act is ${describe(raw.hidden_act)}; only "gelu" (the exact erf form BERT uses) is supported`);
  if (has(raw, 'position_embedding_type') && raw.position_embedding_type !== 'absolute') {
    bad(`position_embedding_type is ${describe(raw.position_embedding_type)}; only "absolute" is supported`);
  }
  flag(raw, 'is_decoder', false, 'a causal decoder');
  flag(raw, 'add_cross_attention', false, 'cross-attention blocks');
  return { ...c, layers: c.n_layer, heads: c.n_head, hidden: c.n_embd, kvHeads: c.n_head, encoder: true };
}

// ----------------------------------------------------------------------------
// the tensors (web/model/load/checkpoint.js's rules)

// [kind, name (after the prefix; after encoder.layer.{i}. in a block), shape, its origin]
const GLOBAL = [
  ['word', 'embeddings.word_embeddings.weight', (c) => [c.vocab_size, c.n_embd], '(vocab_size, hidden_size)'],
  ['position', 'embeddings.position_embeddings.weight', (c) => [c.n_positions, c.n_embd], '(max_position_embeddings, hidden_size)'],
  ['type', 'embeddings.token_type_embeddings.weight', (c) => [c.types, c.n_embd], '(type_vocab_size, hidden_size)'],
  ['emb_ln_w', 'embeddings.LayerNorm.weight', (c) => [c.n_embd], '(hidden_size)'],
  ['emb_ln_b', 'embeddings.LayerNorm.bias', (c) => [c.n_embd], '(hidden_size)'],
];
const HEAD = [
  ['head_w', HEAD_NAME, (c) => [c.n_embd, c.n_embd], '(hidden_size, hidden_size)'],
  ['head_b', 'cls.predictions.transform.dense.bias', (c) => [c.n_embd], '(hidden_size)'],
  ['head_ln_w', 'cls.predictions.transform.LayerNorm.weight', (c) => [c.n_embd], '(hidden_size)'],
  ['head_ln_b', 'cls.predictions.transform.LayerNorm.bias', (c) => [c.n_embd], '(hidden_size)'],
  ['decoder_b', 'cls.predictions.bias', (c) => [c.vocab_size], '(vocab_size)'],
];
const BLOCK = [
  ['wq', 'attention.self.query.weight', 'C'], ['bq', 'attention.self.query.bias', 'c'],
  ['wk', 'attention.self.key.weight', 'C'], ['bk', 'attention.self.key.bias', 'c'],
  ['wv', 'attention.self.value.weight', 'C'], ['bv', 'attention.self.value.bias', 'c'],
  ['wo', 'attention.output.dense.weight', 'C'], ['bo', 'attention.output.dense.bias', 'c'],
  ['ln1_w', 'attention.output.LayerNorm.weight', 'c'], ['ln1_b', 'attention.output.LayerNorm.bias', 'c'],
  ['wi', 'intermediate.dense.weight', 'FC'], ['bi', 'intermediate.dense.bias', 'f'],
  ['wo2', 'output.dense.weight', 'CF'], ['bo2', 'output.dense.bias', 'c'],
  ['ln2_w', 'output.LayerNorm.weight', 'c'], ['ln2_b', 'output.LayerNorm.bias', 'c'],
].map(([kind, name, s]) => [kind, name, ...blockShape(s)]);

function blockShape(s) {
  const SHAPES = {
    C: [(c) => [c.n_embd, c.n_embd], '(hidden_size, hidden_size)'], c: [(c) => [c.n_embd], '(hidden_size)'],
    FC: [(c) => [c.intermediate, c.n_embd], '(intermediate_size, hidden_size)'], f: [(c) => [c.intermediate], '(intermediate_size)'],
    CF: [(c) => [c.n_embd, c.intermediate], '(hidden_size, intermediate_size)'],
  };
  return SHAPES[s];
}

const LAYER = /^encoder\.layer\.(0|[1-9][0-9]{0,9})\.(.+)$/;
// the older LayerNorm names (TensorFlow's, as early conversions kept them) -> today's
const OLD_LN = (name) => name.replace(/LayerNorm\.gamma$/, 'LayerNorm.weight').replace(/LayerNorm\.beta$/, 'LayerNorm.bias');
const IGNORED = [
  [/^embeddings\.position_ids$/, 'the positions 0 … n - 1 as a buffer (computed instead)'],
  [/^pooler\.dense\.(weight|bias)$/, 'the pooler, for sentence classification (not used for attention or fill-mask)'],
  [/^cls\.seq_relationship\.(weight|bias)$/, 'the next-sentence-prediction head (not used for attention or fill-mask)'],
];
// the tied copies some files keep: [name, the kind it must equal]
const TIED = [['cls.predictions.decoder.weight', 'word'], ['cls.predictions.decoder.bias', 'decoder_b']];

function checkpoint(config, tensors) {
  const globals = new Set(GLOBAL.map((e) => e[1])), head = new Set(HEAD.map((e) => e[1])), block = new Set(BLOCK.map((e) => e[1]));
  const withHead = tensors?.has(HEAD_NAME) ?? false;
  return {
    architecture: 'BERT (BertModel / BertForMaskedLM) with this config',
    prefixes: ['bert.', ''],
    unprefixed: new Set([...head, ...HEAD.map((e) => e[1].replace(/weight$/, 'gamma').replace(/bias$/, 'beta')), ...TIED.map((t) => t[0]),
      'cls.seq_relationship.weight', 'cls.seq_relationship.bias']),
    known: (rest) => globals.has(OLD_LN(rest)) || head.has(OLD_LN(rest)) || block.has(OLD_LN(LAYER.exec(rest)?.[2] ?? '')),
    layerOf: (rest) => { const m = LAYER.exec(rest); return m && block.has(OLD_LN(m[2])) ? Number(m[1]) : null; },
    extra(rest, info) {
      for (const [re, reason] of IGNORED) if (re.test(rest)) return reason;
      const tied = TIED.find((t) => t[0] === rest);
      if (!tied) return undefined;
      const [, kind] = tied, want = kind === 'word' ? [config.vocab_size, config.n_embd] : [config.vocab_size];
      if (shapeText(info.shape) !== shapeText(want)) fail(ErrorCode.INVALID_MODEL, `tensor "${rest}" has shape ${shapeText(info.shape)}; as the tied copy of ${kind === 'word' ? 'the word embeddings' : 'cls.predictions.bias'} it must be ${shapeText(want)}`);
      return `tied to ${kind === 'word' ? 'embeddings.word_embeddings.weight' : 'cls.predictions.bias'} (checked equal when loaded)`;
    },
    params() {
      const out = [];
      const add = ([kind, name, shapeOf, origin], layer) => {
        const full = layer < 0 ? name : `encoder.layer.${layer}.${name}`;
        const alt = /LayerNorm\.(weight|bias)$/.test(full) ? full.replace(/weight$/, 'gamma').replace(/bias$/, 'beta') : undefined;
        out.push({ kind, layer, name: full, alt, shape: shapeOf(config), origin });
      };
      for (const e of GLOBAL) add(e, -1);
      if (withHead) for (const e of HEAD) add(e, -1);
      for (let i = 0; i < config.n_layer; i++) for (const e of BLOCK) add(e, i);
      for (const [name, kind] of TIED) {   // read only to be compared (upload's sameValues)
        const [, , shapeOf, origin] = [...GLOBAL, ...HEAD].find((e) => e[0] === kind);
        out.push({ kind: `tied:${name}`, layer: -1, name, shape: shapeOf(config), origin, optional: true });
      }
      return out;
    },
  };
}

// ----------------------------------------------------------------------------
// how runtime.js runs it (c_src/bert.h): a table of typed tensors (table.js) in C's order
// (ATTN_BERT_*), then the tied copies compared with what they are tied to

const TABLE = {
  globals: ['word', 'position', 'type', 'emb_ln_w', 'emb_ln_b', 'head_w', 'head_b', 'head_ln_w', 'head_ln_b', 'decoder_b'],
  layer: BLOCK.map((e) => e[0]),
  matrices: new Set(['word', 'position', 'type', 'head_w', 'wq', 'wk', 'wv', 'wo', 'wi', 'wo2']),
  check: 'attn_bert_check',
};
const CONFIG_BYTES = 32;

function readModelConfig(config) {
  if (config.family !== 'bert' || !Number.isInteger(config.types)) {
    fail(ErrorCode.INVALID_ARGUMENT, `upload: config must be readConfig's result for a BERT model; received ${describe(config)}`);
  }
  return config;
}

// attn_bert_config: 7 ints and eps
function writeConfig(mem, c) {
  const cfg = reserve(mem, CONFIG_BYTES, () => 'the model config');
  new Int32Array(mem.memory.buffer, cfg, 7).set([c.n_layer, c.n_head, c.n_embd, c.intermediate, c.vocab_size, c.n_positions, c.types]);
  new Float32Array(mem.memory.buffer, cfg + 28, 1)[0] = c.eps;
  return cfg;
}

function* upload(rt, model, fill, tensors) {
  const params = yield* uploadTable(rt, model, fill, tensors, TABLE);
  try {
    // (a copy without what it is tied to, a head's bias in a file without the head, is unused)
    for (const [name, kind] of TIED) if (tensors?.get(`tied:${name}`) && tensors.get(kind)) yield* sameValues(fill, tensors, name, kind);
  } catch (e) {
    params.free();
    throw e;
  }
  model.hasHead = Boolean(tensors?.get('head_w'));
  return params;
}

// a tied copy's values equal those of the tensor it is tied to (read as float32, compared)
function* sameValues(fill, tensors, name, kind) {
  const entry = tensors.get(kind), count = entry.shape.reduce((a, b) => a * b, 1);
  const a = new Float32Array(count), b = new Float32Array(count);
  yield fill(kind, -1, a, entry.shape);
  yield fill(`tied:${name}`, -1, b, entry.shape);
  for (let i = 0; i < count; i++) {
    if (!Object.is(a[i], b[i])) fail(ErrorCode.INVALID_MODEL, `tensor "${name}" differs from ${entry.name} at index ${i} (${b[i]} vs ${a[i]}): BERT ties them, and attnmap computes with ${entry.name}`);
  }
}

export default Object.freeze({
  name: 'bert',
  modelTypes: ['bert'],
  readConfig,
  checkpoint,
  runtime: Object.freeze({
    c: { forward: 'attn_bert_forward', workspaceSize: 'attn_bert_workspace_size' },
    encoder: true,
    readModelConfig,
    writeConfig,
    upload,
  }),
});
