// runtime.js - a model in WebAssembly, for every family: the thin binding over
// web/wasm/attention-model.wasm (c_src/gpt2.c, llama.c) on web/core/memory.js's layer. What is
// particular to a family (its C struct, how its parameters are laid out, which C functions run
// it) is its module's `runtime` (web/model/families/); this file does what all share.
//
//   const rt = await createRuntime();              // options.wasm: a Module or bytes of that build;
//                                                  // options.threads (1 to 16): the threaded build (threads.js)
//   await rt.upload(config, fill, { tensors });    // sync when every fill is (GPT-2's tests)
//   const { logits } = rt.forward(ids);            // a full pass from position 0: logits (T, V)
//   const next = rt.forward([id], { pos: ids.length, lastOnly: true });   // one decoding step
//   rt.reset(); rt.dispose();
//
// upload(config, fill, { maxPositions, reserve, tensors } = {})
//   config: readConfig's result (web/model/load/config.js), or for GPT-2 a plain object of its
//   sizes (family 'gpt2' when none is named). The family lays the parameters out in wasm memory
//   and calls fill(kind, layer, dest, shape) once per tensor, in the order of the forward pass:
//   dest is a Float32Array view of the tensor's slot (fill writes float32 values there), or a
//   Uint8Array of the tensor's bytes as the file stores them (a matrix kept in BF16, F16 or a GGUF quantized type;
//   tensors, matchTensors' result, tells the family each tensor's dtype and presence). fill may
//   return a promise (a File read slice by slice): upload then returns one. fill must not call
//   this runtime. The KV cache holds `reserve` positions at first (default 64) and doubles as
//   needed up to maxPositions (default n_positions).
//   Returns { parameters, bytes }. Failures: INVALID_MODEL (a config the C cannot run),
//   NON_FINITE (a NaN or ±Infinity among the parameters, named), TOO_LARGE (more than wasm32's
//   4 GiB), OUT_OF_MEMORY; what fill throws, as an AttentionError. A failed upload leaves no model.
// forward(ids, { pos = 0, attention = false, lastOnly = false, logits = true, heads } = {})
//   ids: token ids at positions pos .. pos + T - 1, refused by their count before any is read
//   (web/core/args.js idsArg); the cache must hold positions 0 .. pos - 1 (pos <= rt.length; a
//   smaller pos recomputes from there). attention: true for every head, or a list of
//   [layer, head] pairs for those alone (one head's map costs T·m floats, not L·H·T·m).
//   -> { logits: { data, shape: [T, V] } (the last token's only, [1, V], with lastOnly),
//        attention?: { data, shape: [B, T, pos + T], slots } (B heads' weights, row r for the
//        query at pos + r; head h of layer l is block slots[l·H + h], -1 when not asked for:
//        with attention: true, block l·H + h),
//        heads?: { scores, repeat, map(l, h) } with heads: true or { repeat } (heads.js; pos 0
//        only) }. logits: false skips the LM head (logits null). Copies, never views of wasm memory.
//   Failures: INVALID_ARGUMENT (an id outside the vocabulary, pos past rt.length, positions past
//   n_positions or maxPositions, an unknown option, no model), NON_FINITE (the result overflows
//   float32), TOO_LARGE. After any error the runtime stays usable; rt.length is then at most pos.
// reset(): forget the cached positions (rt.length = 0). dispose(): free the model's memory and
// end its threads; called during a call (by a getter or a Proxy of its arguments, or by fill),
// it waits for the call to end, and the call then fails with "the runtime was disposed": memory
// is never freed under a call that is using it. A runtime on threads that is garbage-collected
// undisposed ends its workers (FinalizationRegistry).
// rt.length, rt.config (the uploaded one, or null), rt.maxPositions, rt.threads (the threads it
// runs on: options.threads, at most the host's cores) and rt.threadsRequested (options.threads).
// forwardAsync(ids, options): forward, its C call made by the threads' caller worker (threads.js)
//   where the runtime is on the threaded build (options.threads > 1, or options.offThread where
//   the host has threads: rt.offThread), so that this thread is free while it runs; elsewhere
//   forward here. The same bits either way. While it runs, every other call is refused
//   (INVALID_ARGUMENT): the memory has one writer at a time. heads' map(l, h) has mapAsync too.
import { ErrorCode, AttentionError, fail, asError, describe } from '../core/errors.js';
import { WASM_MODEL_FUNCTIONS } from '../core/exports.js';
import { wasmMemory, allocate, release, reserve, checkStatus, readMatrix } from '../core/memory.js';
import { idsArg } from '../core/args.js';
import { decodeBase64, missingExports, WASM_IMPORTS } from '../core/instantiate.js';
import { familyOf } from './families/index.js';
import { startThreads } from './threads/threads.js';
import { readHeadsOption, dropKept, keepBefore, writeKeepStruct, keepAfter } from './heads.js';
import { callHere, offThread, settle } from './runtime-call.js';

