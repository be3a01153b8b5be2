// build-embed.js - bundle <attention-heatmap> (web/element/attention-heatmap.js and everything it
// imports) into one self-contained file, web/dist/attention-heatmap.min.js, for blogs that copy
// one file.
//
//   node scripts/build-embed.js            write web/dist/attention-heatmap.min.js
//   node scripts/build-embed.js --check    exit 1 if the committed file differs from a fresh build
//                                          (tests/browser/embed.test.js runs this)
//   node scripts/build-embed.js --sizes    write nothing; print the gzip -9 size of every variant
//                                          (wasm build × wasm encoding) and what is inside
//   --wasm=default | --wasm=embed          which wasm build goes in (without it: the embed build,
//                                          web/wasm/attention-embed-wasm.js, when it exists)
//
// What goes in, and how (the model is scripts/build-page.js):
// - An IIFE with no exports and no globals: it works as a classic <script src> (also from file://,
//   where Chromium refuses ES module imports) and as a <script type="module" src>. The define
//   module checks customElements.get() first, so loading the file twice defines the element once.
// - The wasm inlined. The core reads a base64 string (web/wasm/attention-*-wasm.js); base64 packs
//   3 bytes into 4 characters, so a byte sequence that repeats in the wasm rarely repeats in the
//   text and gzip finds few matches. Here the bytes are written as hex (each byte two aligned
//   characters) and turned back into the same base64 string when the file runs (once, a few ms
//   on a cold page). Gzipped, hex costs 8-10% more than the raw wasm, base64 25-40% more: the
//   bundle is 0.9 KB smaller with the embed wasm, 3 KB with the default one. `--sizes` measures both.
//   The string is the bundle's last statement (see entryModule), apart from the JavaScript.
// - Only what the element can reach. Statements labelled FULL_API (in web/core, web/heatmap and
//   web/rng) are left out (esbuild's dropLabels): the options and checks of the public APIs
//   that only other callers can reach, since in this file nothing but the element calls the
//   core, the renderer and torch-rng (a mask, rows, weights: false, kv, biases, kvHeads;
//   option objects that are not plain or have other keys; renderHeatmap's number[][] matrices,
//   masks, standalone files and focus ring, and the checks of options the element always sets
//   right; BigInt seeds). Each label says why the element never reaches it. Run as ES modules
//   (npm, bundlers, the page's web/dist/page.js) the labels change nothing. A check whose
//   message the element can show is never labelled.
// - torch-rng.js (imported dynamically, only for x + seed) is inlined: esbuild turns the import()
//   into a call into the bundle. The relaxed-SIMD build is left out: the element asks for
//   { relaxed: false }, and the one import() of that build resolves to a module that throws, which
//   the core already treats as "this host has no relaxed build" (it falls back to the default one).
//   The finished bundle must import nothing (checked below).
// - The model (<attention-heatmap model="…">, issue 16) is not inside: its dynamic imports
//   (web/element/model-import.js) become <script src> loads of web/dist/attnmap-model.js and
//   web/dist/toy-zh.js beside this file (scripts/build-model.js's classicImports plugin, which
//   also fails the build if model code got in). Without a model attribute neither is requested.
//
// The output is deterministic (no timestamps, no absolute paths; ASCII only, so the encoding a
// page declares cannot matter) for the esbuild version pinned in package.json.
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { classicImports, assertNoModel } from './build-model.js';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const OUT = path.join(root, 'web/dist/attention-heatmap.min.js');
export const ENTRY = 'web/element/attention-heatmap.js';
// Issue 12 asks for at most 25 KiB (25,600 B) gzipped at level 9. Not met yet: 33,163 B on
// 2026-12-01; 28,931 B after the FULL_API labels, the hex at the end and the embed wasm with bulk
// memory (the wasm is about 5.6 KB of it, the element's JavaScript about 23 KB). The target is
// kept as TARGET and printed. The budget that fails the test is the last measurement plus about
// 2.5%, so that growth fails while the sources are made smaller. Issue 16 (model="…": the
// attributes, the loading state, the messages, the <script src> loader; the model itself stays
// out, see below) added 1,266 B: 29,058 -> 30,324 B; the budget grew by as much. Issue 20
// (the element's budgets before the model runs, folder URLs checked by scheme, the Trusted Types
// policy for the classic bundles' scripts, labels segmented in windows) added 620 B:
// 30,324 -> 30,944 B; the budget grew by as much.
export const TARGET = 25600;
export const BUDGET = 31540;
export const WASM = {                              // the base64 modules the core may import
  default: 'web/wasm/attention-wasm.js',
  embed: 'web/wasm/attention-embed-wasm.js',       // size-optimised: same exports, tiled kernel compiled out
};

