#!/usr/bin/env node
// attnmap - compute attention weights with the WebAssembly core and write them as an SVG heatmap.
//
//   attnmap svg --tokens "猫 吃 鱼" --q '[[...]]' --k '[[...]]' > heatmap.svg
//   attnmap model ./gpt2 --text "The cat ate the fish" --layer 5 --head 1 > head.svg   (bin/model.js)
//   attnmap heads ./SmolLM2-135M --induction 256 --svg induction.svg   every head's role scores (bin/heads.js)
//   attnmap --version
//
// Exit status: 0 success, 2 usage error or bad input, 1 anything else. Errors are one line on
// stderr, "attnmap: <message>", never a stack trace (set ATTNMAP_DEBUG=1 to see one).
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { renderHeatmap } from '../web/heatmap/heatmap.js';

const USAGE = `Usage: attnmap svg --q JSON --k JSON [options] > heatmap.svg
       attnmap model FOLDER|ORG/NAME --text TEXT [options] > heatmap.svg   (see attnmap model --help)
       attnmap heads MODEL (--text T | --ids IDS | --induction S) [options]   every head's
                                         role scores (see attnmap heads --help)
       attnmap cache                     the Hugging Face cache's models attnmap can load

Computes the attention weights softmax(q·kᵀ · scale) with the WebAssembly core and writes
them to stdout as a standalone SVG heatmap: rows are queries (who is looking), columns are
keys (who is looked at).

Options:
  --tokens TOKENS      labels: space-separated words ("猫 吃 鱼") or a JSON array of
                       strings ('["猫","吃","鱼"]'), one per query row; they also label
                       the keys unless --key-tokens is given (default: 0, 1, 2, ...)
  --key-tokens TOKENS  labels for the keys, when there are not as many keys as queries
  --q JSON             queries, shape (n, d_k), a JSON array of rows: '[[1,0.2],[0.3,0.8]]'
  --k JSON             keys, shape (m, d_k)
  --v JSON             values, shape (m, d_v); default: the keys (--v = --k). The weights
                       do not depend on v; it is checked and passed to the core
  --causal             query i may only look at keys j <= i; masked cells are hatched
  --scale NUMBER       multiply q·kᵀ by this before the softmax (default 1/√d_k)
  --lang zh|en         language of the captions (default zh)
  --decimals N         decimals printed in each cell, 0 to 10 (default 2)
  --title TEXT         title above the heatmap
  --max-bytes N        refuse to write an SVG larger than N bytes (default and at most
                       33554432, 32 MiB)
  -h, --help           show this help
  -v, --version        print the version of attnmap and exit

Budgets: at most 65536 cells (256×256) and 16384 characters of tokens (--tokens and
--key-tokens together), checked before anything is computed, and 32 MiB of SVG; over
any of them nothing is written (exit 2).

Example (EP05 section 5, 猫吃鱼, d_k = 4):
  attnmap svg --tokens "猫 吃 鱼" \\
    --q '[[1.0,0.2,0.1,0.0],[0.3,0.8,0.2,0.1],[0.1,0.1,0.9,0.3]]' \\
    --k '[[0.9,0.1,0.0,0.2],[0.2,0.7,0.3,0.0],[0.0,0.2,1.0,0.1]]' > heatmap.svg

Exit status: 0 on success, 2 for a usage error, bad input or a budget exceeded, 1 for
anything else (e.g. stdout cannot be written).
`;

// Budgets (a few words and milliseconds of input must not make minutes and gigabytes of output):
const MAX_CELLS = 65536;              // as the renderer: one 256×256 heatmap
const MAX_LABEL_CHARS = 16384;        // all tokens together, as <attention-heatmap> allows
const MAX_BYTES = 32 * 1024 * 1024;   // the SVG written to stdout

/** An error that is the user's to fix: printed as one line, exit status 2. */
class UsageError extends Error {}
const usage = (message) => { throw new UsageError(message); };

const OPTIONS = {
  tokens: { type: 'string' },
  'key-tokens': { type: 'string' },
  q: { type: 'string' },
  k: { type: 'string' },
  v: { type: 'string' },
  causal: { type: 'boolean' },
  scale: { type: 'string' },
  lang: { type: 'string' },
  decimals: { type: 'string' },
  title: { type: 'string' },
  'max-bytes': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
};

