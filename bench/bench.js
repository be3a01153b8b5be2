// bench.js - `npm run bench`: attnmap against plain JS, onnxruntime-web, TF.js (wasm) and the
// same C compiled natively. Prints tables; a full run also rewrites docs/BENCHMARKS.md.
//
//   npm run bench                   the full run (2.5 to 4.5 minutes on 2 cores), writes the doc
//   BENCH_QUICK=1 npm run bench     a smoke run (about 25 s), prints only
//
// Besides single-head attention at several n, it times one GPT-2-small multi-head attention
// layer (n = 1024, d_model = 768, 12 heads, biases; n = 128 in quick mode): attnmap's
// multiHeadAttention against onnxruntime-web (com.microsoft MultiHeadAttention and plain ops)
// and native C (bench/native-mha.c), see benchMha.
//
// Method, in one place:
// - every implementation gets the same inputs (q, k, v standard normal, n = m, d_k = d_v = d)
//   and its output is checked against ours (max |difference| <= 1e-4) before any timing;
//   one that disagrees is reported and not timed;
// - within a size, samples are taken round-robin between the implementations (the order
//   rotates each round) so that a noisy neighbour slows all of them alike, and the table
//   shows the median; a sample times `reps` calls in a row, `reps` chosen per implementation
//   so that a sample takes a few milliseconds, and is reported per call;
// - each JS forward includes getting the inputs in and the output out as a Float32Array
//   (ours: the public API with { weights: false }); native C (bench/native.c, a child process)
//   times attn_forward alone, one sample whenever its turn in the round-robin comes;
// - no timing is asserted anywhere: this is a measurement, not a test.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { loaders } from './impls.js';
import {
  attentionFlops, fmt, fmtBytes, makeInputs, makeMhaInputs, makeSelfInputs, maxAbsDiff, median, mhaFlops, nested,
} from './lib.js';
import { mhaModel } from './onnx-model.js';
import { sourcesHash, builtHash } from '../scripts/start.js';
import { benchPool, poolReport } from './pool.js';
import { benchChromium, chromiumReport } from './chromium.js';
import { benchNodeRelaxed, nodeRelaxedReport } from './node-relaxed.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const QUICK = process.env.BENCH_QUICK === '1';
const TOLERANCE = 1e-4;
const progress = (msg) => process.stderr.write(`bench: ${msg}\n`);

// sizes and rounds (fewer rounds where one call takes seconds); quick mode stops at 1024
const SIZES = [
  { n: 3, d: 8, rounds: QUICK ? 7 : 41 },
  { n: 64, d: 64, rounds: QUICK ? 7 : 41 },
  { n: 256, d: 64, rounds: QUICK ? 5 : 25 },
  { n: 1024, d: 64, rounds: QUICK ? 3 : 15 },
  { n: 2048, d: 64, rounds: QUICK ? 0 : 11 },
  { n: 4096, d: 64, rounds: QUICK ? 0 : 9 },
].filter((s) => s.rounds > 0);
const SAMPLE_MS = QUICK ? 2 : 5;         // target duration of one sample
const WARMUP_MS = QUICK ? 300 : 1000;    // per implementation and size, before calibrating
const TINY = { calls: QUICK ? 2000 : 10000, batches: QUICK ? 5 : 15 };
const COLD_RUNS = QUICK ? 3 : 15;
const MEMORY_N = QUICK ? 1024 : 4096;
const IMPLS = ['ours', 'plain', 'ort', 'tf'];
// GPT-2 small's attention layer (d_model 768, 12 heads of 64) at n = 1024 tokens; quick mode
// runs a 128-token layer of the same width
const MHA = { n: QUICK ? 128 : 1024, dModel: 768, heads: 12, rounds: QUICK ? 3 : 11 };
// plain JS needs seconds per call at large n: fewer samples there, so that the run stays near 5 minutes
const MAX_SAMPLES = { plain: { 1024: 7, 2048: 3, 4096: 1 } };

// ----------------------------------------------------------------------------
// the machine

