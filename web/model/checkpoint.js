// checkpoint.js - which tensor of a GPT-2 safetensors file goes where.
//
//   gpt2Tensors(config, parsed)
//     config: readConfig(...)'s result; parsed: parseSafetensors(...)'s result
//     -> { prefix, list, ignored, get(kind, layer = -1) }
//        prefix   '' or 'transformer.' (one for the whole file)
//        list     every parameter once, in the order of the forward pass:
//                 wte, wpe, then for layer 0 … n_layer-1: ln1_w ln1_b qkv_w qkv_b attproj_w
//                 attproj_b ln2_w ln2_b fc_w fc_b fcproj_w fcproj_b, then lnf_w lnf_b;
//                 each { kind, layer (-1 outside the blocks), name (as in the file), shape, info }
//                 where info is the parseSafetensors entry, ready for readTensor(bytes, info, out)
//                 with out a Float32Array of prod(shape) elements
//        ignored  [{ name, reason }] for the tensors HF keeps that the forward pass does not read
//        get      the entry of one kind (and layer), or undefined
//
// Shapes (PyTorch order; HF's Conv1D stores weights as (in, out), so x · W needs no transpose),
// with C = n_embd, V = vocab_size, P = n_positions:
//   wte (V, C)   wpe (P, C)   ln1_w ln1_b ln2_w ln2_b lnf_w lnf_b (C)
//   qkv_w (C, 3C)  qkv_b (3C)   attproj_w (C, C)  attproj_b (C)
//   fc_w (C, 4C)   fc_b (4C)    fcproj_w (4C, C)  fcproj_b (C)
//
// Names: `wte.weight`, `wpe.weight`, `h.{i}.ln_1.weight|bias`, `h.{i}.attn.c_attn.weight|bias`,
// `h.{i}.attn.c_proj.weight|bias`, `h.{i}.ln_2.weight|bias`, `h.{i}.mlp.c_fc.weight|bias`,
// `h.{i}.mlp.c_proj.weight|bias`, `ln_f.weight|bias`, all with `transformer.` in front or none.
//
// Accepted and ignored: `h.{i}.attn.bias` and `h.{i}.attn.masked_bias` (the causal-mask buffers
// older exports saved; any shape and dtype), and `lm_head.weight` (never prefixed, as
// GPT2LMHeadModel saves it), which must have wte's shape: it is tied to wte, and wte is used (its
// values are not compared). Any other tensor is refused by name: a tensor the runtime does not
// know (crossattention, q_attn, a classification `score`, a `multiple_choice_head`) means another
// architecture, which the runtime would get silently wrong.
//
// Failures (all INVALID_MODEL unless said): a mix of prefixed and unprefixed names; an unknown
// tensor; a layer index outside 0 … n_layer-1, or missing layers; a missing tensor; a wrong shape
// (the message names the tensor, the shape expected with the config keys it comes from, and the
// shape found); a parameter whose dtype readTensor cannot read. INVALID_ARGUMENT for arguments
// that are not a readConfig result and a parseSafetensors result.
import { ErrorCode, fail, asError, describe, shapeText, quote } from '../core/errors.js';
import { READABLE_DTYPES } from './safetensors.js';

const PREFIX = 'transformer.';

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

const bad = (message) => fail(ErrorCode.INVALID_MODEL, message);
const q = (s) => quote(s);
const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

export function gpt2Tensors(config, parsed) {
  try {
    return match(config, parsed);
  } catch (e) {
    throw asError(e, 'gpt2Tensors: reading the arguments failed');
  }
}

