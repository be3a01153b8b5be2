// attention-heatmap-element.js - the <attention-heatmap> class; importing it defines nothing
// (attention-heatmap.js does). Model: github/relative-time-element.
//
// Thin: an open shadow root; one observedAttributes list, equal to what #render() reads; re-render
// batched in a microtask; data via properties (tokens q k v x wq wk wv wo, which win over the
// attributes), small scalars via attributes (causal scale decimals lang seed heads). With `heads`
// (episode 06) it draws one heatmap per head (multiHeadAttention). The SVG comes from
// renderHeatmap(), which escapes every label; all other text is set with textContent.
//
// CSP: the styles are one constructable stylesheet (adoptedStyleSheets), which style-src 'self'
// does not block; the shadow root has no <style> and no style="". Every failure (bad input,
// WebAssembly forbidden) is a readable message inside the element, never an uncaught error.
import { createAttention, AttentionError } from '../core/attention.js';
import { renderHeatmap } from '../heatmap/heatmap.js';

// In Node (no DOM) the module still imports: the class then extends a stub.
const Base = globalThis.HTMLElement ?? class {};

const MATRICES = ['q', 'k', 'v', 'x', 'wq', 'wk', 'wv', 'wo'];
const ATTRIBUTES = ['tokens', ...MATRICES, 'seed', 'heads', 'causal', 'scale', 'decimals', 'lang'];
const MAX_HEADS = 256;
// Budgets of one element, checked before anything is computed or drawn (docs/EMBED.md):
const MAX_CELLS = 65536;        // all its heatmaps (heads, output) together: one 256×256
const MAX_LABEL_CHARS = 16384;  // all tokens together (256 tokens of 64 characters)
const CELL_TEXT = 1048576;      // as in heatmap.js: tokens are shown cut to CELL_TEXT / cells
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

const TEXT = {
  zh: {
    loading: '正在计算注意力…',
    hint: '把鼠标移到格子上，或用 Tab 和方向键逐格查看数值。',
    title: '注意力权重', causal: '注意力权重（因果遮蔽）',
    head: (k, dHead, causal) => `头 ${k} · d_head = ${dHead}${causal ? '（因果遮蔽）' : ''}`,
    headCell: (k, text) => `头 ${k} · ${text}`,
    mhaOut: '输出：各头拼接后乘 W_O 得到的新向量',
    out: '输出：按权重混合 V 得到的新向量', outRows: '每个词', outCols: '维度',
    outCell: (tok, j, v) => `${tok} · 维度 ${j}: ${v}`,
    outDesc: '每一行是这个词的输出向量：用上面的注意力权重把所有词的 Value 加权求和。蓝色为负，红色为正，越接近白色越接近 0。',
    input: '注意力热力图无法显示：输入有误。',
    wasm: '注意力热力图无法显示：这个页面不能运行 WebAssembly。',
    wasmHint: '页面的内容安全策略（CSP）需要在 script-src 里加上 \'wasm-unsafe-eval\'，或者浏览器不支持 WebAssembly。',
    rng: '注意力热力图无法显示：缺少随机投影模块 torch-rng.js。',
    rngHint: '用 x 和 seed 时，要把 web/rng/torch-rng.js 和其余文件放在同一个目录；或者直接给出 q、k（和 v），或 wq、wk、wv（和 wo）。',
    other: '注意力热力图无法显示：出现了意外错误。',
  },
  en: {
    loading: 'Computing attention…',
    hint: 'Hover over a cell, or use Tab and the arrow keys, to read its value.',
    title: 'Attention weights', causal: 'Attention weights (causal mask)',
    head: (k, dHead, causal) => `head ${k} · d_head = ${dHead}${causal ? ' (causal)' : ''}`,
    headCell: (k, text) => `head ${k} · ${text}`,
    mhaOut: 'Output: the heads concatenated, times W_O',
    out: 'Output: V mixed by the weights', outRows: 'token', outCols: 'dimension',
    outCell: (tok, j, v) => `${tok} · dim ${j}: ${v}`,
    outDesc: 'Each row is the output vector of that token: the Values of all tokens summed with the attention weights above. Blue is negative, red is positive, white is near 0.',
    input: 'The attention heatmap cannot be shown: the input is not valid.',
    wasm: 'The attention heatmap cannot be shown: this page cannot run WebAssembly.',
    wasmHint: 'The page\'s Content-Security-Policy needs \'wasm-unsafe-eval\' in script-src, or the browser has no WebAssembly.',
    rng: 'The attention heatmap cannot be shown: the random-projection module torch-rng.js is missing.',
    rngHint: 'With x and seed, put web/rng/torch-rng.js in the same folder as the other files, or give q and k (and v), or wq, wk, wv (and wo), directly.',
    other: 'The attention heatmap cannot be shown: something unexpected went wrong.',
  },
};

