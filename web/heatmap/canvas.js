// canvas.js - drawHeatmap's part: a checked matrix (read.js) drawn into a canvas or an
// OffscreenCanvas: the map as one ImageData (pixels.js, colours from colour.js's lookup table),
// and when asked for, the legend (renderHeatmap's ticks) and the labels where they are legible.
// The layout is in the canvas's own pixels (canvas.width × canvas.height, not CSS pixels).
import { describe, checkLabels, checkScalars, readScale, checkValue } from './read.js';
import { colour, rampPosition, position } from './colour.js';
import { FONT_STACK, legendTicks } from './draw.js';
import { clean, fit } from './text.js';
import { fillPixels, packLut, colourLut, lutIndex } from './pixels.js';

// no cell budget (its cost is the canvas's pixels, and the matrix is the caller's); a canvas of at
// most 8,192 px a side and 8,192 × 8,192 pixels (256 MiB of RGBA) in all. Here, not in budgets.js:
// the element, which draws SVG only, loads that file and not this one.
export const MAX_CANVAS_SIDE = 8192;
export const MAX_CANVAS_PIXELS = 67108864;

const WHO = 'drawHeatmap';
export const DRAW_OPTION_KEYS = ['rowLabels', 'colLabels', 'min', 'max', 'scale', 'colourScale', 'legend', 'reduce', 'textColour'];
const LABEL_FONT = 11, TICK_FONT = 11;
const LABEL_MIN_CELL = 12;      // a label per row (column) only where a row (column) is this many pixels
const MAX_LABEL_EM = 10;        // longer labels are cut with "…", as renderHeatmap's
const TEXT_COLOUR = '#1f2328';  // renderHeatmap's standalone colour

/** drawHeatmap's options with their defaults, checked, and the colour domain of the values. */
export function readDrawOptions(options, rows, cols, values, range) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${WHO}: options must be an object; received ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!DRAW_OPTION_KEYS.includes(key)) throw new TypeError(`${WHO}: unknown option "${key}"; expected one of ${DRAW_OPTION_KEYS.join(', ')}`);
  }
  const { min, max, scale = 'sequential', colourScale = 'unit', legend = true, reduce = 'max', textColour = TEXT_COLOUR } = options;
  checkScalars({ lang: 'zh', decimals: 2, standalone: false, legend, scale, min, max }, WHO);
  if (reduce !== 'max' && reduce !== 'mean') throw new RangeError(`${WHO}: reduce must be "max" or "mean"; received ${describe(reduce)}`);
  if (typeof textColour !== 'string') throw new TypeError(`${WHO}: textColour must be a CSS colour string; received ${describe(textColour)}`);
  const { rowLabels, colLabels } = options;
  if (rowLabels !== undefined) checkLabels(rowLabels, rows, 'rowLabels', rows === 1 ? 'row' : 'rows', WHO);
  if (colLabels !== undefined) checkLabels(colLabels, cols, 'colLabels', cols === 1 ? 'column' : 'columns', WHO);
  const { dmin, dmax } = readScale(values, null, { scale, colourScale, min, max }, WHO, range);
  return { scale, colourScale, legend, reduce, textColour, rowLabels, colLabels, dmin, dmax };
}

/** The canvas's 2D context, its size checked against the budget. */
export function context2d(canvas) {
  if (canvas === null || typeof canvas !== 'object' || typeof canvas.getContext !== 'function') {
    throw new TypeError(`${WHO}: canvas must be an HTMLCanvasElement or an OffscreenCanvas; received ${describe(canvas)}`);
  }
  const { width: W, height: H } = canvas;
  if (!(Number.isInteger(W) && Number.isInteger(H) && W >= 1 && H >= 1 && W <= MAX_CANVAS_SIDE && H <= MAX_CANVAS_SIDE && W * H <= MAX_CANVAS_PIXELS)) {
    throw new RangeError(`${WHO}: the canvas is ${W}×${H}; it must be 1 to ${MAX_CANVAS_SIDE} pixels a side, at most ${MAX_CANVAS_PIXELS} pixels in all`);
  }
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new TypeError(`${WHO}: the canvas gave no 2d context (it already has another kind, such as webgl)`);
  return { ctx, W, H };
}

