// runtime.js - GPT-2 in WebAssembly: the thin binding over web/wasm/attention-model.wasm
// (c_src/gpt2.c, see gpt2.h for the model and its shapes), on web/core/memory.js's layer.
//
//   const rt = await createRuntime();              // options.wasm: a Module or bytes of that build
//   rt.upload(config, (kind, layer, view, shape) => readTensor(bytes, info, view));
//   const { logits } = rt.forward(ids);            // a full pass from position 0: logits (T, V)
//   const next = rt.forward([id], { pos: ids.length, lastOnly: true });   // one decoding step
//   rt.reset(); rt.dispose();
//
// upload(config, fill, { maxPositions } = {})
//   config: readConfig's result (web/model/config.js): n_layer, n_head, n_embd, vocab_size,
//   n_positions, layer_norm_epsilon. The parameters live in wasm memory in C's layout; fill is
//   called once per tensor, in the order of the forward pass (checkpoint.js's list), with
//   kind ('wte', 'wpe', 'ln1_w', ..., 'lnf_b'), layer (-1 for wte, wpe, lnf_w, lnf_b), a
//   Float32Array view of the tensor's slot in wasm memory and its shape (checkpoint.js's): fill
//   writes the values straight there, no second copy. fill must not call this runtime (a call
//   could move wasm memory and detach the view). After the fills the weight matrices are packed
//   in place for the forward pass (attn_gpt2_pack, through a scratch of one matrix). A KV
//   cache of maxPositions (default n_positions) positions is reserved beside the parameters.
//   Returns { parameters, bytes }.
//   Failures: INVALID_MODEL (a config the C cannot run), NON_FINITE (a NaN or ±Infinity among
//   the parameters, named), TOO_LARGE (more than wasm32's 4 GiB), OUT_OF_MEMORY; what fill
//   throws, as an AttentionError. A failed upload leaves no model.
// forward(ids, { pos = 0, attention = false, lastOnly = false } = {})
//   ids: token ids (an array or typed array of integers in [0, vocab_size)) at positions
//   pos .. pos + T - 1, refused by their count before any is read (web/core/args.js idsArg);
//   the cache must hold positions 0 .. pos - 1 (pos <= rt.length, the positions computed so
//   far; a smaller pos recomputes from there). attention: true for every head, or a list of
//   [layer, head] pairs for those alone (one head's map costs T·m floats, not L·H·T·m).
//   -> { logits: { data, shape: [T, V] } (the last token's only, [1, V], with lastOnly),
//        attention?: { data, shape: [B, T, pos + T], slots } (B heads' weights, row r for the
//        query at pos + r; head h of layer l is block slots[l·H + h], -1 when not asked for:
//        with attention: true, block l·H + h) }. Copies, never views of wasm memory.
//   Failures: INVALID_ARGUMENT (an id outside the vocabulary, pos past rt.length, positions past
//   n_positions or maxPositions, an unknown option, no model), NON_FINITE (the result overflows
//   float32), TOO_LARGE.
//   After any error the runtime stays usable; rt.length is then at most pos.
// reset(): forget the cached positions (rt.length = 0). dispose(): free the model's memory.
// rt.length, rt.config (the uploaded one, or null), rt.maxPositions.
import modelBase64 from '../wasm/attention-model-wasm.js';
import { ErrorCode, AttentionError, fail, asError, describe } from '../core/errors.js';
import { WASM_MODEL_FUNCTIONS } from '../core/exports.js';
import { wasmMemory, allocate, release, reserve, checkStatus, readMatrix, cString } from '../core/memory.js';
import { idsArg } from '../core/args.js';
import { decodeBase64, missingExports, WASM_IMPORTS } from '../core/instantiate.js';

// the parameter kinds, in the order of gpt2.h's attn_gpt2_param; stacked over the layers or not
const KINDS = ['wte', 'wpe', 'ln1_w', 'ln1_b', 'qkv_w', 'qkv_b', 'attproj_w', 'attproj_b',
  'ln2_w', 'ln2_b', 'fc_w', 'fc_b', 'fcproj_w', 'fcproj_b', 'lnf_w', 'lnf_b'];
