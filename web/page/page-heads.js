// page-heads.js - the heads panel of the checkpoint section (issue 37, item 5, a first version):
// once a model is loaded, a long text (up to the model's context or 4,096 tokens, not the grid's
// 64) goes through one forward with { heads: true, logits: false }: every head's scores
// (web/model/heads.js) and no map kept. The panel shows
//   - a layers × heads grid coloured by the score chosen in <select name="head-sort">, like
//     TransformerLens's plots (renderHeatmap: a small matrix, accessible SVG);
//   - the TOP heads on that score, highest first, each a thumbnail of its whole map drawn on a
//     canvas (drawHeatmap) from result.map(l, h), carrying data-layer, data-head, data-n, data-score;
//   - a click on a thumbnail (or a grid cell): that head's map large, with i, j, both tokens and the
//     weight under the pointer;
//   - "Test for induction heads": a seeded random block of tokens repeated twice, forward with
//     { heads: { repeat } }, sorted by induction (Olsson et al. 2022).
//
// The forward and each map run off the main thread (model.forwardAsync, result.mapAsync: the
// threads' caller worker, web/model/threads) where the page is cross-origin isolated (npm start's
// server); the page's loaders ask for it (loadModel's offThread). A page from disk (file://) has
// no shared memory to give a worker: there they run here, the status line painted before each.
// #roles carries data-off-thread. A status line says what runs ("computing 1,000 tokens…",
// "map 3 of 12") and gives the timings after.
//
// result.map(l, h) is valid until the model's next forward, and the section runs forwards of its
// own (a new text, generation): a map asked for after one runs this panel's forward again.
import { renderHeatmap, drawHeatmap } from '../heatmap/heatmap.js';
import { manualSeed } from '../rng/torch-rng.js';
import { parseIds } from './page-files.js';
import { fullView, sliceOf, bindZoom } from '../heatmap/zoom.js';
import { download } from './page-export.js';
import { nearView } from './page-heads-near.js';

export const MAX_HEAD_TOKENS = 4096;
export const SORTS = Object.freeze(['sink', 'previous', 'self', 'next', 'entropy', 'distance', 'induction', 'duplicate']);
export const TOP = 12;
export const INDUCTION = Object.freeze({ block: 50, seed: 0 });
const REPEATED = new Set(['induction', 'duplicate']);   // scores a forward has only with a repeat
const THUMB_PX = 120;                                    // a thumbnail's CSS size

/** How many tokens the panel takes: the model's context, at most MAX_HEAD_TOKENS. */
export const headsCap = (config) => Math.min(config.n_positions, MAX_HEAD_TOKENS);

/**
 * The induction test's input: `block` token ids drawn from torch's generator seeded `seed`
 * (random() % range, as torch.randint draws), from a range clear of the vocabulary's first ids
 * (bytes, punctuation) and of its last (special tokens such as <|endoftext|>), then repeated.
 * A context too short for two blocks takes half of it. -> { ids, repeat }
 */
export function inductionIds(vocab, context, { block = INDUCTION.block, seed = INDUCTION.seed } = {}) {
  const S = Math.max(1, Math.min(block, Math.floor(context / 2)));
  const lo = Math.min(1000, Math.floor(vocab / 4)), hi = Math.max(lo + 1, Math.min(vocab - 1, 30000));
  const g = manualSeed(seed);
  const ids = Array.from({ length: S }, () => lo + (g.random() % (hi - lo)));
  return { ids: [...ids, ...ids], repeat: S };
}

/** The heads (l · heads + h) in order of a score, highest first; ties keep the lower index first. */
export function headOrder(scores) {
  return Array.from(scores.keys()).sort((a, b) => scores[b] - scores[a] || a - b);
}

/**
 * env: page.js's helpers; section: { model(), text(), busy() }. Returns { bind(parent), adopt(),
 * clear(), render(), busy(), idle() }: busy() while the panel's forward or a map runs (the model
 * refuses other calls the while), idle() a promise of the end of those under way.
 */
export function createHeadsPanel(env, section) {
  const p = { section, run: null, big: null, id: 0, drawId: 0, bigId: 0, queue: Promise.resolve(), calls: 0, texts: new Map() };
  return {
    bind: (parent) => bind(env, p, parent),
    adopt: () => adopt(env, p),
    clear: () => clear(env, p),
    render: () => renderTexts(env, p),
    busy: () => p.calls > 0,
    idle: () => p.queue,
  };
}

