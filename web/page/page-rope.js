// page-rope.js - RoPE on the page (issue 24): the position encoding of LLaMA, Qwen2 and Qwen3,
// the models the runtime serves, after multi-head attention.
//
// The section's numbers, all from the C core:
//   X = E[token]: page-pe.js's embedding (the word's identity, the same vector wherever it stands;
//       no additive PE: RoPE puts the position into q and k instead)
//   Q = X·W_Q, K = X·W_K: the page's seeded weights (torch.manual_seed(seed), d_k from the page),
//       projected by attn.selfAttention
//   Q', K' = attn.rope(Q), attn.rope(K) at positions offset .. offset + n - 1, base ROPE_BASE:
//       pair i = (q[i], q[i + d/2]) of the token at position p turns by the angle p·θ_i,
//       θ_i = base^(-2i/d) (rotate-half, as Hugging Face's LLaMA applies it)
//   the map softmax(Q'·K'ᵀ/√d_k), causal off: attn.attention on the rotated q and k
// tests/golden/make_rope.py computes the same in PyTorch (rope.json, "page" cases).
//
// What the section shows: one token's pairs before and after the turn; the sentence at positions
// 0..n-1 and moved one place (1..n) giving the same map (the score of i and j depends on j - i
// only); and the sentence beside its reverse (猫吃鱼 / 鱼吃猫), where the same word's row changes
// because the positions changed while the words did not.
//
// Pure parts (no DOM, testable in Node): ropeModel, focusRow, rowByWord, largestGap.
// DOM part: createRopeSection(env), with render() computing everything before it touches the DOM.
import { toRows } from '../core/attention.js';
import { fixed } from '../heatmap/text.js';
import { inputWeights, reversed, titledMap, drawTitledMap, boxWidths } from './page-pe.js';
import { sharedScale, sharedScaleNote } from './page-scale.js';          // issue 39 P7
import * as WORDS from './page-rope-strings.js';

/** The base of the section: LLaMA 2's rope_theta (Qwen2 uses 1e6, LLaMA 3 500000). */
export const ROPE_BASE = 10000;

/** A sentence as the page writes it: Chinese characters run together, other tokens with spaces. */
export const sentence = (ts) => (ts.every((t) => /^\p{Script=Han}+$/u.test(t)) ? ts.join('') : ts.join(' '));

/**
 * The section's numbers for { tokens, seed, dk }, RoPE at positions offset .. offset + n - 1.
 * -> { tokens, base, offset, e, q, k, qr, kr, theta, weights, plain } (number[][] but theta:
 * Float32Array), plain: the map without RoPE.
 */
export function ropeModel(attn, { tokens, seed, dk }, { base = ROPE_BASE, offset = 0 } = {}) {
  const w = inputWeights({ tokens, seed, dk, input: 'embed', pe: false });
  const sa = attn.selfAttention({ x: w.x, wq: w.wq, wk: w.wk, wv: w.wv });
  const rq = attn.rope({ x: sa.q }, { base, offset }), rk = attn.rope({ x: sa.k }, { base, offset });
  const { weights } = attn.attention({ q: rq.output, k: rk.output, v: sa.v });
  return {
    tokens, base, offset, e: w.e, q: toRows(sa.q), k: toRows(sa.k), qr: toRows(rq.output), kr: toRows(rk.output),
    theta: rq.theta, weights: toRows(weights), plain: toRows(sa.weights),
  };
}

/** The row the section follows: 吃 when the sentence has it, else the middle token. */
export const focusRow = (tokens) => (tokens.includes('吃') ? tokens.indexOf('吃') : Math.floor((tokens.length - 1) / 2));

/** Row i of map a (sentence tokens) and the same word's row of map b (the reversed sentence), both in a's word order. */
export function rowByWord(a, b, i) {
  const n = a.length;
  return { a: a[i], b: a[i].map((_, j) => b[n - 1 - i][n - 1 - j]) };
}

/** The largest |a[i][j] - b[i][j]|. */
export function largestGap(a, b) {
  let gap = 0;
  a.forEach((row, i) => row.forEach((v, j) => { gap = Math.max(gap, Math.abs(v - b[i][j])); }));
  return gap;
}

const gapText = (g) => (g === 0 ? '0' : g.toExponential(1));

// ------------------------------------------------------------------------------------------------
// the section (DOM)

/**
 * env: { $, h, matrixTable, getState(), getT(), getAttn() } (page.js's helpers; state: tokens, seed, dk, lang, colour).
 * Returns { bind(), render() }: render() draws from the page's current state and language; it
 * computes everything first, so when the core throws nothing has changed.
 */
export function createRopeSection(env) {
  let last = null;
  return { bind: () => bind(env), render: () => { last = render(env); return last; }, update: () => { last = render(env); return last; }, lastResult: () => last };
}

function bind(env) {
  const { $, h } = env;
  const box = $('rope');
  box.setAttribute('aria-labelledby', 'rope-title');
  // titles that wrap; under the pair, the colours of its maps (issue 39 P7)
  const pair = (id) => [h('div', { class: 'words-pair' }, titledMap(h, `${id}-a`), titledMap(h, `${id}-b`)),
    h('p', { id: `${id}-scale`, class: 'note map-scale' })];
  box.replaceChildren(
    h('p', { id: 'rope-kicker', class: 'preview' }),
    h('h2', { id: 'rope-title' }), h('p', { id: 'rope-text' }), h('p', { id: 'rope-setup', class: 'note' }),
    h('h3', { id: 'rope-pairs-title' }), h('p', { id: 'rope-pairs-text' }),
    h('div', { id: 'rope-pairs', class: 'tables' }),
    h('h3', { id: 'rope-shift-title' }), h('p', { id: 'rope-shift-text' }), ...pair('rope-shift'),
    h('p', { id: 'rope-shift-verdict', class: 'worked', 'aria-live': 'polite' }),
    h('h3', { id: 'rope-order-title' }), h('p', { id: 'rope-order-text' }), ...pair('rope-order'),
    h('p', { id: 'rope-order-verdict', class: 'worked', 'aria-live': 'polite' }));
}

