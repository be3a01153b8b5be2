// page.js - the interactive page (index.html) for EP05, self-attention on 猫吃鱼.
//
// Bundled by scripts/build-page.js into web/dist/page.js, a classic script (an IIFE), because a
// page opened from disk (file://) cannot import ES modules. The wasm is inlined in
// attention-wasm.js, so nothing is fetched: the page works offline and from disk.
//
// Every number shown comes from the C core (attn.selfAttention / attn.attention). JavaScript only
// formats them, and spells out the arithmetic of one cell (the dot-product terms, exp, row sum)
// from the Q and K the core returned; the weight it ends on is the core's.
//
// Safety: tokens are user input (and come from the URL). They reach the DOM only through
// textContent / setAttribute, or through renderHeatmap, which escapes them. innerHTML takes only
// the trusted strings of web/strings/page.js and the renderer's SVG, which the page inserts as it is
// (roles, tab stop and focus ring are renderHeatmap options).
import { createAttention, AttentionError, toRows } from '../core/attention.js';
import { renderHeatmap } from '../heatmap/heatmap.js';
import { gridKey } from '../heatmap/grid-keys.js';
import { markCell } from './page-grid.js';                    // issue 24
import { manualSeed } from '../rng/torch-rng.js';
import * as STRINGS from '../strings/page.js';
import {
  D_MODEL, DK_CHOICES, defaultState, parseHash, formatHash, splitTokens, parseSeed, parseNumber, hashProblems,
} from './page-state.js';
import { fixed, short, alike, factor, num, pythonSnippet, scalingSnippet } from './page-format.js';
import { createMhaSection } from './page-mha.js';
import { createWordsSection, inputWeights } from './page-pe.js';            // issue 14
import { createStep4 } from './page-step4.js';
import { createHeatmapView, heroContext, setHtml } from './page-scale.js';
import { createTrainedSection } from './page-trained.js';              // issue 16
import { createRopeSection } from './page-rope.js';                    // issue 24
import { createCheckpointSection } from './page-checkpoint.js';
import { tableCue, revealExplanation } from './page-cues.js';          // issue 24: defects 11, 15
import { createLazy } from './page-lazy.js';                       // issue 24: paint fast

const SVG_NS = 'http://www.w3.org/2000/svg';
const SCALE_DKS = [4, 16, 64, 256, 1024];
const SCALE_N = 8;
const SCALE_SAMPLES = 64;   // draws per d_k, averaged: with 8 the trend drowned in noise (issue 14)
const FLT_MAX = 3.4028234663852886e38;
const COPY_RESET_MS = 3000; // "copied" and the like go back after this
// Section 5 of the episode: the Query and Key tables of the hand calculation (d_k = 4).
const S5_TOKENS = ['猫', '吃', '鱼'];
const S5_Q = [[1.0, 0.2, 0.1, 0.0], [0.3, 0.8, 0.2, 0.1], [0.1, 0.1, 0.9, 0.3]];
const S5_K = [[0.9, 0.1, 0.0, 0.2], [0.2, 0.7, 0.3, 0.0], [0.0, 0.2, 1.0, 0.1]];
const S5_ARTICLE = ['0.30', '0.42', '0.28'];

const $ = (id) => document.getElementById(id);

let attn;            // the C core
let state;           // { tokens, seed, dk, causal, x, lang } (page-state.js)
let T;               // STRINGS[state.lang]
let model;           // the current self-attention, see computeModel()
let s5;              // section 5, see computeSection5()
const active = { main: { row: 1, col: 0 }, s5: { row: 1, col: 0 } };
const heatmaps = {}; // key -> { ctx, container, cellSize, options }
let scalingCache = null;
let mha;             // the episode-06 section (page-mha.js)
let words, step4, view;  // issue 14: page-pe.js, page-step4.js, page-scale.js
let trained, checkpoint; // issue 16: page-trained.js, page-checkpoint.js
let rope;                // issue 24: page-rope.js
let lazy, sections;         // issue 24: the sections below the hero, drawn when needed (page-lazy.js)

// ------------------------------------------------------------------------------------------------
// small DOM helpers

/** h('td', { class: 'x' }, 'text', node): strings become text nodes, never markup. */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'html') el.innerHTML = v;          // trusted web/strings/page.js strings only
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

const tok = (s) => h('span', { class: 'tok' }, s);
const rowsOf = (m) => toRows(m);
const identity = (n) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));

// ------------------------------------------------------------------------------------------------
// computing (everything numeric goes through the C core)

function computeModel() {
  const n = state.tokens.length;
  const w = inputWeights(state);     // X = torch.randn (the article), or E[token] + PE (page-pe.js)
  const x = state.x ?? rowsOf(w.x);
  const res = attn.selfAttention({ x, wq: w.wq, wk: w.wk, wv: w.wv }, { causal: state.causal });
  return {
    tokens: [...state.tokens], n, dk: state.dk, causal: state.causal, seed: state.seed,
    x, w, res,
    q: rowsOf(res.q), k: rowsOf(res.k),
    scores: rowsOf(res.scores), scaled: rowsOf(res.scaled), weights: rowsOf(res.weights),
    output: rowsOf(res.output), scale: 1 / Math.sqrt(state.dk),
  };
}

function computeSection5() {
  const r = attn.attention({ q: S5_Q, k: S5_K, v: identity(3) }, { weights: true });
  const f = (m) => m.map((row) => row.map(Math.fround));       // what the core computed with
  return {
    tokens: S5_TOKENS, n: 3, dk: 4, causal: false, scale: 0.5,
    q: f(S5_Q), k: f(S5_K), scores: null, scaled: null,
    weights: rowsOf(r.weights), res: r,
  };
}

/**
 * The √d_k demonstration: after torch.manual_seed(seed), SCALE_SAMPLES draws of
 * q, k = torch.randn(8, d_k) twice (the first draw is the one the bars show). The core's
 * selfAttention returns the raw scores too: with X = I (8×8), W_Q = q and W_K = k we get Q = q,
 * K = k exactly, so scores = q·kᵀ, computed by the core like everything else. The standard
 * deviations pool the scores of all draws, meanMax averages the rows' largest weight over all draws.
 * A generator: it yields when a slice has taken SLICE_MS (checked after each draw), so that the
 * page computes it in slices of idle time (issue 24: in one piece it was the longest task of the
 * page's start), and returns { seed, rows }.
 */
