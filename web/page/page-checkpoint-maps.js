// page-checkpoint-maps.js - the maps of a loaded checkpoint (page-checkpoint.js): the grid of every
// layer × head as small heatmaps, drawn a layer at a time; the enlarged head with its tokens and
// numbers, as wide as its card, a grid the keys and the pointer move through with a line that says
// its active cell's weight (issue 39 P6); and the note on the options that change them (log scale, the first
// token or [CLS] and [SEP] hidden). s: the section's state, env: page.js's helpers.
import { fixed } from '../heatmap/text.js';
import { thumbSvg, LOG_FLOOR } from './page-thumbs.js';
import { markCell, argmax } from './page-grid.js';
import { fitHeatmap, numbersTooSmall } from './page-fit.js';
import { keptPositions, shownRows } from './page-encoder.js';

export const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

const causalOf = (s) => !s.model.config.encoder;
export const scaleOf = (env) => (env.$('model-log').checked ? 'log' : 'unit');
/** The positions the maps show (page-encoder.js): all, or without the first token / [CLS] and [SEP]. */
export const keptOf = (env, s) => keptPositions(s.run.labels, { causal: causalOf(s), hide: env.$('model-hide-first').checked });
export const rowsOf = (s, rows, kept) => shownRows(rows, kept, causalOf(s));

/** The attributes of a map's <svg>: which model, layer and head, and which token ids it shows. */
function mapAttrs(env, s, layer, head, kept = keptOf(env, s)) {
  const hidden = kept.length < s.run.ids.length ? 'hidden' : 'shown';
  return {
    'data-model': s.name, 'data-layer': layer, 'data-head': head,
    'data-ids': JSON.stringify(kept.map((i) => s.run.ids[i])),
    [causalOf(s) ? 'data-first' : 'data-special']: hidden, 'data-scale': scaleOf(env),
  };
}

/** Every layer × head, a layer at a time, yielding to the browser between layers. */
export async function drawGrid(env, s) {
  const { $, h } = env;
  const C = env.getT().models.ckpt;
  const grid = $('checkpoint-grid');
  const id = ++s.drawId;
  const { n_layer: L, n_head: H, kvHeads: G = H } = s.model.config;
  const kept = keptOf(env, s), scale = scaleOf(env), group = H / G;   // GQA: heads group·g … read key/value head g
  const kv = (k) => ({ 'data-kv': Math.floor(k / group), ...(G < H ? { class: `kv-${Math.floor(k / group) % 2 ? 'odd' : 'even'}` } : {}) });
  grid.dataset.state = 'drawing';
  grid.style.setProperty('--heads', String(H));
  grid.style.setProperty('--thumb', `${H <= 4 ? 96 : H <= 8 ? 80 : 60}px`);     // GPT-2 small: 12 × 60 px
  grid.replaceChildren(h('span', { class: 'ckpt-corner', 'aria-hidden': 'true' }),
    ...Array.from({ length: H }, (_, k) => h('span', { 'aria-hidden': 'true', ...kv(k), class: `ckpt-head ${kv(k).class ?? ''}`.trim() },
      C.headShort(k), ...(G < H ? [h('br'), h('small', {}, C.kvShort(Math.floor(k / group)))] : []))));
  // GPT-2 small at 64 tokens is 144 maps of 2,080 cells: about 35 ms each in Chromium, so the
  // page gets the main thread back every ~16 ms of drawing
  let since = performance.now();
  for (let l = 0; l < L; l++) {
    grid.append(h('span', { class: 'ckpt-layer', 'aria-hidden': 'true' }, C.layerShort(l)));
    for (let k = 0; k < H; k++) {
      const b = h('button', { type: 'button', ...kv(k), class: `thumb ${kv(k).class ?? ''}`.trim(), 'data-layer': l, 'data-head': k, 'aria-label': env.getT().models.ckpt.thumbLabel(l, k) });   // (the language may change mid-drawing)
      b.innerHTML = thumbSvg(rowsOf(s, s.run.heads[l][k], kept), scale, mapAttrs(env, s, l, k, kept), causalOf(s));   // numbers only
      grid.append(b);
      if (performance.now() - since > 16) {
        markBig(env, s);
        await nextTask();
        if (id !== s.drawId) return;             // a newer drawing took over
        since = performance.now();
      }
    }
  }
  markBig(env, s);
  grid.dataset.state = 'ready';
}

