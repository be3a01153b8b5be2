// checkpoint.js - which tensor of a checkpoint goes where, for every model family: the family
// (web/model/families/) says what its tensors are called and shaped; this file matches a file's
// tensors against that, the same way for all.
//
//   matchTensors(config, parsed)
//     config: readConfig(...)'s result (its family picks the rules); parsed: parseSafetensors
//     (...)'s result, or several shards' merged (readShards)
//     -> { prefix, list, ignored, get(kind, layer = -1) }
//        list     every parameter present, in the family's order: { kind, layer (-1 outside the
//                 blocks), name (as in the file), shape, info } (info: the parseSafetensors entry)
//        ignored  [{ name, reason }]: tensors the family knows and the forward pass does not read
//        get      the entry of one kind (and layer), or undefined (an optional tensor absent)
//
// A family's rules, checkpoint(config, tensors) -> {   (tensors: the file's, by name)
//   prefixes     the name prefixes one file may use (one for the whole file), e.g. ['', 'transformer.']
//   unprefixed   names that never carry the prefix (GPT-2's lm_head.weight)
//   architecture  its name in messages ("GPT-2")
//   known(rest)  whether a name (without prefix) is one of its parameters, at any layer
//   layerOf(rest)  the layer index a name (without prefix) is for, or null
//   params()     every parameter: [{ kind, layer, name, alt, shape, origin, optional }], names
//                without prefix (alt: an older name the file may use instead, BERT's LayerNorm.gamma);
//                called only once the file's layers agree with the config's
//   extra(rest, info, tensors, prefix)  a reason for a tensor that is known and ignored, or
//                undefined for one that is not known (refused); may throw a finer refusal
// }
//
// Failures (INVALID_MODEL): names under two prefixes; an unknown tensor (another architecture,
// which the runtime would get silently wrong); a layer index at or past the config's; layers
// missing; a missing tensor; a wrong shape (the message names the tensor, the shape expected with
// the config keys it comes from, and the shape found); a dtype that cannot be read (safetensors.js
// READABLE_DTYPES, and for a GGUF file's matrix ggml's quantized types, gguf.js QUANTIZED_TYPES).
// Before anything loops over the config's layer count, the file's layers are counted: a config
// that claims 2^31 layers costs nothing.
import { ErrorCode, fail, asError, describe, shapeText, quote } from '../../core/errors.js';
import { READABLE_DTYPES } from './safetensors.js';
import { QUANTIZED_TYPES } from './gguf.js';
import { familyOf } from '../families/index.js';

const bad = (message) => fail(ErrorCode.INVALID_MODEL, message);
const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

export function matchTensors(config, parsed) {
  try {
    return match(config, parsed);
  } catch (e) {
    throw asError(e, 'matchTensors: reading the arguments failed');
  }
}

