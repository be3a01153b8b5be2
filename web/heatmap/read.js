// read.js - the renderer's input, checked: the matrix, the labels, the mask and the options. Every
// message names what was expected and what came. Pure.
//
// FULL_API (scripts/build-embed.js): <attention-heatmap> passes the core's { data: Float32Array,
// shape } (or a shape over the cell budget, to get checkSize's message), its own idPrefix, role,
// labels (one string per row) and masked 'causal', and options that pass every check: in the
// one-file embed the statements labelled FULL_API are left out.
import * as TEXT from '../strings/heatmap.js';
import { clean } from './text.js';

import { MAX_CELLS } from './budgets.js';
const ROLES = ['img', 'group', 'grid'];

export function describe(x) {
  if (x === null) return 'null';
  if (x === undefined) return 'undefined';
  if (Array.isArray(x)) return `an array of length ${x.length}`;
  if (ArrayBuffer.isView(x)) return `a ${x.constructor.name} of length ${x.length}`;
  if (typeof x === 'object') return `an object with keys [${Object.keys(x).join(', ')}]`;
  if (typeof x === 'string') return `the string ${JSON.stringify(x.length > 40 ? x.slice(0, 40) + '…' : x)}`;
  return `${typeof x} ${String(x)}`;
}

/** A row of a matrix: an array or a typed array (not a DataView). */
export const isList = (x) => Array.isArray(x) || (ArrayBuffer.isView(x) && !(x instanceof DataView));

function checkSize(rows, cols, { budget }) {
  if (budget && rows * cols > MAX_CELLS) {
    throw new RangeError(`renderHeatmap: a ${rows}×${cols} matrix has ${rows * cols} cells; at most ${MAX_CELLS} (256×256) can be drawn`);
  }
}

export function checkValue(x, where, { who }) {
  if (typeof x !== 'number') throw new TypeError(`${who}: ${where} must be a number; received ${describe(x)}`);
  if (!Number.isFinite(x)) throw new RangeError(`${who}: ${where} is ${x}; every value must be a finite number`);
}

// How the matrix is read. renderHeatmap's: at most MAX_CELLS, values copied into an Array (the
// SVG's code maps and joins them). drawHeatmap's (CANVAS_READ): no cell budget (a canvas costs
// pixels, not cells), and a Float32Array or Float64Array `data` used as it is, checked by
// canvas.js's floatRange in the pass that also measures its range; any other input is checked and
// copied into a Float64Array here.
const SVG_READ = { who: 'renderHeatmap', budget: true, typed: false };
export const CANVAS_READ = { who: 'drawHeatmap', budget: false, typed: true };

/** { rows, cols, values (row-major) } of a checked matrix; `how` is SVG_READ (the default) or CANVAS_READ. */
export function readMatrix(matrix, how = SVG_READ) {
  const { who } = how;
  FULL_API: if (Array.isArray(matrix)) return readNested(matrix, how);
  FULL_API: if (!(matrix !== null && typeof matrix === 'object' && 'data' in matrix && 'shape' in matrix)) {
    throw new TypeError(`${who}: matrix must be number[][] or { data: Float32Array | number[], shape: [rows, cols] }; received ${describe(matrix)}`);
  }
  const { rows, cols } = readShape(matrix.shape, 'matrix', how);
  const { data } = matrix;
  FULL_API: if (!isList(data)) {
    throw new TypeError(`${who}: matrix.data must be a Float32Array, Float64Array or number[]; received ${describe(data)}`);
  }
  FULL_API: if (data.length !== rows * cols) {
    throw new RangeError(`${who}: matrix.data has ${data.length} values but shape [${rows}, ${cols}] needs ${rows * cols}`);
  }
  // drawHeatmap's Float32Array or Float64Array is used as it is: canvas.js checks it in its range pass
  FULL_API: if (how.typed && (data instanceof Float32Array || data instanceof Float64Array)) return { rows, cols, values: data };
  const values = how.typed ? new Float64Array(rows * cols) : new Array(rows * cols);
  for (let p = 0; p < values.length; p++) {
    checkValue(data[p], `matrix value [${Math.floor(p / cols)}][${p % cols}]`, how);
    values[p] = data[p];
  }
  return { rows, cols, values };
}


