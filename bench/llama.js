// llama.js - bench.js's section on the LLaMA family (issue 22): Qwen2.5-0.5B's shape through
// attnmap/model, with its weights in BF16 and widened to F32, against onnxruntime-web running the
// same weights, in one process, interleaved; and Qwen3-0.6B's shape, attnmap alone.
//
//   node bench/bench.js --only llama     this section alone (BENCH_QUICK=1: a smoke run on SmolLM2-135M's shape)
//
// Into a temporary folder, removed at the end: scripts/random-checkpoint.js writes the BF16
// checkpoint (random weights, the exact shapes); bench/model/widen.js widens it to F32 (the same
// numbers); bench/model/make_onnx_llama.py (Debian's /usr/bin/python3 with torch) exports the same
// forward pass over those weights to ONNX, as float32 with external data, and torch's own logits
// over the first forward's ids. Then:
//   (1) forward over 32 and 128 tokens: attnmap BF16, attnmap F32, ORT F32, the logits compared
//       first (with ORT's, and torch's where it has them), samples round-robin, medians;
//   (2) one-token KV-cache steps ending at contexts 32 and 128: attnmap BF16 against F32;
//   (3) the BF16 step at context 128 against the BF16 forward over 128 tokens;
//   (4) load time and peak RSS of each checkpoint in a fresh process (bench/model/load.js);
//   and Qwen3-0.6B's shape (BF16): load, peak RSS, forward over 32 tokens, decode steps.
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeRandomCheckpoint } from '../scripts/random-checkpoint.js';
import { maxAbsDiff, median } from './lib.js';
import { PYTHON, fileSizes, missing, ortThreads, tokenIds } from './model.js';
import { widenCheckpoint } from './model/widen.js';
import { LLAMA, LLAMA_TOLERANCE, here, progress, root } from './plan.js';
import { roundRobin } from './runner.js';

const now = () => performance.now();
const WASM = 'web/wasm/attention-model.wasm';

/** The model build measured: the commit that last changed it, whether the working tree differs, its hash. */
export function wasmBuild() {
  const git = (args) => { try { return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(); } catch { return '?'; } };
  const sha = crypto.createHash('sha256').update(fs.readFileSync(path.join(root, WASM))).digest('hex').slice(0, 12);
  return { commit: git(['log', '-1', '--format=%h', '--', WASM]), modified: git(['status', '--porcelain', '--', WASM]) !== '', sha };
}

/**
 * The section's measurements: { skipped } or { failed } with the reason, or { shape, config,
 * files, made, threads, wasm, load, forward, decode, kvRatio, second }. ort: onnxruntime-web's
 * module (numThreads already 1).
 */
export async function benchLlama({ ort }) {
  const why = missing();
  if (why) { progress(`llama: skipped: ${why}`); return { skipped: why }; }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-bench-llama-'));
  const r = { shape: LLAMA.shape, wasm: { start: wasmBuild() }, threads: ortThreads(ort) };
  try {
    const at = { bf16: path.join(dir, 'bf16'), f32: path.join(dir, 'f32'), onnx: path.join(dir, 'onnx') };
    writeCheckpoints(r, at);
    r.config = JSON.parse(fs.readFileSync(path.join(at.bf16, 'config.json'), 'utf8'));
    const V = r.config.vocab_size;
    r.load = {
      bf16: freshLoad('attnmap', at.bf16, V), f32: freshLoad('attnmap', at.f32, V), ort: freshLoad('ort', at.onnx, V),
    };
    Object.assign(r, await inProcess(ort, at, V));
    if (LLAMA.second) r.second = await secondShape(path.join(dir, LLAMA.second));
    return r;
  } catch (e) {
    progress(`llama: failed: ${e.stack ?? e.message}`);
    return { ...r, failed: e.message.split('\n')[0] };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    r.wasm.end = wasmBuild();
  }
}

// the three checkpoints: BF16 (random-checkpoint.js), F32 (widened), ONNX (make_onnx_llama.py)
function writeCheckpoints(r, at) {
  progress(`llama: ${LLAMA.shape} BF16 checkpoint (scripts/random-checkpoint.js), widened to F32`);
  r.parameters = writeRandomCheckpoint(LLAMA.shape, at.bf16, { dtype: 'BF16' }).parameters;
  widenCheckpoint(at.bf16, at.f32);
  progress('llama: make_onnx_llama.py (reads the BF16 file, exports float32 with external data; a few minutes)');
  const made = execFileSync(PYTHON, [path.join(here, 'model/make_onnx_llama.py'), at.bf16, at.onnx, '--reference-n', String(LLAMA.forwardN[0])],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 });
  r.made = made.trim().split('\n');
  r.files = { bf16: fileSizes(at.bf16), f32: fileSizes(at.f32), onnx: fileSizes(at.onnx) };
}

