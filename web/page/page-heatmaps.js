// page-heatmaps.js - renderHeatmap's SVG on the page, as a keyboard- and screen-reader-navigable
// grid: drawn into its frame at a cell size that fits the box, an active cell that the pointer and
// the arrow keys move, and the explanation of that cell (page-explain.js) beside it.
//
//   const maps = createHeatmaps({ $, getT, getState, onMainRow });
//   maps.draw(key, container, ctx, title)   // key: 'main', 's5' or a section's own
//   maps.wire(key, container)               // the pointer and the keys, once
//   maps.redrawResized()                    // after the window changed size
//   maps.narrowest(ctx, title)              // a small multiple's narrowest legible width (px)
//   maps.heatmaps[key]                      // { ctx, container, cellSize, options, width } as drawn
//   maps.active[key]                        // { row, col }
// onMainRow(i): the active row of the main heatmap moved to i (step ④ follows it).
import { renderHeatmap } from '../heatmap/heatmap.js';
import { gridKey } from '../heatmap/grid-keys.js';
import { markCell } from './page-grid.js';                    // issue 24
import { revealExplanation } from './page-cues.js';          // issue 24: defect 15
import { mapFrame } from './page-scroll.js';
import { explainCell } from './page-explain.js';
import { fitHeatmap, sizeToBox, narrowestWidth } from './page-fit.js';     // issue 39 P7

/** Label width in em, as the renderer estimates it (CJK 1, other 0.6), capped like its labels. */
const labelEm = (s) => Math.min(10, [...s].reduce((w, c) => w + (c.codePointAt(0) > 0x2e80 ? 1 : 0.6), 0));

const MAX_CELL = 104;

function cellSizeFor(width, tokens) {
  const labels = Math.max(...tokens.map(labelEm)) * 14;
  const cs = Math.floor((width - 120 - labels) / tokens.length);
  return Math.max(28, Math.min(MAX_CELL, cs));
}

/**
 * The options of ctx's map but its cell size and decimals. ctx.colourScale: the hero's scale
 * (page-scale.js); ctx.colourOptions: renderHeatmap's colourScale, min and max for maps that share
 * a range (page-scale.js sharedScale, issue 39 P7).
 */
function baseOptions(key, ctx, title, lang) {
  const options = { rowLabels: ctx.tokens, colLabels: ctx.tokens, title, lang, idPrefix: key };
  if (ctx.causal) options.masked = 'causal';
  if (ctx.legend === false) options.legend = false;
  if (ctx.colourScale && ctx.colourScale !== 'unit') options.colourScale = ctx.colourScale;   // page-scale.js
  return Object.assign(options, ctx.colourOptions);
}

/**
 * The options ctx's map is drawn with in a box width px wide. ctx.fit (the heads, page-mha.js):
 * cells as large as fit the box, labels never under 9 px (page-fit.js); else as large as the box
 * allows after room for labels and legend, at least 28 px. Decimals: 4 where they fit (up to 9
 * tokens, cells of 56 px or more); on a phone 2, drawn larger, rather than none (updateScrollables
 * hides numbers that would be below 10 px).
 */
function drawOptions(key, ctx, title, lang, width) {
  const base = baseOptions(key, ctx, title, lang), n = ctx.tokens.length;
  const cellSize = ctx.fit ? fitHeatmap(ctx.weights, { ...base, decimals: 2 }, width, { max: MAX_CELL }).cellSize : cellSizeFor(width, ctx.tokens);
  return { ...base, decimals: ctx.decimals ?? (n <= 9 && cellSize >= 56 ? 4 : 2), cellSize };
}

/**
 * How far the SVG in container shrinks with its box (page.css): to 70 %, beyond which the numbers
 * get too small, so wide heatmaps (many tokens on a phone) scroll inside their box instead; a
 * fitted map only as far as its text stays legible (page-fit.js).
 */
function setShrink(container, fit) {
  if (fit) return sizeToBox(container);
  const natural = Number(container.querySelector('svg').getAttribute('width'));
  container.style.setProperty('--svg-width', `${natural}px`);
  container.style.setProperty('--svg-min-width', `${Math.round(natural * 0.7)}px`);
}

/** The narrowest a fitted map of ctx is drawn legibly: the width a small multiple needs (page-mha.js lays the heads out in as many columns as fit). */
const narrowestOf = (ctx, title, lang) => narrowestWidth(ctx.weights, { ...baseOptions('narrowest', ctx, title, lang), decimals: 2 });