const SLICE_MS = 8;
function* computeScaling(seed) {
  let since = performance.now();
  if (scalingCache && scalingCache.seed === seed) return scalingCache;
  const I = identity(SCALE_N);
  const meanMax = (w) => { let s = 0; for (let i = 0; i < SCALE_N; i++) s += Math.max(...w.subarray(i * SCALE_N, (i + 1) * SCALE_N)); return s; };
  const rows = [];
  for (const d of SCALE_DKS) {
    const g = manualSeed(seed);
    const scores = [], scaledScores = [];
    let maxScaled = 0, maxUnscaled = 0, first;
    for (let k = 0; k < SCALE_SAMPLES; k++) {
      if (performance.now() - since > SLICE_MS) { yield; since = performance.now(); }
      const q = { data: g.randn(SCALE_N, d), shape: [SCALE_N, d] };
      const kk = { data: g.randn(SCALE_N, d), shape: [SCALE_N, d] };
      const scaled = attn.selfAttention({ x: I, wq: q, wk: kk, wv: I });              // scale 1/√d_k
      const unscaled = attn.selfAttention({ x: I, wq: q, wk: kk, wv: I }, { scale: 1 });
      scores.push(...scaled.scores.data); scaledScores.push(...scaled.scaled.data);
      maxScaled += meanMax(scaled.weights.data); maxUnscaled += meanMax(unscaled.weights.data);
      if (k === 0) first = { wScaled: rowsOf(scaled.weights), wUnscaled: rowsOf(unscaled.weights) };
    }
    const rowsSeen = SCALE_SAMPLES * SCALE_N;
    rows.push({
      d, std: std(scores), stdScaled: std(scaledScores), ...first,
      meanMaxScaled: maxScaled / rowsSeen, meanMaxUnscaled: maxUnscaled / rowsSeen,
    });
  }
  scalingCache = { seed, rows };
  return scalingCache;
}

/** Unbiased standard deviation, as torch.std(). */
function std(data) {
  const n = data.length;
  let mean = 0;
  for (const v of data) mean += v;
  mean /= n;
  let ss = 0;
  for (const v of data) ss += (v - mean) ** 2;
  return Math.sqrt(ss / (n - 1));
}

// ------------------------------------------------------------------------------------------------
// tables

/**
 * A matrix as a compact table. caption: trusted HTML (names and shapes only).
 * opts: rowLabels, colLabels, decimals, masked(i, j), maskText, extraCol { label, values },
 * cell(i, j, v) -> Node (editable cells), follow: the table highlights the active row of `main`.
 */
function matrixTable(caption, rows, opts = {}) {
  const { rowLabels, colLabels, decimals = 4, masked, maskText = '−∞', extraCol, cell, follow } = opts;
  const nc = rows[0].length;
  const head = h('tr', {}, h('th', { class: 'corner', scope: 'col' }, ''),
    ...Array.from({ length: nc }, (_, j) => h('th', { scope: 'col' }, colLabels ? colLabels[j] : String(j))));
  if (extraCol) head.append(h('th', { scope: 'col', class: 'extra' }, extraCol.label));
  const body = rows.map((r, i) => {
    const label = rowLabels ? rowLabels[i] : String(i);
    const tr = h('tr', { 'data-row': i }, h('th', { scope: 'row', title: label }, label));
    r.forEach((v, j) => {
      if (cell) tr.append(h('td', { class: 'edit' }, cell(i, j, v)));
      else if (masked && masked(i, j)) tr.append(h('td', { class: 'masked', title: fixed(v, decimals) }, maskText));
      else tr.append(h('td', {}, fixed(v, decimals)));
    });
    if (extraCol) tr.append(h('td', { class: 'extra' }, fixed(extraCol.values[i], decimals)));
    return tr;
  });
  const table = h('table', { class: 'matrix' + (follow ? ' follow' : '') },
    h('caption', { html: caption }), h('thead', {}, head), h('tbody', {}, body));
  return h('div', { class: 'table-scroll' }, table);
}

const shapeCaption = (name, r, c) => T.matrixShape(name, r, c);

/**
 * Scrollable boxes get a tab stop (so keyboards can scroll them) only when they overflow; a
 * heatmap that scrolls gets a cue (a fade at the edge it scrolls toward, and a hint), and one
 * whose numbers would be drawn below MIN_VALUE_PX hides them (hover or focus shows a value).
 * Once per frame, and all reads before all writes, so that layout is computed once.
 */
const MIN_VALUE_PX = 10;
const TITLE_SPACE = 16 * 0.9 + 10;   // the renderer's title line (font 16, 10 above the rest), drawn here as HTML
let scrollablesQueued = false;
const scrollScopes = new Set();
/** scope: the element whose boxes may have changed (the hero alone after a temperature step), or the document. */
function updateScrollables(scope = document) {
  scrollScopes.add(scope);
  if (scrollablesQueued) return;
  scrollablesQueued = true;
  requestAnimationFrame(() => {
    scrollablesQueued = false;
    const scopes = scrollScopes.has(document) ? [document] : [...scrollScopes];
    scrollScopes.clear();
    const boxes = scopes.flatMap((s) => [...s.querySelectorAll('.table-scroll, .heatmap')]);
    const overflowing = boxes.map((el) => el.scrollWidth > el.clientWidth + 1);
    const edges = boxes.map(edgesOf);              // read here: read after the writes below, each forced a layout
    const maps = boxes.map((el) => {
      const svg = el.matches('.heatmap') && el.closest('.map') && el.querySelector('svg');
      if (!svg) return null;
      const scale = svg.getBoundingClientRect().width / Number(svg.getAttribute('width'));
      const v = svg.querySelector('.cell-value');
      return { scale, small: !v || Number(v.getAttribute('font-size')) * scale < MIN_VALUE_PX };
    });
    boxes.forEach((el, k) => {
      markScrollable(el, overflowing[k]);
      if (el.matches('.table-scroll')) tableCue(el, overflowing[k], T.tableScrolls);
      if (!maps[k]) return;
      const frame = el.closest('.map');
      frame.classList.toggle('scrolls', overflowing[k]);
      frame.classList.toggle('values-hidden', maps[k].small);
      el.style.setProperty('--svg-shift', `${-(TITLE_SPACE * maps[k].scale).toFixed(1)}px`);   // page.css: the svg's margin-top
      markEdges(el, edges[k]);
    });
  });
}