// number[][]
function readNested(matrix, how) {
  const { who } = how;
  const rows = matrix.length;
  if (rows === 0) throw new RangeError(`${who}: matrix has no rows; expected number[][] with at least one row and one column`);
  if (!isList(matrix[0])) {
    throw new TypeError(`${who}: matrix must be number[][]; matrix[0] is ${describe(matrix[0])}`);
  }
  const cols = matrix[0].length;
  if (cols === 0) throw new RangeError(`${who}: matrix[0] has no columns; expected at least one`);
  checkSize(rows, cols, how);
  const values = how.typed ? new Float64Array(rows * cols) : new Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    const row = matrix[i];
    if (!isList(row)) throw new TypeError(`${who}: matrix[${i}] must be an array of numbers; received ${describe(row)}`);
    if (row.length !== cols) {
      throw new RangeError(`${who}: matrix is ragged: matrix[0] has ${cols} columns but matrix[${i}] has ${row.length}`);
    }
    for (let j = 0; j < cols; j++) {
      checkValue(row[j], `matrix[${i}][${j}]`, how);
      values[i * cols + j] = row[j];
    }
  }
  return { rows, cols, values };
}

function readShape(shape, name, how) {
  FULL_API: if (!Array.isArray(shape) || shape.length !== 2 || !shape.every((d) => Number.isInteger(d) && d >= 1)) {
    throw new TypeError(`${how.who}: ${name}.shape must be [rows, cols] of positive integers; received ${JSON.stringify(shape) ?? String(shape)}`);
  }
  checkSize(shape[0], shape[1], how);
  return { rows: shape[0], cols: shape[1] };
}

function readLabels(labels, count, name, axis) {
  if (labels === undefined) return Array.from({ length: count }, (_, i) => String(i));
  FULL_API: checkLabels(labels, count, name, axis);
  return labels;
}

export function checkLabels(labels, count, name, axis, who = 'renderHeatmap') {
  if (!Array.isArray(labels)) throw new TypeError(`${who}: ${name} must be an array of strings; received ${describe(labels)}`);
  if (labels.length !== count) {
    throw new RangeError(`${who}: ${name} has ${labels.length} labels but the matrix has ${count} ${axis}`);
  }
  labels.forEach((l, i) => {
    if (typeof l !== 'string') throw new TypeError(`${who}: ${name}[${i}] must be a string; received ${describe(l)}`);
  });
}

function readMask(masked, rows, cols) {
  if (masked === undefined || masked === null) return null;
  if (masked === 'causal') {                   // query i sees keys j <= i
    const out = new Uint8Array(rows * cols);
    for (let i = 0; i < rows; i++) for (let j = i + 1; j < cols; j++) out[i * cols + j] = 1;
    return out;
  }
  FULL_API: return readGivenMask(masked, rows, cols);
}

// boolean[][] or { data, shape }
function readGivenMask(masked, rows, cols) {
  const out = new Uint8Array(rows * cols);
  const flag = (b, where) => {
    if (b === true || b === 1) return 1;
    if (b === false || b === 0) return 0;
    throw new TypeError(`renderHeatmap: ${where} must be true or false (true = masked out); received ${describe(b)}`);
  };
  if (Array.isArray(masked)) {
    if (masked.length !== rows) {
      throw new RangeError(`renderHeatmap: masked has ${masked.length} rows but the matrix has ${rows}; expected a ${rows}×${cols} boolean[][]`);
    }
    for (let i = 0; i < rows; i++) {
      const row = masked[i];
      if (!isList(row)) throw new TypeError(`renderHeatmap: masked[${i}] must be an array of booleans; received ${describe(row)}`);
      if (row.length !== cols) throw new RangeError(`renderHeatmap: masked[${i}] has ${row.length} columns but the matrix has ${cols}`);
      for (let j = 0; j < cols; j++) out[i * cols + j] = flag(row[j], `masked[${i}][${j}]`);
    }
    return out;
  }
  if (typeof masked === 'object' && 'data' in masked && 'shape' in masked) {
    const s = masked.shape;
    if (!Array.isArray(s) || s[0] !== rows || s[1] !== cols || s.length !== 2) {
      throw new RangeError(`renderHeatmap: masked.shape must be [${rows}, ${cols}] like the matrix; received ${JSON.stringify(s) ?? String(s)}`);
    }
    if (!isList(masked.data) || masked.data.length !== rows * cols) {
      throw new TypeError(`renderHeatmap: masked.data must be a Uint8Array or boolean[] of ${rows * cols} values; received ${describe(masked.data)}`);
    }
    for (let p = 0; p < out.length; p++) out[p] = masked.data[p] ? 1 : 0;
    return out;
  }
  throw new TypeError(`renderHeatmap: masked must be "causal", boolean[][] or { data: Uint8Array, shape: [${rows}, ${cols}] }; received ${describe(masked)}`);
}


