// heads.js - forward's `heads` (issue 37): every head's scores computed in C without its map
// (c_src/heads.c, attention.h's attn_heads_keep), and one head's map again on demand from what the
// forward kept (each head's rotated queries; the keys from the decoder's KV cache, or kept for an
// encoder). The runtime (runtime.js) calls keepBefore and keepAfter around its forward; model.js
// and encoder.js read the options (readHeadsOption) and shape the result (headsResult).
//
//   model.forward(ids, { heads: true })              -> result.heads { layers, heads, sink, previous, self,
//                                                       next, entropy, distance }, result.map(layer, head)
//   model.forward(ids, { heads: { repeat: S } })     -> also induction and duplicate
//
// Each score is a Float32Array(layers · heads), [l · heads + h]; the definitions are attention.h's.
// A map is valid until the runtime's next forward, reset, upload or dispose; after that map()
// throws INVALID_ARGUMENT.
import { ErrorCode, fail, describe } from '../core/errors.js';
import { allocate, release, reserve, checkStatus, readMatrix } from '../core/memory.js';
import { settle, offThread, callHere } from './runtime-call.js';

/** The scores in attention.h's order (ATTN_SCORE_*); the last two need a repeat. */
export const SCORES = Object.freeze(['sink', 'previous', 'self', 'next', 'entropy', 'distance', 'induction', 'duplicate']);
const KEEP_WORDS = 5;   // attn_heads_keep in wasm32: scores, scratch, repeat, queries, keys

/** heads: true or { repeat: S } -> { repeat } (0: none), or null for false/undefined. n: the real tokens. */
export function readHeadsOption(heads, n, where = 'model.forward') {
  if (heads === undefined || heads === false) return null;
  if (n < 2) fail(ErrorCode.INVALID_ARGUMENT, `${where}: heads needs at least 2 tokens (scores are means over rows 1 .. n − 1); received ${n}`);
  if (heads === true) return { repeat: 0 };
  if (heads === null || typeof heads !== 'object' || Array.isArray(heads)) {
    fail(ErrorCode.INVALID_ARGUMENT, `${where}: heads must be true, false or { repeat }; received ${describe(heads)}`);
  }
  for (const key of Object.keys(heads)) {
    if (key !== 'repeat') fail(ErrorCode.INVALID_ARGUMENT, `${where}: unknown key "${String(key).slice(0, 40)}" in heads; expected repeat`);
  }
  const { repeat } = heads;
  if (repeat === undefined) return { repeat: 0 };
  if (!Number.isInteger(repeat) || repeat < 1 || repeat > n - 1) {
    fail(ErrorCode.INVALID_ARGUMENT, `${where}: heads.repeat must be an integer in [1, ${n - 1}] (the period of a repeated input of ${n} tokens); received ${describe(repeat)}`);
  }
  return { repeat };
}

// a family's head shape: query heads H, kv heads G, head width d
function shapeOf(c) {
  const H = c.n_head, G = c.kvHeads ?? H, d = c.headDim ?? c.n_embd / H;
  return { L: c.n_layer, H, G, d };
}

/** Frees what the last forward kept: its maps are gone from here on. */
export function dropKept(rt) {
  const k = rt.kept;
  rt.kept = null;
  rt.generation = (rt.generation ?? 0) + 1;
  if (k) rt.mem.free(k.base);
}

/**
 * Before a forward of T tokens over m keys with heads (runtime.js): what the C keeps beyond the
 * call (queries, an encoder's keys and key mask) reserved, and the floats of the call's own
 * buffers: [scores, scratch, keep struct]. keyMask: an encoder's Uint8Array or null.
 */
export function keepBefore(rt, heads, T, m, keyMask) {
  dropKept(rt);
  if (!heads) return null;
  const { mem, exports, model } = rt, { L, H, G, d } = shapeOf(model.config), encoder = !model.family.c.cacheSize;
  const scratch = exports.attn_heads_keep_floats(T, m, H) >>> 0;
  if (scratch === 0) fail(ErrorCode.TOO_LARGE, `forward: the heads' scores of ${T} tokens need more than wasm32's 4 GiB`);
  const q = L * H * T * d, k = encoder ? L * G * m * d : 0;
  const bytes = 4 * (q + k) + 16 + (encoder ? m : 0);
  const base = reserve(mem, bytes, () => `forward's heads (each head's queries${encoder ? ' and keys' : ''}, ${L} layers × ${H} heads × ${T} tokens × ${d}, kept for map)`);
  const kept = { base, queries: base, keys: encoder ? base + 4 * q : 0, mask: 0, T, m, generation: rt.generation };
  if (encoder && keyMask) {
    kept.mask = base + 4 * (q + k);
    new Uint8Array(mem.memory.buffer, kept.mask, m).set(keyMask);
  }
  rt.kept = kept;
  return { counts: [L * H * SCORES.length, scratch, KEEP_WORDS], repeat: heads.repeat, kept };
}