function machine() {
  const cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
  const field = (name) => cpuinfo.match(new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm'))?.[1]?.trim();
  const flags = (field('flags') ?? '').split(/\s+/);
  return {
    cpu: field('model name') ?? os.cpus()[0]?.model ?? 'unknown',
    family: field('cpu family'), model: field('model'),
    mhz: field('cpu MHz'),
    simd: ['sse2', 'avx', 'avx2', 'fma', 'avx512f'].filter((f) => flags.includes(f)).join(' '),
    cores: os.cpus().length,
    memory: os.totalmem(),
    node: process.version,
    v8: process.versions.v8,
    gcc: tryRun('gcc', ['-dumpfullversion']) ?? 'not found',
    os: `${os.type()} ${os.release()}`,
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    loadStart: os.loadavg()[0],
  };
}

function tryRun(cmd, args) {
  try { return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(); } catch { return null; }
}

// The committed wasm names the hash of the sources it was built from (build.sh): compare it
// with c_src/ now, to say whether native C and wasm measure the same code.
function sourcesMatchWasm() {
  const built = builtHash(), now = sourcesHash();
  return { built, now, same: built === now };
}

// ----------------------------------------------------------------------------
// native: compile bench/native.c and bench/peak.c

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-bench-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

function compile(src, out, flags) {
  const srcs = (Array.isArray(src) ? src : [src]).map((f) => path.join(here, f));
  const r = spawnSync('gcc', [...flags, ...srcs, '-o', path.join(tmp, out), '-lm'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return { error: (r.error?.message ?? r.stderr).trim().split('\n').slice(0, 6).join('\n') };
  return { path: path.join(tmp, out) };
}

// attn_workspace_size's parameters as declared in attention.h, mapped to n = m, d_k = d_v = d
function workspaceMacro() {
  const h = fs.readFileSync(path.join(root, 'c_src/attention.h'), 'utf8');
  const params = h.match(/size_t\s+attn_workspace_size\s*\(([^)]*)\)/)?.[1];
  if (!params) return null;
  const map = { n: 'n', m: 'n', d_k: 'd', d_v: 'd', dk: 'd', dv: 'd' };
  const args = params.split(',').map((p) => map[p.trim().split(/[\s*]+/).pop()]);
  if (args.includes(undefined)) return null;
  return `-DWORKSPACE_SIZE(n,d)=attn_workspace_size(${args.join(',')})`;
}

function peak() {
  const exe = compile('peak.c', 'peak', ['-O2', '-msse2', '-ffp-contract=off']);
  if (exe.error) return { error: exe.error };
  return JSON.parse(execFileSync(exe.path, { encoding: 'utf8' }));
}

// The native child (bench/native.c, interactive mode): one JSON line answers each command.
function compileNative() {
  const macro = workspaceMacro();
  const exe = compile('native.c', 'native', ['-O3', '-march=native', '-ffp-contract=off', ...(macro ? [macro] : [])]);
  if (exe.error) return { error: `gcc: ${exe.error}` };
  return { exe: exe.path };
}

// bench/native-mha.c, linked with c_src/attention.c and c_src/mha.c (one translation unit
// each: they share static helper names)
function compileNativeMha() {
  const exe = compile(['native-mha.c', '../c_src/attention.c', '../c_src/mha.c'], 'native-mha', ['-O3', '-march=native', '-ffp-contract=off']);
  if (exe.error) return { error: `gcc: ${exe.error}` };
  return { exe: exe.path };
}

class NativeChild {
  constructor(exe) {
    this.waiters = [];
    this.stderr = '';
    let buf = '';
    this.proc = spawn(exe, [tmp], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stdout.setEncoding('utf8').on('data', (chunk) => {
      buf += chunk;
      for (let i; (i = buf.indexOf('\n')) >= 0; buf = buf.slice(i + 1)) this.waiters.shift()?.resolve(JSON.parse(buf.slice(0, i)));
    });
    this.proc.stderr.setEncoding('utf8').on('data', (chunk) => { this.stderr += chunk; });
    this.proc.on('exit', (code) => {
      this.exited = new Error(`native C exited (${code}): ${this.stderr.trim()}`);
      for (const w of this.waiters.splice(0)) w.reject(this.exited);
    });
  }

  ask(command) {
    if (this.exited) return Promise.reject(this.exited);
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.proc.stdin.write(`${command}\n`);
    });
  }

  close() { this.proc.stdin.end(); }
}

function writeNativeInputs({ n }, inputs) {
  const { q, k, v } = inputs;
  fs.writeFileSync(path.join(tmp, `in-${n}.bin`),
    Buffer.concat([q, k, v].map((x) => Buffer.from(x.data.buffer, x.data.byteOffset, x.data.byteLength))));
}

function readNativeOutput(n) {
  const raw = fs.readFileSync(path.join(tmp, `out-${n}.bin`));
  return new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
}

// ----------------------------------------------------------------------------
// timing

const now = () => performance.now();

// one sample: reps calls in a row, ms per call; await only where the implementation is async
async function sample(impl, inputs, reps, isAsync) {
  const t0 = now();
  if (isAsync) for (let i = 0; i < reps; i++) await impl.forward(inputs);
  else for (let i = 0; i < reps; i++) impl.forward(inputs);
  return (now() - t0) / reps;
}

async function benchSize(impls, native, { n, d, rounds }) {
  const inputs = makeInputs(n, d);
  const row = { n, d, rounds, results: {} };
  const live = [];
  const accept = (name, diff) => {
    row.results[name] = { diff, ok: diff <= TOLERANCE };
    if (!(diff <= TOLERANCE)) progress(`n = ${n}: ${name} disagrees with ours (max |diff| = ${diff}); not timed`);
    return diff <= TOLERANCE;
  };
  // check every output against ours before timing anything
  const ours = await impls.ours.forward(inputs);
  for (const name of IMPLS) {
    const impl = impls[name];
    if (!impl) continue;
    const t0 = now();
    const first = impl.forward(inputs);
    const isAsync = first instanceof Promise;
    const out = await first;
    let once = now() - t0;
    if (!accept(name, name === 'ours' ? 0 : maxAbsDiff(out, ours))) continue;
    // warm up (WARMUP_MS or 20,000 calls: the peers' JS needs thousands of calls to reach its
    // steady speed) and calibrate: reps so that one sample takes about SAMPLE_MS, from the
    // fastest single call
    for (let i = 0, spent = 0; once < 1000 && i < 20000 && spent < WARMUP_MS; i++) {
      const t = await sample(impl, inputs, 1, isAsync);
      once = Math.min(once, t);
      spent += t;
    }
    const reps = once >= SAMPLE_MS ? 1 : Math.min(100000, Math.ceil(SAMPLE_MS / Math.max(once, 1e-4)));
    const max = MAX_SAMPLES[name]?.[n] ?? rounds;
    // a single sample of a call that takes seconds: the checked call is that sample (JIT warm-up is noise there)
    const ms = max === 1 && once > 1000 ? [once] : [];
    live.push({ name, reps, max, ms, sample: () => sample(impl, inputs, reps, isAsync) });
  }
  // native C: the same inputs through a file; its samples join the round-robin
  if (native) {
    writeNativeInputs({ n }, inputs);
    const { reps } = await native.ask(`load ${n} ${d} ${SAMPLE_MS}`);
    if (accept('native', maxAbsDiff(readNativeOutput(n), ours))) {
      live.push({ name: 'native', reps, max: rounds, ms: [], sample: async () => (await native.ask(`sample ${n}`)).ms });
    }
  }
  // round-robin, the order rotating each round
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < live.length; i++) {
      const x = live[(i + r) % live.length];
      if (x.ms.length < x.max) x.ms.push(await x.sample());
    }
  }
  for (const x of live) Object.assign(row.results[x.name], { median: median(x.ms), min: Math.min(...x.ms), reps: x.reps, samples: x.ms.length });
  if (native && row.results.native) {
    // native C's own medians (the same samples, computed in C)
    const own = await native.ask(`done ${n}`);
    Object.assign(row.results.native, { median: own.median_ms, min: own.min_ms, samples: own.rounds });
  }
  return row;
}

// ----------------------------------------------------------------------------
// GPT-2 small's multi-head attention layer: attnmap's multiHeadAttention against
// onnxruntime-web (com.microsoft MultiHeadAttention, and the same layer in plain ONNX ops)
// and native C, on the same data, round-robin, as benchSize.

async function benchMha(impls, nativeExe) {
  const { n, dModel: E, heads, rounds } = MHA;
  const w = makeMhaInputs(n, E);
  const M = (data, rows) => ({ data, shape: [rows, E] });
  const inputs = { x: M(w.x, n), wq: M(w.wq, E), wk: M(w.wk, E), wv: M(w.wv, E), wo: M(w.wo, E), bq: w.bq, bk: w.bk, bv: w.bv, bo: w.bo };
  const { attn } = impls.ours;
  const cands = [{ name: 'ours', forward: () => attn.multiHeadAttention(inputs, { heads, weights: false }).output.data }];
  const row = { ...MHA, flops: mhaFlops(n, E), results: {}, errors: {} };
  if (impls.ort) {
    const { ort } = impls.ort;
    for (const [name, contrib] of [['ortMha', true], ['ortOps', false]]) {
      try {
        // the weights are initializers (constants the graph optimiser may see); created before any timing
        const session = await ort.InferenceSession.create(mhaModel({ dModel: E, heads, w, contrib }), {
          executionProviders: ['wasm'], graphOptimizationLevel: 'all',
        });
        cands.push({ name, forward: async () => (await session.run({ x: new ort.Tensor('float32', w.x, [1, n, E]) })).out.data });
      } catch (e) {
        row.errors[name] = e.message.split('\n')[0];
        progress(`mha: ${name} not measured: ${row.errors[name]}`);
      }
    }
  }
  const ours = cands[0].forward();
  const live = [];
  for (const c of cands) {
    const t0 = now();
    const first = c.forward();
    const isAsync = first instanceof Promise;
    const out = await first;
    let once = now() - t0;
    const diff = c.name === 'ours' ? 0 : maxAbsDiff(out, ours);
    row.results[c.name] = { diff, ok: diff <= TOLERANCE };
    if (!(diff <= TOLERANCE)) { progress(`mha: ${c.name} disagrees with ours (max |diff| = ${diff}); not timed`); continue; }
    const impl = { forward: c.forward };
    for (let i = 0, spent = 0; i < 20 && spent < WARMUP_MS; i++) {          // a few calls: each takes a fraction of a second
      const t = await sample(impl, null, 1, isAsync);
      once = Math.min(once, t);
      spent += t;
    }
    const reps = once >= SAMPLE_MS ? 1 : Math.ceil(SAMPLE_MS / Math.max(once, 1e-4));
    live.push({ name: c.name, reps, ms: [], sample: () => sample(impl, null, reps, isAsync) });
  }
  let native = null;
  if (nativeExe) {
    try {
      fs.writeFileSync(path.join(tmp, 'mha-in.bin'), Buffer.concat(['x', 'wq', 'wk', 'wv', 'wo', 'bq', 'bk', 'bv', 'bo']
        .map((k) => Buffer.from(w[k].buffer, w[k].byteOffset, w[k].byteLength))));
      native = new NativeChild(nativeExe);
      const { reps } = await native.ask(`load ${n} ${E} ${heads} ${SAMPLE_MS}`);
      const raw = fs.readFileSync(path.join(tmp, 'mha-out.bin'));
      const diff = maxAbsDiff(new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4), ours);
      row.results.native = { diff, ok: diff <= TOLERANCE };
      if (diff <= TOLERANCE) live.push({ name: 'native', reps, ms: [], sample: async () => (await native.ask('sample')).ms });
      else progress(`mha: native disagrees with ours (max |diff| = ${diff}); not timed`);
    } catch (e) {
      row.errors.native = e.message;
      progress(`mha: native C not measured: ${e.message}`);
      native?.close();
      native = null;
    }
  }
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < live.length; i++) {
      const x = live[(i + r) % live.length];
      if (x.dead) continue;
      try { x.ms.push(await x.sample()); } catch (e) {                    // only native C can fail here
        x.dead = true;
        row.errors[x.name] = e.message;
        progress(`mha: ${x.name} stopped: ${e.message}`);
      }
    }
  }
  for (const x of live) if (x.ms.length && !x.dead) Object.assign(row.results[x.name], { median: median(x.ms), min: Math.min(...x.ms), reps: x.reps, samples: x.ms.length });
  if (native) {
    if (row.results.native?.samples && !native.exited) {
      const own = await native.ask('done');
      Object.assign(row.results.native, { median: own.median_ms, min: own.min_ms, samples: own.rounds });
    }
    native.close();
  }
  return row;
}

