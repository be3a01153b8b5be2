// page-trained.js - random weights or a trained model, for the same sentence (issue 16).
//
// The article's weights are torch.randn: its heatmaps show no pattern a model learned. The switch
// in this section puts the trained toy model (web/models/toy-zh/, a 2-layer GPT-2 trained on
// 猫吃鱼-style sentences: see its README.md) beside them: every layer and head of the toy for the
// page's sentence, read as characters (猫 吃 鱼 -> 猫吃鱼), and a caption that says what the
// numbers show for one row and no more (strongestHead below).
//
// The toy and attnmap/model load on the first switch to "trained": import() here becomes, in the
// page's bundle, a <script src> for web/dist/attnmap-model.js and web/dist/toy-zh.js
// (scripts/build-model.js), so it also works from file://.
//
// Pure parts: toyText, strongestHead, defaultRow. DOM part: createTrainedSection(env).
import { renderHeatmap } from '../heatmap/heatmap.js';
import { fixed } from '../heatmap/text.js';

/** The toy's verbs (scripts/train_toy_zh.py's grammar): the caption starts on the last one's row. */
export const TOY_VERBS = ['吃', '喝', '追', '看'];
const NEARLY_EVEN = 0.1;      // a largest weight within this of 1/(i+1) is called "close to an even spread" 

/** The page's tokens as the toy's text: Chinese and its punctuation run together (猫 吃 鱼 。 -> 猫吃鱼。), other words keep a space. */
export const toyText = (tokens) => (tokens.every((t) => /^[\p{Script=Han}\p{P}]+$/u.test(t)) ? tokens.join('') : tokens.join(' '));

/**
 * For query row i: each head's key with the most weight (the first on a tie), and the head whose
 * largest weight is the largest of all. attention[l][h]: { data, shape: [n, n] }.
 * -> { top: { layer, head, col, weight }, agree (heads whose largest weight is on top.col), total, list }
 */
export function strongestHead(attention, i) {
  const list = [];
  attention.forEach((layer, l) => layer.forEach(({ data, shape: [, n] }, h) => {
    let best = 0;
    for (let j = 1; j <= i; j++) if (data[i * n + j] > data[i * n + best]) best = j;
    list.push({ layer: l, head: h, col: best, weight: data[i * n + best] });
  }));
  const top = list.reduce((a, b) => (b.weight > a.weight ? b : a));
  return { top, agree: list.filter((x) => x.col === top.col).length, total: list.length, list };
}

/** The row the caption starts on: the last verb of the toy's grammar after the first position, else the last token. */
export function defaultRow(labels) {
  for (let i = labels.length - 1; i > 0; i--) if (TOY_VERBS.includes(labels[i])) return i;
  return labels.length - 1;
}

// ------------------------------------------------------------------------------------------------

/**
 * env: { $, h, getState(), getT(), getModel() } (getModel: the page's random-weights model).
 * Returns { bind(), render() }; render draws from the page's state.
 */
export function createTrainedSection(env) {
  const s = { mode: 'random', toy: null, model: null, row: null, rowKey: '', failed: null };
  return { bind: () => bind(env, s), render: () => render(env, s) };
}

