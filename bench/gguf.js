// gguf.js - bench.js's section on GGUF files whose matrices are quantized (issue 38, "Numbers"):
// attnmap reading llama.cpp's files, their blocks kept in wasm memory and dequantized inside the
// linear kernels (c_src/linear.c), against the same shape in BF16 safetensors.
//
//   node bench/bench.js --only gguf    this section alone (about 10 minutes on 2 cores, 3 GB of
//                                      temporary files at most), rewrites only its part of the doc
//   node bench/gguf.js [--quick] [--print]   the same without bench.js (--quick: 8 tokens, one round,
//                                      no 3B file, prints only; --print: the full run, printed, the doc left as it is)
//
// The files are written into a temporary folder under os.tmpdir() and removed after: BF16
// safetensors by scripts/random-checkpoint.js, GGUF files by scripts/gguf-writer.js (random valid
// blocks of each type, finite float16 scales, values about as large as random-checkpoint.js's
// U(±1/√fan_in); norms and biases F32, as llama.cpp writes them). Measured, one thread:
//   (a) Qwen2.5-0.5B's shape as BF16 safetensors and as GGUF files (arch qwen2) of three mixes: the
//       one llama.cpp's Q4_0 file has (Q4_0 where ne0 = 896, which K-quants cannot take; Q6_K for
//       ffn_down, ne0 = 4864; Q8_0 for token_embd), all Q8_0, all Q4_0. In one process, samples
//       round-robin, medians: a forward over 32 tokens (every row's logits), GGUF ÷ BF16 (target
//       ≤ 1.0×, never over 1.25×), and one KV-cache step after a 32-token prompt (target ≤ 0.8×
//       BF16's); the logits finite;
//   (b) Llama-3.2-1B's shape (arch llama) in a Q4_K_M-like mix (Q4_K; Q6_K for token_embd, and for
//       attn_v and ffn_down in the layers llama.cpp's use_more_bits picks): the peak RSS of a fresh
//       process (this file run as `node bench/gguf.js --peak FILE N`) that loads it by path and runs
//       32 tokens, against the file's size (target ≤ file + 400 MiB);
//   (c) Qwen2.5-3B's shape in the same mix (about 1.9 GB): that it loads and runs 32 tokens in
//       wasm32, in a fresh process; its peak and times;
//   (d) wllama (llama.cpp in wasm) on (a)'s file in Chromium: measured by bench/wllama.js, which ggufOnly runs after the rest
//       (WLLAMA below), which writes that row alone.
// No figure is asserted: a measurement, not a test.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tensorBytes } from '../tests/gguf-writer.js';
import { SHAPES, tensorsOf, writeRandomCheckpoint } from '../scripts/random-checkpoint.js';
import { BLOCKS, ggufMetadata, ggufName, randomBlocks, rng, writeGgufFile } from '../scripts/gguf-writer.js';
import { HEADS_HEADING } from './heads.js';
import { fmt, fmtBytes, median, table } from './lib.js';
import { wasmBuild } from './llama.js';
import { tokenIds } from './model.js';
import { progress, root } from './plan.js';
import { roundRobin } from './runner.js';
import { writeSection } from './sections.js';

export const GGUF_HEADING = '## GGUF files, quantized';
const PLAN = {
  full: { n: 32, rounds: 7, steps: 4, big: true },
  quick: { n: 8, rounds: 1, steps: 2, big: false },
};
const MiB = 1048576;
const now = () => performance.now();
const say = (what) => progress(`gguf: ${what}`);

// Qwen2.5-3B's config.json (sizes and RoPE; random-checkpoint.js has the smaller shapes)
const QWEN_3B = {
  ...SHAPES['qwen2.5-0.5b'], hidden_size: 2048, intermediate_size: 11008, num_hidden_layers: 36, num_attention_heads: 16,
  num_key_value_heads: 2, max_window_layers: 36, tie_word_embeddings: true,
};

// llama.cpp's use_more_bits (llama-quant.cpp): the first and last eighth of the layers and every third between
const moreBits = (layer, L) => layer < L / 8 || layer >= (7 * L) / 8 || (layer - Math.floor(L / 8)) % 3 === 2;