function match(config, parsed) {
  if (config === null || typeof config !== 'object' || typeof config.family !== 'string') {
    fail(ErrorCode.INVALID_ARGUMENT, `matchTensors: config must be readConfig(...)'s result { family, … }; received ${describe(config)}`);
  }
  if (parsed === null || typeof parsed !== 'object' || !(parsed.tensors instanceof Map)) {
    fail(ErrorCode.INVALID_ARGUMENT, `matchTensors: parsed must be parseSafetensors(...)'s result { tensors: Map, metadata }; received ${describe(parsed)}`);
  }
  const tensors = parsed.tensors, rules = familyOf(config.family).checkpoint(config, tensors);
  // step 1: one prefix, every name known
  const prefix = findPrefix(rules, tensors);
  const ignored = [], layersSeen = new Set();
  for (const [name, info] of tensors) {
    const reason = classify(rules, name, info, prefix, config, tensors, layersSeen);
    if (reason) ignored.push({ name, reason });
  }
  // step 2: the config's layers against the file's, before anything loops over n_layer (every
  // layer seen is below n_layer, so fewer seen means some are missing: the first 8 are found in
  // at most layersSeen.size + 9 steps)
  if (layersSeen.size < config.n_layer) {
    const missing = [];
    for (let i = 0; missing.length < 9 && i < config.n_layer; i++) if (!layersSeen.has(i)) missing.push(i);
    bad(`the config says n_layer = ${config.n_layer} but the file has tensors for ${layersSeen.size} layer${layersSeen.size === 1 ? '' : 's'}` +
      ` (none for layer${missing.length === 1 ? '' : 's'} ${missing.slice(0, 8).join(', ')}${missing.length > 8 ? ', …' : ''})`);
  }
  // step 3: every parameter present (unless optional), with its shape and a readable dtype
  const list = [], byKey = new Map();
  for (const p of rules.params()) {
    const named = (name) => (rules.unprefixed?.has(name) ? '' : prefix) + name;
    const full = p.alt !== undefined && !tensors.has(named(p.name)) && tensors.has(named(p.alt)) ? named(p.alt) : named(p.name);
    const info = tensors.get(full);
    if (!info) {
      if (p.optional) continue;
      bad(`tensor ${quote(full)} is missing: expected shape ${shapeText(p.shape)} ${p.origin}`);
    }
    if (!sameShape(info.shape, p.shape)) {
      bad(`tensor ${quote(full)} has shape ${shapeText(info.shape)} but the config needs ${shapeText(p.shape)} ${p.origin} with ${originValues(p.origin, config)}`);
    }
    if (!readable(info, p.shape)) bad(`tensor ${quote(full)} has dtype ${info.dtype}; attnmap reads ${READABLE_DTYPES.join(', ')}${info.block ? ' (a GGUF file\'s quantized types for matrices only)' : ''}`);
    const entry = { kind: p.kind, layer: p.layer, name: full, shape: p.shape, info };
    list.push(entry);
    byKey.set(`${p.kind}/${p.layer}`, entry);
  }
  return { prefix, list, ignored, get: (kind, layer = -1) => byKey.get(`${kind}/${layer}`) };
}

// F32, F16, BF16; a GGUF file's quantized matrix (gguf-weights.js gives it its block)
const readable = (info, shape) => READABLE_DTYPES.includes(info.dtype) ||
  (shape.length === 2 && info.block !== undefined && QUANTIZED_TYPES.some((t) => t.name === info.dtype));

// '(vocab_size, n_embd)' -> 'vocab_size = 50257, n_embd = 768': the config keys an origin names
const originValues = (origin, config) => [...new Set(origin.match(/\b[a-z_]+\b/g) ?? [])]
  .filter((k) => Number.isInteger(config.raw?.[k] ?? config[k])).map((k) => `${k} = ${config.raw?.[k] ?? config[k]}`).join(', ');

// the one prefix the file's known names carry; a mix refused
function findPrefix(rules, tensors) {
  const found = new Map();
  for (const name of tensors.keys()) {
    if (rules.unprefixed?.has(name)) continue;
    for (const p of rules.prefixes) {
      if (name.startsWith(p) && rules.known(name.slice(p.length)) && !found.has(p)) found.set(p, name);
    }
  }
  const list = [...found].sort((a, b) => b[0].length - a[0].length);
  if (list.length > 1) {
    bad(`the tensor names mix two prefixes: ${quote(list[0][1])} has "${list[0][0]}" and ${quote(list[1][1])} has ${list[1][0] ? `"${list[1][0]}"` : 'none'} (one prefix for the whole file)`);
  }
  return list.length ? list[0][0] : rules.prefixes[0];
}

// null for a parameter (recording its layer), a reason for a tensor that is ignored; refuses the rest
function classify(rules, name, info, prefix, config, tensors, layersSeen) {
  const rest = rules.unprefixed?.has(name) ? name : name.startsWith(prefix) ? name.slice(prefix.length) : null;
  const layer = rest === null ? null : rules.layerOf(rest);
  if (layer !== null && layer >= config.n_layer) {
    bad(`tensor ${quote(name)} is for layer ${layer} but the config says n_layer = ${config.n_layer} (layers 0 … ${config.n_layer - 1})`);
  }
  const reason = rest === null ? undefined : rules.extra(rest, info, tensors, prefix);
  if (reason !== undefined) return reason;
  if (rest === null || !rules.known(rest)) {
    bad(`unexpected tensor ${quote(name)}: not a parameter of ${rules.architecture}${prefix ? ` under the prefix "${prefix}"` : ''} (another architecture?)`);
  }
  if (layer !== null) layersSeen.add(layer);
  return null;
}
