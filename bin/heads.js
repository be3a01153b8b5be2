// heads.js - `attnmap heads`: every head's role scores (sink, previous token, induction, ...) from
// one forward with { heads } (no map kept), as the top heads per role, as JSON, or as an SVG grid
// of layers × heads (bin/attnmap.js hands the arguments over; docs/HEADS.md defines the scores).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { renderHeatmap } from '../web/heatmap/svg.js';
import { quote } from '../web/core/errors.js';

export const HEADS_USAGE = `Usage: attnmap heads MODEL (--text TEXT | --ids IDS | --induction S [--seed N]) [options]

Runs the checkpoint once and scores every head of every layer by what it looks at (docs/HEADS.md):
  sink       attention on the first token            previous   on the token before
  self       on the token itself                     next       on the token after (encoders)
  entropy    how spread each row is, in bits         distance   how far it looks, in tokens
  induction  on the token after the earlier copy of the current token      (--induction only)
  duplicate  on the earlier copy of the current token                      (--induction only)
Each is a mean over the rows (the first token's row, which can only look at itself, aside).
Prints the top heads of each role, highest first, as "L3 H5  0.912" (layer 3, head 5).
MODEL is what attnmap model takes: a checkpoint folder, ORG/NAME from the Hugging Face cache,
toy-zh, a .gguf file, ORG/NAME-GGUF (with --file), ollama:NAME[:TAG] or
lmstudio:PUBLISHER/REPO[/FILE.gguf].

Options:
  --text TEXT          the text, tokenised with the checkpoint's own tokenizer
  --ids IDS            token ids instead: comma-separated ("464,3797,15063") or a JSON array
  --induction S        a seeded random block of S token ids repeated twice (2·S tokens), and
                       the induction and duplicate scores: a head that copies what followed
                       the token last time looks from position i to i - S + 1
  --seed N             the block's seed, 0 to 4294967295 (default 0)
  --file NAME          with a GGUF repo (ORG/NAME-GGUF) or a folder: its .gguf file to read
  --top K              heads listed per role, 1 to 1000 (default 5)
  --json               print every score instead: { layers, heads, n, scores: { sink:
                       [[layer 0's heads], ...], ... } }, and with --induction repeat, seed
                       and the ids
  --svg FILE           also write the layers × heads grid, coloured by one score, as SVG
  --score NAME         the score the grid shows (default induction with --induction,
                       else previous)
  --lang zh|en         language of the grid's captions (default zh)
  -h, --help           show this help

Examples:
  attnmap heads toy-zh --text 我看见那只猫在吃鱼。
  attnmap heads ./SmolLM2-135M --induction 256 --svg induction.svg
  attnmap heads HuggingFaceTB/SmolLM2-135M --text "The cat sat on the mat" --json
`;

// the roles, in the order they are printed; induction and duplicate only with a repeat
export const ROLES = ['sink', 'previous', 'self', 'next', 'entropy', 'distance', 'induction', 'duplicate'];
const ABOUT = {
  sink: 'attention on the first token', previous: 'attention on the previous token', self: 'attention on the token itself',
  next: 'attention on the next token', entropy: 'bits of spread per row', distance: 'tokens between a row and where it looks',
  induction: 'attention on the token after the earlier copy', duplicate: 'attention on the earlier copy of the token',
};
const REPEAT_ONLY = ['induction', 'duplicate'];
const UNIT = ['sink', 'previous', 'self', 'next', 'induction', 'duplicate'];   // shares of a row, 0 to 1
const MAX_TOP = 1000;
const MAX_SEED = 0xffffffff;

const OPTIONS = {
  text: { type: 'string' }, ids: { type: 'string' }, induction: { type: 'string' }, seed: { type: 'string' },
  top: { type: 'string' }, json: { type: 'boolean' }, svg: { type: 'string' }, score: { type: 'string' },
  lang: { type: 'string' }, file: { type: 'string' }, help: { type: 'boolean', short: 'h' },
};

