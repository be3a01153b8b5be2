// head-view.js - BertViz's head view as a pure function: one layer's heads over a sentence, the
// tokens in two columns (left: who is looking, the queries; right: who is looked at, the keys) and
// a line from each query to each key it attends to, its opacity the weight, one colour per head.
//
//   import { renderHeadView } from 'attnmap/head-view';   // a subpath of its own: the element never loads it
//   const svg = renderHeadView([map0, map1], { tokens: ['猫', '吃', '鱼'], heads: [0, 1] });
//   renderHeadView(maps, { tokens, focus: { side: 'query', index: 1 } });   // 吃's lines alone
//
// maps: one n×n matrix per head (number[][] or { data, shape: [n, n] }), rows = queries; null for
// a head that was not computed (forward with { attention: { heads } }): it is not drawn, and the
// others keep their index, label and colour. Options:
//   tokens   n labels (default 1 … n)        heads    a label per map (default 0 … H − 1)
//   hidden   labels of heads not drawn         focus    { side: 'query' | 'key', index }: only
//   colours  a CSS colour per map                       the lines of that token (others dimmed)
//   lang     'zh' (default) | 'en'             title    the title (default: the words' own)
//   min      lines with a weight ≤ min are left out (default 0: every non-zero weight)
//   idPrefix prefix of the ids inside (default 'hv')
// No DOM, the same string for the same input, CSP-safe (presentation attributes only). Callers
// pass options and insert the string; they never patch it. The tokens are <g role="button"
// tabindex="0" data-side data-index>, so a page can make them react to hover, focus and keys
// (by re-rendering with focus). Each line carries data-head, data-row, data-col and data-value
// (the weight as given), so a test can check every line against the numbers it draws.
import { esc, clean, isolate, fit, n } from './text.js';
import { readMatrix } from './read.js';
import * as WORDS from '../strings/head-view.js';

const FONT_STACK = 'system-ui, "PingFang SC", "Noto Sans CJK SC", "Microsoft YaHei", sans-serif';
// Tableau 10: ten colours told apart in light and dark pages; more heads cycle
export const HEAD_COLOURS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
const ROW = 22, FONT = 14, LABEL_EM = 8, GAP = 150, PAD = 10, TITLE = 22;
const KEYS = ['tokens', 'heads', 'hidden', 'focus', 'colours', 'lang', 'title', 'min', 'idPrefix'];

/** Heads of one layer (rows = queries) as BertViz's head view, an SVG string. See head-view.d.ts. */
export function renderHeadView(maps, options = {}) {
  const { size, heads } = readMaps(maps);
  const o = readHeadViewOptions(options, size, heads);
  const w = WORDS[o.lang];
  const labels = o.tokens.map((t) => fit(clean(t), LABEL_EM));   // { text, em }: cut to LABEL_EM with "…"
  const labelW = Math.ceil(Math.max(1, ...labels.map((l) => l.em)) * FONT), x1 = PAD + labelW + 6, x2 = x1 + GAP;
  const width = x2 + 6 + labelW + PAD, height = TITLE + PAD + size * ROW + PAD;
  const y = (i) => TITLE + PAD + i * ROW + ROW / 2;
  const title = o.title ?? w.title;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" class="attnmap-head-view" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="group" aria-labelledby="${o.idPrefix}-title" aria-describedby="${o.idPrefix}-desc" font-family="${esc(FONT_STACK)}">`,
    `<title id="${o.idPrefix}-title">${esc(title)}</title>`,
    `<desc id="${o.idPrefix}-desc">${esc(w.desc(o.shown.map((h) => o.heads[h]), o.focus && o.tokens[o.focus.index], o.focus?.side))}</desc>`,
    `<text class="attnmap-title" x="${n(width / 2)}" y="16" text-anchor="middle" font-size="13" fill="currentColor">${esc(title)}</text>`,
    ...lines(heads, size, o, { x1, x2, y }),
    ...tokenColumn(o, labels, 'query', x1 - 6, 'end', y, w),
    ...tokenColumn(o, labels, 'key', x2 + 6, 'start', y, w),
    '</svg>',
  ].join('\n') + '\n';
}

// every drawn line: hidden heads left out; with focus, the token's lines at full strength, the
// others not drawn
function lines(heads, size, o, { x1, x2, y }) {
  const out = [];
  for (const h of o.shown) {
    const values = heads[h];
    out.push(`<g class="hv-head" data-head="${esc(o.heads[h])}" stroke="${esc(o.colours[h % o.colours.length])}" stroke-width="2">`);
    for (let r = 0; r < size; r++) {
      if (o.focus?.side === 'query' && o.focus.index !== r) continue;
      for (let c = 0; c < size; c++) {
        if (o.focus?.side === 'key' && o.focus.index !== c) continue;
        const v = values[r * size + c];
        if (!(v > o.min)) continue;
        out.push(`<line class="hv-line" data-head="${esc(o.heads[h])}" data-row="${r}" data-col="${c}" data-value="${v}" x1="${x1}" y1="${n(y(r))}" x2="${x2}" y2="${n(y(c))}" stroke-opacity="${Number(Math.min(1, v).toFixed(3))}"/>`);
      }
    }
    out.push('</g>');
  }
  return out;
}

