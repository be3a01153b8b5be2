// model.js - attnmap/model: a checkpoint of a model family attnmap runs (GPT-2; the LLaMA family:
// Llama, Qwen2/2.5, Qwen3) in the browser or Node, run by the C core (c_src/gpt2.c, llama.c) in
// WebAssembly, with every layer's and head's attention on request.
//
//   import { loadModel } from 'attnmap/model';
//   const model = await loadModel({ config, weights, vocab, merges });   // or { vocabTxt }, or no tokenizer
//   const ids = model.encode('The cat ate the fish');
//   const { logits, attention } = model.forward(ids, { attention: true });
//   attention[layer][head];                       // { data: Float32Array, shape: [n, n] }
//   model.forward(ids, { attention: { layers: [5], heads: [1] } });   // only that head's map
//   const r = model.forward(ids, { heads: true, logits: false });    // every head's scores, no map kept
//   r.heads.previous[layer * r.heads.heads + head]; r.map(layer, head);   // heads.js
//   for await (const step of model.generate(ids, { maxTokens: 20 })) console.log(step.text);
//   model.dispose();
//
// The parts, in the order a checkpoint meets them:
//   config.js       config.json read by its family's rules (families/): unsupported maths refused by name
//   safetensors.js  a weights file parsed (every offset checked), its tensors read or copied
//   weights.js      one file or a sharded checkpoint's index and shards, as one table of tensors
//   checkpoint.js   the tensors matched to the family's names and the config's shapes
//   tokenizer.js    the checkpoint's tokenizer: tokenizer.json, BPE (vocab.json + merges.txt) or WordPiece (vocab.txt)
//   runtime.js      the wasm build (c_src/gpt2.c, llama.c): parameters, KV cache, forward
//   sample.js       the next token: greedy, or seeded sampling with temperature and top-k
//   generate.js     token by token with the KV cache, text streamed in whole characters
// In Node, model-node.js also takes a folder's path (the "./model" export's node condition).
import { ErrorCode, AttentionError, fail, asError, describe } from '../core/errors.js';
import { readConfig } from './load/config.js';
import { readTensor, readTensorAsync, copyTensor, isSource, bytesSource } from './load/safetensors.js';
import { parseGguf, openGguf } from './load/gguf.js';
import { ggufConfig } from './load/gguf-config.js';
import { ggufWeights, unpermuteRows, readStored } from './load/gguf-weights.js';
import { readWeights, blobSource } from './load/weights.js';
import { matchTensors } from './load/checkpoint.js';
import { loadTokenizer } from './tokenizers/load-tokenizer.js';
import { createRuntime } from './runtime.js';
import { readSampling } from './sample.js';
import { generate, readPrompt, slotsByHead } from './generate.js';
import { encoderApi } from './encoder.js';
import { headsResult } from './heads.js';
import { idsArg } from '../core/args.js';
import { fetchCheckpoint, fetchGguf, isGgufUrl, ModelFetchError } from './load/fetch-checkpoint.js';
import { forwardOnly, parseRepoId } from './hub/hub.js';
import { hubFiles } from './hub/hub-browser.js';
import { useThreadHost, defaultThreads, MAX_THREADS } from './runtime.js';
import { spawnBrowser, fetchBuild, canThread } from './threads/threads-browser.js';

// a cross-origin isolated page runs models on Web Workers (loadModel's threads); model-node.js
// puts Node's worker_threads in their place
if (canThread()) useThreadHost({ spawn: spawnBrowser, build: fetchBuild, cores: () => navigator.hardwareConcurrency });

const FILES = ['config', 'weights', 'gguf', 'vocab', 'merges', 'vocabTxt', 'lowercase', 'tokenizer', 'tokenizerConfig', 'wasm'];