/** A whole number from lo to hi written in decimal digits, or a usage error naming the flag. */
function wholeArg(text, flag, lo, hi, usage) {
  const v = /^\d{1,10}$/.test(text) ? Number(text) : NaN;
  if (!(v >= lo && v <= hi)) usage(`${flag} must be a whole number from ${lo} to ${hi}; received ${quote(text)}`);
  return v;
}

/** The arguments, checked before the checkpoint is read. */
export function readArgs(argv, usage) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    usage(`${e.message.replace(/\s+/g, ' ').trim()} (see attnmap heads --help)`);
  }
  const { values: a, positionals } = parsed;
  if (a.help) return { help: true };
  if (positionals.length !== 1) usage(`expected one model: attnmap heads MODEL --text TEXT; received ${positionals.length === 0 ? 'none' : positionals.map((p) => quote(p)).join(', ')} (see attnmap heads --help)`);
  const inputs = ['text', 'ids', 'induction'].filter((k) => a[k] !== undefined);
  if (inputs.length !== 1) usage(`give one of --text TEXT, --ids IDS or --induction S${inputs.length ? `; received ${inputs.map((k) => `--${k}`).join(' and ')}` : ''}`);
  if (a.seed !== undefined && a.induction === undefined) usage('--seed goes with --induction S: it seeds the random block');
  if (a.score !== undefined && a.svg === undefined) usage('--score goes with --svg FILE: it names the score the grid shows');
  const repeat = a.induction === undefined ? 0 : wholeArg(a.induction, '--induction', 1, 1e6, usage);
  const score = a.score ?? (repeat ? 'induction' : 'previous');
  if (!ROLES.includes(score)) usage(`--score must be one of ${ROLES.join(', ')}; received ${quote(score)}`);
  if (REPEAT_ONLY.includes(score) && !repeat) usage(`--score ${score} needs --induction S: it is measured on a repeated block`);
  const lang = a.lang ?? 'zh';
  if (lang !== 'zh' && lang !== 'en') usage(`--lang must be zh or en; received ${quote(lang)}`);
  if (a.svg !== undefined) svgTarget(a.svg, usage);
  return {
    model: positionals[0], text: a.text, ids: a.ids, repeat, seed: a.seed === undefined ? 0 : wholeArg(a.seed, '--seed', 0, MAX_SEED, usage),
    top: a.top === undefined ? 5 : wholeArg(a.top, '--top', 1, MAX_TOP, usage), json: Boolean(a.json), svg: a.svg, score, lang,
    file: a.file,
  };
}

/**
 * attnmap heads ...: the output text (the SVG, when asked, is written to its file first).
 * cli: bin/attnmap.js's usage(message), which throws; or throws an AttentionError.
 */
export async function runHeads(argv, { usage }) {
  const args = readArgs(argv, usage);
  if (args.help) return HEADS_USAGE;
  const { loadModel } = await import('../web/model/model-node.js');
  const { progressBar } = await import('./progress.js');
  const model = await loadModel(args.model, { onProgress: progressBar(process.stderr), ...(args.file === undefined ? {} : { file: args.file }) });
  try {
    const { ids, tokenTypes } = inputIds(model, args, usage);
    const heads = args.repeat ? { repeat: args.repeat } : true;
    // an encoder has no LM head to skip; a decoder's logits are not read here
    const options = model.config.encoder ? { heads, ...(tokenTypes ? { tokenTypes } : {}) } : { heads, logits: false };
    const scores = model.forward(ids, options).heads;
    const n = ids.length;
    if (args.svg !== undefined) writeSvg(args.svg, gridSvg(scores, args, n), usage);
    return args.json ? scoresJson(scores, ids, args) : scoresText(scores, n, args, model.config);
  } finally {
    model.dispose();
  }
}