function bind(env, s) {
  const { $, h } = env;
  $('trained').setAttribute('aria-labelledby', 'trained-title');
  $('trained').replaceChildren(
    h('h2', { id: 'trained-title' }), h('p', { id: 'trained-text' }),
    h('div', { class: 'trained-controls' },
      h('span', { id: 'trained-mode-label', class: 'seg-label' }),
      h('div', { id: 'trained-mode', class: 'seg', role: 'radiogroup', 'aria-labelledby': 'trained-mode-label' },
        ...['random', 'trained'].map((v) => h('label', { class: 'seg-item' },
          h('input', { type: 'radio', name: 'trained-mode', value: v, checked: v === 'random' }), h('span', { 'data-mode': v })))),
      h('label', { class: 'trained-row', hidden: true }, h('span', { id: 'trained-row-label' }), h('select', { id: 'trained-row' }))),
    h('p', { id: 'trained-status', class: 'note', 'aria-live': 'polite' }),
    h('p', { id: 'trained-msg', class: 'msg error', role: 'alert' }),
    h('p', { id: 'trained-caption', class: 'worked', 'aria-live': 'polite', hidden: true }),
    h('div', { id: 'trained-grid', class: 'trained-grid' }),
    h('p', { id: 'trained-note', class: 'note' }));
  $('trained-mode').addEventListener('change', (e) => { s.mode = e.target.value; render(env, s); });
  $('trained-row').addEventListener('change', (e) => { s.row = Number(e.target.value); render(env, s); });
}

/** The toy, loaded once (again after a failure). */
function toy(s) {
  return (s.toy ??= Promise.all([import('../model/model.js'), import('../models/toy-zh/toy-zh.js')])
    .then(([{ loadModel }, t]) => loadModel({ config: t.config, weights: t.weights, vocabTxt: t.vocabTxt }))
    .then((m) => (s.model = m), (e) => { s.toy = null; throw e; }));
}

function render(env, s) {
  const { $ } = env;
  const R = env.getT().models.trained;
  $('trained-title').textContent = R.title;
  $('trained-text').innerHTML = R.text;                                            // trusted string
  $('trained-mode-label').textContent = R.modeLabel;
  for (const el of $('trained-mode').querySelectorAll('span[data-mode]')) el.textContent = R.modes[el.dataset.mode];
  for (const el of $('trained-mode').querySelectorAll('input')) el.checked = el.value === s.mode;
  $('trained-row-label').textContent = R.rowLabel;
  $('trained-note').innerHTML = s.mode === 'trained' ? R.note : '';               // trusted string
  $('trained-msg').textContent = '';
  if (s.mode === 'random') return renderRandom(env);
  if (!s.model) {
    $('trained-status').textContent = R.loading;
    toy(s).then(() => render(env, s), (e) => {
      if (s.mode !== 'trained') return;
      $('trained-status').textContent = '';
      $('trained-msg').textContent = R.loadFailed(e.message ?? String(e));
    });
    return;
  }
  renderTrained(env, s);
}

function renderRandom(env) {
  const { $, h } = env;
  const T = env.getT(), R = T.models.trained, m = env.getModel(), state = env.getState();
  $('trained-status').textContent = R.randomStatus(m.seed);
  $('trained-caption').hidden = true;
  $('trained-row').parentElement.hidden = true;
  const fig = h('figure', { class: 'card figure trained-map' });
  fig.innerHTML = renderHeatmap(m.weights, {
    rowLabels: m.tokens, colLabels: m.tokens, lang: state.lang, idPrefix: 'trained-random', role: 'group', decimals: 2,
    cellSize: Math.max(20, Math.min(48, Math.floor(320 / m.n))), legend: false, title: T.heatmapTitle(m.seed, m.dk, m.causal),
    ...(m.causal ? { masked: 'causal' } : {}),
  });
  fig.firstElementChild.setAttribute('data-model', 'random');
  $('trained-grid').replaceChildren(fig);
  $('trained-grid').dataset.mode = 'random';
}

/** The toy's ids for the page's sentence, or a problem: characters it does not know, or too many. */
function toyIds(model, text, R) {
  const ids = model.encode(text);
  const labels = model.tokens(ids);
  if (labels.includes('[UNK]')) {
    const unknown = [...new Set(Array.from(text).filter((c) => c.trim() && model.tokens(model.encode(c)).includes('[UNK]')))];
    return { problem: R.unknown(unknown.length ? unknown.join(' ') : text, knownChars(model)) };
  }
  if (!ids.length) return { problem: R.empty };
  if (ids.length > model.config.n_positions) return { problem: R.tooLong(ids.length, model.config.n_positions) };
  return { ids, labels };
}

