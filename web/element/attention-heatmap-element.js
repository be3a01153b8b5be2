// attention-heatmap-element.js - the <attention-heatmap> class; importing it defines nothing
// (attention-heatmap.js does). Model: github/relative-time-element.
//
// Thin: an open shadow root; one observedAttributes list, equal to what #render() reads; re-render
// batched in a microtask; data via properties (tokens q k v x wq wk wv wo, which win over the
// attributes), small scalars via attributes (causal scale decimals lang seed heads). With `heads`
// (episode 06) it draws one heatmap per head (multiHeadAttention). With `model` (issue 16) it
// draws one layer's and head's attention of a checkpoint instead (from-model.js: model text ids
// layer head), loading the model code and data only then; over 256 tokens the model code gives a
// canvas with zoom and pan (web/model/element-canvas.js) in place of the SVG. The work is in pure modules:
// parse.js reads the input, compute.js runs the core, render.js makes each panel's SVG with
// renderHeatmap (which escapes every label); view.js shows it (all other text via textContent).
//
// CSP: the styles are one constructable stylesheet (adoptedStyleSheets), which style-src 'self'
// does not block; the shadow root has no <style> and no style="". Every failure (bad input,
// WebAssembly forbidden) is a readable message inside the element, never an uncaught error.
import { zh, en } from '../strings/element.js';
import { ATTRIBUTES, MATRICES, SCALARS, parseTokens, parseMatrix, parseLang, readInput } from './parse.js';
import { loadCore, compute } from './compute.js';
import { checkBudget, renderPanels } from './render.js';
import { createView, showLoading, showModelLoading, showPanels, showProblem } from './view.js';
import { readModelInput, sharedModel, modelAttention, renderModelPanel } from './from-model.js';

const TEXT = { zh, en };

// In Node (no DOM) the module still imports: the class then extends a stub.
const Base = globalThis.HTMLElement ?? class {};

export class AttentionHeatmapElement extends Base {
  static get observedAttributes() { return ATTRIBUTES.slice(); }

  #data = {};                 // tokens q k v x wq wk wv wo set as properties
  #queued = false;
  #dirty = true;
  #generation = 0;
  #result = null;
  #error = null;
  #view = createView(this.attachShadow({ mode: 'open' }));

  connectedCallback() {
    upgradeProperties(this, ['tokens', ...MATRICES, 'causal', 'scale', 'decimals', 'seed', 'heads']);
    if (this.#dirty) this.#update();
  }

  attributeChangedCallback(name, oldValue, newValue) { if (oldValue !== newValue) this.#update(); }

  // Data: a property wins over the attribute; null or undefined falls back to it. Not reflected.
  get tokens() { return this.#read(() => parseTokens(this.#data.tokens ?? this.getAttribute('tokens'), 'tokens')); }
  set tokens(value) { this.#set('tokens', value); }
  get q() { return this.#matrix('q'); } set q(value) { this.#set('q', value); }
  get k() { return this.#matrix('k'); } set k(value) { this.#set('k', value); }
  get v() { return this.#matrix('v'); } set v(value) { this.#set('v', value); }
  get x() { return this.#matrix('x'); } set x(value) { this.#set('x', value); }
  get wq() { return this.#matrix('wq'); } set wq(value) { this.#set('wq', value); }
  get wk() { return this.#matrix('wk'); } set wk(value) { this.#set('wk', value); }
  get wv() { return this.#matrix('wv'); } set wv(value) { this.#set('wv', value); }
  get wo() { return this.#matrix('wo'); } set wo(value) { this.#set('wo', value); }

  // Scalars reflect their attributes (lang is HTMLElement's own). An invalid value reads as the default.
  get causal() { return this.hasAttribute('causal'); }
  set causal(value) { this.toggleAttribute('causal', Boolean(value)); }
  get scale() { return this.#scalar('scale'); } set scale(value) { this.#reflect('scale', value); }
  get decimals() { return this.#scalar('decimals') ?? 2; } set decimals(value) { this.#reflect('decimals', value); }
  get seed() { return this.#scalar('seed'); } set seed(value) { this.#reflect('seed', value); }
  get heads() { return this.#scalar('heads'); } set heads(value) { this.#reflect('heads', value); }

  get result() { return this.#result; }       // the detail of the last attention-computed event, or null
  get error() { return this.#error; }         // the error shown inside the element, or null

  #matrix(name) { return this.#data[name] ?? this.#read(() => parseMatrix(this.getAttribute(name), name)); }
  #scalar(name) { return this.#read(() => SCALARS[name](this.getAttribute(name))); }
  #read(parse) { try { return parse() ?? null; } catch { return null; } }
  #set(name, value) { this.#data[name] = value ?? undefined; this.#update(); }
  #reflect(name, value) { if (value == null) this.removeAttribute(name); else this.setAttribute(name, String(value)); }

  #update() {
    this.#dirty = true;
    if (this.#queued) return;
    this.#queued = true;
    queueMicrotask(() => { this.#queued = false; if (this.isConnected) this.#render(); });
  }

  // read, load, compute, draw; a newer render that started meanwhile wins
  async #render() {
    this.#dirty = false;
    const generation = ++this.#generation;
    const stale = () => generation !== this.#generation;
    const a = (name) => this.getAttribute(name);        // every attribute read is in ATTRIBUTES
    let t = TEXT.zh;
    try {
      const lang = parseLang(a('lang'));
      showLoading(this.#view, t = TEXT[lang]);          // shown until the first result
      const m = readModelInput(a, this.#data);
      const detail = await (m ? this.#fromModel(m, a, lang, t, stale) : this.#fromInput(a, lang, t, stale));
      if (!detail) return;
      this.#result = detail;
      this.#error = null;
      this.dispatchEvent(new CustomEvent('attention-computed', { bubbles: true, composed: true, detail }));
    } catch (e) {
      if (stale()) return;
      this.#result = null;
      this.#error = e;
      showProblem(this.#view, e, t);
    }
  }

  // q k (v), x with seed or weights, heads: the core
  async #fromInput(a, lang, t, stale) {
    const input = readInput(a, this.#data, this.hasAttribute('causal'));
    checkBudget(input);
    const { attn, rng } = await loadCore(input);
    if (stale()) return null;
    const detail = compute(attn, rng, input);
    showPanels(this.#view, renderPanels(detail, input, lang, t, this.#view.id, this.#view.active), t);
    return detail;
  }

  // model="…": one layer and head of a checkpoint (from-model.js), loaded once per page
  async #fromModel(m, a, lang, t, stale) {
    const decimals = SCALARS.decimals(a('decimals')) ?? 2;
    const shared = sharedModel(m);
    if (!shared.ready) showModelLoading(this.#view, t);
    const loaded = await shared.promise;
    if (stale()) return null;
    const detail = modelAttention(loaded, m);
    showPanels(this.#view, loaded.code.largePanel(detail, { lang }) ?? renderModelPanel(detail, decimals, lang, t, this.#view.id), t);
    return detail;
  }
}

/** Properties set on the element before its class was defined shadow the accessors: set them again. */
function upgradeProperties(el, names) {
  for (const name of names) {
    if (Object.prototype.hasOwnProperty.call(el, name)) {
      const value = el[name];
      delete el[name];
      el[name] = value;
    }
  }
}