// the token ids of --text, --ids or --induction, checked against the model (ids below vocab_size,
// at least 2 tokens, and no more than its context)
function inputIds(model, args, usage) {
  const { vocab_size: V, n_positions: ctx } = model.config;
  let ids, tokenTypes = null;
  if (args.repeat) {
    if (2 * args.repeat > ctx) usage(`--induction ${args.repeat} makes ${2 * args.repeat} tokens; this model reads at most ${ctx}: use --induction ${Math.floor(ctx / 2)} or less`);
    ids = inductionIds(args.repeat, args.seed, model, usage);
  } else if (args.ids !== undefined) {
    ids = idsArg(args.ids, V, usage);
  } else {
    const e = model.encode(args.text);
    ({ ids, tokenTypes } = Array.isArray(e) ? { ids: e, tokenTypes: null } : e);
  }
  if (ids.length < 2) usage(`${ids.length} token${ids.length === 1 ? '' : 's'}: the scores need at least 2 (the first token's row can only look at itself)`);
  if (ids.length > ctx) usage(`${ids.length} tokens; this model reads at most ${ctx} (its n_positions): use a shorter input`);
  return { ids, tokenTypes };
}

/** --ids: comma-separated ids or a JSON array of them, each below vocab_size. */
function idsArg(text, V, usage) {
  const example = 'comma-separated token ids such as 464,3797 or a JSON array such as [464,3797]';
  let ids;
  if (text.trim().startsWith('[')) {
    try { ids = JSON.parse(text); } catch (e) { usage(`--ids is not valid JSON (${e.message}): expected ${example}`); }
    if (!Array.isArray(ids) || !ids.every((id) => Number.isInteger(id) && id >= 0)) usage(`--ids must be ${example}; received ${quote(text)}`);
  } else {
    ids = text.split(',').map((s) => (/^\s*\d{1,9}\s*$/.test(s) ? Number(s) : NaN));
    if (ids.some(Number.isNaN)) usage(`--ids must be ${example}; received ${quote(text)}`);
  }
  const bad = ids.find((id) => id >= V);
  if (bad !== undefined) usage(`--ids: ${bad} is not a token id of this model (vocab_size = ${V}: ids 0 to ${V - 1})`);
  return ids;
}

// SplitMix32 (as web/model/sample.js's generate draws): uniform numbers in [0, 1), 32 bits each
function splitmix32(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return ((z ^ (z >>> 16)) >>> 0) / 2 ** 32;
  };
}

/**
 * The ids an induction block may use: in a large vocabulary ids 1,000 to 19,999 (ordinary tokens:
 * the special ones sit at the start, as BERT's [CLS] 101 and SmolLM2's 0-16, or at the end, as
 * GPT-2's 50256 and Qwen's 151643+); in a small one (under 2,000, a toy's) every id but those
 * config.json names (bos, eos, pad, ...) and tokens spelt like special ones ([PAD], <s>).
 */
export function blockPool(model) {
  const V = model.config.vocab_size;
  if (V >= 2000) return { lo: 1000, hi: Math.min(V, 20000), skip: new Set() };
  const raw = model.config.raw ?? {};
  const named = Object.keys(raw).filter((k) => k.endsWith('_token_id')).flatMap((k) => raw[k]).filter(Number.isInteger);
  const skip = new Set(named);
  if (model.tokenizer) {
    for (let id = 0; id < V; id++) {
      let t = null;
      try { [t] = model.tokens([id]); } catch { /* an id the tokenizer lacks: unusable as text, kept out */ skip.add(id); }
      if (t !== null && /^\[[^\]]*\]$|^<[^>]*>$/.test(t)) skip.add(id);
    }
  }
  return { lo: 0, hi: V, skip };
}

/**
 * A block of S distinct ids drawn from blockPool with SplitMix32(seed), then the block again:
 * 2·S ids. Distinct, so that each token's earlier copy is the one a period S back.
 */
export function inductionIds(S, seed, model, usage) {
  const { lo, hi, skip } = blockPool(model);
  const pool = [];
  for (let id = lo; id < hi; id++) if (!skip.has(id)) pool.push(id);
  if (S > pool.length) usage(`--induction ${S}: this model has ${pool.length} ordinary token ids to draw from; use --induction ${pool.length} or less`);
  const random = splitmix32(seed);
  for (let k = 0; k < S; k++) {   // a partial Fisher-Yates shuffle: the first S are the block
    const j = k + Math.floor(random() * (pool.length - k));
    [pool[k], pool[j]] = [pool[j], pool[k]];
  }
  const block = pool.slice(0, S);
  return [...block, ...block];
}

