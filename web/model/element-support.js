// element-support.js - what <attention-heatmap model="…"> (web/element/from-model.js) does with a
// model, kept out of the element's own code: it loads with the model, only when an element has a
// model attribute (web/element/model-import.js; in the classic bundles web/dist/attnmap-model.js).
//
//   const model = await openModel(files);              // or openModel(folderUrl): fetched first
//   const { ids, tokens, layer, head, weights } = attentionOf(model, { text, ids, layer, head });
//   const panel = largePanel(detail, { lang });        // over 256 tokens: a canvas (below); else null
//
// Up to 256 tokens the element draws an SVG (web/element/render.js); beyond, up to the model's
// context and at most MAX_MODEL_TOKENS, a canvas with zoom, pan, hover and PNG
// (element-canvas.js, imported only then). A long map comes from one forward with
// { heads: true, logits: false } and result.map(layer, head): no other head's map is kept.
//
// Failures are Errors with a kind, which picks the element's headline: 'model' (a file could not
// be fetched: the URL and HTTP status; or a broken or unsupported checkpoint: INVALID_MODEL and
// loadModel's message), 'input' (text, ids, layer, head; characters outside the vocabulary).
import { loadModel } from './model.js';
import { fetchCheckpoint, fetchGguf, isGgufUrl } from './load/fetch-checkpoint.js';
import { MAX_CELLS, MAX_LABEL_CHARS } from '../heatmap/budgets.js';
import { MODEL_HINTS } from '../strings/model-hints.js';

const SVG_TOKENS = Math.floor(Math.sqrt(MAX_CELLS));   // one n×n SVG: 256 tokens; beyond, a canvas
const MAX_MODEL_TOKENS = 4096;                         // the element's cap, below the model's context
// every head's maps are kept for the last ids (switching heads costs no forward pass) while they
// fit in this many floats; a larger model computes the one head shown
const KEEP_FLOATS = 4 * 1024 * 1024;

const problem = (kind, e) => Object.assign(new Error(e.code && e.name !== 'ModelFetchError' ? `${e.code}: ${e.message}` : e.message ?? String(e)), { kind, hint: hintOf(e) });

// the hint under a model's failure: none for a broken file (the message says what is wrong),
// { zh, en } by how the fetch failed, or undefined for the element's own (modelHint: no answer)
function hintOf(e) {
  if (e.name !== 'ModelFetchError') return e.code ? null : undefined;
  if (e.status === 0) return /no answer within/.test(e.message) ? MODEL_HINTS.stall : undefined;
  if (e.status === 404) return MODEL_HINTS.missing;
  return /HTML page/.test(e.message) ? MODEL_HINTS.html : /stalled|broke off/.test(e.message) ? MODEL_HINTS.stall : undefined;
}

/** A model from its files ({ config, weights, … }), a checkpoint folder's absolute URL, or a .gguf file's. */
export async function openModel(source) {
  let files = source;
  if (typeof source === 'string') {
    try { files = isGgufUrl(source) ? await fetchGguf(source) : await fetchCheckpoint(source); } catch (e) { throw problem('model', e); }
  }
  // one thread: the one-file embed carries no worker script and no threaded build (EMBED.md)
  try { return await loadModel(files, { threads: 1 }); } catch (e) { throw problem('model', e); }
}

const passes = new WeakMap();    // model -> { key, attention }: the last forward pass, reused for another layer or head
const longPasses = new WeakMap();  // model -> { key, result }: the last forward with heads over > 256 tokens (its map())

/**
 * The weights of one layer and head, with the tokens as labels. The element's attributes as they
 * are (strings or null): text (through the tokenizer) or ids (a JSON array of token ids), layer
 * and head (default 0).
 */
export function attentionOf(model, { text, ids, layer, head }) {
  const { n_layer: L, n_head: H } = model.config;
  const l = index(layer, 'layer', L, 'layers'), h = index(head, 'head', H, 'heads in each layer');
  if ((text === null) === (ids === null)) throw problem('input', { message: 'model needs text, or ids (a JSON array of token ids), and not both' });
  // the element's budgets, before the tokenizer and the forward pass run
  if (text !== null && text.length > MAX_LABEL_CHARS) budget(`the text has ${text.length} characters; the budget is ${MAX_LABEL_CHARS}`);
  const cap = Math.min(model.config.n_positions, MAX_MODEL_TOKENS);
  if (ids !== null && ids.length > 8 * MAX_CELLS) budget(`the ids attribute has ${ids.length} characters; it can hold at most ${cap} ids`);
  const list = ids === null ? encode(model, text) : parseIds(ids);
  if (list.length > cap) {
    budget(cap === MAX_MODEL_TOKENS ? `${list.length} tokens: the element draws at most ${cap} (this model's context is ${model.config.n_positions})`
      : `${list.length} tokens are more than this model reads: its context is ${cap} tokens`);
  }
  const tokens = model.tokenizer ? model.tokens(list) : list.map(String);
  const chars = tokens.reduce((sum, t) => sum + t.length, 0);
  if (chars > MAX_LABEL_CHARS) budget(`the tokens have ${chars} characters; the budget is ${MAX_LABEL_CHARS} for all tokens together`);
  // an encoder (BERT): every token sees every other, no causal triangle
  return { ids: list, tokens, layer: l, head: h, weights: weightsOf(model, list, l, h), causal: !model.config.encoder };
}

