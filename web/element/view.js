// view.js - the element's shadow DOM: its stylesheet, its parts (loading line, panels, caption
// lines, message), showing a result or a problem, and the keyboard and pointer on the cells.
import { AttentionError } from '../core/attention.js';
import { html } from './trusted.js';   // Trusted Types: the SVG strings of renderHeatmap
import { gridKey } from '../heatmap/grid-keys.js';
import { Problem } from './parse.js';

const FONT = 'system-ui, -apple-system, "PingFang SC", "Noto Sans CJK SC", "Microsoft YaHei", sans-serif';

// Each public custom property is read once into a private --_x, so that the dark defaults can
// differ while a value set by the page wins in both schemes. Listed in docs/EMBED.md.
const CSS = `
:host {
  all: initial; display: block; max-width: 100%;
  --_font: var(--attn-font, ${FONT}); --_size: var(--attn-font-size, 14px);
  --_text: var(--attn-text, #1f2328); --_muted: var(--attn-muted, #59636e);
  --_bg: var(--attn-bg, #fff); --_border: var(--attn-border, #d0d7de);
  --_stroke: var(--attn-cell-stroke, none); --_focus: var(--attn-focus, #d4380d);
  --_error: var(--attn-error, #cf222e);
}
@media (prefers-color-scheme: dark) {
  :host {
    --_text: var(--attn-text, #e6edf3); --_muted: var(--attn-muted, #9198a1);
    --_bg: var(--attn-bg, #0d1117); --_border: var(--attn-border, #3d444d);
    --_focus: var(--attn-focus, #ff7b52); --_error: var(--attn-error, #ff7b72);
  }
}
:host([hidden]), [hidden] { display: none !important; }
.root {
  box-sizing: border-box; max-width: 100%; padding: 12px 14px;
  border: 1px solid var(--_border); border-radius: 8px; background: var(--_bg); color: var(--_text);
  font-family: var(--_font); font-size: var(--_size); line-height: 1.5; text-align: start;
}
.heads { display: grid; grid-template-columns: minmax(0, 1fr); gap: 10px 16px; }
.heads.multi { grid-template-columns: repeat(auto-fit, minmax(min(100%, 13em), 1fr)); }
.heads.multi > .panel > .caption { display: none; }
.output { margin-top: 14px; }
svg { display: block; max-width: 100%; height: auto; font-family: var(--_font); }
.cell-group { cursor: default; outline: none; }
.cell-group:not(.masked) rect { stroke: var(--_stroke); }
.cell-group:hover rect { stroke: var(--_text); stroke-width: 2px; }
.cell-group:focus rect { stroke: var(--_focus); stroke-width: 3px; }
p { margin: 0; }
.caption { margin-top: 4px; min-height: 1.5em; color: var(--_muted); font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.caption.active { color: var(--_text); }
.loading, .hint { color: var(--_muted); }
.message { color: var(--_error); font-weight: 600; }
.detail, .hint { margin-top: 6px; font-size: 0.9em; overflow-wrap: anywhere; }
.detail { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space: pre-wrap; }
`;

let sheet = null;
let count = 0;


/**
 * The shadow root's content: a loading line, the panels (one per head, created on demand, and the
 * output), a shared caption line and the message. Returns the view that the functions below take.
 */
export function createView(root) {
  const doc = root.ownerDocument;
  if ('adoptedStyleSheets' in root && typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype) {
    if (!sheet) { sheet = new CSSStyleSheet(); sheet.replaceSync(CSS); }
    root.adoptedStyleSheets = [sheet];
  } else {
    // no constructable stylesheets (Safari < 16.4): a <style>, which a strict CSP blocks (then unstyled)
    root.append(Object.assign(doc.createElement('style'), { textContent: CSS }));
  }
  const el = (tag, cls, parent, part) => {
    const e = doc.createElement(tag);
    e.className = cls;
    if (part) e.setAttribute('part', part);
    parent.append(e);
    return e;
  };
  const wrap = el('div', 'root', root, 'root');
  const loading = el('p', 'loading', wrap);
  // .heads holds the weights: one panel, or one per head (created on demand, never removed:
  // their listeners live on the shadow root). With several heads one caption line serves all.
  const heads = el('div', 'heads', wrap);
  const shared = el('p', 'caption', wrap, 'caption');
  shared.hidden = true;
  const panel = (key, part, parent, cls = 'panel') => {
    const p = el('div', cls, parent, part);
    p.dataset.panel = key;
    p.hidden = true;
    const own = el('p', 'caption', p, 'caption');
    return { panel: p, figure: p.insertBefore(el('div', 'figure', p), own), own, caption: own };
  };
  const panels = { heatmap: panel('heatmap', 'heatmap', heads), output: panel('output', 'output', wrap, 'panel output') };
  const message = el('div', 'problem', wrap, 'message');
  message.setAttribute('role', 'alert');
  message.hidden = true;
  const view = { root, id: `ah${++count}`, wrap, loading, heads, shared, panels, panel, message, active: {} };
  listen(view);
  return view;
}

/** Until the first result: the loading line, in the element's language. */
export function showLoading(view, t) {
  view.wrap.lang = t.htmlLang;                 // CJK glyphs, hyphenation
  view.loading.textContent = t.loading;
}

/** While a model loads (model="…"): the loading line, and aria-busy until the panels or a message show. */
export function showModelLoading(view, t) {
  view.loading.textContent = t.modelLoading;
  view.loading.hidden = false;
  view.wrap.setAttribute('aria-busy', 'true');
}