const ATTN_OK = 0, LAST_ONLY = 1;                // attention.h; gpt2.h's and llama.h's LAST_ONLY
const FIRST_CACHE = 64;                          // positions the KV cache holds at first; it doubles as needed
export const MAX_THREADS = 16;                   // c_src/parallel.h ATTN_MAX_THREADS

const embedded = { one: null, threads: null };   // the package's builds, each compiled once

async function compile(wasm, threaded) {
  const kind = threaded ? 'threads' : 'one';
  try {
    if (wasm === undefined) return await (embedded[kind] ??= compileBuild(threaded ? host.build : singleBuild));
    return wasm instanceof WebAssembly.Module ? wasm : await WebAssembly.compile(wasm);
  } catch (e) {
    if (wasm === undefined) { embedded[kind] = null; throw e; }
    throw asError(e, 'createRuntime: options.wasm is not a usable WebAssembly module');
  }
}

// the one-thread build's base64, imported when first used: bundlers put its 144 KiB in a chunk of its own
const singleBuild = async () => decodeBase64((await import('../wasm/attention-model-wasm.js')).default);

// a build as base64 (the package's modules), or a function that gives its bytes (a browser's fetch)
const compileBuild = async (build) => WebAssembly.compile(typeof build === 'function' ? await build() : decodeBase64(build));

async function instantiate(wasm) {
  const { exports } = await WebAssembly.instantiate(await compile(wasm, false), WASM_IMPORTS);
  const missing = missingExports(exports, WASM_MODEL_FUNCTIONS);
  if (missing.length) fail(ErrorCode.INVALID_ARGUMENT, `createRuntime: options.wasm is not attnmap's model build (it lacks ${missing.slice(0, 3).join(', ')}); pass attention-model.wasm`);
  exports._initialize();
  return { exports, memory: exports.memory, threads: null };
}

// the threaded build in `threads` threads (threads.js), with the host's spawn
async function instantiateThreads(wasm, threads, spawn, timeout) {
  const t = await startThreads(await compile(wasm, true), threads, spawn, { timeout });
  return { exports: t.exports, memory: t.memory, threads: t };
}

// What threads need from the host (threads.js), given by its entry: Node's from model-node.js
// (threads-node.js), a cross-origin isolated page's from model.js (threads-browser.js), so that a
// browser's bundle carries neither worker_threads nor the threaded build's 130 KB of base64.
// { spawn, build: the threaded build's base64 or a function resolving to its bytes, cores(), timeout? }
// (a test's: a worker that never answers, a shorter timeout).
const host = { spawn: null, build: null, cores: null, timeout: undefined };
export function useThreadHost(given) { Object.assign(host, { timeout: undefined }, given); }

// the host's cores (os.availableParallelism, navigator.hardwareConcurrency), or 0 when unknown
function hostCores() {
  let cores;
  try { cores = Number(host.cores?.()); } catch { cores = 0; }
  return Number.isInteger(cores) && cores > 0 ? cores : 0;
}

