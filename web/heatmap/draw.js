// draw.js - the SVG of a checked matrix and its options (read.js). The layout is measured first
// (a box that grows with each part), then each part is written in drawing order. Pure.
// FULL_API (scripts/build-embed.js): the element draws no standalone file and no focus ring.
import { esc, clean, isolate, textEm, fit, cut, n, fixed, compact } from './text.js';
import { CELL_TEXT } from './budgets.js';
import { colour, textOn, toHex, niceTicks, logTicks, apart, extremes, position } from './colour.js';
import * as SCALE_TEXT from '../strings/heatmap-scale.js';

export const FONT_STACK = 'system-ui, "PingFang SC", "Noto Sans CJK SC", "Microsoft YaHei", sans-serif';
const MAX_LABEL_EM = 10;        // longer labels are cut with an ellipsis (full text in <title>)
// In the cells' titles and aria-labels (2 labels, twice each) a label is cut to CELL_TEXT / cells
// characters (16 at 256×256, 12,945 at 9×9), so they hold at most 4 × CELL_TEXT whatever the tokens
const PAD = 12;

/** rows × cols values (row-major) and the options of read.js -> the SVG string. */
export function draw(rows, cols, values, o) {
  const L = layout(rows, cols, values, o);
  const text = cellText(rows, cols, o);
  return [
    ...root(rows, cols, values, L, o, text),
    defs(L, o),
    ...titles(L, o),
    ...axisLabels(L, o),
    ...cells(rows, cols, values, L, o, text),
    legend(L, o),
    maskedKey(L, o),
    focusRing(L, o),
    '</svg>',
  ].filter(Boolean).join('\n') + '\n';
}

// ----------------------------------------------------------------------------
// layout: sizes and positions in grid coordinates (grid top-left = 0, 0), and the bounding box of
// everything drawn, grown part by part

function layout(rows, cols, values, o) {
  const cs = o.cellSize;
  const L = {
    cs, gap: cs >= 24 ? 2 : 1, gridW: cols * cs, gridH: rows * cs,
    labelFont: Math.min(14, Math.max(8, Math.round(cs * 0.6))), capFont: 13, titleFont: 16, tickFont: 11,
  };
  const box = growingBox(L.gridW, L.gridH);
  Object.assign(L, valueText(values, L, o));
  Object.assign(L, rowLabels(box, L, o));
  Object.assign(L, colLabels(box, L, o));
  Object.assign(L, legendPlace(box, L, o));
  Object.assign(L, maskedKeyPlace(box, L, o));
  Object.assign(L, legendCaptionPlace(box, L, o));
  Object.assign(L, titlePlace(box, L, o));
  // the frame: whole pixels around the box
  const vx = Math.floor(box.x0 - PAD), vy = Math.floor(box.y0 - PAD);
  return Object.assign(L, { vx, vy, W: Math.ceil(box.x1 + PAD) - vx, H: Math.ceil(box.y1 + PAD) - vy });
}

/** The bounding box of everything drawn, from the grid's; grow(x0, y0, x1, y1) takes in a part. */
function growingBox(gridW, gridH) {
  const box = { x0: 0, y0: 0, x1: gridW, y1: gridH };
  box.grow = (x0, y0, x1, y1) => {
    box.x0 = Math.min(box.x0, x0); box.y0 = Math.min(box.y0, y0);
    box.x1 = Math.max(box.x1, x1); box.y1 = Math.max(box.y1, y1);
  };
  return box;
}

// 1. value text: fits the cell, hidden when it would be too small to read
// (digits are ~0.64em wide in common sans fonts, "." and "-" ~0.36em; keep 5 px each side)
function valueText(values, { cs }, { decimals }) {
  const valueEm = (str) => str.replace(/[^0-9]/g, '').length * 0.64 + str.replace(/[0-9]/g, '').length * 0.36;
  const widestValue = Math.max(...values.map((v) => valueEm(fixed(v, decimals))));
  const valueFont = Math.min(14, cs * 0.3, (cs - 10) / widestValue);
  return { valueFont, showValues: valueFont >= 7 };
}

