// page-scaling.js - the √d_k demo ("why divide by √d_k?"): for d_k from 4 to 1024, the spread of
// q·k and the weights softmax gives with and without the scaling, as bars. Its words:
// page-scaling-strings.js (merged into the page's strings, T).
//
//   const scaling = createScalingSection({ $, getT, getState, getAttn });
//   scaling.render()   // the next slice of work for page-lazy.js, or undefined once drawn
import { toRows } from '../core/attention.js';
import { manualSeed } from '../rng/torch-rng.js';
import { h } from './page-dom.js';
import { fixed, scalingSnippet } from './page-format.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
const SCALE_DKS = [4, 16, 64, 256, 1024];
const SCALE_N = 8;
const SCALE_SAMPLES = 64;   // draws per d_k, averaged: with 8 the trend drowned in noise (issue 14)
const SLICE_MS = 8;

const identity = (n) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));

export function createScalingSection({ $, getT, getState, getAttn }) {
  let cache = null;

  /**
   * The √d_k demonstration: after torch.manual_seed(seed), SCALE_SAMPLES draws of
   * q, k = torch.randn(8, d_k) twice (the first draw is the one the bars show). The core's
   * selfAttention returns the raw scores too: with X = I (8×8), W_Q = q and W_K = k we get Q = q,
   * K = k exactly, so scores = q·kᵀ, computed by the core like everything else. The standard
   * deviations pool the scores of all draws, meanMax averages the rows' largest weight over all draws.
   * A generator: it yields when a slice has taken SLICE_MS (checked after each draw), so that the
   * page computes it in slices of idle time (issue 24: in one piece it was the longest task of the
   * page's start), and returns { seed, rows }.
   */
  function* compute(seed) {
    let since = performance.now();
    if (cache && cache.seed === seed) return cache;
    const attn = getAttn(), I = identity(SCALE_N);
    const meanMax = (w) => { let s = 0; for (let i = 0; i < SCALE_N; i++) s += Math.max(...w.subarray(i * SCALE_N, (i + 1) * SCALE_N)); return s; };
    const rows = [];
    for (const d of SCALE_DKS) {
      const g = manualSeed(seed);
      const scores = [], scaledScores = [];
      let maxScaled = 0, maxUnscaled = 0, first;
      for (let k = 0; k < SCALE_SAMPLES; k++) {
        if (performance.now() - since > SLICE_MS) { yield; since = performance.now(); }
        const q = { data: g.randn(SCALE_N, d), shape: [SCALE_N, d] };
        const kk = { data: g.randn(SCALE_N, d), shape: [SCALE_N, d] };
        const scaled = attn.selfAttention({ x: I, wq: q, wk: kk, wv: I });              // scale 1/√d_k
        const unscaled = attn.selfAttention({ x: I, wq: q, wk: kk, wv: I }, { scale: 1 });
        scores.push(...scaled.scores.data); scaledScores.push(...scaled.scaled.data);
        maxScaled += meanMax(scaled.weights.data); maxUnscaled += meanMax(unscaled.weights.data);
        if (k === 0) first = { wScaled: toRows(scaled.weights), wUnscaled: toRows(unscaled.weights) };
      }
      const rowsSeen = SCALE_SAMPLES * SCALE_N;
      rows.push({
        d, std: std(scores), stdScaled: std(scaledScores), ...first,
        meanMaxScaled: maxScaled / rowsSeen, meanMaxUnscaled: maxUnscaled / rowsSeen,
      });
    }
    cache = { seed, rows };
    return cache;
  }

  /**
   * The demo, computed in slices (compute yields): returns the next slice for page-lazy.js to
   * run in idle time, until it is drawn. The seed and language are read when it is drawn.
   */
  function render() {
    const work = compute(getState().seed);
    const slice = () => {
      const r = work.next();
      if (!r.done) return slice;
      draw(r.value.rows);
      return undefined;
    };
    return slice();
  }

  function draw(rows) {
    const T = getT(), state = getState();
    const [hd, hs, hw1, hw2] = T.scaleHead;
    const grid = $('scale-grid');
    const head = h('div', { class: 'scale-row scale-head', 'aria-hidden': 'true' },
      h('span', {}, hd), h('span', {}, hs), h('span', {}, hw1), h('span', {}, hw2));
    const list = rows.map((r) => {
      const cellW = (w, mean, label) => h('div', { class: 'scale-w' },
        h('span', { class: 'scale-label' }, label),
        bars(T, w[0], label),
        h('span', { class: 'scale-max', 'data-mean-max': mean }, T.scaleMax(fixed(Math.max(...w[0]), 2), fixed(mean, 2))));
      return h('div', { class: 'scale-row' },
        h('span', { class: 'scale-dk' }, h('span', { class: 'scale-label' }, hd + ' = '), String(r.d)),
        h('span', { class: 'scale-std' }, h('span', { class: 'scale-label' }, hs + ' '),
          h('b', {}, T.scaleStd(fixed(r.std, 2), fixed(Math.sqrt(r.d), 2))),
          h('span', { class: 'muted' }, T.scaleAfter(fixed(r.stdScaled, 2)))),
        cellW(r.wScaled, r.meanMaxScaled, hw1), cellW(r.wUnscaled, r.meanMaxUnscaled, hw2));
    });
    grid.replaceChildren(head, ...list);
    $('scale-snippet').textContent = scalingSnippet(state.seed, SCALE_DKS, SCALE_N, state.lang, SCALE_SAMPLES);
  }

  return { render };
}

/** Unbiased standard deviation, as torch.std(). */
function std(data) {
  const n = data.length;
  let mean = 0;
  for (const v of data) mean += v;
  mean /= n;
  let ss = 0;
  for (const v of data) ss += (v - mean) ** 2;
  return Math.sqrt(ss / (n - 1));
}

/** One query's weights over the 8 keys, as bars (an even spread is the line at 1/8). */
function bars(T, values, label) {
  const W = 200, H = 72, bw = 21, gap = 4, top = 4;
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('width', String(W));
  svg.setAttribute('height', String(H));
  svg.setAttribute('class', 'bars');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', T.scaleBars(label, values.map((v) => fixed(v, 2)).join(', ')));
  const best = values.indexOf(Math.max(...values));
  const base = H - 2;
  let inner = `<line class="base" x1="0" x2="${W}" y1="${base}" y2="${base}"/>`;
  const even = base - (base - top) / values.length;
  inner += `<line class="even" x1="0" x2="${W}" y1="${even.toFixed(2)}" y2="${even.toFixed(2)}"/>`;
  values.forEach((v, j) => {
    const hgt = Math.max(0.5, v * (base - top));
    inner += `<rect class="${j === best ? 'bar top' : 'bar'}" x="${j * (bw + gap) + 2}" y="${(base - hgt).toFixed(2)}" width="${bw}" height="${hgt.toFixed(2)}" rx="1.5"/>`;
  });
  svg.innerHTML = inner;                                                          // numbers only
  return svg;
}