function readFiles(files) {
  if (files === null || typeof files !== 'object' || Array.isArray(files)) {
    fail(ErrorCode.INVALID_ARGUMENT, `loadModel: expected { config, weights, tokenizer? | vocab? + merges? | vocabTxt? }; received ${describe(files)}`);
  }
  const f = { ...files };   // each field read once
  for (const key of Object.keys(f)) {
    if (!FILES.includes(key)) fail(ErrorCode.INVALID_ARGUMENT, `loadModel: unknown field "${key.slice(0, 40)}"; expected one of ${FILES.join(', ')}`);
  }
  if (f.gguf !== undefined) return readGgufFiles(f);
  if (f.config === undefined) fail(ErrorCode.INVALID_ARGUMENT, 'loadModel: config is missing (config.json: its text or the parsed object)');
  const w = f.weights;
  const sharded = w !== null && typeof w === 'object' && 'index' in w && 'shards' in w;
  const isFile = (x) => typeof Blob === 'function' && x instanceof Blob;
  if (!sharded && !isSource(w) && !isFile(w) && !(w instanceof Uint8Array) && !(w instanceof ArrayBuffer)) {
    fail(ErrorCode.INVALID_ARGUMENT, `loadModel: weights must be the bytes of model.safetensors (a Uint8Array, an ArrayBuffer or a File), or { index, shards } for a sharded checkpoint; received ${describe(w)}`);
  }
  return f;
}

/**
 * Load a checkpoint: its files ({ config, weights, … }; weights may be File objects, read slice
 * by slice, with options.onProgress({ file, loaded, total })), or a checkpoint folder's URL
 * (fetched: fetch-checkpoint.js; relative to the page; options { files, stallMs, minRate, graceMs }). Resolves to a Model;
 * rejects with an AttentionError (INVALID_MODEL for a broken or unsupported checkpoint, naming the
 * file and the field or tensor; TOO_LARGE when it cannot fit) or a ModelFetchError (a file that
 * could not be fetched, with its URL and HTTP status).
 */
export async function loadModel(files, options = {}) {
  if (typeof files === 'string') return loadByName(files, options ?? {});
  const opened = new Set();   // the downloads read (fetch-source.js), closed once the weights are in wasm memory
  try {
    return await loadFiles(files, options, opened);
  } finally {
    for (const source of opened) source.close();
  }
}

async function loadFiles(files, options, opened) {
  let parts;
  try {
    readThreads(options.threads);   // before any file is read
    const f = readFiles(files);
    for (const x of [f.weights, f.gguf]) if (isSource(x) && typeof x.close === 'function') opened.add(x);
    const { config, weights, metadata } = f.gguf !== undefined ? await ggufParts(f.gguf, options.onProgress)
      : { config: readConfig(f.config), weights: null };
    const tensors = matchTensors(config, weights ?? await readWeights(f.weights, { onProgress: options.onProgress, opened }));
    expectReads(tensors);
    const tokenizer = await tokenizerOf(f, metadata);
    if (tokenizer && tokenizer.vocabSize > config.vocab_size) {
      fail(ErrorCode.INVALID_MODEL, `the tokenizer has ${tokenizer.vocabSize} tokens but config.json's vocab_size is ${config.vocab_size}: they are not of one checkpoint`);
    }
    parts = { config, tensors, tokenizer, wasm: f.wasm, threads: readThreads(options.threads) };
  } catch (e) {
    throw asError(e, 'loadModel');
  }
  const rt = await createRuntime({ ...(parts.wasm === undefined ? {} : { wasm: parts.wasm }), threads: threadsFor(parts.threads, parts.tensors), offThread: options.offThread === true });
  try {
    await rt.upload(parts.config, fillFrom(parts.tensors), { tensors: parts.tensors });
  } catch (e) {
    rt.dispose();
    throw e;
  }
  return makeModel(rt, parts.config, parts.tokenizer);
}

// a download (fetch-source.js) told which of its tensors the model reads, so that it keeps for a
// later read only those it passes over
function expectReads(tensors) {
  for (const { info } of tensors.list) if (typeof info.source?.expect === 'function') info.source.expect(info.begin, info.end);
}