/** The installed package's version: package.json is next to bin/ in the repository and in the tarball. */
const version = () => JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

function parse(argv) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    usage(`${e.message.replace(/\s+/g, ' ').trim()} (see attnmap --help)`);
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  if (values.version) return { version: true };
  if (positionals.length === 0) usage('missing command: expected "attnmap svg --q JSON --k JSON" (see attnmap --help)');
  if (positionals[0] !== 'svg') usage(`unknown command ${JSON.stringify(positionals[0])}: expected "svg", "model", "heads" or "cache" (see attnmap --help)`);
  if (positionals.length > 1) {
    usage(`unexpected argument ${JSON.stringify(positionals[1])}: values go after an option, e.g. --q '[[1,0]]' (see attnmap --help)`);
  }
  return values;
}

/** A JSON matrix argument: a non-empty array of equally long arrays of finite numbers. */
function matrixArg(text, flag) {
  const example = 'a JSON array of rows such as [[1,0.2],[0.3,0.8]]';
  if (text === undefined) usage(`${flag} is required: ${example}`);
  let m;
  try {
    m = JSON.parse(text);
  } catch (e) {
    usage(`${flag} is not valid JSON (${e.message}): expected ${example}`);
  }
  if (!Array.isArray(m) || m.length === 0) usage(`${flag} must be ${example}; received ${describe(m)}`);
  if (!m.every(Array.isArray)) {
    const i = m.findIndex((r) => !Array.isArray(r));
    usage(`${flag} must be ${example}; ${flag}[${i}] is ${describe(m[i])}` +
      (typeof m[i] === 'number' ? ` (for one row write [[${m.join(',')}]])` : ''));
  }
  const width = m[0].length;
  if (width === 0) usage(`${flag}[0] is empty: each row needs at least one number`);
  m.forEach((row, i) => {
    if (row.length !== width) usage(`${flag} is ragged: ${flag}[0] has ${width} numbers but ${flag}[${i}] has ${row.length}`);
    row.forEach((x, j) => {
      if (typeof x !== 'number') usage(`${flag}[${i}][${j}] must be a number; received ${describe(x)}`);
      if (!Number.isFinite(x)) usage(`${flag}[${i}][${j}] is ${x} (too large for a number): values must be finite`);
    });
  });
  return m;
}

function tokensArg(text, flag) {
  if (text === undefined) return undefined;
  if (text.trim().startsWith('[')) {
    let t;
    try {
      t = JSON.parse(text);
    } catch (e) {
      usage(`${flag} looks like JSON but is not valid (${e.message}): expected ["猫","吃","鱼"] or space-separated words`);
    }
    if (!Array.isArray(t) || !t.every((s) => typeof s === 'string')) {
      usage(`${flag} must be a JSON array of strings such as ["猫","吃","鱼"]; received ${describe(t)}`);
    }
    return t;
  }
  const t = text.trim().split(/\s+/).filter(Boolean);
  return t;
}

function describe(x) {
  if (x === null) return 'null';
  if (Array.isArray(x)) return `an array of length ${x.length}`;
  if (typeof x === 'object') return 'an object';
  if (typeof x === 'string') return `the string ${JSON.stringify(x.length > 40 ? x.slice(0, 40) + '…' : x)}`;
  return `${typeof x} ${String(x)}`;
}

const plural = (k, one, many) => `${k} ${k === 1 ? one : many}`;

async function main(argv) {
  if (argv[0] === 'model') return runModelCommand(argv.slice(1));
  if (argv[0] === 'cache') return runCacheCommand(argv.slice(1));
  if (argv[0] === 'heads') return runHeadsCommand(argv.slice(1));
  const args = parse(argv);
  if (args.help) { process.stdout.write(USAGE); return 0; }
  if (args.version) { process.stdout.write(`${version()}\n`); return 0; }
  // every argument is checked, and the budgets, before the core is loaded
  const { q, k, v } = readMatrices(args);
  const opts = readOptions(args);
  const n = q.length, m = k.length;
  if (n * m > MAX_CELLS) {
    usage(`--q has ${n} rows and --k ${m}: ${n * m} cells; the budget is ${MAX_CELLS} cells (256×256): use fewer tokens`);
  }
  const labels = readLabels(args, n, m);
  const weights = await attentionWeights(q, k, v, { causal: Boolean(args.causal), scale: opts.scale });
  const svg = heatmapSvg(weights, labels, args, opts);
  process.stdout.write(svg);
  return 0;
}