/** A problem shown inside the element. kind: 'input' | 'wasm' | 'rng'. */
class Problem extends Error {
  constructor(kind, message) { super(message); this.name = 'AttentionHeatmapProblem'; this.kind = kind; }
}
const bad = (message) => { throw new Problem('input', message); };
const show = (x) => (typeof x === 'string' ? JSON.stringify(x.length > 40 ? x.slice(0, 40) + '…' : x)
  : Array.isArray(x) ? 'an array' : x && typeof x === 'object' ? 'an object' : String(x));

// ----------------------------------------------------------------------------
// attribute and property values

/** Space-separated words, or a JSON array of strings (when it starts with "["); "" = no labels. */
function parseTokens(value, from) {
  if (value == null) return null;
  if (Array.isArray(value)) {
    value.forEach((t, i) => typeof t === 'string' || bad(`tokens[${i}] must be a string; received ${show(t)}`));
    return value.slice();
  }
  if (typeof value !== 'string') bad(`tokens must be an array of strings or a string; received ${show(value)}`);
  const s = value.trim();
  if (!s.startsWith('[')) return s ? s.split(/\s+/) : null;
  let parsed;
  try { parsed = JSON.parse(s); } catch (e) {
    bad(`${from} looks like a JSON array but is not valid JSON (${e.message}); use space-separated words or a JSON array of strings such as ["猫","吃","鱼"]`);
  }
  return Array.isArray(parsed) ? parseTokens(parsed, from) : bad(`${from} must be a JSON array of strings`);
}

/** A matrix attribute, JSON number[][]: shapes and values are checked by the core. */
function parseMatrix(text, name) {
  if (text === null) return undefined;
  let parsed;
  try { parsed = JSON.parse(text); } catch (e) {
    bad(`the ${name} attribute is not valid JSON (${e.message}); expected a number[][] such as [[1.0, 0.2], [0.3, 0.8]]`);
  }
  return Array.isArray(parsed) ? parsed : bad(`the ${name} attribute must be a JSON array of rows (number[][]); received ${show(parsed)}`);
}

/** max === undefined: a finite number >= 0; else an integer from 0 to max. */
function parseNumber(text, name, max) {
  if (text === null) return undefined;
  const x = text.trim() === '' ? NaN : Number(text);
  const ok = max === undefined ? Number.isFinite(x) && x >= 0 : Number.isInteger(x) && x >= 0 && x <= max;
  return ok ? x : bad(`the ${name} attribute must be ${max === undefined ? 'a finite number >= 0' : `an integer from 0 to ${max}`}; received ${show(text)}`);
}

function parseHeads(text) {
  if (text === null) return undefined;
  const h = text.trim() === '' ? NaN : Number(text);
  return Number.isInteger(h) && h >= 1 && h <= MAX_HEADS ? h
    : bad(`the heads attribute must be an integer from 1 to ${MAX_HEADS} that divides d_model; received ${show(text)}`);
}

function parseLang(text) {
  const s = (text ?? '').trim().toLowerCase();
  if (s === '' || s === 'zh' || s.startsWith('zh-')) return 'zh';
  if (s === 'en' || s.startsWith('en-')) return 'en';
  return bad(`the lang attribute must be "zh" or "en"; received ${show(text)}`);
}

