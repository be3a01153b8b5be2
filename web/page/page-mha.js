// page-mha.js - the episode-06 preview on the page: multi-head attention on the page's tokens.
//
// Pure parts (no DOM, testable in Node): mhaWeights, computeMha, mhaSnippet.
// DOM part: createMhaSection(env), driven by page.js, which lends its helpers (tables, heatmaps
// with keyboard navigation and the explanation panel) so that the section looks and behaves like
// the rest of the page.
//
// The weights follow PyTorch exactly (web/rng/torch-rng.js), in the order of the snippet below:
//
//   torch.manual_seed(seed)
//   X   = torch.randn(n, 8)                                   # the episode-05 draws ...
//   W_q = nn.Linear(8, 8, bias=False); W_k = ...; W_v = ...   # ... with d_k = d_model = 8
//   W_o = nn.Linear(8, 8, bias=False)                         # one more: the output projection
//
// so with d_k = 8 the MHA reuses the page's W_Q, W_K, W_V, and 1 head + W_O is the episode's
// self-attention followed by W_O. Every number shown comes from the C core
// (attn.multiHeadAttention); Q and K for the explanation of a cell come from attn.selfAttention.
import { toRows, AttentionError } from '../core/attention.js';
import { manualSeed } from '../rng/torch-rng.js';
import * as SNIPPET from '../strings/snippets.js';
import { D_MODEL, HEAD_CHOICES } from './page-state.js';
import { snippetHead, editedX } from './page-format.js';
import { embedLines } from './page-pe.js';
import { setHtml, sharedScale } from './page-scale.js';
import { classifyX, xProblemNodes } from './page-problems.js';

/**
 * X, W_Q, W_K, W_V, W_O after torch.manual_seed(seed), in the episode's layout (Q = X · W_Q):
 * each W is nn.Linear(d_model, d_model, bias=False).weight.T, (d_model, d_model). With
 * drawX false (X = E + PE, page-pe.js, which draws from generators of its own) the W are the
 * first draws after the seed, as in episode 05's embed mode, and x is null.
 */
export function mhaWeights(seed, n, dModel = D_MODEL, { drawX = true } = {}) {
  const g = manualSeed(seed);
  const x = drawX ? { data: g.randn(n, dModel), shape: [n, dModel] } : null;
  const [wq, wk, wv, wo] = [0, 1, 2, 3].map(() => ({ data: g.linear(dModel, dModel).T, shape: [dModel, dModel] }));
  return { x, wq, wk, wv, wo };
}

/**
 * The section's numbers. x: number[][] (n, D_MODEL) or null for torch.randn(n, 8) from the seed.
 * Returns { heads, dHead, n, x, w, res, perHead: [{ weights, q, k }], concat, output } with
 * res = attn.multiHeadAttention(...) as the core returns it and the rest as number[][].
 */
export function computeMha(attn, { seed, n, x = null, heads, causal = false, input = 'randn' }) {
  if (!HEAD_CHOICES.includes(heads)) throw new RangeError(`heads must be one of ${HEAD_CHOICES.join(', ')}; received ${heads}`);
  if (input === 'embed' && !x) throw new TypeError('computeMha: in embed mode x (E + PE) must be given');
  const w = mhaWeights(seed, n, D_MODEL, { drawX: input !== 'embed' });
  const xs = x ?? toRows(w.x);
  const res = attn.multiHeadAttention({ x: xs, wq: w.wq, wk: w.wk, wv: w.wv, wo: w.wo }, { heads, causal });
  // Q = X·W_Q and K = X·W_K (n, d_model) for the arithmetic of one cell, projected by the core:
  // selfAttention with W_K in the place of W_V returns it as `v`, and a zero W_K keeps its
  // scores at 0, so only the two projections matter (nothing of size n×n can overflow here
  // when the multi-head attention did not).
  const zero = { data: new Float32Array(D_MODEL * D_MODEL), shape: [D_MODEL, D_MODEL] };
  const proj = attn.selfAttention({ x: xs, wq: w.wq, wk: zero, wv: w.wk });
  const dHead = D_MODEL / heads;
  const q = toRows(proj.q), k = toRows(proj.v);
  const cols = (rows, h) => rows.map((r) => r.slice(h * dHead, (h + 1) * dHead));
  return {
    heads, dHead, n, causal, x: xs, w, res,
    perHead: res.weights.map((m, h) => ({ weights: toRows(m), q: cols(q, h), k: cols(k, h) })),
    concat: toRows(res.concat), output: toRows(res.output),
  };
}

