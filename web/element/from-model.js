// from-model.js - <attention-heatmap model="toy-zh" text="猫吃鱼" layer="0" head="1">: the attention
// of one layer and head of a GPT-2-family checkpoint, run by attnmap/model.
//
// model is a name the package ships (model-import.js: toy-zh) or else a checkpoint folder's URL,
// resolved against the document (model="gpt2" fetches ./gpt2/config.json). The model code and data load only here, on first use, once per
// page for each model (all elements share it); changing text, ids, layer or head computes again
// with the loaded model. text goes through the checkpoint's tokenizer; ids (a JSON array of
// token ids) is for a checkpoint without one. The work is in web/model/element-support.js, which
// loads with the model, so that the one-file embed stays small; so is the canvas that shows a map
// over 256 tokens (up to the model's context, at most 4,096), which only a model can give.
import { importModel, SHIPPED } from './model-import.js';
import { MATRICES, Problem, bad } from './parse.js';
import { draw } from './render.js';

const NAMES = ['model', 'text', 'ids', 'layer', 'head'];
const NOT_WITH_MODEL = ['tokens', ...MATRICES, 'seed', 'heads', 'scale', 'causal'];

/**
 * The model attributes, null without a model attribute. a(name) reads one, d: the data properties.
 * A name the package ships, or else a folder URL; text, ids, layer and head are checked by
 * element-support.js, against the model.
 */
export function readModelInput(a, d) {
  const [model, text, ids, layer, head] = NAMES.map(a);
  const stray = (names) => names.filter((n) => a(n) !== null || d[n] != null).join(', ');
  if (model === null) return stray(NAMES) ? bad(`${stray(NAMES)}: only with the model attribute`) : null;
  if (stray(NOT_WITH_MODEL)) bad(`with model, remove ${stray(NOT_WITH_MODEL)}`);
  const name = model.trim();
  return { name, key: SHIPPED.has(name) ? name : folderUrl(name), text, ids, layer, head };
}

// a checkpoint folder's URL: relative, or absolute over http(s); other schemes (data:,
// javascript:, blob:, file: from a served page) are refused by name before any fetch
function folderUrl(name) {
  let url;
  try { url = new URL(name, document.baseURI); } catch { bad(`model must be a shipped model's name or a folder URL; ${JSON.stringify(name.slice(0, 80))} is neither`); }
  if (url.protocol !== 'http:' && url.protocol !== 'https:' && !(url.protocol === 'file:' && location.protocol === 'file:')) {
    bad(`model: a folder URL must be http: or https:; ${JSON.stringify(url.protocol)} URLs are not fetched (${JSON.stringify(name.slice(0, 40))})`);
  }
  return url.href;
}

const models = new Map();        // key -> { promise, ready }: one per model on the page

/** The shared entry of a model: { promise, ready } (both resolve to, or hold, { code, model } once loaded). */
export function sharedModel({ name, key }) {
  let entry = models.get(key);
  if (!entry) {
    entry = { ready: null };
    entry.promise = load(name, key).then((loaded) => (entry.ready = loaded), (e) => {
      models.delete(key);        // the next render tries again
      throw e;
    });
    models.set(key, entry);
  }
  return entry;
}

async function load(name, key) {
  const code = await importModel().catch(problem);
  const shipped = SHIPPED.get(name);
  const model = await code.openModel(shipped ? { ...await shipped().catch(problem) } : key).catch(problem);
  return { code, model };
}

// an error of the model code (web/model/element-support.js: e.kind), or a script that did not load
function problem(e) { throw new Problem(e.kind ?? 'model', e.message, e.hint); }

/** The event detail: { model, ids, tokens, layer, head, weights }. */
export function modelAttention({ code, model }, m) {
  try { return { model: m.name, ...code.attentionOf(model, m) }; } catch (e) { return problem(e); }
}

/**
 * The one panel up to 256 tokens: the weights of the layer and head (causal but for an encoder's);
 * its <svg> carries data-model, -layer, -head, -ids. Over 256 tokens the element shows the model
 * code's canvas instead (element-support.js's largePanel: zoom, pan, hover, PNG).
 */
export function renderModelPanel(detail, decimals, lang, t, id) {
  const { tokens, layer, head } = detail;
  const svg = draw(detail.weights, {
    rowLabels: tokens, colLabels: tokens, lang, decimals, standalone: false, role: 'group', ...(detail.causal === false ? {} : { masked: 'causal' }),
    idPrefix: `${id}-w`, title: t.modelTitle(layer, head), activeCell: [0, 0],
  });
  const attrs = { 'data-model': detail.model, 'data-layer': layer, 'data-head': head, 'data-ids': JSON.stringify(detail.ids) };
  return { svgs: { heatmap: svg }, active: {}, sharing: false, attrs: { heatmap: attrs } };
}
