// page-scale.js - how the main heatmap is viewed: its colour scale (0–1, the data's range, log) and
// a temperature T, softmax(QKᵀ / (T·√d_k)), with each row's entropy in bits.
//
// T is a way of looking at the page's scores, not a change to the article's model: the tables of
// steps ①–④, the snippet and the other sections keep T = 1. The tempered weights come from the C
// core like every other number (selfAttention with scale = 1 / (T·√d_k)).
//
// Pure parts: heroContext, sharedScale, entropyBits, visibleKeys, barWidth. DOM part: createHeatmapView(env).
import { toRows } from '../core/attention.js';
import { fixed } from '../heatmap/text.js';
import { COLOUR_SCALES, TEMPERATURES } from './page-state.js';

/**
 * Issue 24: a map's default colour scale. On 0–1, a map whose largest weight is at most
 * DATA_RANGE_BELOW uses a quarter of the ramp or less: at 16 tokens every weight from 0.04 to 0.1
 * is the same dark purple. Such a map is drawn on its data's range by default; any other on 0–1
 * (3 tokens never qualify: a row's largest weight is at least 1/3; neither does a causal map,
 * whose first row is 1, so its data range is 0–1 anyway). rows: number[][] of weights.
 */
export const DATA_RANGE_BELOW = 0.25;
export const defaultScale = (rows) => (Math.max(...rows.flat()) <= DATA_RANGE_BELOW ? 'data' : 'unit');

/** The scale a map is drawn with: the reader's choice (state.colourSet, or any non-default), else the map's default. */
export const shownScale = (state, rows) => (chosenScale(state) ? state.colour : defaultScale(rows));
/** Whether the reader chose the scale: from the link, or a click unlike the map's default (page-state.js colourSet). */
export const chosenScale = ({ colour = 'unit', colourSet = false }) => colourSet || colour !== 'unit';

/** The weights of a map that its mask leaves: all, or with masked 'causal' or a true/false matrix, the others. */
const unmasked = (rows, masked) => rows.flatMap((row, i) => row.filter((_, j) => !(masked === 'causal' ? j > i : masked?.[i][j])));

/**
 * Issue 39 P7: the maps of weights below the hero (words and positions, RoPE, the heads) take the
 * top map's colour rule: the reader's choice, else each map's default (defaultScale). Maps shown
 * side by side share one scale and one range, so that a colour is the same weight in each: the
 * data's range when any of them would take it (none is then drawn nearly flat), else 0–1.
 * maps: [{ rows, masked }] (masked as for unmasked above).
 * -> { key, lo, hi, chosen, options } (options: renderHeatmap's colourScale, min, max)
 */
export function sharedScale(state, maps) {
  const values = maps.flatMap((m) => unmasked(m.rows, m.masked)), chosen = chosenScale(state);
  const key = chosen ? state.colour : maps.some((m) => defaultScale(m.rows) === 'data') ? 'data' : 'unit';
  if (key === 'unit') return { key, lo: 0, hi: 1, chosen, options: {} };
  const pool = key === 'log' ? values.filter((v) => v > 0) : values;
  const lo = Math.min(...pool), hi = Math.max(...pool);
  return { key, lo, hi, chosen, options: lo < hi ? { colourScale: key, min: lo, max: hi } : { colourScale: key } };
}

/** What sharedScale chose, in words (T: the page's strings). */
export const sharedScaleNote = (T, sc) => {
  const V = T.teach.view;
  return V.mapsScale(V.scales[sc.key], fixed(sc.lo, 4), fixed(sc.hi, 4), sc.key, sc.chosen);
};

/**
 * The main heatmap's context: the page's model itself at T = 1 on the 0–1 scale (so the default
 * page draws exactly what it drew before), else a copy with the tempered weights and scaled scores
 * and the scale it is drawn with (colourScale: the reader's, else the map's default).
 */
export function heroContext(attn, model, state) {
  const { temp = 1 } = state;
  let { weights, scaled } = model;
  if (temp !== 1) {
    const r = attn.selfAttention({ x: model.x, wq: model.w.wq, wk: model.w.wk, wv: model.w.wv },
      { causal: model.causal, scale: 1 / (temp * Math.sqrt(model.dk)) });
    weights = toRows(r.weights);
    scaled = toRows(r.scaled);
  }
  const colour = shownScale(state, weights);
  if (temp === 1 && colour === 'unit') return model;
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
  const v = { ctx: null };          // the map last drawn: a click equal to its default is no choice
  return { bind: () => bindView(env, v), render: (ctx) => { v.ctx = ctx; renderView(env, ctx); } };
}