function render(env) {
  const { $, h, matrixTable } = env;
  const state = env.getState(), attn = env.getAttn(), W = WORDS[state.lang] ?? WORDS.zh, T = env.getT();
  const widths = boxWidths($, ['rope-shift-a', 'rope-shift-b', 'rope-order-a', 'rope-order-b']);
  const { tokens, seed, dk } = state, n = tokens.length;
  // every number first
  const A = ropeModel(attn, { tokens, seed, dk });
  const S = ropeModel(attn, { tokens, seed, dk }, { offset: 1 });
  const rev = reversed(tokens), B = ropeModel(attn, { tokens: rev.tokens, seed, dk });
  const i = focusRow(tokens), half = dk / 2;
  const shiftGap = largestGap(A.weights, S.weights);
  const withRope = rowByWord(A.weights, B.weights, i), without = rowByWord(A.plain, B.plain, i);
  const orderGap = Math.max(...withRope.a.map((v, j) => Math.abs(v - withRope.b[j])));
  const plainGap = Math.max(...without.a.map((v, j) => Math.abs(v - without.b[j])));

  $('rope-kicker').textContent = W.kicker;
  $('rope-title').textContent = W.title;
  $('rope-text').innerHTML = W.text;                                           // trusted string
  $('rope-setup').textContent = W.setup(ROPE_BASE, seed, dk, half);

  // one token's q, pair by pair
  $('rope-pairs-title').textContent = W.pairsTitle;
  $('rope-pairs-text').innerHTML = W.pairsText(i);                            // trusted; the token goes in as text
  $('rope-pairs-text').querySelector('.tok').textContent = tokens[i];
  const rows = Array.from({ length: half }, (_, p) => [A.q[i][p], A.q[i][p + half], A.theta[p], i * A.theta[p], A.qr[i][p], A.qr[i][p + half]]);
  const table = matrixTable(W.pairsCaption(i, dk), rows, { colLabels: W.pairCols });         // pairs numbered from 1, matrixTable's default
  table.firstElementChild.dataset.row = String(i);
  $('rope-pairs').replaceChildren(table);

  // the four maps share the top map's colour rule and one range (issue 39 P7)
  const scale = sharedScale(state, [A.weights, S.weights, B.weights].map((rows) => ({ rows })));
  for (const id of ['rope-shift-scale', 'rope-order-scale']) $(id).textContent = sharedScaleNote(T, scale);
  const draw = (id, labels, m, title) => drawTitledMap(T, $(id), m, {
    rowLabels: labels, colLabels: labels, lang: state.lang, idPrefix: id, legend: false,
    decimals: n <= 6 ? 2 : 1, title, ...scale.options,
  }, widths[id]);
  // the same sentence, moved one place
  $('rope-shift-title').textContent = W.shiftTitle;
  $('rope-shift-text').innerHTML = W.shiftText;
  draw('rope-shift-a', tokens, A.weights, W.positions(0, n - 1));
  draw('rope-shift-b', tokens, S.weights, W.positions(1, n));
  $('rope-shift-a-cap').textContent = W.shiftCaptions[0];
  $('rope-shift-b-cap').textContent = W.shiftCaptions[1];
  const sv = $('rope-shift-verdict');
  sv.dataset.gap = String(shiftGap);
  sv.textContent = W.shiftVerdict(gapText(shiftGap));

  // the sentence beside its reverse
  $('rope-order-title').textContent = W.orderTitle;
  $('rope-order-text').innerHTML = W.orderText;
  draw('rope-order-a', tokens, A.weights, sentence(tokens));
  draw('rope-order-b', rev.tokens, B.weights, sentence(rev.tokens));
  $('rope-order-a-cap').textContent = W.orderCaption(sentence(tokens));
  $('rope-order-b-cap').textContent = W.orderCaption(sentence(rev.tokens));
  const ov = $('rope-order-verdict');
  Object.assign(ov.dataset, { row: String(i), gap: String(orderGap), plainGap: String(plainGap) });
  const tok = (t) => h('span', { class: 'tok' }, t);
  const line = (j) => h('span', { class: 'rope-line', 'data-col': j },
    tok(tokens[i]), ' → ', tok(tokens[j]), `: ${fixed(withRope.a[j], 4)} / ${fixed(withRope.b[j], 4)}`,
    h('span', { class: 'muted' }, ` ${W.without(fixed(without.a[j], 4))}`));
  ov.replaceChildren(
    ...W.orderVerdict.map((p) => (p === 'A' ? tok(sentence(tokens)) : p === 'B' ? tok(sentence(rev.tokens)) : p === 'ROW' ? tok(tokens[i]) : p)),
    ...tokens.flatMap((_, j) => [h('br'), line(j)]),
    h('br'), W.orderGap(fixed(orderGap, 4), gapText(plainGap)));
  return { A, S, B, row: i, shiftGap, orderGap, plainGap, withRope, without };
}