// ------------------------------------------------------------------------------------------------
// markup and events

function bind(env, p, parent) {
  const { h } = env;
  parent.append(h('section', { id: 'roles', class: 'card roles', 'aria-labelledby': 'roles-title' },
    h('h3', { id: 'roles-title' }), h('p', { id: 'roles-intro', class: 'note' }),
    h('div', { class: 'field' },
      h('label', { for: 'roles-text', id: 'roles-text-label' }),
      h('textarea', { id: 'roles-text', name: 'roles-text', rows: 4, spellcheck: 'false', autocomplete: 'off' })),
    h('div', { class: 'roles-controls' },
      h('button', { id: 'roles-run', type: 'button' }), h('button', { id: 'roles-induction', type: 'button' }),
      h('label', { for: 'roles-sort', id: 'roles-sort-label' }),
      h('select', { id: 'roles-sort', name: 'head-sort' }, ...SORTS.map((v) => h('option', { value: v })))),
    h('p', { id: 'roles-status', class: 'note', 'aria-live': 'polite' }),
    h('div', { class: 'roles-layout' },
      h('figure', { class: 'roles-grid-card' }, h('div', { id: 'roles-grid', class: 'roles-grid' }), h('figcaption', { id: 'roles-grid-note', class: 'note' })),
      h('div', { class: 'roles-top' }, h('h4', { id: 'roles-thumbs-title' }), h('div', { id: 'roles-thumbs', class: 'roles-thumbs', 'data-state': 'empty' }))),
    h('figure', { id: 'roles-big-card', class: 'roles-big-card', hidden: true },
      h('canvas', { id: 'roles-big', class: 'roles-big', width: 1, height: 1, role: 'img', tabindex: 0, 'aria-labelledby': 'roles-big-note', 'aria-describedby': 'roles-zoom' }),
      h('p', { id: 'roles-zoom', class: 'note roles-zoom' }),
      h('button', { id: 'roles-png', type: 'button' }),
      h('p', { id: 'roles-hover', class: 'note roles-hover', 'aria-live': 'polite' }),
      h('div', { id: 'roles-near', class: 'roles-near' }),
      h('figcaption', { id: 'roles-big-note', class: 'note' }))));
  const { $ } = env;
  $('roles-text').addEventListener('input', (e) => { e.target.dataset.typed = 'true'; });
  $('roles-run').addEventListener('click', () => runText(env, p));
  $('roles-induction').addEventListener('click', () => runInduction(env, p));
  $('roles-sort').addEventListener('change', () => { if (p.run) show(env, p); });
  $('roles-thumbs').addEventListener('click', (e) => {
    const b = e.target.closest('button.roles-thumb');
    if (b) openBig(env, p, Number(b.dataset.layer), Number(b.dataset.head)).catch((e) => failed(env, p, e));
  });
  $('roles-grid').addEventListener('click', (e) => {     // a cell of the scores' grid: row = layer, col = head
    const cell = e.target.closest('[data-row][data-col]');
    if (cell) openBig(env, p, Number(cell.dataset.row), Number(cell.dataset.col)).catch((e) => failed(env, p, e));
  });
  $('roles-png').addEventListener('click', () => savePng(env, p));
  bindHover(env, p);
  bindZoom($('roles-big'), {
    view: () => (p.big?.drawn ? { view: p.big.view, n: p.run.n, plot: p.big.drawn.plot } : null),
    set: (view) => { p.big.view = view; drawBig(env, p); },
  });
  renderTexts(env, p);
}

// the big map's pointer: i, j, both tokens and the weight (drawHeatmap's cellAt, in canvas pixels)
function bindHover(env, p) {
  const canvas = env.$('roles-big');
  canvas.addEventListener('pointermove', (e) => {
    if (!p.big?.drawn || !p.run) return;
    const k = canvas.width / (canvas.clientWidth || canvas.width);
    const cell = p.big.drawn.cellAt(e.offsetX * k, e.offsetY * k);
    const { labels } = p.run, i = cell && cell.row + p.big.view.r0, j = cell && cell.col + p.big.view.c0;
    put(env, p, env.$('roles-hover'), cell
      ? (C) => C.hover(i + 1, j + 1, labels[i], labels[j], cell.value.toPrecision(4))   // positions from 1, as the page counts
      : (C) => C.hoverHint);
    if (cell && p.big.near !== i) {
      p.big.near = i;
      requestAnimationFrame(() => drawNear(env, p));   // at most once a frame: the pointer moves faster
    }
  });
}

