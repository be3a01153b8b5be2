// render.js - what the element draws: the budgets of one element, and the SVG of each panel as
// renderHeatmap options (roles, tab stop, cell labels, captions). Pure: strings, no DOM.
import { renderHeatmap } from '../heatmap/svg.js';   // the SVG renderer alone (heatmap.js adds the canvas)
import { isList } from '../heatmap/read.js';
import { Problem, bad } from './parse.js';

// Budgets of one element, checked before anything is computed or drawn (docs/EMBED.md): at most
// MAX_CELLS over all its heatmaps (heads, output) together, MAX_LABEL_CHARS over all tokens.
import { MAX_CELLS, MAX_LABEL_CHARS, CELL_TEXT } from '../heatmap/budgets.js';

/** renderHeatmap, its TypeError/RangeError (a matrix it cannot draw) shown as an input problem. */
export function draw(matrix, options) {
  try { return renderHeatmap(matrix, options); } catch (e) { throw new Problem('input', e.message); }
}

/** [rows, cols] of a matrix as given, NaN where it cannot tell (the core names the problem). */
function dims(m) {
  try {
    const d = Array.isArray(m) ? [m.length, isList(m[0]) ? m[0].length : 0] : [m?.shape?.[0], m?.shape?.[1]];
    return d.map((x) => (Number.isInteger(x) && x > 0 ? x : NaN));
  } catch { return [NaN, NaN]; }
}

/** The budgets, from the shapes alone; a heatmap over 256×256 gets the renderer's own message. */
export function checkBudget({ tokens, q, k, v, x, wv, wo, heads }) {
  const chars = tokens ? tokens.reduce((sum, t) => sum + t.length, 0) : 0;
  if (chars > MAX_LABEL_CHARS) bad(`tokens has ${chars} characters; the budget is ${MAX_LABEL_CHARS} for all tokens together`);
  const [n] = dims(x ?? q), m = x === undefined ? dims(k)[0] : n, h = heads ?? 1;
  // the output: n × d_v (v, wv) or n × d_model (x with seed, or wo with heads)
  const d = x === undefined ? (v === undefined ? 0 : dims(v)[1]) : dims(heads === undefined ? wv ?? x : wo ?? x)[1];
  for (const shape of [[n, m], [n, d]]) if (shape[0] * shape[1] > MAX_CELLS) draw({ data: [], shape });
  const out = n * d || 0, total = h * n * m + out;
  if (total > MAX_CELLS) {
    bad(`this would draw ${total} cells (${h > 1 ? `${h} heads × ` : ''}${n}×${m} weights${out ? ` + ${n}×${d} output` : ''}); ` +
      `the budget is ${MAX_CELLS} cells per element, all heatmaps together`);
  }
}

// at most max UTF-16 units with "…" (whole code points)
const cut = (s, max) => (s.length <= max ? s : Array.from(s.slice(0, max)).slice(0, -1).join('').trimEnd() + '…');

/**
 * The SVG of each panel: "heatmap" (the weights, or head 1), "head2" … (more heads) and "output"
 * (or none), all rendered before anything on screen changes, so that a refusal changes nothing.
 * t: strings/element.js in lang; active: panel -> [row, col] of its tab stop, kept where it fits.
 * Returns { svgs, active, sharing } (sharing: several heads share one caption line).
 */
export function renderPanels(detail, input, lang, t, id, active) {
  const { output, tokens } = detail;
  // with heads, weights is an array: one (n, m) matrix per head, each drawn in its own panel
  const multi = Array.isArray(detail.weights);
  const list = multi ? detail.weights : [detail.weights];
  const [n, m] = list[0].shape;
  const dHead = multi ? detail.heads[0].shape[1] : 0;
  // every cell of every heatmap repeats the tokens: cut to CELL_TEXT / (all cells) characters
  const cells = list.length * n * m + (output ? output.shape[0] * output.shape[1] : 0);
  const labels = tokens?.map((s) => cut(s, Math.floor(CELL_TEXT / cells)));
  const sharing = list.length > 1;
  const stops = {}, svgs = {};
  const tabStop = (key, [rows, cols]) => {
    const [r, c] = active[key] ?? [0, 0];
    return (stops[key] = r < rows && c < cols ? [r, c] : [0, 0]);
  };
  // role="img" would make the cells presentational; as a labelled group they stay reachable
  const common = { rowLabels: labels, lang, decimals: input.decimals, standalone: false, role: 'group' };
  list.forEach((w, h) => {
    const key = h === 0 ? 'heatmap' : `head${h + 1}`;
    svgs[key] = draw(w, {
      ...common, colLabels: labels, masked: input.causal ? 'causal' : undefined, idPrefix: `${id}-w${h ? h + 1 : ''}`,
      title: multi ? t.head(h + 1, dHead, input.causal) : input.causal ? t.causal : t.title,
      activeCell: tabStop(key, [n, m]),
      // one head among several: say which
      cellLabel: sharing ? (c) => t.headCell(h + 1, c.label) : undefined,
    });
  });
  // the output's cells are dimensions, not keys
  svgs.output = output && draw(output, {
    ...common, scale: 'diverging', idPrefix: `${id}-o`, title: multi ? t.mhaOut : t.out,
    cellSize: Math.min(40, Math.max(14, Math.round(512 / Math.max(...output.shape)))),
    rowCaption: t.outRows, colCaption: t.outCols, description: t.outDesc,
    activeCell: tabStop('output', output.shape),
    cellLabel: (c) => t.outCell(c.rowLabel, c.col, c.valueText),
  });
  return { svgs, active: stops, sharing };
}
