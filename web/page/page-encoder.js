// page-encoder.js - what the checkpoint section (page-checkpoint.js) draws differently for an
// encoder (BERT, issue 25) and what it shares with causal models: which positions a map keeps,
// the rows it shows, and the fill-mask box.
//
// Every map shows the kept positions only. A causal model may leave out its first token; an
// encoder may leave out [CLS], [SEP] and padding. A left-out position loses its row and its
// column, and each remaining row is divided by what is left of it over the keys its query sees
// (w[i][j] / Σ_k w[i][k], k kept; causal: k ≤ i). With every position kept the rows are the
// model's own, untouched.

/** The tokens an encoder adds around the text ([CLS] A [SEP] B [SEP]), or pads with. */
export const SPECIAL_TOKENS = new Set(['[CLS]', '[SEP]', '[PAD]', '<s>', '</s>', '<pad>']);

/**
 * The positions a map shows, in order. labels: the tokens; hide: the reader's switch (causal:
 * the first token; encoder: the special tokens). Never empty: with nothing left, all are kept.
 */
export function keptPositions(labels, { causal, hide }) {
  const all = labels.map((_, i) => i);
  if (!hide) return all;
  const kept = causal ? all.slice(1) : all.filter((i) => !SPECIAL_TOKENS.has(labels[i]));
  return kept.length ? kept : all;
}

/**
 * rows[i]: the weights of query i over every key (causal: keys 0..i used). Returns the rows of
 * the kept queries over the kept keys they see, renormalised; a causal row a holds a + 1 values.
 */
export function shownRows(rows, kept, causal) {
  if (kept.length === rows.length) return rows;
  return kept.map((i, a) => {
    const keys = causal ? kept.slice(0, a + 1) : kept;
    let sum = 0;
    for (const j of keys) sum += rows[i][j];
    return Float64Array.from(keys, (j) => (sum > 0 ? rows[i][j] / sum : 0));
  });
}

/**
 * The fill-mask box: for each [MASK] of the text, its likeliest tokens and their probabilities
 * (model.fillMask's result). h: the page's element helper; C: the section's strings.
 */
export function fillMaskList(h, C, results) {
  return h('ol', { class: 'fill-list' }, ...results.map(({ index, top }) => h('li', { 'data-index': index },
    h('span', { class: 'fill-at' }, C.fillAt(index)),
    ...top.map(({ id, token, p }) => h('span', { class: 'fill-tok', 'data-id': id, 'data-token': token, 'data-p': String(p) },
      h('span', { class: 'tok' }, token), ' ', h('span', { class: 'muted' }, p.toFixed(3)))))));
}