/** The threads a model runs on unless told: the host's cores, up to 8; 1 where it has no threads. */
export function defaultThreads() {
  if (typeof host.spawn !== 'function') return 1;
  const cores = hostCores();
  return cores > 1 ? Math.min(8, cores) : 1;
}

// More threads than cores run slower than one (issue 35: 16 on 2 cores, 14 times): each spins
// while it waits for the next job (threads.js), taking the core the thread with work needs. So
// the count is clamped to the host's cores; rt.threadsRequested keeps what was asked.
function readRuntimeOptions(options) {
  if (options === null || typeof options !== 'object') fail(ErrorCode.INVALID_ARGUMENT, `createRuntime: options must be an object like { wasm, threads }; received ${describe(options)}`);
  const { wasm, threads = 1, spawn = host.spawn, threadTimeout = host.timeout, offThread = false } = options;
  if (!Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS) fail(ErrorCode.INVALID_ARGUMENT, `createRuntime: threads must be an integer in [1, ${MAX_THREADS}]; received ${describe(threads)}`);
  const cores = hostCores();
  // a host without threads (a page that is not cross-origin isolated): one thread, the same numbers
  const used = typeof spawn !== 'function' ? 1 : cores ? Math.min(threads, cores) : threads;
  return { wasm, threads: used, requested: threads, spawn, threadTimeout, offThread: offThread === true && typeof spawn === 'function' };
}

// a runtime on threads dropped undisposed: its workers end (each holds its instance over the
// shared memory, megabytes, and a thread). The held value is the threads alone (threads.js's t),
// which reaches neither the runtime nor its model, so that it does not keep them alive.
const dropped = new FinalizationRegistry((threads) => threads.dispose());

/** A runtime over one instance of the model build, or of its threaded build (see the top of this file). */
export async function createRuntime(options = {}) {
  const o = readRuntimeOptions(options);
  const inst = o.threads > 1 || o.offThread ? await instantiateThreads(o.wasm, o.threads, o.spawn, o.threadTimeout) : await instantiate(o.wasm);
  const { exports } = inst;
  const mem = wasmMemory({ ...exports, memory: inst.memory });
  // calls: the calls under way (a getter of an argument may call dispose, or call again);
  // disposing: dispose was called during one, and waits for the last to end
  const rt = { mem, exports, model: null, length: 0, busy: false, threads: inst.threads, calls: 0, disposing: false, offCall: false };
  rt.guard = (name, fn) => guard(rt, name, fn);   // heads.js's map
  const api = Object.freeze({
    upload: guard(rt, 'upload', (config, fill, opts) => upload(rt, config, fill, opts)),
    forward: guard(rt, 'forward', (ids, opts) => forward(rt, ids, opts)),
    forwardAsync: guard(rt, 'forwardAsync', (ids, opts) => offThread(rt, (call) => forward(rt, ids, opts, call))),
    reset: guard(rt, 'reset', () => { rt.length = 0; dropKept(rt); }),
    dispose: () => {
      if (rt.calls > 0) rt.disposing = true;
      else disposeNow(rt);
    },
    get length() { return rt.length; },
    get config() { return rt.model ? rt.model.config : null; },
    get maxPositions() { return rt.model ? rt.model.S : 0; },
    /** Threads the C splits its work into (1: this thread alone). */
    get threads() { return rt.threads ? rt.threads.count : 1; },
    /** Whether forwardAsync runs off this thread (the threaded build). */
    get offThread() { return rt.threads !== null; },
    /** The threads asked for (options.threads): more than `threads` where the host has fewer cores, or none. */
    threadsRequested: o.requested,
  });
  if (rt.threads) dropped.register(api, rt.threads, rt);
  return api;
}