/** Which edges of a scrolling heatmap have more beyond them (page.css fades those). */
const edgesOf = (el) => ({ start: el.scrollLeft <= 1, end: el.scrollLeft + el.clientWidth >= el.scrollWidth - 1 });
function markEdges(el, e = edgesOf(el)) {
  const frame = el.closest('.map');
  if (!frame) return;
  frame.classList.toggle('at-start', e.start);
  frame.classList.toggle('at-end', e.end);
}

/**
 * The frame around a heatmap's box, made once: the title as HTML above it (it wraps where the
 * SVG's one line would be cut; page.css hides the SVG's own, which exports keep), a box for the
 * scroll fades, and the hint below.
 */
function mapFrame(container) {
  if (container.parentElement.classList.contains('map-box')) return container.parentElement.parentElement;
  const frame = h('div', { class: 'map' }, h('p', { class: 'map-title', 'aria-hidden': 'true' }));
  const box = h('div', { class: 'map-box' });
  container.before(frame);
  box.append(container);
  frame.append(box, h('p', { class: 'map-hint' }, h('span', { class: 'hint-scroll' }), h('span', { class: 'hint-values' })));
  container.addEventListener('scroll', () => markEdges(container), { passive: true });
  return frame;
}

function markScrollable(el, overflowing) {
  if (overflowing) {
    el.setAttribute('tabindex', '0');
    el.setAttribute('role', 'region');
    const cap = el.querySelector('caption, svg');
    el.setAttribute('aria-label', cap ? (cap.getAttribute('aria-label') ?? cap.textContent) : '');
  } else {
    el.removeAttribute('tabindex'); el.removeAttribute('role'); el.removeAttribute('aria-label');
  }
}

// ------------------------------------------------------------------------------------------------
// heatmaps: renderHeatmap's SVG as a keyboard- and screen-reader-navigable grid

/** Label width in em, as the renderer estimates it (CJK 1, other 0.6), capped like its labels. */
const labelEm = (s) => Math.min(10, [...s].reduce((w, c) => w + (c.codePointAt(0) > 0x2e80 ? 1 : 0.6), 0));

function cellSizeFor(width, tokens) {
  const labels = Math.max(...tokens.map(labelEm)) * 14;
  const cs = Math.floor((width - 120 - labels) / tokens.length);
  return Math.max(28, Math.min(104, cs));
}

/**
 * Draw ctx.weights into container. ctx: { tokens, weights, causal, ... }.
 * key: 'main' or 's5' (the active cell and the explanation panel belong to it).
 */
function drawHeatmap(key, container, ctx, title) {
  const n = ctx.tokens.length;
  const frame = mapFrame(container);
  // read once, before any write (after one, this read would lay the page out again: issue 24's
  // slider); the box does not depend on its content
  const width = container.clientWidth || 320;
  frame.querySelector('.map-title').textContent = title;
  frame.querySelector('.hint-scroll').textContent = T.mapScrolls;
  frame.querySelector('.hint-values').textContent = T.mapValuesHidden;
  const cellSize = cellSizeFor(width, ctx.tokens);
  const options = {
    rowLabels: ctx.tokens, colLabels: ctx.tokens, title, lang: state.lang,
    // 4 decimals where they fit (up to 9 tokens, cells of 56 px or more); on a phone 2, drawn
    // larger, rather than none (updateScrollables hides numbers that would be below 10 px)
    decimals: ctx.decimals ?? (n <= 9 && cellSize >= 56 ? 4 : 2), idPrefix: key, cellSize,
  };
  if (ctx.causal) options.masked = 'causal';
  if (ctx.legend === false) options.legend = false;          // small multiples (page-mha.js)
  if (ctx.colourScale && ctx.colourScale !== 'unit') options.colourScale = ctx.colourScale;   // page-scale.js
  const a = (active[key] ??= { row: 1, col: 0 });
  if (a.row >= n || a.col >= n) { a.row = Math.min(1, n - 1); a.col = 0; }
  // A grid of rows of cells for assistive technology (the drawn labels are repeated in each cell's
  // label, "吃 → 猫: 0.3157", so the renderer hides the text around the grid from it), one tab stop
  // on the active cell, and the focus ring that setActive moves. The renderer escapes every label.
  const svg = renderHeatmap(ctx.weights, { ...options, role: 'grid', activeCell: [a.row, a.col], focusRing: true });
  container.innerHTML = svg;
  heatmaps[key] = { ctx, container, cellSize, options };   // options: what an export draws

  // Shrink to the box, but not below 70 % (page.css): beyond that the numbers get too small, so
  // wide heatmaps (many tokens on a phone) scroll inside their box instead.
  const natural = Number(container.querySelector('svg').getAttribute('width'));
  container.style.setProperty('--svg-width', `${natural}px`);
  container.style.setProperty('--svg-min-width', `${Math.round(natural * 0.7)}px`);
  setActive(key, a.row, a.col, false);
}

/**
 * Make (i, j) the active cell of a heatmap: as the pointer or the keys move, the tab stop, the
 * focus ring and the bold row and column labels follow it (the renderer drew the first tab stop
 * and ring), and the explanation shows its arithmetic.
 */
function setActive(key, i, j, focus) {
  const hm = heatmaps[key];
  if (!hm) return;
  active[key] = { row: i, col: j };
  const { container } = hm;
  if (!markCell(container, i, j, focus)) return;      // tab stop, focus ring, bold labels (page-grid.js)

  explain(key, i, j);
  if (key === 'main') followRow(i);
}