const GLOBAL = new Set(['wte', 'wpe', 'lnf_w', 'lnf_b']);
// each kind's shape for one layer (checkpoint.js's shapes)
const SHAPES = {
  wte: (c) => [c.vocab_size, c.n_embd], wpe: (c) => [c.n_positions, c.n_embd],
  qkv_w: (c) => [c.n_embd, 3 * c.n_embd], qkv_b: (c) => [3 * c.n_embd],
  attproj_w: (c) => [c.n_embd, c.n_embd], fc_w: (c) => [c.n_embd, 4 * c.n_embd], fc_b: (c) => [4 * c.n_embd],
  fcproj_w: (c) => [4 * c.n_embd, c.n_embd],
};
const shapeOf = (kind, c) => (SHAPES[kind] ? SHAPES[kind](c) : [c.n_embd]);

// C statuses (attention.h) and flags (gpt2.h)
const ATTN_OK = 0, ATTN_ERR_NON_FINITE = 4, ATTN_ERR_TOO_LARGE = 6, ATTN_GPT2_LAST_ONLY = 1;
const CONFIG_BYTES = 24, OFFSETS_BYTES = 4 * (KINDS.length + 1);   // wasm32: int, float, size_t are 4 bytes

let embedded = null;   // the package's build, compiled once

async function instantiate(wasm) {
  let module;
  try {
    if (wasm === undefined) module = await (embedded ??= WebAssembly.compile(decodeBase64(modelBase64)));
    else module = wasm instanceof WebAssembly.Module ? wasm : await WebAssembly.compile(wasm);
  } catch (e) {
    if (wasm === undefined) { embedded = null; throw e; }
    throw asError(e, 'createRuntime: options.wasm is not a usable WebAssembly module');
  }
  const { exports } = await WebAssembly.instantiate(module, WASM_IMPORTS);
  const missing = missingExports(exports, WASM_MODEL_FUNCTIONS);
  if (missing.length) fail(ErrorCode.INVALID_ARGUMENT, `createRuntime: options.wasm is not attnmap's model build (it lacks ${missing.slice(0, 3).join(', ')}); pass attention-model.wasm`);
  exports._initialize();
  return exports;
}

/** The GPT-2 runtime over one instance of the model build (see the top of this file). */
export async function createRuntime(options = {}) {
  if (options === null || typeof options !== 'object') fail(ErrorCode.INVALID_ARGUMENT, `createRuntime: options must be an object like { wasm }; received ${describe(options)}`);
  const exports = await instantiate(options.wasm);
  const mem = wasmMemory(exports);
  const rt = { mem, exports, model: null, length: 0, busy: false };
  const guard = (name, fn) => (...args) => {
    if (rt.busy) fail(ErrorCode.INVALID_ARGUMENT, `${name}: called from inside upload's fill, which must not call the runtime`);
    try { return fn(...args); } catch (e) { throw e instanceof AttentionError ? e : asError(e, name); }
  };
  return Object.freeze({
    upload: guard('upload', (config, fill, opts) => upload(rt, config, fill, opts)),
    forward: guard('forward', (ids, opts) => forward(rt, ids, opts)),
    reset: guard('reset', () => { rt.length = 0; }),
    dispose: guard('dispose', () => { freeModel(rt); }),
    get length() { return rt.length; },
    get config() { return rt.model ? rt.model.config : null; },
    get maxPositions() { return rt.model ? rt.model.S : 0; },
  });
}

// ----------------------------------------------------------------------------
// upload