// A runtime's method: no call from inside upload's fill; each call counted, so that a dispose
// during it (from a getter of its arguments, or fill) frees nothing until it ends, and then fails
// it. An upload whose fills are promises is a call until it settles.
function guard(rt, name, fn) {
  const { exports } = rt;
  const disposed = () => fail(ErrorCode.INVALID_ARGUMENT, `${name}: the runtime was disposed during the call`);
  const leave = () => { if (--rt.calls === 0 && rt.disposing) disposeNow(rt); };
  const failed = (e) => {
    if (rt.threads && e?.thread) rt.threads.drop(e.lost);   // the model goes on with the threads left
    throw e instanceof AttentionError ? e : asError(e, name);
  };
  return (...args) => {
    if (rt.busy) fail(ErrorCode.INVALID_ARGUMENT, `${name}: called from inside upload's fill, which must not call the runtime`);
    if (rt.offCall) fail(ErrorCode.INVALID_ARGUMENT, `${name}: the model is running a forwardAsync or mapAsync off this thread; await it first`);
    const sp = exports.stackSave();
    rt.calls++;
    let async = false;
    try {
      const r = fn(...args);
      if (rt.disposing) disposed();
      if (typeof r?.then !== 'function') return r;
      async = true;
      return r.then((v) => (rt.disposing ? disposed() : v), failed).finally(leave);
    } catch (e) {
      exports.stackRestore(sp);   // an exception through wasm frames (a thread's timeout) leaves their stack
      return failed(e);
    } finally {
      if (!async) leave();
    }
  };
}

// dispose: the model's memory freed, the workers ended, and the jobs run in this thread from now on
function disposeNow(rt) {
  rt.disposing = false;
  freeModel(rt);
  if (!rt.threads) return;
  dropped.unregister(rt);
  rt.threads.dispose();
  rt.threads.count = rt.exports.attn_set_threads(1);
}

// ----------------------------------------------------------------------------
// upload: the family's layout and fills, driven sync or async (drive), then the cache

function upload(rt, config, fill, opts = {}) {
  if (config === null || typeof config !== 'object') fail(ErrorCode.INVALID_ARGUMENT, `upload: config must be readConfig's result; received ${describe(config)}`);
  const family = familyOf(config.family ?? 'gpt2').runtime;
  const c = family.readModelConfig(config);
  if (typeof fill !== 'function') fail(ErrorCode.INVALID_ARGUMENT, `upload: fill must be a function (kind, layer, dest, shape); received ${describe(fill)}`);
  if (opts === null || typeof opts !== 'object') fail(ErrorCode.INVALID_ARGUMENT, `upload: options must be an object like { maxPositions }; received ${describe(opts)}`);
  const S = opts.maxPositions ?? c.n_positions;
  if (!Number.isInteger(S) || S < 1 || S > c.n_positions) fail(ErrorCode.INVALID_ARGUMENT, `upload: maxPositions must be an integer in [1, n_positions = ${c.n_positions}]; received ${describe(S)}`);
  const { reserve: given, tensors } = opts;
  argumentsRead(rt, 'upload');
  freeModel(rt);
  const first = given ?? Math.min(S, FIRST_CACHE);
  if (!Number.isInteger(first) || first < 1 || first > S) fail(ErrorCode.INVALID_ARGUMENT, `upload: reserve must be an integer in [1, maxPositions = ${S}]; received ${describe(first)}`);
  const model = { family, config: c, S, first, cfg: 0, params: null, cache: 0, capacity: 0 };
  rt.model = model;   // from here, freeModel undoes whatever part was made
  const fail_ = (e) => { freeModel(rt); rt.busy = false; throw e instanceof AttentionError ? e : asError(e, 'upload: fill failed'); };
  try {
    model.cfg = family.writeConfig(rt.mem, c);
    return drive(uploadSteps(rt, model, fill, tensors), fail_);
  } catch (e) {
    return fail_(e);
  }
}

function* uploadSteps(rt, model, fill, tensors) {
  rt.busy = true;
  try {
    model.params = yield* model.family.upload(rt, model, fill, tensors);
  } finally {
    rt.busy = false;
  }
  model.family.prepare?.(rt, model);
  if (model.family.c.cacheSize) growCache(rt, model, model.first);
  else model.cacheBytes = 0;   // an encoder: no KV cache
  return { parameters: model.params.count, bytes: model.params.bytes + model.cacheBytes };
}

