// colour.js - the colour scales of the heatmap (viridis for weights, RdBu around 0 for scores),
// the text colour on a cell, and the legend's ticks. Pure.
import { compact } from './text.js';

const MAX_TICKS = 12;           // a legend has 2 to 6 ticks

// viridis (matplotlib; perceptually uniform, readable with colour-vision deficiencies and in
// greyscale), 11 stops at t = 0, 0.1, ..., 1.
const VIRIDIS = ['#440154', '#482475', '#414487', '#355f8d', '#2a788e', '#21918c',
  '#22a884', '#44bf70', '#7ad151', '#bddf26', '#fde725'];
// ColorBrewer RdBu reversed: blue (negative) - white (0) - red (positive); colour-blind safe.
const RDBU = ['#053061', '#2166ac', '#4393c3', '#92c5de', '#d1e5f0', '#f7f7f7',
  '#fddbc7', '#f4a582', '#d6604d', '#b2182b', '#67001f'];

const hexToRgb = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
const VIRIDIS_RGB = VIRIDIS.map(hexToRgb);
const RDBU_RGB = RDBU.map(hexToRgb);

function ramp(stops, t) {
  t = t > 0 ? Math.min(1, t) : t <= 0 ? 0 : 0.5;     // NaN (0/0 in a degenerate domain): the middle
  const x = t * (stops.length - 1), i = Math.min(stops.length - 2, Math.floor(x)), f = x - i;
  const a = stops[i], b = stops[i + 1];
  return a.map((c, k) => Math.round(c + (b[k] - c) * f));
}

export const toHex = (rgb) => '#' + rgb.map((c) => c.toString(16).padStart(2, '0')).join('');

/** (v - a) / (b - a), also when b - a overflows (a = -1e308, b = 1e308). */
export function frac(v, a, b) {
  const span = b - a;
  return Number.isFinite(span) ? (v - a) / span : (v / 2 - a / 2) / (b / 2 - a / 2);
}

/** Where v lies on the legend, 0 (bottom) to 1 (top): linear, or by log10 with colourScale 'log' (v <= 0 at the bottom). */
export function position(v, o) {
  FULL_API: if (o.colourScale === 'log') return v > 0 ? frac(Math.log10(v), Math.log10(o.dmin), Math.log10(o.dmax)) : 0;
  return frac(v, o.dmin, o.dmax);
}

/** The fill of a value: sequential on [min, max] (linear or log), diverging around 0 (or the middle). */
export function colour(v, o) {
  return rampAt(rampPosition(v, o), o);
}

/**
 * Where v lies on the colour ramp, 0 to 1 (unclamped; NaN in a degenerate domain): position() for
 * a sequential scale, for a diverging one 0.5 at 0 (or the middle), linear on each side.
 */
export function rampPosition(v, o) {
  if (o.scale === 'sequential') return position(v, o);
  const { dmin, dmax } = o;
  const mid = dmin < 0 && dmax > 0 ? 0 : Number.isFinite(dmin + dmax) ? (dmin + dmax) / 2 : dmin / 2 + dmax / 2;
  return v < mid ? 0.5 * (v - dmin) / (mid - dmin) : 0.5 + 0.5 * (v - mid) / (dmax - mid);
}

/** The colour at ramp position t (clamped to 0–1; NaN: the middle) of o.scale's palette. */
export const rampAt = (t, o) => ramp(o.scale === 'sequential' ? VIRIDIS_RGB : RDBU_RGB, t);


// WCAG relative luminance; text is white unless near-black contrasts clearly better (by 15%).
// The bias keeps mid-range cells (viridis teal, where both are ~4.4:1) from flipping between
// black and white for nearly equal values such as 0.4455 and 0.4564.
function luminance(rgb) {
  const [r, g, b] = rgb.map((c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
const DARK_TEXT = '#111111', LIGHT_TEXT = '#ffffff';
const DARK_L = luminance([17, 17, 17]);
export function textOn(rgb) {
  const L = luminance(rgb);
  const dark = (L + 0.05) / (DARK_L + 0.05), light = 1.05 / (L + 0.05);
  return dark > light * 1.15 ? DARK_TEXT : LIGHT_TEXT;
}

// Legend ticks { ticks, labels } of [a, b]: round steps while they can be told apart, else (1e15
// to 1e15 + 0.2: past 2^53, k * step stops changing as k grows) the two ends. Counted, never endless.
export function niceTicks(a, b) {
  const span = b - a;
  const raw = Number.isFinite(span) ? span / 4 : (b / 2 - a / 2) / 2;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * p).find((s) => s >= raw * 0.999);
  const d = Math.max(0, -Math.floor(Math.log10(step) + 1e-9) + (step / p === 2.5 ? 1 : 0));
  if (step > 0 && Number.isFinite(step) && d <= 100) {
    const ticks = [], labels = [];
    const k0 = Math.ceil(a / step - 1e-9);
    for (let i = 0; i <= MAX_TICKS; i++) {
      const v = (k0 + i) * step;
      if (!(v <= b + step * 1e-9 && Number.isFinite(v))) {
        if (i >= 2) return { ticks, labels };
        break;
      }
      const label = compact(v, d);
      if (i > 0 && !(v > ticks[i - 1] && label !== labels[i - 1])) break;
      ticks.push(v); labels.push(label);
    }
  }
  return { ticks: [a, b], labels: apart(a, b) };
}

/**
 * Legend ticks of a log scale on [a, b], 0 < a < b: the powers of ten inside, with 2× and 5× when
 * fewer than 3 of them fit, else the two ends, labelled with the data's real extremes (0.2396 and
 * 0.4458, not 0.2 and 0.4: the top colour is 0.4458's).
 */
export function logTicks(a, b) {
  const k0 = Math.ceil(Math.log10(a) - 1e-9), k1 = Math.floor(Math.log10(b) + 1e-9);
  for (const mults of [[1], [1, 2, 5], [1, 1.5, 2, 3, 5, 7]]) {
    const ticks = [];
    for (let k = k0 - 1; k <= k1 && ticks.length <= MAX_TICKS; k++) {
      for (const m of mults) {
        const v = Number((m * 10 ** k).toPrecision(2));
        if (v >= a * (1 - 1e-9) && v <= b * (1 + 1e-9)) ticks.push(v);
      }
    }
    if (ticks.length >= 3 && ticks.length <= 8) return { ticks, labels: ticks.map((v) => compact(v, Math.max(0, 1 - Math.floor(Math.log10(v) + 1e-9)))) };
  }
  return { ticks: [a, b], labels: extremes(a, b) };
}

/** Two different numbers printed as short as they still differ. */
export function apart(a, b) {
  for (let digits = 1; digits < 17; digits++) {
    const x = Number(a.toPrecision(digits)), y = Number(b.toPrecision(digits));
    if (x !== y && Number.isFinite(x) && Number.isFinite(y)) return [String(x), String(y)];
  }
  return [String(a), String(b)];
}

/**
 * The ends of a scale that spans the data's own range, printed as the data: 4 significant digits,
 * more where the two would print alike. Not apart(): its shortest forms round 0.2396–0.4458 to
 * 0.2–0.4, which reads as a different range.
 */
export function extremes(a, b) {
  for (let digits = 4; digits < 17; digits++) {
    const x = Number(a.toPrecision(digits)), y = Number(b.toPrecision(digits));
    if (x !== y && Number.isFinite(x) && Number.isFinite(y)) return [String(x), String(y)];
  }
  return [String(a), String(b)];
}