/** The wasm build used when none is named: the embed build once it exists. */
export function defaultWasm() {
  return fs.existsSync(path.join(root, WASM.embed)) ? 'embed' : 'default';
}

/** gzip -9, as a server would send it. */
export const gzipSize = (bytes) => gzipSync(bytes, { level: 9 }).length;

/** The bytes of a base64 module (`export default "<base64>"`), checked to be a wasm module. */
async function wasmBytes(rel) {
  const { default: base64 } = await import(pathToFileURL(path.join(root, rel)).href);
  const bytes = typeof base64 === 'string' ? Buffer.from(base64, 'base64') : null;
  if (!bytes || bytes.toString('base64') !== base64 || bytes.readUInt32BE(0) !== 0x0061736d) {
    throw new Error(`build-embed: ${rel} does not export the base64 of a wasm module`);
  }
  return bytes;
}

// The module that replaces the base64 module. Its string is set by the last statement of the
// bundle (entryModule): the core reads it only when createAttention() first runs, which the
// element does in a microtask, after the whole file has run.
const WASM_MODULE = 'let base64 = null;\nexport { base64 as default };\nexport const setWasm = (b) => { base64 = b; };\n';

// The bundle's entry: the element (ENTRY), then the wasm. The hex goes last so that gzip codes it
// apart from the JavaScript (deflate gives each block its own Huffman codes, and the hex digits
// mixed into the code's blocks cost about 450 B more). With base64 the string is set as it is;
// with hex it is turned back into base64 (a hex digit c is (c & 15) + 9 * (c >> 6)).
function entryModule(bytes, rel, encoding) {
  const head = `import ${JSON.stringify(`./${ENTRY}`)};\nimport { setWasm } from ${JSON.stringify(rel)};\n`;
  if (encoding !== 'hex') return `${head}setWasm("${bytes.toString('base64')}");\n`;
  return `${head}// ${rel} (${bytes.length} bytes of wasm) as hex; the core reads base64\n` +
    'const digit = (c) => (c & 15) + 9 * (c >> 6);\n' +
    'function fromHex(h) {\n' +
    '  const n = h.length >> 1, u = new Uint8Array(n);\n' +
    '  for (let i = 0; i < n; i++) u[i] = digit(h.charCodeAt(2 * i)) << 4 | digit(h.charCodeAt(2 * i + 1));\n' +
    '  let s = "";\n' +
    '  for (let i = 0; i < n; i += 8192) s += String.fromCharCode.apply(null, u.subarray(i, i + 8192));\n' +
    '  return btoa(s);\n' +
    '}\n' +
    `setWasm(fromHex("${bytes.toString('hex')}"));\n`;
}

const NO_RELAXED = 'export {};\nthrow new Error("attention-heatmap.min.js holds only the default wasm build, not the relaxed-SIMD one");\n';

/**
 * The esbuild plugin: the entry (entryModule); every import of a wasm module (whichever core
 * module imports it) becomes the chosen build's WASM_MODULE; the relaxed build becomes a module
 * that throws.
 */
function wasmPlugin(wasm, encoding) {
  const NS = 'attnmap-embed';
  return {
    name: 'attnmap-embed-wasm',
    setup(build) {
      build.onResolve({ filter: /^attnmap-embed-entry$/ }, () => ({ path: 'entry', namespace: NS }));
      build.onResolve({ filter: /(^|\/)attention-relaxed-wasm\.js$/ }, () => ({ path: 'no-relaxed-build', namespace: NS }));
      build.onResolve({ filter: /(^|\/)attention(-embed)?-wasm\.js$/ }, () => ({ path: WASM[wasm], namespace: NS }));
      build.onLoad({ filter: /.*/, namespace: NS }, async (args) => {
        if (args.path === 'no-relaxed-build') return { contents: NO_RELAXED, loader: 'js' };
        if (args.path === 'entry') {
          return { contents: entryModule(await wasmBytes(WASM[wasm]), WASM[wasm], encoding), loader: 'js', resolveDir: root };
        }
        return { contents: WASM_MODULE, loader: 'js', resolveDir: path.join(root, 'web/wasm') };
      });
    },
  };
}

function banner() {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const copyright = fs.readFileSync(path.join(root, 'LICENSE'), 'utf8').match(/^Copyright .*$/m)?.[0] ?? '';
  return `/*! <attention-heatmap> from ${pkg.name} ${pkg.version}, ${pkg.license} License, ${copyright}.\n` +
    `    One file: the element, its core and wasm. Generated by scripts/build-embed.js from ${ENTRY}; do not edit. */`;
}