/** The options with their defaults, checked (labels and mask against the matrix's shape). */
export function readOptions(options, rows, cols, values) {
  const { title, lang = 'zh', decimals = 2, standalone = false, idPrefix, min, max,
    scale = 'sequential', legend = true, cellSize } = options;
  FULL_API: checkScalars({ title, lang, decimals, standalone, legend, scale, idPrefix, cellSize, min, max });
  const rowLabels = readLabels(options.rowLabels, rows, 'rowLabels', rows === 1 ? 'row' : 'rows');
  const colLabels = readLabels(options.colLabels, cols, 'colLabels', cols === 1 ? 'column' : 'columns');
  const masked = readMask(options.masked, rows, cols);
  const { colourScale = 'unit' } = options;
  const { dmin, dmax } = readScale(values, masked, { scale, colourScale, min, max });
  const t = TEXT[lang];
  return {
    lang, t, decimals, standalone, legend, scale, colourScale, rowLabels, colLabels, masked,
    title: title ?? t.title,
    dmin, dmax,
    cellSize: cellSize ?? Math.min(56, Math.max(14, Math.round(512 / Math.max(rows, cols)))),
    idPrefix: idPrefix ?? defaultId(rows, cols, values, rowLabels, colLabels, masked),
    ...readAccessible(options, rows, cols, t),
  };
}

/**
 * The colour domain { dmin, dmax } of the values (not the masked ones) for scale, colourScale, min
 * and max (checked by checkScalars). With no mask, a range { lo, hi, pos } (canvas.js floatRange) stands for
 * the values: the domain depends on their extremes only.
 */
export function readScale(values, masked, { scale, colourScale, min, max }, who = 'renderHeatmap', range) {
  if (range) values = colourScale === 'log' ? (range.hi > 0 ? [range.pos, range.hi] : []) : [range.lo, range.hi];
  FULL_API: if (colourScale !== 'unit') return readDataDomain(values, masked, colourScale, scale, min, max, who);
  return readDomain(values, scale, min, max, who);
}

export function checkScalars({ title, lang, decimals, standalone, legend, scale, idPrefix, cellSize, min, max }, who = 'renderHeatmap') {
  if (lang !== 'zh' && lang !== 'en') throw new RangeError(`${who}: lang must be "zh" or "en"; received ${describe(lang)}`);
  if (title !== undefined && typeof title !== 'string') throw new TypeError(`${who}: title must be a string; received ${describe(title)}`);
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 10) {
    throw new RangeError(`${who}: decimals must be an integer from 0 to 10; received ${describe(decimals)}`);
  }
  for (const [k, v] of [['standalone', standalone], ['legend', legend]]) {
    if (typeof v !== 'boolean') throw new TypeError(`${who}: ${k} must be true or false; received ${describe(v)}`);
  }
  if (scale !== 'sequential' && scale !== 'diverging') {
    throw new RangeError(`${who}: scale must be "sequential" or "diverging"; received ${describe(scale)}`);
  }
  if (idPrefix !== undefined && (typeof idPrefix !== 'string' || !/^[A-Za-z][A-Za-z0-9_-]*$/.test(idPrefix))) {
    throw new TypeError(`${who}: idPrefix must be a letter followed by letters, digits, "-" or "_"; received ${describe(idPrefix)}`);
  }
  if (cellSize !== undefined && (typeof cellSize !== 'number' || !(cellSize >= 8 && cellSize <= 200))) {
    throw new RangeError(`${who}: cellSize must be a number from 8 to 200 (pixels); received ${describe(cellSize)}`);
  }
  for (const [k, v] of [['min', min], ['max', max]]) {
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v))) {
      throw new RangeError(`${who}: ${k} must be a finite number; received ${describe(v)}`);
    }
  }
}

/**
 * colourScale 'data' or 'log' (sequential only): the domain is the range of the cells that are not
 * masked (so the hatched zeros of a causal mask do not stretch it); for 'log' it starts at the
 * smallest positive one (cells <= 0 take the bottom colour). min and max still win.
 */
function readDataDomain(values, masked, colourScale, scale, min, max, who) {
  if (colourScale !== 'data' && colourScale !== 'log') {
    throw new RangeError(`${who}: colourScale must be "unit", "data" or "log"; received ${describe(colourScale)}`);
  }
  if (scale !== 'sequential') throw new RangeError(`${who}: colourScale "${colourScale}" needs scale "sequential"; received scale ${describe(scale)}`);
  let lo = Infinity, hi = -Infinity;
  values.forEach((v, p) => {
    if ((masked && masked[p]) || (colourScale === 'log' && !(v > 0))) return;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  });
  if (!(lo <= hi)) [lo, hi] = colourScale === 'log' ? [1e-3, 1] : [0, 1];   // nothing left to measure
  if (min !== undefined) lo = min;
  if (max !== undefined) hi = max;
  if (colourScale === 'log' && lo === hi && min === undefined) lo = hi / 10;   // one value: the top of a decade
  if (colourScale === 'log' && !(lo > 0 && hi > lo)) {
    throw new RangeError(`${who}: colourScale "log" needs 0 < min < max; received min ${lo}, max ${hi}`);
  }
  return readDomain([lo, hi], 'sequential', lo === hi ? undefined : lo, lo === hi ? undefined : hi, who);
}