// the attn_heads_keep struct at `at`
function writeKeep(mem, at, { scores = 0, scratch = 0, repeat = 0, queries, keys }) {
  new Int32Array(mem.memory.buffer, at, KEEP_WORDS).set([scores, scratch, repeat, queries, keys]);
}

/** The keep struct for the forward, in the call's block: offsets [scores, scratch, struct]. */
export function writeKeepStruct(mem, plan, [scores, scratch, at]) {
  writeKeep(mem, at, { scores, scratch, repeat: plan.repeat, queries: plan.kept.queries, keys: plan.kept.keys });
  return at;
}

/** After the forward: { scores: Float32Array(L·H·8) (a copy), repeat, map(l, h), mapAsync(l, h) }. */
export function keepAfter(rt, plan, scoresAt) {
  const { L, H } = shapeOf(rt.model.config);
  const scores = readMatrix(rt.mem, scoresAt, L * H, SCORES.length).data;
  const map = (l, h) => {
    if (rt.offCall) fail(ErrorCode.INVALID_ARGUMENT, 'map: the model is running a forwardAsync or mapAsync off this thread; await it first');
    return headMap(rt, plan.kept, l, h);
  };
  // off this thread as forwardAsync is (runtime.js); a call of the runtime, which a dispose waits for
  const mapAsync = rt.guard('mapAsync', (l, h) => offThread(rt, (call) => headMap(rt, plan.kept, l, h, call)));
  return { scores, repeat: plan.repeat, map, mapAsync };
}

// one head's map (T, m) again: attn_heads_map over the kept queries and the keys
function headMap(rt, kept, l, h, call = callHere(rt)) {
  const { L, H, G, d } = shapeOf(rt.model?.config ?? { n_layer: 0, n_head: 1 });
  if (!rt.model || rt.kept !== kept || kept.generation !== rt.generation) {
    fail(ErrorCode.INVALID_ARGUMENT, 'map: this forward\'s heads are gone: the model ran another forward, or was reset or disposed, since (call map before the next forward)');
  }
  for (const [v, what, n] of [[l, 'layer', L], [h, 'head', H]]) {
    if (!Number.isInteger(v) || v < 0 || v >= n) fail(ErrorCode.INVALID_ARGUMENT, `map: ${what} must be an integer in [0, ${n}); received ${describe(v)}`);
  }
  const { mem, exports, model } = rt, { T, m } = kept;
  const ws = exports.attn_heads_map_floats(T, m, d) >>> 0;
  const block = allocate(mem, [T * m, ws, KEEP_WORDS], 0, () => `map's weights (${T} × ${m})`);
  const [pw, pws, pkeep] = block.offsets;
  return settle(() => {
    writeKeep(mem, pkeep, { queries: kept.queries, keys: kept.keys });
    const cache = model.family.c.cacheSize ? model.cache : 0;
    return call('attn_heads_map', [pw, pws, pkeep, cache, kept.mask, l, h, T, m, model.capacity || m, H, G, d]);
  }, (status) => {
    checkStatus(mem, status, 'map', [], []);
    return readMatrix(mem, pw, T, m);
  }, () => {}, () => release(mem, block));
}

/** result.heads for the API: { layers, heads, sink, …, induction?, duplicate? }. */
export function headsResult({ scores, repeat }, config) {
  const L = config.n_layer, H = config.n_head, out = { layers: L, heads: H };
  const names = repeat ? SCORES : SCORES.slice(0, 6);
  names.forEach((name, s) => {
    const a = new Float32Array(L * H);
    for (let i = 0; i < L * H; i++) a[i] = scores[i * SCORES.length + s];
    out[name] = a;
  });
  return out;
}
