// sizes.js - the file sizes quoted in the docs, measured from the files, written between markers.
//
//   node scripts/sizes.js           rewrite every marked size in README.md and docs/*.md
//   node scripts/sizes.js --check   change nothing; exit 1 when a marked size is stale, a marker
//                                   names an unknown size, or a size is quoted without a marker
//
// A size in the docs is written as <!-- size:KEY -->26.0 KiB<!-- /size --> (the comment is
// invisible on a rendered page). KEY is a file's name below, optionally followed by -gz (gzip
// level 9, as the embed's size test and a server measure it) and/or -bytes (exact bytes instead
// of KiB), or one of the embed's two limits, read from scripts/build-embed.js:
//   wasm, wasm-gz, relaxed-gz-bytes, embed-gz, embed-gz-bytes, ...   embed-budget, embed-target
// Nothing here knows a size: the files are read every time (web/dist/attention-heatmap.min.js
// in particular changes whenever the embed is rebuilt). tests/package/registry.test.js runs
// --check. docs/BENCHMARKS.md and docs/BENCH-BUILDS.md are left alone: each records one bench run.
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const FILES = {
  wasm: 'web/wasm/attention.wasm',
  relaxed: 'web/wasm/attention-relaxed.wasm',
  embed: 'web/dist/attention-heatmap.min.js',
  model: 'web/dist/attnmap-model.js',          // the embed's model="…" runtime, loaded only then
  'model-wasm': 'web/wasm/attention-model.wasm',
  toy: 'web/models/toy-zh/model.safetensors',
};
// records of one run each, written by npm run bench and bench/builds.js with that run's figures
const SKIP_DOCS = new Set(['BENCHMARKS.md', 'BENCH-BUILDS.md']);
// sizes that are constants of the API, not of a file (README: the shared result buffer)
const CONSTANTS = new Set(['1 KiB', '8 KiB']);

const MARKER = /<!-- size:([\w-]+) -->(.*?)<!-- \/size -->/g;
const UNMARKED = /(?<![\w.-])\d[\d,.]*\s?(?:B|kB|KB|KiB)\b/g;

export const bytes = (n) => `${n.toLocaleString('en-US')} B`;
export const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;

/** The documents that may quote sizes: README.md and docs/*.md, paths relative to the root. */
export function documents(dir = root) {
  const docs = fs.readdirSync(path.join(dir, 'docs')).filter((f) => f.endsWith('.md') && !SKIP_DOCS.has(f)).sort();
  return ['README.md', ...docs.map((f) => `docs/${f}`)];
}

/** Every value a marker may name, measured now. */
export async function measure(dir = root) {
  const values = {};
  for (const [name, rel] of Object.entries(FILES)) {
    const raw = fs.readFileSync(path.join(dir, rel));
    const gz = gzipSync(raw, { level: 9 }).length;
    Object.assign(values, {
      [name]: kib(raw.length), [`${name}-bytes`]: bytes(raw.length),
      [`${name}-gz`]: kib(gz), [`${name}-gz-bytes`]: bytes(gz),
    });
    values[`_${name}-gz`] = gz;
  }
  const { BUDGET, TARGET } = await import('./build-embed.js');
  const gz = values['_embed-gz'];
  values['embed-budget'] = bytes(BUDGET);
  values['embed-target'] = `${kib(TARGET)} (${bytes(TARGET)}), ` + (gz <= TARGET ? 'met' : `not reached yet (${bytes(gz - TARGET)} over)`);
  for (const k of Object.keys(values)) if (k.startsWith('_')) delete values[k];
  return values;
}

/** The text with every marker filled in; `stale`: markers that said something else; `errors`: what rewriting cannot fix. */
export function update(text, values, file) {
  const stale = [], errors = [];
  const out = text.replace(MARKER, (all, key, old) => {
    if (!(key in values)) {
      errors.push(`${file}: unknown size "${key}" (known: ${Object.keys(values).join(', ')})`);
      return all;
    }
    if (old !== values[key]) stale.push(`${file}: size:${key} says "${old}", the file measures "${values[key]}"`);
    return `<!-- size:${key} -->${values[key]}<!-- /size -->`;
  });
  out.split('\n').forEach((line, i) => {
    for (const [size] of line.replace(MARKER, '').matchAll(UNMARKED)) {
      if (!CONSTANTS.has(size)) errors.push(`${file}:${i + 1}: "${size}" is quoted without a marker: write <!-- size:KEY -->${size}<!-- /size --> (see scripts/sizes.js)`);
    }
  });
  return { text: out, stale, errors };
}

async function main(argv) {
  const check = argv.includes('--check');
  const unknown = argv.filter((a) => a !== '--check');
  if (unknown.length) {
    console.error(`sizes: unknown argument ${unknown[0]}; usage: node scripts/sizes.js [--check]`);
    return 2;
  }
  const values = await measure();
  let failed = false;
  for (const file of documents()) {
    const before = fs.readFileSync(path.join(root, file), 'utf8');
    const { text, stale, errors } = update(before, values, file);
    for (const e of errors) console.error(`sizes: ${e}`);
    failed ||= errors.length > 0;
    if (check) {
      for (const s of stale) console.error(`sizes: ${s}`);
      failed ||= stale.length > 0;
    } else if (text !== before) {
      fs.writeFileSync(path.join(root, file), text);
      for (const s of stale) console.log(`sizes: wrote ${s.replace(/, the file measures /, ' → ')}`);
    }
  }
  const summary = Object.entries(values).filter(([k]) => /^(wasm|relaxed|embed)(-gz)?$/.test(k)).map(([k, v]) => `${k} ${v}`).join(', ');
  if (check && failed) console.error('sizes: stale or unmarked sizes in the docs; node scripts/sizes.js rewrites the marked ones');
  else if (!failed) console.log(`sizes: the docs quote the files' sizes (${summary})`);
  return failed ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