// the head view of the hovered row's token (page-heads-near.js): its window and its top keys
function drawNear(env, p) {
  const b = p.big, el = env.$('roles-near');
  if (!b || b.near === undefined || el.dataset.row === String(b.near) && el.dataset.key === b.key) return;
  const T = env.getT();
  el.innerHTML = nearView(b.map, p.run.labels, b.near, { layer: b.layer, head: b.head, lang: T.htmlLang === 'en' ? 'en' : 'zh', words: T.models.heads });
  Object.assign(el.dataset, { row: String(b.near), key: b.key });
}

/** el's text is fn(C), C = T.models.heads; written again when the language changes. */
function put(env, p, el, fn) {
  if (fn) p.texts.set(el, fn);
  else p.texts.delete(el);
  el.textContent = fn ? fn(env.getT().models.heads) : '';
}

// ------------------------------------------------------------------------------------------------
// a model comes and goes

/** A new model: the panel's text from the section's unless the reader typed one; a first run on it. */
function adopt(env, p) {
  clear(env, p);
  const t = env.$('roles-text');
  if (!t.dataset.typed) t.value = '';
  renderTexts(env, p);
  runText(env, p);
}

function clear(env, p) {
  const { $ } = env;
  p.id++;
  p.drawId++;
  Object.assign(p, { run: null, big: null });
  $('roles-grid').replaceChildren();
  $('roles-thumbs').replaceChildren();
  $('roles-thumbs').dataset.state = 'empty';
  $('roles-big-card').hidden = true;
  $('roles-near').replaceChildren();
  put(env, p, $('roles-status'), null);
  for (const id of ['roles-grid-note', 'roles-thumbs-title', 'roles-big-note', 'roles-hover', 'roles-zoom']) put(env, p, $(id), null);
}

// ------------------------------------------------------------------------------------------------
// the forward

/** The panel's text (or the section's) -> { ids, tokenTypes, labels, note } or { problem }. */
function readText(env, p, m) {
  const text = env.$('roles-text').value.trim() || p.section.text();
  const v = m.config.vocab_size, cap = headsCap(m.config);
  let ids, tokenTypes;
  if (m.tokenizer && m.config.encoder) ({ ids, tokenTypes } = m.encode(text));
  else if (m.tokenizer) ids = m.encode(text);
  else ids = parseIds(text);
  if (!ids) return { problem: () => env.getT().models.ckpt.idsOnly(v) };
  const bad = ids.find((i) => i >= v);
  if (bad !== undefined) return { problem: () => env.getT().models.ckpt.idOutside(bad, v) };
  if (ids.length < 2) return { problem: (C) => C.tooFew };
  const n = ids.length;
  ids = Array.from(ids.slice(0, cap));
  return { ids, tokenTypes: tokenTypes?.slice(0, cap), labels: labelsOf(m, ids), note: n > cap ? (C) => C.cut(n, cap) : null };
}

const labelsOf = (m, ids) => (m.tokenizer ? m.tokens(ids) : ids.map(String));

function runText(env, p) {
  const m = p.section.model();
  if (!m) return;
  const r = readText(env, p, m);
  if (r.problem) return put(env, p, env.$('roles-status'), r.problem);
  const n = r.ids.length;
  return run(env, p, { ...r, repeat: 0, computing: (C) => C.computing(n, m.offThread === true), done: (C, f, t) => `${C.done(n, f, t)}${r.note ? ` ${r.note(C)}` : ''}` });
}

function runInduction(env, p) {
  const m = p.section.model();
  if (!m) return;
  const { ids, repeat } = inductionIds(m.config.vocab_size, headsCap(m.config));
  const job = { ids, labels: labelsOf(m, ids), repeat, computing: (C) => C.computingInduction(repeat), done: (C, f, t) => C.doneInduction(repeat, f, t) };
  if (m.config.encoder) job.tokenTypes = new Array(ids.length).fill(0);
  env.$('roles-sort').value = 'induction';
  return run(env, p, job);
}