// The tiny call: median µs per call over batches of calls, batches interleaved.
async function tinyCalls(impls) {
  const self = makeSelfInputs(3, 8);
  const selfNested = { x: nested(self.x), wq: nested(self.wq), wk: nested(self.wk), wv: nested(self.wv) };
  const att = makeInputs(3, 8);
  const { attn } = impls.ours;
  const cases = [
    { name: 'self', label: 'attnmap: selfAttention, { data, shape } inputs', calls: TINY.calls, run: () => attn.selfAttention(self) },
    { name: 'selfNested', label: 'attnmap: selfAttention, number[][] inputs', calls: TINY.calls, run: () => attn.selfAttention(selfNested) },
    { name: 'attnNoW', label: 'attnmap: attention, { weights: false }', calls: TINY.calls, run: () => attn.attention(att, { weights: false }) },
    { name: 'attnW', label: 'attnmap: attention, { weights: true }', calls: TINY.calls, run: () => attn.attention(att) },
    { name: 'plain', label: 'plain JS attention', calls: TINY.calls, run: () => impls.plain.forward(att) },
  ];
  // the C kernels alone: the committed wasm instantiated here, called through its exports with
  // the inputs already in its memory (no checks, no copies, no result objects): the floor
  // under the public API's time
  const raw = await rawKernels(self, att);
  if (raw) cases.push(...raw);
  if (impls.ort) {
    const session = await impls.ort.session(8);
    const { ort } = impls.ort;
    const feeds = () => ({
      q: new ort.Tensor('float32', att.q.data, [3, 8]), k: new ort.Tensor('float32', att.k.data, [3, 8]),
      v: new ort.Tensor('float32', att.v.data, [3, 8]),
    });
    cases.push({ name: 'ort', label: 'onnxruntime-web: session.run, bare attention graph', calls: TINY.calls, async: true, run: () => session.run(feeds()) });
  }
  if (impls.tf) cases.push({ name: 'tf', label: 'TF.js wasm: attention ops + dataSync', calls: Math.ceil(TINY.calls / 10), run: () => impls.tf.forward(att) });
  for (const c of cases) {                          // warm-up, as in benchSize
    c.us = [];
    for (let i = 0, t0 = now(); i < 20000 && now() - t0 < WARMUP_MS; i++) await c.run();
  }
  for (let b = 0; b < TINY.batches; b++) {
    for (let i = 0; i < cases.length; i++) {
      const c = cases[(i + b) % cases.length];
      const t0 = now();
      if (c.async) for (let j = 0; j < c.calls; j++) await c.run();
      else for (let j = 0; j < c.calls; j++) c.run();
      c.us.push(((now() - t0) * 1000) / c.calls);
    }
  }
  return cases.map(({ name, label, calls, us }) => ({ name, label, calls, batches: us.length, median: median(us), min: Math.min(...us) }));
}

async function rawKernels(self, att) {
  try {
    const bytes = fs.readFileSync(path.join(root, 'web/wasm/attention.wasm'));
    const { instance } = await WebAssembly.instantiate(bytes, { env: { emscripten_notify_memory_growth() {} } });
    const e = instance.exports;
    e._initialize?.();
    const base = e.malloc(1 << 16), f32 = new Float32Array(e.memory.buffer);
    const at = (i) => base + i * 256;               // 64 floats per slot: enough for (8, 8)
    [self.x, self.wq, self.wk, self.wv, att.q, att.k, att.v].forEach((m, i) => f32.set(m.data, at(i) >>> 2));
    const scale = e.attn_default_scale(8);
    // attn_workspace_size(n, m, d_k, d_v), or the older (m): extra arguments are ignored
    if (e.attn_workspace_size(3, 3, 8, 8) > 16 * 256) throw new Error('workspace larger than expected');
    const selfRun = () => e.attn_self_forward(at(7), at(8), at(9), at(10), at(11), at(12), at(13), at(0), at(1), at(2), at(3), 0, 3, 8, 8, 8, scale, 0);
    const attRun = () => e.attn_forward(at(14), 0, at(15), at(4), at(5), at(6), 0, 3, 3, 8, 8, scale, 0);
    if (selfRun() !== 0 || attRun() !== 0) throw new Error('a kernel returned an error status');
    return [
      { name: 'rawSelf', label: 'attnmap C alone: attn_self_forward via the wasm export', calls: TINY.calls, run: selfRun },
      { name: 'rawAtt', label: 'attnmap C alone: attn_forward, weights NULL, via the wasm export', calls: TINY.calls, run: attRun },
    ];
  } catch (err) {
    progress(`tiny calls: the raw kernels were not measured: ${err.message}`);
    return null;
  }
}

// Cold start: fresh `node bench/cold.js IMPL` processes, interleaved.
function coldStarts(names) {
  const runs = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < COLD_RUNS; r++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + r) % names.length];
      const p = spawnSync(process.execPath, [path.join(here, 'cold.js'), name], { encoding: 'utf8', cwd: root });
      if (p.status !== 0) { progress(`cold ${name}: ${p.stderr.trim().split('\n').slice(-3).join(' ')}`); continue; }
      runs[name].push(JSON.parse(p.stdout.trim().split('\n').pop()));
    }
  }
  return Object.fromEntries(names.map((name) => {
    const xs = runs[name];
    const m = (key) => (xs.length ? median(xs.map((x) => x[key])) : NaN);
    return [name, { runs: xs.length, fromScript: m('fromScript'), fromProcessStart: m('fromProcessStart'), importAndCreate: m('importAndCreate'), first: m('first'), createAndFirst: m('createAndFirst') }];
  }));
}

function memory(names) {
  const out = {};
  for (const name of names) {
    const p = spawnSync(process.execPath, ['--expose-gc', path.join(here, 'memory.js'), name, String(MEMORY_N)], { encoding: 'utf8', cwd: root });
    if (p.status !== 0) { progress(`memory ${name}: ${p.stderr.trim().split('\n').slice(-3).join(' ')}`); continue; }
    out[name] = JSON.parse(p.stdout.trim().split('\n').pop());
  }
  return out;
}