function readModelConfig(config) {
  if (config === null || typeof config !== 'object') fail(ErrorCode.INVALID_ARGUMENT, `upload: config must be readConfig's result; received ${describe(config)}`);
  const c = {};
  for (const key of ['n_layer', 'n_head', 'n_embd', 'vocab_size', 'n_positions']) {
    const v = config[key];
    if (!Number.isInteger(v) || v < 1 || v > 0x7fffffff) fail(ErrorCode.INVALID_MODEL, `upload: config.${key} must be a positive integer; received ${describe(v)}`);
    c[key] = v;
  }
  if (c.n_embd % c.n_head !== 0) fail(ErrorCode.INVALID_MODEL, `upload: config.n_head = ${c.n_head} must divide n_embd = ${c.n_embd}`);
  const eps = config.layer_norm_epsilon ?? 1e-5;
  if (typeof eps !== 'number' || !(eps > 0) || !Number.isFinite(Math.fround(eps))) fail(ErrorCode.INVALID_MODEL, `upload: config.layer_norm_epsilon must be a positive float32; received ${describe(eps)}`);
  c.layer_norm_epsilon = eps;
  return Object.freeze(c);
}

// the C layout: offsets (floats) of each kind, and the total; the config's struct stays in memory
function layout(rt, c) {
  const { mem, exports } = rt;
  const cfg = reserve(mem, CONFIG_BYTES + OFFSETS_BYTES, () => 'the model config');
  const i32 = new Int32Array(mem.memory.buffer, cfg, 6);
  i32.set([c.n_layer, c.n_head, c.n_embd, c.vocab_size, c.n_positions]);
  new Float32Array(mem.memory.buffer, cfg + 20, 1)[0] = c.layer_norm_epsilon;
  const status = exports.attn_gpt2_param_layout(cfg + CONFIG_BYTES, cfg);
  if (status !== ATTN_OK) {
    mem.free(cfg);
    if (status === ATTN_ERR_TOO_LARGE) fail(ErrorCode.TOO_LARGE, `upload: the parameters of this model do not fit in wasm32's 4 GiB`);
    fail(ErrorCode.INVALID_MODEL, `upload: ${cString(mem, exports.attn_status_string(status))}`);
  }
  return { cfg, offsets: Array.from(new Uint32Array(mem.memory.buffer, cfg + CONFIG_BYTES, KINDS.length + 1)) };
}

function upload(rt, config, fill, opts = {}) {
  const c = readModelConfig(config);
  if (typeof fill !== 'function') fail(ErrorCode.INVALID_ARGUMENT, `upload: fill must be a function (kind, layer, view, shape); received ${describe(fill)}`);
  const S = opts.maxPositions ?? c.n_positions;
  if (!Number.isInteger(S) || S < 1 || S > c.n_positions) fail(ErrorCode.INVALID_ARGUMENT, `upload: maxPositions must be an integer in [1, n_positions = ${c.n_positions}]; received ${describe(S)}`);
  freeModel(rt);
  const { mem, exports } = rt;
  const model = { config: c, S, ...layout(rt, c), params: 0, cache: 0 };
  rt.model = model;   // from here, freeModel undoes whatever part was made
  try {
    const total = model.offsets[KINDS.length];
    model.params = reserve(mem, total * 4, () => `the model's ${total} parameters`);
    const cacheBytes = exports.attn_gpt2_cache_size(model.cfg, S) >>> 0;
    if (cacheBytes === 0) fail(ErrorCode.TOO_LARGE, `upload: a KV cache of ${S} positions does not fit in wasm32's 4 GiB`);
    model.cache = reserve(mem, cacheBytes, () => `a KV cache of ${S} positions`);
    fillAll(rt, model, fill);
    if (exports.attn_gpt2_check_params(model.cfg, model.params) === ATTN_ERR_NON_FINITE) findNonFinite(rt, model);
    pack(rt, model);
    return { parameters: total, bytes: total * 4 + cacheBytes };
  } catch (e) {
    freeModel(rt);
    throw e;
  }
}

