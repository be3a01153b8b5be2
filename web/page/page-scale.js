// page-scale.js - how the main heatmap is viewed: its colour scale (0–1, the data's range, log) and
// a temperature T, softmax(QKᵀ / (T·√d_k)), with each row's entropy in bits.
//
// T is a way of looking at the page's scores, not a change to the article's model: the tables of
// steps ①–④, the snippet and the other sections keep T = 1. The tempered weights come from the C
// core like every other number (selfAttention with scale = 1 / (T·√d_k)).
//
// Pure parts: heroContext, entropyBits, visibleKeys, barWidth. DOM part: createHeatmapView(env).
import { toRows } from '../core/attention.js';
import { fixed } from '../heatmap/text.js';
import { COLOUR_SCALES, TEMPERATURES } from './page-state.js';

/**
 * The main heatmap's context: the page's model itself at T = 1 with the 0–1 scale (so the default
 * page draws exactly what it drew before), else a copy with the tempered weights and scaled scores.
 */
export function heroContext(attn, model, { temp = 1, colour = 'unit' }) {
  if (temp === 1 && colour === 'unit') return model;
  let { weights, scaled } = model;
  if (temp !== 1) {
    const r = attn.selfAttention({ x: model.x, wq: model.w.wq, wk: model.w.wk, wv: model.w.wv },
      { causal: model.causal, scale: 1 / (temp * Math.sqrt(model.dk)) });
    weights = toRows(r.weights);
    scaled = toRows(r.scaled);
  }
  return { ...model, weights, scaled, temperature: temp, colourScale: colour };
}

/** Entropy of a row of weights in bits: −Σ w·log₂ w (a weight of 0 adds nothing). */
export const entropyBits = (row) => row.reduce((s, w) => (w > 0 ? s - w * Math.log2(w) : s), 0);

/** How many keys row i of n sees: all n, or i + 1 under the causal mask. */
export const visibleKeys = (n, i, causal) => (causal ? Math.min(n, i + 1) : n);

/**
 * The entropy bar's width in %: bits against the row's own most, log₂(the keys it sees), so
 * that an even spread fills the bar in every row (a row that sees one key has nothing to spread: 0).
 */
export function barWidth(bits, keys) {
  const max = Math.log2(keys);
  return max > 0 ? Math.min(100, (100 * bits) / max) : 0;
}

/**
 * env: { $, h, getState(), getT(), set({ temp?, colour? }) }. Returns { bind(), render(ctx) }:
 * render draws the controls' state and the entropy of each row of ctx.weights.
 */
export function createHeatmapView(env) {
  return { bind: () => bindView(env), render: (ctx) => renderView(env, ctx) };
}

function bindView(env) {
  const { $, h } = env;
  $('heatmap-view').replaceChildren(
    h('div', { class: 'view-row' },
      h('span', { id: 'colour-label', class: 'seg-label' }),
      h('div', { id: 'colour-scale', class: 'seg', role: 'radiogroup', 'aria-labelledby': 'colour-label' },
        ...COLOUR_SCALES.map((c) => h('label', { class: 'seg-item' },
          h('input', { type: 'radio', name: 'colour-scale', value: c }), h('span', { 'data-scale': c }))))),
    h('div', { class: 'view-row' },
      h('label', { for: 'temp', id: 'temp-label', class: 'seg-label' }),
      h('input', { id: 'temp', type: 'range', min: 0, max: TEMPERATURES.length - 1, step: 1 }),
      h('output', { id: 'temp-value', for: 'temp' })),
    h('p', { id: 'temp-note', class: 'note' }),
    h('div', { id: 'entropy', class: 'entropy' }));
  $('colour-scale').addEventListener('change', (e) => env.set({ colour: e.target.value }));
  $('temp').addEventListener('input', () => env.set({ temp: TEMPERATURES[Number($('temp').value)] }));
}

function renderView(env, ctx) {
  const { $, h } = env;
  const state = env.getState(), V = env.getT().teach.view;
  $('colour-label').textContent = V.colourLabel;
  for (const el of $('colour-scale').querySelectorAll('span[data-scale]')) el.textContent = V.scales[el.dataset.scale];
  for (const el of $('colour-scale').querySelectorAll('input')) el.checked = el.value === state.colour;
  $('temp-label').innerHTML = V.tempLabel;
  const temp = $('temp');
  temp.value = String(TEMPERATURES.indexOf(state.temp));
  temp.setAttribute('aria-valuetext', `T = ${state.temp}`);
  $('temp-value').textContent = `T = ${state.temp}`;
  $('temp-note').innerHTML = V.tempNote(state.temp, ctx.dk);

  const n = ctx.tokens.length;
  const head = ctx.causal ? V.entropyHeadCausal(n) : V.entropyHead(fixed(Math.log2(n), 2), n);
  $('entropy').replaceChildren(
    h('p', { class: 'entropy-head' }, head),
    h('ul', {}, ...ctx.weights.map((row, i) => {
      const b = entropyBits(row), keys = visibleKeys(n, i, ctx.causal);
      return h('li', { 'data-row': i, 'data-bits': String(b), 'data-keys': keys },
        h('span', { class: 'tok' }, ctx.tokens[i]),
        h('span', { class: 'entropy-bar', 'aria-hidden': 'true' }, h('span', { style: `width: ${barWidth(b, keys).toFixed(1)}%` })),
        h('span', { class: 'entropy-value' }, `${fixed(b, 3)} ${V.bits}`));
    })));
}
