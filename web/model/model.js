// model.js - attnmap/model: a GPT-2-family checkpoint in the browser or Node, run by the C core
// (c_src/gpt2.c) in WebAssembly, with every layer's and head's attention on request.
//
//   import { loadModel } from 'attnmap/model';
//   const model = await loadModel({ config, weights, vocab, merges });   // or { vocabTxt }, or no tokenizer
//   const ids = model.encode('The cat ate the fish');
//   const { logits, attention } = model.forward(ids, { attention: true });
//   attention[layer][head];                       // { data: Float32Array, shape: [n, n] }
//   for await (const step of model.generate(ids, { maxTokens: 20 })) console.log(step.text);
//   model.dispose();
//
// The parts, in the order a checkpoint meets them:
//   config.js       config.json read; maths this runtime does not do refused by name
//   safetensors.js  the weights file parsed (every offset checked) and read as float32
//   checkpoint.js   the tensors matched to the config: names, shapes, what is ignored
//   tokenizer.js    the checkpoint's tokenizer: BPE (vocab.json + merges.txt) or WordPiece (vocab.txt)
//   runtime.js      the wasm build of c_src/gpt2.c: parameters, KV cache, forward
//   sample.js       the next token: greedy, or seeded sampling with temperature and top-k
// In Node, model-node.js also takes a folder's path (the "./model" export's node condition).
import { ErrorCode, AttentionError, fail, asError, describe } from '../core/errors.js';
import { readConfig } from './config.js';
import { parseSafetensors, readTensor } from './safetensors.js';
import { gpt2Tensors } from './checkpoint.js';
import { createTokenizer } from './tokenizer.js';
import { createRuntime } from './runtime.js';
import { readSampling, pickToken } from './sample.js';

const FILES = ['config', 'weights', 'vocab', 'merges', 'vocabTxt', 'lowercase', 'wasm'];

function readFiles(files) {
  if (files === null || typeof files !== 'object' || Array.isArray(files)) {
    fail(ErrorCode.INVALID_ARGUMENT, `loadModel: expected { config, weights, vocab?, merges?, vocabTxt? }; received ${describe(files)}`);
  }
  for (const key of Object.keys(files)) {
    if (!FILES.includes(key)) fail(ErrorCode.INVALID_ARGUMENT, `loadModel: unknown field "${key}"; expected one of ${FILES.join(', ')}`);
  }
  if (files.config === undefined) fail(ErrorCode.INVALID_ARGUMENT, 'loadModel: config is missing (config.json: its text or the parsed object)');
  const w = files.weights;
  if (!(w instanceof Uint8Array) && !(w instanceof ArrayBuffer)) {
    fail(ErrorCode.INVALID_ARGUMENT, `loadModel: weights must be the bytes of model.safetensors (a Uint8Array or an ArrayBuffer); received ${describe(w)}`);
  }
  return { ...files, weights: w instanceof Uint8Array ? w : new Uint8Array(w) };
}

/**
 * Load a checkpoint: its config, its safetensors weights and, optionally, its tokenizer files.
 * Resolves to a Model; rejects with an AttentionError (INVALID_MODEL for a broken or unsupported
 * checkpoint, naming the file and the field or tensor; TOO_LARGE when it cannot fit).
 */
export async function loadModel(files) {
  let parts;
  try {
    const f = readFiles(files);
    const config = readConfig(f.config);
    const tensors = gpt2Tensors(config, parseSafetensors(f.weights));
    const tokenizer = createTokenizer({ vocab: f.vocab, merges: f.merges, vocabTxt: f.vocabTxt, lowercase: f.lowercase });
    if (tokenizer && tokenizer.vocabSize > config.vocab_size) {
      fail(ErrorCode.INVALID_MODEL, `the tokenizer has ${tokenizer.vocabSize} tokens but config.json's vocab_size is ${config.vocab_size}: they are not of one checkpoint`);
    }
    parts = { config, tensors, tokenizer, weights: f.weights, wasm: f.wasm };
  } catch (e) {
    throw asError(e, 'loadModel');
  }
  const rt = await createRuntime(parts.wasm === undefined ? {} : { wasm: parts.wasm });
  rt.upload(parts.config, (kind, layer, view) => readTensor(parts.weights, parts.tensors.get(kind, layer).info, view));
  return makeModel(rt, parts.config, parts.tokenizer);
}

