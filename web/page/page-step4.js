// page-step4.js - step ④ as a picture, and the formula that stays in view through steps ①–④.
//
// The picture: for the selected row i, every V[j] the row may look at as a strip of d_k bars
// (outlined: V[j] itself; filled: weight[i][j] · V[j], computed here), plus signs between them, and
// the output row they add up to (filled: the C core's output[i]). All strips share one vertical
// scale, so a small weight visibly shrinks its V.
//
// The formula bar: Attention(Q, K, V) = softmax(QKᵀ / √d_k) V, sticky at the top of the window
// while steps ①–④ are read; the part of the step in view lights up (class "on", aria-current).
//
// DOM only: createStep4(env) -> { bind(), render(row), update() }.

import { toRows } from '../core/attention.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
const STEPS = [1, 2, 3, 4];

/** An SVG element; text children become text nodes (tokens are user input). */
function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  for (const c of children) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

const r2 = (x) => String(Math.round(x * 100) / 100);
const cutLabel = (t, max) => ([...t].length > max ? [...t].slice(0, max - 1).join('') + '…' : t);

/** env: { $, getModel(), getT(), fixed(x, d) }. */
export function createStep4(env) {
  let current = 0;
  let queued = false;
  const update = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; current = followFormula(env, current); });
  };
  return {
    bind() {
      window.addEventListener('scroll', update, { passive: true });
      window.addEventListener('resize', update);
    },
    render(row) {
      renderFormula(env);
      drawPicture(env, row);
      current = -1;
      update();
    },
    update,
  };
}

// ------------------------------------------------------------------------------------------------
// the formula

function renderFormula(env) {
  const { $ } = env;
  const F = env.getT().teach.formula;
  const bar = $('formula-bar');
  bar.setAttribute('role', 'navigation');
  bar.setAttribute('aria-label', F.label);
  const part = (k, ...children) => {
    const a = document.createElement('a');
    a.href = `#step-${k}`;
    a.className = 'f-part';
    a.dataset.step = String(k);
    a.title = F.steps[k - 1];
    a.innerHTML = children.join('');                     // trusted strings only (page-strings.js)
    return a;
  };
  const f = document.createElement('span');
  f.className = 'f-math';
  f.append('Attention(Q, K, V) = ');
  const soft = part(3, 'softmax(');
  const close = part(3, ')');
  f.append(soft, part(1, 'QK<sup>T</sup>'), ' ', part(2, '/ √d<sub>k</sub>'), close, ' ', part(4, 'V'));
  const step = document.createElement('span');
  step.className = 'f-step';
  step.id = 'formula-step';
  bar.replaceChildren(f, step);
}

/** Light up the part of the step in view; hide the bar once step ④ is behind the reader. */
function followFormula(env, previous) {
  const { $ } = env;
  const bar = $('formula-bar');
  if (!bar.firstChild) return previous;
  const line = bar.getBoundingClientRect().bottom + 40;   // a section scrolled to (scroll-margin-top 72px) counts
  let k = 0;
  for (const n of STEPS) {
    const sec = $(`step-${n}`);
    if (sec && sec.getBoundingClientRect().top <= line) k = n;
  }
  const past = k === 4 && $('step-4').getBoundingClientRect().bottom < line;
  bar.classList.toggle('past', past);
  if (k === previous) return k;
  bar.dataset.step = String(k);
  for (const a of bar.querySelectorAll('.f-part')) {
    const on = Number(a.dataset.step) === k;
    a.classList.toggle('on', on);
    if (on) a.setAttribute('aria-current', 'step'); else a.removeAttribute('aria-current');
  }
  const F = env.getT().teach.formula;
  $('formula-step').textContent = k ? F.steps[k - 1] : F.idle;
  return k;
}

// ------------------------------------------------------------------------------------------------
// the picture

function drawPicture(env, i) {
  const box = env.$('step4-picture');
  const m = env.getModel();
  if (!m || i >= m.n) { box.replaceChildren(); return; }
  const P = env.getT().teach.step4;
  const v = toRows(m.res.v);
  const allowed = m.tokens.map((_, j) => j).filter((j) => !(m.causal && j > i));
  const G = geometry(box.clientWidth, m.dk, [...allowed.map((j) => v[j]), m.output[i]]);

  const svg = s('svg', { class: 'step4-svg', role: 'img', 'aria-labelledby': 'step4-title step4-desc' });
  svg.append(s('title', { id: 'step4-title' }, P.title(m.tokens[i])), s('desc', { id: 'step4-desc' }, P.desc(allowed.length, m.dk)));
  let y = 4;
  allowed.forEach((j, p) => {
    svg.append(term(G, y, v[j], m.weights[i][j], env.fixed(m.weights[i][j], 4), cutLabel(m.tokens[j], G.narrow ? 3 : 8), j));
    y += G.SH;
    if (p < allowed.length - 1) {
      svg.append(s('text', { class: 'plus', x: r2(G.stripX - G.gapX / 2 - 2), y: r2(y + G.rowGap / 2), dy: '0.35em', 'text-anchor': 'end', 'font-size': G.font + 3 }, '+'));
      y += G.rowGap;
    }
  });
  const H = output(svg, G, y, m.output[i], i, [P.output, cutLabel(m.tokens[i], G.narrow ? 3 : 8)]);
  svg.setAttribute('viewBox', `0 0 ${G.width} ${r2(H)}`);
  svg.setAttribute('width', String(G.width));
  svg.setAttribute('height', r2(H));
  box.replaceChildren(svg, legendLine(P));
}