function budget(message) { throw problem('input', { message }); }

// one head's map, from the last pass over these ids when it kept every head
function weightsOf(model, list, l, h) {
  if (list.length > SVG_TOKENS) return longMap(model, list, l, h);
  const { n_layer: L, n_head: H } = model.config, key = list.join();
  let pass = passes.get(model);
  if (pass?.key !== key || !pass.attention[l][h]) {
    const all = L * H * list.length * list.length <= KEEP_FLOATS;
    const attention = all ? true : { layers: [l], heads: [h] };
    pass = { key, attention: call(() => model.forward(list, { attention }).attention) };
    passes.set(model, pass);
  }
  return pass.attention[l][h];
}

// over 256 tokens: one forward with every head's scores and no map kept, then map(l, h); the
// result serves another layer or head until the model's next forward (another element's, say),
// after which map() throws and the forward runs again
function longMap(model, list, l, h) {
  const key = list.join(), pass = longPasses.get(model);
  if (pass?.key === key) {
    try { return pass.result.map(l, h); } catch { /* stale: below */ }
  }
  // an encoder's forward has no logits option (its masked-LM head runs anyway)
  const options = model.config.encoder ? { heads: true } : { heads: true, logits: false };
  const result = call(() => model.forward(list, options));
  longPasses.set(model, { key, result });
  return call(() => result.map(l, h));
}

/**
 * The element's panel for a map too large for an SVG (over 256 tokens), or null for one an SVG can
 * draw (web/element/render.js's). The panel is { svgs: { heatmap: node }, active, sharing }, as
 * web/element/view.js's showPanels takes it; the node is filled once element-canvas.js has loaded
 * (imported here on first use, so that a small map never loads it): a canvas with zoom, pan, hover
 * and a PNG button. detail: attentionOf's, with model (the attribute); lang: 'zh' | 'en'.
 */
export function largePanel(detail, { lang }) {
  if (detail.weights.shape[0] <= SVG_TOKENS) return null;
  const node = document.createElement('div');
  node.className = 'large';
  const data = { model: detail.model, layer: detail.layer, head: detail.head, ids: JSON.stringify(detail.ids), n: detail.weights.shape[0] };
  for (const [k, v] of Object.entries(data)) node.dataset[k] = String(v);
  import('./element-canvas.js').then(({ fillCanvasPanel }) => { if (node.isConnected) fillCanvasPanel(node, detail, { lang }); },
    (e) => { node.textContent = `element-canvas.js did not load: ${e.message}`; });
  return { svgs: { heatmap: node }, active: {}, sharing: false };
}

function index(text, name, count, what) {
  const i = text === null ? 0 : text.trim() === '' ? NaN : Number(text);
  if (Number.isInteger(i) && i >= 0 && i < count) return i;
  throw problem('input', { message: `the ${name} attribute must be an integer from 0 to ${count - 1} (this model has ${count} ${what}); received ${JSON.stringify(text)}` });
}

function parseIds(text) {
  let ids;
  try { ids = JSON.parse(text); } catch { /* below */ }
  if (Array.isArray(ids) && ids.length && ids.every((i) => Number.isInteger(i) && i >= 0)) return ids;
  throw problem('input', { message: `the ids attribute must be a non-empty JSON array of token ids such as [3, 7, 5]; received ${JSON.stringify(text.slice(0, 40))}` });
}

function call(f) {
  try { return f(); } catch (e) { throw problem('input', e); }
}

/** text -> ids ([CLS] … [SEP] for BERT); a character WordPiece does not know is a problem (named), not an [UNK]. */
function encode(model, text) {
  const idsOf = (s) => (model.config.encoder ? model.encode(s).ids : model.encode(s));
  const ids = call(() => idsOf(text));
  if (!ids.length) throw problem('input', { message: 'the text attribute gives no tokens' });
  const unknown = (s) => model.tokenizer === 'wordpiece' && model.tokens(idsOf(s)).includes('[UNK]');
  if (unknown(text)) {
    const chars = [...new Set(Array.from(text).filter((c) => c.trim() && unknown(c)))];
    throw problem('input', { message: `not in the model's vocabulary (${model.config.vocab_size} tokens): ${chars.join(' ')}` });
  }
  return ids;
}