// a matrix's type in each mix, from its name, ne0 (its columns), its layer (-1: none) and the layer count
const MIXES = {
  'Q4_0 + Q6_K + Q8_0': (name, cols) => (name === 'token_embd.weight' || name === 'output.weight' ? 'Q8_0' : cols % 256 === 0 ? 'Q6_K' : 'Q4_0'),
  'Q8_0': () => 'Q8_0',
  'Q4_0': () => 'Q4_0',
  'Q4_K_M-like': (name, cols, layer, L) => (name === 'token_embd.weight' || name === 'output.weight' ||
    (/\.(attn_v|ffn_down)\.weight$/.test(name) && moreBits(layer, L)) ? 'Q6_K' : 'Q4_K'),
};
const SMALL_MIXES = ['Q4_0 + Q6_K + Q8_0', 'Q8_0', 'Q4_0'];

/** `node bench/bench.js --only gguf` (and the full run, at its end): measure, print, and (not --quick) rewrite the section. */
export async function ggufOnly(r, { quick, write = !quick }) {
  const res = await benchGguf({ quick });
  const text = `${ggufReport(res)}\n\n` +
    `Written by \`node bench/bench.js --only gguf\` on ${new Date().toISOString().slice(0, 16)}Z; ${r.machine.cpu}, ${r.machine.cores} cores, Node ${r.machine.node}; ` +
    `load average (1 min) ${fmt(r.machine.loadStart, 2)} at the start, ${fmt(os.loadavg()[0], 2)} at the end.`;
  console.log(`\n${GGUF_HEADING}\n\n${text}\n`);
  if (write && !res.failed) writeSection(path.join(root, 'docs/BENCHMARKS.md'), GGUF_HEADING, text, { after: HEADS_HEADING });
  // (d) wllama in Chromium on (a)'s file (bench/wllama.js), whose row the section has just written as not measured
  try {
    await (await import('./wllama.js')).wllamaOnly({ quick, write: write && !res.failed });
  } catch (e) {
    progress(`gguf: wllama not measured (${String(e.message).split('\n')[0]}); \`node bench/wllama.js --write\` measures it alone`);
  }
}

