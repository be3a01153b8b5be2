// page-explain.js - the explanation of one cell of a heatmap: (a) the dot product term by term,
// (b) its scaling, (c) exp, (d) the row's sum, (e) the weight. The terms are spelled out in
// JavaScript from the Q and K the C core returned; the weight they end on is the core's.
//
//   explainCell(T, panel, ctx, i, j)   // T: the page's strings; ctx: the heatmap's context
//                                      // ({ tokens, q, k, scores?, scaled?, weights, scale, dk, ... })
import { h, tok } from './page-dom.js';
import { fixed, short, alike, factor, num } from './page-format.js';

export function explainCell(T, panel, ctx, i, j) {
  const steps = h('ol', { class: 'ex-steps' });
  const step = (label, ...value) => steps.append(h('li', {},
    h('span', { class: 'ex-k' }, ...label), h('span', { class: 'ex-v' }, ...value)));
  // the scaled score of cell (r, c): the core's, or from Q and K here
  const scaledOf = (r, c) => (ctx.scaled ? ctx.scaled[r][c] : ctx.q[r].reduce((s, q, m) => s + q * ctx.k[c][m], 0) * ctx.scale);
  const { dot, scaled } = dotAndScale(T, step, ctx, i, j, scaledOf);
  const summary = ctx.causal && j > i
    ? maskedSteps(T, step, steps, ctx.weights[i][j])
    : softmaxSteps(T, step, steps, ctx, i, j, scaledOf, { dot, scaled });
  const live = h('p', { class: 'visually-hidden', 'aria-live': 'polite' });
  panel.replaceChildren(explainHead(T, ctx, i, j), steps, live);
  // announced after the cell's own label; set after insertion so that it is read
  requestAnimationFrame(() => { live.textContent = summary; });
}

/** The cell's pair of tokens, and who looks at whom. */
function explainHead(T, ctx, i, j) {
  const E = T.ex, rowTok = ctx.tokens[i], colTok = ctx.tokens[j];
  return h('p', { class: 'ex-head' },
    ctx.label ? h('span', { class: 'ex-label' }, ctx.label) : null,
    h('span', { class: 'ex-pair' }, tok(rowTok), ' → ', tok(colTok)),
    h('span', { class: 'ex-looks' }, E.looks[0], tok(rowTok), E.looks[1], tok(colTok), E.looks[2]));
}

/** (a) the dot product, term by term (JS, from the core's Q and K), ending on the core's score; (b) its scaling. */
function dotAndScale(T, step, ctx, i, j, scaledOf) {
  const E = T.ex, qi = ctx.q[i], kj = ctx.k[j];
  const dk = qi.length;
  const terms = qi.map((q, m) => `${factor(q)}×${factor(kj[m])}`);
  const shown = dk <= 16 ? terms.join(' + ') : `${terms.slice(0, 6).join(' + ')} + … + ${terms.slice(-2).join(' + ')}`;
  const dot = ctx.scores ? ctx.scores[i][j] : qi.reduce((s, q, m) => s + q * kj[m], 0);
  const scaled = scaledOf(i, j);
  const root = Math.sqrt(ctx.dk);
  const [sDot, sScaled] = alike(dot, scaled);   // one notation for both
  step([E.dot, ' q', h('sub', {}, ctx.tokens[i]), ' · k', h('sub', {}, ctx.tokens[j])],
    h('span', { class: 'ex-terms' }, shown), dk > 16 ? E.terms(dk) : '', ' = ', h('b', {}, sDot));
  const temp = ctx.temperature ?? 1;     // page-scale.js: softmax(QKᵀ / (T·√d_k))
  if (temp !== 1) step([T.teach.explainTemp(temp)], `${sDot} ÷ (${temp}·√${ctx.dk}) = ${sDot} ÷ ${fixed(temp * root, 4)} = `, h('b', {}, sScaled));
  else step([ctx.dName === 'd_head' ? E.scaleHead : E.scale], `${sDot} ÷ √${ctx.dk} = ${sDot} ÷ ${Number.isInteger(root) ? root : fixed(root, 4)} = `,
    h('b', {}, sScaled));
  return { dot, scaled };
}

/** A masked cell: no exp, weight 0 from the core. Returns the summary to announce. */
function maskedSteps(T, step, steps, weight) {
  const E = T.ex;
  steps.append(h('li', { class: 'ex-masked' }, E.masked));
  step([E.weight], h('b', { class: 'core' }, fixed(weight, 4)), h('span', { class: 'badge' }, E.core));
  return E.summaryMasked;
}

/** (c) exp, (d) the row's sum over the keys it may see, (e) the weight (the core's). Returns the summary to announce. */
function softmaxSteps(T, step, steps, ctx, i, j, scaledOf, { dot, scaled }) {
  const E = T.ex, n = ctx.tokens.length;
  const allowed = Array.from({ length: n }, (_, c) => c).filter((c) => !(ctx.causal && c > i));
  const row = allowed.map((c) => scaledOf(i, c));
  const m = Math.max(...row);
  const shift = m > 60 ? m : 0;                  // e^x overflows float64 near x = 709
  const ex = row.map((s) => Math.exp(s - shift));
  const sum = ex.reduce((a, b) => a + b, 0);
  const mine = ex[allowed.indexOf(j)];
  if (shift) steps.append(h('li', { class: 'ex-note' }, E.stable(short(shift))));
  step([E.exp], shift ? `e^(${short(scaled)} − m)` : h('span', {}, 'e', h('sup', {}, short(scaled))), ' = ', h('b', {}, num(mine)));
  const parts = [];
  ex.forEach((v, p) => {
    if (p) parts.push(' + ');
    parts.push(allowed[p] === j ? h('u', {}, num(v)) : num(v));
  });
  step([E.sum, allowed.length < n ? E.maskedPart : ''], ...parts, ' = ', h('b', {}, num(sum)));
  const weight = ctx.weights[i][j];
  step([E.weight], `${num(mine)} ÷ ${num(sum)} = `, h('b', { class: 'core' }, fixed(weight, 4)), h('span', { class: 'badge' }, E.core));
  return E.summary(...alike(dot, scaled), fixed(weight, 4));   // as (a) and (b) print them
}