// one column of tokens, each a focusable button naming what it does
function tokenColumn(o, labels, side, x, anchor, y, w) {
  return o.tokens.map((t, i) => {
    const label = isolate(labels[i].text), on = o.focus?.side === side && o.focus.index === i;
    return `<g class="hv-token${on ? ' hv-focus' : ''}" role="button" tabindex="0" data-side="${side}" data-index="${i}" aria-pressed="${on}" aria-label="${esc(w.token(clean(t), i, side))}">` +
      `<text x="${n(x)}" y="${n(y(i) + FONT * 0.35)}" text-anchor="${anchor}" font-size="${FONT}" font-weight="${on ? 700 : 400}" fill="currentColor">${esc(label)}</text></g>`;
  });
}

// the maps: H ≥ 1 entries, square matrices of one size or null (a head not computed), at least
// one a matrix -> { size, heads: [values row-major, or null] }
function readMaps(maps) {
  if (!Array.isArray(maps) || maps.length === 0) throw new TypeError('renderHeadView: maps must be a non-empty array of n×n matrices, one per head');
  if (maps.every((m) => m === null)) {
    // the renderers throw the engine's own errors (read.js): they know nothing of the core
    throw new TypeError(`renderHeadView: maps has ${maps.length} heads and none was computed (all null); ask forward for this layer's heads, e.g. { attention: { layers: [l] } }`);
  }
  let size = 0, first = -1;
  const heads = maps.map((m, h) => {
    if (m === null) return null;
    let r;
    try { r = readMatrix(m); } catch (e) { e.message = e.message.replace('renderHeatmap: matrix', `renderHeadView: maps[${h}]`); throw e; }
    if (r.rows !== r.cols) throw new RangeError(`renderHeadView: maps[${h}] is ${r.rows}×${r.cols}; a head's map is n×n`);
    if (first >= 0 && r.rows !== size) throw new RangeError(`renderHeadView: maps[${h}] is ${r.rows}×${r.rows} but maps[${first}] is ${size}×${size}`);
    if (first < 0) first = h;
    size = r.rows;
    return r.values;
  });
  return { size, heads };
}

// computed: the maps' values (null for a head not computed, which is never shown)
function readHeadViewOptions(options, size, computed) {
  const H = computed.length;
  if (options === null || typeof options !== 'object') throw new TypeError('renderHeadView: options must be an object');
  for (const k of Object.keys(options)) if (!KEYS.includes(k)) throw new TypeError(`renderHeadView: unknown option "${String(k).slice(0, 40)}"; expected one of ${KEYS.join(', ')}`);
  const list = (v, name, len, dflt) => {
    if (v === undefined) return dflt;
    if (!Array.isArray(v) || v.length !== len) throw new RangeError(`renderHeadView: ${name} must be an array of ${len}`);
    return v.map(String);
  };
  const tokens = list(options.tokens, 'tokens', size, Array.from({ length: size }, (_, i) => String(i + 1)));
  const heads = list(options.heads, 'heads', H, Array.from({ length: H }, (_, i) => String(i)));
  const colours = options.colours === undefined ? HEAD_COLOURS : list(options.colours, 'colours', H);
  const hidden = new Set((options.hidden ?? []).map(String));
  const focus = options.focus ?? null;
  if (focus !== null && !(typeof focus === 'object' && ['query', 'key'].includes(focus.side) && Number.isInteger(focus.index) && focus.index >= 0 && focus.index < size)) {
    throw new RangeError(`renderHeadView: focus must be null or { side: 'query' | 'key', index: 0 … ${size - 1} }`);
  }
  const lang = options.lang ?? 'zh';
  if (!(lang in WORDS)) throw new RangeError(`renderHeadView: lang must be 'zh' or 'en'; received ${String(lang).slice(0, 20)}`);
  const min = options.min ?? 0;
  if (typeof min !== 'number' || !(min >= 0 && min < 1)) throw new RangeError('renderHeadView: min must be a number in [0, 1)');
  const idPrefix = String(options.idPrefix ?? 'hv').replace(/[^\w-]/g, '');
  const shown = heads.map((_, h) => h).filter((h) => computed[h] !== null && !hidden.has(heads[h]));
  return { tokens, heads, colours, focus, lang, min, idPrefix, shown, title: options.title === undefined ? undefined : String(options.title) };
}
