// page-fit.js - a heatmap drawn where its text can be read (issue 39 P7): as large as its box
// allows, never so small that a label, a caption or a legend's tick is under MIN_TEXT_PX, and its
// cell numbers hidden where they would be under MIN_VALUE_PX (the top map's rule, page-scroll.js).
//
//   fitHeatmap(matrix, options, width, { min, max })  -> { svg, cellSize }   renderHeatmap's string
//   narrowestWidth(matrix, options)                   the drawing's width with cells of MIN_CELL px
//   legibleWidth(svg)        the narrowest an <svg> of renderHeatmap's may be drawn, in CSS px
//   sizeToBox(box)           the box's SVG: its own width at most, the box's if narrower, never
//                            under legibleWidth (page.css reads --svg-width, --svg-min-width;
//                            the box scrolls then)
//   numbersTooSmall(svg, scale)   whether its cell numbers would be drawn under MIN_VALUE_PX
//
// The renderer (web/heatmap/draw.js) draws labels at round(0.6 · cell) px (8 to 14), captions at
// 13, legend ticks at 11 and numbers at most 0.3 · cell: a map drawn at its own width with cells
// of MIN_CELL px or more has labels of 9 px or more. Its sizes are read from the drawing, not
// assumed, so a change there is followed here.
import { renderHeatmap } from '../heatmap/heatmap.js';

export const MIN_TEXT_PX = 9;
export const MIN_VALUE_PX = 10;
export const MIN_CELL = 15;           // labels round(0.6 · 15) = 9 px

const drawnWidth = (svg) => Number(/^<svg [^>]*? width="([\d.]+)"/.exec(svg)[1]);

/**
 * renderHeatmap with the largest cells in [min, max] px whose drawing (labels, captions, legend)
 * is at most width px wide, or cells of min px when none is. The width is known only after
 * drawing (the renderer measures its labels and legend): a guess, then corrected; the renderer
 * renders once per try and two or three tries settle.
 */
export function fitHeatmap(matrix, options, width, { min = MIN_CELL, max = 52 } = {}) {
  const n = matrix.length, clamp = (c) => Math.max(min, Math.min(max, Math.floor(c)));
  let cellSize = clamp((width - 60) / n), svg;
  for (let tries = 0; tries < 5; tries++) {
    svg = renderHeatmap(matrix, { ...options, cellSize });
    const drawn = drawnWidth(svg);
    const next = drawn <= width ? cellSize : clamp(cellSize - Math.ceil((drawn - width) / n));
    if (next === cellSize) break;
    cellSize = next;
  }
  return { svg, cellSize };
}

/** The width of renderHeatmap's drawing of matrix with cells of MIN_CELL px: about the narrowest it is legible. */
export const narrowestWidth = (matrix, options) => drawnWidth(renderHeatmap(matrix, { ...options, cellSize: MIN_CELL }));

/**
 * The narrowest an <svg> drawn by renderHeatmap may be shown: where its smallest text is
 * MIN_TEXT_PX (cell numbers aside: numbersTooSmall hides them), never wider than it is drawn.
 */
export function legibleWidth(svg) {
  const natural = Number(svg.getAttribute('width'));
  const sizes = [...svg.querySelectorAll('text:not(.cell-value)')].map((t) => Number(t.getAttribute('font-size'))).filter((f) => f > 0);
  return sizes.length ? natural * Math.min(1, MIN_TEXT_PX / Math.min(...sizes)) : 0;
}

/** The SVG in box shrinks with the box down to legibleWidth, no further (page.css). */
export function sizeToBox(box) {
  const svg = box.querySelector('svg');
  box.style.setProperty('--svg-width', `${Number(svg.getAttribute('width'))}px`);
  box.style.setProperty('--svg-min-width', `${Math.ceil(legibleWidth(svg))}px`);
}

/** Whether the cell numbers of svg, drawn at scale (CSS px per SVG unit), would be under MIN_VALUE_PX (or there are none). */
export function numbersTooSmall(svg, scale) {
  const v = svg.querySelector('.cell-value');
  return !v || Number(v.getAttribute('font-size')) * scale < MIN_VALUE_PX;
}