// 2. row labels (right-aligned, left of the grid), the row caption rotated left of them
function rowLabels(box, { gridH, labelFont, capFont }, o) {
  const rowFits = o.rowLabels.map((l) => fit(clean(l), MAX_LABEL_EM));
  const rowLabelW = Math.max(...rowFits.map((f) => f.em)) * labelFont;
  const rowLabelX = -8;
  box.grow(rowLabelX - rowLabelW, 0, 0, gridH);
  const capRowEm = textEm(o.rowCaption);
  const capRowX = rowLabelX - rowLabelW - 10 - 0.25 * capFont;
  box.grow(capRowX - 0.9 * capFont, gridH / 2 - (capRowEm * capFont) / 2, capRowX + 0.25 * capFont,
    gridH / 2 + (capRowEm * capFont) / 2);
  return { rowFits, rowLabelX, capRowX };
}

// 3. column labels: horizontal if they fit the cells, else rotated -45°; the caption above them
function colLabels(box, { cs, gridW, labelFont, capFont }, o) {
  const colFits = o.colLabels.map((l) => fit(clean(l), MAX_LABEL_EM));
  const colLabelW = Math.max(...colFits.map((f) => f.em)) * labelFont;
  const rotate = colLabelW > cs - 4;
  const colLabelY = -8;
  let colTop;
  if (rotate) {
    colTop = colLabelY - colLabelW * Math.SQRT1_2 - 0.6 * labelFont;
    colFits.forEach((f, j) => box.grow(0, colTop, (j + 0.5) * cs + f.em * labelFont * Math.SQRT1_2 + 0.5 * labelFont, 0));
  } else {
    colTop = colLabelY - 0.9 * labelFont;
    colFits.forEach((f, j) => box.grow((j + 0.5) * cs - (f.em * labelFont) / 2, colTop, (j + 0.5) * cs + (f.em * labelFont) / 2, 0));
  }
  const capColW = textEm(o.colCaption) * capFont;
  const capColY = colTop - 8;
  box.grow(gridW / 2 - capColW / 2, capColY - 0.9 * capFont, gridW / 2 + capColW / 2, capColY);
  return { colFits, rotate, colLabelY, capColY };
}

// 4. legend: a vertical ramp right of the grid, min at the bottom
function legendPlace(box, { gridW, gridH, tickFont }, o) {
  const legendX = gridW + 20, legendW = 12, legendH = Math.max(gridH, 100);
  const { ticks, labels: tickLabels } = legendTicks(o);
  if (o.legend) {
    const tickW = Math.max(...tickLabels.map((l) => textEm(l) * tickFont));
    box.grow(legendX, -tickFont / 2, legendX + legendW + 8 + tickW, legendH + tickFont / 2);
  }
  return { legendX, legendW, legendH, ticks, tickLabels };
}

// 5. masked key below the grid; below the legend's lowest label too where its text would run
// under the legend (a small grid: the legend is 100 tall at least)
function maskedKeyPlace(box, { gridH, capFont, tickFont, legendX, legendH }, o) {
  const maskedCount = o.masked ? o.masked.reduce((a, b) => a + b, 0) : 0;
  const maskedText = o.scale === 'sequential' ? o.t.maskedWeight : o.t.masked;
  const keyW = 18 + textEm(maskedText) * capFont;
  const underLegend = o.legend && keyW > legendX - 4;
  const keyY = Math.max(gridH + 14, underLegend ? legendH + tickFont / 2 + 6 : 0);
  if (maskedCount) box.grow(0, keyY, keyW, keyY + 12);
  return { maskedCount, maskedText, keyY };
}

// 5b. with colourScale 'data' or 'log', what the legend's scale is, below it (and below the masked key)
function legendCaptionPlace(box, { tickFont, legendX, legendH, maskedCount, keyY }, o) {
  let legendCaption = '', legendCaptionY = 0;
  FULL_API: if (o.legend && o.colourScale !== 'unit') {
    legendCaption = SCALE_TEXT[o.lang].legendScale[o.colourScale](...extremes(o.dmin, o.dmax));   // the real extremes
    legendCaptionY = Math.max(legendH + tickFont / 2, maskedCount ? keyY + 12 : 0) + 14;
    box.grow(legendX, legendCaptionY - tickFont, legendX + textEm(legendCaption) * tickFont, legendCaptionY + 3);
  }
  return { legendCaption, legendCaptionY };
}

// 6. title, left-aligned above everything, cut to the width of the rest (at least 320 px)
function titlePlace(box, { titleFont }, o) {
  const fullTitle = clean(o.title);
  const titleFit = fit(fullTitle, Math.max(box.x1 - box.x0, 320) / titleFont);
  const titleY = box.y0 - 10;
  const titleX = box.x0;
  box.grow(titleX, titleY - 0.9 * titleFont, titleX + titleFit.em * titleFont, titleY);
  return { fullTitle, titleFit, titleX, titleY };
}