// a float32 score as the shortest decimal that reads back as the same float32 (9 digits suffice)
const f32 = (x) => Number(x.toPrecision(9));

// the roles the forward returned (induction and duplicate only with a repeat)
const present = (scores) => ROLES.filter((r) => scores[r] !== undefined);

/** --json: every score per layer and head; with --induction the block's ids, to run them again. */
function scoresJson(scores, ids, args) {
  const { layers: L, heads: H } = scores;
  const out = { layers: L, heads: H, n: ids.length, ...(args.repeat ? { repeat: args.repeat, seed: args.seed, ids } : {}), scores: {} };
  for (const role of present(scores)) {
    out.scores[role] = Array.from({ length: L }, (_, l) => Array.from(scores[role].subarray(l * H, (l + 1) * H), f32));
  }
  return `${JSON.stringify(out)}\n`;
}

/** The top heads of one score, highest first (the lower layer, then the lower head, on a tie). */
export function ranked(values, H) {
  return Array.from(values, (v, p) => ({ l: Math.floor(p / H), h: p % H, v })).sort((a, b) => b.v - a.v || a.l - b.l || a.h - b.h);
}

/** The listing: a line on the run, then per role its top heads, one a line. */
function scoresText(scores, n, args, config) {
  const { layers: L, heads: H } = scores;
  const input = args.repeat ? `, a random block of ${args.repeat} tokens (seed ${args.seed}) repeated twice` : '';
  const lines = [`${L} layers × ${H} heads, ${n} tokens${input}`];
  for (const role of present(scores)) {
    if (role === 'next' && !config.encoder) { lines.push('next: 0 in a decoder (no token sees a later one)'); continue; }
    lines.push(`${role}: ${ABOUT[role]}`);
    for (const { l, h, v } of ranked(scores[role], H).slice(0, args.top)) lines.push(`  L${l} H${h}  ${v.toFixed(3)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** --svg: the layers × heads grid of one score (rows = layers, columns = heads). */
function gridSvg(scores, args, n) {
  const { layers: L, heads: H } = scores;
  const title = `${args.score} · ${L} layers × ${H} heads · ${n} tokens`;
  // shares of a row keep the 0-to-1 scale, so that grids compare; bits and tokens take their range
  return renderHeatmap({ data: scores[args.score], shape: [L, H] }, {
    rowLabels: Array.from({ length: L }, (_, l) => `L${l}`), colLabels: Array.from({ length: H }, (_, h) => `H${h}`),
    title, lang: args.lang, decimals: args.score === 'distance' ? 1 : 2, standalone: true,
    colourScale: UNIT.includes(args.score) ? 'unit' : 'data',
    rowCaption: args.lang === 'zh' ? '层' : 'layer', colCaption: args.lang === 'zh' ? '头' : 'head',
  });
}

// --svg FILE, checked before the model runs (minutes, on a long input): a file name in a folder
// that exists; writeSvg still says why when the write itself fails
function svgTarget(file, usage) {
  if (file === '') usage('--svg needs a file name');
  let dir = null;
  try { dir = fs.statSync(path.dirname(path.resolve(file))); } catch { /* missing: said below */ }
  if (!dir?.isDirectory()) usage(`--svg ${quote(file)}: the folder ${quote(path.dirname(file))} does not exist`);
  if (fs.statSync(file, { throwIfNoEntry: false })?.isDirectory()) usage(`--svg ${quote(file)} is a folder: give a file name`);
}

// the SVG to its file; a path that cannot be written is the user's to fix
function writeSvg(file, svg, usage) {
  try {
    fs.writeFileSync(file, svg);
  } catch (e) {
    if (['ENOENT', 'EISDIR', 'ENOTDIR', 'EACCES', 'EROFS', 'EPERM'].includes(e.code)) usage(`--svg ${quote(file)}: cannot write it (${e.code})`);
    throw e;
  }
}