function markBig(env, s) {
  for (const b of env.$('checkpoint-grid').querySelectorAll('button.thumb')) {
    const on = Number(b.dataset.layer) === s.big.layer && Number(b.dataset.head) === s.big.head;
    b.classList.toggle('on', on);
    b.setAttribute('aria-pressed', String(on));
  }
}

/**
 * The enlarged head: renderHeatmap with the tokens, the numbers and a legend, as wide as its card
 * (issue 24 item 4). Its title is the head alone: "first token left out" is a sentence of the
 * caption, where it can wrap, not a title cut with "…" (item 5).
 */
export function drawBig(env, s) {
  const { $ } = env;
  const T = env.getT(), C = T.models.ckpt;
  const box = $('checkpoint-big');
  const { layer, head } = s.big;
  const kept = keptOf(env, s), causal = causalOf(s), hide = kept.length < s.run.ids.length;
  const rows = rowsOf(s, s.run.heads[layer][head], kept);
  const labels = kept.map((i) => s.run.labels[i]);
  const n = rows.length;
  const matrix = rows.map((row, i) => Array.from({ length: n }, (_, j) => (!causal || j <= i ? row[j] : 0)));
  s.bigWidth = box.clientWidth || 320;
  const focused = box.contains(document.activeElement), a = activeOf(s, matrix);
  // a grid with one tab stop, moved by the keys and the pointer (page-checkpoint.js wires it)
  box.innerHTML = fitHeatmap(matrix, {
    rowLabels: labels, colLabels: labels, ...(causal ? { masked: 'causal' } : {}), lang: T.htmlLang === 'en' ? 'en' : 'zh',
    title: C.bigTitle(layer, head, false), decimals: 2, idPrefix: 'ckpt-big', role: 'grid',
    activeCell: [a.row, a.col], focusRing: true,
    ...(scaleOf(env) === 'log' ? { colourScale: 'log' } : {}),
  }, s.bigWidth, BIG_CELL).svg;
  const svg = box.querySelector('svg');
  for (const [k, v] of Object.entries(mapAttrs(env, s, layer, head, kept))) svg.setAttribute(k, String(v));
  // numbers drawn under 10 px are hidden, as on the top map; the line below gives the active one
  box.classList.toggle('no-values', numbersTooSmall(svg, svg.getBoundingClientRect().width / Number(svg.getAttribute('width'))));
  moveCell(env, s, a.row, a.col, focused);
  const note = [...(hide ? [causal ? C.bigHidden : C.bigHiddenSpecial] : []), causal ? C.bigNote(layer, head, n) : C.bigNoteEncoder(layer, head, n)];
  $('checkpoint-big-note').textContent = note.join(T.htmlLang === 'en' ? ' ' : '');      // (drawn again in a new language)
  markBig(env, s);
}

const BIG_CELL = { min: 10, max: 48 };   // px; below min the map is scaled down to its card (page.css)

/** The enlarged map's active cell: the reader's while it is in the map, else the last row's largest weight. */
function activeOf(s, matrix) {
  const n = matrix.length, a = s.active;
  if (!a || a.row >= n || a.col >= n) s.active = { row: n - 1, col: argmax(matrix[n - 1]) };
  return s.active;
}

/**
 * The active cell of the enlarged map (issue 39 P6): its tab stop and ring (page-grid.js), and the
 * line under the map that says its weight, the one way to read it where the cells are too small
 * for their numbers.
 */
export function moveCell(env, s, i, j, focus) {
  if (!s.run) return;
  const box = env.$('checkpoint-big');
  const labels = keptOf(env, s).map((k) => s.run.labels[k]);
  s.active = { row: i, col: j };
  const g = markCell(box, i, j, focus);
  if (!g) return;
  const rect = g.querySelector('rect.cell');
  const line = env.$('checkpoint-cell');
  line.dataset.row = String(i);
  line.dataset.col = String(j);
  line.textContent = env.getT().cellLine(labels[i], labels[j], rect.dataset.masked === 'true' ? null : fixed(Number(rect.dataset.value), 4),
    !box.classList.contains('no-values'));
}

export function renderOptionsNote(env, s) {
  const C = env.getT().models.ckpt;
  const hide = env.$('model-hide-first').checked, n = s.run?.ids.length ?? 0;
  env.$('model-options-note').textContent = s.model?.config.encoder
    ? C.optionsNoteEncoder(scaleOf(env) === 'log', LOG_FLOOR, hide, s.run ? keptOf(env, s).length < n : false)
    : C.optionsNote(scaleOf(env) === 'log', LOG_FLOOR, hide, n);
}