// a task boundary after the next frame: the status line is painted before the forward holds the
// thread (the timeout: a hidden tab gets no frames)
const painted = () => new Promise((resolve) => {
  const go = () => setTimeout(resolve, 0);
  requestAnimationFrame(go);
  setTimeout(go, 100);
});

/** One forward of job.ids with the heads' scores, then the grid and the thumbnails. */
async function run(env, p, job) {
  const { $ } = env, m = p.section.model();
  if (p.section.busy()) return put(env, p, $('roles-status'), (C) => C.busy);
  const id = ++p.id;
  $('roles').dataset.state = 'running';
  setButtons(env, true);
  put(env, p, $('roles-status'), job.computing);
  try {
    await painted();
    if (id !== p.id || p.section.model() !== m) return;
    const t0 = performance.now();
    $('roles').dataset.offThread = String(m.offThread === true);
    const result = await inTurn(p, () => forward(m, job));
    const forwardMs = performance.now() - t0;
    if (id !== p.id || p.section.model() !== m) return;
    p.run = { ...job, model: m, heads: result.heads, mapAsync: result.mapAsync, n: job.ids.length };
    p.big = null;
    $('roles-big-card').hidden = true;
    const thumbsMs = await show(env, p);
    if (id !== p.id) return;
    put(env, p, $('roles-status'), (C) => job.done(C, forwardMs, thumbsMs));
    $('roles').dataset.state = 'ready';
  } catch (e) {
    if (id === p.id) failed(env, p, e);
  } finally {
    if (id === p.id) setButtons(env, false);
  }
}

function failed(env, p, e) {
  env.$('roles').dataset.state = 'failed';
  put(env, p, env.$('roles-status'), () => e.message);
}

function setButtons(env, busy) {
  env.$('roles-run').disabled = busy;
  env.$('roles-induction').disabled = busy;
}

// off the main thread where the model can (forwardAsync), else here
function forward(m, { ids, tokenTypes, repeat }) {
  const options = { heads: repeat ? { repeat } : true };
  if (m.config.encoder) { if (tokenTypes) options.tokenTypes = tokenTypes; } else options.logits = false;
  return m.forwardAsync(ids, options);
}

/**
 * One head's map from the last run (mapAsync: off the main thread as the forward). The section's
 * own forwards (a new text, generation) end the maps' validity: then the run's forward again,
 * once, and the map from it.
 */
const mapOf = (p, l, h) => inTurn(p, () => mapNow(p, l, h));

// the panel's calls of the model one at a time (it takes one at once), counted for busy()
function inTurn(p, fn) {
  p.calls++;
  const next = p.queue.then(fn).finally(() => { p.calls--; });
  p.queue = next.then(() => {}, () => {});
  return next;
}

async function mapNow(p, l, h) {
  const r = p.run;
  try {
    return await r.mapAsync(l, h);
  } catch (e) {
    if (e.code !== 'INVALID_ARGUMENT' || p.section.busy() || p.section.model() !== r.model || p.run !== r) throw e;
    r.mapAsync = (await forward(r.model, r)).mapAsync;
    return r.mapAsync(l, h);
  }
}

// ------------------------------------------------------------------------------------------------
// what a run shows

const sortOf = (env, p) => {
  const v = env.$('roles-sort').value;
  return p.run?.heads[v] ? v : 'sink';
};

/** The grid and the thumbnails on the chosen score; returns the milliseconds the thumbnails took. */
async function show(env, p) {
  const { $ } = env, r = p.run;
  for (const o of $('roles-sort').options) o.disabled = REPEATED.has(o.value) && !r.heads[o.value];
  const score = sortOf(env, p);
  $('roles-sort').value = score;
  drawScores(env, p, score);
  return drawThumbs(env, p, score);
}

const decimalsOf = (score) => (score === 'distance' || score === 'entropy' ? 2 : 3);

