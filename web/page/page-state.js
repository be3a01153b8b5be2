// page-state.js - the page's state and its URL hash. Pure functions: no DOM, testable in Node.
//
//   #t=猫&t=吃&t=鱼&seed=0&dk=8&causal=0&heads=2&lang=zh    (the default)
//   ...&x=0.5,-1,...;...                                     (X edited by the reader: n rows of D_MODEL)
//
// parseHash never throws: every field is checked on its own, and a field that is missing or
// malformed takes its default, so a mangled link still opens a working page.

export const D_MODEL = 8;                 // the episode: d_model = 8
export const MAX_TOKENS = 16;
export const MAX_TOKEN_CHARS = 24;        // code points; the heatmap cuts labels at ~10em anyway
export const DK_CHOICES = Object.freeze([2, 4, 8, 16, 32, 64]);
export const HEAD_CHOICES = Object.freeze([1, 2, 4, 8]);   // the divisors of D_MODEL (episode 06)
export const MAX_SEED = 0xffffffff;       // integers 0 … 2³²−1
export const LANGS = Object.freeze(['zh', 'en']);
// issue 14: where X comes from, the heatmap's colour scale and its temperature (web/page/page-pe.js,
// page-scale.js). Written to the hash only when they differ from the default, so the default link
// is the article's.
export const INPUTS = Object.freeze(['randn', 'embed']);       // X = torch.randn, or E[token] + PE
export const COLOUR_SCALES = Object.freeze(['unit', 'data', 'log']);
export const TEMPERATURES = Object.freeze([0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 10]);

export const DEFAULT_STATE = Object.freeze({
  tokens: Object.freeze(['猫', '吃', '鱼']),
  seed: 0,
  dk: 8,
  causal: false,
  heads: 2,         // the episode-06 section: multi-head attention with d_head = D_MODEL / heads
  x: null,          // null: X = torch.randn(n, d_model) from the seed; else number[n][D_MODEL]
  lang: 'zh',
  input: 'randn',   // 'embed': X = E[token] + PE(position) (page-pe.js); pe: with the PE term
  pe: true,
  temp: 1,          // the main heatmap's temperature: softmax(QKᵀ / (T·√d_k))
  colour: 'unit',   // its colour scale: 0–1, the data's range, or log (see colourSet)
  // colourSet: true when the reader chose colour (from the hash, or a click that differs from the
  // map's default); else the map picks its own default (page-scale.js defaultScale)
});

export const defaultState = () => ({ ...DEFAULT_STATE, tokens: [...DEFAULT_STATE.tokens] });