/**
 * The PyTorch code that prints the section's numbers, for the page's state. Plain torch ops: the
 * heads are split with .view / .transpose. tests/golden/make_page_mha.py runs this very text
 * (and checks it against F.multi_head_attention_forward).
 */
export function mhaSnippet({ tokens, seed, causal, heads, x, input, pe }, lang = 'zh') {
  const s = SNIPPET[lang] ?? SNIPPET.zh, t = s.ep06;
  const n = tokens.length;
  const L = snippetHead(s, seed, tokens);
  if (input === 'embed') L.push(...embedLines(s, { tokens, seed, pe }), ...editedX(s.pe, x));
  else L.push(`X = torch.randn(${n}, ${D_MODEL})   # ${t.randn}`, ...editedX(s, x));
  L.push('n, d_model = X.shape');
  L.push(`num_heads = ${heads}`);
  L.push(`d_head = d_model // num_heads   # ${t.dHead(D_MODEL / heads)}`, '');
  L.push(`# ${t.same}`);
  L.push('W_q = torch.nn.Linear(d_model, d_model, bias=False)');
  L.push('W_k = torch.nn.Linear(d_model, d_model, bias=False)');
  L.push('W_v = torch.nn.Linear(d_model, d_model, bias=False)');
  L.push(`# ${t.wo}`);
  L.push('W_o = torch.nn.Linear(d_model, d_model, bias=False)', '');
  L.push(`# ${t.split}`, `# ${t.cols}`);
  L.push('Q = W_q(X).view(n, num_heads, d_head).transpose(0, 1)');
  L.push('K = W_k(X).view(n, num_heads, d_head).transpose(0, 1)');
  L.push('V = W_v(X).view(n, num_heads, d_head).transpose(0, 1)', '');
  L.push(`# ${t.four}`);
  L.push(`scores = Q @ K.transpose(-2, -1) / d_head ** 0.5   # (num_heads, ${n}, ${n})`);
  if (causal) {
    L.push(`# ${t.causal}`);
    L.push('mask = torch.ones(n, n, dtype=torch.bool).triu(1)');
    L.push("scores = scores.masked_fill(mask, float('-inf'))");
  }
  L.push(`attn_weights = F.softmax(scores, dim=-1)           # (num_heads, ${n}, ${n}): ${t.weights}`);
  L.push(`heads = attn_weights @ V                           # (num_heads, ${n}, d_head)`, '');
  L.push(`# ${t.concat}`);
  L.push(`concat = heads.transpose(0, 1).reshape(n, d_model)   # (${n}, ${D_MODEL})`);
  L.push(`# ${t.out}`);
  L.push(`output = W_o(concat)                               # (${n}, ${D_MODEL}) = concat @ W_o.weight.T`, '');
  L.push('torch.set_printoptions(precision=4)');
  L.push(`print("${t.printW}", attn_weights)`);
  L.push(`print("${s.printO}", output)`);
  return L.join('\n') + '\n';
}

// ------------------------------------------------------------------------------------------------
// the section (DOM)

/**
 * env: {
 *   $, h, matrixTable, drawHeatmap, wireHeatmap, heatmaps,   page.js's helpers and heatmap registry
 *   narrowestHeatmap(ctx, title)                             (page-heatmaps.js narrowest)
 *   getState(), getT(), getAttn(),                           the current state, strings and core
 *   setHeads(heads)                                          the reader chose a number of heads
 * }
 * Returns { bind(), render(x), clear(), show(x, tokens), lastResult(), renderTemp() }. render(x)
 * takes the page's X (number[][]); it computes everything before it touches the DOM, so when the
 * core throws nothing has changed; show does the same and says in the section why it could not. renderTemp(): the one-head note again, for the top map's new temperature.
 */