// Runs a generator that yields the results of fills: on at once while they are values, on after
// each when they are promises (then the result is a promise). Any error goes to onError.
function drive(steps, onError) {
  let r;
  try {
    r = steps.next();
    while (!r.done && typeof r.value?.then !== 'function') r = steps.next(r.value);
  } catch (e) {
    return onError(e);
  }
  if (r.done) return r.value;
  return (async () => {
    try {
      while (!r.done) r = steps.next(await r.value);
      return r.value;
    } catch (e) {
      try { steps.return(); } catch { /* the generator's own cleanup failed: the first error wins */ }
      return onError(e);
    }
  })();
}

// the cache to hold `positions` (at least), keeping what it holds
function growCache(rt, model, positions) {
  const { mem, exports } = rt, c = model.config, f = model.family;
  if (model.capacity >= positions) return;
  const S = Math.min(model.S, Math.max(positions, model.capacity * 2));
  const bytes = exports[f.c.cacheSize](model.cfg, S) >>> 0;
  if (bytes === 0) fail(ErrorCode.TOO_LARGE, `a KV cache of ${S} positions does not fit in wasm32's 4 GiB`);
  const cache = reserve(mem, bytes, () => `a KV cache of ${S} positions`);
  if (model.cache) {
    const { blocks, d } = f.cacheShape(c);
    exports.attn_cache_move(cache, S, model.cache, model.capacity, blocks, d, rt.length);
    mem.free(model.cache);
  }
  Object.assign(model, { cache, capacity: S, cacheBytes: bytes });
}

// After a call's arguments are read (each once, copied: what a getter does later cannot reach the
// call) and before wasm memory is touched: a dispose from one of those getters fails the call here.
function argumentsRead(rt, name) {
  if (rt.disposing) fail(ErrorCode.INVALID_ARGUMENT, `${name}: the runtime was disposed while the arguments were read`);
}

// result, with the maps asked for (heads: { count, slots }) read out of wasm memory beside it:
// attention { data, shape: [heads, T, m], slots }
function withMaps(mem, result, heads, patt, T, m) {
  if (heads) result.attention = { data: readMatrix(mem, patt, heads.count * T, m).data, shape: [heads.count, T, m], slots: heads.slots };
  return result;
}

function freeModel(rt) {
  dropKept(rt);
  const m = rt.model;
  rt.model = null;
  rt.length = 0;
  if (!m) return;
  if (m.cache) rt.mem.free(m.cache);
  m.params?.free();
  if (m.cfg) rt.mem.free(m.cfg);
}

// ----------------------------------------------------------------------------
// forward

const FORWARD_OPTIONS = ['pos', 'attention', 'lastOnly', 'logits', 'heads'];

// each option read once; unknown keys refused (a typo would otherwise be silently ignored)
function readForwardOptions(rt, opts) {
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) fail(ErrorCode.INVALID_ARGUMENT, `forward: options must be an object like { pos, attention, lastOnly }; received ${describe(opts)}`);
  for (const key of Object.keys(opts)) {
    if (!FORWARD_OPTIONS.includes(key)) fail(ErrorCode.INVALID_ARGUMENT, `forward: unknown option "${String(key).slice(0, 40)}"; expected one of ${FORWARD_OPTIONS.join(', ')}`);
  }
  const { pos = 0, attention = false, lastOnly = false, logits = true, heads } = opts;
  if (!Number.isInteger(pos) || pos < 0 || pos > rt.length) {
    fail(ErrorCode.INVALID_ARGUMENT, `forward: pos must be an integer in [0, ${rt.length}] (the positions in the KV cache); received ${describe(pos)}`);
  }
  if (typeof lastOnly !== 'boolean') fail(ErrorCode.INVALID_ARGUMENT, `forward: lastOnly must be true or false; received ${describe(lastOnly)}`);
  if (typeof logits !== 'boolean') fail(ErrorCode.INVALID_ARGUMENT, `forward: logits must be true or false; received ${describe(logits)}`);
  if (heads !== undefined && heads !== false && pos !== 0) fail(ErrorCode.INVALID_ARGUMENT, `forward: heads are scored over a whole input, from position 0; received pos ${pos}`);
  return { pos, heads: readHeads(attention, rt.model.config), lastOnly, logits, scores: heads };
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