/**
 * Build the one-file embed. Resolves to { bytes, gzip, wasm, encoding, metafile }.
 * wasm: 'default' or 'embed' (default: defaultWasm()); encoding: 'hex' (what ships) or 'base64'.
 */
export async function buildEmbed({ wasm = defaultWasm(), encoding = 'hex' } = {}) {
  if (!(wasm in WASM)) throw new Error(`build-embed: --wasm must be ${Object.keys(WASM).join(' or ')}; received ${wasm}`);
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: ['attnmap-embed-entry'],
    outfile: path.relative(root, OUT),
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: ['es2022'],
    charset: 'ascii',
    legalComments: 'none',
    dropLabels: ['FULL_API'],         // see the header
    minify: true,
    sourcemap: false,
    write: false,
    metafile: true,
    logLevel: 'silent',
    banner: { js: banner() },
    plugins: [wasmPlugin(wasm, encoding), classicImports(path.basename(OUT))],
  });
  assertNoModel(result.metafile, 'build-embed');
  const [output] = Object.values(result.metafile.outputs);
  if (output.imports.length) {
    throw new Error(`build-embed: the bundle still imports ${output.imports.map((i) => i.path).join(', ')}; it must be self-contained`);
  }
  const bytes = result.outputFiles[0].contents;
  return { bytes, gzip: gzipSize(bytes), wasm, encoding, metafile: result.metafile };
}

/** What is inside: one line per module, bytes in the (minified) output, and each one minified alone (as in the bundle, without FULL_API) and gzipped. */
export async function breakdown(metafile) {
  const [output] = Object.values(metafile.outputs);
  const rows = [];
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    let alone = null;
    if (!input.includes(':')) {      // a real file, not one of the plugin's modules
      const { code } = await esbuild.transform(fs.readFileSync(path.join(root, input), 'utf8'),
        { minify: true, format: 'esm', charset: 'ascii', dropLabels: ['FULL_API'] });
      alone = gzipSize(Buffer.from(code));
    }
    rows.push({ input, bytesInOutput, alone });
  }
  return rows.sort((a, b) => b.bytesInOutput - a.bytesInOutput);
}

const kib = (b) => `${(b / 1024).toFixed(1)} KiB`;

async function printSizes() {
  const builds = Object.keys(WASM).filter((w) => fs.existsSync(path.join(root, WASM[w])));
  const ships = defaultWasm();
  for (const wasm of builds) {
    for (const encoding of ['hex', 'base64']) {
      const b = await buildEmbed({ wasm, encoding });
      const mark = wasm === ships && encoding === 'hex' ? '  <- what ships' : '';
      console.log(`wasm ${wasm.padEnd(7)} as ${encoding.padEnd(6)} ${String(b.bytes.length).padStart(7)} B, gzip -9 ${b.gzip} B (${kib(b.gzip)}; budget ${kib(BUDGET)})${mark}`);
    }
  }
  const b = await buildEmbed({ wasm: ships });
  console.log(`\ninside (wasm ${ships}, hex): bytes in the minified output; gzip -9 of the module minified alone`);
  for (const r of await breakdown(b.metafile)) {
    console.log(`  ${r.input.padEnd(46)} ${String(r.bytesInOutput).padStart(7)} B   ${r.alone === null ? '' : `${String(r.alone).padStart(6)} B gz alone`}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const wasmArg = args.find((a) => a.startsWith('--wasm='))?.slice('--wasm='.length);
  const rel = path.relative(root, OUT);
  try {
    if (args.includes('--sizes')) {
      await printSizes();
    } else if (args.includes('--check')) {
      const fresh = await buildEmbed({ wasm: wasmArg });
      let committed = null;
      try { committed = fs.readFileSync(OUT); } catch { /* missing */ }
      if (!committed) {
        console.error(`build-embed: ${rel} is missing; run \`node scripts/build-embed.js\``);
        process.exit(1);
      }
      if (!Buffer.from(fresh.bytes).equals(committed)) {
        console.error(`build-embed: ${rel} is out of date (${committed.length} bytes; a fresh build with the ${fresh.wasm} wasm has ${fresh.bytes.length}); run \`node scripts/build-embed.js\``);
        process.exit(1);
      }
      console.log(`build-embed: ${rel} is up to date (${fresh.bytes.length} bytes, ${fresh.gzip} B gzipped, ${fresh.wasm} wasm)`);
    } else {
      const b = await buildEmbed({ wasm: wasmArg });
      fs.mkdirSync(path.dirname(OUT), { recursive: true });
      fs.writeFileSync(OUT, b.bytes);
      console.log(`build-embed: wrote ${rel} (${b.bytes.length} bytes, ${b.gzip} B gzipped (${kib(b.gzip)}, budget ${kib(BUDGET)}), ${b.wasm} wasm)`);
    }
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
}
