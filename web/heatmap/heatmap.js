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
//   .legend                     the colour ramp  .masked-key        the "masked" key
// Labels and captions use fill="currentColor", so they follow the page's `color`.

const FONT_STACK = 'system-ui, "PingFang SC", "Noto Sans CJK SC", "Microsoft YaHei", sans-serif';
const MAX_CELLS = 65536;        // 256 × 256: beyond that the SVG is tens of megabytes
const MAX_LABEL_EM = 10;        // longer labels are cut with an ellipsis (full text in <title>)
// In the cells' titles and aria-labels (2 labels, twice each) a label is cut to CELL_TEXT / cells
// characters (16 at 256×256, 12,945 at 9×9), so they hold at most 4 × CELL_TEXT whatever the tokens
const CELL_TEXT = 1048576;
const MAX_TICKS = 12;           // a legend has 2 to 6 ticks
const PAD = 12;

// viridis (matplotlib; perceptually uniform, readable with colour-vision deficiencies and in
// greyscale), 11 stops at t = 0, 0.1, ..., 1.
const VIRIDIS = ['#440154', '#482475', '#414487', '#355f8d', '#2a788e', '#21918c',
  '#22a884', '#44bf70', '#7ad151', '#bddf26', '#fde725'];
// ColorBrewer RdBu reversed: blue (negative) - white (0) - red (positive); colour-blind safe.
const RDBU = ['#053061', '#2166ac', '#4393c3', '#92c5de', '#d1e5f0', '#f7f7f7',
  '#fddbc7', '#f4a582', '#d6604d', '#b2182b', '#67001f'];

const TEXT = {
  zh: {
    title: '注意力权重',
    rows: '查询（谁在看）',
    cols: '键（被看的词）',
    masked: '已遮蔽',
    maskedWeight: '已遮蔽（权重为 0）',
    size: (r, c) => `（${r}×${c}）`,
    desc: (seq) => '行是查询（谁在看），列是键（被看的词），每个格子是这一行的词分给这一列的词的注意力。' +
      (seq ? '颜色越亮（黄）数值越大，越暗（紫）数值越小。' : '蓝色为负，红色为正，越接近白色越接近 0。'),
    domain: (a, b) => `色标范围 ${a} 到 ${b}。`,
    rowMax: '每行最大值：',
    sep: '；',
    end: '。',
    maskedCount: (k) => `有 ${k} 个格子被遮蔽（斜线）。`,
  },
  en: {
    title: 'Attention weights',
    rows: 'query (who is looking)',
    cols: 'key (who is looked at)',
    masked: 'masked',
    maskedWeight: 'masked (weight 0)',
    size: (r, c) => ` (${r}×${c})`,
    desc: (seq) => 'Rows are queries (who is looking), columns are keys (who is looked at); each cell is how much the row token attends to the column token. ' +
      (seq ? 'Brighter (yellow) means larger, darker (purple) means smaller.' : 'Blue is negative, red is positive, white is near 0.'),
    domain: (a, b) => ` Colour scale from ${a} to ${b}.`,
    rowMax: ' Largest value in each row: ',
    sep: '; ',
    end: '.',
    maskedCount: (k) => ` ${k} cells are masked (hatched).`,
  },
};

const OPTION_KEYS = ['rowLabels', 'colLabels', 'title', 'lang', 'decimals', 'masked', 'standalone',
  'idPrefix', 'min', 'max', 'scale', 'legend', 'cellSize'];

/**
 * Render a matrix (rows = queries, columns = keys) as an SVG string. See heatmap.d.ts.
 * @param {number[][] | {data: ArrayLike<number>, shape: [number, number]}} matrix
 * @param {object} [options]
 * @returns {string}
 */