function forward(rt, ids, opts = {}, call = callHere(rt)) {
  if (!rt.model) fail(ErrorCode.INVALID_ARGUMENT, 'forward: no model: call upload(config, fill) first');
  if (rt.model.family.encoder) return encoderForward(rt, ids, opts, call);
  const { mem, exports, model } = rt, { n_layer: L, n_head: H, vocab_size: V, n_positions: P } = model.config, f = model.family.c;
  const { pos, heads, lastOnly, logits, scores } = readForwardOptions(rt, opts);
  const S = model.S, limit = S === P ? `n_positions = ${S}` : `maxPositions = ${S} (n_positions = ${P})`;
  const tokens = idsArg(ids, 'forward: ids', { max: S - pos, maxWhat: (n) => `positions ${pos} .. ${pos + n - 1} go past the model's ${limit}`, vocab: V });
  const T = tokens.length, m = pos + T, rows = !logits ? 0 : lastOnly ? 1 : T;
  const wanted = readHeadsOption(scores, T, 'forward');
  argumentsRead(rt, 'forward');
  rt.length = Math.min(rt.length, pos);   // rows from pos on are rewritten: unspecified until it succeeds
  growCache(rt, model, m);
  const wsBytes = exports[f.workspaceSize](model.cfg, T, m) >>> 0;
  if (wsBytes === 0) fail(ErrorCode.TOO_LARGE, `forward: ${T} tokens over ${m} positions need more than wasm32's 4 GiB`);
  const plan = keepBefore(rt, wanted, T, m, null);
  const attFloats = heads ? heads.count * T * m : 0;
  const block = allocate(mem, [T, heads ? L * H : 0, rows * V, attFloats, Math.ceil(wsBytes / 4), ...(plan ? plan.counts : [])], 0,
    () => (heads ? `forward's attention weights (${heads.count} heads × ${T} × ${m}) and logits` : `forward's logits (${rows}, ${V})`));
  const [pids, pslots, plogits, patt, pws, ...pkeep] = block.offsets;
  return settle(() => {
    new Int32Array(mem.memory.buffer, pids, T).set(tokens);
    if (heads) new Int32Array(mem.memory.buffer, pslots, L * H).set(heads.slots);
    const keep = plan ? writeKeepStruct(mem, plan, pkeep) : 0;
    return call(f.forward, [rows ? plogits : 0, heads ? patt : 0, heads ? pslots : 0, keep, model.cache, pws, model.cfg,
      model.params.pointer, pids, T, pos, model.capacity, lastOnly ? LAST_ONLY : 0]);
  }, (status) => {
    if (status !== ATTN_OK) model.family.forwardFailed?.(rt, model, status);
    checkStatus(mem, status, 'forward', [], []);
    rt.length = m;
    const result = withMaps(mem, { logits: rows ? readMatrix(mem, plogits, rows, V) : null }, heads, patt, T, m);
    if (plan) result.heads = keepAfter(rt, plan, pkeep[0]);
    return result;
  }, () => { if (plan) dropKept(rt); }, () => release(mem, block));
}

// ----------------------------------------------------------------------------
// an encoder's forward (BERT): the whole text at once, no cache, every token seeing every other

const ENCODER_OPTIONS = ['attention', 'tokenTypes', 'mask', 'heads'];