const FLT_MAX = 3.4028234663852886e38;
// C0 and C1 controls, DEL, lone surrogates, U+FFFE/FFFF: never part of a token.
// eslint-disable-next-line no-control-regex -- control characters are what this finds
const BAD_CHAR = /[\u0000-\u001f\u007f-\u009f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

/**
 * Split the reader's text into tokens (separated by whitespace).
 * Returns { tokens } or { error: 'empty' | 'tooMany' | 'tooLong' | 'badChar', count, token }.
 */
export function splitTokens(text) {
  const tokens = String(text).trim().split(/\s+/u).filter(Boolean);
  if (tokens.length === 0) return { error: 'empty', count: 0 };
  if (tokens.length > MAX_TOKENS) return { error: 'tooMany', count: tokens.length };
  for (const t of tokens) {
    if (BAD_CHAR.test(t)) return { error: 'badChar', count: tokens.length, token: t };
    if ([...t].length > MAX_TOKEN_CHARS) return { error: 'tooLong', count: tokens.length, token: t };
  }
  return { tokens };
}

/** The shortest decimal that reads back as the same float32. */
export function shortestFloat32(v) {
  const f = Math.fround(v);
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  for (let p = 1; p <= 9; p++) {
    const s = Number(f.toPrecision(p));
    if (Math.fround(s) === f) return String(s);
  }
  return String(f);
}

/** Parse one number of X as the page accepts it: a plain decimal, finite, inside float32. */
export function parseNumber(s) {
  s = String(s).trim().replace(/\u2212/g, '-');   // accept a typographic minus
  if (!NUMBER.test(s)) return NaN;
  return Number(s);
}

function parseX(text, n) {
  const rows = text.split(';');
  if (rows.length !== n) return null;
  const x = [];
  for (const row of rows) {
    const cells = row.split(',');
    if (cells.length !== D_MODEL) return null;
    const r = [];
    for (const c of cells) {
      const v = parseNumber(c);
      if (!(Math.abs(v) <= FLT_MAX)) return null;
      r.push(Math.fround(v));
    }
    x.push(r);
  }
  return x;
}

/** The state a hash describes; defaults for whatever is missing or malformed. Never throws. */
export function parseHash(hash) {
  const state = defaultState();
  let p;
  try {
    p = new URLSearchParams(String(hash ?? '').replace(/^#/, ''));
  } catch {
    return state;
  }
  const get = (k) => { const v = p.get(k); return v === null ? null : v; };

  const ts = p.getAll('t');
  if (ts.length) {
    const r = splitTokens(ts.join(' '));
    // a token with whitespace inside would split differently: reject the whole list
    if (r.tokens && r.tokens.length === ts.length) state.tokens = r.tokens;
  }
  const seed = get('seed');
  if (seed !== null && /^\d{1,10}$/.test(seed) && Number(seed) <= MAX_SEED) state.seed = Number(seed);
  const dk = get('dk');
  if (dk !== null && /^\d{1,3}$/.test(dk) && DK_CHOICES.includes(Number(dk))) state.dk = Number(dk);
  const causal = get('causal');
  if (causal === '1' || causal === 'true') state.causal = true;
  const heads = get('heads');
  if (heads !== null && /^\d$/.test(heads) && HEAD_CHOICES.includes(Number(heads))) state.heads = Number(heads);
  const lang = get('lang');
  if (LANGS.includes(lang)) state.lang = lang;
  const x = get('x');
  if (x !== null && x.length < 20000) state.x = parseX(x, state.tokens.length);
  parseTeach(get, state);
  return state;
}

/** The hash (without '#') that parseHash turns back into this state. */
export function formatHash(state) {
  const p = new URLSearchParams();
  for (const t of state.tokens) p.append('t', t);
  p.set('seed', String(state.seed));
  p.set('dk', String(state.dk));
  p.set('causal', state.causal ? '1' : '0');
  p.set('heads', String(state.heads ?? DEFAULT_STATE.heads));
  if (state.x) p.set('x', state.x.map((r) => r.map(shortestFloat32).join(',')).join(';'));
  formatTeach(p, state);
  p.set('lang', state.lang);
  // URLSearchParams writes spaces as '+', commas and semicolons as %2C / %3B: keep the
  // separators of x readable (they are not special inside a fragment).
  return p.toString().replace(/%2C/g, ',').replace(/%3B/g, ';');
}

/** input=embed&pe=0|1, temp=T (one of TEMPERATURES), colour=data|log; anything else: the default. */
function parseTeach(get, state) {
  if (get('input') === 'embed') state.input = 'embed';
  if (get('pe') === '0') state.pe = false;
  const temp = get('temp');
  if (temp !== null && /^\d{1,2}(\.\d{1,2})?$/.test(temp) && TEMPERATURES.includes(Number(temp))) state.temp = Number(temp);
  const colour = get('colour');
  if (COLOUR_SCALES.includes(colour)) { state.colour = colour; state.colourSet = true; }   // the reader's choice wins over the map's default (page-scale.js)
}

function formatTeach(p, state) {
  if (state.input === 'embed') { p.set('input', 'embed'); p.set('pe', state.pe === false ? '0' : '1'); }
  if (state.temp !== undefined && state.temp !== 1) p.set('temp', String(state.temp));
  if (state.colour && (state.colour !== 'unit' || state.colourSet)) p.set('colour', state.colour);
}

/** The seed from the number input ("7", or "7e0" as number inputs allow): an integer 0 … MAX_SEED, else null. */
export function parseSeed(text) {
  const s = String(text).trim();
  if (!/^[0-9.e+]+$/i.test(s)) return null;
  const v = Number(s);
  return Number.isInteger(v) && v >= 0 && v <= MAX_SEED ? v : null;
}

// ------------------------------------------------------------------------------------------------
// what a link asked for and did not get (issue 14): the page says so instead of silently resetting

const KNOWN_KEYS = ['t', 'seed', 'dk', 'causal', 'heads', 'lang', 'x', 'input', 'pe', 'temp', 'colour'];
const shown = (s) => { const cps = [...String(s)]; return cps.length > 24 ? cps.slice(0, 23).join('') + '…' : cps.join(''); };

/**
 * The fields of a hash that parseHash ignored, in order: [{ field, reason, count?, value?, rows? }].
 * field: 't' | 'seed' | 'dk' | 'causal' | 'heads' | 'lang' | 'x' | 'unknown'. value is the link's
 * own text cut to 24 code points: user input, for textContent only. Never throws.
 */
export function hashProblems(hash, state = parseHash(hash)) {
  let p;
  try {
    p = new URLSearchParams(String(hash ?? '').replace(/^#/, ''));
  } catch {
    return [];
  }
  const out = [];
  const ts = p.getAll('t');
  if (ts.length && JSON.stringify(ts) !== JSON.stringify(state.tokens)) {
    const r = splitTokens(ts.join(' '));
    out.push({ field: 't', reason: r.error ?? 'space', count: ts.length, value: shown(r.token ?? ts.find((t) => /\s/u.test(t)) ?? '') });
  }
  const check = (key, ok) => {
    const v = p.get(key);
    if (v !== null && !ok(v)) out.push({ field: key, value: shown(v) });
  };
  check('seed', (v) => String(state.seed) === v.replace(/^0+(?=\d)/, ''));
  check('dk', (v) => String(state.dk) === v);
  check('causal', (v) => ['0', '1', 'true', 'false'].includes(v));
  check('heads', (v) => String(state.heads) === v);
  check('lang', (v) => state.lang === v);
  const x = p.get('x');
  if (x !== null && !state.x) {
    const rows = x.split(';');
    const reason = x.length >= 20000 ? 'long'
      : rows.length !== state.tokens.length || rows.some((r) => r.split(',').length !== D_MODEL) ? 'shape' : 'value';
    out.push({ field: 'x', reason, rows: state.tokens.length, count: rows.length });
  }
  const unknown = [...new Set([...p.keys()].filter((k) => k && !KNOWN_KEYS.includes(k)))];
  if (unknown.length) out.push({ field: 'unknown', value: unknown.slice(0, 3).map(shown).join(', ') + (unknown.length > 3 ? ', …' : '') });
  return out;
}