// options.threads: how many threads run the model (runtime.js, threads.js), 1 to 16, or undefined
function readThreads(threads) {
  if (threads === undefined) return undefined;
  if (!Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS) fail(ErrorCode.INVALID_ARGUMENT, `loadModel: threads must be an integer from 1 to ${MAX_THREADS}; received ${describe(threads)}`);
  return threads;
}

// The threads asked for, else the host's default (runtime.js: the cores up to 8; 1 in a page that
// is not cross-origin isolated) for a model of SMALL_MODEL parameters or more. Below that a step
// takes about as long as handing its parts to the workers (the toy: 27,872 parameters).
export const SMALL_MODEL = 4_000_000;
function threadsFor(threads, tensors) {
  if (threads !== undefined) return threads;
  const parameters = tensors.list.reduce((n, t) => n + t.shape.reduce((a, b) => a * b, 1), 0);
  return parameters < SMALL_MODEL ? 1 : defaultThreads();
}

// A string: a Hugging Face repo id ('Qwen/Qwen2.5-0.5B': hub-browser.js, the Cache API first), or
// a folder's URL, which a relative one tells apart by starting with "." or "/" or ending with "/"
// ('./models/gpt2/', '/gpt2/', 'gpt2/')
const isFolderUrl = (s) => /^[./]|\/$|^[a-z][a-z0-9+.-]*:/i.test(s);

async function loadByName(name, options) {
  const { onProgress: given, revision, hubUrl, token, cache, signal, threads, offThread, file, ...fetching } = options;
  const repo = isFolderUrl(name) ? null : parseRepoId(name);
  if (repo) {
    const onProgress = forwardOnly(given);   // the download, then the reading: forward only
    const { stallMs, minRate, graceMs } = fetching;   // the clocks of a download apply to the hub's too
    return loadModel(await hubFiles(repo, { onProgress, revision, hubUrl, token, cache, signal, file, stallMs, minRate, graceMs }), { onProgress, threads, offThread });
  }
  const base = globalThis.document?.baseURI ?? globalThis.location?.href;
  const files = isGgufUrl(name, base) ? await fetchGguf(name, base, fetching) : await fetchCheckpoint(name, base, fetching);
  try {
    return await loadModel(files, { onProgress: given, threads, offThread });
  } finally {
    closeFetched(files);   // a shard's download left open when loadModel failed before it read that shard
  }
}

const closeFetched = ({ weights: w, gguf }) => { for (const x of isSource(w) ? [w] : Object.values(w?.shards ?? {})) if (isSource(x)) x.close?.(); if (isSource(gguf)) gguf.close?.(); };

// the checkpoint's tokenizer (load-tokenizer.js): its tokenizer files, else a GGUF file's
// tokenizer.ggml.* (gguf-tokenizer.js), else null
function tokenizerOf({ tokenizer, tokenizerConfig, vocab, merges, vocabTxt, lowercase }, ggufMetadata) {
  const given = [tokenizer, vocab, merges, vocabTxt].some((x) => x !== undefined && x !== null);
  if (given) return loadTokenizer({ tokenizer, tokenizerConfig, vocab, merges, vocabTxt, lowercase });
  return ggufMetadata?.has('tokenizer.ggml.model') ? loadTokenizer({ gguf: ggufMetadata }) : null;
}