export async function benchGguf({ quick }) {
  const plan = quick ? PLAN.quick : PLAN.full;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-bench-gguf-'));
  try {
    const res = { plan, wasm: wasmBuild() };
    res.small = await part('(a)', () => smallShape(dir, plan));
    res.llama1b = await part('(b)', () => bigFile(dir, 'llama', SHAPES['llama-3.2-1b'], plan.n));
    res.qwen3b = plan.big ? await part('(c)', () => bigFile(dir, 'qwen2', QWEN_3B, plan.n)) : { skipped: 'not in a --quick run' };
    return res;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// one part of the section: its result, or { error } (the other parts still run)
async function part(name, run) {
  try {
    return await run();
  } catch (e) {
    say(`${name} failed: ${e.stack ?? e.message}`);
    return { error: e.message.split('\n')[0] };
  }
}

// ----------------------------------------------------------------------------
// the files

// bytes free under dir, and a refusal when a file of `bytes` (and 1 GiB to spare) does not fit
function checkDisk(dir, bytes) {
  const s = fs.statfsSync(dir), free = s.bavail * s.bsize;
  if (free < bytes + 1024 * MiB) throw new Error(`${fmtBytes(free)} free under ${dir}, a file of about ${fmtBytes(bytes)} to write`);
  return free;
}

// a vector's F32 bytes: a norm (init 0) 1 ± 0.1, a bias U(±init)
function* vectorPieces(n, init, next) {
  const v = Float32Array.from({ length: n }, () => (init === 0 ? 1 + 0.1 * (2 * next() - 1) : init * (2 * next() - 1)));
  yield new Uint8Array(v.buffer);
}

// a matrix's random blocks, a few MiB of rows at a time, values about U(±init) (BLOCKS' sizes are 0.3)
function* matrixPieces(type, [rows, cols], init, next) {
  const per = Math.max(1, Math.floor((4 * MiB) / ((cols / BLOCKS[type].block) * BLOCKS[type].bytes)));
  for (let r = 0; r < rows; r += per) yield randomBlocks(type, Math.min(per, rows - r), cols, next, { scale: init / 0.3 });
}

// the GGUF tensors of config c (random-checkpoint.js's list, in its order), each matrix of the type mix gives
// (bench/wllama.js writes (a)'s first file with them, and a vocabulary llama.cpp needs)
export function ggufTensors(c, mix, seed) {
  const next = rng(seed), L = c.num_hidden_layers;
  return tensorsOf(c).map(([hf, shape, init]) => {
    const name = ggufName(hf), layer = Number(/^blk\.(\d+)\./.exec(name)?.[1] ?? -1);
    const type = shape.length === 2 ? MIXES[mix](name, shape[1], layer, L) : 'F32';
    return { name, shape, type, pieces: () => (type === 'F32' ? vectorPieces(shape[0], init, next) : matrixPieces(type, shape, init, next)) };
  });
}

// each type's matrices: { type: { count, bytes } }
function typeCounts(tensors) {
  const out = {};
  for (const t of tensors.filter((x) => x.shape.length === 2)) {
    const o = (out[t.type] ??= { count: 0, bytes: 0 });
    o.count++;
    o.bytes += tensorBytes(t.type, [...t.shape].reverse());
  }
  return out;
}

/** A GGUF file of config c's shapes (arch llama or qwen2; q and k rows random, so not permuted) in mix: { file, bytes, types, ms }. */
function writeModelGguf(file, arch, c, mix, seed) {
  const tensors = ggufTensors(c, mix, seed), types = typeCounts(tensors);
  checkDisk(path.dirname(file), Object.values(types).reduce((s, t) => s + t.bytes, 0));
  say(`writing ${path.basename(file)} (${mix}, arch ${arch}, ${c.num_hidden_layers} layers, hidden ${c.hidden_size})`);
  const t0 = now(), bytes = writeGgufFile(file, { metadata: ggufMetadata(arch, c), tensors });
  return { file, bytes, types, ms: now() - t0 };
}

// ----------------------------------------------------------------------------
// (a) Qwen2.5-0.5B's shape: BF16 safetensors against the GGUF mixes, in this process

async function smallShape(dir, plan) {
  const c = SHAPES['qwen2.5-0.5b'], bf16 = path.join(dir, 'bf16');
  checkDisk(dir, 1100 * MiB);
  say('qwen2.5-0.5b\'s shape, BF16 (scripts/random-checkpoint.js)');
  const { parameters, bytes } = writeRandomCheckpoint('qwen2.5-0.5b', bf16, { dtype: 'BF16' });
  const files = { BF16: { file: bf16, bytes } };
  SMALL_MIXES.forEach((mix, i) => { files[mix] = writeModelGguf(path.join(dir, `qwen2.5-0.5b-${i}.gguf`), 'qwen2', c, mix, 38 + i); });
  const { loadModel } = await import('../web/model/model-node.js');
  const models = {}, loads = {};
  try {
    for (const [name, f] of Object.entries(files)) {
      const t0 = now();
      models[name] = await loadModel(f.file, { threads: 1 });
      loads[name] = now() - t0;
    }
    return { config: c, parameters, files, loads, ...(await timings(models, plan)) };
  } finally {
    for (const m of Object.values(models)) m.dispose();
  }
}

// `count` KV-cache steps after the prompt's pass (not timed): each step's ms
async function decodeSteps(model, prompt, count) {
  const ms = [];
  let t0 = now(), first = true;
  for await (const step of model.generate(prompt, { maxTokens: count + 1, stop: false })) {
    const t = now();
    if (!first) ms.push(t - t0);
    first = false;
    t0 = t;
    if (!Number.isInteger(step.id)) throw new Error(`gguf: a generated id is ${step.id}`);
  }
  return ms;
}

// the logits checked (finite, their largest |x|; the first call is the warm-up), then forwards and
// decode samples of every model round-robin
async function timings(models, { n, rounds, steps }) {
  const V = SHAPES['qwen2.5-0.5b'].vocab_size, ids = tokenIds(n, V), logits = {}, cells = [], decoded = {};
  for (const [name, m] of Object.entries(models)) {
    const data = m.forward(ids).logits.data;
    logits[name] = { finite: data.every(Number.isFinite), max: data.reduce((a, x) => Math.max(a, Math.abs(x)), 0) };
    await decodeSteps(m, ids.slice(0, 4), 2);   // warm-up of the step
    decoded[name] = [];
    cells.push({ name: `forward ${name}`, ms: [], sample: async () => { const t = now(); m.forward(ids); return now() - t; } });
    cells.push({ name: `step ${name}`, ms: [], sample: async () => { const s = await decodeSteps(m, ids, steps); decoded[name].push(...s); return median(s); } });
  }
  say(`forward over ${n} tokens and ${steps} KV-cache steps after a ${n}-token prompt, ${Object.keys(models).join(', ')}: ${rounds} round${rounds > 1 ? 's' : ''}`);
  await roundRobin(cells, rounds);
  const of = (what) => Object.fromEntries(Object.keys(models).map((k) => [k, cells.find((c) => c.name === `${what} ${k}`).ms]));
  const forward = of('forward');
  return {
    n, rounds, steps, logits,
    forward: Object.fromEntries(Object.entries(forward).map(([k, ms]) => [k, { median: median(ms), min: Math.min(...ms) }])),
    step: Object.fromEntries(Object.entries(decoded).map(([k, ms]) => [k, { median: median(ms), min: Math.min(...ms), count: ms.length }])),
  };
}

// ----------------------------------------------------------------------------
// (b), (c): a big file loaded by path in a fresh process

function bigFile(dir, arch, c, n) {
  const written = writeModelGguf(path.join(dir, `${arch}-${c.num_hidden_layers}x${c.hidden_size}.gguf`), arch, c, 'Q4_K_M-like', 7);
  try {
    const size = fs.statSync(written.file).size;
    say(`a fresh process loads ${path.basename(written.file)} (${fmtBytes(size)}) and runs ${n} tokens`);
    const p = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--peak', written.file, String(n)],
      { encoding: 'utf8', cwd: root, timeout: 30 * 60 * 1000 });
    if (p.status !== 0) return { ...written, size, error: (p.stderr || p.error?.message || `exit ${p.status}`).trim().split('\n').slice(-2).join(' ') };
    return { ...written, size, config: c, ...JSON.parse(p.stdout.trim().split('\n').pop()) };
  } finally {
    fs.rmSync(written.file, { force: true });
  }
}

const status = (key) => Number(fs.readFileSync('/proc/self/status', 'utf8').match(new RegExp(`${key}:\\s+(\\d+) kB`))[1]) * 1024;

// the child's side: loadModel(path) on one thread, a forward over n tokens; VmHWM over the whole process
async function peakChild(file, n) {
  const { loadModel } = await import('../web/model/model-node.js');
  const t0 = now(), model = await loadModel(file, { threads: 1 }), loadMs = now() - t0;
  globalThis.gc?.();
  const loaded = status('VmRSS'), loadPeak = status('VmHWM');
  const t1 = now(), logits = model.forward(tokenIds(n, model.config.vocab_size)).logits.data, forwardMs = now() - t1;
  const max = logits.reduce((a, x) => Math.max(a, Math.abs(x)), 0);
  console.log(JSON.stringify({ n, threads: model.threads, loadMs, loaded, loadPeak, forwardMs, peak: status('VmHWM'), finite: logits.every(Number.isFinite), maxLogit: max }));
}

// ----------------------------------------------------------------------------
// the report

const mixOf = (types) => Object.entries(types).map(([t, x]) => `${t} ${x.count} (${fmtBytes(x.bytes)})`).join(', ');
const logitsOf = (l) => (l.finite ? `logits finite, largest \\|x\\| ${fmt(l.max)}` : '**logits not finite**');

function smallRows(a) {
  if (a.error) return [['Qwen2.5-0.5B\'s shape, GGUF ÷ BF16', `not measured: ${a.error}`, '', '≤ 1.0×', '']];
  const b = a.forward.BF16, s = a.step.BF16, rows = [];
  for (const mix of SMALL_MIXES) {
    const f = a.forward[mix], k = a.step[mix], first = mix === SMALL_MIXES[0];
    rows.push([`forward over ${a.n} tokens, GGUF ${mix} ÷ BF16 (${a.rounds} rounds)`, `${fmt(b.median)} ms → ${fmt(f.median)} ms`, `**${fmt(f.median / b.median, 3)}×**`,
      first ? '≤ 1.0× (never > 1.25×)' : '–', `${logitsOf(a.logits[mix])}${first ? `; BF16's: ${logitsOf(a.logits.BF16)}` : ''}`]);
    rows.push([`one KV-cache step after a ${a.n}-token prompt, GGUF ${mix} ÷ BF16 (${k.count} steps)`, `${fmt(s.median)} ms → ${fmt(k.median)} ms`, `**${fmt(k.median / s.median, 3)}×**`,
      first ? '≤ 0.8×' : '–', `best ${fmt(s.min)} ms → ${fmt(k.min)} ms`]);
  }
  return rows;
}

function bigRow(x, what, target, over) {
  if (x.skipped || x.error) return [what, `not measured: ${x.skipped ?? x.error}`, '', target, ''];
  const peak = Math.max(x.peak, x.loadPeak);
  return [what, fmtBytes(peak), over ? `file + **${fmtBytes(peak - x.size)}**` : `file ${fmtBytes(x.size)}`, target,
    `loaded in ${fmt(x.loadMs / 1000)} s (RSS then ${fmtBytes(x.loaded)}), forward over ${x.n} tokens ${fmt(x.forwardMs / 1000)} s on ${x.threads} thread; ${logitsOf({ finite: x.finite, max: x.maxLogit })}`];
}

// (d) measured by bench/wllama.js right after this section is written (ggufOnly): the row's text until then, or if it fails
const WLLAMA = 'not measured: bench/wllama.js (Chromium, @wllama/wllama from bench/package.json), which this section runs after the rest, did not ' +
  'write it; `node bench/wllama.js --write` measures it alone, on this file with a vocabulary added';

function ggufReport(r) {
  const a = r.small;
  const rows = [
    ...smallRows(a),
    bigRow(r.llama1b, `Llama-3.2-1B's shape, Q4_K_M-like, loadModel('….gguf') and ${r.plan.n} tokens in a fresh process: peak RSS`, '≤ file + 400 MiB', true),
    bigRow(r.qwen3b, `Qwen2.5-3B's shape, Q4_K_M-like, the same in wasm32: peak RSS`, 'loads and runs 32 tokens', false),
    [`wllama 3.8.1 (llama.cpp in wasm), Chromium, 1 thread, (a)'s Q4_0 + Q6_K + Q8_0 file: a ${r.plan.n}-token prompt and a decode step`, WLLAMA, '', '≤ 0.3× its time', ''],
  ];
  return `${describe(r)}\n\n${table(['', 'measured', 'ratio / over', 'target', 'checked'], rows, [':--', '--:', '--:', '--:', ':--'])}\n\n${files(r)}`;
}

function describe({ wasm }) {
  return `The model build measured: ${wasm.commit}${wasm.modified ? ' and the working tree\'s changes since' : ''} (web/wasm/attention-model.wasm, sha256 ${wasm.sha}). ` +
    'Random weights in real shapes, one thread, token ids (i · 7919 + 13) mod vocab. The GGUF files (scripts/gguf-writer.js) hold random valid blocks ' +
    '(random bytes, finite float16 scales sized so that the values are about as large as scripts/random-checkpoint.js\'s U(±1/√fan_in); norms and biases F32, ' +
    'as llama.cpp writes them) ' +
    'in the types llama.cpp would choose: Qwen2.5-0.5B\'s rows of 896 cannot be K-quants (ne0 % 256 ≠ 0), so its Q4_0 file has Q4_0 there, Q6_K for ffn_down ' +
    '(ne0 = 4864) and Q8_0 for token_embd; the Q4_K_M-like files have Q4_K, and Q6_K for token_embd and for attn_v and ffn_down in the layers llama.cpp\'s ' +
    'use_more_bits picks (arch llama\'s q and k rows are random, so not permuted). (a) runs in one process, samples round-robin, medians; the forward computes ' +
    'every row\'s logits and no map; a step is one `generate` step with the KV cache after the prompt\'s pass. (b) and (c): `node bench/gguf.js --peak FILE N`, ' +
    'loadModel(path) (the tensors read by ranges into wasm memory), one forward; the peak is VmHWM of /proc/self/status over the whole process.';
}

function files(r) {
  const out = [];
  const a = r.small;
  if (!a.error) {
    out.push(`(a) ${fmt(a.parameters / 1e6)} M parameters; BF16 safetensors ${fmtBytes(a.files.BF16.bytes)} (loaded in ${fmt(a.loads.BF16)} ms in this process); ` +
      SMALL_MIXES.map((m) => `GGUF ${m}: ${fmtBytes(a.files[m].bytes)}, matrices ${mixOf(a.files[m].types)} (loaded in ${fmt(a.loads[m])} ms)`).join('; ') + '.');
  }
  for (const [k, x] of [['(b)', r.llama1b], ['(c)', r.qwen3b]]) if (x.types) out.push(`${k} ${fmtBytes(x.bytes)}: matrices ${mixOf(x.types)}; written in ${fmt(x.ms / 1000)} s.`);
  return out.join(' ');
}

// run directly: the child of (b) and (c), or this section alone
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--peak');
  if (at >= 0) {
    await peakChild(process.argv[at + 1], Number(process.argv[at + 2]));
    process.exit(0);
  }
  const { machine } = await import('./machine.js');
  const quick = process.argv.includes('--quick');
  await ggufOnly({ machine: machine() }, { quick, write: !quick && !process.argv.includes('--print') });
}
