// page-pe.js - episodes 03 and 04 on the page: where X comes from, and why word order needs PE.
//
// Two ways to get the input X (state.input, page-state.js):
//
//   'randn'  the article's code: X = torch.randn(n, 8) after torch.manual_seed(seed). X does not
//            look at the words at all: 鱼吃猫 gets exactly the X (and the heatmap) of 猫吃鱼.
//   'embed'  X = E[token] + PE(position), or X = E[token] with state.pe off:
//
//     E[token] = torch.randn(8, generator=torch.Generator().manual_seed(h)),
//                h = FNV-1a (32 bit) of the UTF-8 bytes of f"{seed} {token}"
//       A lookup by the token's identity: the same word gets the same vector wherever it stands,
//       in every sentence and on every visit, and a different seed gives a different table. (A real
//       model learns this table; here it is random, like the article's X.) Each word has its own
//       generator, so the default generator is left alone: W_Q, W_K, W_V are the next draws after
//       torch.manual_seed(seed) and do not depend on the sentence.
//     PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))
//       The sinusoidal encoding of "Attention Is All You Need" (section 3.5), computed in float64
//       and rounded to float32 (as torch does when it stores the float64 sines in a float32 tensor).
//
// Without PE, self-attention is permutation-equivariant: reorder the words and the weights are
// the same matrix with its rows and columns reordered the same way. With PE they differ.
//
// Pure parts (no DOM, testable in Node): tokenSeed, embedding, positionalEncoding, inputWeights,
// resizeX, reversed, alignRows, ulp32, roundingOnly, difference, embedLines. DOM part: createWordsSection(env).
import { manualSeed, episodeWeights } from '../rng/torch-rng.js';
import { toRows } from '../core/attention.js';
import { D_MODEL } from './page-state.js';
import { fixed } from '../heatmap/text.js';
import { fitHeatmap, sizeToBox } from './page-fit.js';                  // issue 39 P7
import { mapHint, watchEdges } from './page-scroll.js';
import { sharedScale, sharedScaleNote } from './page-scale.js';

const utf8 = new TextEncoder();
/** A sentence as the page writes it: Chinese characters run together, other tokens with spaces. */
const sentence = (ts) => (ts.every((t) => /^\p{Script=Han}+$/u.test(t)) ? ts.join('') : ts.join(' '));