function match(config, parsed) {
  const cfg = checkConfig(config);
  if (parsed === null || typeof parsed !== 'object' || !(parsed.tensors instanceof Map)) {
    fail(ErrorCode.INVALID_ARGUMENT, `gpt2Tensors: parsed must be parseSafetensors(...)'s result { tensors: Map, metadata }; received ${describe(parsed)}`);
  }
  const tensors = parsed.tensors;
  // step 1: one prefix, every name known
  const prefix = findPrefix(tensors);
  const ignored = [], layersSeen = new Set();
  for (const [name, info] of tensors) {
    const reason = classify(name, info, prefix, cfg, tensors, layersSeen);
    if (reason) ignored.push({ name, reason });
  }
  // step 2: the config's layers against the file's, before anything loops over n_layer (every
  // layer seen is below n_layer, so fewer seen than n_layer means some are missing: the first 8
  // are found in at most layersSeen.size + 8 steps)
  if (layersSeen.size < cfg.n_layer) {
    const missing = [];
    for (let i = 0; missing.length < 9 && i < cfg.n_layer; i++) if (!layersSeen.has(i)) missing.push(i);
    bad(`the config says n_layer = ${cfg.n_layer} but the file has tensors for ${layersSeen.size} layer${layersSeen.size === 1 ? '' : 's'}` +
      ` (none for layer${missing.length === 1 ? '' : 's'} ${missing.slice(0, 8).join(', ')}${missing.length > 8 ? ', …' : ''})`);
  }
  // step 3: every parameter present, with its shape and a readable dtype
  const list = [];
  const add = (kind, layer, name, shapeOf, origin) => {
    const full = prefix + name, info = tensors.get(full);
    const expected = shapeOf(cfg);
    if (!info) bad(`tensor ${q(full)} is missing: expected shape ${shapeText(expected)} ${origin}`);
    if (!sameShape(info.shape, expected)) {
      bad(`tensor ${q(full)} has shape ${shapeText(info.shape)} but the config needs ${shapeText(expected)} ${origin} with ${originValues(origin, cfg)}`);
    }
    if (!READABLE_DTYPES.includes(info.dtype)) bad(`tensor ${q(full)} has dtype ${info.dtype}; attnmap reads ${READABLE_DTYPES.join(', ')}`);
    list.push({ kind, layer, name: full, shape: expected, info });
  };
  for (const [kind, name, shapeOf, origin] of GLOBAL) add(kind, -1, name, shapeOf, origin);
  for (let i = 0; i < cfg.n_layer; i++) for (const [kind, name, shapeOf, origin] of BLOCK) add(kind, i, `h.${i}.${name}`, shapeOf, origin);
  for (const [kind, name, shapeOf, origin] of FINAL) add(kind, -1, name, shapeOf, origin);
  const get = (kind, layer = -1) => list.find((e) => e.kind === kind && e.layer === layer);
  return { prefix, list, ignored, get };
}

function checkConfig(config) {
  const keys = ['n_layer', 'n_head', 'n_embd', 'vocab_size', 'n_positions'];
  if (config === null || typeof config !== 'object' || !keys.every((k) => Number.isInteger(config[k]) && config[k] > 0)) {
    fail(ErrorCode.INVALID_ARGUMENT, `gpt2Tensors: config must be readConfig(...)'s result { ${keys.join(', ')}, … }; received ${describe(config)}`);
  }
  return config;
}

// '(vocab_size, n_embd)' -> 'vocab_size = 50257, n_embd = 768'
const originValues = (origin, cfg) => [...new Set(origin.match(/\b(n_embd|vocab_size|n_positions)\b/g))].map((k) => `${k} = ${cfg[k]}`).join(', ');

// 'transformer.' when a known name carries it, '' otherwise; a mix refused
function findPrefix(tensors) {
  let withPrefix = null, without = null;
  for (const name of tensors.keys()) {
    if (name === 'lm_head.weight') continue;                     // never prefixed
    if (name.startsWith(PREFIX) && isModelName(name.slice(PREFIX.length))) withPrefix ??= name;
    else if (isModelName(name)) without ??= name;
  }
  if (withPrefix !== null && without !== null) {
    bad(`the tensor names mix two prefixes: ${q(withPrefix)} has "${PREFIX}" and ${q(without)} has none (one prefix for the whole file)`);
  }
  return withPrefix !== null ? PREFIX : '';
}

function isModelName(name) {
  if (GLOBAL_NAMES.has(name)) return true;
  const m = LAYER.exec(name);
  return m !== null && (BLOCK_NAMES.has(m[2]) || BUFFERS.has(m[2]));
}

// null for a parameter (recording its layer), a reason for a tensor that is ignored; refuses the rest
function classify(name, info, prefix, cfg, tensors, layersSeen) {
  if (name === 'lm_head.weight') {
    const wte = tensors.get(`${prefix}wte.weight`);
    if (wte && !sameShape(info.shape, wte.shape)) {
      bad(`tensor "lm_head.weight" has shape ${shapeText(info.shape)} but wte.weight has ${shapeText(wte.shape)}: GPT-2 ties them, and an untied output layer is not supported`);
    }
    return 'tied to wte.weight (GPT-2 shares the input and output embeddings)';
  }
  const rest = prefix === '' ? name : name.startsWith(prefix) ? name.slice(prefix.length) : null;
  if (rest === null || !isModelName(rest)) {
    bad(`unexpected tensor ${q(name)}: not a parameter of GPT-2${prefix ? ` under the prefix "${prefix}"` : ''} (another architecture?)`);
  }
  if (GLOBAL_NAMES.has(rest)) return null;
  const [, index, part] = LAYER.exec(rest);
  const layer = Number(index);
  if (layer >= cfg.n_layer) bad(`tensor ${q(name)} is for layer ${layer} but the config says n_layer = ${cfg.n_layer} (layers 0 … ${cfg.n_layer - 1})`);
  if (BUFFERS.has(part)) return 'the causal-mask buffer of older exports (the runtime masks by position)';
  layersSeen.add(layer);
  return null;
}