function wireHeatmap(key, container) {
  const target = (e) => e.target.closest?.('g.cell-group');
  container.addEventListener('mouseover', (e) => {
    const g = target(e);
    if (!g) return;
    const i = Number(g.dataset.row), j = Number(g.dataset.col);
    if (active[key].row !== i || active[key].col !== j) setActive(key, i, j, false);
  });
  container.addEventListener('focusin', (e) => {
    const g = target(e);
    if (g) {
      const i = Number(g.dataset.row), j = Number(g.dataset.col);
      if (active[key].row !== i || active[key].col !== j || g.getAttribute('tabindex') !== '0') setActive(key, i, j, false);
    }
  });
  // a tap (or click) on a cell: on a narrow screen its explanation may be far below (issue 24)
  container.addEventListener('click', (e) => {
    if (target(e)) revealExplanation(explainPanel(key)?.closest('.explain'), container);
  });
  container.addEventListener('keydown', (e) => {
    const g = target(e);
    if (!g) return;
    const n = heatmaps[key].ctx.tokens.length;
    const to = gridKey(e.key, e.ctrlKey, Number(g.dataset.row), Number(g.dataset.col), n, n);
    if (!to) return;
    e.preventDefault();
    setActive(key, to.row, to.col, true);
  });
}

// ------------------------------------------------------------------------------------------------
// the explanation of one cell

const explainPanel = (key) => heatmaps[key] && (heatmaps[key].ctx.explainPanel ?? (key === 'main' ? $('main-explain') : $('s5-explain')));

function explain(key, i, j) {
  const { ctx } = heatmaps[key];
  const panel = explainPanel(key);
  const steps = h('ol', { class: 'ex-steps' });
  const step = (label, ...value) => steps.append(h('li', {},
    h('span', { class: 'ex-k' }, ...label), h('span', { class: 'ex-v' }, ...value)));
  // the scaled score of cell (r, c): the core's, or from Q and K here
  const scaledOf = (r, c) => (ctx.scaled ? ctx.scaled[r][c] : ctx.q[r].reduce((s, q, m) => s + q * ctx.k[c][m], 0) * ctx.scale);
  const { dot, scaled } = dotAndScale(step, ctx, i, j, scaledOf);
  const summary = ctx.causal && j > i
    ? maskedSteps(step, steps, ctx.weights[i][j])
    : softmaxSteps(step, steps, ctx, i, j, scaledOf, { dot, scaled });
  const live = h('p', { class: 'visually-hidden', 'aria-live': 'polite' });
  panel.replaceChildren(explainHead(ctx, i, j), steps, live);
  // announced after the cell's own label; set after insertion so that it is read
  requestAnimationFrame(() => { live.textContent = summary; });
}

/** The cell's pair of tokens, and who looks at whom. */
function explainHead(ctx, i, j) {
  const E = T.ex, rowTok = ctx.tokens[i], colTok = ctx.tokens[j];
  return h('p', { class: 'ex-head' },
    ctx.label ? h('span', { class: 'ex-label' }, ctx.label) : null,
    h('span', { class: 'ex-pair' }, tok(rowTok), ' → ', tok(colTok)),
    h('span', { class: 'ex-looks' }, E.looks[0], tok(rowTok), E.looks[1], tok(colTok), E.looks[2]));
}

/** (a) the dot product, term by term (JS, from the core's Q and K), ending on the core's score; (b) its scaling. */
function dotAndScale(step, ctx, i, j, scaledOf) {
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
function maskedSteps(step, steps, weight) {
  const E = T.ex;
  steps.append(h('li', { class: 'ex-masked' }, E.masked));
  step([E.weight], h('b', { class: 'core' }, fixed(weight, 4)), h('span', { class: 'badge' }, E.core));
  return E.summaryMasked;
}

/** (c) exp, (d) the row's sum over the keys it may see, (e) the weight (the core's). Returns the summary to announce. */
function softmaxSteps(step, steps, ctx, i, j, scaledOf, { dot, scaled }) {
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

// ------------------------------------------------------------------------------------------------
// problems with X and with the link, said in the reader's language (issue 14)

let xProblem = null;      // { source, about, tokens, kind, row, col, value, code, message }, see showXMsg
let linkProblems = [];    // hashProblems() of the link the page was opened with, until dismissed

/** What X a problem is about: when this changes (tokens, seed, d_k, mask, X), the problem is gone. */
const xKey = () => JSON.stringify([state.tokens, state.seed, state.dk, state.causal, state.x, state.input, state.pe]);

/**
 * Which value of x the core's refusal e is about, found on the page side: the first NaN or
 * infinity, the first value beyond float32, else (the result overflows) the largest value.
 */
function classifyX(x, e) {
  const base = { code: e.code, message: e.message };
  if (e.code !== 'NON_FINITE') return { ...base, kind: 'other' };
  let big = { row: 0, col: 0, value: 0 };
  for (let i = 0; i < x.length; i++) {
    for (let j = 0; j < x[i].length; j++) {
      const v = x[i][j];
      if (!Number.isFinite(v)) return { ...base, kind: 'nan', row: i, col: j };
      if (Math.abs(v) > FLT_MAX) return { ...base, kind: 'range', row: i, col: j, value: v };
      if (Math.abs(v) > Math.abs(big.value)) big = { row: i, col: j, value: v };
    }
  }
  return { ...base, kind: 'overflow', ...big };
}

/** The sentence for a problem with X, naming the row's token and the dimension, then the core's own words. */
function xProblemNodes(p, tokens) {
  const other = p.kind === 'other';
  const [a, b] = other ? T.xBad.other(p.code) : T.xBad[p.kind](p.col, fixed(p.value ?? 0, 4));
  return [a, other ? '' : tok(tokens[p.row]), b, ' ',
    h('span', { class: 'core-said' }, T.coreSaid, h('span', { lang: 'en' }, `${p.message} (${p.code})`))];
}

/** #x-msg from xProblem, in the current language; a problem about an X no longer in use is dropped. */
function showXMsg() {
  if (xProblem && xProblem.about !== xKey()) xProblem = null;
  const el = $('x-msg');
  if (!xProblem) { el.replaceChildren(); return; }
  const lead = { link: T.xLink, typed: T.xTyped, dropped: T.xDropped }[xProblem.source];
  el.replaceChildren(lead, ' ', ...xProblemNodes(xProblem, xProblem.tokens));
}

/** The note about what the link asked for and did not get; the link's own text goes in as text. */
function showLinkNote() {
  const box = $('link-note');
  box.hidden = linkProblems.length === 0;
  if (box.hidden) return;
  const L = T.linkIgnored;
  const parts = [];
  linkProblems.forEach((p, k) => {
    const pair = p.field === 't' ? L.t[p.reason](p.count) : p.field === 'x' ? L.x[p.reason](p.rows, p.count) : L[p.field];
    parts.push(k ? L.sep : '', pair[0], pair[1] ? h('span', { class: 'tok' }, p.value ?? '') : '', pair[1]);
  });
  $('link-note-text').replaceChildren(T.linkNote, ' ', ...parts, L.end);
}

// ------------------------------------------------------------------------------------------------
// rendering the page

function applyLang() {
  T = STRINGS[state.lang];
  document.documentElement.lang = T.htmlLang;
  document.title = T.docTitle;
  // index.html holds the Chinese text already: rewriting it unchanged would lay the page out anew (issue 24's first paint)
  for (const el of document.querySelectorAll('[data-i18n]')) if (el.innerHTML !== T[el.dataset.i18n]) el.innerHTML = T[el.dataset.i18n];
  for (const el of document.querySelectorAll('[data-i18n-label]')) el.setAttribute('aria-label', T[el.dataset.i18nLabel]);
  const b = $('lang');
  b.textContent = T.langButton;
  b.setAttribute('lang', T.langButtonLang);
  b.setAttribute('aria-label', T.langButtonLabel);
}

function renderHero() {
  const m = model;
  const ctx = heroContext(attn, m, state);                                    // page-scale.js
  drawHeatmap('main', $('main-heatmap'), ctx,
    state.temp === 1 ? T.heatmapTitle(m.seed, m.dk, m.causal) : T.teach.heroTitle(m.seed, m.dk, m.causal, state.temp));
  view.render(ctx);
  setHtml($('source-note'), T.sourceNote(m.seed, m.dk, Boolean(state.x), state.input === 'embed', state.pe));   // numbers only
}

function renderSteps() {
  const m = model;
  const dims = (k) => Array.from({ length: k }, (_, j) => String(j + 1));   // people count from 1 (issue 24)
  const masked = m.causal ? (i, j) => j > i : null;

  renderXTable();
  $('x-status').textContent = state.x ? T.xEdited : state.input === 'embed' ? T.teach.words.xStatus(m.n, state.pe) : T.xRandom(m.n, m.seed);
  $('reset-x').hidden = !state.x;

  $('w-tables').replaceChildren(
    ...[['W<sub>Q</sub>', m.w.wq], ['W<sub>K</sub>', m.w.wk], ['W<sub>V</sub>', m.w.wv]].map(([name, w]) =>
      matrixTable(shapeCaption(name, D_MODEL, m.dk), rowsOf(w), { rowLabels: dims(D_MODEL), colLabels: dims(m.dk) })));
  $('qkv-tables').replaceChildren(
    ...[['Q', m.q], ['K', m.k], ['V', rowsOf(m.res.v)]].map(([name, r]) =>
      matrixTable(shapeCaption(name, m.n, m.dk), r, { rowLabels: m.tokens, colLabels: dims(m.dk) })));
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
    { rowLabels: m.tokens, colLabels: dims(m.dk), follow: true }));
  followRow(active.main.row, true);
}

