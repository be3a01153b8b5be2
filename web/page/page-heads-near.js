// page-heads-near.js - the head view around the hovered token, under the heads panel's big map
// (page-heads.js; issue 37 item 5): BertViz's lines (web/heatmap/head-view.js) for the token the
// pointer is on, over the tokens near it and the keys it weighs most, wherever they are (the first
// token's sink, the token after the last time this one came). A long map's row is thousands of
// cells wide; these few tokens are where its weight goes.
//
//   nearTokens(row, i, { before: 8, after: 3, top: 4 }) -> sorted positions: i − 8 … i + 3 and the top keys
//   nearView(map, labels, i, { layer, head, lang, words })  -> an SVG string (renderHeadView), i in focus
import { renderHeadView } from '../heatmap/head-view.js';

export const NEAR = Object.freeze({ before: 8, after: 3, top: 4 });

/** Positions shown for query i: a window around it and the `top` keys of its row (ties: the lower). */
export function nearTokens(row, i, { before = NEAR.before, after = NEAR.after, top = NEAR.top } = {}) {
  const n = row.length, set = new Set();
  for (let j = Math.max(0, i - before); j <= Math.min(n - 1, i + after); j++) set.add(j);
  const best = Array.from(row.keys()).sort((a, b) => row[b] - row[a] || a - b).slice(0, top);
  for (const j of best) set.add(j);
  return [...set].sort((a, b) => a - b);
}

/**
 * The head view of query i of `map` ({ data, shape: [n, n] }): the rows and columns of nearTokens,
 * each token labelled with its position (from 1, as the page counts) and text, i's lines alone.
 * words: the heads panel's strings (nearTitle).
 */
export function nearView(map, labels, i, { layer, head, lang, words }) {
  const n = map.shape[1], row = map.data.subarray(i * n, i * n + n);
  const at = nearTokens(row, i);
  const sub = at.map((r) => at.map((c) => map.data[r * n + c]));
  return renderHeadView([sub], {
    tokens: at.map((j) => `${j + 1} ${labels[j]}`), heads: [words.headShort(head)], lang, idPrefix: 'roles-hv',
    focus: { side: 'query', index: at.indexOf(i) }, title: words.nearTitle(layer, head, i, labels[i]),
  });
}
