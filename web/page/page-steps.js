// page-steps.js - the four steps of self-attention on the page's sentence (step 0: X, which the
// reader may edit; W_Q, W_K, W_V; Q, K, V; ① QKᵀ, ② ÷ √d_k, ③ softmax, ④ weights · V with its
// worked line and picture, page-step4.js), and the article's hand calculation of section 5.
// Its words: page-steps-strings.js (merged into the page's strings, T). Every number is the C
// core's (page.js computes the model; section 5 calls attn.attention here).
//
//   const steps = createStepsSection(env);
//   steps.bind(); steps.render(); steps.renderSection5(); steps.followRow(i)
// env: { $, getT(), getState(), getModel(), getAttn(), fixed, maps (page-heatmaps.js),
//        stepsStale(): the steps wait to be drawn (page-lazy.js) }.
import { toRows } from '../core/attention.js';
import { h, tok, matrixTable, cornerHeader } from './page-dom.js';
import { fixed } from './page-format.js';
import { D_MODEL } from './page-state.js';
import { createStep4 } from './page-step4.js';

// Section 5 of the episode: the Query and Key tables of the hand calculation (d_k = 4).
const S5_TOKENS = ['猫', '吃', '鱼'];
const S5_Q = [[1.0, 0.2, 0.1, 0.0], [0.3, 0.8, 0.2, 0.1], [0.1, 0.1, 0.9, 0.3]];
const S5_K = [[0.9, 0.1, 0.0, 0.2], [0.2, 0.7, 0.3, 0.0], [0.0, 0.2, 1.0, 0.1]];
const S5_ARTICLE = ['0.30', '0.42', '0.28'];

const identity = (n) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));

export function createStepsSection(env) {
  const { $, getT, getState, getModel } = env;
  const step4 = createStep4(env);
  const shapeCaption = (name, r, c) => getT().matrixShape(name, r, c);
  let s5 = null;          // section 5's context, computed once
  let followed = null;

  function render() {
    const m = getModel(), T = getT();
    const masked = m.causal ? (i, j) => j > i : null;
    renderXTable();
    const state = getState();
    $('x-status').textContent = state.x ? T.xEdited : state.input === 'embed' ? T.teach.words.xStatus(m.n, state.pe) : T.xRandom(m.n, m.seed);
    $('reset-x').hidden = !state.x;

    $('w-tables').replaceChildren(
      ...[['W<sub>Q</sub>', m.w.wq], ['W<sub>K</sub>', m.w.wk], ['W<sub>V</sub>', m.w.wv]].map(([name, w]) =>
        matrixTable(shapeCaption(name, D_MODEL, m.dk), toRows(w))));        // rows and columns numbered from 1
    $('qkv-tables').replaceChildren(
      ...[['Q', m.q], ['K', m.k], ['V', toRows(m.res.v)]].map(([name, r]) =>
        matrixTable(shapeCaption(name, m.n, m.dk), r, { rowLabels: m.tokens })));
    $('scores-table').replaceChildren(matrixTable(shapeCaption('QK<sup>T</sup>', m.n, m.n), m.scores,
      { rowLabels: m.tokens, colLabels: m.tokens }));
    $('step-2-text').innerHTML = T.step2Text(m.dk, fixed(Math.sqrt(m.dk), 4)) + (m.causal ? ' ' + T.step2Causal : '');
    $('scaled-table').replaceChildren(matrixTable(shapeCaption(`QK<sup>T</sup> ÷ √${m.dk}`, m.n, m.n), m.scaled,
      { rowLabels: m.tokens, colLabels: m.tokens, masked }));
    $('weights-table').replaceChildren(matrixTable(shapeCaption('softmax', m.n, m.n), m.weights, {
      rowLabels: m.tokens, colLabels: m.tokens, masked, maskText: '0', follow: true,
      extraCol: { label: T.rowSum, values: m.weights.map((r) => r.reduce((a, b) => a + b, 0)) },
    }));
    $('output-table').replaceChildren(matrixTable(shapeCaption(T.outputName, m.n, m.dk), m.output,
      { rowLabels: m.tokens, follow: true }));
    followRow(env.maps.active.main.row, true);
  }

  /**
   * Step 4's worked line and the highlighted rows follow the active row of the main heatmap; not
   * drawn while the steps wait to be drawn (render calls it), nor again for the same row of
   * the same model (a new temperature redraws the hero only).
   */
  function followRow(i, force = false) {
    const m = getModel(), T = getT();
    if (!m || i >= m.n || env.stepsStale()) return;
    if (!force && followed?.m === m && followed.i === i) return;
    followed = { m, i };
    const [a, b] = T.step4Example;
    const parts = [a, tok(m.tokens[i]), b];
    let first = true;
    m.weights[i].forEach((w, j) => {
      if (m.causal && j > i) return;
      if (!first) parts.push(' + ');
      first = false;
      parts.push(h('b', {}, fixed(w, 4)), ' × V[', tok(m.tokens[j]), ']');
    });
    parts.push(h('span', { class: 'muted' }, T.step4Follow));
    $('step-4-example').replaceChildren(...parts);
    for (const tr of document.querySelectorAll('table.follow tbody tr')) tr.classList.toggle('on', Number(tr.dataset.row) === i);
    step4.render(i);                                                               // page-step4.js
  }

  function renderXTable() {
    const m = getModel(), T = getT();
    const box = $('x-table');
    const key = JSON.stringify(m.tokens) + getState().lang;
    const existing = box.querySelector('table');
    if (existing && box.dataset.key === key) {
      // same shape: update the values in place, so that focus and the caret stay where they are
      for (const input of box.querySelectorAll('input')) {
        const i = Number(input.dataset.row), j = Number(input.dataset.col);
        if (input.getAttribute('aria-invalid') === 'true' && document.activeElement === input) continue;
        input.value = fixed(m.x[i][j], 4);
        input.removeAttribute('aria-invalid');
      }
      return;
    }
    box.dataset.key = key;
    box.replaceChildren(matrixTable(shapeCaption('X', m.n, D_MODEL), m.x, {
      rowLabels: m.tokens,
      cell: (i, j, v) => h('input', {
        type: 'text', inputmode: 'decimal', autocomplete: 'off', spellcheck: 'false',
        value: fixed(v, 4), 'data-row': i, 'data-col': j, 'aria-label': `${m.tokens[i]} · ${T.xCellLabel(i, j)}`,
      }),
    }));
  }

  return {
    /** The pointer and the keys of step ④'s picture and formula bar; section 5's numbers, once the core is there. */
    bind() { step4.bind(); s5 = computeSection5(env.getAttn()); },
    render, renderSection5: () => renderSection5(env, s5), followRow,
  };
}