export function renderHeatmap(matrix, options = {}) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`renderHeatmap: options must be an object; received ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.includes(key)) {
      throw new TypeError(`renderHeatmap: unknown option "${key}"; expected one of ${OPTION_KEYS.join(', ')}`);
    }
  }
  const { rows, cols, values } = readMatrix(matrix);
  const o = readOptions(options, rows, cols, values);
  return draw(rows, cols, values, o);
}

// ----------------------------------------------------------------------------
// input checking: every message names what was expected and what came

function describe(x) {
  if (x === null) return 'null';
  if (x === undefined) return 'undefined';
  if (Array.isArray(x)) return `an array of length ${x.length}`;
  if (ArrayBuffer.isView(x)) return `a ${x.constructor.name} of length ${x.length}`;
  if (typeof x === 'object') return `an object with keys [${Object.keys(x).join(', ')}]`;
  if (typeof x === 'string') return `the string ${JSON.stringify(x.length > 40 ? x.slice(0, 40) + '…' : x)}`;
  return `${typeof x} ${String(x)}`;
}

const isList = (x) => Array.isArray(x) || (ArrayBuffer.isView(x) && !(x instanceof DataView));

function checkSize(rows, cols) {
  if (rows * cols > MAX_CELLS) {
    throw new RangeError(`renderHeatmap: a ${rows}×${cols} matrix has ${rows * cols} cells; at most ${MAX_CELLS} (256×256) can be drawn`);
  }
}

function checkValue(x, where) {
  if (typeof x !== 'number') throw new TypeError(`renderHeatmap: ${where} must be a number; received ${describe(x)}`);
  if (!Number.isFinite(x)) throw new RangeError(`renderHeatmap: ${where} is ${x}; every value must be a finite number`);
}

function readMatrix(matrix) {
  if (Array.isArray(matrix)) {
    const rows = matrix.length;
    if (rows === 0) throw new RangeError('renderHeatmap: matrix has no rows; expected number[][] with at least one row and one column');
    if (!isList(matrix[0])) {
      throw new TypeError(`renderHeatmap: matrix must be number[][]; matrix[0] is ${describe(matrix[0])}`);
    }
    const cols = matrix[0].length;
    if (cols === 0) throw new RangeError('renderHeatmap: matrix[0] has no columns; expected at least one');
    checkSize(rows, cols);
    const values = new Array(rows * cols);
    for (let i = 0; i < rows; i++) {
      const row = matrix[i];
      if (!isList(row)) throw new TypeError(`renderHeatmap: matrix[${i}] must be an array of numbers; received ${describe(row)}`);
      if (row.length !== cols) {
        throw new RangeError(`renderHeatmap: matrix is ragged: matrix[0] has ${cols} columns but matrix[${i}] has ${row.length}`);
      }
      for (let j = 0; j < cols; j++) {
        checkValue(row[j], `matrix[${i}][${j}]`);
        values[i * cols + j] = row[j];
      }
    }
    return { rows, cols, values };
  }
  if (matrix !== null && typeof matrix === 'object' && 'data' in matrix && 'shape' in matrix) {
    const { rows, cols } = readShape(matrix.shape, 'matrix');
    const { data } = matrix;
    if (!isList(data)) {
      throw new TypeError(`renderHeatmap: matrix.data must be a Float32Array, Float64Array or number[]; received ${describe(data)}`);
    }
    if (data.length !== rows * cols) {
      throw new RangeError(`renderHeatmap: matrix.data has ${data.length} values but shape [${rows}, ${cols}] needs ${rows * cols}`);
    }
    const values = new Array(rows * cols);
    for (let p = 0; p < values.length; p++) {
      checkValue(data[p], `matrix value [${Math.floor(p / cols)}][${p % cols}]`);
      values[p] = data[p];
    }
    return { rows, cols, values };
  }
  throw new TypeError(`renderHeatmap: matrix must be number[][] or { data: Float32Array | number[], shape: [rows, cols] }; received ${describe(matrix)}`);
}

function readShape(shape, name) {
  if (!Array.isArray(shape) || shape.length !== 2 || !shape.every((d) => Number.isInteger(d) && d >= 1)) {
    throw new TypeError(`renderHeatmap: ${name}.shape must be [rows, cols] of positive integers; received ${JSON.stringify(shape) ?? String(shape)}`);
  }
  checkSize(shape[0], shape[1]);
  return { rows: shape[0], cols: shape[1] };
}

function readLabels(labels, count, name, axis) {
  if (labels === undefined) return Array.from({ length: count }, (_, i) => String(i));
  if (!Array.isArray(labels)) throw new TypeError(`renderHeatmap: ${name} must be an array of strings; received ${describe(labels)}`);
  if (labels.length !== count) {
    throw new RangeError(`renderHeatmap: ${name} has ${labels.length} labels but the matrix has ${count} ${axis}`);
  }
  labels.forEach((l, i) => {
    if (typeof l !== 'string') throw new TypeError(`renderHeatmap: ${name}[${i}] must be a string; received ${describe(l)}`);
  });
  return labels;
}

function readMask(masked, rows, cols) {
  if (masked === undefined || masked === null) return null;
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
  throw new TypeError(`renderHeatmap: masked must be boolean[][] or { data: Uint8Array, shape: [${rows}, ${cols}] }; received ${describe(masked)}`);
}

function readOptions(options, rows, cols, values) {
  const { title, lang = 'zh', decimals = 2, standalone = false, idPrefix, min, max,
    scale = 'sequential', legend = true, cellSize } = options;
  if (lang !== 'zh' && lang !== 'en') throw new RangeError(`renderHeatmap: lang must be "zh" or "en"; received ${describe(lang)}`);
  if (title !== undefined && typeof title !== 'string') throw new TypeError(`renderHeatmap: title must be a string; received ${describe(title)}`);
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 10) {
    throw new RangeError(`renderHeatmap: decimals must be an integer from 0 to 10; received ${describe(decimals)}`);
  }
  for (const [k, v] of [['standalone', standalone], ['legend', legend]]) {
    if (typeof v !== 'boolean') throw new TypeError(`renderHeatmap: ${k} must be true or false; received ${describe(v)}`);
  }
  if (scale !== 'sequential' && scale !== 'diverging') {
    throw new RangeError(`renderHeatmap: scale must be "sequential" or "diverging"; received ${describe(scale)}`);
  }
  if (idPrefix !== undefined && (typeof idPrefix !== 'string' || !/^[A-Za-z][A-Za-z0-9_-]*$/.test(idPrefix))) {
    throw new TypeError(`renderHeatmap: idPrefix must be a letter followed by letters, digits, "-" or "_"; received ${describe(idPrefix)}`);
  }
  if (cellSize !== undefined && (typeof cellSize !== 'number' || !(cellSize >= 8 && cellSize <= 200))) {
    throw new RangeError(`renderHeatmap: cellSize must be a number from 8 to 200 (pixels); received ${describe(cellSize)}`);
  }
  for (const [k, v] of [['min', min], ['max', max]]) {
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v))) {
      throw new RangeError(`renderHeatmap: ${k} must be a finite number; received ${describe(v)}`);
    }
  }
  const rowLabels = readLabels(options.rowLabels, rows, 'rowLabels', rows === 1 ? 'row' : 'rows');
  const colLabels = readLabels(options.colLabels, cols, 'colLabels', cols === 1 ? 'column' : 'columns');
  const masked = readMask(options.masked, rows, cols);

  // colour domain
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
  if (min !== undefined && max !== undefined && !(min < max)) {
    throw new RangeError(`renderHeatmap: min must be less than max; received min ${min}, max ${max}`);
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

  const t = TEXT[lang];
  return {
    lang, t, decimals, standalone, legend, scale, rowLabels, colLabels, masked,
    title: title ?? t.title,
    dmin, dmax,
    cellSize: cellSize ?? Math.min(56, Math.max(14, Math.round(512 / Math.max(rows, cols)))),
    idPrefix: idPrefix ?? `attnmap-${hash(rows, cols, values, rowLabels, colLabels, masked)}`,
  };
}

// FNV-1a over the data, so that the default ids differ between different heatmaps on one page
// and stay the same for the same input.
function hash(rows, cols, values, rowLabels, colLabels, masked) {
  let h = 0x811c9dc5;
  const s = `${rows}x${cols}|${values.join(',')}|${rowLabels.join('\u0000')}|${colLabels.join('\u0000')}|${masked ? masked.join('') : ''}`;
  for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193); }
  return (h >>> 0).toString(36);
}

// ----------------------------------------------------------------------------
// text: escaping, cleaning, width estimates, truncation

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Escape for XML text and double- or single-quoted attributes. */
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c]);

// Characters XML 1.0 forbids (C0 controls except tab/LF/CR, U+FFFE/FFFF, lone surrogates) become
// U+FFFD; tab, LF and CR become spaces (a label is one line).
function clean(s) {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) { out += s[i] + s[i + 1]; i++; } else out += '\ufffd';
    } else if (c >= 0xdc00 && c <= 0xdfff) out += '\ufffd';
    else if (c === 9 || c === 10 || c === 13) out += ' ';
    else if (c < 0x20 || c === 0xfffe || c === 0xffff) out += '\ufffd';
    else out += s[i];
  }
  return out;
}

// Right-to-left letters or bidi controls: wrap in FSI … PDI so the token cannot reorder the text
// around it (the arrow and the value in "吃 → 猫: 0.3157") and its own embeddings end with it.
const BIDI = /[\u0590-\u08ff\u200e\u200f\u202a-\u202e\u2066-\u2069\ufb1d-\ufdff\ufe70-\ufefc]|\ud802[\udc00-\udfff]|\ud83a[\udc00-\udfff]/;
const isolate = (s) => (BIDI.test(s) ? `\u2068${s}\u2069` : s);

const ZERO_WIDTH = (cp) => (cp >= 0x300 && cp <= 0x36f) || (cp >= 0x1ab0 && cp <= 0x1aff) ||
  (cp >= 0x20d0 && cp <= 0x20ff) || (cp >= 0xfe20 && cp <= 0xfe2f) || (cp >= 0x200b && cp <= 0x200f) ||
  (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2069) || (cp >= 0xfe00 && cp <= 0xfe0f) ||
  cp === 0xfeff || (cp >= 0xe0000 && cp <= 0xe01ef);
const WIDE = (cp) => (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2600 && cp <= 0x27bf) ||
  (cp >= 0x2e80 && cp <= 0xa4cf) || (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
  (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) || (cp >= 0xffe0 && cp <= 0xffe6) ||
  (cp >= 0x1f000 && cp <= 0x1faff) || (cp >= 0x20000 && cp <= 0x3fffd);

/** Rough width in em of one grapheme: CJK, fullwidth and emoji 1, marks and controls 0, else 0.6. */
function graphemeEm(g) {
  for (const ch of g) {
    const cp = ch.codePointAt(0);
    if (ZERO_WIDTH(cp)) continue;
    return WIDE(cp) ? 1 : (cp === 0x20 ? 0.3 : 0.6);
  }
  return 0;
}

const segmenter = typeof Intl === 'object' && typeof Intl.Segmenter === 'function'
  ? new Intl.Segmenter('en', { granularity: 'grapheme' }) : null;
const graphemes = (s) => (segmenter ? Array.from(segmenter.segment(s), (x) => x.segment) : Array.from(s));
const textEm = (s) => graphemes(s).reduce((w, g) => w + graphemeEm(g), 0);

/** Cut to at most maxEm (with "…"), on grapheme boundaries. Returns { text, em, cut }. */
function fit(s, maxEm) {
  const gs = graphemes(s);
  const total = gs.reduce((w, g) => w + graphemeEm(g), 0);
  if (total <= maxEm) return { text: s, em: total, cut: false };
  let w = 0, out = '';
  for (const g of gs) {
    const gw = graphemeEm(g);
    if (w + gw > maxEm - 1) break;
    out += g; w += gw;
  }
  out = out.replace(/\s+$/, '');
  return { text: out + '…', em: textEm(out) + 1, cut: true };
}

/** At most max UTF-16 units (with "…"), on grapheme boundaries. */
function cut(s, max) {
  if (s.length <= max) return s;
  let out = '';
  for (const g of segmenter ? segmenter.segment(s) : s) {
    const x = typeof g === 'string' ? g : g.segment;
    if (out.length + x.length > max - 1) break;
    out += x;
  }
  return out.replace(/\s+$/, '') + '…';
}

// ----------------------------------------------------------------------------
// numbers and colours

/** Coordinates: at most 2 decimals, no trailing zeros, no "-0". */
function n(x) {
  const r = Math.round(x * 100) / 100;
  return Object.is(r, -0) ? '0' : String(r);
}

/** A value as shown: fixed decimals, never "-0.00". */
function fixed(x, d) {
  const s = x.toFixed(d);
  return /^-0\.?0*$/.test(s) ? s.slice(1) : s;
}

/** Tick labels: compact ("0", "0.25", "1"). */
function compact(x, d) {
  const r = Number(x.toFixed(d));
  return Object.is(r, -0) ? '0' : String(r);
}

const hexToRgb = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
const VIRIDIS_RGB = VIRIDIS.map(hexToRgb);
const RDBU_RGB = RDBU.map(hexToRgb);

function ramp(stops, t) {
  t = t > 0 ? Math.min(1, t) : t <= 0 ? 0 : 0.5;     // NaN (0/0 in a degenerate domain): the middle
  const x = t * (stops.length - 1), i = Math.min(stops.length - 2, Math.floor(x)), f = x - i;
  const a = stops[i], b = stops[i + 1];
  return a.map((c, k) => Math.round(c + (b[k] - c) * f));
}

const toHex = (rgb) => '#' + rgb.map((c) => c.toString(16).padStart(2, '0')).join('');

/** (v - a) / (b - a), also when b - a overflows (a = -1e308, b = 1e308). */
function frac(v, a, b) {
  const span = b - a;
  return Number.isFinite(span) ? (v - a) / span : (v / 2 - a / 2) / (b / 2 - a / 2);
}

/** The fill of a value: sequential on [min, max], diverging around 0 (or the middle). */
function colour(v, o) {
  const { dmin, dmax } = o;
  if (o.scale === 'sequential') return ramp(VIRIDIS_RGB, frac(v, dmin, dmax));
  const mid = dmin < 0 && dmax > 0 ? 0 : Number.isFinite(dmin + dmax) ? (dmin + dmax) / 2 : dmin / 2 + dmax / 2;
  const t = v < mid ? 0.5 * (v - dmin) / (mid - dmin) : 0.5 + 0.5 * (v - mid) / (dmax - mid);
  return ramp(RDBU_RGB, t);
}

// WCAG relative luminance; text is white unless near-black contrasts clearly better (by 15%).
// The bias keeps mid-range cells (viridis teal, where both are ~4.4:1) from flipping between
// black and white for nearly equal values such as 0.4455 and 0.4564.
function luminance(rgb) {
  const [r, g, b] = rgb.map((c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
const DARK_TEXT = '#111111', LIGHT_TEXT = '#ffffff';
const DARK_L = luminance([17, 17, 17]);
function textOn(rgb) {
  const L = luminance(rgb);
  const dark = (L + 0.05) / (DARK_L + 0.05), light = 1.05 / (L + 0.05);
  return dark > light * 1.15 ? DARK_TEXT : LIGHT_TEXT;
}

// Legend ticks { ticks, labels } of [a, b]: round steps while they can be told apart, else (1e15
// to 1e15 + 0.2: past 2^53, k * step stops changing as k grows) the two ends. Counted, never endless.
function niceTicks(a, b) {
  const span = b - a;
  const raw = Number.isFinite(span) ? span / 4 : (b / 2 - a / 2) / 2;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * p).find((s) => s >= raw * 0.999);
  const d = Math.max(0, -Math.floor(Math.log10(step) + 1e-9) + (step / p === 2.5 ? 1 : 0));
  if (step > 0 && Number.isFinite(step) && d <= 100) {
    const ticks = [], labels = [];
    const k0 = Math.ceil(a / step - 1e-9);
    for (let i = 0; i <= MAX_TICKS; i++) {
      const v = (k0 + i) * step;
      if (!(v <= b + step * 1e-9 && Number.isFinite(v))) {
        if (i >= 2) return { ticks, labels };
        break;
      }
      const label = compact(v, d);
      if (i > 0 && !(v > ticks[i - 1] && label !== labels[i - 1])) break;
      ticks.push(v); labels.push(label);
    }
  }
  return { ticks: [a, b], labels: apart(a, b) };
}

/** Two different numbers printed as short as they still differ. */
function apart(a, b) {
  for (let digits = 1; digits < 17; digits++) {
    const x = Number(a.toPrecision(digits)), y = Number(b.toPrecision(digits));
    if (x !== y && Number.isFinite(x) && Number.isFinite(y)) return [String(x), String(y)];
  }
  return [String(a), String(b)];
}

// ----------------------------------------------------------------------------
// layout and drawing

function draw(rows, cols, values, o) {
  const { t, lang, cellSize: cs, masked } = o;
  const id = (s) => `${o.idPrefix}-${s}`;
  const labelFont = Math.min(14, Math.max(8, Math.round(cs * 0.6)));
  const capFont = 13, titleFont = 16, tickFont = 11;
  const gap = cs >= 24 ? 2 : 1;
  const gridW = cols * cs, gridH = rows * cs;

  // value text: fits the cell, hidden when it would be too small to read
  // (digits are ~0.64em wide in common sans fonts, "." and "-" ~0.36em; keep 5 px each side)
  const valueEm = (str) => str.replace(/[^0-9]/g, '').length * 0.64 + str.replace(/[0-9]/g, '').length * 0.36;
  const widestValue = Math.max(...values.map((v) => valueEm(fixed(v, o.decimals))));
  const valueFont = Math.min(14, cs * 0.3, (cs - 10) / widestValue);
  const showValues = valueFont >= 7;

  // bounding box of everything drawn, in grid coordinates (grid top-left = 0, 0)
  const box = { x0: 0, y0: 0, x1: gridW, y1: gridH };
  const grow = (x0, y0, x1, y1) => {
    box.x0 = Math.min(box.x0, x0); box.y0 = Math.min(box.y0, y0);
    box.x1 = Math.max(box.x1, x1); box.y1 = Math.max(box.y1, y1);
  };
  const out = [];

  // row labels (right-aligned, left of the grid)
  const rowFits = o.rowLabels.map((l) => fit(clean(l), MAX_LABEL_EM));
  const rowLabelW = Math.max(...rowFits.map((f) => f.em)) * labelFont;
  const rowLabelX = -8;
  grow(rowLabelX - rowLabelW, 0, 0, gridH);

  // row caption, rotated, left of the row labels
  const capRowEm = textEm(t.rows);
  const capRowX = rowLabelX - rowLabelW - 10 - 0.25 * capFont;
  grow(capRowX - 0.9 * capFont, gridH / 2 - (capRowEm * capFont) / 2, capRowX + 0.25 * capFont,
    gridH / 2 + (capRowEm * capFont) / 2);

  // column labels: horizontal if they fit the cells, else rotated -45°
  const colFits = o.colLabels.map((l) => fit(clean(l), MAX_LABEL_EM));
  const colLabelW = Math.max(...colFits.map((f) => f.em)) * labelFont;
  const rotate = colLabelW > cs - 4;
  const colLabelY = -8;
  let colTop;
  if (rotate) {
    colTop = colLabelY - colLabelW * Math.SQRT1_2 - 0.6 * labelFont;
    colFits.forEach((f, j) => grow(0, colTop, (j + 0.5) * cs + f.em * labelFont * Math.SQRT1_2 + 0.5 * labelFont, 0));
  } else {
    colTop = colLabelY - 0.9 * labelFont;
    colFits.forEach((f, j) => grow((j + 0.5) * cs - (f.em * labelFont) / 2, colTop, (j + 0.5) * cs + (f.em * labelFont) / 2, 0));
  }

  // column caption, centred above the column labels
  const capColW = textEm(t.cols) * capFont;
  const capColY = colTop - 8;
  grow(gridW / 2 - capColW / 2, capColY - 0.9 * capFont, gridW / 2 + capColW / 2, capColY);

  // legend: a vertical ramp right of the grid, min at the bottom
  const legendX = gridW + 20, legendW = 12, legendH = Math.max(gridH, 100);
  const { ticks, labels: tickLabels } = niceTicks(o.dmin, o.dmax);
  if (o.legend) {
    const tickW = Math.max(...tickLabels.map((l) => textEm(l) * tickFont));
    grow(legendX, -tickFont / 2, legendX + legendW + 8 + tickW, legendH + tickFont / 2);
  }

  // masked key below the grid
  const maskedCount = masked ? masked.reduce((a, b) => a + b, 0) : 0;
  const maskedText = o.scale === 'sequential' ? t.maskedWeight : t.masked;
  const keyY = gridH + 14;
  if (maskedCount) grow(0, keyY, 18 + textEm(maskedText) * capFont, keyY + 12);

  // title, left-aligned above everything, cut to the width of the rest (at least 320 px)
  const titleFit = fit(clean(o.title), Math.max(box.x1 - box.x0, 320) / titleFont);
  const titleY = box.y0 - 10;
  const titleX = box.x0;
  grow(titleX, titleY - 0.9 * titleFont, titleX + titleFit.em * titleFont, titleY);

  // the frame
  const vx = Math.floor(box.x0 - PAD), vy = Math.floor(box.y0 - PAD);
  const W = Math.ceil(box.x1 + PAD) - vx, H = Math.ceil(box.y1 + PAD) - vy;
  const fullTitle = clean(o.title);
  const ariaLabel = fullTitle + t.size(rows, cols);

  // the labels as the cells and the description repeat them
  const cellMax = Math.floor(CELL_TEXT / (rows * cols));
  const cellLabel = (l) => isolate(cut(clean(l), cellMax));
  const rowCell = o.rowLabels.map(cellLabel), colCell = o.colLabels.map(cellLabel);

  // description: how to read it, the domain, and each row's largest value
  let [lo, hi] = [compact(o.dmin, 4), compact(o.dmax, 4)];
  if (lo === hi) [lo, hi] = apart(o.dmin, o.dmax);       // 1e-30 to 2e-30, not "0 to 0"
  let desc = t.desc(o.scale === 'sequential') + t.domain(lo, hi);
  if (maskedCount) desc += t.maskedCount(maskedCount);
  if (rows <= 32) {
    const parts = [];
    for (let i = 0; i < rows; i++) {
      let best = -1;
      for (let j = 0; j < cols; j++) {
        const p = i * cols + j;
        if (masked && masked[p]) continue;
        if (best < 0 || values[p] > values[i * cols + best]) best = j;
      }
      if (best >= 0) parts.push(`${rowCell[i]} → ${colCell[best]} ${fixed(values[i * cols + best], o.decimals)}`);
    }
    if (parts.length) desc += t.rowMax + parts.join(t.sep) + t.end;
  }

  out.push(`<svg xmlns="http://www.w3.org/2000/svg" class="attnmap${o.standalone ? ' attnmap-standalone' : ''}" ` +
    `width="${W}" height="${H}" viewBox="${vx} ${vy} ${W} ${H}" role="img" aria-label="${esc(ariaLabel)}" lang="${lang === 'zh' ? 'zh-CN' : 'en'}"` +
    (o.standalone ? ` font-family="${esc(FONT_STACK)}" color="#1f2328"` : '') + '>');
  out.push(`<title>${esc(fullTitle)}</title>`);
  out.push(`<desc>${esc(desc)}</desc>`);
  if (o.standalone) {
    out.push('<style>' +
      `.attnmap{font-family:${FONT_STACK};color:#1f2328;max-width:100%;height:auto}` +
      '.attnmap .attnmap-bg{fill:#ffffff}' +
      '@media (prefers-color-scheme:dark){.attnmap{color:#e6edf3}.attnmap .attnmap-bg{fill:#0d1117}}' +
      '</style>');
    out.push(`<rect class="attnmap-bg" x="${vx}" y="${vy}" width="${W}" height="${H}" fill="#ffffff"/>`);
  }

  // defs: the hatch for masked cells, the legend gradient
  const defs = [];
  if (maskedCount) {
    defs.push(`<pattern id="${id('hatch')}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
      '<line x1="0" y1="0" x2="0" y2="6" stroke="currentColor" stroke-width="2" stroke-opacity="0.35"/></pattern>');
  }
  if (o.legend) {
    const stops = [];
    const span = o.dmax - o.dmin;
    for (let k = 0; k <= 20; k++) {
      const v = Number.isFinite(span) ? o.dmin + (span * k) / 20 : o.dmin * (1 - k / 20) + o.dmax * (k / 20);
      stops.push(`<stop offset="${n(k / 20)}" stop-color="${toHex(colour(v, o))}"/>`);
    }
    defs.push(`<linearGradient id="${id('ramp')}" x1="0" y1="1" x2="0" y2="0">${stops.join('')}</linearGradient>`);
  }
  if (defs.length) out.push(`<defs>${defs.join('')}</defs>`);

  // title and captions
  out.push(`<text class="attnmap-title" x="${n(titleX)}" y="${n(titleY)}" font-size="${titleFont}" font-weight="600" fill="currentColor">` +
    `${titleFit.cut ? `<title>${esc(fullTitle)}</title>` : ''}${esc(isolate(titleFit.text))}</text>`);
  out.push(`<text class="axis-caption col-caption" x="${n(gridW / 2)}" y="${n(capColY)}" font-size="${capFont}" text-anchor="middle" fill="currentColor" fill-opacity="0.75">${esc(t.cols)}</text>`);
  out.push(`<text class="axis-caption row-caption" transform="translate(${n(capRowX)} ${n(gridH / 2)}) rotate(-90)" font-size="${capFont}" text-anchor="middle" fill="currentColor" fill-opacity="0.75">${esc(t.rows)}</text>`);

  // labels
  const labelText = (cls, attrs, f, full) => `<text class="${cls}" ${attrs} font-size="${labelFont}" fill="currentColor">` +
    `${f.cut ? `<title>${esc(clean(full))}</title>` : ''}${esc(isolate(f.text))}</text>`;
  out.push('<g class="row-labels">');
  rowFits.forEach((f, i) => out.push(labelText('row-label',
    `x="${n(rowLabelX)}" y="${n((i + 0.5) * cs)}" dy="0.35em" text-anchor="end"`, f, o.rowLabels[i])));
  out.push('</g>');
  out.push('<g class="col-labels">');
  colFits.forEach((f, j) => out.push(labelText('col-label', rotate
    ? `transform="translate(${n((j + 0.5) * cs)} ${n(colLabelY)}) rotate(-45)" dy="0.35em" text-anchor="start"`
    : `x="${n((j + 0.5) * cs)}" y="${n(colLabelY)}" text-anchor="middle"`, f, o.colLabels[j])));
  out.push('</g>');

  // cells
  const titleDecimals = Math.max(4, o.decimals);
  out.push('<g class="cells">');
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const p = i * cols + j, v = values[p], isMasked = masked ? masked[p] === 1 : false;
      const label = `${rowCell[i]} → ${colCell[j]}: ${fixed(v, titleDecimals)}` +
        (isMasked ? (lang === 'zh' ? `（${t.masked}）` : ` (${t.masked})`) : '');
      const x = j * cs + gap / 2, y = i * cs + gap / 2, s = cs - gap;
      const rgb = colour(v, o);
      const fill = isMasked ? `url(#${id('hatch')})` : toHex(rgb);
      let cell = `<g class="cell-group${isMasked ? ' masked' : ''}" aria-label="${esc(label)}"><title>${esc(label)}</title>` +
        `<rect class="cell" x="${n(x)}" y="${n(y)}" width="${n(s)}" height="${n(s)}"${cs >= 24 ? ' rx="2"' : ''} fill="${fill}"` +
        (isMasked ? ' stroke="currentColor" stroke-opacity="0.2"' : '') +
        ` data-row="${i}" data-col="${j}" data-value="${esc(String(v))}"${isMasked ? ' data-masked="true"' : ''}/>`;
      if (showValues && !isMasked) {
        cell += `<text class="cell-value" x="${n((j + 0.5) * cs)}" y="${n((i + 0.5) * cs)}" dy="0.35em" text-anchor="middle" ` +
          `font-size="${n(valueFont)}" fill="${textOn(rgb)}" pointer-events="none">${fixed(v, o.decimals)}</text>`;
      }
      out.push(cell + '</g>');
    }
  }
  out.push('</g>');

  // legend
  if (o.legend) {
    const parts = [`<g class="legend" aria-hidden="true"><rect x="${n(legendX)}" y="0" width="${legendW}" height="${n(legendH)}" fill="url(#${id('ramp')})"/>`];
    ticks.forEach((v, k) => {
      const y = legendH * (1 - frac(v, o.dmin, o.dmax));
      parts.push(`<line x1="${n(legendX + legendW)}" y1="${n(y)}" x2="${n(legendX + legendW + 4)}" y2="${n(y)}" stroke="currentColor"/>` +
        `<text x="${n(legendX + legendW + 7)}" y="${n(y)}" dy="0.35em" font-size="${tickFont}" fill="currentColor">${tickLabels[k]}</text>`);
    });
    out.push(parts.join('') + '</g>');
  }
  if (maskedCount) {
    out.push(`<g class="masked-key"><rect x="0" y="${n(keyY)}" width="12" height="12" fill="url(#${id('hatch')})" stroke="currentColor" stroke-opacity="0.2"/>` +
      `<text x="18" y="${n(keyY + 6)}" dy="0.35em" font-size="${capFont}" fill="currentColor">${esc(maskedText)}</text></g>`);
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}
