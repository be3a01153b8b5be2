// page-thumbs.js - the small heatmaps of the layer × head grid (page-checkpoint.js): GPT-2 small
// has 144 heads, so each is drawn cheaply, as a string: no labels, no numbers, no <g> or <title>
// per cell, one <rect> per cell of the lower triangle (the causal mask makes the rest exactly 0;
// one background rect stands for it), or of every row for an encoder (causal false). The cells carry data-row, data-col and data-value like the
// renderer's (web/heatmap/), so that a test or a script reads them the same way. The big view of
// one head is drawn by renderHeatmap itself.
//
// A row can be added in place (appendThumbRow) while a model generates: the viewBox grows by one,
// and the cells already drawn keep their colours, because the colour domain is fixed: 0–1, or,
// for the log scale, log10 from 10⁻³ to 1 (below 10⁻³ the bottom colour).
import { colour, toHex } from '../heatmap/colour.js';
import { shortestFloat32 } from './page-state.js';

export const LOG_FLOOR = 1e-3;
const LEVELS = 256;
const fills = { unit: [], log: [] };         // quantised colour -> '#rrggbb'

/** The fill of a weight on the thumbnails' fixed scale ('unit' or 'log'), quantised to 256 levels. */
export function thumbFill(v, scale) {
  let t = scale === 'log' ? (v > 0 ? (Math.log10(v) - Math.log10(LOG_FLOOR)) / -Math.log10(LOG_FLOOR) : 0) : v;
  t = Math.min(1, Math.max(0, t || 0));
  const k = Math.round(t * (LEVELS - 1));
  return (fills[scale][k] ??= toHex(colour(k / (LEVELS - 1), { scale: 'sequential', colourScale: 'unit', dmin: 0, dmax: 1 })));
}

/** The cells of row i (keys 0..i; not causal: every key of the row) as a string. */
export function thumbRow(row, i, scale, causal = true) {
  let s = '';
  const end = causal ? Math.min(i + 1, row.length) : row.length;
  for (let j = 0; j < end; j++) {
    const v = row[j];
    s += `<rect class="cell" x="${j}" y="${i}" width="1" height="1" fill="${thumbFill(v, scale)}" data-row="${i}" data-col="${j}" data-value="${shortestFloat32(v)}"/>`;
  }
  return s;
}

/**
 * The whole thumbnail: rows[i] holds at least keys 0..i (not causal: every key). attrs:
 * { name: value } on the root (numbers and JSON of numbers only: they are not escaped).
 */
export function thumbSvg(rows, scale, attrs, causal = true) {
  const n = rows.length;
  const a = Object.entries(attrs).map(([k, v]) => ` ${k}="${String(v).replace(/"/g, '&quot;')}"`).join('');
  let s = `<svg class="thumb-map" viewBox="0 0 ${n} ${n}" shape-rendering="crispEdges" aria-hidden="true" focusable="false"${a}>` +
    `<rect class="thumb-bg" width="${n}" height="${n}"/>`;
  rows.forEach((row, i) => { s += thumbRow(row, i, scale, causal); });
  return s + '</svg>';
}

/** Add row i = the current size to a thumbnail in the document: the viewBox and the background grow. */
export function appendThumbRow(svg, row, scale) {
  const n = Number(svg.getAttribute('viewBox').split(' ')[2]) + 1;
  svg.setAttribute('viewBox', `0 0 ${n} ${n}`);
  const bg = svg.querySelector('.thumb-bg');
  bg.setAttribute('width', String(n));
  bg.setAttribute('height', String(n));
  svg.insertAdjacentHTML('beforeend', thumbRow(row, n - 1, scale));
}
