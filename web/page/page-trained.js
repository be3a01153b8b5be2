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
// Issue 24: the toy starts on EXAMPLE, a sentence where the head's choice is not forced (with 猫吃鱼
// and the causal mask, 吃 can only look at 猫 or itself): 追 gives 0.9996 of layer 0 head 2's
// attention to 狗. One click (or typing a sentence above) shows the page's own sentence. The heads
// are drawn like the checkpoint grid (page-grid.js): a thumbnail per layer × head, one of them
// enlarged with its numbers, its cells focusable and hoverable, the caption's row marked; and the
// head view (page-headview.js) draws the same heads as lines.
//
// Pure parts: toyText, strongestHead, defaultRow. DOM part: createTrainedSection(env).
import { renderHeatmap } from '../heatmap/heatmap.js';
import { fixed } from '../heatmap/text.js';
import { thumbButtons, markThumb, bigCellSize, wireCells, markCell, argmax } from './page-grid.js';
import { createHeadView } from './page-headview.js';
import { setText, sharedScale } from './page-scale.js';
import { drawTitledMap } from './page-pe.js';
import { mapHint } from './page-scroll.js';

/** The toy's verbs (scripts/train_toy_zh.py's grammar): the caption starts on the last one's row. */
export const TOY_VERBS = ['吃', '喝', '追', '看'];
/** The toy's first sentence: 追 (row 7) looks at 狗, not at a neighbour the mask leaves it. */
export const EXAMPLE = '我看见小狗在追猫';
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
 * Returns { bind(), render(), renderTemp() }; render draws from the page's state; renderTemp the
 * random mode's status again, for the top map's new temperature.
 * s.sentence: 'example' (EXAMPLE) or 'page' (the page's tokens); the page's sentence once the
 * reader types one, or opens a link with one.
 */
export function createTrainedSection(env) {
  const s = { mode: 'random', sentence: 'example', toy: null, model: null, row: null, rowKey: '', failed: null,
    big: null, active: null, run: null, headView: createHeadView(env, { id: 'trained-hv' }) };
  return { bind: () => bind(env, s), render: () => render(env, s), renderTemp: () => { if (s.mode === 'random') randomStatus(env); } };
}

function bind(env, s) {
  const { $, h } = env;
  const defaultTokens = env.getState().tokens.join(' ') === '猫 吃 鱼';
  if (!defaultTokens) s.sentence = 'page';
  $('trained').setAttribute('aria-labelledby', 'trained-title');
  $('trained').replaceChildren(
    h('h2', { id: 'trained-title' }), h('p', { id: 'trained-text' }),
    h('div', { class: 'trained-controls' },
      h('span', { id: 'trained-mode-label', class: 'seg-label' }),
      h('div', { id: 'trained-mode', class: 'seg', role: 'radiogroup', 'aria-labelledby': 'trained-mode-label' },
        ...['random', 'trained'].map((v) => h('label', { class: 'seg-item' },
          h('input', { type: 'radio', name: 'trained-mode', value: v, checked: v === 'random' }), h('span', { 'data-mode': v })))),
      h('div', { id: 'trained-sentence-box', class: 'trained-sentence-box', hidden: true },     // the label stays with its choices
        h('span', { id: 'trained-sentence-label', class: 'seg-label' }),
        h('div', { id: 'trained-sentence', class: 'seg', role: 'radiogroup', 'aria-labelledby': 'trained-sentence-label' },
          ...['example', 'page'].map((v) => h('label', { class: 'seg-item' },
            h('input', { type: 'radio', name: 'trained-sentence', value: v }), h('span', { 'data-sentence': v }))))),
      h('label', { class: 'trained-row', hidden: true }, h('span', { id: 'trained-row-label' }), h('select', { id: 'trained-row' }))),
    h('p', { id: 'trained-status', class: 'note', 'aria-live': 'polite' }),
    h('p', { id: 'trained-msg', class: 'msg error', role: 'alert' }),
    h('p', { id: 'trained-caption', class: 'worked', 'aria-live': 'polite', hidden: true }),
    h('div', { class: 'ckpt-layout trained-layout' },
      h('div', { id: 'trained-grid', class: 'trained-grid' }),
      h('figure', { id: 'trained-big-card', class: 'card figure map ckpt-big-card trained-big-card', hidden: true },
        h('p', { id: 'trained-big-title', class: 'map-title', 'aria-hidden': 'true' }),
        h('div', { id: 'trained-big', class: 'trained-big' }),
        h('p', { id: 'trained-cell', class: 'note trained-cell', 'aria-live': 'polite' }))),
    h('p', { id: 'trained-note', class: 'note' }));
  s.headView.bind($('trained'));
  $('trained-mode').addEventListener('change', (e) => { s.mode = e.target.value; render(env, s); });
  $('trained-sentence').addEventListener('change', (e) => { s.sentence = e.target.value; render(env, s); });
  $('trained-row').addEventListener('change', (e) => { s.row = Number(e.target.value); s.active = null; render(env, s); });
  // the reader typed a sentence: the toy reads it (the page re-renders too when the tokens changed;
  // when they did not, as with 猫 吃 鱼 typed again, this section redraws on its own)
  $('tokens')?.addEventListener('input', () => {
    if (s.sentence === 'page') return;
    s.sentence = 'page';
    if (s.mode === 'trained') render(env, s);
  }, { capture: true });
  $('trained-grid').addEventListener('click', (e) => {
    const b = e.target.closest('button.thumb');
    if (!b || !s.run) return;
    s.big = { layer: Number(b.dataset.layer), head: Number(b.dataset.head) };
    s.active = null;
    drawBig(env, s);
  });
  wireCells($('trained-big'), { size: () => s.run?.labels.length ?? 0, move: (i, j, focus) => moveCell(env, s, i, j, focus) });
  renderWords(env, s);
}

/** The toy, loaded once (again after a failure). */
function toy(s) {
  return (s.toy ??= Promise.all([import('../model/model.js'), import('../models/toy-zh/toy-zh.js')])
    .then(([{ loadModel }, t]) => loadModel({ config: t.config, weights: t.weights, vocabTxt: t.vocabTxt }))
    .then((m) => (s.model = m), (e) => { s.toy = null; throw e; }));
}

/**
 * The section's fixed words, which name its controls: written at bind too, so that the radios
 * have names before the section's lazy draw (issue 39 P11).
 */
function renderWords(env, s) {
  const { $ } = env;
  const R = env.getT().models.trained;
  $('trained-title').textContent = R.title;
  $('trained-text').innerHTML = R.text;                                            // trusted string
  $('trained-mode-label').textContent = R.modeLabel;
  for (const el of $('trained-mode').querySelectorAll('span[data-mode]')) el.textContent = R.modes[el.dataset.mode];
  for (const el of $('trained-mode').querySelectorAll('input')) el.checked = el.value === s.mode;
  $('trained-row-label').textContent = R.rowLabel;
}

function render(env, s) {
  const { $ } = env;
  const R = env.getT().models.trained;
  renderWords(env, s);
  $('trained-note').innerHTML = s.mode === 'trained' ? R.note : '';               // trusted string
  $('trained-msg').textContent = '';
  renderSentence(env, s);
  $('trained-big-card').hidden = true;
  if (s.mode === 'random') return renderRandom(env, s);
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


/** The choice of sentence, shown in trained mode: EXAMPLE, or the page's own (猫吃鱼 by default). */
function renderSentence(env, s) {
  const { $ } = env;
  const R = env.getT().models.trained, on = s.mode === 'trained';
  $('trained-sentence-box').hidden = !on;
  $('trained-sentence-label').textContent = R.sentenceLabel;
  const text = { example: EXAMPLE, page: toyText(env.getState().tokens) };
  for (const el of $('trained-sentence').querySelectorAll('span[data-sentence]')) el.textContent = R.sentences[el.dataset.sentence](text[el.dataset.sentence]);
  for (const el of $('trained-sentence').querySelectorAll('input')) el.checked = el.value === s.sentence;
}

/** The random mode's status: the map at the top, at the temperature that one is drawn at (issue 39 P2). */
function randomStatus(env) {
  setText(env.$('trained-status'), env.getT().models.trained.randomStatus(env.getModel().seed, env.getState().temp));
}

/**
 * The page's random-weights heatmap; its title is HTML that wraps (issue 24, defect 5), not cut SVG
 * text. Issue 39 P7: as large as its card allows with no text under 9 px (page-pe.js
 * drawTitledMap), in the colours of the map at the top, which it is (page-scale.js sharedScale).
 */
function renderRandom(env, s) {
  const { $, h } = env;
  const T = env.getT(), m = env.getModel(), state = env.getState();
  randomStatus(env);
  $('trained-caption').hidden = true;
  $('trained-row').parentElement.hidden = true;
  $('trained-hv').hidden = true;
  s.run = null;
  const title = T.heatmapTitle(m.seed, m.dk, m.causal), masked = m.causal ? 'causal' : null;
  const box = h('div', { class: 'words-map' });
  const fig = h('figure', { class: 'card figure trained-map map' }, h('p', { class: 'map-title trained-map-title', 'aria-hidden': 'true' }),
    h('div', { class: 'map-box' }, box), mapHint());
  const grid = $('trained-grid');
  grid.className = 'trained-grid';
  grid.dataset.mode = 'random';
  grid.replaceChildren(fig);
  drawTitledMap(T, box, m.weights, {
    rowLabels: m.tokens, colLabels: m.tokens, lang: state.lang, idPrefix: 'trained-random', role: 'group', decimals: 2,
    legend: false, title, ...(masked ? { masked } : {}), ...sharedScale(state, [{ rows: m.weights, masked }]).options,
  }, box.clientWidth, { max: 48 });
  box.querySelector('svg').setAttribute('data-model', 'random');
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
  const r = toyIds(model, s.sentence === 'example' ? EXAMPLE : toyText(state.tokens), R);
  if (r.problem) {
    $('trained-msg').textContent = r.problem;
    $('trained-caption').hidden = true;
    $('trained-row').parentElement.hidden = true;
    $('trained-hv').hidden = true;
    grid.replaceChildren();
    s.run = null;
    return;
  }
  const { ids, labels } = r;
  const { attention } = model.forward(ids, { attention: true });
  const key = ids.join();
  if (s.rowKey !== key || s.row === null || s.row >= ids.length) { s.row = defaultRow(labels); s.rowKey = key; s.big = null; s.active = null; }
  const sel = $('trained-row');
  sel.replaceChildren(...labels.map((t, i) => h('option', { value: i, selected: i === s.row }, `${i + 1} · ${t}`)));
  sel.parentElement.hidden = false;
  const found = strongestHead(attention, s.row);
  s.run = { ids, labels, attention, found };
  drawThumbs(env, s, L, H);
  drawBig(env, s);
  caption(env, labels, s.row, found);
  s.headView.show({ maps: attention, labels: [...labels], ids: [...ids], name: 'toy-zh', kvHeads: H });
}

/** Every layer × head as a thumbnail button (page-grid.js); the caption's head is marked. */
function drawThumbs(env, s, L, H) {
  const { $, h } = env;
  const T = env.getT(), C = T.models.ckpt, R = T.models.trained, { ids, attention, found } = s.run;
  const n = ids.length;
  const rowsOf = (l, k) => Array.from({ length: n }, (_, i) => attention[l][k].data.subarray(i * n, i * n + n));
  const grid = $('trained-grid');
  grid.className = 'ckpt-grid trained-grid trained-thumbs';
  grid.style.setProperty('--heads', String(H));
  grid.style.setProperty('--thumb', `${H <= 4 ? 72 : 56}px`);
  grid.replaceChildren(...thumbButtons(h, {
    L, H, rowsOf, label: R.thumbLabel, layerShort: C.layerShort, headShort: C.headShort,
    attrs: (l, k) => ({ 'data-model': 'toy-zh', 'data-layer': l, 'data-head': k, 'data-ids': JSON.stringify(ids) }),
  }));
  grid.querySelector(`button.thumb[data-layer="${found.top.layer}"][data-head="${found.top.head}"]`)?.classList.add('strongest');
}

/**
 * The enlarged head (the caption's, until the reader picks another): tokens, numbers where they
 * are readable, a tab stop and a focus ring, and the caption's row marked.
 */
function drawBig(env, s) {
  const { $ } = env;
  const T = env.getT(), R = T.models.trained, { labels, attention, found } = s.run;
  const { layer, head } = s.big ?? { layer: found.top.layer, head: found.top.head };
  const n = labels.length, w = attention[layer][head].data;
  const matrix = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (j <= i ? w[i * n + j] : 0)));
  const card = $('trained-big-card'), box = $('trained-big');
  card.hidden = false;
  const { cellSize, values } = bigCellSize(box.clientWidth || 280, n);
  s.active ??= { row: s.row, col: layer === found.top.layer && head === found.top.head ? found.top.col : argmax(matrix[s.row]) };
  $('trained-big-title').textContent = R.headTitle(layer, head);
  box.innerHTML = renderHeatmap(matrix, {
    rowLabels: labels, colLabels: labels, masked: 'causal', lang: T.htmlLang === 'en' ? 'en' : 'zh',
    title: R.headTitle(layer, head), decimals: 2, idPrefix: 'trained-big', role: 'grid', cellSize,
    activeCell: [s.active.row, s.active.col], focusRing: true, legend: cellSize * n >= 240,
  });
  box.classList.toggle('no-values', !values);
  const svg = box.querySelector('svg');
  for (const [k, v] of Object.entries({ 'data-model': 'toy-zh', 'data-layer': layer, 'data-head': head, 'data-ids': JSON.stringify(s.run.ids) })) svg.setAttribute(k, String(v));
  // the caption's row: its label and cells marked (page.css)
  svg.dataset.captioned = String(s.row);
  svg.querySelectorAll('.row-label')[s.row]?.classList.add('captioned');
  for (const g of svg.querySelectorAll(`g.cell-group[data-row="${s.row}"]`)) g.classList.add('captioned');
  markThumb($('trained-grid'), layer, head);
  moveCell(env, s, s.active.row, s.active.col, false);
}

/** The active cell of the enlarged map, and the line that says its weight. */
function moveCell(env, s, i, j, focus) {
  if (!s.run) return;
  const box = env.$('trained-big'), { labels } = s.run;
  s.active = { row: i, col: j };
  const g = markCell(box, i, j, focus);
  const v = Number(g?.querySelector('rect.cell')?.dataset.value ?? 0);
  const line = env.$('trained-cell');
  line.dataset.row = String(i);
  line.dataset.col = String(j);
  line.textContent = env.getT().cellLine(labels[i], labels[j], j > i ? null : fixed(v, 4), !box.classList.contains('no-values'));
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
