// page-grid.js - a layer × head grid of small maps, and one of them enlarged with cells a reader can
// point at and move through (issue 24, defect 10). The checkpoint section's grid (page-checkpoint.js)
// is the model: each small map is a <button class="thumb"> holding thumbSvg (page-thumbs.js), and
// the one chosen is drawn by renderHeatmap, big, with its tokens and numbers. Here the enlarged map
// is also a WAI-ARIA grid: one tab stop, the arrow keys (grid-keys.js), hover, and a line that
// says the active cell's value.
//
//   thumbButtons(h, { L, H, rowsOf, label, attrs, layerShort, headShort })  // the grid's children
//   markThumb(grid, layer, head)                                            // which one is enlarged
//   bigCellSize(width, n, labelPx)  -> { cellSize, values }                 // readable at 320 px
//   wireCells(box, { size(), move(i, j, focus) })                           // pointer and keys
//   markCell(container, i, j, focus)                                        // tab stop, ring, bold labels
//   argmax(row)                                                             // a row's largest value's column
//
// Readable: the SVG of the enlarged map is never scaled down (page.css gives it max-width: none
// and its box scrolls), so its font sizes are the renderer's: labels round(0.6 · cell) px, numbers
// at most 0.3 · cell px. Cells under MIN_VALUE_CELL px would draw numbers under 9 px: the numbers
// are hidden then (the cell's name and the active-cell line still give them).
import { thumbSvg } from './page-thumbs.js';
import { gridKey } from '../heatmap/grid-keys.js';

export const MIN_LABEL_CELL = 16;      // labels round(0.6 · 16) = 10 px
export const MIN_VALUE_CELL = 34;      // "0.00" at min(0.3 · 34, (34 − 10) / 2.2 em) ≈ 10 px

/** The corner, the head numbers, then per layer its number and H <button class="thumb">. */
export function thumbButtons(h, { L, H, rowsOf, label, attrs, layerShort, headShort }) {
  const out = [h('span', { class: 'ckpt-corner', 'aria-hidden': 'true' }),
    ...Array.from({ length: H }, (_, k) => h('span', { class: 'ckpt-head', 'aria-hidden': 'true' }, headShort(k)))];
  for (let l = 0; l < L; l++) {
    out.push(h('span', { class: 'ckpt-layer', 'aria-hidden': 'true' }, layerShort(l)));
    for (let k = 0; k < H; k++) {
      const b = h('button', { type: 'button', class: 'thumb', 'data-layer': l, 'data-head': k, 'aria-label': label(l, k) });
      b.innerHTML = thumbSvg(rowsOf(l, k), 'unit', attrs(l, k));      // numbers only
      out.push(b);
    }
  }
  return out;
}

/** The column of a row's largest value (the first on a tie): where an enlarged map's active cell starts. */
export const argmax = (row) => row.reduce((b, v, j) => (v > row[b] ? j : b), 0);

/** The enlarged one's thumbnail is pressed and ringed; the others are not. */
export function markThumb(grid, layer, head) {
  for (const b of grid.querySelectorAll('button.thumb')) {
    const on = Number(b.dataset.layer) === layer && Number(b.dataset.head) === head;
    b.classList.toggle('on', on);
    b.setAttribute('aria-pressed', String(on));
  }
}

/**
 * The cell size of an n × n map in a box `width` px wide, with labels about labelPx wide: as big as
 * fits (at most 48), never under MIN_LABEL_CELL (the box scrolls then); values: whether the
 * numbers are drawn readably (cells of MIN_VALUE_CELL px or more).
 */
export function bigCellSize(width, n, labelPx = 40) {
  const cellSize = Math.max(MIN_LABEL_CELL, Math.min(48, Math.floor((width - labelPx - 24) / n)));
  return { cellSize, values: cellSize >= MIN_VALUE_CELL };
}

/**
 * Pointer and keyboard on the enlarged map in box (a renderHeatmap with role 'grid'): hovering or
 * focusing a cell makes it the active one, the arrow keys (and Home, End, PageUp, PageDown) move
 * it. size(): the map's n; move(i, j, focus): the caller redraws the ring and the line.
 */
export function wireCells(box, { size, move }) {
  const cell = (e) => e.target.closest?.('g.cell-group');
  const at = (g) => [Number(g.dataset.row), Number(g.dataset.col)];
  box.addEventListener('mouseover', (e) => { const g = cell(e); if (g) move(...at(g), false); });
  box.addEventListener('focusin', (e) => { const g = cell(e); if (g) move(...at(g), false); });
  box.addEventListener('keydown', (e) => {
    const g = cell(e);
    if (!g) return;
    const n = size(), [i, j] = at(g);
    const to = gridKey(e.key, e.ctrlKey, i, j, n, n);
    if (!to) return;
    e.preventDefault();
    move(to.row, to.col, true);
  });
}

/**
 * Make cell (i, j) of the renderHeatmap in container the active one: the tab stop (focused if
 * asked), the focus ring around it (option focusRing) and its row and column labels in bold
 * (class "on"). Returns its <g>, or null. The page's heatmaps (page.js setActive) use it too.
 */
export function markCell(container, i, j, focus) {
  for (const g of container.querySelectorAll('g.cell-group[tabindex="0"]')) g.setAttribute('tabindex', '-1');
  const g = container.querySelector(`g.cell-group[data-row="${i}"][data-col="${j}"]`);
  if (!g) return null;
  g.setAttribute('tabindex', '0');
  if (focus) g.focus();
  const rect = g.querySelector('rect.cell');
  const [x, y, w] = ['x', 'y', 'width'].map((k) => Number(rect.getAttribute(k)));
  const setBox = (el, pad) => {
    if (!el) return;
    el.setAttribute('x', String(x - pad)); el.setAttribute('y', String(y - pad));
    el.setAttribute('width', String(w + 2 * pad)); el.setAttribute('height', String(w + 2 * pad));
  };
  setBox(container.querySelector('.ring-outer'), 2.5);
  setBox(container.querySelector('.ring-inner'), 0.5);
  container.querySelectorAll('.row-label, .col-label').forEach((el) => el.classList.remove('on'));
  container.querySelectorAll('.row-label')[i]?.classList.add('on');
  container.querySelectorAll('.col-label')[j]?.classList.add('on');
  return g;
}