/** Draw and return { rows, cols, plot, domain, cellAt } (heatmap.d.ts, DrawnHeatmap). */
export function paint(canvas, rows, cols, values, o) {
  const { ctx, W, H } = context2d(canvas);
  const L = layout(ctx, W, H, rows, cols, o);
  const { plot } = L;
  if (L.framed) ctx.clearRect(0, 0, W, H);
  const image = ctx.createImageData(plot.width, plot.height);
  fillPixels(new Uint32Array(image.data.buffer, image.data.byteOffset, plot.width * plot.height), values, rows, cols,
    plot.width, plot.height, { reduce: o.reduce, toIndex: indexer(o), lut32: packLut(colourLut(o)) });
  ctx.putImageData(image, plot.x, plot.y);
  if (L.legend) drawLegend(ctx, L, o);
  if (L.rowLabels) drawRowLabels(ctx, L, rows, o);
  if (L.colLabels) drawColLabels(ctx, L, cols, o);
  return {
    rows, cols, plot, domain: { min: o.dmin, max: o.dmax },
    cellAt(x, y) {
      const u = x - plot.x, v = y - plot.y;
      if (!(u >= 0 && u < plot.width && v >= 0 && v < plot.height)) return null;
      const row = Math.min(rows - 1, Math.floor((v * rows) / plot.height)), col = Math.min(cols - 1, Math.floor((u * cols) / plot.width));
      return { row, col, value: values[row * cols + col] };
    },
  };
}

/**
 * value -> the lookup table's entry: colour.js's rampPosition, with its sequential cases written
 * out (the same arithmetic, without a call and its branches per pixel).
 */
function indexer(o) {
  const a = o.dmin, span = o.dmax - o.dmin;
  if (o.scale !== 'sequential') return (v) => lutIndex(rampPosition(v, o));
  if (o.colourScale === 'log') {
    const la = Math.log10(o.dmin), lb = Math.log10(o.dmax), lspan = lb - la;
    return (v) => (v > 0 ? lutIndex((Math.log10(v) - la) / lspan) : 0);
  }
  return Number.isFinite(span) ? (v) => lutIndex((v - a) / span) : (v) => lutIndex(rampPosition(v, o));
}

// ----------------------------------------------------------------------------
// layout: the plot is the whole canvas unless the legend or labels are asked for; then the legend
// takes a strip on the right, row labels on the left and column labels (upright) on top, each
// axis's labels only if its cells are at least LABEL_MIN_CELL pixels (else they take no room)

function layout(ctx, W, H, rows, cols, o) {
  const legend = o.legend ? legendPlace(ctx, o) : null;
  const pad = legend ? Math.ceil(TICK_FONT / 2) + 1 : 0;     // the end ticks' text overhangs the ramp
  let rowLabels = o.rowLabels ? labelPlace(ctx, o.rowLabels) : null;
  let colLabels = o.colLabels ? labelPlace(ctx, o.colLabels) : null;
  let plot;
  for (let pass = 0; pass < 3; pass++) {
    const left = rowLabels ? rowLabels.size : 0, top = Math.max(pad, colLabels ? colLabels.size : 0);
    plot = { x: left, y: top, width: W - left - (legend ? legend.width : 0), height: H - top - pad };
    if (rowLabels && plot.height / rows < LABEL_MIN_CELL) rowLabels = null;
    else if (colLabels && plot.width / cols < LABEL_MIN_CELL) colLabels = null;
    else break;
  }
  if (plot.width < 1 || plot.height < 1) {
    throw new RangeError(`${WHO}: a ${W}×${H} canvas leaves no room for the map beside the legend and labels; make it larger or pass legend: false`);
  }
  return { plot, legend, rowLabels, colLabels, framed: Boolean(legend || rowLabels || colLabels) };
}