// the runtime's fill: a tensor's values as float32 (dest a Float32Array), or its bytes as the
// file has them (a Uint8Array: a matrix kept in BF16 or F16, or a GGUF file's in ggml's quantized
// blocks), from the file it is in; a GGUF llama's q and k rows then back in Hugging Face's order
// (gguf-weights.js: a row of bytes is dest.length / rows, a quantized row its cols / block blocks),
// a GGUF gpt2 file's widened (Q8_0) or transposed back to Conv1D's (in, out) (readStored)
function fillFrom(tensors) {
  return (kind, layer, dest) => {
    const { info } = tensors.get(kind, layer);
    const floats = dest instanceof Float32Array;
    if (info.stored && floats) return readStored(info, dest);
    const done = floats ? (info.source.async ? readTensorAsync(info.source, info, dest) : readTensor(info.source, info, dest))
      : copyTensor(info.source, info, dest);
    if (!info.permute) return done;
    const rows = info.shape[0];   // a row: its values (dest of floats) or its bytes
    const unpermute = () => unpermuteRows(dest, rows, dest.length / rows, info.permute.heads);
    return typeof done?.then === 'function' ? done.then(unpermute) : unpermute();
  };
}

// loadModel({ gguf }): the one file holds the config, the tensors and the tokenizer (tokenizer
// files given beside it are read instead)
function readGgufFiles(f) {
  for (const key of ['config', 'weights']) {
    if (f[key] !== undefined) fail(ErrorCode.INVALID_ARGUMENT, `loadModel: give gguf alone, or config and weights: a GGUF file holds both (received gguf and ${key})`);
  }
  const g = f.gguf, isFile = typeof Blob === 'function' && g instanceof Blob;
  if (!isFile && !isSource(g) && !(g instanceof Uint8Array) && !(g instanceof ArrayBuffer)) {
    fail(ErrorCode.INVALID_ARGUMENT, `loadModel: gguf must be the bytes of a .gguf file (a Uint8Array, an ArrayBuffer, a Blob or File); received ${describe(g)}`);
  }
  return f;
}

// a GGUF file's config and tensors, read by ranges
async function ggufParts(gguf, onProgress) {
  const label = typeof gguf?.name === 'string' && gguf.name ? gguf.name : 'model.gguf';   // a File's, a file on disk's (model-node.js)
  const source = isSource(gguf) ? gguf : typeof Blob === 'function' && gguf instanceof Blob
    ? blobSource(gguf, progressTo(onProgress, label, gguf.size)) : bytesSource(gguf instanceof ArrayBuffer ? new Uint8Array(gguf) : gguf, 'loadModel');
  if (typeof source.watch === 'function') source.watch(progressTo(onProgress, label, source.size));   // a download (fetch-source.js)
  const parsed = source.async ? await openGguf(source, label) : parseGguf(source, label);
  const config = ggufConfig(parsed.metadata, parsed.tensors);
  return { config, weights: ggufWeights(parsed, config, source, label), metadata: parsed.metadata };
}

const progressTo = (onProgress, file, total) => {
  let loaded = 0;
  return (n) => { loaded += n; try { onProgress?.({ file, loaded: Math.min(loaded, total), total }); } catch { /* the caller's */ } };
};

// forward's options, each read once: attention is false, true (every head) or
// { layers?, heads? } (those layers' and heads' maps only; each a list of indices, default all);
// heads (true or { repeat }) passed on for the runtime to check (heads.js)
// (a decoder's forward also takes `extra` logits, an encoder's tokenTypes and mask, passed on as given) -> { attention, heads, …extra }
function readForward(options, config, extra = []) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    fail(ErrorCode.INVALID_ARGUMENT, `model.forward: options must be an object like { attention: true }; received ${describe(options)}`);
  }
  const keys = ['attention', 'heads', ...extra], out = { heads: options.heads };
  for (const key of Object.keys(options)) {
    if (!keys.includes(key)) fail(ErrorCode.INVALID_ARGUMENT, `model.forward: unknown option "${String(key).slice(0, 40)}"; expected ${keys.join(', ')}`);
  }
  for (const key of extra) out[key] = options[key];
  return { ...out, attention: readAttention(options.attention ?? false, config) };
}