/** The layers × heads grid of one score (renderHeatmap: small, accessible, numbers in each cell's title). */
function drawScores(env, p, score) {
  const { $ } = env, T = env.getT(), C = T.models.heads;
  const { layers: L, heads: H } = p.run.heads, data = p.run.heads[score];
  const matrix = Array.from({ length: L }, (_, l) => Array.from(data.subarray(l * H, l * H + H)));
  const width = $('roles-grid').clientWidth || 320;
  const cellSize = Math.max(14, Math.min(40, Math.floor((width - 90) / H)));
  $('roles-grid').innerHTML = renderHeatmap(matrix, {
    rowLabels: Array.from({ length: L }, (_, l) => C.layerShort(l)), colLabels: Array.from({ length: H }, (_, h) => C.headShort(h)),
    colourScale: 'data', decimals: decimalsOf(score), cellSize, title: C.gridTitle(C.sorts[score]), lang: T.htmlLang === 'en' ? 'en' : 'zh',
    idPrefix: 'roles-grid', role: 'group', rowCaption: C.rowCaption, colCaption: C.colCaption,
    cellLabel: (c) => C.cellLabel(c.row, c.col, C.sorts[score], c.valueText), description: C.gridNote(C.sorts[score]),
  });
  $('roles-grid').dataset.score = score;
  put(env, p, $('roles-grid-note'), (c) => c.gridNote(c.sorts[score]));
}

/** The TOP heads on a score, highest first, each its whole map on a canvas; yields between heads. */
async function drawThumbs(env, p, score) {
  const { $, h } = env, r = p.run, box = $('roles-thumbs');
  const id = ++p.drawId, t0 = performance.now(), data = r.heads[score], H = r.heads.heads;
  const top = headOrder(data).slice(0, TOP);
  put(env, p, $('roles-thumbs-title'), (C) => C.thumbsTitle(top.length, C.sorts[score]));
  box.dataset.state = 'drawing';
  box.dataset.score = score;
  box.replaceChildren();
  const px = Math.min(256, Math.round(THUMB_PX * (globalThis.devicePixelRatio || 1)));
  for (const k of top) {
    const l = Math.floor(k / H), hd = k % H, v = data[k].toFixed(decimalsOf(score));
    const canvas = h('canvas', { width: px, height: px, 'aria-hidden': 'true' });
    const caption = h('span', { class: 'roles-thumb-caption' });
    const b = h('button', { type: 'button', class: 'roles-thumb', 'data-layer': l, 'data-head': hd, 'data-n': r.n, 'data-score': data[k] }, canvas, caption);
    put(env, p, caption, (C) => `${C.thumbCaption(l, hd)} · ${v}`);
    b.title = env.getT().models.heads.thumbLabel(l, hd, env.getT().models.heads.sorts[score], v);   // (the name is the caption: axe wants the visible words in it)
    if (box.dataset.state === 'drawing' && env.$('roles').dataset.state === 'running') put(env, p, env.$('roles-status'), (C) => C.drawing(box.children.length + 1, top.length));
    const map = await mapOf(p, l, hd);
    if (id !== p.drawId) return performance.now() - t0;
    drawHeatmap(canvas, map, { legend: false, colourScale: scaleOf(env) });
    box.append(b);
    if (!r.model.offThread) await new Promise((resolve) => setTimeout(resolve, 0));   // the page stays responsive between maps
    if (id !== p.drawId) return performance.now() - t0;
  }
  box.dataset.state = 'ready';
  return performance.now() - t0;
}

// the section's log switch applies here too
const scaleOf = (env) => (env.$('model-log')?.checked ? 'log' : 'unit');