function readEncoderOptions(rt, opts, T) {
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) fail(ErrorCode.INVALID_ARGUMENT, `forward: options must be an object like { attention, tokenTypes, mask }; received ${describe(opts)}`);
  for (const key of Object.keys(opts)) {
    if (!ENCODER_OPTIONS.includes(key)) fail(ErrorCode.INVALID_ARGUMENT, `forward: unknown option "${String(key).slice(0, 40)}" for an encoder; expected one of ${ENCODER_OPTIONS.join(', ')}`);
  }
  const c = rt.model.config, { attention = false, tokenTypes, mask, heads } = opts;
  const sameLength = (n, what) => { if (n !== T) fail(ErrorCode.INVALID_ARGUMENT, `forward: ${what} has ${n} entries for ${T} ids; give one per id`); };
  const types = tokenTypes === undefined ? null : idsArg(tokenTypes, 'forward: tokenTypes', { max: T, maxWhat: (n) => `${n} entries for ${T} ids; give one per id`, vocab: c.types });
  if (types) sameLength(types.length, 'tokenTypes');
  let keep = null;
  if (mask !== undefined) {
    const m = idsArg(mask, 'forward: mask', { max: T, maxWhat: (n) => `${n} entries for ${T} ids; give one per id`, vocab: 2 });
    sameLength(m.length, 'mask');
    if (!m.includes(1)) fail(ErrorCode.INVALID_ARGUMENT, 'forward: mask is all 0: at least one token must be attended to (1 = a real token, 0 = padding)');
    keep = Uint8Array.from(m);
  }
  const real = keep ? keep.reduce((a, b) => a + b, 0) : T;
  return { heads: readHeads(attention, c), types, keep, scores: readHeadsOption(heads, real, 'forward') };
}

function encoderForward(rt, ids, opts, call) {
  const { mem, exports, model } = rt, c = model.config, { n_layer: L, n_head: H, vocab_size: V, n_positions: P, n_embd: C } = c;
  const tokens = idsArg(ids, 'forward: ids', { max: P, maxWhat: (n) => `${n} ids; the model reads at most max_position_embeddings = ${P}`, vocab: V });
  const T = tokens.length, { heads, types, keep, scores } = readEncoderOptions(rt, opts, T);
  argumentsRead(rt, 'forward');
  const width = model.hasHead ? V : C;
  const wsBytes = exports[model.family.c.workspaceSize](model.cfg, T) >>> 0;
  if (wsBytes === 0) fail(ErrorCode.TOO_LARGE, `forward: ${T} tokens need more than wasm32's 4 GiB`);
  const plan = keepBefore(rt, scores, T, T, keep);
  const block = allocate(mem, [T, T, Math.ceil(T / 4), heads ? L * H : 0, T * width, heads ? heads.count * T * T : 0, Math.ceil(wsBytes / 4),
    ...(plan ? plan.counts : [])], 0,
  () => `forward's outputs (${T}, ${width})${heads ? ` and attention weights (${heads.count} heads × ${T} × ${T})` : ''}`);
  const [pids, ptypes, pmask, pslots, pout, patt, pws, ...pkeep] = block.offsets;
  return settle(() => {
    new Int32Array(mem.memory.buffer, pids, T).set(tokens);
    if (types) new Int32Array(mem.memory.buffer, ptypes, T).set(types);
    if (keep) new Uint8Array(mem.memory.buffer, pmask, T).set(keep);
    if (heads) new Int32Array(mem.memory.buffer, pslots, L * H).set(heads.slots);
    const pkeepStruct = plan ? writeKeepStruct(mem, plan, pkeep) : 0;
    return call(model.family.c.forward, [model.hasHead ? 0 : pout, model.hasHead ? pout : 0, heads ? patt : 0, heads ? pslots : 0,
      pkeepStruct, pws, model.cfg, model.params.pointer, pids, types ? ptypes : 0, keep ? pmask : 0, T]);
  }, (status) => {
    checkStatus(mem, status, 'forward', [], []);
    const result = withMaps(mem, { [model.hasHead ? 'logits' : 'hidden']: readMatrix(mem, pout, T, width) }, heads, patt, T, T);
    if (plan) result.heads = keepAfter(rt, plan, pkeep[0]);
    return result;
  }, () => { if (plan) dropKept(rt); }, () => release(mem, block));
}