function readAttention(attention, config) {
  if (typeof attention === 'boolean') return attention;
  if (attention === null || typeof attention !== 'object' || Array.isArray(attention)) {
    fail(ErrorCode.INVALID_ARGUMENT, `model.forward: attention must be true, false or { layers, heads }; received ${describe(attention)}`);
  }
  for (const key of Object.keys(attention)) {
    if (key !== 'layers' && key !== 'heads') fail(ErrorCode.INVALID_ARGUMENT, `model.forward: unknown key "${String(key).slice(0, 40)}" in attention; expected layers, heads`);
  }
  const layers = indexList(attention.layers, 'attention.layers', config.n_layer, ['layer', 'n_layer']);
  const heads = indexList(attention.heads, 'attention.heads', config.n_head, ['head', 'n_head']);
  return layers.flatMap((l) => heads.map((h) => [l, h]));
}

// a list of distinct indices in [0, count), or all of them when undefined; what: [noun, config key]
function indexList(value, name, count, [noun, key]) {
  if (value === undefined) return Array.from({ length: count }, (_, i) => i);
  const ids = idsArg(value, `model.forward: ${name}`, { max: count, maxWhat: (n) => `${n} ${noun}s; the model has ${key} = ${count}`, vocab: count, noun: `${noun} index`, bound: `${key} = ${count}` });
  if (new Set(ids).size !== ids.length) fail(ErrorCode.INVALID_ARGUMENT, `model.forward: ${name} lists an index twice`);
  return Array.from(ids);
}

// logits: true (every row), 'last' ([1, vocab]) or false (none: null) -> the runtime's options
function readLogits(logits = true) {
  if (logits === true || logits === false) return { logits };
  if (logits === 'last') return { logits: true, lastOnly: true };
  return fail(ErrorCode.INVALID_ARGUMENT, `model.forward: logits must be true, 'last' or false; received ${describe(logits)}`);
}

// the runtime's result as forward gives it: logits, the maps asked for, the heads' scores and map
function forwardResult(r, config, attention, lead = { logits: r.logits }) {
  const out = attention === false ? lead : { ...lead, attention: splitAttention(r.attention, config) };
  if (r.heads) Object.assign(out, { heads: headsResult(r.heads, config), map: r.heads.map, mapAsync: r.heads.mapAsync });
  return out;
}

// k(v) now, or when v (a promise) resolves
const thenDo = (v, k) => (typeof v?.then === 'function' ? v.then(k) : k(v));

// [layer][head] -> { data, shape: [rows, m] } (copies) or null for a head not asked for
function splitAttention({ data, shape: [, rows, m], slots }, config) {
  const size = rows * m;
  return slotsByHead(slots, config, (block) => ({ data: data.slice(block * size, (block + 1) * size), shape: [rows, m] }));
}