/**
 * Step 4's worked line and the highlighted rows follow the active row of the main heatmap; not
 * drawn while the steps wait to be drawn (renderSteps calls it), nor again for the same row of
 * the same model (a new temperature redraws the hero only).
 */
let followed = null;
function followRow(i, force = false) {
  const m = model;
  if (!m || i >= m.n || sections?.steps.stale) return;
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
  const m = model;
  const box = $('x-table');
  const key = JSON.stringify(m.tokens) + state.lang;
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
    colLabels: Array.from({ length: D_MODEL }, (_, j) => String(j + 1)),
    cell: (i, j, v) => h('input', {
      type: 'text', inputmode: 'decimal', autocomplete: 'off', spellcheck: 'false',
      value: fixed(v, 4), 'data-row': i, 'data-col': j, 'aria-label': `${m.tokens[i]} · ${T.xCellLabel(i, j)}`,
    }),
  }));
}

function renderSnippet() {
  $('snippet').textContent = pythonSnippet(state, state.lang);
}

function renderSection5() {
  const ctx = s5;
  const dims = ['1', '2', '3', '4'];
  $('s5-tables').replaceChildren(
    matrixTable('Query', S5_Q, { rowLabels: S5_TOKENS, colLabels: dims, decimals: 1 }),
    matrixTable('Key', S5_K, { rowLabels: S5_TOKENS, colLabels: dims, decimals: 1 }));
  drawHeatmap('s5', $('s5-heatmap'), ctx, T.heatmapTitle5);
  const row = ctx.weights[1].map((w) => fixed(w, 4));
  const table = h('table', { class: 'matrix compare' },
    h('caption', {}, T.sec5Row),
    h('thead', {}, h('tr', {}, h('th', { class: 'corner', scope: 'col' }, ''), ...S5_TOKENS.map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {},
      h('tr', {}, h('th', { scope: 'row' }, T.sec5Article), ...S5_ARTICLE.map((v) => h('td', { class: 'article' }, v))),
      h('tr', { class: 'true' }, h('th', { scope: 'row' }, T.sec5True), ...row.map((v) => h('td', {}, v)))));
  $('s5-compare').replaceChildren(h('div', { class: 'table-scroll' }, table));
  $('s5-note').innerHTML = T.sec5Note(...row);                                   // numbers only
}

function bars(values, label) {
  const W = 200, H = 72, bw = 21, gap = 4, top = 4;
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('width', String(W));
  svg.setAttribute('height', String(H));
  svg.setAttribute('class', 'bars');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', T.scaleBars(label, values.map((v) => fixed(v, 2)).join(', ')));
  const best = values.indexOf(Math.max(...values));
  const base = H - 2;
  let inner = `<line class="base" x1="0" x2="${W}" y1="${base}" y2="${base}"/>`;
  const even = base - (base - top) / values.length;
  inner += `<line class="even" x1="0" x2="${W}" y1="${even.toFixed(2)}" y2="${even.toFixed(2)}"/>`;
  values.forEach((v, j) => {
    const hgt = Math.max(0.5, v * (base - top));
    inner += `<rect class="${j === best ? 'bar top' : 'bar'}" x="${j * (bw + gap) + 2}" y="${(base - hgt).toFixed(2)}" width="${bw}" height="${hgt.toFixed(2)}" rx="1.5"/>`;
  });
  svg.innerHTML = inner;                                                          // numbers only
  return svg;
}

/**
 * The √d_k demo, computed in slices (computeScaling yields): returns the next slice for
 * page-lazy.js to run in idle time, until it is drawn. The seed and language are read when it is drawn.
 */
function renderScaling() {
  const work = computeScaling(state.seed);
  const slice = () => {
    const r = work.next();
    if (!r.done) return slice;
    drawScaling(r.value.rows);
    return undefined;
  };
  return slice();
}

function drawScaling(rows) {
  const [hd, hs, hw1, hw2] = T.scaleHead;
  const grid = $('scale-grid');
  const head = h('div', { class: 'scale-row scale-head', 'aria-hidden': 'true' },
    h('span', {}, hd), h('span', {}, hs), h('span', {}, hw1), h('span', {}, hw2));
  const list = rows.map((r) => {
    const cellW = (w, mean, label) => h('div', { class: 'scale-w' },
      h('span', { class: 'scale-label' }, label),
      bars(w[0], label),
      h('span', { class: 'scale-max', 'data-mean-max': mean }, T.scaleMax(fixed(Math.max(...w[0]), 2), fixed(mean, 2))));
    return h('div', { class: 'scale-row' },
      h('span', { class: 'scale-dk' }, h('span', { class: 'scale-label' }, hd + ' = '), String(r.d)),
      h('span', { class: 'scale-std' }, h('span', { class: 'scale-label' }, hs + ' '),
        h('b', {}, T.scaleStd(fixed(r.std, 2), fixed(Math.sqrt(r.d), 2))),
        h('span', { class: 'muted' }, T.scaleAfter(fixed(r.stdScaled, 2)))),
      cellW(r.wScaled, r.meanMaxScaled, hw1), cellW(r.wUnscaled, r.meanMaxUnscaled, hw2));
  });
  grid.replaceChildren(head, ...list);
  $('scale-snippet').textContent = scalingSnippet(state.seed, SCALE_DKS, SCALE_N, state.lang, SCALE_SAMPLES);
}

function syncControls() {
  const tokens = $('tokens');
  const typed = splitTokens(tokens.value);
  // keep what the reader typed if it means the same tokens (spacing), else show the state
  if (!typed.tokens || JSON.stringify(typed.tokens) !== JSON.stringify(state.tokens)) tokens.value = state.tokens.join(' ');
  tokens.removeAttribute('aria-invalid');
  $('tokens-msg').textContent = '';
  if (parseSeed($('seed').value) !== state.seed) $('seed').value = String(state.seed);
  $('seed').removeAttribute('aria-invalid');
  $('seed-msg').textContent = '';
  $('dk').value = String(state.dk);
  $('causal').checked = state.causal;
}

function writeHash() {
  clearTimeout(hashTimer);
  hashTimer = 0;
  const hash = '#' + formatHash(state);
  if (location.hash !== hash) history.replaceState(null, '', hash);
}

/**
 * The slider writes the link once it rests: history.replaceState costs Chromium a same-document
 * navigation, about a third of a slider step's main-thread work at 3 tokens (bench/page-paint.js).
 * Copying the link writes it first.
 */
const HASH_REST_MS = 200;
let hashTimer = 0;
function writeHashSoon() {
  clearTimeout(hashTimer);
  hashTimer = setTimeout(writeHash, HASH_REST_MS);
}

/**
 * Recompute from `state`: the hero now, the sections below it now or when due (registerSections).
 * fromLink: the state came from a link.
 */
function render(fromLink = false) {
  try {
    model = computeModel();
  } catch (e) {
    if (!(e instanceof AttentionError) || !state.x) throw e;
    // an edited X that the core refuses (from a link, e.g. it overflows, or an edited X with a
    // new d_k): fall back to random X, and say which value it was about
    const refused = state.x;
    state.x = null;
    model = computeModel();
    xProblem = { source: fromLink ? 'link' : 'dropped', ...classifyX(refused, e), tokens: [...state.tokens], about: xKey() };
  }
  showXMsg();
  renderHero();
  for (const key of ['snippet', 'words', 'steps', 'scaling', 'mha', 'trained', 'rope']) sections[key].invalidate();
  writeHash();
  updateScrollables();
}

/**
 * The sections below the hero (issue 24): each is drawn when it comes near the viewport, or in
 * idle time after the hero's first paint (page-lazy.js). A state change redraws them at once,
 * except the √d_k demo when it is off-screen: it is computed in slices of idle time (it needs
 * only the seed and the language, and costs most). <html data-complete> says whether every
 * section is drawn; data-ready, set before, that the hero is.
 */
function registerSections() {
  const html = document.documentElement;
  lazy = createLazy({
    onComplete: () => { html.dataset.complete = 'true'; },
    onPending: () => { html.dataset.complete = 'false'; },
  });
  // a draw may come in slices (it returns the next one); the boxes are checked once it is done
  const done = (more) => (typeof more === 'function' ? () => done(more()) : updateScrollables());
  const part = (els, draw, opts = {}) => lazy.section(els, () => done(draw()), opts);
  sections = {
    snippet: part($('reproduce'), renderSnippet, { defer: false, name: 'snippet' }),
    words: part($('words'), () => words.render(), { defer: false }),
    steps: part(['step-x', 'step-w', 'step-qkv', 'step-1', 'step-2', 'step-3', 'step-4'].map($), renderSteps, { defer: false, name: 'steps' }),
    s5: part($('section-5'), renderSection5, { defer: false }),
    trained: part($('trained'), () => trained.render(), { defer: false }),
    scaling: part($('scaling'), renderScaling, { defer: true }),
    mha: part($('mha'), renderMha, { defer: false }),
    rope: part($('rope'), () => rope.render(), { defer: false }),
    checkpoint: part($('checkpoint'), () => checkpoint.render(), { defer: false }),
  };
}

/** The temperature and the colour scale change the main heatmap alone (page-scale.js says so). */
function renderView() {
  const t0 = performance.now();
  const before = heatmaps.main && { n: heatmaps.main.ctx.tokens.length, cell: heatmaps.main.cellSize };
  renderHero();
  writeHashSoon();
  // the same tokens in the same cells: the map's box, and so what scrolls or hides its numbers, is unchanged
  const same = before && before.n === heatmaps.main.ctx.tokens.length && before.cell === heatmaps.main.cellSize;
  if (!same) updateScrollables($('main-heatmap').closest('section'));
  performance.measure('attnmap:view', { start: t0, end: performance.now() });      // bench/page-paint.js
}

/**
 * The slider sends an input event per pixel dragged, several per frame: the first in a frame
 * draws at once, the rest wait for the next frame, which draws the latest state once.
 */
let viewFrame = 0, viewPending = false;
function setView(change) {
  Object.assign(state, change);
  if ('colour' in change) writeHash();           // a click, not a drag: the link follows at once
  if (viewFrame) { viewPending = true; return; }
  renderView();
  viewFrame = requestAnimationFrame(() => {
    viewFrame = 0;
    if (viewPending) { viewPending = false; setView({}); }
  });
}

/** The episode-06 section; a problem there (the core refusing an edited X) stays in the section. */
function renderMha() {
  $('mha-msg').replaceChildren();
  try {
    mha.render(model.x);
  } catch (e) {
    if (!(e instanceof AttentionError)) throw e;
    mha.clear();
    $('mha-msg').replaceChildren(T.mhaError, ' ', ...xProblemNodes(classifyX(model.x, e), model.tokens));
  }
}

function renderAll(fromLink = false) {
  applyLang();
  showLinkNote();
  for (const el of document.querySelectorAll('#dk option')) el.textContent = el.value;
  sections.s5.invalidate();
  sections.checkpoint.invalidate();
  render(fromLink);
}

// ------------------------------------------------------------------------------------------------
// controls

function resizeX(x, tokens) {
  if (!x) return null;
  const n = tokens.length;
  const random = rowsOf(inputWeights({ ...state, tokens }).x);
  return Array.from({ length: n }, (_, i) => (x[i] ? [...x[i]] : random[i]));
}

function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30000);
}