/** --q, --k, --v (v defaults to k) as rows, with their shapes checked against each other. */
function readMatrices(args) {
  const q = matrixArg(args.q, '--q');
  const k = matrixArg(args.k, '--k');
  const v = args.v === undefined ? k : matrixArg(args.v, '--v');
  const n = q.length, m = k.length, dk = q[0].length;
  if (k[0].length !== dk) {
    usage(`--k has rows of ${plural(k[0].length, 'number', 'numbers')} but --q has rows of ${dk}: ` +
      `q (n, d_k) and k (m, d_k) must have the same width d_k; received q (${n}, ${dk}), k (${m}, ${k[0].length})`);
  }
  if (v.length !== m) {
    usage(`--v has ${plural(v.length, 'row', 'rows')} but --k has ${m}: v (m, d_v) needs one row per key; ` +
      `received k (${m}, ${dk}), v (${v.length}, ${v[0].length})`);
  }
  return { q, k, v };
}

/** --scale, --lang, --decimals, --max-bytes. */
function readOptions(args) {
  let scale;
  if (args.scale !== undefined) {
    scale = Number(args.scale);
    if (args.scale.trim() === '' || !Number.isFinite(scale)) usage(`--scale must be a number such as 0.5; received ${JSON.stringify(args.scale)}`);
  }
  const lang = args.lang ?? 'zh';
  if (lang !== 'zh' && lang !== 'en') usage(`--lang must be zh or en; received ${JSON.stringify(lang)}`);
  let decimals = 2;
  if (args.decimals !== undefined) {
    decimals = /^\d{1,2}$/.test(args.decimals) ? Number(args.decimals) : NaN;
    if (!(decimals <= 10)) usage(`--decimals must be a whole number from 0 to 10; received ${JSON.stringify(args.decimals)}`);
  }
  return { scale, lang, decimals, maxBytes: maxBytesArg(args['max-bytes']) };
}

/** --max-bytes (of every command that writes): MAX_BYTES when absent. */
function maxBytesArg(text) {
  if (text === undefined) return MAX_BYTES;
  const maxBytes = /^\d{1,9}$/.test(text) ? Number(text) : NaN;
  if (!(maxBytes >= 1 && maxBytes <= MAX_BYTES)) usage(`--max-bytes must be a whole number from 1 to ${MAX_BYTES}; received ${JSON.stringify(text)}`);
  return maxBytes;
}

/** out, if it is within the output budget; else a usage error (nothing is written): "the SVG would be N bytes; ..." */
function budget(out, maxBytes, what, advice) {
  const bytes = Buffer.byteLength(out);
  if (bytes > maxBytes) {
    usage(`${what} would be ${bytes} bytes; the output budget is ${maxBytes} bytes${maxBytes === MAX_BYTES ? ' (32 MiB)' : ' (--max-bytes)'}: ${advice}`);
  }
  return out;
}

/** --tokens and --key-tokens: one per query row and one per key row; --tokens alone labels both when n = m. */
function readLabels(args, n, m) {
  const rowLabels = tokensArg(args.tokens, '--tokens');
  const colLabels = tokensArg(args['key-tokens'], '--key-tokens');
  const chars = [rowLabels, colLabels].reduce((sum, list) => sum + (list ?? []).reduce((s, t) => s + t.length, 0), 0);
  if (chars > MAX_LABEL_CHARS) {
    usage(`the tokens have ${chars} characters${colLabels ? ' (--tokens and --key-tokens)' : ''}; the budget is ${MAX_LABEL_CHARS} characters: shorten them`);
  }
  if (rowLabels && rowLabels.length !== n) {
    usage(`--tokens has ${plural(rowLabels.length, 'token', 'tokens')} but --q has ${plural(n, 'row', 'rows')}: ` +
      'give one token per query row' + (rowLabels.length === 1 && n > 1 ? ' (separate tokens with spaces: "猫 吃 鱼")' : ''));
  }
  if (colLabels) {
    if (colLabels.length !== m) {
      usage(`--key-tokens has ${plural(colLabels.length, 'token', 'tokens')} but --k has ${plural(m, 'row', 'rows')}: give one token per key row`);
    }
    return { rowLabels, colLabels };
  }
  if (rowLabels && m !== n) {
    usage(`--k has ${plural(m, 'row', 'rows')} but --q has ${n}, so --tokens cannot label both: give --key-tokens with ${m} labels for the keys`);
  }
  return { rowLabels, colLabels: rowLabels };
}