function bindView(env, v) {
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
    h('p', { id: 'colour-note', class: 'note', 'aria-live': 'polite' }),
    h('p', { id: 'temp-note', class: 'note' }),
    h('div', { id: 'entropy', class: 'entropy' }));
  $('colour-scale').addEventListener('change', (e) => {
    const colour = e.target.value;
    env.set({ colour, colourSet: !v.ctx || colour !== defaultScale(v.ctx.weights) });
  });
  $('temp').addEventListener('input', () => env.set({ temp: TEMPERATURES[Number($('temp').value)] }));
}

// A text written only when it changes: a slider step rewrote every label of the view, and each
// new text node is shaped and laid out again (issue 24: a step's main-thread time).
const written = new WeakMap();
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}
export function setHtml(el, html) {            // (innerHTML reads back serialised, not as written: remember the string)
  if (written.get(el) !== html) { el.innerHTML = html; written.set(el, html); }
}

function renderView(env, ctx) {
  const { $ } = env;
  const state = env.getState(), V = env.getT().teach.view;
  setText($('colour-label'), V.colourLabel);
  for (const el of $('colour-scale').querySelectorAll('span[data-scale]')) setText(el, V.scales[el.dataset.scale]);
  const shown = ctx.colourScale ?? 'unit';
  for (const el of $('colour-scale').querySelectorAll('input')) el.checked = el.value === shown;
  colourNote(env, ctx, shown);
  setHtml($('temp-label'), V.tempLabel);
  const temp = $('temp');
  temp.value = String(TEMPERATURES.indexOf(state.temp));
  temp.setAttribute('aria-valuetext', `T = ${state.temp}`);
  setText($('temp-value'), `T = ${state.temp}`);
  setHtml($('temp-note'), V.tempNote(state.temp, ctx.dk));
  renderEntropy(env, ctx, V);
}

/** Each row's entropy: the list is built for these tokens once, then its numbers and bars change in place. */
function renderEntropy(env, ctx, V) {
  const { $, h } = env;
  const n = ctx.tokens.length, box = $('entropy');
  const head = ctx.causal ? V.entropyHeadCausal(n) : V.entropyHead(fixed(Math.log2(n), 2), n);
  const key = JSON.stringify([ctx.tokens, ctx.causal]);
  if (box.dataset.tokens !== key) {
    box.dataset.tokens = key;
    box.replaceChildren(h('p', { class: 'entropy-head' }), h('ul', {}, ...ctx.tokens.map((t, i) => h('li', { 'data-row': i, 'data-keys': visibleKeys(n, i, ctx.causal) },
      h('span', { class: 'tok' }, t),
      h('span', { class: 'entropy-bar', 'aria-hidden': 'true' }, h('span')),
      h('span', { class: 'entropy-value' })))));
  }
  setText(box.querySelector('.entropy-head'), head);
  box.querySelectorAll('li').forEach((li, i) => {
    const b = entropyBits(ctx.weights[i]);
    li.dataset.bits = String(b);
    li.querySelector('.entropy-bar > span').style.width = `${barWidth(b, Number(li.dataset.keys)).toFixed(1)}%`;
    setText(li.querySelector('.entropy-value'), `${fixed(b, 3)} ${V.bits}`);
  });
}

/** Which scale is on, and why when it is the map's own default (issue 24). */
function colourNote(env, ctx, shown) {
  const V = env.getT().teach.view, note = env.$('colour-note');
  const visible = ctx.weights.flatMap((row, i) => (ctx.causal ? row.slice(0, i + 1) : row));
  const lo = Math.min(...visible), hi = Math.max(...visible);
  note.dataset.scale = shown;
  const auto = !chosenScale(env.getState());
  note.dataset.auto = String(auto);
  setText(note, V.scaleOn(V.scales[shown], fixed(lo, 4), fixed(hi, 4), shown) +
    (auto ? V.scaleWhy(shown, fixed(hi, 4), fixed(DATA_RANGE_BELOW, 2)) : V.scaleChosen));
}
