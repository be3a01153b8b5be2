// element-canvas.js - <attention-heatmap model="…">'s map over 256 tokens (issue 37 item 4): a
// canvas instead of an SVG, drawn with drawHeatmap, zoomed and panned with web/heatmap/zoom.js
// (the page's heads panel uses the same), a hover line and a PNG button. Only a model gives more
// than 256 tokens, so this loads with the model code, and only then (element-support.js's
// largePanel imports it): the one-file embed and a small map never load it.
//
//   fillCanvasPanel(node, detail, { lang })   node: largePanel's, already in the element's panel
//
// Under a strict CSP (style-src 'self', no inline script): the styles are a constructable
// stylesheet added to the shadow root's adoptedStyleSheets, the canvas is sized by its width and
// height attributes and the stylesheet (no style=""), and the PNG is a Blob URL on an <a download>.
// The words are web/strings/element-large.js's, set with textContent.
import { drawHeatmap } from '../heatmap/heatmap.js';
import { fullView, sliceOf, bindZoom } from '../heatmap/zoom.js';
import { large } from '../strings/element-large.js';

const MAX_CSS = 720;          // the canvas's CSS width at most (it fills the panel below that)
const FALLBACK_CSS = 640;     // when the panel has no width yet (hidden)
const MAX_PIXELS = 4096;      // a side, whatever the device pixel ratio
const DIGITS = 4;             // the hovered value's significant digits

const CSS = `
.large { max-width: ${MAX_CSS}px; }
.large canvas { display: block; width: 100%; height: auto; aspect-ratio: 1; touch-action: none; cursor: crosshair; outline: none; }
.large canvas:focus-visible { outline: 3px solid var(--_focus); outline-offset: 2px; }
.large-bar { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 12px; margin-top: 6px; }
.large-view { flex: 1 1 16em; color: var(--_muted); font-size: 0.9em; font-variant-numeric: tabular-nums; }
.large-png { font: inherit; font-size: 0.9em; padding: 2px 10px; border: 1px solid var(--_border); border-radius: 6px; background: var(--_bg); color: var(--_text); cursor: pointer; }
.large-png:focus-visible { outline: 3px solid var(--_focus); outline-offset: 2px; }
`;
let sheet = null;

/**
 * Fills largePanel's node (in the element's panel, with data-model, -layer, -head, -ids, -n) and
 * draws the map at the panel's width: the canvas (data-r0, data-c0, data-k: the window shown),
 * the window in words, the PNG button; the panel's caption line becomes the hover line.
 */
export function fillCanvasPanel(node, detail, { lang }) {
  const T = large[lang] ?? large.zh;
  const { weights: map, tokens, layer, head } = detail, n = map.shape[0];
  adoptStyles(node);
  const canvas = element('canvas', '', node, { part: 'canvas', role: 'img', tabindex: 0, 'aria-label': T.label(layer, head, n) });
  const bar = element('div', 'large-bar', node);
  const viewLine = element('p', 'large-view', bar, { 'aria-live': 'polite' });
  const png = element('button', 'large-png', bar, { type: 'button', part: 'png', title: T.pngTitle });
  png.textContent = T.png;
  // the panel's caption line (view.js) says what is under the pointer; a later render sets its own hint again
  const caption = node.closest('[data-panel]')?.querySelector('[part="caption"]') ?? element('p', 'caption', node);
  caption.dataset.hint = T.hint;
  say(caption, T.hint, false);

  const s = { view: fullView(n), drawn: null };
  const draw = () => {
    const { r0, c0, k } = s.view;
    s.drawn = drawHeatmap(canvas, k === n ? map : sliceOf(map, s.view), {
      textColour: getComputedStyle(canvas).color || '#1f2328', rowLabels: tokens.slice(r0, r0 + k), colLabels: tokens.slice(c0, c0 + k),
    });
    Object.assign(canvas.dataset, { r0: String(r0), c0: String(c0), k: String(k) });
    viewLine.textContent = T.view(r0, c0, k, n);
  };
  bindZoom(canvas, {
    view: () => (s.drawn ? { view: s.view, n, plot: s.drawn.plot } : null),
    set: (view) => { s.view = view; draw(); },
  });
  canvas.addEventListener('pointermove', (e) => {
    const scale = canvas.width / (canvas.clientWidth || canvas.width);
    const cell = s.drawn?.cellAt(e.offsetX * scale, e.offsetY * scale);
    const i = cell && s.view.r0 + cell.row, j = cell && s.view.c0 + cell.col;
    say(caption, cell ? T.hover(i, j, tokens[i], tokens[j], cell.value.toPrecision(DIGITS)) : T.hint, Boolean(cell));
  });
  canvas.addEventListener('pointerleave', () => say(caption, T.hint, false));
  png.addEventListener('click', () => savePng(canvas, node, fileName(layer, head, s.view)));

  const css = Math.min(MAX_CSS, node.clientWidth || FALLBACK_CSS);
  canvas.width = canvas.height = Math.min(MAX_PIXELS, Math.round(css * (globalThis.devicePixelRatio || 1)));
  draw();
}

function element(tag, cls, parent, attrs = {}) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  parent?.append(e);
  return e;
}

function say(caption, text, active) {
  caption.textContent = text;
  caption.classList.toggle('active', active);
}

// the stylesheet once per shadow root; without constructable stylesheets, a <style> (which a
// strict CSP blocks: then unstyled, as the element's own styles are)
function adoptStyles(node) {
  const root = node.getRootNode();
  if ('adoptedStyleSheets' in root && typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype) {
    if (!sheet) { sheet = new CSSStyleSheet(); sheet.replaceSync(CSS); }
    if (!root.adoptedStyleSheets.includes(sheet)) root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
  } else if (!node.querySelector('style')) {
    node.prepend(Object.assign(document.createElement('style'), { textContent: CSS }));
  }
}

const fileName = (layer, head, { r0, c0, k }) => `attnmap-layer${layer}-head${head}-rows${r0}-${r0 + k - 1}-cols${c0}-${c0 + k - 1}.png`;

/** The canvas as drawn (the window, its labels and legend) on the element's background, as a PNG download. */
function savePng(canvas, node, name) {
  const out = document.createElement('canvas');
  out.width = canvas.width;
  out.height = canvas.height;
  const ctx = out.getContext('2d');
  const bg = getComputedStyle(node.closest('.root') ?? node).backgroundColor;
  ctx.fillStyle = !bg || bg === 'transparent' || bg === 'rgba(0, 0, 0, 0)' ? '#ffffff' : bg;
  ctx.fillRect(0, 0, out.width, out.height);
  ctx.drawImage(canvas, 0, 0);
  out.toBlob((blob) => {
    if (!blob) return;
    const url = URL.createObjectURL(blob);
    const a = element('a', '', node, { href: url, download: name, hidden: '' });
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 30000);
  }, 'image/png');
}
