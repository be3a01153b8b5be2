// heatmap.js - an attention matrix as an SVG heatmap, as a pure function.
//
//   import { renderHeatmap } from 'attnmap/heatmap';
//   const svg = renderHeatmap(weights, { rowLabels: ['猫', '吃', '鱼'], colLabels: ['猫', '吃', '鱼'] });
//
// Rows are queries (who is looking), columns are keys (who is looked at). No DOM, no
// dependencies, the same string for the same input: it runs in Node (static export, snapshot
// tests) and in browsers (the widget inserts it into a shadow root).
//
// Content-Security-Policy: unless `standalone` is set, the output holds no <style> element and
// no style="" attribute, only presentation attributes (fill=, font-size=, ...) and class names,
// so it can be inserted under `style-src 'self'`. Page CSS can target:
//   svg.attnmap                 the root (give it max-width: 100%; height: auto)
//   .attnmap-title              the title        .axis-caption      the two axis captions
//   .row-label, .col-label      the tokens       .cell-group        one <g> per cell
//   rect.cell                   the cell         .cell-value        the number in a cell
//   .cell-values                the numbers, in one aria-hidden group after the cells
//   .legend                     the colour ramp  .masked-key        the "masked" key
//   .ring .ring-outer .ring-inner                   the focus ring (option focusRing)
// Labels and captions use fill="currentColor", so they follow the page's `color`.
//
// Callers pass options and insert the string as it is: roles, tab stops, cell labels, captions
// and the description are options (role, activeCell, focusRing, cellLabel, rowCaption, colCaption,
// description), so that nobody rewrites the SVG afterwards.
//
// The parts: read.js checks the input, draw.js lays out and writes the SVG, with text.js (escaping,
// widths, number formats) and colour.js (scales, legend ticks); the words are in ../strings/heatmap.js.
//
// drawHeatmap(canvas, matrix, options) draws the same scales into a canvas or an OffscreenCanvas
// instead, for maps too large for an SVG (4,096 × 4,096 and beyond): canvas.js lays it out and
// pixels.js maps the cells to pixels (the max of the cells a pixel covers, by default).
import { readMatrix, CANVAS_READ } from './read.js';
import { readDrawOptions, paint, floatRange } from './canvas.js';

export { renderHeatmap } from './svg.js';   // the element imports svg.js alone: no canvas code

/**
 * Draw a matrix into a canvas or an OffscreenCanvas, filling it (see heatmap.d.ts). Returns
 * { rows, cols, plot, domain, cellAt(x, y) } for hit-testing.
 * @param {HTMLCanvasElement | OffscreenCanvas} canvas
 * @param {number[][] | {data: ArrayLike<number>, shape: [number, number]}} matrix
 * @param {object} [options]
 */
export function drawHeatmap(canvas, matrix, options = {}) {
  const { rows, cols, values } = readMatrix(matrix, CANVAS_READ);
  const range = floatRange(values, cols, CANVAS_READ);   // the values checked finite, and their extremes
  return paint(canvas, rows, cols, values, readDrawOptions(options, rows, cols, values, range));
}