const font = (px) => `${px}px ${FONT_STACK}`;

/** The legend's ticks and width: a 12 px ramp 12 px right of the map, tick marks, labels. */
function legendPlace(ctx, o) {
  const { ticks, labels } = legendTicks(o);
  ctx.font = font(TICK_FONT);
  const textW = Math.max(...labels.map((l) => ctx.measureText(l).width));
  return { ticks, labels, gap: 12, rampW: 12, width: Math.ceil(12 + 12 + 7 + textW + 2) };
}

/** Labels cut to MAX_LABEL_EM as renderHeatmap's, and the room they take (widest + 6 px). */
function labelPlace(ctx, labels) {
  ctx.font = font(LABEL_FONT);
  const texts = labels.map((l) => fit(clean(l), MAX_LABEL_EM).text);
  const widest = texts.reduce((w, t) => Math.max(w, ctx.measureText(t).width), 0);
  return { texts, size: Math.ceil(widest + 6) };
}

function drawLegend(ctx, { plot, legend }, o) {
  const x = plot.x + plot.width + legend.gap, h = plot.height;
  for (let y = 0; y < h; y++) {                              // one row per pixel, top = dmax
    const rgb = colour(legendValue(1 - (y + 0.5) / h, o), o);
    ctx.fillStyle = `rgb(${rgb[0]},${rgb[1]},${rgb[2]})`;
    ctx.fillRect(x, plot.y + y, legend.rampW, 1);
  }
  ctx.fillStyle = o.textColour;
  ctx.strokeStyle = o.textColour;
  ctx.font = font(TICK_FONT);
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  legend.ticks.forEach((v, k) => {
    const y = plot.y + h * (1 - position(v, o));
    ctx.fillRect(x + legend.rampW, Math.min(plot.y + h - 1, Math.floor(y)), 4, 1);
    ctx.fillText(legend.labels[k], x + legend.rampW + 7, y);
  });
}

/** The value at s (0 bottom, 1 top) of the legend: even steps, or even in log10 with colourScale 'log'. */
function legendValue(s, o) {
  if (o.colourScale === 'log') return o.dmin * (o.dmax / o.dmin) ** s;
  const span = o.dmax - o.dmin;
  return Number.isFinite(span) ? o.dmin + span * s : o.dmin * (1 - s) + o.dmax * s;
}

function drawRowLabels(ctx, { plot, rowLabels }, rows, o) {
  ctx.fillStyle = o.textColour;
  ctx.font = font(LABEL_FONT);
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  rowLabels.texts.forEach((t, i) => ctx.fillText(t, plot.x - 4, plot.y + ((i + 0.5) * plot.height) / rows));
}

function drawColLabels(ctx, { plot, colLabels }, cols, o) {
  ctx.fillStyle = o.textColour;
  ctx.font = font(LABEL_FONT);
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  colLabels.texts.forEach((t, j) => {
    ctx.save();
    ctx.translate(plot.x + ((j + 0.5) * plot.width) / cols, plot.y - 4);
    ctx.rotate(-Math.PI / 2);                                  // upright, read bottom to top
    ctx.fillText(t, 0, 0);
    ctx.restore();
  });
}

/**
 * A float array is all numbers: one tight pass finds the first NaN or ±Infinity (x - x is not 0),
 * named as checkValue names it, and the range: { lo, hi, pos } (pos: the smallest value > 0).
 */
export function floatRange(data, cols, how) {
  let lo = Infinity, hi = -Infinity, pos = Infinity;
  for (let p = 0; p < data.length; p++) {
    const x = data[p];
    if (x - x !== 0) checkValue(x, `matrix value [${Math.floor(p / cols)}][${p % cols}]`, how);
    if (x < lo) lo = x;
    if (x > hi) hi = x;
    if (x > 0 && x < pos) pos = x;
  }
  return { lo, hi, pos };
}