/** Section 5's Q and K, given to the core as they are (V = I, so the output is the weights). */
function computeSection5(attn) {
  const r = attn.attention({ q: S5_Q, k: S5_K, v: identity(3) }, { weights: true });
  const f = (m) => m.map((row) => row.map(Math.fround));       // what the core computed with
  return {
    tokens: S5_TOKENS, n: 3, dk: 4, causal: false, scale: 0.5,
    q: f(S5_Q), k: f(S5_K), scores: null, scaled: null,
    weights: toRows(r.weights), res: r,
  };
}

function renderSection5(env, ctx) {
  const { $ } = env, T = env.getT();
  $('s5-tables').replaceChildren(
    matrixTable('Query', S5_Q, { rowLabels: S5_TOKENS, decimals: 1 }),
    matrixTable('Key', S5_K, { rowLabels: S5_TOKENS, decimals: 1 }));
  env.maps.draw('s5', $('s5-heatmap'), ctx, T.heatmapTitle5);
  const row = ctx.weights[1].map((w) => fixed(w, 4));
  const table = h('table', { class: 'matrix compare' },
    h('caption', {}, T.sec5Row),
    h('thead', {}, h('tr', {}, cornerHeader(), ...S5_TOKENS.map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {},
      h('tr', {}, h('th', { scope: 'row' }, T.sec5Article), ...S5_ARTICLE.map((v) => h('td', { class: 'article' }, v))),
      h('tr', { class: 'true' }, h('th', { scope: 'row' }, T.sec5True), ...row.map((v) => h('td', {}, v)))));
  $('s5-compare').replaceChildren(h('div', { class: 'table-scroll' }, table));
  $('s5-note').innerHTML = T.sec5Note(...row);                                   // numbers only
}