function makeModel(rt, config, tokenizer) {
  const state = { disposed: false, owner: null };   // owner: the generation whose positions the KV cache holds
  const live = (name) => { if (state.disposed) fail(ErrorCode.INVALID_ARGUMENT, `model.${name}: the model was disposed`); };
  const needTokenizer = (name) => {
    if (!tokenizer) fail(ErrorCode.INVALID_ARGUMENT, `model.${name}: this model was loaded without tokenizer files (tokenizer.json, vocab.json + merges.txt, or vocab.txt); pass token ids instead`);
  };
  // every failure an AttentionError: what a getter or a Proxy trap throws becomes INVALID_ARGUMENT.
  // A dispose() during the call (a getter or a Proxy of an argument, a callback) fails it, whatever
  // it had come to: the runtime frees nothing under a call (runtime.js), and reads each argument
  // once, into a copy, before it touches wasm memory.
  const api = (name, fn) => (...args) => {
    try {
      live(name);
      let out, error = null;
      try { out = fn(...args); } catch (e) { error = e; }
      if (state.disposed) {
        throw new AttentionError(ErrorCode.INVALID_ARGUMENT, `model.${name}: the model was disposed during the call (by a getter, a Proxy or a callback of its arguments)`, error ? { cause: error } : undefined);
      }
      if (error) throw error;
      return out;
    } catch (e) {
      throw asError(e, `model.${name}`);
    }
  };
  // a decoder's forward through run (the runtime's forward, or forwardAsync: then a promise)
  const forwardBy = (run) => (ids, options = {}) => {
    const { attention, heads, logits } = readForward(options, config, ['logits']);
    const rows = readLogits(logits);
    live('forward');   // a getter of the options may have disposed it
    state.owner = null;
    return thenDo(run(ids, { attention, ...rows, ...(heads === undefined ? {} : { heads }) }), (r) => forwardResult(r, config, attention));
  };
  // an async method: its failures as api's, a rejected promise
  const asyncApi = (name, fn) => async (...args) => {
    const r = await api(name, fn)(...args);
    if (state.disposed) fail(ErrorCode.INVALID_ARGUMENT, `model.${name}: the model was disposed during the call`);
    return r;
  };
  return Object.freeze({
    config: Object.freeze({ ...config }),
    tokenizer: tokenizer ? tokenizer.kind : null,
    encode: api('encode', (text, options) => { needTokenizer('encode'); return tokenizer.encode(text, options); }),
    decode: api('decode', (ids) => { needTokenizer('decode'); return tokenizer.decode(ids); }),
    /** Each id as readable text, for labels (▁ marks a space; <0xE7> a byte of a split character). */
    tokens: api('tokens', (ids) => { needTokenizer('tokens'); return tokenizer.tokens(ids); }),
    /** The full pass over ids from position 0: logits (n, vocab_size), and attention[layer][head] (n, n) when asked. */
    forward: api('forward', forwardBy(rt.forward)),
    /** forward off this thread where the model runs on the threaded build (model.offThread), else here; the same result, awaited. */
    forwardAsync: asyncApi('forwardAsync', forwardBy(rt.forwardAsync)),
    /** Whether forwardAsync leaves this thread free (loadModel's offThread or threads > 1, where the host has threads). */
    get offThread() { return rt.offThread; },
    generate: api('generate', (ids, options = {}) => {
      const sampling = readSampling(options, config);
      return generate(rt, state, tokenizer, config, readPrompt(ids, config), sampling);
    }),
    // a decoder has no [MASK] to fill: a typed error where a script calls it, as the CLI says (bin/model.js)
    fillMask: api('fillMask', () => fail(ErrorCode.INVALID_ARGUMENT, `model.fillMask is for BERT encoders; this checkpoint is ${config.modelType ?? config.family}, a decoder: use forward or generate`)),
    ...(config.encoder ? encoderMethods(rt, config, tokenizer, api, { needTokenizer, live, asyncApi }) : {}),
    /** Threads the model runs on (loadModel's options.threads, at most the host's cores; fewer after a thread failed). */
    get threads() { return rt.threads; },
    /** The threads asked for (options.threads, or the default): more than threads where the host has fewer cores, or none (a page that is not cross-origin isolated). */
    threadsRequested: rt.threadsRequested,
    dispose() { if (!state.disposed) { state.disposed = true; rt.dispose(); } },
  });
}

// an encoder's encode, forward and fillMask (encoder.js), and a generate that says why not
function encoderMethods(rt, config, tokenizer, api, { needTokenizer, live, asyncApi }) {
  const e = encoderApi(rt, config, tokenizer, { needTokenizer, live, readForward, forwardResult, thenDo });
  return {
    encode: api('encode', e.encode),
    forward: api('forward', e.forward),
    forwardAsync: asyncApi('forwardAsync', e.forwardAsync),
    fillMask: api('fillMask', e.fillMask),
    generate: api('generate', () => fail(ErrorCode.INVALID_ARGUMENT, `model.generate: ${config.modelType} is an encoder: it reads the whole text at once and has no next token to predict; use fillMask('…[MASK]…') to fill a gap`)),
  };
}

export { AttentionError, ModelFetchError, fetchCheckpoint, loadTokenizer };
export { hubSize, cachedModels, deleteCachedModel } from './hub/hub-browser.js';