/** The colour domain [dmin, dmax]: finite, dmin < dmax, min and max where given. */
function readDomain(values, scale, min, max, who) {
  let lo = Infinity, hi = -Infinity;
  for (const v of values) { if (v < lo) lo = v; if (v > hi) hi = v; }
  let dmin, dmax;
  if (scale === 'sequential') {
    [dmin, dmax] = lo >= 0 && hi <= 1 ? [0, 1] : [lo, hi];
  } else {
    const a = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
    [dmin, dmax] = [-a, a];
  }
  if (min !== undefined) dmin = min;
  if (max !== undefined) dmax = max;
  FULL_API: if (min !== undefined && max !== undefined && !(min < max)) {
    throw new RangeError(`${who}: min must be less than max; received min ${min}, max ${max}`);
  }
  if (!(dmin < dmax)) {
    // one distinct value, or only one end given: widen around it
    if (min !== undefined) dmax = dmin + (Math.abs(dmin) || 1);
    else if (max !== undefined) dmin = dmax - (Math.abs(dmax) || 1);
    else { const c = dmin, w = Math.abs(c) || 1; dmin = c - w; dmax = c + w; }
  }
  // stay finite (widening 1e308 overflows); min = MAX_VALUE alone leaves one ulp of room
  const BIG = Number.MAX_VALUE;
  dmin = Math.max(dmin, -BIG);
  dmax = Math.min(dmax, BIG);
  if (!(dmin < dmax)) {
    if (dmax === BIG) dmin = BIG - BIG * 2 ** -52; else dmax = dmin + Math.abs(dmin) * 2 ** -52;
  }
  return { dmin, dmax };
}

/** What assistive technology and the keyboard get: roles, the tab stop, cell labels, captions. */
function readAccessible(options, rows, cols, t) {
  const { role = 'img', activeCell, focusRing = false, cellLabel, rowCaption = t.rows, colCaption = t.cols, description } = options;
  FULL_API: checkAccessible({ role, activeCell, focusRing, cellLabel, rowCaption, colCaption, description }, rows, cols);
  return {
    role, activeCell, focusRing, cellLabel, rowCaption: clean(rowCaption), colCaption: clean(colCaption),
    description: description === undefined ? undefined : clean(description),
  };
}

function checkAccessible({ role, activeCell, focusRing, cellLabel, rowCaption, colCaption, description }, rows, cols) {
  if (!ROLES.includes(role)) throw new RangeError(`renderHeatmap: role must be "img", "group" or "grid"; received ${describe(role)}`);
  if (activeCell !== undefined) {
    if (!Array.isArray(activeCell) || activeCell.length !== 2 || !activeCell.every(Number.isInteger)) {
      throw new TypeError(`renderHeatmap: activeCell must be [row, col], two integers; received ${describe(activeCell)}`);
    }
    const [i, j] = activeCell;
    if (i < 0 || i >= rows || j < 0 || j >= cols) {
      throw new RangeError(`renderHeatmap: activeCell [${i}, ${j}] is outside the ${rows}×${cols} matrix`);
    }
  }
  if (typeof focusRing !== 'boolean') throw new TypeError(`renderHeatmap: focusRing must be true or false; received ${describe(focusRing)}`);
  if (focusRing && activeCell === undefined) throw new TypeError('renderHeatmap: focusRing needs activeCell, the cell it surrounds');
  if (cellLabel !== undefined && typeof cellLabel !== 'function') {
    throw new TypeError(`renderHeatmap: cellLabel must be a function (cell) => string; received ${describe(cellLabel)}`);
  }
  for (const [k, v] of [['rowCaption', rowCaption], ['colCaption', colCaption], ['description', description]]) {
    if (v !== undefined && typeof v !== 'string') throw new TypeError(`renderHeatmap: ${k} must be a string; received ${describe(v)}`);
  }
}

// FNV-1a over the data, so that the default ids differ between different heatmaps on one page
// and stay the same for the same input.
// (the element always gives its own idPrefix)
function defaultId(rows, cols, values, rowLabels, colLabels, masked) {
  FULL_API: return `attnmap-${hash(rows, cols, values, rowLabels, colLabels, masked)}`;
}

function hash(rows, cols, values, rowLabels, colLabels, masked) {
  let h = 0x811c9dc5;
  const s = `${rows}x${cols}|${values.join(',')}|${rowLabels.join('\u0000')}|${colLabels.join('\u0000')}|${masked ? masked.join('') : ''}`;
  for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193); }
  return (h >>> 0).toString(36);
}