export function createHeatmaps({ $, getT, getState, onMainRow }) {
  const active = { main: { row: 1, col: 0 }, s5: { row: 1, col: 0 } };
  const heatmaps = {}; // key -> { ctx, container, cellSize, options }
  const explainPanel = (key) => heatmaps[key] && (heatmaps[key].ctx.explainPanel ?? (key === 'main' ? $('main-explain') : $('s5-explain')));
  // A panel shared by several maps (the heads, page-mha.js) explains the cell the reader moved to
  // last: drawing the maps again (a language switch) explains that one again, not the last drawn
  // while that cell stays outlined (issue 39 P5). panel -> key of the map it explains.
  const explaining = new Map();

  /**
   * Draw ctx.weights into container. ctx: { tokens, weights, causal, ... }.
   * key: 'main' or 's5' (the active cell and the explanation panel belong to it).
   */
  function draw(key, container, ctx, title) {
    const T = getT(), n = ctx.tokens.length;
    const frame = mapFrame(container);
    // read once, before any write (after one, this read would lay the page out again: issue 24's
    // slider); the box does not depend on its content
    const width = container.clientWidth || 320;
    frame.querySelector('.map-title').textContent = title;
    frame.querySelector('.hint-scroll').textContent = T.mapScrolls;
    frame.querySelector('.hint-values').textContent = T.mapValuesHidden;
    const options = drawOptions(key, ctx, title, getState().lang, width), { cellSize } = options;
    const a = (active[key] ??= { row: 1, col: 0 });
    if (a.row >= n || a.col >= n) { a.row = Math.min(1, n - 1); a.col = 0; }
    // A grid of rows of cells for assistive technology (the drawn labels are repeated in each cell's
    // label, "吃 → 猫: 0.3157", so the renderer hides the text around the grid from it), one tab stop
    // on the active cell, and the focus ring that setActive moves. The renderer escapes every label.
    const svg = renderHeatmap(ctx.weights, { ...options, role: 'grid', activeCell: [a.row, a.col], focusRing: true });
    container.innerHTML = svg;
    heatmaps[key] = { ctx, container, cellSize, options, width };   // options: what an export draws
    setShrink(container, ctx.fit);
    setActive(key, a.row, a.col, false, false);
  }

  /**
   * Make (i, j) the active cell of a heatmap: as the pointer or the keys move, the tab stop, the
   * focus ring and the bold row and column labels follow it (the renderer drew the first tab stop
   * and ring), and the explanation shows its arithmetic. byReader: the pointer or the keys moved
   * it, not a drawing.
   */
  function setActive(key, i, j, focus, byReader = true) {
    const hm = heatmaps[key];
    if (!hm) return;
    active[key] = { row: i, col: j };
    const { container } = hm;
    if (!markCell(container, i, j, focus)) return;      // tab stop, focus ring, bold labels (page-grid.js)

    if (explains(key, byReader)) explainCell(getT(), explainPanel(key), hm.ctx, i, j);
    if (key === 'main') onMainRow(i);
  }

  /** Whether the panel of key explains key's active cell: its own, the one the reader moved to, or the one its maps drew last. */
  function explains(key, byReader) {
    const panel = explainPanel(key), last = explaining.get(panel);
    if (byReader) explaining.set(panel, key);
    else if (last !== undefined && last !== key) {
      if (heatmaps[last]) return false;              // the reader's cell is in another map, still drawn
      explaining.delete(panel);
    }
    return true;
  }

  function wire(key, container) {
    const target = (e) => e.target.closest?.('g.cell-group');
    const moveTo = (g) => {
      const i = Number(g.dataset.row), j = Number(g.dataset.col);
      if (active[key].row !== i || active[key].col !== j || g.getAttribute('tabindex') !== '0') setActive(key, i, j, false);
    };
    container.addEventListener('mouseover', (e) => {
      const g = target(e);
      if (!g) return;
      const i = Number(g.dataset.row), j = Number(g.dataset.col);
      if (active[key].row !== i || active[key].col !== j) setActive(key, i, j, false);
    });
    container.addEventListener('focusin', (e) => {
      const g = target(e);
      if (g) moveTo(g);
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

  /** Draw again the heatmaps whose cell size no longer fits their box (a fitted one: whose box changed width). */
  function redrawResized() {
    for (const key of Object.keys(heatmaps)) {
      const hm = heatmaps[key], width = hm.container.clientWidth || 320;
      if (hm.ctx.fit ? Math.abs(width - hm.width) > 4 : cellSizeFor(width, hm.ctx.tokens) !== hm.cellSize) {
        draw(key, hm.container, hm.ctx, hm.options.title);
      }
    }
  }

  const narrowest = (ctx, title) => narrowestOf(ctx, title, getState().lang);
  return { heatmaps, active, draw, wire, redrawResized, narrowest };
}