// ----------------------------------------------------------------------------
// the parts, in drawing order

const id = (o, s) => `${o.idPrefix}-${s}`;
// In a grid the cells repeat the drawn labels, so the text around them is hidden from assistive technology.
const hidden = (o) => (o.role === 'grid' ? ' aria-hidden="true"' : '');

/** The labels as the cells and the description repeat them: cut to share CELL_TEXT, isolated. */
function cellText(rows, cols, o) {
  const cellMax = Math.floor(CELL_TEXT / (rows * cols));
  const label = (l) => isolate(cut(clean(l), cellMax));
  return { rowCell: o.rowLabels.map(label), colCell: o.colLabels.map(label) };
}

/** <svg>, <title>, <desc>, and for a file the style and the background. */
function root(rows, cols, values, L, o, text) {
  const { vx, vy, W, H } = L;
  const grid = o.role === 'grid' ? ` aria-rowcount="${rows}" aria-colcount="${cols}"` : '';
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" class="attnmap${o.standalone ? ' attnmap-standalone' : ''}" ` +
    `width="${W}" height="${H}" viewBox="${vx} ${vy} ${W} ${H}" role="${o.role}"${grid} aria-label="${esc(L.fullTitle + o.t.size(rows, cols))}" lang="${o.t.htmlLang}"` +
    (o.standalone ? ` font-family="${esc(FONT_STACK)}" color="#1f2328"` : '') + '>'];
  out.push(`<title>${esc(L.fullTitle)}</title>`);
  out.push(`<desc>${esc(o.description ?? description(rows, cols, values, L, o, text))}</desc>`);
  FULL_API: if (o.standalone) {
    out.push('<style>' +
      `.attnmap{font-family:${FONT_STACK};color:#1f2328;max-width:100%;height:auto}` +
      '.attnmap .attnmap-bg{fill:#ffffff}' +
      '@media (prefers-color-scheme:dark){.attnmap{color:#e6edf3}.attnmap .attnmap-bg{fill:#0d1117}}' +
      '</style>');
    out.push(`<rect class="attnmap-bg" x="${vx}" y="${vy}" width="${W}" height="${H}" fill="#ffffff"/>`);
  }
  return out;
}

/** How to read it, the domain, and each row's largest value. */
function description(rows, cols, values, L, o, { rowCell, colCell }) {
  const { t, masked } = o;
  let [lo, hi] = [compact(o.dmin, 4), compact(o.dmax, 4)];
  if (lo === hi) [lo, hi] = apart(o.dmin, o.dmax);       // 1e-30 to 2e-30, not "0 to 0"
  let desc = t.desc(o.scale === 'sequential') + t.domain(lo, hi);
  FULL_API: if (o.colourScale !== 'unit') desc += SCALE_TEXT[o.lang].scaleDesc[o.colourScale];
  if (L.maskedCount) desc += t.maskedCount(L.maskedCount);
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
  return desc;
}