// (4) one checkpoint loaded in a fresh process, one forward over 32 tokens
function freshLoad(which, folder, V) {
  progress(`llama: ${which} loads ${path.basename(folder)} in a fresh process`);
  const p = spawnSync(process.execPath, ['--expose-gc', path.join(here, 'model/load.js'), which, folder, '32', String(V)], { encoding: 'utf8', cwd: root });
  if (p.status !== 0) {
    const error = p.stderr.trim().split('\n').filter((l) => /Error|error/.test(l)).slice(0, 2).join(' ') || `exit ${p.status ?? p.signal}`;
    progress(`llama: load ${which} ${path.basename(folder)}: ${error}`);
    return { error };
  }
  return JSON.parse(p.stdout.trim().split('\n').pop());
}

// (1) to (3), the three models in this process
async function inProcess(ort, at, V) {
  const { loadModel } = await import('../web/model/model-node.js');
  progress('llama: attnmap BF16, attnmap F32 and onnxruntime-web F32 loaded in this process');
  const models = { bf16: await loadModel(at.bf16, { threads: 1 }), f32: await loadModel(at.f32, { threads: 1 }) };   // one thread, as ORT here
  const session = await ort.InferenceSession.create(path.join(at.onnx, 'model.onnx'), {
    executionProviders: ['wasm'], graphOptimizationLevel: 'all',
    externalData: [{ path: 'model.onnx.data', data: path.join(at.onnx, 'model.onnx.data') }],
  });
  try {
    const calls = {
      bf16: (ids) => models.bf16.forward(ids).logits.data,
      f32: (ids) => models.f32.forward(ids).logits.data,
      ort: async (ids) => (await session.run({ input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]) })).logits.data,
    };
    const reference = readReference(at.onnx);
    const forward = [];
    for (const n of LLAMA.forwardN) forward.push(await forwards(calls, n, V, n === LLAMA.forwardN[0] ? reference : null));
    const decode = await decodeSteps(models, V);
    const c = Math.max(...LLAMA.contexts), full = forward.find((x) => x.n === c)?.results.bf16.median;
    const step = decode.find((x) => x.context === c)?.results.bf16.median;
    return { forward, decode, kvRatio: full && step ? { context: c, step, full, ratio: step / full } : null };
  } finally {
    models.bf16.dispose();
    models.f32.dispose();
    await session.release();
  }
}

// torch's float32 logits over the first forward's ids (make_onnx_llama.py --reference-n)
function readReference(dir) {
  const b = fs.readFileSync(path.join(dir, 'reference.f32'));
  return new Float32Array(b.buffer, b.byteOffset, b.length / 4);
}

// (1) the three forwards over n tokens: each checked against ORT's logits (and ORT's against
// torch's where given) within LLAMA_TOLERANCE of the largest |logit|, then one call per sample,
// round-robin; the checking call is the warm-up
async function forwards(calls, n, V, reference) {
  const ids = tokenIds(n, V), rounds = LLAMA.rounds[n];
  progress(`llama: forward over ${n} tokens, ${rounds} rounds`);
  const ref = await calls.ort(ids);
  const maxLogit = ref.reduce((m, x) => Math.max(m, Math.abs(x)), 0), limit = LLAMA_TOLERANCE * maxLogit;
  const row = { n, rounds, maxLogit, limit, results: {}, torch: reference ? { ort: maxAbsDiff(ref, reference) } : null };
  const live = [];
  for (const [name, f] of Object.entries(calls)) {
    const out = name === 'ort' ? ref : await f(ids);
    const diff = maxAbsDiff(out, ref);
    if (row.torch && name !== 'ort') row.torch[name] = maxAbsDiff(out, reference);
    row.results[name] = { diff, ok: diff <= limit };
    if (!(diff <= limit)) { progress(`llama: ${name} over ${n} tokens disagrees with ORT (max |diff| ${diff}, limit ${limit}); not timed`); continue; }
    live.push({ name, ms: [], sample: async () => { const t = now(); await f(ids); return now() - t; } });
  }
  await roundRobin(live, rounds);
  for (const x of live) Object.assign(row.results[x.name], { median: median(x.ms), min: Math.min(...x.ms), samples: x.ms.length });
  return row;
}