export function createMhaSection(env) {
  const figures = [];          // one per possible head, created once (wired once)
  let last = null;
  return {
    bind: () => bindSection(env, figures),
    render(x) {
      const { seed, tokens, heads, causal, input } = env.getState();
      last = computeMha(env.getAttn(), { seed, n: tokens.length, x, heads, causal, input });
      showSection(env, figures, last);
    },
    /** After the core refused the page's X: no stale numbers. */
    clear() {
      last = null;
      clearSection(env, figures);
    },
    /** render(x), or, where the core refuses this X, no stale numbers and why (tokens: its rows'), in the section. */
    show(x, tokens) {
      env.$('mha-msg').replaceChildren();
      try {
        this.render(x);
      } catch (e) {
        if (!(e instanceof AttentionError)) throw e;
        this.clear();
        env.$('mha-msg').replaceChildren(env.getT().mhaError, ' ', ...xProblemNodes(env.getT(), classifyX(x, e), tokens));
      }
    },
    lastResult: () => last,
    renderTemp: () => oneHeadNote(env),
  };
}

/** With one head, the note that this map is the one at the top, at the temperature that one is drawn at (issue 39 P2). */
function oneHeadNote(env) {
  setHtml(env.$('mha-one'), env.getT().mhaOne(env.getState().temp));          // numbers only
}

/** One figure per possible head (wired once), the heads radio group, the copy button. */
function bindSection(env, figures) {
  const { $, h, wireHeatmap } = env;
  const grid = $('mha-grid');
  for (let k = 0; k < HEAD_CHOICES[HEAD_CHOICES.length - 1]; k++) {
    const box = h('div', { id: `mha-h${k}`, class: 'heatmap' });
    const cap = h('figcaption', { class: 'note' });
    const fig = h('figure', { class: 'card figure head', hidden: true }, box, cap);
    grid.append(fig);
    figures.push({ fig, box, cap });
    wireHeatmap(`mha${k}`, box);
  }
  const radios = $('mha-heads');
  radios.replaceChildren(...HEAD_CHOICES.map((c) => h('label', { class: 'seg-item' },
    h('input', { type: 'radio', name: 'heads', value: c }), h('span', {}, String(c)))));
  radios.addEventListener('change', (e) => {
    if (e.target.name === 'heads') env.setHeads(Number(e.target.value));
  });
  $('copy-mha-code').addEventListener('click', () => env.copy($('mha-snippet').textContent, $('copy-mha-code')));
}

/** The section for computeMha's result m: the setup line, one heatmap per head, the tables, the code. */
function showSection(env, figures, m) {
  const { $ } = env;
  const state = env.getState(), T = env.getT();
  const { heads, causal, seed } = state;
  const tokens = [...state.tokens];
  for (const input of $('mha-heads').querySelectorAll('input')) input.checked = Number(input.value) === heads;
  $('mha-setup').innerHTML = T.mhaSetup(tokens.length, heads, m.dHead, seed, causal, state.dk);   // numbers only
  $('mha-layout').dataset.heads = String(heads);
  showHeads(env, figures, m, tokens);
  $('mha-one').hidden = heads !== 1;
  oneHeadNote(env);
  showTables(env, m, tokens);
  $('mha-snippet').textContent = mhaSnippet(state, state.lang);
}

/**
 * The heads' heatmaps. Issue 39 P7: they share the top map's colour rule and one range (each
 * legend says which), and each is drawn as large as its box allows with no text under 9 px: the
 * grid has as many columns as heads of legible width fit (page.css reads --head-map), so fewer on
 * a phone, and a head wider than its box scrolls. The figures are shown first, so that each
 * heatmap measures its own box; the last head is drawn first, so that the shared explanation panel
 * ends on head 1 (or stays on the reader's cell, page-heatmaps.js).
 */