/** FNV-1a (32 bit) of the UTF-8 bytes of `${seed} ${token}`: the seed of the token's generator. */
export function tokenSeed(seed, token) {
  let h = 0x811c9dc5;
  for (const b of utf8.encode(`${seed} ${token}`)) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

/** E[token]: torch.randn(d, generator=torch.Generator().manual_seed(tokenSeed(seed, token))). */
export const embedding = (seed, token, d = D_MODEL) => manualSeed(tokenSeed(seed, token)).randn(1, d);

/** PE (n, d) as number[][] of float32 values. */
export function positionalEncoding(n, d = D_MODEL) {
  return Array.from({ length: n }, (_, pos) => Array.from({ length: d }, (_, k) => {
    const angle = pos / 10000 ** ((k - (k % 2)) / d);
    return Math.fround(k % 2 ? Math.cos(angle) : Math.sin(angle));
  }));
}

/**
 * X and the three projections for a state { tokens, seed, dk, input, pe } (x not applied):
 * { x, wq, wk, wv } as { data: Float32Array, shape }, like episodeWeights; in 'embed' mode also
 * e and pe (number[][]; pe null when switched off).
 */
export function inputWeights({ tokens, seed, dk, input = 'randn', pe = true }) {
  const n = tokens.length;
  if (input !== 'embed') return episodeWeights(seed, n, D_MODEL, dk, dk);
  const g = manualSeed(seed);
  const [wq, wk, wv] = [0, 1, 2].map(() => ({ data: g.linear(D_MODEL, dk).T, shape: [D_MODEL, dk] }));
  const e = tokens.map((t) => Array.from(embedding(seed, t)));
  const p = pe ? positionalEncoding(n) : null;
  const data = new Float32Array(n * D_MODEL);
  e.forEach((row, i) => row.forEach((v, k) => { data[i * D_MODEL + k] = p ? v + p[i][k] : v; }));   // rounds like torch's float32 add
  return { x: { data, shape: [n, D_MODEL] }, wq, wk, wv, e, pe: p };
}

/** An edited X for new tokens (state: the page's, tokens: the new ones): its rows kept, new ones as the page would draw them; no X, null. */
export function resizeX(x, state, tokens) {
  if (!x) return null;
  const random = toRows(inputWeights({ ...state, tokens }).x);
  return tokens.map((_, i) => (x[i] ? [...x[i]] : random[i]));
}

/** The sentence backwards, and where each of its tokens stood: reversed[k] = tokens[perm[k]]. */
export function reversed(tokens) {
  const perm = tokens.map((_, k) => tokens.length - 1 - k);
  return { tokens: perm.map((p) => tokens[p]), perm };
}

/**
 * b's rows and columns in a's order (issue 24, the aligned view): out[i][j] = b[k][l] where b's
 * tokens k and l are a's tokens i and j (perm from reversed: b's token k is a's token perm[k]).
 */
export function alignRows(b, perm) {
  const at = [];
  perm.forEach((p, k) => { at[p] = k; });
  return at.map((k) => at.map((l) => b[k][l]));
}

const F32 = new Float32Array(1), U32 = new Uint32Array(F32.buffer);

/** float32's spacing at |v|: from |v| (as a float32) to the next float32 up (at 0, the smallest subnormal). */
export function ulp32(v) {
  F32[0] = Math.abs(v);
  const at = F32[0];
  U32[0] += 1;
  return F32[0] - at;
}

/**
 * Whether two softmax weights of rows of n differ by float32 rounding alone (issue 39 P1): by at
 * most 2n ulp of the larger. A weight is exp ÷ (the sum of the row's n exps); the reversed
 * sentence adds the same exps in another order, each order's n − 1 additions round (relative error
 * under (n − 1)·2⁻²⁴) and the division once more, so the two weights part by under 2n·2⁻²⁴ of the
 * larger, which is under 2n of its ulp. (Measured: at most 7 ulp at 16 tokens over 900 sentences.)
 */
export const roundingOnly = (a, b, n) => Math.abs(a - b) <= 2 * n * ulp32(Math.max(Math.abs(a), Math.abs(b)));

/**
 * |a − b| cell by cell, a gap at float32 rounding counted as 0 (roundingOnly, rows of a's length),
 * and where the largest is: { diff, max, row, col } (the first on a tie).
 */
export function difference(a, b) {
  let max = 0, row = 0, col = 0;
  const diff = a.map((r, i) => r.map((v, j) => {
    const d = roundingOnly(v, b[i][j], r.length) ? 0 : Math.abs(v - b[i][j]);
    if (d > max) { max = d; row = i; col = j; }
    return d;
  }));
  return { diff, max, row, col };
}

/** The lines of the PyTorch snippet that make X in 'embed' mode (s: strings/snippets.js, one language). */
export function embedLines(s, { tokens, seed, pe = true }) {
  const t = s.pe, n = tokens.length;
  const L = [`# ${t.embed}`, `# ${t.table}`, `d_model = ${D_MODEL}`, `tokens = ${JSON.stringify(tokens)}`, '',
    'def embedding(token):',
    `    h = 2166136261   # ${t.fnv}`,
    `    for b in f"${seed} {token}".encode():`,
    '        h = (h ^ b) * 16777619 % 2**32',
    '    return torch.randn(d_model, generator=torch.Generator().manual_seed(h))', '',
    `E = torch.stack([embedding(t) for t in tokens])   # (${n}, ${D_MODEL}), ${t.same}`, ''];
  if (!pe) return [...L, `X = E   # ${t.off}`];
  return [...L, `# ${t.pe}`,
    'n = len(tokens)',
    `pos = torch.arange(n, dtype=torch.float64).unsqueeze(1)   # ${t.pos}`,
    'two_i = torch.arange(0, d_model, 2, dtype=torch.float64)   # 2i = 0, 2, 4, 6',
    'angle = pos / 10000 ** (two_i / d_model)',
    'PE = torch.zeros(n, d_model)',
    'PE[:, 0::2] = torch.sin(angle)   # PE[pos, 2i]   = sin(pos / 10000^(2i/d_model))',
    'PE[:, 1::2] = torch.cos(angle)   # PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))',
    `X = E + PE   # (${n}, ${D_MODEL})`];
}

// ------------------------------------------------------------------------------------------------
// the section: the switch, E and PE, the sentence beside its reverse

/**
 * env: { $, h, matrixTable, getState(), getT(), getAttn(), setInput({ input?, pe? }) }.
 * Returns { bind(), render() }; render() draws from the page's state (an edited X is left out: the
 * comparison is about where X comes from).
 */
/**
 * A heatmap's figure whose title is HTML above the map, where a long sentence wraps (page.css's
 * .map hides the SVG's one-line title, which would run past the edge; an exported SVG keeps it):
 * #id-title, the map's box #id, its caption #id-cap, and between them the hint a map gets where it
 * scrolls or hides its numbers (page-scroll.js). The word-order maps here and RoPE's
 * (page-rope.js) are drawn in these, by drawTitledMap.
 */
export function titledMap(h, id) {
  const box = h('div', { id, class: 'words-map' });
  watchEdges(box);
  return h('figure', { class: 'card figure map' },
    h('p', { id: `${id}-title`, class: 'map-title', 'aria-hidden': 'true' }),
    h('div', { class: 'map-box' }, box), mapHint(), h('figcaption', { id: `${id}-cap`, class: 'note' }));
}

/**
 * A titledMap's map (issue 39 P7): its cells as large as its box, width px, allows (at most max),
 * never so small that its labels are under 9 px (page-fit.js: the box scrolls then); its title
 * as HTML; the words of its hint. options: renderHeatmap's, title included. T: the page's strings.
 */
export function drawTitledMap(T, box, matrix, options, width, { max = 52 } = {}) {
  const frame = box.closest('.map');
  frame.querySelector('.map-title').textContent = options.title;
  box.innerHTML = fitHeatmap(matrix, options, width, { max }).svg;
  sizeToBox(box);
  frame.querySelector('.hint-scroll').textContent = T.mapScrolls;
  frame.querySelector('.hint-values').textContent = T.mapValuesHover;     // its cells take no focus
}

/** The widths of the boxes of these maps, read before anything is written (one layout). */
export const boxWidths = ($, ids) => Object.fromEntries(ids.map((id) => [id, $(id).clientWidth || 280]));

export function createWordsSection(env) {
  return { bind: () => bindWords(env), render: () => renderWords(env) };
}

function bindWords(env) {
  const { $, h } = env;
  const box = $('words');
  box.setAttribute('aria-labelledby', 'words-title');
  box.replaceChildren(
    h('h2', { id: 'words-title' }), h('p', { id: 'words-text' }),
    h('div', { class: 'words-controls' },
      h('span', { id: 'words-input-label', class: 'seg-label' }),
      h('div', { id: 'words-input', class: 'seg', role: 'radiogroup', 'aria-labelledby': 'words-input-label' },
        ...['randn', 'embed'].map((v) => h('label', { class: 'seg-item' },
          h('input', { type: 'radio', name: 'words-input', value: v }), h('span', { 'data-input': v })))),
      h('label', { class: 'switch' }, h('input', { id: 'words-pe', type: 'checkbox', role: 'switch' }), h('span', { id: 'words-pe-label' }))),
    h('div', { id: 'words-tables', class: 'tables' }),
    h('div', { class: 'words-pair' }, titledMap(h, 'words-a'), titledMap(h, 'words-b')),
    h('p', { id: 'words-scale', class: 'note map-scale' }),                 // issue 39 P7: the maps' colours
    // issue 24: B with its rows and columns in A's order, and |A − that| cell by cell
    h('div', { class: 'words-pair words-compare' }, titledMap(h, 'words-aligned'), titledMap(h, 'words-diff')),
    h('p', { id: 'words-verdict', class: 'worked', 'aria-live': 'polite' }));
  $('words-input').addEventListener('change', (e) => env.setInput({ input: e.target.value }));
  $('words-pe').addEventListener('change', (e) => env.setInput({ pe: e.target.checked }));
}

function renderWords(env) {
  const { $, h, matrixTable } = env;
  const state = env.getState(), T = env.getT(), W = T.teach.words, attn = env.getAttn();
  const widths = boxWidths($, ['words-a', 'words-b', 'words-aligned', 'words-diff']);
  const embed = state.input === 'embed';
  $('words-title').innerHTML = W.title;
  $('words-text').innerHTML = W.text;
  $('words-input-label').textContent = W.inputLabel;
  for (const el of $('words-input').querySelectorAll('span[data-input]')) el.innerHTML = W.inputs[el.dataset.input];
  for (const el of $('words-input').querySelectorAll('input')) el.checked = el.value === state.input;
  $('words-pe').checked = embed && state.pe;              // what is applied: torch.randn has no PE (issue 39 P10)
  $('words-pe').disabled = !embed;
  $('words-pe-label').innerHTML = W.peLabel;

  const a = { tokens: state.tokens }, b = reversed(state.tokens);
  /** The weights of a sentence, with the page's settings or others ({ pe, causal }). */
  const weights = (tokens, other = {}) => {
    const w = inputWeights({ ...state, ...other, tokens });
    return { w, attn: toRows(attn.selfAttention({ x: w.x, wq: w.wq, wk: w.wk, wv: w.wv }, { causal: other.causal ?? state.causal }).weights) };
  };
  const A = weights(a.tokens), B = weights(b.tokens);

  $('words-tables').replaceChildren(...(embed ? [           // columns (and PE's rows) numbered from 1, matrixTable's default
    matrixTable(T.matrixShape(T.teach.words.eName, a.tokens.length, D_MODEL), A.w.e, { rowLabels: a.tokens }),
    ...(A.w.pe ? [matrixTable(T.matrixShape('PE[pos]', a.tokens.length, D_MODEL), A.w.pe)] : []),
  ] : []));

  // the three maps of weights (the sentence, its reverse, the reverse aligned) share the top map's colour rule
  const masked = state.causal ? 'causal' : null;
  const scale = sharedScale(state, [{ rows: A.attn, masked }, { rows: B.attn, masked }]);
  $('words-scale').textContent = sharedScaleNote(T, scale);
  const draw = (id, tokens, m) => drawTitledMap(T, $(id), m, {
    rowLabels: tokens, colLabels: tokens, lang: state.lang, idPrefix: id, legend: false,
    decimals: tokens.length <= 6 ? 2 : 1, title: sentence(tokens), ...(masked ? { masked } : {}), ...scale.options,
  }, widths[id]);
  draw('words-a', a.tokens, A.attn);
  draw('words-b', b.tokens, B.attn);
  $('words-a-cap').textContent = W.caption(sentence(a.tokens));
  $('words-b-cap').textContent = W.caption(sentence(b.tokens));

  // the verdict says what the difference map shows: the same numbers (issue 39 P10)
  const gapOf = (other) => difference(weights(a.tokens, other).attn, alignRows(weights(b.tokens, other).attn, b.perm)).max;
  const d = difference(A.attn, alignRows(B.attn, b.perm));
  drawCompare(env, a.tokens, b, B.attn, d, { scale, widths });
  const perm = `(${b.perm.map((p) => p + 1).join(' ')})`, gap = fixed(d.max, 4);
  const sa = h('span', { class: 'tok' }, sentence(a.tokens)), sb = h('span', { class: 'tok' }, sentence(b.tokens));
  const parts = !embed ? W.verdictRandn(d.max > 0 ? gap : null)
    : !state.pe ? W.verdictNoPe(perm, d.max === 0, state.causal, gap)
      // both PE and the mask know the order: each one's own gap, the other switched off
      : W.verdictPe(perm, gap, state.causal ? { pe: fixed(gapOf({ causal: false }), 4), mask: fixed(gapOf({ pe: false }), 4) } : null);
  const verdict = $('words-verdict');
  verdict.dataset.gap = String(d.max);
  verdict.dataset.perm = perm;
  verdict.replaceChildren(...parts.map((p) => (p === 'A' ? sa.cloneNode(true) : p === 'B' ? sb.cloneNode(true) : p)));
}

/**
 * The aligned view and the difference map: B's weights moved to A's rows and columns (the causal
 * mask moves with them), and d = difference(A, aligned B) with 4 decimals on a 0 … largest-difference
 * scale, so a difference of 0.05 is as visible as one of 0.5 (all zeros: one colour, and the caption says so).
 */
function drawCompare(env, tokens, b, wb, d, { scale, widths }) {
  const { $ } = env;
  const state = env.getState(), T = env.getT(), W = T.teach.words;
  const n = tokens.length, aligned = alignRows(wb, b.perm);
  const at = [];
  b.perm.forEach((p, k) => { at[p] = k; });
  const mask = state.causal ? tokens.map((_, i) => tokens.map((_, j) => at[j] > at[i])) : null;
  const common = { rowLabels: tokens, colLabels: tokens, lang: state.lang, legend: false };
  const titles = { aligned: W.alignedTitle(sentence(b.tokens), sentence(tokens)), diff: W.diffTitle(sentence(tokens), sentence(b.tokens)) };
  drawTitledMap(T, $('words-aligned'), aligned, { ...common, idPrefix: 'words-aligned', decimals: n <= 6 ? 2 : 1,
    title: titles.aligned, ...(mask ? { masked: mask } : {}), ...scale.options }, widths['words-aligned']);
  // its own scale, 0 to the largest difference; its numbers hidden where too small, as the top map's
  drawTitledMap(T, $('words-diff'), d.diff, { ...common, idPrefix: 'words-diff', decimals: n <= 6 ? 4 : 2,
    min: 0, max: d.max > 0 ? d.max : 1, title: titles.diff }, widths['words-diff'], { max: 60 });
  $('words-aligned-cap').textContent = W.alignedCaption(sentence(b.tokens), sentence(tokens));
  const cap = $('words-diff-cap');
  cap.dataset.max = String(d.max);
  cap.textContent = d.max > 0 ? W.diffCaption(fixed(d.max, 4), tokens[d.row], tokens[d.col]) : W.diffZero;
}