/** The weights from the core, loaded only now (so --help and argument errors work without it). */
async function attentionWeights(q, k, v, options) {
  const { createAttention, AttentionError } = await import('../web/core/attention.js');
  try {
    const attn = await createAttention();
    return attn.attention({ q, k, v }, { ...options, weights: true }).weights;
  } catch (e) {
    // bad input (INVALID_ARGUMENT, SHAPE_MISMATCH, NON_FINITE, TOO_LARGE) is the user's to fix
    if (e instanceof AttentionError && e.code !== 'OUT_OF_MEMORY') throw new UsageError(e.message);
    throw e;
  }
}

/** The standalone SVG, within the output budget. */
function heatmapSvg(weights, { rowLabels, colLabels }, args, { lang, decimals, maxBytes }) {
  let svg;
  try {
    svg = renderHeatmap(weights, {
      rowLabels, colLabels, masked: args.causal ? 'causal' : undefined, lang, decimals, standalone: true,
      ...(args.title !== undefined ? { title: args.title } : {}),
    });
  } catch (e) {
    // e.g. more cells than a heatmap can hold
    if (e instanceof RangeError || e instanceof TypeError) throw new UsageError(e.message.replace(/^renderHeatmap: /, ''));
    throw e;
  }
  return budget(svg, maxBytes, 'the SVG', 'use fewer or shorter tokens');
}

// attnmap cache: bin/cache.js
async function runCacheCommand(argv) {
  const { runCache } = await import('./cache.js');
  process.stdout.write(await runCache(argv, { usage }));
  return 0;
}

// attnmap heads MODEL ...: bin/heads.js (loaded only for this command); errors as attnmap model's
async function runHeadsCommand(argv) {
  const { runHeads } = await import('./heads.js');
  let out;
  try {
    out = await runHeads(argv, { usage });
  } catch (e) {
    if (e?.name === 'AttentionError' && e.code !== 'OUT_OF_MEMORY') throw new UsageError(e.message);
    throw e;
  }
  process.stdout.write(out);
  return 0;
}

// attnmap model FOLDER ...: bin/model.js (loaded only for this command)
async function runModelCommand(argv) {
  const { runModel } = await import('./model.js');
  let out;
  try {
    out = await runModel(argv, { usage, maxBytesArg, budget });
  } catch (e) {
    // a bad checkpoint, text or id is the user's to fix
    if (e?.name === 'AttentionError' && e.code !== 'OUT_OF_MEMORY') throw new UsageError(e.message);
    throw e;
  }
  process.stdout.write(out);
  return 0;
}

// stdout cannot take the output (a full disk: ENOSPC; the reader went away: EPIPE): one line, exit 1
process.stdout.on('error', (e) => {
  if (process.env.ATTNMAP_DEBUG) console.error(e);
  const why = { EPIPE: 'the reader closed the pipe', ENOSPC: 'no space left on the device' }[e.code] ?? e.message;
  process.stderr.write(`attnmap: cannot write to stdout: ${e.code ? `${e.code}: ` : ''}${why}\n`);
  process.exit(1);
});

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  if (process.env.ATTNMAP_DEBUG) console.error(e);
  const message = String(e?.message ?? e).replace(/\s*\n\s*/g, ' ');
  if (e instanceof UsageError) {
    process.stderr.write(`attnmap: ${message}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`attnmap: ${e?.code ? `${e.code}: ` : ''}${message}\n`);
    process.exitCode = 1;
  }
}