/** The characters the toy knows, from its vocabulary (ids 0..vocab_size-1), without the [..] specials. */
function knownChars(model) {
  return model.tokens(Array.from({ length: model.config.vocab_size }, (_, i) => i)).filter((t) => !/^\[.*\]$/.test(t)).join(' ');
}

function renderTrained(env, s) {
  const { $, h } = env;
  const T = env.getT(), R = T.models.trained, state = env.getState(), model = s.model;
  const { n_layer: L, n_head: H } = model.config;
  $('trained-status').textContent = R.trainedStatus(L, H);
  const grid = $('trained-grid');
  grid.dataset.mode = 'trained';
  const r = toyIds(model, toyText(state.tokens), R);
  if (r.problem) {
    $('trained-msg').textContent = r.problem;
    $('trained-caption').hidden = true;
    $('trained-row').parentElement.hidden = true;
    grid.replaceChildren();
    return;
  }
  const { ids, labels } = r;
  const { attention } = model.forward(ids, { attention: true });
  const key = ids.join();
  if (s.rowKey !== key || s.row === null || s.row >= ids.length) { s.row = defaultRow(labels); s.rowKey = key; }
  const sel = $('trained-row');
  sel.replaceChildren(...labels.map((t, i) => h('option', { value: i, selected: i === s.row }, `${i + 1} · ${t}`)));
  sel.parentElement.hidden = false;
  const found = strongestHead(attention, s.row);
  const n = ids.length;
  const cellSize = Math.max(18, Math.min(40, Math.floor(240 / n)));
  const figures = [];
  attention.forEach((layer, l) => layer.forEach((w, k) => {
    const strongest = l === found.top.layer && k === found.top.head;
    const fig = h('figure', { class: `card figure trained-map${strongest ? ' strongest' : ''}` });
    fig.innerHTML = renderHeatmap(w, {
      rowLabels: labels, colLabels: labels, lang: state.lang, idPrefix: `trained-l${l}h${k}`, role: 'group',
      decimals: 2, cellSize, legend: false, masked: 'causal', title: R.headTitle(l, k),
    });
    const svg = fig.firstElementChild;
    for (const [a, v] of Object.entries({ 'data-model': 'toy-zh', 'data-layer': l, 'data-head': k, 'data-ids': JSON.stringify(ids) })) svg.setAttribute(a, String(v));
    if (strongest) fig.append(h('figcaption', { class: 'note' }, R.strongestTag));
    figures.push(fig);
  }));
  grid.style.setProperty('--heads', String(H));
  grid.replaceChildren(...figures);
  caption(env, labels, s.row, found);
}

/** The caption: what the numbers of one row show, and no more. Tokens go in as text. */
function caption(env, labels, i, found) {
  const { $, h } = env;
  const R = env.getT().models.trained;
  const tok = (t) => h('span', { class: 'tok' }, t);
  const { top, agree, total } = found;
  const where = top.col === i ? 'self' : top.col === 0 ? 'first' : top.col === i - 1 ? 'previous' : 'other';
  const parts = i === 0 ? R.captionFirst : R.caption(i + 1, top.layer, top.head, fixed(top.weight, 2), where, agree, total);
  // even the strongest head barely differs from spreading the row evenly: say so
  if (i > 0 && top.weight - 1 / (i + 1) < NEARLY_EVEN) parts.push(R.nearlyEven(fixed(1 / (i + 1), 2)));
  const el = $('trained-caption');
  el.hidden = false;
  el.dataset.row = String(i);
  el.dataset.layer = String(top.layer);
  el.dataset.head = String(top.head);
  el.dataset.col = String(top.col);
  el.dataset.weight = String(top.weight);
  el.replaceChildren(...parts.map((p) => (p === 'ROW' ? tok(labels[i]) : p === 'KEY' ? tok(labels[top.col]) : p)));
}