function showHeads(env, figures, m, tokens) {
  const { $, drawHeatmap, heatmaps } = env;
  const T = env.getT(), { heads, causal } = m;
  const scale = sharedScale(env.getState(), m.perHead.map((ph) => ({ rows: ph.weights, masked: causal ? 'causal' : null })));
  const ctxOf = (k) => ({
    tokens, n: tokens.length, weights: m.perHead[k].weights, q: m.perHead[k].q, k: m.perHead[k].k, scores: null, scaled: null,
    dk: m.dHead, dName: 'd_head', scale: 1 / Math.sqrt(m.dHead), causal, label: T.mhaHead(k + 1, m.dHead),
    explainPanel: $('mha-explain'), fit: true, colourOptions: scale.options,
    // 4 or 8 heatmaps: 2 decimals in the cells (the explanation, the tooltips and the cells'
    // labels keep 4); where even those would be too small, page.js hides them (values-hidden)
    decimals: heads < 4 ? undefined : 2,
  });
  $('mha-grid').style.setProperty('--head-map', `${Math.ceil(env.narrowestHeatmap(ctxOf(0), T.mhaHead(1, m.dHead)))}px`);
  figures.forEach((f, k) => { f.fig.hidden = k >= heads; });
  [...figures.entries()].reverse().forEach(([k, f]) => {
    const key = `mha${k}`;
    if (k >= heads) {
      delete heatmaps[key];
      f.box.replaceChildren();
      return;
    }
    drawHeatmap(key, f.box, ctxOf(k), T.mhaHead(k + 1, m.dHead));
    f.cap.innerHTML = T.mhaHeadCols(k * m.dHead + 1, (k + 1) * m.dHead);        // numbers only, counted from 1
  });
}

/** The concat and W_O tables, banded by head, and the output. */
function showTables(env, m, tokens) {
  const { $, h, matrixTable } = env;
  const T = env.getT(), { heads, dHead } = m;
  // columns (and W_O's rows) numbered from 1, matrixTable's default
  const concat = matrixTable(T.matrixShape(T.mhaConcatName, tokens.length, D_MODEL), m.concat, { rowLabels: tokens });
  groupHeads(h, concat, heads, dHead, T, 'cols');
  const wo = matrixTable(T.matrixShape('W<sub>O</sub>', D_MODEL, D_MODEL), toRows(m.w.wo));
  groupHeads(h, wo, heads, dHead, T, 'rows');
  $('mha-tables').replaceChildren(concat, wo);
  $('mha-output').replaceChildren(matrixTable(T.matrixShape(T.outputName, tokens.length, D_MODEL), m.output,
    { rowLabels: tokens }));
}

/**
 * Mark which head each column (concat) or row (W_O) belongs to: a header row "head 1 | head 2"
 * above the concat's columns, and a light band on every other head.
 */
function groupHeads(h, wrapper, heads, dHead, T, along) {
  const table = wrapper.querySelector('table');
  table.classList.add('by-head');
  const band = (idx) => Math.floor(idx / dHead) % 2 === 1;
  if (along === 'cols') {
    const top = h('tr', { class: 'head-groups' }, h('td', { class: 'corner' }),       // above the corner header: no header of its own
      ...Array.from({ length: heads }, (_, k) => h('th', { scope: 'colgroup', colspan: dHead, class: band(k * dHead) ? 'band' : null },
        T.mhaGroup(k + 1, dHead === 1))));
    table.tHead.prepend(top);
    for (const tr of table.querySelectorAll('tbody tr, thead tr:not(.head-groups)')) {
      [...tr.children].slice(1).forEach((cell, j) => { if (band(j)) cell.classList.add('band'); });
    }
  } else {
    [...table.tBodies[0].rows].forEach((tr, i) => {
      tr.classList.toggle('band', band(i));
      tr.firstElementChild.title = T.mhaGroup(Math.floor(i / dHead) + 1, false);
    });
  }
}

function clearSection(env, figures) {
  const { $, heatmaps } = env;
  figures.forEach((f, k) => { f.fig.hidden = true; f.box.replaceChildren(); delete heatmaps[`mha${k}`]; });
  for (const id of ['mha-explain', 'mha-tables', 'mha-output', 'mha-snippet']) $(id).replaceChildren();
  $('mha-one').hidden = true;
}