// fill(kind, layer, view, shape) for every tensor, in the order of the forward pass
function fillAll(rt, model, fill) {
  const L = model.config.n_layer, order = [];
  for (const kind of ['wte', 'wpe']) order.push([kind, -1]);
  for (let l = 0; l < L; l++) for (const kind of KINDS) if (!GLOBAL.has(kind)) order.push([kind, l]);
  for (const kind of ['lnf_w', 'lnf_b']) order.push([kind, -1]);
  rt.busy = true;
  try {
    for (const [kind, layer] of order) {
      const [at, count] = slot(model, kind, layer);
      fill(kind, layer, new Float32Array(rt.mem.memory.buffer, at, count), shapeOf(kind, model.config));
    }
  } catch (e) {
    throw asError(e, 'upload: fill failed');
  } finally {
    rt.busy = false;
  }
}

// byte offset and float count of a kind's tensor for one layer (-1: not stacked)
function slot(model, kind, layer) {
  const k = KINDS.indexOf(kind), { offsets } = model;
  const count = (offsets[k + 1] - offsets[k]) / (layer < 0 ? 1 : model.config.n_layer);
  return [model.params + 4 * (offsets[k] + Math.max(layer, 0) * count), count];
}

// the weight matrices into the order the forward pass reads them (gpt2.h attn_gpt2_pack), once,
// after the checks (which name indices in the checkpoint's order); the scratch is freed at once
function pack(rt, model) {
  const { mem, exports } = rt;
  const bytes = exports.attn_gpt2_pack_scratch_size(model.cfg) >>> 0;
  const scratch = reserve(mem, bytes, () => 'packing the weight matrices');
  const status = exports.attn_gpt2_pack(model.params, scratch, model.cfg);
  mem.free(scratch);
  if (status !== ATTN_OK) fail(ErrorCode.INVALID_MODEL, `upload: ${cString(mem, exports.attn_status_string(status))}`);
}

function findNonFinite(rt, model) {
  for (let k = 0; k < KINDS.length; k++) {
    const L = GLOBAL.has(KINDS[k]) ? 1 : model.config.n_layer;
    for (let l = 0; l < L; l++) {
      const [at, count] = slot(model, KINDS[k], GLOBAL.has(KINDS[k]) ? -1 : l);
      const view = new Float32Array(rt.mem.memory.buffer, at, count);
      for (let i = 0; i < count; i++) {
        if (!Number.isFinite(view[i])) {
          fail(ErrorCode.NON_FINITE, `upload: parameter ${KINDS[k]}${L > 1 || !GLOBAL.has(KINDS[k]) ? ` of layer ${l}` : ''} holds ${view[i]} at index ${i}: parameters must be finite`);
        }
      }
    }
  }
}

function freeModel(rt) {
  const m = rt.model;
  rt.model = null;
  rt.length = 0;
  if (!m) return;
  for (const p of [m.cache, m.params, m.cfg]) if (p) rt.mem.free(p);
}

// ----------------------------------------------------------------------------
// forward

const FORWARD_OPTIONS = ['pos', 'attention', 'lastOnly'];

// each option read once; unknown keys refused (a typo would otherwise be silently ignored)
function readForwardOptions(rt, opts) {
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) fail(ErrorCode.INVALID_ARGUMENT, `forward: options must be an object like { pos, attention, lastOnly }; received ${describe(opts)}`);
  for (const key of Object.keys(opts)) {
    if (!FORWARD_OPTIONS.includes(key)) fail(ErrorCode.INVALID_ARGUMENT, `forward: unknown option "${String(key).slice(0, 40)}"; expected one of ${FORWARD_OPTIONS.join(', ')}`);
  }
  const { pos = 0, attention = false, lastOnly = false } = opts;
  if (!Number.isInteger(pos) || pos < 0 || pos > rt.length) {
    fail(ErrorCode.INVALID_ARGUMENT, `forward: pos must be an integer in [0, ${rt.length}] (the positions in the KV cache); received ${describe(pos)}`);
  }
  if (typeof lastOnly !== 'boolean') fail(ErrorCode.INVALID_ARGUMENT, `forward: lastOnly must be true or false; received ${describe(lastOnly)}`);
  return { pos, heads: readHeads(attention, rt.model.config), lastOnly };
}

