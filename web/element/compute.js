// compute.js - the element's numbers: the core (and, for x with seed, torch-rng.js) loaded, then one
// computation whose result is the attention-computed event's detail.
import { AttentionError } from '../core/attention.js';
import { createSmallAttention } from '../core/load.js';
import { isList } from '../heatmap/read.js';
import { Problem, bad } from './parse.js';

/** The core, and torch-rng.js when W_Q, W_K, W_V are drawn from a seed; a Problem when they cannot load. */
export async function loadCore(input) {
  if (typeof WebAssembly !== 'object') throw new Problem('wasm', 'WebAssembly is not defined in this browser or page');
  let rng = null;
  if (input.x !== undefined && input.wq === undefined) {
    try { rng = await import('../rng/torch-rng.js'); } catch (e) { throw new Problem('rng', `could not load torch-rng.js: ${e.message}`); }
  }
  let attn;
  // the small build (-Oz, the row path alone): every heatmap asks for the weights, which only the
  // row path computes; the one-file embed carries the same build
  try { attn = await createSmallAttention(); } catch (e) {
    // CSP without 'wasm-unsafe-eval': Chromium throws a CompileError naming it
    throw e instanceof AttentionError ? e : new Problem('wasm', e.message);
  }
  return { attn, rng };
}

/** One computation; returns the event detail: the core's matrices plus the tokens. */
export function compute(attn, rng, { tokens, q, k, v, x, wq, wk, wv, wo, seed, heads, scale, causal }) {
  const options = scale === undefined ? { causal } : { causal, scale };
  if (x !== undefined) {
    let w = { wq, wk, wv, wo };
    if (rng) {
      // As the episode's snippet draws them after torch.manual_seed(seed): X = torch.randn(n,
      // d_model) first (discarded: x is given), then nn.Linear(d_model, d_model, bias=False) for
      // W_Q, W_K, W_V and, with heads, one more for W_O; each transposed to (d_model, d_model).
      const [n, dModel] = Array.isArray(x) ? [x.length, isList(x[0]) ? x[0].length : 0] : (x?.shape ?? [0, 0]);
      if (!(n > 0 && dModel > 0)) attn.selfAttention({ x, wq: [[0]], wk: [[0]], wv: [[0]] });  // the core names the problem
      const g = rng.manualSeed(seed);
      g.randn(n, dModel);
      const linear = () => ({ data: g.linear(dModel, dModel).T, shape: [dModel, dModel] });
      w = { wq: linear(), wk: linear(), wv: linear() };
      if (heads !== undefined) w.wo = linear();
    }
    if (heads !== undefined) {
      const result = attn.multiHeadAttention({ x, ...w }, { ...options, heads });
      checkTokens(tokens, result.weights[0].shape, 'x');
      return { tokens, x: asMatrix(x), ...mapValues(w, asMatrix), ...result };
    }
    const result = attn.selfAttention({ x, wq: w.wq, wk: w.wk, wv: w.wv }, options);
    checkTokens(tokens, result.weights.shape, 'x');
    return { tokens, x: asMatrix(x), wq: asMatrix(w.wq), wk: asMatrix(w.wk), wv: asMatrix(w.wv), ...result };
  }
  // Without v the core still needs one: a zero column; no output is shown.
  const m = Array.isArray(k) ? k.length : k?.shape?.[0];
  const result = attn.attention({ q, k, v: v ?? (m > 0 ? { data: new Float32Array(m), shape: [m, 1] } : undefined) }, options);
  checkTokens(tokens, result.weights.shape, 'q');
  return v === undefined ? { tokens, q: asMatrix(q), k: asMatrix(k), weights: result.weights }
    : { tokens, q: asMatrix(q), k: asMatrix(k), v: asMatrix(v), weights: result.weights, output: result.output };
}

const mapValues = (o, f) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));

/** number[][] or { data, shape } -> { data: Float32Array, shape } (for the event detail). */
function asMatrix(m) {
  if (!Array.isArray(m)) return { data: Float32Array.from(m.data), shape: [m.shape[0], m.shape[1]] };
  return { data: Float32Array.from(m.flatMap((r) => Array.from(r))), shape: [m.length, m[0].length] };
}

/** After the core has checked the shapes: one token per row, labelling both axes. */
function checkTokens(tokens, [n, m], name) {
  const s = (c, word) => `${c} ${word}${c === 1 ? '' : 's'}`;
  if (tokens && tokens.length !== n) bad(`tokens has ${s(tokens.length, 'token')} but ${name} has ${s(n, 'row')}: give one token per row`);
  if (tokens && m !== n) bad(`tokens label both the queries and the keys, so q and k need the same number of rows; received q with ${n} and k with ${m}`);
}