/** The hatch for masked cells, the legend gradient. */
function defs(L, o) {
  const out = [];
  if (L.maskedCount) {
    out.push(`<pattern id="${id(o, 'hatch')}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
      '<line x1="0" y1="0" x2="0" y2="6" stroke="currentColor" stroke-width="2" stroke-opacity="0.35"/></pattern>');
  }
  if (o.legend) {
    const stops = [];
    for (let k = 0; k <= 20; k++) {
      const v = stopValue(k, o);
      stops.push(`<stop offset="${n(k / 20)}" stop-color="${toHex(colour(v, o))}"/>`);
    }
    out.push(`<linearGradient id="${id(o, 'ramp')}" x1="0" y1="1" x2="0" y2="0">${stops.join('')}</linearGradient>`);
  }
  return out.length ? `<defs>${out.join('')}</defs>` : '';
}

/** The value at stop k (of 20) of the legend's gradient: even steps, or even in log10 with colourScale 'log'. */
function stopValue(k, o) {
  FULL_API: if (o.colourScale === 'log') return o.dmin * (o.dmax / o.dmin) ** (k / 20);
  const span = o.dmax - o.dmin;
  return Number.isFinite(span) ? o.dmin + (span * k) / 20 : o.dmin * (1 - k / 20) + o.dmax * (k / 20);
}

/** The legend's ticks: round steps, or powers of ten with colourScale 'log'. */
export function legendTicks(o) {
  FULL_API: if (o.colourScale === 'log') return logTicks(o.dmin, o.dmax);
  return niceTicks(o.dmin, o.dmax);
}

/** The title and the two axis captions. */
function titles(L, o) {
  const { titleFit, fullTitle, capFont, gridW, gridH } = L;
  return [
    `<text class="attnmap-title"${hidden(o)} x="${n(L.titleX)}" y="${n(L.titleY)}" font-size="${L.titleFont}" font-weight="600" fill="currentColor">` +
      `${titleFit.cut ? `<title>${esc(fullTitle)}</title>` : ''}${esc(isolate(titleFit.text))}</text>`,
    `<text class="axis-caption col-caption"${hidden(o)} x="${n(gridW / 2)}" y="${n(L.capColY)}" font-size="${capFont}" text-anchor="middle" fill="currentColor" fill-opacity="0.75">${esc(o.colCaption)}</text>`,
    `<text class="axis-caption row-caption"${hidden(o)} transform="translate(${n(L.capRowX)} ${n(gridH / 2)}) rotate(-90)" font-size="${capFont}" text-anchor="middle" fill="currentColor" fill-opacity="0.75">${esc(o.rowCaption)}</text>`,
  ];
}

/** The row and column labels; a cut label keeps its full text in a <title>. */
function axisLabels(L, o) {
  const { cs, labelFont } = L;
  const labelText = (cls, attrs, f, full) => `<text class="${cls}" ${attrs} font-size="${labelFont}" fill="currentColor">` +
    `${f.cut ? `<title>${esc(clean(full))}</title>` : ''}${esc(isolate(f.text))}</text>`;
  return [
    `<g class="row-labels"${hidden(o)}>`,
    ...L.rowFits.map((f, i) => labelText('row-label',
      `x="${n(L.rowLabelX)}" y="${n((i + 0.5) * cs)}" dy="0.35em" text-anchor="end"`, f, o.rowLabels[i])),
    '</g>',
    `<g class="col-labels"${hidden(o)}>`,
    ...L.colFits.map((f, j) => labelText('col-label', L.rotate
      ? `transform="translate(${n((j + 0.5) * cs)} ${n(L.colLabelY)}) rotate(-45)" dy="0.35em" text-anchor="start"`
      : `x="${n((j + 0.5) * cs)}" y="${n(L.colLabelY)}" text-anchor="middle"`, f, o.colLabels[j])),
    '</g>',
  ];
}

/**
 * One <g class="cell-group"> per cell (in a grid, one <g role="row"> per row around them), then
 * the numbers, apart and aria-hidden: a cell's one name is its aria-label (axe:
 * label-content-name-mismatch, if "0.32" were its text).
 */
function cells(rows, cols, values, L, o, text) {
  const out = ['<g class="cells">'], numbers = [];
  for (let i = 0; i < rows; i++) {
    if (o.role === 'grid') out.push(`<g role="row" aria-rowindex="${i + 1}" aria-label="${esc(clean(o.rowLabels[i]))}">`);
    for (let j = 0; j < cols; j++) out.push(cell(i, j, i * cols + j, values, L, o, text, numbers));
    if (o.role === 'grid') out.push('</g>');
  }
  out.push('</g>');
  if (numbers.length) out.push('<g class="cell-values" aria-hidden="true" pointer-events="none">', ...numbers, '</g>');
  return out;
}

function cell(i, j, p, values, L, o, text, numbers) {
  const { cs, gap } = L;
  const v = values[p], isMasked = o.masked ? o.masked[p] === 1 : false;
  const label = cellLabel(i, j, v, isMasked, o, text);
  const x = j * cs + gap / 2, y = i * cs + gap / 2, s = cs - gap;
  const rgb = colour(v, o);
  const fill = isMasked ? `url(#${id(o, 'hatch')})` : toHex(rgb);
  const g = `<g class="cell-group${isMasked ? ' masked' : ''}"${cellAttributes(i, j, o)} aria-label="${esc(label)}"><title>${esc(label)}</title>` +
    `<rect class="cell" x="${n(x)}" y="${n(y)}" width="${n(s)}" height="${n(s)}"${cs >= 24 ? ' rx="2"' : ''} fill="${fill}"` +
    (isMasked ? ' stroke="currentColor" stroke-opacity="0.2"' : '') +
    ` data-row="${i}" data-col="${j}" data-value="${esc(String(v))}"${isMasked ? ' data-masked="true"' : ''}/>`;
  if (L.showValues && !isMasked) {
    numbers.push(`<text class="cell-value" x="${n((j + 0.5) * cs)}" y="${n((i + 0.5) * cs)}" dy="0.35em" text-anchor="middle" ` +
      `font-size="${n(L.valueFont)}" fill="${textOn(rgb)}" data-row="${i}" data-col="${j}">${fixed(v, o.decimals)}</text>`);
  }
  return g + '</g>';
}

/** "吃 → 猫: 0.3157" (with at least 4 decimals), or what the cellLabel option makes of it. */
function cellLabel(i, j, value, masked, o, { rowCell, colCell }) {
  const valueText = fixed(value, Math.max(4, o.decimals));
  const label = `${rowCell[i]} → ${colCell[j]}: ${valueText}${masked ? o.t.maskedCell : ''}`;
  if (!o.cellLabel) return label;
  const own = o.cellLabel({ row: i, col: j, value, masked, rowLabel: rowCell[i], colLabel: colCell[j], valueText, label });
  if (typeof own !== 'string') throw new TypeError(`renderHeatmap: cellLabel must return a string; for cell [${i}, ${j}] it returned ${typeof own}`);
  return clean(own);
}

/** The cell's role in the root's role, and with activeCell a roving tabindex and its position. */
function cellAttributes(i, j, o) {
  let a = o.role === 'grid' ? ` role="gridcell" aria-colindex="${j + 1}"` : o.role === 'group' ? ' role="img"' : '';
  if (o.activeCell) {
    const [r, c] = o.activeCell;
    a += ` tabindex="${i === r && j === c ? 0 : -1}" data-row="${i}" data-col="${j}"`;
  }
  return a;
}

function legend(L, o) {
  if (!o.legend) return '';
  const { legendX, legendW, legendH, tickFont } = L;
  const parts = [`<g class="legend" aria-hidden="true"><rect x="${n(legendX)}" y="0" width="${legendW}" height="${n(legendH)}" fill="url(#${id(o, 'ramp')})"/>`];
  L.ticks.forEach((v, k) => {
    const y = legendH * (1 - position(v, o));
    parts.push(`<line x1="${n(legendX + legendW)}" y1="${n(y)}" x2="${n(legendX + legendW + 4)}" y2="${n(y)}" stroke="currentColor"/>` +
      `<text x="${n(legendX + legendW + 7)}" y="${n(y)}" dy="0.35em" font-size="${tickFont}" fill="currentColor">${L.tickLabels[k]}</text>`);
  });
  FULL_API: if (L.legendCaption) {
    parts.push(`<text class="legend-caption" x="${n(legendX)}" y="${n(L.legendCaptionY)}" font-size="${tickFont}" fill="currentColor" fill-opacity="0.75">${esc(L.legendCaption)}</text>`);
  }
  return parts.join('') + '</g>';
}

function maskedKey(L, o) {
  if (!L.maskedCount) return '';
  return `<g class="masked-key"${hidden(o)}><rect x="0" y="${n(L.keyY)}" width="12" height="12" fill="url(#${id(o, 'hatch')})" stroke="currentColor" stroke-opacity="0.2"/>` +
    `<text x="18" y="${n(L.keyY + 6)}" dy="0.35em" font-size="${L.capFont}" fill="currentColor">${esc(L.maskedText)}</text></g>`;
}

/** Two rects around the active cell, above everything, for a page that moves them with the focus. */
function focusRing(L, o) {
  FULL_API: if (o.focusRing) {
    const [i, j] = o.activeCell;
    const { cs, gap } = L;
    const x = j * cs + gap / 2, y = i * cs + gap / 2, s = cs - gap;
    const box = (pad) => `x="${n(x - pad)}" y="${n(y - pad)}" width="${n(s + 2 * pad)}" height="${n(s + 2 * pad)}"`;
    return '<g class="ring" aria-hidden="true" pointer-events="none">' +
      `<rect class="ring-outer" ${box(2.5)} rx="4" fill="none" stroke="currentColor" stroke-width="3"/>` +
      `<rect class="ring-inner" ${box(0.5)} rx="3" fill="none" stroke="#ffffff" stroke-width="1.5"/></g>`;
  }
  return '';
}