// attention: false (none), true (every head), or [[layer, head], ...] (those heads, in that
// order) -> null, or { slots: Int32Array(L·H) (block of each head, -1: not written), count }
function readHeads(attention, { n_layer: L, n_head: H }) {
  if (attention === false) return null;
  const slots = new Int32Array(L * H).fill(-1);
  if (attention === true) return { slots: slots.map((_, i) => i), count: L * H };
  if (!Array.isArray(attention)) fail(ErrorCode.INVALID_ARGUMENT, `forward: attention must be true, false or a list of [layer, head] pairs; received ${describe(attention)}`);
  const n = attention.length;
  if (n > L * H) fail(ErrorCode.INVALID_ARGUMENT, `forward: attention lists ${n} heads; the model has ${L * H}`);
  for (let i = 0; i < n; i++) {
    const pair = attention[i];
    const [l, h] = Array.isArray(pair) && pair.length === 2 ? [pair[0], pair[1]] : [NaN, NaN];
    if (!(Number.isInteger(l) && l >= 0 && l < L && Number.isInteger(h) && h >= 0 && h < H)) {
      fail(ErrorCode.INVALID_ARGUMENT, `forward: attention[${i}] must be [layer, head] with layer in [0, ${L}) and head in [0, ${H}); received ${describe(pair)}`);
    }
    if (slots[l * H + h] >= 0) fail(ErrorCode.INVALID_ARGUMENT, `forward: attention lists layer ${l}, head ${h} twice`);
    slots[l * H + h] = i;
  }
  return { slots, count: n };
}

function forward(rt, ids, opts = {}) {
  if (!rt.model) fail(ErrorCode.INVALID_ARGUMENT, 'forward: no model: call upload(config, fill) first');
  const { mem, exports, model } = rt, { n_layer: L, n_head: H, vocab_size: V, n_positions: P } = model.config;
  const { pos, heads, lastOnly } = readForwardOptions(rt, opts);
  const S = model.S, limit = S === P ? `n_positions = ${S}` : `maxPositions = ${S} (n_positions = ${P})`;
  const tokens = idsArg(ids, 'forward: ids', { max: S - pos, maxWhat: (n) => `positions ${pos} .. ${pos + n - 1} go past the model's ${limit}`, vocab: V });
  const T = tokens.length, m = pos + T, rows = lastOnly ? 1 : T;
  const wsBytes = exports.attn_gpt2_workspace_size(model.cfg, T, m) >>> 0;
  if (wsBytes === 0) fail(ErrorCode.TOO_LARGE, `forward: ${T} tokens over ${m} positions need more than wasm32's 4 GiB`);
  const attFloats = heads ? heads.count * T * m : 0;
  const block = allocate(mem, [T, heads ? L * H : 0, rows * V, attFloats, Math.ceil(wsBytes / 4)], 0,
    () => (heads ? `forward's attention weights (${heads.count} heads × ${T} × ${m}) and logits` : `forward's logits (${rows}, ${V})`));
  const [pids, pslots, plogits, patt, pws] = block.offsets;
  try {
    new Int32Array(mem.memory.buffer, pids, T).set(tokens);
    if (heads) new Int32Array(mem.memory.buffer, pslots, L * H).set(heads.slots);
    rt.length = Math.min(rt.length, pos);   // rows from pos on are rewritten: unspecified until it succeeds
    const status = exports.attn_gpt2_forward(plogits, heads ? patt : 0, heads ? pslots : 0, model.cache, pws, model.cfg,
      model.params, pids, T, pos, S, lastOnly ? ATTN_GPT2_LAST_ONLY : 0);
    checkStatus(mem, status, 'forward', [], []);
    rt.length = m;
    const result = { logits: readMatrix(mem, plogits, rows, V) };
    if (heads) {
      const { data } = readMatrix(mem, patt, heads.count * T, m);
      result.attention = { data, shape: [heads.count, T, m], slots: heads.slots };
    }
    return result;
  } finally {
    release(mem, block);
  }
}