// One generation from a prompt of context - steps tokens: the prompt's pass (not timed) gives the
// first new token, then `steps` one-token steps with the KV cache, the last at `context` keys.
// Returns the steps' times (ms) and the ids.
async function stepsTo(model, context, V, steps = LLAMA.steps) {
  const prompt = tokenIds(context - steps, V), ms = [], ids = [];
  let t0 = now();
  for await (const s of model.generate(prompt, { maxTokens: steps + 1, stop: false })) {
    const t = now();
    if (ids.length) ms.push(t - t0);
    ids.push(s.id);
    t0 = t;
  }
  return { ms, ids };
}

// (2) the steps ending at each context, BF16 and F32, round-robin: a sample is one generation
// (its steps' mean), the table shows the median step over all runs
async function decodeSteps(models, V) {
  const cells = [];
  for (const context of LLAMA.contexts) {
    for (const name of ['bf16', 'f32']) {
      const cell = { name: `${name}@${context}`, which: name, context, ms: [], steps: [], ids: [] };
      cell.sample = async () => {
        const s = await stepsTo(models[name], context, V);
        cell.steps.push(...s.ms);
        cell.ids.push(s.ids.join(','));
        return s.ms.reduce((a, b) => a + b, 0) / s.ms.length;
      };
      cells.push(cell);
    }
  }
  progress(`llama: KV-cache steps ending at contexts ${LLAMA.contexts.join(', ')}, BF16 and F32, ${LLAMA.decodeRuns} runs of ${LLAMA.steps} steps each`);
  for (const name of ['bf16', 'f32']) await stepsTo(models[name], LLAMA.steps + 2, V);   // warm-up
  await roundRobin(cells, LLAMA.decodeRuns);
  return LLAMA.contexts.map((context) => {
    const [b, f] = ['bf16', 'f32'].map((w) => cells.find((c) => c.which === w && c.context === context));
    const res = (c) => ({ median: median(c.steps), min: Math.min(...c.steps), steps: c.steps.length, runs: c.ms.length, sameIds: new Set(c.ids).size === 1 });
    return { context, from: context - LLAMA.steps + 1, results: { bf16: res(b), f32: res(f) }, bf16IdsEqualF32: b.ids[0] === f.ids[0] };
  });
}

// Qwen3-0.6B's shape, attnmap alone, BF16: a fresh-process load, then in this process a forward
// over secondN tokens and the KV-cache steps ending at contexts[0], alternating
async function secondShape(dir) {
  progress(`llama: ${LLAMA.second} BF16 checkpoint`);
  const written = writeRandomCheckpoint(LLAMA.second, dir, { dtype: 'BF16' });
  const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const V = config.vocab_size;
  const out = { shape: LLAMA.second, config, parameters: written.parameters, bytes: written.bytes, load: freshLoad('attnmap', dir, V) };
  const { loadModel } = await import('../web/model/model-node.js');
  const model = await loadModel(dir, { threads: 1 });
  try {
    const n = LLAMA.secondN, ids = tokenIds(n, V), c = LLAMA.contexts[0];
    const first = model.forward(ids).logits.data;
    out.finite = first.every(Number.isFinite);
    out.maxLogit = first.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    await stepsTo(model, LLAMA.steps + 2, V);                                  // warm-up
    progress(`llama: ${LLAMA.second}: forward over ${n} tokens and steps ending at context ${c}, ${LLAMA.secondRuns} rounds`);
    const steps = [];
    const live = [
      { name: 'forward', ms: [], sample: async () => { const t = now(); model.forward(ids); return now() - t; } },
      { name: 'steps', ms: [], sample: async () => { const s = await stepsTo(model, c, V); steps.push(...s.ms); return median(s.ms); } },
    ];
    await roundRobin(live, LLAMA.secondRuns);
    out.forward = { n, median: median(live[0].ms), min: Math.min(...live[0].ms), samples: live[0].ms.length };
    out.decode = { context: c, from: c - LLAMA.steps + 1, median: median(steps), steps: steps.length, tokensPerS: 1000 / median(steps) };
  } finally {
    model.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/** Disagreements for bench.js's exit code. */
export function llamaDisagreements(m) {
  const wrong = [];
  for (const x of m?.forward ?? []) for (const [c, v] of Object.entries(x.results)) if (!v.ok) wrong.push(`${c} in the LLaMA forward at n = ${x.n}`);
  for (const x of m?.forward ?? []) if (x.torch && !(x.torch.ort <= x.limit)) wrong.push(`onnxruntime-web against torch in the LLaMA forward at n = ${x.n}`);
  return wrong;
}
