// parse.js - the element's attributes and properties, read and checked. Pure: a malformed value is
// a Problem (shown inside the element), never an uncaught error.

export const MATRICES = ['q', 'k', 'v', 'x', 'wq', 'wk', 'wv', 'wo'];
// model text ids layer head: from-model.js
export const ATTRIBUTES = ['tokens', ...MATRICES, 'seed', 'heads', 'causal', 'scale', 'decimals', 'lang', 'model', 'text', 'ids', 'layer', 'head'];
const MAX_SEED = Number.MAX_SAFE_INTEGER;
const MAX_HEADS = 256;

/** A problem shown inside the element. kind: 'input' | 'wasm' | 'rng', or 'model' (model="…": missing or broken files). */
export class Problem extends Error {
  // hint: { zh, en } under the message (default the strings' `${kind}Hint`; null for none)
  constructor(kind, message, hint) { super(message); this.name = 'AttentionHeatmapProblem'; this.kind = kind; this.hint = hint; }
}
export const bad = (message) => { throw new Problem('input', message); };
const show = (x) => (typeof x === 'string' ? JSON.stringify(x.length > 40 ? x.slice(0, 40) + '…' : x)
  : Array.isArray(x) ? 'an array' : x && typeof x === 'object' ? 'an object' : String(x));

/** Space-separated words, or a JSON array of strings (when it starts with "["); "" = no labels. */
export function parseTokens(value, from) {
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
export function parseMatrix(text, name) {
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

/** The scalar attributes as their getters read them (readInput reads them the same way). */
export const SCALARS = {
  scale: (text) => parseNumber(text, 'scale'),
  decimals: (text) => parseNumber(text, 'decimals', 10),
  seed: (text) => parseNumber(text, 'seed', MAX_SEED),
  heads: parseHeads,
};

export function parseLang(text) {
  const s = (text ?? '').trim().toLowerCase();
  if (s === '' || s === 'zh' || s.startsWith('zh-')) return 'zh';
  if (s === 'en' || s.startsWith('en-')) return 'en';
  return bad(`the lang attribute must be "zh" or "en"; received ${show(text)}`);
}

/**
 * Properties (d: tokens q k v x wq wk wv wo) and attributes (a(name) reads one) -> the checked
 * input; a Problem for anything malformed. Each attribute it reads is in ATTRIBUTES.
 */
export function readInput(a, d, causal) {
  const tokens = parseTokens(d.tokens ?? a('tokens'), d.tokens !== undefined ? 'the tokens property' : 'the tokens attribute');
  const [q, k, v, x, wq, wk, wv, wo] = MATRICES.map((n) => d[n] ?? parseMatrix(a(n), n));
  const seed = SCALARS.seed(a('seed'));
  const heads = SCALARS.heads(a('heads'));
  const scale = SCALARS.scale(a('scale'));
  const decimals = SCALARS.decimals(a('decimals')) ?? 2;
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
  return { tokens, q, k, v, x, wq, wk, wv, wo, seed, heads, scale, decimals, causal };
}