// ----------------------------------------------------------------------------
// shipped size, gzip level 9

// What the one-script-tag embed loads: web/element/attention-heatmap.js and every module it imports,
// followed through relative static imports; the brief's list when the element is absent.
function embedFiles() {
  const entry = 'web/element/attention-heatmap.js';
  if (!fs.existsSync(path.join(root, entry))) return ['web/core/attention.js', 'web/wasm/attention-wasm.js', 'web/heatmap/heatmap.js'];
  const seen = new Set([entry]);
  for (const file of seen) {
    const src = fs.readFileSync(path.join(root, file), 'utf8');
    for (const [, spec] of src.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]/gm)) {
      seen.add(path.relative(root, path.resolve(root, path.dirname(file), spec)));
    }
  }
  return [...seen];
}

function gzipSizes() {
  const gz = (file) => {
    const buf = fs.readFileSync(file);
    return { file: path.relative(root, file).replace(/^node_modules\//, ''), raw: buf.length, gzip: zlib.gzipSync(buf, { level: 9 }).length };
  };
  const existing = (files) => files.map((f) => path.join(root, f)).filter((f) => fs.existsSync(f)).map(gz);
  const sum = (files) => ({ raw: files.reduce((s, f) => s + f.raw, 0), gzip: files.reduce((s, f) => s + f.gzip, 0) });
  const groups = [
    { name: 'attnmap embed (JS + inlined wasm + heatmap + element)', files: existing(embedFiles()) },
    { name: 'attnmap core only (attention.js + attention-wasm.js)', files: existing(['web/core/attention.js', 'web/wasm/attention-wasm.js']) },
    { name: 'attnmap raw wasm', files: existing(['web/wasm/attention.wasm']) },
    { name: 'onnxruntime-web, wasm only (ort.wasm.min.mjs + its loader + wasm)', files: existing([
      'node_modules/onnxruntime-web/dist/ort.wasm.min.mjs', 'node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.mjs',
      'node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm']) },
    { name: 'TF.js core + wasm backend (SIMD wasm)', files: existing([
      'node_modules/@tensorflow/tfjs-core/dist/tf-core.min.js', 'node_modules/@tensorflow/tfjs-backend-wasm/dist/tf-backend-wasm.min.js',
      'node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm']) },
  ];
  return groups.map((g) => ({ ...g, ...sum(g.files) }));
}

// ----------------------------------------------------------------------------
// report

function table(header, rows, align) {
  const a = align ?? header.map((_, i) => (i === 0 ? ':--' : '--:'));
  return [`| ${header.join(' | ')} |`, `|${a.map((x) => ` ${x} `).join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

const LABEL = { ours: 'attnmap', plain: 'plain JS', ort: 'onnxruntime-web', tf: 'TF.js wasm', native: 'native C' };
const versionOf = (pkg) => { try { return JSON.parse(fs.readFileSync(path.join(root, 'node_modules', pkg, 'package.json'), 'utf8')).version; } catch { return '?'; } };

function report(r) {
  const out = [];
  const sizeLabel = (x) => `${x.n}${x.d !== 64 ? ` (d = ${x.d})` : ''}`;
  const time = (x, name) => x.results[name]?.median;
  const cols = [...IMPLS, 'native'];
  // medians and ratios
  out.push('### Median ms per forward (n = m, d_k = d_v = d = 64 unless noted); ratio = peer time / attnmap time\n');
  out.push(table(['n', ...cols.map((c) => LABEL[c]), ...cols.slice(1).map((c) => `${LABEL[c]} ÷ attnmap`)],
    r.sizes.map((x) => [sizeLabel(x), ...cols.map((c) => fmt(time(x, c))),
      ...cols.slice(1).map((c) => (time(x, c) ? `${fmt(time(x, c) / time(x, 'ours'))}×` : '–'))])));
  // GFLOP/s
  const pk = r.peak.gflops;
  out.push(`\n### GFLOP/s (4·n²·d flops per forward; softmax not counted)${pk ? `; peak = ${fmt(pk)} GFLOP/s (one core, 4-wide SSE mul + add, see below)` : ''}\n`);
  out.push(table(['n', ...cols.map((c) => LABEL[c]), ...(pk ? ['attnmap % of peak', 'native % of peak'] : [])],
    r.sizes.map((x) => {
      const f = attentionFlops(x.n, x.n, x.d, x.d) / 1e6;        // per ms -> GFLOP/s
      const g = (c) => (time(x, c) ? f / time(x, c) : NaN);
      return [sizeLabel(x), ...cols.map((c) => fmt(g(c))),
        ...(pk ? [`${fmt((100 * g('ours')) / pk, 2)} %`, `${fmt((100 * g('native')) / pk, 2)} %`] : [])];
    })));
  // correctness
  out.push(`\n### Agreement with attnmap before timing: max |difference| of the output (limit ${TOLERANCE})\n`);
  out.push(table(['n', ...cols.slice(1).map((c) => LABEL[c])],
    r.sizes.map((x) => [sizeLabel(x), ...cols.slice(1).map((c) => {
      const diff = x.results[c]?.diff;
      return diff === undefined ? '–' : `${diff.toExponential(1)}${diff <= TOLERANCE ? '' : ' **WRONG**'}`;
    })])));
  out.push(`\nSamples × calls per sample (attnmap / plain JS / onnxruntime-web / TF.js / native C): ` +
    `${r.sizes.map((x) => `n = ${x.n}: ${cols.map((c) => (x.results[c]?.samples ? `${x.results[c].samples} × ${x.results[c].reps}` : '–')).join(' / ')}`).join('; ')}.`);

  // tiny call
  out.push('\n### The tiny call: n = 3, d_model = d_k = d_v = 8 (median µs per call)\n');
  const tinyOurs = r.tiny.find((t) => t.name === 'self'), tinyOrt = r.tiny.find((t) => t.name === 'ort');
  out.push(table(['call', 'µs per call', 'best batch', 'batches × calls'],
    r.tiny.map((t) => [t.label, fmt(t.median), fmt(t.min), `${t.batches} × ${t.calls}`]), [':--', '--:', '--:', '--:']));
  const tinyAtt = r.tiny.find((t) => t.name === 'attnNoW');
  if (tinyOurs && tinyOrt) {
    out.push(`\nonnxruntime-web session.run ÷ attnmap selfAttention = **${fmt(tinyOrt.median / tinyOurs.median)}×**; ` +
      `÷ attnmap attention { weights: false } = ${fmt(tinyOrt.median / tinyAtt.median)}× ` +
      `(calls per second: attnmap ${Math.round(1e6 / tinyOurs.median).toLocaleString('en-US')}, onnxruntime-web ${Math.round(1e6 / tinyOrt.median).toLocaleString('en-US')}). ` +
      'selfAttention also computes the three projections and returns seven matrices; the like-for-like row is attention { weights: false }.');
  }

  // cold start
  out.push(`\n### Cold start: a fresh \`node\` process, ${COLD_RUNS} runs each, medians (ms)\n`);
  out.push(table(['', 'import + create', 'first call (n = 3)', 'import + create + first call', 'from the script\'s first line', 'from process start'],
    Object.entries(r.cold).map(([name, c]) => [LABEL[name], fmt(c.importAndCreate), fmt(c.first), fmt(c.createAndFirst), fmt(c.fromScript), fmt(c.fromProcessStart)])));
  out.push('\n"Import + create + first call" is the median of their sum in each run: the cold start of issue 4 (target: under 15 ms). ' +
    '"From the script\'s first line" is measured inside the child (bench/cold.js) from its first statement, ' +
    'with every module imported dynamically after it; "from process start" is performance.now() at the end, whose origin is the ' +
    'start of the Node process (it adds Node\'s own start-up, the same for all). onnxruntime-web\'s "create" includes creating the session of the bare graph.');

  // memory
  out.push(`\n### Peak memory of one forward at n = ${MEMORY_N}, d = 64 (fresh process each)\n`);
  out.push(table(['', 'RSS before', 'peak RSS during the forward', 'peak growth', 'held after it (after GC)', 'wasm memory before → after'],
    Object.entries(r.memory).map(([name, m]) => [LABEL[name], fmtBytes(m.rssBefore), fmtBytes(m.peak), fmtBytes(m.growth),
      fmtBytes(m.retained), m.wasmAfter ? `${fmtBytes(m.wasmBefore)} → ${fmtBytes(m.wasmAfter)}` : '–'])));
  out.push('\nMeasured by bench/memory.js: a tiny warm-up forward, the inputs, a GC, then the kernel\'s peak-RSS mark is reset ' +
    '(`/proc/self/clear_refs`) and read back after one forward (`VmHWM`); peak growth = that peak − RSS just before; ' +
    '"held after it" = RSS after the forward and a GC − RSS before. ' +
    'Plain JS is left out (it needs one row of m scores, and seconds per call at n = 4096). ' +
    `The inputs and output of n = ${MEMORY_N}, d = 64 are ${fmtBytes(4 * MEMORY_N * 64 * 4)} together; an n×n float32 matrix is ${fmtBytes(4 * MEMORY_N * MEMORY_N)}.`);

  // size
  out.push('\n### Shipped size (gzip level 9, each file compressed on its own, summed)\n');
  out.push(table(['what', 'files', 'raw', 'gzip'],
    r.sizes_gz.map((g) => [g.name, g.files.map((f) => `\`${f.file}\``).join(', '), fmtBytes(g.raw), fmtBytes(g.gzip)]), [':--', ':--', '--:', '--:']));
  return out.join('\n');
}

const MHA_LABEL = {
  ours: 'attnmap: `multiHeadAttention(..., { heads: 12, weights: false })`',
  ortMha: 'onnxruntime-web: com.microsoft `MultiHeadAttention` graph',
  ortOps: 'onnxruntime-web: the same layer in plain ONNX ops',
  native: 'native C: `attn_mha_forward`, weights NULL',
};

// The multi-head layer's table and a few sentences read from it.
function mhaReport(r) {
  const x = r.mha;
  if (!x) return 'Not measured.';
  const out = [];
  const pk = r.peak.gflops;
  const gf = (c) => x.flops / 1e6 / x.results[c].median;
  const names = Object.keys(MHA_LABEL).filter((c) => x.results[c] || x.errors[c]);
  out.push(`### n = ${x.n} tokens, d_model = ${x.dModel}, ${x.heads} heads of ${x.dModel / x.heads}, with biases: ` +
    `${fmt(x.flops / 1e9)} GFLOP per forward; ratio = time ÷ attnmap's time\n`);
  out.push(table(['implementation', 'median ms', 'best ms', 'GFLOP/s', ...(pk ? ['% of peak'] : []), '÷ attnmap', `max \\|diff\\| vs attnmap`, 'samples × calls'],
    names.map((c) => {
      const v = x.results[c];
      if (!v?.median) {
        const why = x.errors[c] ?? (v && !v.ok ? `disagrees with attnmap (${v.diff})` : 'not measured');
        return [MHA_LABEL[c], `not timed: ${why.replace(/\|/g, '\\|')}`, '–', '–', ...(pk ? ['–'] : []), '–', v ? v.diff.toExponential(1) : '–', '–'];
      }
      return [MHA_LABEL[c], fmt(v.median), fmt(v.min), fmt(gf(c)), ...(pk ? [`${fmt((100 * gf(c)) / pk, 2)} %`] : []),
        c === 'ours' ? '1×' : `${fmt(v.median / x.results.ours.median)}×`,
        c === 'ours' ? '–' : v.diff.toExponential(1), `${v.samples} × ${v.reps}`];
    }), [':--', '--:', '--:', '--:', ...(pk ? ['--:'] : []), '--:', '--:', '--:']));
  const lines = [];
  const ratio = (c) => (x.results[c]?.median ? x.results[c].median / x.results.ours.median : NaN);
  const say = (c, what) => {
    const v = ratio(c);
    if (!Number.isFinite(v)) return;
    lines.push(`- ${what} takes ${fmt(v)}× attnmap's time: attnmap is ${v > 1.1 ? 'faster' : v < 0.9 ? 'slower' : 'level (within 10 %)'}.`);
  };
  say('ortMha', 'onnxruntime-web with its contrib `MultiHeadAttention` op');
  say('ortOps', 'onnxruntime-web with the plain-op graph');
  if (Number.isFinite(ratio('native'))) {
    lines.push(`- Native C (the same C, gcc -O3 -march=native) takes ${fmt(ratio('native'))}× attnmap's time: attnmap through its JS API runs at ` +
      `${fmt(100 * ratio('native'), 2)} % of native speed on this layer.`);
  }
  if (x.results.ours?.median) {
    const attnPart = (4 * x.n * x.n * x.dModel) / x.flops;
    lines.push(`- Of the ${fmt(x.flops / 1e9)} GFLOP, ${fmt(100 * (1 - attnPart), 2)} % are the four projections (matrix products of ` +
      `(${x.n}, ${x.dModel})·(${x.dModel}, ${x.dModel})) and ${fmt(100 * attnPart, 2)} % the attention itself, so this layer measures ` +
      'the matrix multiply as much as the attention kernel.');
  }
  if (lines.length) out.push(`\n${lines.join('\n')}`);
  return out.join('\n');
}

// A reading of the numbers, written from the numbers, so that it stays true on every rerun.
// Issue 4's targets against this run's figures, one row each: what was asked, what was measured.
function targetsReport(r) {
  const rows = [];
  const yes = (ok) => (ok ? 'met' : '**not met**');
  const large = r.sizes.filter((x) => x.n >= 1024 && x.n <= 4096 && x.results.ours);
  const gf = (x, ms) => attentionFlops(x.n, x.n, x.d, x.d) / 1e6 / ms;
  if (large.length) {
    const g = large.map((x) => gf(x, x.results.ours.median));
    rows.push(['≥ 42 GFLOP/s at n = 1024–4096, d = 64, public API (Node)', `${large.map((x, i) => `${fmt(g[i])} (n = ${x.n})`).join(', ')}`, yes(Math.min(...g) >= 42)]);
    const withOrt = large.filter((x) => x.results.ort);
    if (withOrt.length) {
      const q = withOrt.map((x) => x.results.ort.median / x.results.ours.median);
      rows.push(['≥ 1.6× onnxruntime-web, same run (Node)', withOrt.map((x, i) => `${fmt(q[i])}× (n = ${x.n})`).join(', '), yes(Math.min(...q) >= 1.6)]);
    }
  }
  // the two sections that run both builds: Chromium, and Node with relaxed SIMD switched on
  for (const [section, where] of [[r.chromium, 'Chromium'], [r.nodeRelaxed, 'Node with --experimental-wasm-relaxed-simd']]) {
    const cs = (section?.sizes ?? []).filter((s) => s.n >= 1024 && s.results.default && s.results.ort);
    if (!cs.length) continue;
    for (const [key, label] of [['default', '{ relaxed: false }'], ['relaxed', 'createAttention(), the relaxed SIMD build']]) {
      if (!cs.every((s) => s.results[key])) continue;
      const g = cs.map((s) => attentionFlops(s.n, s.n, 64, 64) / 1e6 / s.results[key].median);
      const q = cs.map((s) => s.results.ort.median / s.results[key].median);
      rows.push([`≥ 1.6× onnxruntime-web and ≥ 42 GFLOP/s (${where}, ${label})`, cs.map((s, i) => `${fmt(q[i])}×, ${fmt(g[i])} (n = ${s.n})`).join('; '),
        yes(Math.min(...q) >= 1.6 && Math.min(...g) >= 42)]);
    }
  }
  const t = Object.fromEntries(r.tiny.map((x) => [x.name, x]));
  if (t.self) rows.push(['tiny selfAttention (n = 3, d = 8, public API) < 2 µs median', `${fmt(t.self.median)} µs`, yes(t.self.median < 2)]);
  if (t.self && t.ort) rows.push(['tiny call ≥ 7× faster than onnxruntime-web session.run', `${fmt(t.ort.median / t.self.median)}×`, yes(t.ort.median / t.self.median >= 7)]);
  if (r.cold.ours) rows.push(['cold start: import + createAttention() + first call < 15 ms', `${fmt(r.cold.ours.createAndFirst)} ms`, yes(r.cold.ours.createAndFirst < 15)]);
  rows.push(['32,768² with { weights: false }, nothing n×m, < 128 MiB growth; n = 4096 with weights', 'tests/long.test.js in `npm test`', 'see the tests']);
  if (r.pool?.rows?.length) {
    const sp = r.pool.rows.filter((x) => x.n >= 1024).map((x) => x.single / x.pool);
    if (sp.length) rows.push([`stretch: more than one core without SharedArrayBuffer (${r.pool.workers} workers, n ≥ 1024)`, sp.length > 1 ? `${fmt(Math.min(...sp))}× to ${fmt(Math.max(...sp))}×` : `${fmt(sp[0])}×`, yes(Math.min(...sp) > 1)]);
  }
  return table(['target (issue 4)', 'this run', ''], rows, [':--', ':--', ':--']);
}

function reading(r) {
  const lines = [];
  const big = r.sizes.filter((x) => x.n >= 64);
  const ratio = (x, c) => (x.results[c]?.median ? x.results[c].median / x.results.ours.median : NaN);
  const range = (c, xs) => {
    const rs = xs.map((x) => ({ n: x.n, v: ratio(x, c) })).filter((y) => Number.isFinite(y.v));
    if (!rs.length) return null;
    const lo = rs.reduce((a, b) => (b.v < a.v ? b : a)), hi = rs.reduce((a, b) => (b.v > a.v ? b : a));
    return { lo, hi, rs };
  };
  for (const c of ['plain', 'ort', 'tf']) {
    const g = range(c, r.sizes);
    if (!g) { lines.push(`- ${LABEL[c]}: not measured (it failed to load or disagreed with attnmap).`); continue; }
    // within 10 % counts as level: runs on this machine move by more than that
    const ns = (f) => g.rs.filter((y) => f(y.v)).map((y) => y.n);
    const faster = ns((v) => v > 1.1), level = ns((v) => v >= 0.9 && v <= 1.1), slower = ns((v) => v < 0.9);
    const parts = [];
    if (faster.length) parts.push(`faster at ${faster.length === g.rs.length ? 'every size' : `n = ${faster.join(', ')}`}`);
    if (level.length) parts.push(`level (within 10 %) at ${level.length === g.rs.length ? 'every size' : `n = ${level.join(', ')}`}`);
    if (slower.length) parts.push(`slower at ${slower.length === g.rs.length ? 'every size' : `n = ${slower.join(', ')}`}`);
    lines.push(`- **${LABEL[c]}** takes ${fmt(g.lo.v)}× (n = ${g.lo.n}) to ${fmt(g.hi.v)}× (n = ${g.hi.n}) attnmap's time: ` +
      `attnmap is ${parts.join(', ')}.`);
  }
  const nat = range('native', big);
  if (nat) {
    lines.push(`- **Native C** (the same source, gcc -O3 -march=native) takes ${fmt(nat.lo.v)}× (n = ${nat.lo.n}) to ${fmt(nat.hi.v)}× (n = ${nat.hi.n}) ` +
      'attnmap\'s time for n ≥ 64, so attnmap through its JS API runs at ' +
      `${fmt(100 * nat.lo.v, 2)} % to ${fmt(100 * nat.hi.v, 2)} % of native speed. ` +
      'The gap holds the public API (checks, copies in and out, the output\'s allocation) and code generation ' +
      '(natively gcc may use 256-bit AVX for the loops it vectorises itself; wasm SIMD is 128-bit).');
  }
  if (r.peak.gflops) {
    const gf = (x, c = 'ours') => attentionFlops(x.n, x.n, x.d, x.d) / 1e6 / x.results[c].median;
    const last = r.sizes[r.sizes.length - 1], best = big.reduce((a, b) => (gf(b) > gf(a) ? b : a), big[0] ?? last);
    lines.push(`- At n = ${last.n} attnmap does ${fmt(gf(last))} GFLOP/s, ${fmt((100 * gf(last)) / r.peak.gflops, 2)} % of the ${fmt(r.peak.gflops)} GFLOP/s ` +
      `that one core retires in 4-wide mul + add (its best here: ${fmt(gf(best))} GFLOP/s at n = ${best.n}` +
      `${best.results.native?.median ? `; native C ${fmt(gf(best, 'native'))}` : ''}). exp, max and the loads and stores are not counted as flops, ` +
      'so 100 % is out of reach; the distance to native C is the fairer yardstick.');
  }
  const t = Object.fromEntries(r.tiny.map((x) => [x.name, x]));
  if (t.self && t.ort) {
    lines.push(`- **Tiny calls**: a selfAttention call of the episode's size takes ${fmt(t.self.median)} µs, ` +
      `attention without weights ${fmt(t.attnNoW.median)} µs, plain JS ${fmt(t.plain.median)} µs, onnxruntime-web's session.run ${fmt(t.ort.median)} µs. ` +
      (t.plain.median < t.attnNoW.median ? 'At this size plain JS beats the public API. ' : '') +
      (t.rawAtt ? `The C kernels alone take ${fmt(t.rawAtt.median)} µs (attention) and ${fmt(t.rawSelf.median)} µs (selfAttention), ` +
        `so ${fmt(100 * (1 - t.rawAtt.median / t.attnNoW.median), 2)} % and ${fmt(100 * (1 - t.rawSelf.median / t.self.median), 2)} % of a call is the JS wrapper: ` +
        'argument checks, copies in, and allocating the returned matrices (and the garbage collection they cause).' : ''));
  }
  const c = r.cold;
  if (c.ours && c.ort && c.tf) {
    lines.push(`- **Cold start** (import, create, first call): attnmap ${fmt(c.ours.createAndFirst)} ms, TF.js ${fmt(c.tf.createAndFirst)} ms, ` +
      `onnxruntime-web ${fmt(c.ort.createAndFirst)} ms. From the script's first line, with the benchmark's own imports and Node's module loader ` +
      `starting up: attnmap ${fmt(c.ours.fromScript)} ms.`);
  }
  const m = r.memory;
  if (m.ours) {
    const nn = 4 * MEMORY_N * MEMORY_N;
    const times = (x) => `${fmt(x.growth / nn, 2)} n×n matrices`;
    lines.push(`- **Memory** at n = ${MEMORY_N}: one forward raises the peak RSS by ${fmtBytes(Math.max(0, m.ours.growth))} for attnmap (${times(m.ours)})` +
      `${m.ort ? `, ${fmtBytes(Math.max(0, m.ort.growth))} for onnxruntime-web (${times(m.ort)})` : ''}` +
      `${m.tf ? `, ${fmtBytes(Math.max(0, m.tf.growth))} for TF.js (${times(m.tf)})` : ''}. ` +
      'A graph of MatMul, Softmax and MatMul holds the n×n scores; attnmap with { weights: false } never allocates them.');
  }
  const gz = Object.fromEntries(r.sizes_gz.map((g) => [g.name.split(' ')[0] + (g.name.includes('embed') ? ' embed' : g.name.includes('core') ? ' core' : g.name.includes('raw') ? ' raw' : ''), g]));
  if (gz['attnmap embed'] && gz['onnxruntime-web,'] && gz['TF.js']) {
    lines.push(`- **Size**: the whole embed is ${fmtBytes(gz['attnmap embed'].gzip)} gzipped; onnxruntime-web's wasm build ${fmtBytes(gz['onnxruntime-web,'].gzip)}, TF.js core + wasm ${fmtBytes(gz['TF.js'].gzip)}.`);
  }
  // the benchmark itself keeps about one core busy: busy means other work on top of that
  const busy = Math.max(r.machine.loadStart, r.machine.loadEnd) > r.machine.cores + 1;
  lines.push(`- The machine is shared: the 1-minute load average was ${fmt(r.machine.loadStart, 2)} at the start and ${fmt(r.machine.loadEnd, 2)} at the end, on ${r.machine.cores} cores. ` +
    'Absolute times move between runs; the ratios, from interleaved samples, move less, but not to nothing. ' +
    (busy ? '**This run was taken on a busy machine** (load above the number of cores + 1, the benchmark\'s own process): other processes do not slow every ' +
      'implementation alike (in our runs onnxruntime-web at large n lost the most, for reasons not measured here), so treat the ' +
      'large-n ratios with care and rerun on an idle machine for fair ones.'
      : 'Runs on a busy machine (load above the number of cores + 1, the benchmark\'s own process) skew the ratios too: other processes do not slow every implementation alike.'));
  return lines.join('\n');
}

function markdown(r, body) {
  const m = r.machine;
  return `# Benchmarks

Generated by \`npm run bench\` (bench/bench.js) on ${m.date}. Do not edit by hand: every full run
rewrites this file (\`BENCH_QUICK=1 npm run bench\` is a ~25 s smoke run and does not).

## Machine

- CPU: ${m.cpu} (family ${m.family}, model ${m.model}, ${m.mhz} MHz reported), ${m.cores} cores, ${fmtBytes(m.memory)}; SIMD flags: ${m.simd}
- ${m.os}; Node ${m.node} (V8 ${m.v8}); gcc ${m.gcc}
- Peers: onnxruntime-web ${versionOf('onnxruntime-web')}, @tensorflow/tfjs-core ${versionOf('@tensorflow/tfjs-core')}, @tensorflow/tfjs-backend-wasm ${versionOf('@tensorflow/tfjs-backend-wasm')}
- Load average (1 min): ${fmt(m.loadStart, 2)} at the start, ${fmt(m.loadEnd, 2)} at the end
- Peak, for "% of peak": ${r.peak.gflops ? `${fmt(r.peak.gflops)} GFLOP/s` : `not measured (${r.peak.error})`}: the best of 31 runs of bench/peak.c
  (gcc -O2 -msse2): 12 independent chains of 4-wide SSE \`mulps\` + \`addps\` on one core. wasm simd128
  without relaxed SIMD has exactly these (4-wide mul and add, no fused multiply-add), so this is the
  most a single-threaded wasm kernel can reach here.
- Sources: ${r.sources.same ? `the committed web/wasm/attention.wasm was built from the current c_src/ (sources ${r.sources.now}), so native C and wasm run the same code.`
    : `**the committed web/wasm/attention.wasm was built from other sources (${r.sources.built}) than c_src/ now (${r.sources.now})**: the wasm columns measure the committed build, the native column the current c_src/.`}

## What is measured

- **attnmap**: \`attn.attention({ q, k, v }, { weights: false })\` through the public API, inputs \`{ data: Float32Array, shape }\`
  (validation, the copies into wasm memory and the output's copy out are included).
- **plain JS**: bench/plain.js, one query row at a time, sums in double, no allocation in the loops.
- **onnxruntime-web**: the wasm execution provider, \`env.wasm.numThreads = 1\`, \`env.wasm.simd = true\` (1.30 ships only the
  SIMD build), graph optimisation "all". The model is a bare attention graph written by bench/onnx-model.js, a
  protobuf encoder for just the fields needed: \`MatMul(q, Transpose(k)) → Mul(scale) → Softmax(axis −1) → MatMul(v)\`,
  ONNX opset 17 (IR 8), dynamic n and m, the scale a scalar initializer. Each forward wraps the same Float32Arrays in
  \`ort.Tensor\`s and awaits \`session.run\`.
- **TF.js wasm**: \`setThreadsCount(1)\`, \`tf.setBackend('wasm')\` (SIMD binary, no threads in Node);
  \`matMul(q, k, false, true)\`, \`mul(scale)\`, \`softmax\`, \`matMul(v)\` inside \`tf.tidy\`, including
  \`tensor2d\` of the inputs and \`dataSync()\` of the output, which is then disposed.
- **native C**: bench/native.c includes c_src/attention.c, gcc -O3 -march=native -ffp-contract=off, a child
  process that times \`attn_forward\` with weights = NULL and a workspace (no copies, no validation in JS) and prints
  its own medians. bench.js asks it for one sample at a time, in turn with the JS implementations, so that it runs on
  the same machine at the same moment.${r.nativeError ? ` **This run: native C not measured: ${r.nativeError}**` : ''}
- Inputs: q, k, v standard normal (seeded), n = m, d_k = d_v. Every output is compared with attnmap's
  before timing. Within a size the samples go round-robin between the implementations (the order rotating
  each round; the JS ones in one Node process, native C in its child); a sample is as many calls as take about
  ${SAMPLE_MS} ms, timed together, and the tables give the median sample, per call.

## Results

${body}

## GPT-2-small multi-head attention layer

One self-attention layer the size of GPT-2 small's: d_model = ${MHA.dModel}, ${MHA.heads} heads (d_head ${MHA.dModel / MHA.heads}),
q/k/v/output projections with biases, n = ${MHA.n} tokens, no mask, default scale 1/√d_head. Inputs
(bench/lib.js \`makeMhaInputs\`, seeded): x standard normal, the four (d_model, d_model) weights normal
with standard deviation 1/√d_model, the four biases normal with standard deviation 0.1.

- **attnmap**: \`attn.multiHeadAttention({ x, wq, wk, wv, wo, bq, bk, bv, bo }, { heads: ${MHA.heads}, weights: false })\`
  through the public API, every matrix \`{ data: Float32Array, shape }\`, output read as \`.output.data\`.
  Each call validates and copies x and the four ${MHA.dModel} × ${MHA.dModel} weights into wasm memory, and also
  returns \`concat\` and the ${MHA.heads} head outputs (copied out), which it cannot be told to skip.
- **onnxruntime-web** (wasm EP, 1 thread, SIMD, graph optimisation "all", as above): bench/onnx-model.js
  \`mhaModel\` writes the layer as an ONNX graph with the weights and biases as **initializers**
  (constants the optimiser sees; only x is fed per call, as a (1, n, ${MHA.dModel}) tensor):
  \`MatMul(x, W_q) + b_q\`, the same for K and V (three MatMul + Add), then the contrib op
  **\`com.microsoft.MultiHeadAttention\`** (opset import com.microsoft version 1, \`num_heads = ${MHA.heads}\`,
  inputs query, key, value of shape (1, n, ${MHA.dModel})), then \`MatMul(·, W_o) + b_o\`; ai.onnx opset 17, IR 8.
  ORT 1.30's wasm build accepts the contrib op. For comparison the same layer is also timed as a
  graph of plain ops: per-head \`Reshape\` (1, n, ${MHA.heads}, ${MHA.dModel / MHA.heads}) + \`Transpose\`, \`MatMul(Q_h, K_hᵀ)\`, \`Mul(scale)\`,
  \`Softmax\`, \`MatMul(V_h)\`, \`Transpose\` + \`Reshape\` back, then W_o. The sessions are created before any timing.
- **native C**: bench/native-mha.c linked with c_src/attention.c and c_src/mha.c (gcc -O3 -march=native
  -ffp-contract=off), a child process timing \`attn_mha_forward\` with kv, concat, weights and mask NULL
  and a workspace of \`attn_mha_workspace_size\` bytes allocated once.
- Every output is checked against attnmap's (max |difference| ≤ ${TOLERANCE}) before timing; then ${MHA.rounds} rounds,
  round-robin with the order rotating, one sample per implementation per round, medians. GFLOP/s counts
  4·2·n·d_model² (the four projections) + 4·n²·d_model (Q·Kᵀ and weights·V over all heads); softmax and biases are not counted.
  The load average at the start and end of the whole run is under "Machine" above.

${mhaReport(r)}

## In Chromium, with relaxed SIMD

${chromiumReport(r.chromium)}

## In Node, with relaxed SIMD switched on

${nodeRelaxedReport(r.nodeRelaxed)}

## More than one core

${poolReport(r.pool)}

## Issue 4's targets in this run

${targetsReport(r)}

## Reading

${reading(r)}
`;
}

// ----------------------------------------------------------------------------
// main

async function main() {
  const r = { machine: machine(), sources: sourcesMatchWasm() };
  progress(`${QUICK ? 'quick' : 'full'} run on ${r.machine.cpu}, ${r.machine.cores} cores, Node ${r.machine.node}`);
  if (!r.sources.same) progress(`note: web/wasm/attention.wasm was built from sources ${r.sources.built}, c_src/ is now ${r.sources.now}`);

  progress('peak: 4-wide SSE mul + add, one core');
  r.peak = peak();

  const impls = {};
  for (const name of IMPLS) {
    try { impls[name] = await loaders[name](); } catch (e) { progress(`${name}: failed to load: ${e.message}`); if (name === 'ours') throw e; }
  }
  // onnxruntime-web: one session per d_k, created now so that no timing includes its creation
  for (const d of new Set([...SIZES.map((x) => x.d), 8])) await impls.ort?.session(d);

  const nat = compileNative();
  r.nativeError = nat.error;
  let native = nat.exe ? new NativeChild(nat.exe) : null;
  if (nat.error) progress(`native C not measured: ${nat.error}`);

  r.sizes = [];
  for (const size of SIZES) {
    progress(`n = ${size.n}, d = ${size.d}: ${size.rounds} rounds`);
    try {
      r.sizes.push(await benchSize(impls, native, size));
    } catch (e) {
      if (!native?.exited) throw e;
      r.nativeError = e.message;                     // native C died: go on without it
      progress(e.message);
      native = null;
      r.sizes.push(await benchSize(impls, null, size));
    }
  }
  native?.close();

  progress(`multi-head layer: n = ${MHA.n}, d_model = ${MHA.dModel}, ${MHA.heads} heads, ${MHA.rounds} rounds`);
  const natMha = compileNativeMha();
  if (natMha.error) progress(`mha: native C not measured: ${natMha.error}`);
  r.mha = await benchMha(impls, natMha.exe);
  if (natMha.error) r.mha.errors.native = natMha.error;

  r.pool = await benchPool({ quick: QUICK, progress });
  r.chromium = await benchChromium({ quick: QUICK, root, progress });
  r.nodeRelaxed = benchNodeRelaxed({ quick: QUICK, progress });

  progress(`tiny calls: ${TINY.batches} batches of ${TINY.calls}`);
  r.tiny = await tinyCalls(impls);

  progress(`cold start: ${COLD_RUNS} fresh processes each`);
  r.cold = coldStarts(['ours', 'ort', 'tf'].filter((x) => impls[x]));

  progress(`memory at n = ${MEMORY_N}`);
  r.memory = memory(['ours', 'ort', 'tf'].filter((x) => impls[x]));

  r.sizes_gz = gzipSizes();
  r.machine.loadEnd = os.loadavg()[0];

  const wrong = [];
  for (const x of r.sizes) for (const [c, v] of Object.entries(x.results)) if (!v.ok) wrong.push(`${c} at n = ${x.n}`);
  for (const [c, v] of Object.entries(r.mha.results)) if (!v.ok) wrong.push(`${c} in the multi-head layer`);
  for (const s of r.chromium.sizes ?? []) for (const [c, v] of Object.entries(s.results)) if (!(v.diff <= TOLERANCE)) wrong.push(`${c} in Chromium at n = ${s.n}`);
  for (const s of r.nodeRelaxed.sizes ?? []) for (const [c, v] of Object.entries(s.results)) if (!(v.diff <= TOLERANCE)) wrong.push(`${c} in Node with relaxed SIMD at n = ${s.n}`);
  for (const x of r.pool.rows) if (!x.same) wrong.push(`the pool at n = ${x.n}${x.causal ? ' (causal)' : ''}`);

  const body = report(r);
  const m = r.machine;
  console.log(`\n${m.cpu}, ${m.cores} cores, Node ${m.node}, ${m.date}, load ${fmt(m.loadStart, 2)} → ${fmt(m.loadEnd, 2)}` +
    `${r.peak.gflops ? `, peak ${fmt(r.peak.gflops)} GFLOP/s` : ''}${r.nativeError ? `\nnative C not measured: ${r.nativeError}` : ''}\n`);
  console.log(body);
  console.log(`\n## GPT-2-small multi-head attention layer\n\n${mhaReport(r)}`);
  console.log(`\n## In Chromium, with relaxed SIMD\n\n${chromiumReport(r.chromium)}`);
  console.log(`\n## In Node, with relaxed SIMD switched on\n\n${nodeRelaxedReport(r.nodeRelaxed)}`);
  console.log(`\n## More than one core\n\n${poolReport(r.pool)}`);
  console.log(`\n## Issue 4's targets in this run\n\n${targetsReport(r)}`);
  console.log(`\n${reading(r)}\n`);
  if (wrong.length) {
    console.error(`bench: outputs that disagree with attnmap by more than ${TOLERANCE}: ${wrong.join(', ')}`);
    process.exitCode = 1;
  }
  if (!QUICK) {
    fs.mkdirSync(path.join(root, 'docs'), { recursive: true });
    fs.writeFileSync(path.join(root, 'docs/BENCHMARKS.md'), markdown(r, body));
    progress('wrote docs/BENCHMARKS.md');
  }
}

await main();