const exportTheme = () => ($('export-dark').checked ? 'dark' : 'light');

function exportName(ext) {
  return `attention-weights-seed${model.seed}-dk${model.dk}${model.causal ? '-causal' : ''}${exportTheme() === 'dark' ? '-dark' : ''}.${ext}`;
}

// label colour and background of an exported file: light unless the reader picks dark (page.css's themes)
const EXPORT_THEMES = { light: ['#1f2328', '#ffffff'], dark: ['#e6edf3', '#0d1117'] };

/**
 * The main heatmap as a file, in the theme the reader picked. The renderer's standalone SVG
 * follows the viewer's prefers-color-scheme, so a dark-mode reader would export a dark picture
 * without choosing it: the file wraps it, unchanged, in an <svg> whose style fixes the colours.
 * (A theme option of the renderer, web/heatmap/draw.js, would make the wrapper unnecessary.)
 */
function standaloneSvg() {
  const { ctx, options } = heatmaps.main;
  const svg = renderHeatmap(ctx.weights, { ...options, standalone: true, idPrefix: 'attnmap' });
  const [, W, H] = /width="(\d+)" height="(\d+)"/.exec(svg);
  const [color, bg] = EXPORT_THEMES[exportTheme()];
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}">` +
    `<style>svg.attnmap{color:${color}!important}.attnmap .attnmap-bg{fill:${bg}!important}</style>\n${svg}</svg>\n`;
}

