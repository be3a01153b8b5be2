// decode-kernels.js - one decoding step's matrix products (n = 1, c_src/linear.c) over
// Qwen2.5-0.5B's matrices, each quantized type against BF16 in panels as the models keep it
// (issue 38: "one KV decode step ≤ 0.8× BF16's"). The kernel alone, no model: what bench/gguf.js's
// decode row is made of, in seconds rather than minutes.
//
//   node bench/decode-kernels.js [--rounds N] [--wasm FILE]...
//
// It compiles c_src/linear.c with emcc into a temporary folder (the model build's flags), or
// takes wasm files built so (--wasm, exporting attn_linear_typed, attn_panel8, malloc, free); with
// several, each is a table, all sampled in the same rounds. Random
// valid blocks (scripts/gguf-writer.js). Samples round-robin, medians, one thread; printed, not
// written to the doc: bench/gguf.js's step row is the figure of record.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { randomBlocks, rng } from '../scripts/gguf-writer.js';
import { median } from './lib.js';
import { root } from './plan.js';

const { values: opts } = parseArgs({ options: { rounds: { type: 'string', default: '15' }, wasm: { type: 'string', multiple: true } } });
const ROUNDS = Number(opts.rounds);

// Qwen2.5-0.5B's matrices (out, in) and how many a step reads: q, k+v, o, gate+up, down, the tied logits
const MATS = [
  { name: 'q / o', p: 896, k: 896, times: 48 },
  { name: 'k, v', p: 128, k: 896, times: 48 },
  { name: 'gate, up', p: 4864, k: 896, times: 48 },
  { name: 'down', p: 896, k: 4864, times: 24 },
  { name: 'logits', p: 151936, k: 896, times: 1 },
];
const DTYPE = { BF16: 1, Q4_0: 2 << 8, Q8_0: 8 << 8, Q4_K: 12 << 8, Q6_K: 14 << 8 };
const BLOCK = { Q4_0: 32, Q8_0: 32, Q4_K: 256, Q6_K: 256 };

function build() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-decode-'));
  const out = path.join(dir, 'linear.wasm');
  execFileSync('emcc', [path.join(root, 'c_src/linear.c'), '-O3', '-msimd128', '-ffp-contract=off', '--no-entry', '-sSTANDALONE_WASM',
    '-sALLOW_MEMORY_GROWTH', '-sMAXIMUM_MEMORY=4GB', '-sEXPORTED_FUNCTIONS=_attn_linear_typed,_attn_panel8,_malloc,_free', '-o', out]);
  const bytes = fs.readFileSync(out);
  fs.rmSync(dir, { recursive: true });
  return bytes;
}

async function instance(bytes) {
  const stub = new Proxy({}, { get: () => () => 0 });
  const { instance: inst } = await WebAssembly.instantiate(bytes, new Proxy({}, { get: () => stub }));
  inst.exports._initialize?.();
  return inst.exports;
}

// random BF16 (about ±0.03) in panels, or random blocks of a type
function matrix(x, type, p, k, next) {
  if (type === 'BF16') {
    const at = x.malloc(p * k * 2), scratch = x.malloc(8 * k * 2), h = new Uint16Array(x.memory.buffer, at, p * k);
    for (let i = 0; i < h.length; i++) h[i] = (0x3c00 + Math.floor(next() * 0x100)) ^ (next() < 0.5 ? 0x8000 : 0);
    const dtype = x.attn_panel8(at, DTYPE.BF16, p, k, scratch);
    x.free(scratch);
    return { at, dtype };
  }
  const blocks = randomBlocks(type, p, k, next), at = x.malloc(blocks.length);
  new Uint8Array(x.memory.buffer, at, blocks.length).set(blocks);
  return { at, dtype: DTYPE[type] };
}

const next = rng(7);
const types = ['BF16', 'Q8_0', 'Q4_0', 'Q4_K', 'Q6_K'];
const builds = opts.wasm ? opts.wasm.map((file) => ({ name: file, bytes: fs.readFileSync(file) })) : [{ name: 'c_src/linear.c', bytes: build() }];
const cells = [];
for (const b of builds) {
  const x = await instance(b.bytes);
  for (const m of MATS) {
    const a = x.malloc(m.k * 4), out = x.malloc(m.p * 4);
    const f = new Float32Array(x.memory.buffer, a, m.k);
    for (let i = 0; i < m.k; i++) f[i] = next() * 2 - 1;
    for (const type of types) {
      if (type !== 'BF16' && m.k % BLOCK[type]) continue;
      const w = matrix(x, type, m.p, m.k, next);
      const reps = Math.max(1, Math.round(2e7 / (m.p * m.k)));
      cells.push({ b, m, type, ms: [], run() {
        const t = performance.now();
        for (let r = 0; r < reps; r++) if (x.attn_linear_typed(out, a, w.at, w.dtype, 0, 1, m.k, m.p, 0) !== 0) throw new Error(`${type} ${m.name}: status`);
        return (performance.now() - t) / reps;
      } });
    }
  }
}
for (let round = 0; round < ROUNDS; round++) for (const c of cells) c.ms.push(c.run());

// a step's matrices: BF16, all Q8_0, all Q4_0, and llama.cpp's Q4_0 file's mix (bench/gguf.js)
const MIX = { 'q / o': 'Q4_0', 'k, v': 'Q4_0', 'gate, up': 'Q4_0', down: 'Q6_K', logits: 'Q8_0' };
for (const b of builds) {
  if (builds.length > 1) console.log(`\n${b.name}`);
  const rows = [['matrix (out × in)', ...types.map((t) => `${t} ms`), ...types.slice(1).map((t) => `${t} ÷ BF16`)]];
  const msOf = (m) => Object.fromEntries(cells.filter((c) => c.b === b && c.m === m).map((c) => [c.type, median(c.ms)]));
  for (const m of MATS) {
    const ms = msOf(m);
    rows.push([`${m.name} ${m.p}×${m.k} (×${m.times})`, ...types.map((t) => ms[t]?.toFixed(3) ?? '–'),
      ...types.slice(1).map((t) => (ms[t] ? (ms[t] / ms.BF16).toFixed(2) + '×' : '–'))]);
  }
  const step = (pick) => MATS.reduce((s, m) => s + msOf(m)[pick(m)] * m.times, 0);
  const bf16 = step(() => 'BF16');
  for (const [name, pick] of [['BF16', () => 'BF16'], ['Q8_0', () => 'Q8_0'], ['Q4_0', () => 'Q4_0'], ['Q4_0 + Q6_K + Q8_0', (m) => MIX[m.name]]]) {
    rows.push([`a step's matrices, ${name}`, `${step(pick).toFixed(1)} ms`, `${(step(pick) / bf16).toFixed(2)}× BF16`]);
  }
  for (const r of rows) console.log(r.join(' | '));
}
console.log(`${ROUNDS} rounds, medians; ${os.cpus()[0].model}, Node ${process.version}; load average ${os.loadavg()[0].toFixed(1)}`);