const MAX_SEED = Number.MAX_SAFE_INTEGER;
const isRow = (r) => Array.isArray(r) || (ArrayBuffer.isView(r) && !(r instanceof DataView));

/** number[][] or { data, shape } -> { data: Float32Array, shape } (for the event detail). */
function asMatrix(m) {
  if (!Array.isArray(m)) return { data: Float32Array.from(m.data), shape: [m.shape[0], m.shape[1]] };
  return { data: Float32Array.from(m.flatMap((r) => Array.from(r))), shape: [m.length, m[0].length] };
}

// As heatmap.js does in its labels: tokens with right-to-left text in FSI … PDI so that they
// cannot reorder the rest of the label; control characters as U+FFFD, tabs and newlines as spaces.
const BIDI = /[\u0590-\u08ff\u200e\u200f\u202a-\u202e\u2066-\u2069\ufb1d-\ufdff\ufe70-\ufefc]|\ud802[\udc00-\udfff]|\ud83a[\udc00-\udfff]/;
// eslint-disable-next-line no-control-regex
const label = (s) => { s = s.replace(/[\t\n\r]/g, ' ').replace(/[\u0000-\u001f]/g, '\ufffd'); return BIDI.test(s) ? `\u2068${s}\u2069` : s; };
const fixed = (x, d) => x.toFixed(d).replace(/^-(0\.?0*)$/, '$1');

// at most max UTF-16 units with "…" (whole code points)
const cut = (s, max) => (s.length <= max ? s : Array.from(s.slice(0, max)).slice(0, -1).join('').trimEnd() + '…');

/** [rows, cols] of a matrix as given, NaN where it cannot tell (the core names the problem). */
function dims(m) {
  try {
    const d = Array.isArray(m) ? [m.length, isRow(m[0]) ? m[0].length : 0] : [m?.shape?.[0], m?.shape?.[1]];
    return d.map((x) => (Number.isInteger(x) && x > 0 ? x : NaN));
  } catch { return [NaN, NaN]; }
}

/** The budgets, from the shapes alone; a heatmap over 256×256 gets the renderer's own message. */
function checkBudget({ tokens, q, k, v, x, wv, wo, heads }) {
  const chars = tokens ? tokens.reduce((sum, t) => sum + t.length, 0) : 0;
  if (chars > MAX_LABEL_CHARS) bad(`tokens has ${chars} characters; the budget is ${MAX_LABEL_CHARS} for all tokens together`);
  const [n] = dims(x ?? q), m = x === undefined ? dims(k)[0] : n, h = heads ?? 1;
  // the output: n × d_v (v, wv) or n × d_model (x with seed, or wo with heads)
  const d = x === undefined ? (v === undefined ? 0 : dims(v)[1]) : dims(heads === undefined ? wv ?? x : wo ?? x)[1];
  for (const shape of [[n, m], [n, d]]) if (shape[0] * shape[1] > MAX_CELLS) draw({ data: [], shape });
  const out = n * d || 0, total = h * n * m + out;
  if (total > MAX_CELLS) {
    bad(`this would draw ${total} cells (${h > 1 ? `${h} heads × ` : ''}${n}×${m} weights${out ? ` + ${n}×${d} output` : ''}); ` +
      `the budget is ${MAX_CELLS} cells per element, all heatmaps together`);
  }
}

let sheet = null;
let count = 0;

// Trusted Types (CSP require-trusted-types-for 'script'): the SVG strings come from renderHeatmap,
// which escapes every label, so one named pass-through policy, "attnmap", is enough. A page that
// lists allowed policy names (trusted-types …) must list attnmap. Created on first use.
let policy;
function html(svg) {
  if (policy === undefined) {
    try { policy = globalThis.trustedTypes?.createPolicy('attnmap', { createHTML: (s) => s }) ?? null; } catch { policy = null; }
  }
  return policy ? policy.createHTML(svg) : svg;
}

// ----------------------------------------------------------------------------
// the element

export class AttentionHeatmapElement extends Base {
  static get observedAttributes() { return ATTRIBUTES.slice(); }