async function exportPng() {
  const svg = standaloneSvg();
  const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
  const W = Number(doc.documentElement.getAttribute('width'));
  const H = Number(doc.documentElement.getAttribute('height'));
  const img = new Image();
  // a data: URL, not fetch: this works from file:// too, and leaves the canvas untainted
  img.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(svg);
  await img.decode();
  const canvas = document.createElement('canvas');
  canvas.width = W * 2;
  canvas.height = H * 2;
  const g = canvas.getContext('2d');
  g.drawImage(img, 0, 0, W * 2, H * 2);
  const blob = await new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('canvas.toBlob gave nothing'))), 'image/png'));
  download(blob, exportName('png'));
}

/** Copy, and say so for COPY_RESET_MS: then a button reads its own label again, a message is empty. */
const flashTimers = new WeakMap();
async function copyText(text, okMsg, msgEl) {
  let said;
  try {
    await navigator.clipboard.writeText(text);
    said = okMsg;
  } catch {
    said = T.copyFailed;
  }
  msgEl.textContent = said;
  clearTimeout(flashTimers.get(msgEl));
  flashTimers.set(msgEl, setTimeout(() => {
    msgEl.textContent = msgEl.dataset.i18n ? T[msgEl.dataset.i18n] : '';
  }, COPY_RESET_MS));
}

function commitX(input) {
  const i = Number(input.dataset.row), j = Number(input.dataset.col);
  const v = parseNumber(input.value);
  const current = model.x;
  if (Math.fround(v) === current[i][j]) {
    input.removeAttribute('aria-invalid');
    xProblem = null;
    showXMsg();
    return;
  }
  const x = current.map((r) => [...r]);
  x[i][j] = v;
  try {
    // the core checks the value (NaN, ±Infinity, beyond float32, a result that overflows)
    attn.selfAttention({ x, wq: model.w.wq, wk: model.w.wk, wv: model.w.wv }, { causal: state.causal });
  } catch (e) {
    if (!(e instanceof AttentionError)) throw e;
    input.setAttribute('aria-invalid', 'true');
    xProblem = { source: 'typed', ...classifyX(x, e), tokens: [...state.tokens], about: xKey() };
    showXMsg();
    return;
  }
  input.removeAttribute('aria-invalid');
  xProblem = null;
  state.x = x.map((r) => r.map(Math.fround));
  render();
}

function bindControls() {
  $('controls').addEventListener('submit', (e) => e.preventDefault());
  bindTokensAndSeed();
  bindSettings();
  bindX();
  bindActions();
  bindHeatmaps();
  bindWindow();
}

