// page-problems.js - problems with X and with the link, said in the reader's language (issue 14):
// which value of X the core refused, the sentence that names its token and dimension, and the
// note about what a link asked for and did not get. Tokens and the link's text go in as text.
import { h, tok } from './page-dom.js';
import { fixed } from './page-format.js';

const FLT_MAX = 3.4028234663852886e38;

/**
 * Which value of x the core's refusal e is about, found on the page side: the first NaN or
 * infinity, the first value beyond float32, else (the result overflows) the largest value.
 */
export function classifyX(x, e) {
  const base = { code: e.code, message: e.message };
  if (e.code !== 'NON_FINITE') return { ...base, kind: 'other' };
  let big = { row: 0, col: 0, value: 0 };
  for (let i = 0; i < x.length; i++) {
    for (let j = 0; j < x[i].length; j++) {
      const v = x[i][j];
      if (!Number.isFinite(v)) return { ...base, kind: 'nan', row: i, col: j };
      if (Math.abs(v) > FLT_MAX) return { ...base, kind: 'range', row: i, col: j, value: v };
      if (Math.abs(v) > Math.abs(big.value)) big = { row: i, col: j, value: v };
    }
  }
  return { ...base, kind: 'overflow', ...big };
}

/** The sentence for a problem with X (T: the page's strings), naming the row's token and the dimension, then the core's own words. */
export function xProblemNodes(T, p, tokens) {
  const other = p.kind === 'other';
  const [a, b] = other ? T.xBad.other(p.code) : T.xBad[p.kind](p.col, fixed(p.value ?? 0, 4));
  return [a, other ? '' : tok(tokens[p.row]), b, ' ',
    h('span', { class: 'core-said' }, T.coreSaid, h('span', { lang: 'en' }, `${p.message} (${p.code})`))];
}

/** What the link asked for and did not get (hashProblems, page-state.js), as parts of the note; the link's own text goes in as text. */
export function linkNoteParts(T, problems) {
  const L = T.linkIgnored;
  const parts = [];
  problems.forEach((p, k) => {
    const pair = p.field === 't' ? L.t[p.reason](p.count) : p.field === 'x' ? L.x[p.reason](p.rows, p.count) : L[p.field];
    parts.push(k ? L.sep : '', pair[0], pair[1] ? h('span', { class: 'tok' }, p.value ?? '') : '', pair[1]);
  });
  return [T.linkNote, ' ', ...parts, L.end];
}