/** Sizes for a box of clientWidth px and rows of d values (the V[j] and the output): one vertical scale for all. */
function geometry(clientWidth, d, rows) {
  const width = Math.max(320, Math.min(760, clientWidth || 640));
  const narrow = width < 480;
  const labelW = narrow ? 96 : 150, gapX = 12, right = 34;
  const stripX = labelW + gapX, stripW = width - stripX - right;
  const SH = narrow ? 48 : 64;
  const big = Math.max(1e-12, ...rows.flatMap((row) => row.map(Math.abs)));
  return {
    width, narrow, labelW, gapX, right, stripX, stripW, SH, rowGap: 16, bw: stripW / d, font: narrow ? 11 : 13,
    hOf: (x) => (x / big) * (SH / 2 - 2),
  };
}

/** The box of bar k of a strip at y for value x: up from the axis if positive, down if negative. */
function bar(G, y, k, x) {
  const hh = G.hOf(x);
  return { x: r2(G.stripX + k * G.bw + 0.5), width: r2(Math.max(0.5, G.bw - 1)), y: r2(y + G.SH / 2 - Math.max(hh, 0)), height: r2(Math.max(0.3, Math.abs(hh))) };
}

/** A strip of bars at y: its axis and one bar per value. */
function strip(G, y, values, cls, extra = {}) {
  const g = s('g', { class: `strip ${cls}`, ...extra });
  g.append(s('line', { class: 'axis', x1: r2(G.stripX), x2: r2(G.stripX + G.stripW), y1: r2(y + G.SH / 2), y2: r2(y + G.SH / 2) }));
  values.forEach((x, k) => g.append(s('rect', { class: cls === 'out' ? 'bar out' : 'bar wv', ...bar(G, y, k, x), 'data-dim': k, 'data-value': x })));
  return g;
}

/** One term weight × V[j]: the unscaled V[j] outlined behind its scaled bars, the label, an arrow to the right. */
function term(G, y, vj, weight, weightText, label, j) {
  const g = s('g', { class: 'term', 'data-col': j, 'data-weight': weight });
  vj.forEach((x, k) => g.append(s('rect', { class: 'ghost', ...bar(G, y, k, x) })));
  g.append(strip(G, y, vj.map((x) => weight * x), 'term-strip'));
  g.append(s('text', { class: 'lbl', x: G.labelW, y: r2(y + G.SH / 2), dy: '0.35em', 'text-anchor': 'end', 'font-size': G.font },
    s('tspan', { class: 'w' }, weightText), ' × V[', label, ']'));
  g.append(s('path', { class: 'arrow', d: `M${r2(G.stripX + G.stripW + 4)} ${r2(y + G.SH / 2)} h${G.right - 14}` }));
  return g;
}

/** Below the last term at y: the arrow down the right side, the sum rule and the output strip; returns the height. */
function output(svg, G, y, out, i, [word, label]) {
  const xr = G.stripX + G.stripW + G.right - 10;
  const yOut = y + G.rowGap + 8;
  svg.append(s('path', { class: 'arrow', d: `M${r2(xr)} ${r2(4 + G.SH / 2)} V${r2(yOut + G.SH / 2)} H${r2(G.stripX + G.stripW + 6)}`, 'marker-end': 'url(#step4-head)' }));
  svg.append(s('line', { class: 'sum-rule', x1: r2(G.stripX), x2: r2(G.stripX + G.stripW), y1: r2(y + G.rowGap / 2 + 2), y2: r2(y + G.rowGap / 2 + 2) }));
  const outG = strip(G, yOut, out, 'out', { 'data-row': i });
  outG.append(s('text', { class: 'lbl out-lbl', x: G.labelW, y: r2(yOut + G.SH / 2), dy: '0.35em', 'text-anchor': 'end', 'font-size': G.font },
    '= ', word, '[', label, ']'));
  svg.append(outG);
  svg.prepend(s('defs', {}, s('marker', { id: 'step4-head', viewBox: '0 0 8 8', refX: 7, refY: 4, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
    s('path', { d: 'M0 0 L8 4 L0 8 z', class: 'head' }))));
  return yOut + G.SH + 6;
}

function legendLine(P) {
  const p = document.createElement('p');
  p.className = 'note step4-key';
  p.innerHTML = P.key;                                    // trusted strings only
  return p;
}
