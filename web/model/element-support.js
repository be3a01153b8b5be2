// element-support.js - what <attention-heatmap model="…"> (web/element/from-model.js) does with a
// model, kept out of the element's own code: it loads with the model, only when an element has a
// model attribute (web/element/model-import.js; in the classic bundles web/dist/attnmap-model.js).
//
//   const model = await openModel(files);              // or openModel(folderUrl): fetched first
//   const { ids, tokens, layer, head, weights } = attentionOf(model, { text, ids, layer, head });
//
// Failures are Errors with a kind, which picks the element's headline: 'model' (a file could not
// be fetched: the URL and HTTP status; or a broken or unsupported checkpoint: INVALID_MODEL and
// loadModel's message), 'input' (text, ids, layer, head; characters outside the vocabulary).
import { loadModel } from './model.js';
import { fetchCheckpoint } from './load/fetch-checkpoint.js';
import { MAX_CELLS, MAX_LABEL_CHARS } from '../heatmap/budgets.js';
import { MODEL_HINTS } from '../strings/model-hints.js';

const MAX_TOKENS = Math.floor(Math.sqrt(MAX_CELLS));   // one n×n map: 256 tokens
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

/** A model from its files ({ config, weights, … }) or from a checkpoint folder's absolute URL. */
export async function openModel(source) {
  let files = source;
  if (typeof source === 'string') {
    try { files = await fetchCheckpoint(source); } catch (e) { throw problem('model', e); }
  }
  // one thread: the one-file embed carries no worker script and no threaded build (EMBED.md)
  try { return await loadModel(files, { threads: 1 }); } catch (e) { throw problem('model', e); }
}

const passes = new WeakMap();    // model -> { key, attention }: the last forward pass, reused for another layer or head

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
  if (ids !== null && ids.length > 8 * MAX_CELLS) budget(`the ids attribute has ${ids.length} characters; it can hold at most ${MAX_TOKENS} ids`);
  const list = ids === null ? encode(model, text) : parseIds(ids);
  if (list.length > MAX_TOKENS) budget(`${list.length} tokens make a ${list.length}×${list.length} map; the budget is ${MAX_CELLS} cells (${MAX_TOKENS} tokens)`);
  const tokens = model.tokenizer ? model.tokens(list) : list.map(String);
  const chars = tokens.reduce((sum, t) => sum + t.length, 0);
  if (chars > MAX_LABEL_CHARS) budget(`the tokens have ${chars} characters; the budget is ${MAX_LABEL_CHARS} for all tokens together`);
  // an encoder (BERT): every token sees every other, no causal triangle
  return { ids: list, tokens, layer: l, head: h, weights: weightsOf(model, list, l, h), causal: !model.config.encoder };
}

function budget(message) { throw problem('input', { message }); }

// one head's map, from the last pass over these ids when it kept every head
function weightsOf(model, list, l, h) {
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