  #data = {};                 // tokens q k v x wq wk wv wo set as properties
  #queued = false;
  #dirty = true;
  #generation = 0;
  #result = null;
  #error = null;
  #id = `ah${++count}`;
  #ui;
  #active = {};               // panel -> [row, col] of the cell with tabindex="0" (roving tabindex)

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    const doc = this.ownerDocument;
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
    this.#ui = { wrap, loading, heads, shared, panels, panel, message };
    // On the shadow root, which lives as long as the element: re-adding it adds no listener.
    root.addEventListener('keydown', (e) => this.#onKey(e));
    root.addEventListener('focusin', (e) => this.#onFocus(e));
    root.addEventListener('focusout', (e) => this.#onBlur(e));
    root.addEventListener('pointerover', (e) => { const c = this.#cellOf(e.target); if (c) this.#describe(c); });
    root.addEventListener('pointerout', (e) => this.#onPointerOut(e));
  }

  connectedCallback() {
    // properties set before the element was upgraded shadow the accessors: re-set them
    for (const name of ['tokens', ...MATRICES, 'causal', 'scale', 'decimals', 'seed', 'heads']) {
      if (Object.prototype.hasOwnProperty.call(this, name)) {
        const value = this[name];
        delete this[name];
        this[name] = value;
      }
    }
    if (this.#dirty) this.#update();
  }

  attributeChangedCallback(name, oldValue, newValue) {
    if (oldValue !== newValue) this.#update();
  }

  // Data: a property wins over the attribute; null or undefined falls back to it. Not reflected.
  get tokens() { return this.#read(() => parseTokens(this.#data.tokens ?? this.getAttribute('tokens'), 'tokens')); }
  set tokens(value) { this.#set('tokens', value); }
  get q() { return this.#data.q ?? this.#read(() => parseMatrix(this.getAttribute('q'), 'q')); }
  set q(value) { this.#set('q', value); }
  get k() { return this.#data.k ?? this.#read(() => parseMatrix(this.getAttribute('k'), 'k')); }
  set k(value) { this.#set('k', value); }
  get v() { return this.#data.v ?? this.#read(() => parseMatrix(this.getAttribute('v'), 'v')); }
  set v(value) { this.#set('v', value); }
  get x() { return this.#data.x ?? this.#read(() => parseMatrix(this.getAttribute('x'), 'x')); }
  set x(value) { this.#set('x', value); }
  get wq() { return this.#data.wq ?? this.#read(() => parseMatrix(this.getAttribute('wq'), 'wq')); }
  set wq(value) { this.#set('wq', value); }
  get wk() { return this.#data.wk ?? this.#read(() => parseMatrix(this.getAttribute('wk'), 'wk')); }
  set wk(value) { this.#set('wk', value); }
  get wv() { return this.#data.wv ?? this.#read(() => parseMatrix(this.getAttribute('wv'), 'wv')); }
  set wv(value) { this.#set('wv', value); }
  get wo() { return this.#data.wo ?? this.#read(() => parseMatrix(this.getAttribute('wo'), 'wo')); }
  set wo(value) { this.#set('wo', value); }

  // Scalars reflect their attributes (lang is HTMLElement's own). An invalid value reads as the default.
  get causal() { return this.hasAttribute('causal'); }
  set causal(value) { this.toggleAttribute('causal', Boolean(value)); }
  get scale() { return this.#read(() => parseNumber(this.getAttribute('scale'), 'scale')); }
  set scale(value) { this.#reflect('scale', value); }
  get decimals() { return this.#read(() => parseNumber(this.getAttribute('decimals'), 'decimals', 10)) ?? 2; }
  set decimals(value) { this.#reflect('decimals', value); }
  get seed() { return this.#read(() => parseNumber(this.getAttribute('seed'), 'seed', MAX_SEED)); }
  set seed(value) { this.#reflect('seed', value); }
  get heads() { return this.#read(() => parseHeads(this.getAttribute('heads'))); }
  set heads(value) { this.#reflect('heads', value); }

  /** The detail of the last attention-computed event, or null. */
  get result() { return this.#result; }
  /** The error shown inside the element, or null. */
  get error() { return this.#error; }

  #read(parse) { try { return parse() ?? null; } catch { return null; } }
  #set(name, value) { this.#data[name] = value ?? undefined; this.#update(); }
  #reflect(name, value) { if (value == null) this.removeAttribute(name); else this.setAttribute(name, String(value)); }

  // -- rendering

  #update() {
    this.#dirty = true;
    if (this.#queued) return;
    this.#queued = true;
    queueMicrotask(() => { this.#queued = false; if (this.isConnected) this.#render(); });
  }

  async #render() {
    this.#dirty = false;
    const generation = ++this.#generation;
    const a = (name) => this.getAttribute(name);        // every attribute read is in ATTRIBUTES
    let lang = 'zh';
    try {
      lang = parseLang(a('lang'));
      this.#ui.wrap.lang = lang === 'zh' ? 'zh-CN' : 'en';    // CJK glyphs, hyphenation
      this.#ui.loading.textContent = TEXT[lang].loading;      // shown until the first result
      const input = this.#input(a, this.hasAttribute('causal'));
      if (typeof WebAssembly !== 'object') throw new Problem('wasm', 'WebAssembly is not defined in this browser or page');
      let rng = null;
      if (input.x !== undefined && input.wq === undefined) {
        try { rng = await import('../rng/torch-rng.js'); } catch (e) { throw new Problem('rng', `could not load torch-rng.js: ${e.message}`); }
      }
      let attn;
      // relaxed: false: the default build is embedded in attention.js, so the embed fetches no
      // second file, and heatmap-sized inputs never reach the kernel that relaxed SIMD speeds up
      try { attn = await createAttention({ relaxed: false }); } catch (e) {
        // CSP without 'wasm-unsafe-eval': Chromium throws a CompileError naming it
        throw e instanceof AttentionError ? e : new Problem('wasm', e.message);
      }
      if (generation !== this.#generation) return;     // a newer render has started
      const detail = compute(attn, rng, input);
      this.#show(detail, input, TEXT[lang], lang);
      this.#result = detail;
      this.#error = null;
      this.dispatchEvent(new CustomEvent('attention-computed', { bubbles: true, composed: true, detail }));
    } catch (e) {
      if (generation !== this.#generation) return;
      this.#result = null;
      this.#error = e;
      this.#problem(e, TEXT[lang]);
    }
  }

  /** Properties and attributes -> checked input; a Problem for anything malformed. */
  #input(a, causal) {
    const d = this.#data;
    const tokens = parseTokens(d.tokens ?? a('tokens'), d.tokens !== undefined ? 'the tokens property' : 'the tokens attribute');
    const [q, k, v, x, wq, wk, wv, wo] = MATRICES.map((n) => d[n] ?? parseMatrix(a(n), n));
    const seed = parseNumber(a('seed'), 'seed', MAX_SEED);
    const heads = parseHeads(a('heads'));
    const scale = parseNumber(a('scale'), 'scale');
    const decimals = parseNumber(a('decimals'), 'decimals', 10) ?? 2;
    const given = { wq, wk, wv, wo };
    const weights = Object.keys(given).filter((n) => given[n] !== undefined);
    const needed = heads === undefined ? ['wq', 'wk', 'wv'] : ['wq', 'wk', 'wv', 'wo'];
    const list = (names) => names.join(', ').replace(/, (?=[^,]*$)/, ' and ');
    if (x !== undefined) {
      if (q !== undefined || k !== undefined || v !== undefined) bad('give either x (with seed, or with wq, wk, wv) or q and k (and v), not both');
      if (weights.length && seed !== undefined) bad(`give either seed (W_Q, W_K, W_V${heads === undefined ? '' : ', W_O'} drawn from it) or ${list(needed)}, not both`);
      if (heads === undefined && wo !== undefined) bad('wo is only used with heads: the output projection W_O belongs to multi-head attention');
      const missing = needed.filter((n) => given[n] === undefined);
      if (weights.length && missing.length) bad(`${list(missing)} ${missing.length === 1 ? 'is' : 'are'} missing: with x give ${list(needed)}, or a seed instead`);
      if (!weights.length && seed === undefined) {
        bad(`x needs a seed attribute: W_Q, W_K and W_V${heads === undefined ? '' : ' and W_O'} are drawn from it as the episode's PyTorch snippet does (or give ${list(needed)})`);
      }
    } else {
      if (weights.length) bad(`${list(weights)} ${weights.length === 1 ? 'needs x: the token vectors it projects' : 'need x: the token vectors they project'}`);
      if (heads !== undefined) bad('heads needs x (with seed, or with wq, wk, wv and wo): each head takes its own columns of W_Q, W_K, W_V');
      if (q === undefined || k === undefined) {
        bad(`${q === undefined ? (k === undefined ? 'q and k are' : 'q is') : 'k is'} missing: set the q and k attributes (JSON number[][]) or properties, or x and seed`);
      }
      if (seed !== undefined) bad('seed is only used with x; remove it or give x instead of q and k');
    }
    const input = { tokens, q, k, v, x, wq, wk, wv, wo, seed, heads, scale, decimals, causal };
    checkBudget(input);
    return input;
  }

  #show(detail, input, t, lang) {
    const { output, tokens } = detail;
    // with heads, weights is an array: one (n, m) matrix per head, each drawn in its own panel
    const multi = Array.isArray(detail.weights);
    const list = multi ? detail.weights : [detail.weights];
    const [n, m] = list[0].shape;
    const dHead = multi ? detail.heads[0].shape[1] : 0;
    // every cell of every heatmap repeats the tokens: cut to CELL_TEXT / (all cells) characters
    const cells = list.length * n * m + (output ? output.shape[0] * output.shape[1] : 0);
    const labels = tokens?.map((s) => cut(s, Math.floor(CELL_TEXT / cells)));
    const common = { rowLabels: labels, lang, decimals: input.decimals, standalone: false };
    let masked;
    if (input.causal) masked = Array.from({ length: n }, (_, i) => Array.from({ length: m }, (_, j) => j > i));
    const keys = list.map((_, h) => (h === 0 ? 'heatmap' : `head${h + 1}`));
    // Render all first: if the renderer refuses (e.g. over 256×256 cells), nothing has changed yet.
    const svgs = {};
    list.forEach((w, h) => {
      svgs[keys[h]] = draw(w, {
        ...common, colLabels: labels, masked, idPrefix: `${this.#id}-w${h ? h + 1 : ''}`,
        title: multi ? t.head(h + 1, dHead, input.causal) : input.causal ? t.causal : t.title,
      });
    });
    svgs.output = output && draw(output, {
      ...common, scale: 'diverging', idPrefix: `${this.#id}-o`, title: multi ? t.mhaOut : t.out,
      cellSize: Math.min(40, Math.max(14, Math.round(512 / Math.max(...output.shape)))),
    });
    const focused = this.#cellOf(this.shadowRoot.activeElement);
    const { loading, message, panels, heads, shared } = this.#ui;
    for (const key of keys) panels[key] ??= this.#ui.panel(key, 'heatmap', heads);
    // several heads side by side share one caption line below them
    const sharing = list.length > 1;
    heads.classList.toggle('multi', sharing);
    shared.hidden = !sharing;
    loading.hidden = message.hidden = true;
    message.replaceChildren();
    for (const [name, p] of Object.entries(panels)) {
      const { panel, figure } = p;
      p.caption = sharing && name !== 'output' ? shared : p.own;
      panel.hidden = !svgs[name];
      if (!svgs[name]) { figure.replaceChildren(); delete this.#active[name]; continue; }
      figure.innerHTML = html(svgs[name]);             // escaped by renderHeatmap
      // role="img" would make the cells presentational; as a labelled group they stay reachable
      figure.querySelector('svg').setAttribute('role', 'group');
      const [rows, cols] = name === 'output' ? output.shape : [n, m];
      const head = multi && name !== 'output' ? keys.indexOf(name) + 1 : 0;
      let [r0, c0] = this.#active[name] ?? [0, 0];
      if (r0 >= rows || c0 >= cols) r0 = c0 = 0;
      this.#active[name] = [r0, c0];
      for (const g of figure.querySelectorAll('.cell-group')) {
        const { row, col } = g.querySelector('rect').dataset;
        g.setAttribute('role', 'img');
        g.setAttribute('tabindex', +row === r0 && +col === c0 ? '0' : '-1');
        let text = null;
        // the output's cells are dimensions, not keys: relabel what heatmap.js wrote
        if (name === 'output') text = t.outCell(labels ? label(labels[row]) : row, col, fixed(output.data[row * cols + +col], Math.max(4, input.decimals)));
        // one head among several: say which
        else if (head && sharing) text = t.headCell(head, g.getAttribute('aria-label'));
        if (text !== null) {
          g.setAttribute('aria-label', text);
          g.querySelector('title').textContent = text;
        }
      }
      if (name === 'output') {
        for (const [sel, text] of [['.row-caption', t.outRows], ['.col-caption', t.outCols], ['desc', t.outDesc]]) {
          const e = figure.querySelector(sel);
          if (e) e.textContent = text;
        }
      }
      p.caption.dataset.hint = t.hint;
      this.#reset(name);
    }
    if (focused) this.#cell(focused.panel, focused.row, focused.col)?.focus();
  }

  #problem(e, t) {
    const [headline, hint] = e instanceof Problem && e.kind !== 'input' ? [t[e.kind], t[`${e.kind}Hint`]]
      : e instanceof Problem || e instanceof AttentionError || e instanceof RangeError ? [t.input]
        : [t.other];
    const p = (cls, text) => Object.assign(this.ownerDocument.createElement('p'), { className: cls, textContent: text });
    const { loading, panels, message, shared } = this.#ui;
    message.replaceChildren(p('message', headline), p('detail', (e instanceof AttentionError ? `${e.code}: ` : '') + (e?.message ?? String(e))));
    if (hint) message.append(p('hint', hint));
    loading.hidden = shared.hidden = true;
    for (const { panel, figure } of Object.values(panels)) { panel.hidden = true; figure.replaceChildren(); }
    this.#active = {};
    message.hidden = false;
  }

  // -- interaction: arrow keys move a roving tabindex; the caption line explains the cell

  #cellOf(target) {
    const g = target?.closest?.('.cell-group');
    if (!g) return null;
    const { row, col } = g.querySelector('rect').dataset;
    return { g, panel: g.closest('.panel').dataset.panel, row: +row, col: +col };
  }

  #cell(panel, row, col) {
    return this.#ui.panels[panel].figure.querySelector(`rect[data-row="${row}"][data-col="${col}"]`)?.closest('.cell-group');
  }

  #describe(cell) {
    const caption = this.#ui.panels[cell.panel].caption;
    caption.textContent = cell.g.getAttribute('aria-label');
    caption.classList.add('active');
  }

  #reset(panel) {
    const caption = this.#ui.panels[panel].caption;
    caption.textContent = caption.dataset.hint ?? '';
    caption.classList.remove('active');
  }

  #onFocus(e) {
    const cell = this.#cellOf(e.target);
    if (!cell) return;
    const [r, c] = this.#active[cell.panel] ?? [0, 0];
    this.#cell(cell.panel, r, c)?.setAttribute('tabindex', '-1');
    cell.g.setAttribute('tabindex', '0');
    this.#active[cell.panel] = [cell.row, cell.col];
    this.#describe(cell);
  }

  #onBlur(e) {
    const cell = this.#cellOf(e.target);
    if (cell && this.#cellOf(e.relatedTarget)?.panel !== cell.panel) this.#reset(cell.panel);
  }

  #onPointerOut(e) {
    const cell = this.#cellOf(e.target);
    if (!cell || this.#cellOf(e.relatedTarget)) return;
    const focused = this.#cellOf(this.shadowRoot.activeElement);
    if (focused?.panel === cell.panel) this.#describe(focused); else this.#reset(cell.panel);
  }

  #onKey(e) {
    const cell = this.#cellOf(e.target);
    if (!cell || e.altKey || e.metaKey) return;
    const rects = cell.g.ownerSVGElement.querySelectorAll('rect.cell');
    const rows = +rects[rects.length - 1].dataset.row + 1, cols = rects.length / rows;
    let { row, col } = cell;
    switch (e.key) {
      case 'ArrowLeft': col = Math.max(0, col - 1); break;
      case 'ArrowRight': col = Math.min(cols - 1, col + 1); break;
      case 'ArrowUp': row = Math.max(0, row - 1); break;
      case 'ArrowDown': row = Math.min(rows - 1, row + 1); break;
      case 'Home': col = 0; if (e.ctrlKey) row = 0; break;
      case 'End': col = cols - 1; if (e.ctrlKey) row = rows - 1; break;
      case 'PageUp': row = 0; break;
      case 'PageDown': row = rows - 1; break;
      default: return;
    }
    e.preventDefault();
    this.#cell(cell.panel, row, col)?.focus();
  }
}

/** One computation; returns the event detail: the core's matrices plus the tokens. */
function compute(attn, rng, { tokens, q, k, v, x, wq, wk, wv, wo, seed, heads, scale, causal }) {
  const options = scale === undefined ? { causal } : { causal, scale };
  if (x !== undefined) {
    let w = { wq, wk, wv, wo };
    if (rng) {
      // As the episode's snippet draws them after torch.manual_seed(seed): X = torch.randn(n,
      // d_model) first (discarded: x is given), then nn.Linear(d_model, d_model, bias=False) for
      // W_Q, W_K, W_V and, with heads, one more for W_O; each transposed to (d_model, d_model).
      const [n, dModel] = Array.isArray(x) ? [x.length, isRow(x[0]) ? x[0].length : 0] : (x?.shape ?? [0, 0]);
      if (!(n > 0 && dModel > 0)) attn.selfAttention({ x, wq: [[0]], wk: [[0]], wv: [[0]] });  // the core names the problem
      const g = rng.manualSeed(seed);
      g.randn(n, dModel);
      const linear = () => ({ data: g.linear(dModel, dModel).T, shape: [dModel, dModel] });
      w = { wq: linear(), wk: linear(), wv: linear() };
      if (heads !== undefined) w.wo = linear();
    }
    if (heads !== undefined) {
      const result = attn.multiHeadAttention({ x, ...w }, { ...options, heads });
      checkTokens(tokens, result.weights[0].shape, 'x');
      return { tokens, x: asMatrix(x), ...mapValues(w, asMatrix), ...result };
    }
    const result = attn.selfAttention({ x, wq: w.wq, wk: w.wk, wv: w.wv }, options);
    checkTokens(tokens, result.weights.shape, 'x');
    return { tokens, x: asMatrix(x), wq: asMatrix(w.wq), wk: asMatrix(w.wk), wv: asMatrix(w.wv), ...result };
  }
  // Without v the core still needs one: a zero column; no output is shown.
  const m = Array.isArray(k) ? k.length : k?.shape?.[0];
  const result = attn.attention({ q, k, v: v ?? (m > 0 ? { data: new Float32Array(m), shape: [m, 1] } : undefined) }, options);
  checkTokens(tokens, result.weights.shape, 'q');
  return v === undefined ? { tokens, q: asMatrix(q), k: asMatrix(k), weights: result.weights }
    : { tokens, q: asMatrix(q), k: asMatrix(k), v: asMatrix(v), weights: result.weights, output: result.output };
}

const mapValues = (o, f) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));

/** renderHeatmap, its TypeError/RangeError (a matrix it cannot draw) shown as an input problem. */
function draw(matrix, options) {
  try { return renderHeatmap(matrix, options); } catch (e) { throw new Problem('input', e.message); }
}

/** After the core has checked the shapes: one token per row, labelling both axes. */
function checkTokens(tokens, [n, m], name) {
  const s = (c, word) => `${c} ${word}${c === 1 ? '' : 's'}`;
  if (tokens && tokens.length !== n) bad(`tokens has ${s(tokens.length, 'token')} but ${name} has ${s(n, 'row')}: give one token per row`);
  if (tokens && m !== n) bad(`tokens label both the queries and the keys, so q and k need the same number of rows; received q with ${n} and k with ${m}`);
}