// [layer][head] -> { data, shape: [rows, m] }, copies of the runtime's (L, H, rows, m) block
function splitAttention({ data, shape: [L, H, rows, m] }) {
  const size = rows * m;
  return Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, h) => {
    const at = (l * H + h) * size;
    return { data: data.slice(at, at + size), shape: [rows, m] };
  }));
}

function makeModel(rt, config, tokenizer) {
  const state = { disposed: false, owner: null };   // owner: the generation whose positions the KV cache holds
  const live = (name) => { if (state.disposed) fail(ErrorCode.INVALID_ARGUMENT, `model.${name}: the model was disposed`); };
  const needTokenizer = (name) => {
    if (!tokenizer) fail(ErrorCode.INVALID_ARGUMENT, `model.${name}: this model was loaded without tokenizer files (vocab.json + merges.txt, or vocab.txt); pass token ids instead`);
  };
  return Object.freeze({
    config: Object.freeze({ ...config }),
    tokenizer: tokenizer ? tokenizer.kind : null,
    encode(text) { live('encode'); needTokenizer('encode'); return tokenizer.encode(text); },
    decode(ids) { live('decode'); needTokenizer('decode'); return tokenizer.decode(ids); },
    /** Each id as readable text, for labels (▁ marks a space; <0xE7> a byte of a split character). */
    tokens(ids) { live('tokens'); needTokenizer('tokens'); return tokenizer.tokens(ids); },
    /** The full pass over ids from position 0: logits (n, vocab_size), and attention[layer][head] (n, n) when asked. */
    forward(ids, options = {}) {
      live('forward');
      if (options === null || typeof options !== 'object') fail(ErrorCode.INVALID_ARGUMENT, `model.forward: options must be an object like { attention: true }; received ${describe(options)}`);
      const attention = options.attention ?? false;
      if (typeof attention !== 'boolean') fail(ErrorCode.INVALID_ARGUMENT, `model.forward: attention must be true or false; received ${describe(attention)}`);
      state.owner = null;
      const r = rt.forward(ids, { attention });
      return attention ? { logits: r.logits, attention: splitAttention(r.attention) } : { logits: r.logits };
    },
    generate(ids, options = {}) {
      live('generate');
      return generate(rt, state, tokenizer, config, ids, readSampling(options, config));
    },
    dispose() { if (!state.disposed) { state.disposed = true; rt.dispose(); } },
  });
}

// One token at a time with the KV cache: the prompt once, then each new token alone. Another
// call on the model between two steps (forward, a second generation) takes the cache; this
// generation then computes its sequence again from position 0 and goes on.
async function* generate(rt, state, tokenizer, config, prompt, sampling) {
  const me = {};
  const seq = Array.from(prompt);
  const wantAttention = sampling.attention;
  let fed = 0, logits = null, attention = null;
  for (let step = 0; step < sampling.maxTokens && seq.length < config.n_positions; step++) {
    if (state.disposed) fail(ErrorCode.INVALID_ARGUMENT, 'model.generate: the model was disposed');
    if (state.owner !== me) { fed = 0; state.owner = me; }
    const r = rt.forward(seq.slice(fed), { pos: fed, attention: wantAttention, lastOnly: true });
    fed = seq.length;
    logits = r.logits.data;
    if (wantAttention) attention = lastRows(r.attention);
    const id = pickToken(logits, sampling);
    seq.push(id);
    const out = { id };
    if (tokenizer) out.text = tokenizer.decode([id]);
    if (wantAttention) out.attention = attention;
    yield out;
    if (sampling.stop.includes(id)) return;
  }
}

// [layer][head] -> the last query's row over all positions so far (Float32Array of length m)
function lastRows({ data, shape: [L, H, rows, m] }) {
  return Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, h) => {
    const at = ((l * H + h) * rows + rows - 1) * m;
    return data.slice(at, at + m);
  }));
}

export { AttentionError };