/** The sentence and the seed: checked as they are typed; a valid value recomputes. */
function bindTokensAndSeed() {
  $('tokens').addEventListener('input', () => {
    const r = splitTokens($('tokens').value);
    const msg = $('tokens-msg');
    if (r.error) {
      $('tokens').setAttribute('aria-invalid', 'true');
      msg.textContent = T.tokenErrors[r.error](r.count);
      msg.classList.add('error');
      return;
    }
    $('tokens').removeAttribute('aria-invalid');
    msg.textContent = '';
    msg.classList.remove('error');
    if (JSON.stringify(r.tokens) === JSON.stringify(state.tokens)) return;
    if (r.tokens.length !== state.tokens.length) state.x = resizeX(state.x, r.tokens);
    state.tokens = r.tokens;
    render();
  });

  $('seed').addEventListener('input', () => {
    const v = parseSeed($('seed').value);
    const msg = $('seed-msg');
    if (v === null) {
      $('seed').setAttribute('aria-invalid', 'true');
      msg.textContent = T.seedError;
      msg.classList.add('error');
      return;
    }
    $('seed').removeAttribute('aria-invalid');
    msg.textContent = '';
    if (v === state.seed) return;
    state.seed = v;
    render();
  });
  $('seed-new').addEventListener('click', () => {
    let v;
    do { v = Math.floor(Math.random() * 10000); } while (v === state.seed);
    state.seed = v;
    syncControls();
    render();
  });
}

/** d_k, the causal mask, reset, and the language. */
function bindSettings() {
  $('dk').replaceChildren(...DK_CHOICES.map((d) => h('option', { value: d }, String(d))));
  $('dk').addEventListener('change', () => { state.dk = Number($('dk').value); render(); });
  $('causal').addEventListener('change', () => { state.causal = $('causal').checked; render(); });
  $('reset').addEventListener('click', () => {
    state = { ...defaultState(), lang: state.lang };
    xProblem = null;
    syncControls();
    render();
  });
  $('lang').addEventListener('click', () => {
    state.lang = state.lang === 'zh' ? 'en' : 'zh';
    $('x-table').dataset.key = '';
    $('action-msg').textContent = '';
    renderAll();
    // the message under an invalid control is in the old language: recheck it
    $('tokens').dispatchEvent(new Event('input'));
    $('seed').dispatchEvent(new Event('input'));
  });
}

/** X: commit on change (Enter or leaving the cell). */
function bindX() {
  $('x-table').addEventListener('change', (e) => { if (e.target.matches('input')) commitX(e.target); });
  $('x-table').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && e.target.matches('input')) { e.preventDefault(); commitX(e.target); }
  });
  $('reset-x').addEventListener('click', () => { state.x = null; xProblem = null; render(); });
}

/** Exports and copies. */
function bindActions() {
  $('link-note-close').addEventListener('click', () => { linkProblems = []; showLinkNote(); });
  $('export-svg').addEventListener('click', () => {
    download(new Blob([standaloneSvg()], { type: 'image/svg+xml' }), exportName('svg'));
  });
  $('export-png').addEventListener('click', () => {
    exportPng().catch((e) => { $('action-msg').textContent = T.exportFailed + e.message; });
  });
  $('copy-link').addEventListener('click', () => { writeHash(); copyText(location.href, T.linkCopied, $('action-msg')); });
  $('copy-code').addEventListener('click', () => copyText($('snippet').textContent, T.codeCopied, $('copy-code')));
}

/** The heatmaps' pointer and keyboard, and the episode-06 section. */
function bindHeatmaps() {
  wireHeatmap('main', $('main-heatmap'));
  wireHeatmap('s5', $('s5-heatmap'));
  mha = createMhaSection({
    $, h, matrixTable, drawHeatmap, wireHeatmap, heatmaps,
    getState: () => state, getT: () => T, getAttn: () => attn,
    setHeads: (heads) => { state.heads = heads; render(); },
    copy: (text, button) => copyText(text, T.codeCopied, button),
  });
  mha.bind();
  bindTeach();
}

/** Issue 14: where X comes from (page-pe.js), step ④'s picture (page-step4.js), the heatmap's view (page-scale.js). */
function bindTeach() {
  const env = { $, h, matrixTable, fixed, getState: () => state, getT: () => T, getAttn: () => attn, getModel: () => model };
  words = createWordsSection({ ...env, setInput: (change) => {
    if (change.input && change.input !== state.input) state.x = null;          // a new source of X
    Object.assign(state, change);
    render();
  } });
  step4 = createStep4(env);
  view = createHeatmapView({ ...env, set: setView });
  words.bind(); step4.bind(); view.bind();
  trained = createTrainedSection(env);
  checkpoint = createCheckpointSection(env);
  trained.bind(); checkpoint.bind();
  rope = createRopeSection(env);
  rope.bind();
}

/** A link's new hash, and a window that changes size. */
function bindWindow() {
  window.addEventListener('hashchange', () => {
    state = parseHash(location.hash);
    linkProblems = hashProblems(location.hash, state);
    xProblem = null;
    $('x-table').dataset.key = '';
    syncControls();
    renderAll(true);
  });

  let timer = 0;
  window.addEventListener('resize', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      for (const key of Object.keys(heatmaps)) {
        const hm = heatmaps[key];
        if (cellSizeFor(hm.container.clientWidth || 320, hm.ctx.tokens) !== hm.cellSize) {
          drawHeatmap(key, hm.container, hm.ctx, hm.options.title);
        }
      }
      updateScrollables();
    }, 150);
  });
}

async function main() {
  document.documentElement.dataset.complete = 'false';
  state = parseHash(location.hash);
  T = STRINGS[state.lang];
  try {
    attn = await createAttention({ relaxed: false });   // one file fewer; the page's sizes gain nothing
  } catch (e) {
    const el = $('fatal');
    el.hidden = false;
    el.textContent = T.fatal + (e?.message ?? String(e));
    delete document.documentElement.dataset.complete;          // nothing more will be drawn
    return;
  }
  bindControls();
  linkProblems = hashProblems(location.hash, state);
  s5 = computeSection5();
  registerSections();
  syncControls();
  renderAll(true);                    // the hero now; the sections below it are left to lazy
  performance.mark('attnmap:first-heatmap');                   // bench/page-paint.js
  document.documentElement.dataset.ready = 'true';
  // after the hero's first paint (a frame, then a task): the sections near the viewport, the
  // others in idle time
  requestAnimationFrame(() => setTimeout(() => lazy.start(), 0));
}

main();