/** The panels of renderPanels (render.js): SVG strings, or a node (a model's canvas, element-support.js); attrs: panel -> attributes of its <svg>; the focused cell keeps the focus. */
export function showPanels(view, { svgs, active, sharing, attrs = {} }, t) {
  const focused = cellOf(view.root.activeElement);
  const { loading, message, panels, heads, shared } = view;
  for (const key of Object.keys(svgs)) if (key !== 'output') panels[key] ??= view.panel(key, 'heatmap', heads);
  // several heads side by side share one caption line below them
  heads.classList.toggle('multi', sharing);
  shared.hidden = !sharing;
  loading.hidden = message.hidden = true;
  view.wrap.removeAttribute('aria-busy');
  message.replaceChildren();
  for (const [name, p] of Object.entries(panels)) {
    const { panel, figure } = p;
    p.caption = sharing && name !== 'output' ? shared : p.own;
    panel.hidden = !svgs[name];
    if (!svgs[name]) { figure.replaceChildren(); continue; }
    if (svgs[name].nodeType) figure.replaceChildren(svgs[name]);   // a model's canvas (element-canvas.js)
    else figure.innerHTML = html(svgs[name]);        // escaped by renderHeatmap
    for (const [k, v] of Object.entries(attrs[name] ?? {})) figure.firstElementChild.setAttribute(k, v);
    p.caption.dataset.hint = t.hint;
    reset(view, name);
  }
  view.active = active;
  if (focused) cellAt(view, focused.panel, focused.row, focused.col)?.focus();
}

/** A readable message instead of the panels: the headline, the error's own words, a hint. */
export function showProblem(view, e, t) {
  const [headline, hint] = e instanceof Problem && e.kind !== 'input' ? [t[e.kind], e.hint === null ? undefined : e.hint?.[t.htmlLang.slice(0, 2)] ?? t[`${e.kind}Hint`]]
    : e instanceof Problem || e instanceof AttentionError || e instanceof RangeError ? [t.input]
      : [t.other];
  const p = (cls, text) => Object.assign(view.root.ownerDocument.createElement('p'), { className: cls, textContent: text });
  const { loading, panels, message, shared } = view;
  message.replaceChildren(p('message', headline), p('detail', (e instanceof AttentionError ? `${e.code}: ` : '') + (e?.message ?? String(e))));
  if (hint) message.append(p('hint', hint));
  loading.hidden = shared.hidden = true;
  view.wrap.removeAttribute('aria-busy');
  for (const { panel, figure } of Object.values(panels)) { panel.hidden = true; figure.replaceChildren(); }
  view.active = {};
  message.hidden = false;
}

// ----------------------------------------------------------------------------
// interaction: arrow keys move a roving tabindex; the caption line explains the cell

// On the shadow root, which lives as long as the element: re-adding it adds no listener.
function listen(view) {
  const { root } = view;
  root.addEventListener('keydown', (e) => onKey(view, e));
  root.addEventListener('focusin', (e) => onFocus(view, e));
  root.addEventListener('focusout', (e) => onBlur(view, e));
  root.addEventListener('pointerover', (e) => { const c = cellOf(e.target); if (c) describe(view, c); });
  root.addEventListener('pointerout', (e) => onPointerOut(view, e));
}

function cellOf(target) {
  const g = target?.closest?.('.cell-group');
  if (!g) return null;
  return { g, panel: g.closest('.panel').dataset.panel, row: +g.dataset.row, col: +g.dataset.col };
}

const cellAt = (view, panel, row, col) => view.panels[panel].figure.querySelector(`.cell-group[data-row="${row}"][data-col="${col}"]`);

function describe(view, cell) {
  const caption = view.panels[cell.panel].caption;
  caption.textContent = cell.g.getAttribute('aria-label');
  caption.classList.add('active');
}

function reset(view, panel) {
  const caption = view.panels[panel].caption;
  caption.textContent = caption.dataset.hint ?? '';
  caption.classList.remove('active');
}

function onFocus(view, e) {
  const cell = cellOf(e.target);
  if (!cell) return;
  const [r, c] = view.active[cell.panel] ?? [0, 0];
  cellAt(view, cell.panel, r, c)?.setAttribute('tabindex', '-1');
  cell.g.setAttribute('tabindex', '0');
  view.active[cell.panel] = [cell.row, cell.col];
  describe(view, cell);
}

function onBlur(view, e) {
  const cell = cellOf(e.target);
  if (cell && cellOf(e.relatedTarget)?.panel !== cell.panel) reset(view, cell.panel);
}

function onPointerOut(view, e) {
  const cell = cellOf(e.target);
  if (!cell || cellOf(e.relatedTarget)) return;
  const focused = cellOf(view.root.activeElement);
  if (focused?.panel === cell.panel) describe(view, focused); else reset(view, cell.panel);
}

function onKey(view, e) {
  const cell = cellOf(e.target);
  if (!cell || e.altKey || e.metaKey) return;
  const rects = cell.g.ownerSVGElement.querySelectorAll('rect.cell');
  const rows = +rects[rects.length - 1].dataset.row + 1, cols = rects.length / rows;
  const to = gridKey(e.key, e.ctrlKey, cell.row, cell.col, rows, cols);
  if (!to) return;
  e.preventDefault();
  cellAt(view, cell.panel, to.row, to.col)?.focus();
}
