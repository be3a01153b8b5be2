// page-dom.js - the page's small DOM helpers: h() makes elements (text stays text), tok() a token,
// matrixTable() a matrix as a compact table. Every section builds its DOM with them.
import { fixed } from './page-format.js';
import * as SHARED from '../strings/page.js';

/** h('td', { class: 'x' }, 'text', node): strings become text nodes, never markup. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'html') el.innerHTML = v;          // trusted strings only (page-strings.js)
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

export const tok = (s) => h('span', { class: 'tok' }, s);

/**
 * A table's top-left header, above the row labels: its words are for screen readers alone (an
 * empty header cell names no column; issue 39 P11), in the document's language (page.js sets it
 * before the sections draw their tables, and they draw again when it changes).
 */
export function cornerHeader() {
  const words = document.documentElement.lang === SHARED.en.htmlLang ? SHARED.en : SHARED.zh;
  return h('th', { class: 'corner', scope: 'col' }, h('span', { class: 'visually-hidden' }, words.tableCorner));
}

/**
 * A matrix as a compact table. caption: trusted HTML (names and shapes only).
 * opts: rowLabels, colLabels (default: numbers from 1, the page's rule for text and tables: only
 * code and formulas count from 0; issue 39 P4), decimals, masked(i, j), maskText, extraCol { label, values },
 * cell(i, j, v) -> Node (editable cells), follow: the table highlights the active row of `main`.
 */
export function matrixTable(caption, rows, opts = {}) {
  const { rowLabels, colLabels, decimals = 4, masked, maskText = '−∞', extraCol, cell, follow } = opts;
  const nc = rows[0].length;
  const head = h('tr', {}, cornerHeader(),
    ...Array.from({ length: nc }, (_, j) => h('th', { scope: 'col' }, colLabels ? colLabels[j] : String(j + 1))));
  if (extraCol) head.append(h('th', { scope: 'col', class: 'extra' }, extraCol.label));
  const body = rows.map((r, i) => {
    const label = rowLabels ? rowLabels[i] : String(i + 1);
    const tr = h('tr', { 'data-row': i }, h('th', { scope: 'row', title: label }, label));
    r.forEach((v, j) => {
      if (cell) tr.append(h('td', { class: 'edit' }, cell(i, j, v)));
      else if (masked && masked(i, j)) tr.append(h('td', { class: 'masked', title: fixed(v, decimals) }, maskText));
      else tr.append(h('td', {}, fixed(v, decimals)));
    });
    if (extraCol) tr.append(h('td', { class: 'extra' }, fixed(extraCol.values[i], decimals)));
    return tr;
  });
  const table = h('table', { class: 'matrix' + (follow ? ' follow' : '') },
    h('caption', { html: caption }), h('thead', {}, head), h('tbody', {}, body));
  return h('div', { class: 'table-scroll' }, table);
}