/** One head's map, as wide as the panel (at most 720 px): the whole of it, zoomed and panned from there. */
async function openBig(env, p, l, hd) {
  const { $ } = env, r = p.run;
  if (!r) return;
  const id = ++p.bigId, map = await mapOf(p, l, hd);
  if (id !== p.bigId || r !== p.run) return;
  const card = $('roles-big-card'), canvas = $('roles-big');
  card.hidden = false;
  const css = Math.max(200, Math.min(720, card.clientWidth || $('roles').clientWidth - 24));
  const dpr = globalThis.devicePixelRatio || 1;
  canvas.width = Math.min(4096, Math.round(css * dpr));
  canvas.height = canvas.width;
  canvas.style.width = `${css}px`;                          // (height: auto, from the canvas's own square)
  Object.assign(canvas.dataset, { layer: String(l), head: String(hd), n: String(r.n) });
  p.big = { layer: l, head: hd, map, view: fullView(r.n), drawn: null, key: `${l}.${hd}.${p.id}` };
  $('roles-near').replaceChildren();
  drawBig(env, p);
  put(env, p, $('roles-big-note'), (C) => C.bigNote(l, hd, r.n));
  put(env, p, $('roles-hover'), (C) => C.hoverHint);
  for (const b of $('roles-thumbs').querySelectorAll('button.roles-thumb')) {
    b.setAttribute('aria-pressed', String(Number(b.dataset.layer) === l && Number(b.dataset.head) === hd));
  }
  card.scrollIntoView?.({ block: 'nearest' });
}

/**
 * The big map's window (p.big.view) drawn, on the whole map's colour domain (a window keeps the
 * colours it had), its tokens where they fit; the window's place in words and in data-*.
 */
function drawBig(env, p) {
  const { $ } = env, r = p.run, b = p.big, { r0, c0, k } = b.view, canvas = $('roles-big');
  const whole = b.view.k === r.n, text = getComputedStyle($('roles-big-card')).color || '#1f2328';
  const domain = b.domain ?? null;
  b.drawn = drawHeatmap(canvas, whole ? b.map : sliceOf(b.map, b.view), {
    colourScale: scaleOf(env), textColour: text, ...(domain ? { min: domain.min, max: domain.max } : {}),
    rowLabels: r.labels.slice(r0, r0 + k), colLabels: r.labels.slice(c0, c0 + k),
  });
  b.domain ??= b.drawn.domain;
  Object.assign(canvas.dataset, { r0: String(r0), c0: String(c0), k: String(k) });
  put(env, p, $('roles-zoom'), (C) => C.zoom(r0, c0, k, r.n));
}

/** The big map as drawn (its window, labels, legend) on the card's background, as a PNG file. */
function savePng(env, p) {
  const b = p.big, canvas = env.$('roles-big');
  if (!b?.drawn) return;
  const out = document.createElement('canvas');
  Object.assign(out, { width: canvas.width, height: canvas.height });
  const ctx = out.getContext('2d');
  ctx.fillStyle = getComputedStyle(document.body).backgroundColor || '#ffffff';
  ctx.fillRect(0, 0, out.width, out.height);
  ctx.drawImage(canvas, 0, 0);
  const { r0, c0, k } = b.view;
  out.toBlob((blob) => blob && download(blob, `attnmap-layer${b.layer + 1}-head${b.head + 1}-rows${r0}-${r0 + k - 1}-cols${c0}-${c0 + k - 1}.png`), 'image/png');
}

// ------------------------------------------------------------------------------------------------
// texts

function renderTexts(env, p) {
  const { $ } = env, C = env.getT().models.heads;
  const m = p.section.model();
  $('roles-title').textContent = C.title;
  $('roles-intro').textContent = C.intro;
  $('roles-text-label').textContent = C.textLabel(m ? headsCap(m.config) : MAX_HEAD_TOKENS);
  $('roles-run').textContent = C.run;
  $('roles-induction').textContent = C.induction;
  $('roles-png').textContent = C.savePng;
  $('roles-sort-label').textContent = C.sortLabel;
  for (const o of $('roles-sort').options) {
    o.textContent = C.sorts[o.value];
    o.title = REPEATED.has(o.value) ? C.needRepeat : '';
  }
  for (const [el, fn] of p.texts) {
    if (el.isConnected) el.textContent = fn(C);
    else p.texts.delete(el);
  }
  if (p.run && $('roles-grid').dataset.score) drawScores(env, p, $('roles-grid').dataset.score);
  if (p.big?.near !== undefined) { delete $('roles-near').dataset.row; drawNear(env, p); }   // its words in the new language
  for (const b of $('roles-thumbs').querySelectorAll('button.roles-thumb')) {
    const score = $('roles-thumbs').dataset.score, v = Number(b.dataset.score).toFixed(decimalsOf(score));
    b.title = C.thumbLabel(Number(b.dataset.layer), Number(b.dataset.head), C.sorts[score], v);
  }
}
