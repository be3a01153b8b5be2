// model.js - bench.js's section on the whole model (issue 15): GPT-2 small's shape through
// attnmap/model against onnxruntime-web running the same weights, in one process, interleaved.
//
//   node bench/bench.js --only model     this section alone (BENCH_QUICK=1: n = 64 only, a short decode)
//
// bench/model/make_onnx.py (Debian's /usr/bin/python3 with torch) writes a random seeded
// checkpoint (model.safetensors + config.json) and torch.onnx.export of the same module
// (model.onnx) into a temporary folder, removed at the end. Then:
//   (a) forward over 64 and 256 tokens: model.forward(ids), model.forward(ids, { attention: true }),
//       ORT session.run; the logits compared first (max |diff|), samples round-robin, medians;
//   (b) greedy decoding from a prompt: model.generate (KV cache), and recomputing the whole
//       sequence each step (attnmap model.forward, ORT session.run: the exported graph has no cache);
//   (c) one KV-cache step at the last context against one full forward over that many tokens;
//   (d) load time, RSS and wasm memory after loading, in fresh processes (bench/model/load.js).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fmt, fmtBytes, maxAbsDiff, median, table } from './lib.js';
import { versionOf } from './machine.js';
import { MODEL, MODEL_TOLERANCE, here, progress, root } from './plan.js';
import { roundRobin } from './runner.js';
import { writeSection } from './sections.js';

export const PYTHON = '/usr/bin/python3';
const now = () => performance.now();
export const argmaxLast = (logits, V) => {
  let best = 0, at = logits.length - V;
  for (let j = 1; j < V; j++) if (logits[at + j] > logits[at + best]) best = j;
  return best;
};
// seeded token ids, the same in every run
export const tokenIds = (n, V) => Array.from({ length: n }, (_, i) => (i * 7919 + 13) % V);

/** Why the section cannot run here (no torch for /usr/bin/python3), or null. */
export function missing() {
  const p = spawnSync(PYTHON, ['-c', 'import torch; print(torch.__version__)'], { encoding: 'utf8' });
  if (p.error) return `${PYTHON} not found (${p.error.code})`;
  if (p.status !== 0) return `${PYTHON} has no torch (${p.stderr.trim().split('\n').pop()})`;
  return null;
}

/**
 * The section's measurements: { skipped } with the reason, or { torch, threads, forward: [...],
 * decode, kvRatio, load, files }. ort: onnxruntime-web's module (its numThreads already set to 1).
 */
export async function benchModel({ ort }) {
  const why = missing();
  if (why) { progress(`model: skipped: ${why}`); return { skipped: why }; }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-bench-model-'));
  try {
    progress(`model: make_onnx.py into ${dir}`);
    const made = execFileSync(PYTHON, [path.join(here, 'model/make_onnx.py'), dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
    const r = { made: made.trim().split('\n')[0], config, files: fileSizes(dir), threads: ortThreads(ort) };
    r.load = freshLoads(dir, Math.max(...MODEL.forwardN));
    const { loadModel } = await import('../web/model/model-node.js');
    const model = await loadModel(dir, { threads: 1 });   // one thread, as ORT here (bench/threads.js: 2)
    const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
    try {
      const V = config.vocab_size;
      const ortLogits = async (ids) => (await session.run({ input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]) })).logits.data;
      r.forward = [];
      for (const n of MODEL.forwardN) r.forward.push(await forwards(model, ortLogits, n, V));
      r.decode = await decoding(model, ortLogits, V);
      const full = r.forward.find((x) => x.n === r.decode.context)?.results.attnmap.median;
      r.kvRatio = full ? { step: r.decode.lastStep, full, ratio: r.decode.lastStep / full } : null;
    } finally {
      model.dispose();
      await session.release();
    }
    return r;
  } catch (e) {
    progress(`model: failed: ${e.stack ?? e.message}`);
    return { failed: e.message.split('\n')[0] };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const fileSizes = (dir) => Object.fromEntries(fs.readdirSync(dir).map((f) => [f, fs.statSync(path.join(dir, f)).size]));

// ORT's thread count: what the bench set, and what it would pick by itself (ort.env.wasm's
// default when numThreads is unset: 1 in a browser page without cross-origin isolation, else
// min(4, ⌈cores / 2⌉); in Node the cores are os.cpus().length)
export function ortThreads(ort) {
  const cores = os.cpus().length;
  return { used: ort.env.wasm.numThreads, default: Math.min(4, Math.ceil(cores / 2)), cores };
}

// (d) each model loaded in a fresh process, one forward over n tokens
function freshLoads(dir, n) {
  const out = {};
  for (const which of ['attnmap', 'ort']) {
    progress(`model: ${which} loaded in a fresh process`);
    const p = spawnSync(process.execPath, ['--expose-gc', path.join(here, 'model/load.js'), which, dir, String(n)], { encoding: 'utf8', cwd: root });
    if (p.status !== 0) { out[which] = { error: p.stderr.trim().split('\n').slice(-2).join(' ') }; progress(`model: load ${which}: ${out[which].error}`); continue; }
    out[which] = JSON.parse(p.stdout.trim().split('\n').pop());
  }
  return out;
}

// (a) the three forwards over n tokens: checked against each other, one warm-up call each, then
// one call per sample, round-robin
async function forwards(model, ortLogits, n, V) {
  const ids = tokenIds(n, V);
  const rounds = MODEL.rounds[n];
  progress(`model: forward over ${n} tokens, ${rounds} rounds`);
  const calls = {
    attnmap: () => model.forward(ids).logits.data,
    attention: () => model.forward(ids, { attention: true }).logits.data,
    ort: () => ortLogits(ids),
  };
  const row = { n, rounds, results: {} };
  const ref = calls.attnmap();
  const live = [];
  for (const [name, f] of Object.entries(calls)) {
    const diff = maxAbsDiff(await f(), ref);
    row.results[name] = { diff, ok: diff <= MODEL_TOLERANCE };
    if (!(diff <= MODEL_TOLERANCE)) { progress(`model: ${name} at n = ${n} disagrees with attnmap (max |diff| ${diff}); not timed`); continue; }
    live.push({ name, ms: [], sample: async () => { const t = now(); await f(); return now() - t; } });
  }
  row.maxLogit = ref.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
  await roundRobin(live, rounds);
  for (const x of live) Object.assign(row.results[x.name], { median: median(x.ms), min: Math.min(...x.ms), samples: x.ms.length });
  return row;
}

// (b) and (c): greedy decoding, prompt + MODEL.newTokens + 1 tokens with the KV cache: the first
// comes from the prompt's pass, the others are one-token steps at contexts prompt + 1 .. prompt
// + newTokens. Recomputing: the step that predicts token t is a full forward over the t tokens
// before it; timed at every MODEL.stride-th step of the same span (the sequence the KV cache
// produced), its greedy token checked against the KV cache's. One sample each per round.
async function decoding(model, ortLogits, V) {
  const { prompt: P, newTokens: N, kvReps, stride } = MODEL;
  const prompt = tokenIds(P, V);
  progress(`model: greedy decoding, ${P}-token prompt, ${N} KV-cache steps (context ${P + 1} to ${P + N}), ${kvReps} runs; recomputing every ${stride}th step`);
  const kv = { runs: [], seqs: [] };
  const generate = async () => {
    const steps = [], seq = [...prompt];
    let t0 = now();
    for await (const s of model.generate(prompt, { maxTokens: N + 1 })) { const t = now(); steps.push(t - t0); seq.push(s.id); t0 = t; }
    kv.seqs.push(seq);
    return steps;
  };
  const first = await generate();                       // warm-up, and the sequence the recompute steps follow
  const seq = kv.seqs[0];
  // the recomputed steps: the one predicting seq[c] from seq[0 .. c), for c = P + stride - 1, ..., up to P + N
  const contexts = [];
  for (let c = P + N; c > P; c -= stride) contexts.unshift(c);
  const recompute = (name, f) => {
    const x = { name, ms: [], max: contexts.length, agree: 0, i: 0 };
    x.sample = async () => {
      const c = contexts[x.i++];
      const t = now();
      const id = argmaxLast(await f(seq.slice(0, c)), V);
      const ms = now() - t;
      if (id === seq[c]) x.agree++;
      return ms;
    };
    return x;
  };
  const live = [
    { name: 'kv', ms: [], max: kvReps, sample: async () => { const steps = await generate(); kv.runs.push(steps); return steps.slice(1).reduce((a, b) => a + b, 0); } },
    recompute('attnmap', (ids) => model.forward(ids).logits.data),
    recompute('ort', (ids) => ortLogits(ids)),
  ];
  await ortLogits(prompt);                              // warm-up at this length
  await roundRobin(live, Math.max(kvReps, contexts.length));
  const [kvx, am, ox] = live;
  const sameIds = kv.seqs.every((s) => s.every((id, i) => id === seq[i]));
  return {
    prompt: P, newTokens: N, context: P + N, contexts, warmFirst: first[0],
    kv: {
      runs: kv.runs.length, tokensPerS: (1000 * N) / median(kvx.ms), stepMedian: median(kv.runs.flatMap((s) => s.slice(1))),
      firstToken: median(kv.runs.map((s) => s[0])), withPrompt: (1000 * (N + 1)) / median(kv.runs.map((s) => s.reduce((a, b) => a + b, 0))), sameIds,
    },
    // one step at the last context (P + N): the last step of each run
    lastStep: median(kv.runs.map((s) => s[s.length - 1])),
    recompute: Object.fromEntries([am, ox].map((x) => [x.name, {
      steps: x.ms.length, meanMs: x.ms.reduce((a, b) => a + b, 0) / x.ms.length, medianMs: median(x.ms), agree: x.agree,
      tokensPerS: (1000 * x.ms.length) / x.ms.reduce((a, b) => a + b, 0),
    }])),
  };
}

// ---------------------------------------------------------------------------
// the report

export const MODEL_HEADING = '## GPT-2 small, the whole model (attnmap/model)';

/** The section's text (without its heading): method, tables, targets. m = r.model, machine = r.machine. */
export function modelReport(m, machine, command) {
  if (!m) return 'Not measured.';
  const head = `Measured by \`${command}\` (bench/model.js) on ${machine.date}: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ` +
    `load average ${fmt(machine.loadStart, 2)} at the start of the run.`;
  if (m.skipped) return `${head}\n\n**Not measured: ${m.skipped}.** bench/model/make_onnx.py needs Debian's /usr/bin/python3 with torch (python3-torch) to write the checkpoint and its ONNX export.`;
  if (m.failed) return `${head}\n\n**Not measured: the section failed: ${m.failed}.**`;
  const out = [head, ''];
  const c = m.config, th = m.threads;
  out.push(`- The model: ${m.made.replace(/;/g, ',')}: GPT-2 small's shape (${c.n_layer} layers, ${c.n_head} heads, n_embd ${c.n_embd}, vocabulary ${c.vocab_size}), ` +
    `random seeded weights written by bench/model/make_onnx.py into a temporary folder (model.safetensors ${fmtBytes(m.files['model.safetensors'])}, ` +
    `model.onnx ${fmtBytes(m.files['model.onnx'])}, torch.onnx.export of the same module, opset 17), removed after the run.`);
  out.push(`- **attnmap**: \`loadModel(folder)\` of attnmap/model, one thread (wasm, SIMD, no threads). **onnxruntime-web** ${versionOf('onnxruntime-web')}: ` +
    `wasm execution provider, graph optimisation "all", **${th.used} thread${th.used === 1 ? '' : 's'}** (\`env.wasm.numThreads\`, as in the rest of this benchmark). ` +
    `Its default in Node is min(4, ⌈cores / 2⌉) = ${th.default} on this ${th.cores}-core machine, ` +
    (th.default === th.used ? 'the same, so these figures are also its default.' : `**not measured here: its figures with ${th.default} threads would differ**.`) +
    ' The exported graph has no KV cache: ORT can only recompute the sequence.');
  out.push('- Forward: token ids (seeded) in, logits (n, vocabulary) out as a Float32Array, through each public API (attnmap: `model.forward(ids)` ' +
    'and `model.forward(ids, { attention: true })`, which also returns every layer\'s and head\'s (n, n) weights; ORT: `session.run` with an int64 tensor). ' +
    'The logits are compared before timing; one warm-up call each; then one call per sample, round-robin with the order rotating each round; medians.');
  out.push('');
  out.push(`### Forward over n tokens: median ms (best), ratio = time ÷ onnxruntime-web's time\n`);
  out.push(table(['n', 'attnmap', 'attnmap { attention: true }', `onnxruntime-web (${th.used} thread)`, 'attnmap ÷ ORT', 'attention ÷ ORT', 'max \\|diff\\| logits vs ORT', 'samples'],
    m.forward.map((x) => {
      const a = x.results.attnmap, w = x.results.attention, o = x.results.ort;
      const t = (v) => (v?.median ? `${fmt(v.median)} (${fmt(v.min)})` : '–');
      return [x.n, t(a), t(w), t(o), o?.median ? `${fmt(a.median / o.median)}×` : '–', o?.median && w?.median ? `${fmt(w.median / o.median)}×` : '–',
        `${o.diff.toExponential(1)}${o.ok ? '' : ' **WRONG**'}`, a.samples];
    })));
  out.push(`\nLogits reach ±${fmt(Math.max(...m.forward.map((x) => x.maxLogit)))}; the agreement limit is ${MODEL_TOLERANCE}. ` +
    `With and without attention attnmap's logits differ by at most ${fmt(Math.max(...m.forward.map((x) => x.results.attention.diff)))}.`);
  const d = m.decode;
  out.push(`\n### Greedy decoding: ${d.newTokens} new tokens after a ${d.prompt}-token prompt (context ${d.prompt + 1} to ${d.context})\n`);
  const rec = (x) => `${fmt(x.tokensPerS)} tokens/s`;
  out.push(table(['how', 'tokens/s', 'ms per token', 'samples', 'greedy ids = the KV cache\'s'], [
    ['attnmap `model.generate`, KV cache: one-token steps', `**${fmt(d.kv.tokensPerS)}**`, fmt(1000 / d.kv.tokensPerS), `${d.kv.runs} runs × ${d.newTokens} steps`, d.kv.sameIds ? 'yes (every run)' : '**no**'],
    ['the same, counting the prompt\'s pass (first token)', fmt(d.kv.withPrompt), `first token ${fmt(d.kv.firstToken)}`, `${d.kv.runs} runs`, '–'],
    ['attnmap recomputing: `model.forward(sequence so far)` each step', rec(d.recompute.attnmap).replace(' tokens/s', ''), fmt(d.recompute.attnmap.meanMs), `${d.recompute.attnmap.steps} steps`, `${d.recompute.attnmap.agree} of ${d.recompute.attnmap.steps}`],
    [`onnxruntime-web recomputing: \`session.run\` each step (${th.used} thread)`, rec(d.recompute.ort).replace(' tokens/s', ''), fmt(d.recompute.ort.meanMs), `${d.recompute.ort.steps} steps`, `${d.recompute.ort.agree} of ${d.recompute.ort.steps}`],
  ], [':--', '--:', '--:', '--:', '--:']));
  out.push(`\nKV cache: tokens/s = ${d.newTokens} ÷ the median run's time of its one-token steps (the prompt's pass excluded; ` +
    `the second row includes it). Recomputing: every step is a full forward over the sequence so far with all its logits (what the exported graph does); ` +
    `the steps at contexts ${d.contexts.join(', ')} (every ${MODEL.stride}th of the span, the sequence the KV cache produced) were timed, ` +
    `tokens/s = steps ÷ their total time; each step's greedy token is checked against the KV cache's. ` +
    `KV cache ÷ recomputing: ${fmt(d.kv.tokensPerS / d.recompute.attnmap.tokensPerS)}× attnmap's own recomputation, ${fmt(d.kv.tokensPerS / d.recompute.ort.tokensPerS)}× onnxruntime-web's.`);
  out.push(`\n### Load and memory (fresh process each, bench/model/load.js)\n`);
  const L = m.load;
  const lrow = (name, label) => {
    const x = L[name];
    if (!x || x.error) return [label, `not measured: ${x?.error ?? '?'}`, '–', '–', '–', '–'];
    return [label, fmt(x.loadMs), fmtBytes(x.loaded.rss), fmtBytes(x.loaded.wasm), fmtBytes(x.afterForward.rss), `${fmtBytes(x.afterForward.wasm)}; peak RSS ${fmtBytes(x.afterForward.peak)}`];
  };
  out.push(table(['', 'load ms', 'RSS after loading', 'wasm memory after loading', 'RSS after one forward', `wasm memory after it (n = ${Math.max(...MODEL.forwardN)})`],
    [lrow('attnmap', 'attnmap `loadModel(folder)`'), lrow('ort', 'onnxruntime-web `InferenceSession.create(model.onnx)`')]));
  out.push('\nThe float32 parameters are ' + fmtBytes(4 * paramCount(c)) + '. Load = from the call to a usable model, the files already in the page cache. ' +
    'wasm memory = the exported memory of every WebAssembly instance in the process; RSS from /proc/self/status after a GC.');
  out.push(`\n### Issue 15's targets in this run\n`);
  out.push(modelTargets(m));
  return out.join('\n');
}

const paramCount = (c) => c.vocab_size * c.n_embd + c.n_positions * c.n_embd + c.n_layer * (12 * c.n_embd * c.n_embd + 13 * c.n_embd) + 2 * c.n_embd;

function modelTargets(m) {
  const yes = (ok) => (ok ? 'met' : '**not met**');
  const rows = [];
  for (const x of m.forward) {
    const a = x.results.attnmap?.median, o = x.results.ort?.median;
    if (a && o) rows.push([`forward over ${x.n} tokens ≤ 1.0× onnxruntime-web's time (${m.threads.used} thread)`, `${fmt(a / o)}× (${fmt(a)} ms against ${fmt(o)} ms)`, yes(a <= o)]);
  }
  if (m.kvRatio) {
    const k = m.kvRatio;
    rows.push([`one KV-cache step at context ${m.decode.context} ≤ 1/8 of a forward over ${m.decode.context} tokens`,
      `1/${fmt(1 / k.ratio)} = ${fmt(k.ratio)} (${fmt(k.step)} ms against ${fmt(k.full)} ms)`, yes(k.ratio <= 1 / 8)]);
  } else rows.push(['one KV-cache step at context 256 ≤ 1/8 of a full forward', `not measured in this run (no forward over ${m.decode.context} tokens${MODEL.forwardN.length < 2 ? ': quick mode' : ''})`, '–']);
  return table(['target (issue 15)', 'this run', ''], rows, [':--', ':--', ':--']);
}

/** Disagreements for bench.js's exit code. */
export function modelDisagreements(m) {
  const wrong = [];
  for (const x of m?.forward ?? []) for (const [c, v] of Object.entries(x.results)) if (!v.ok) wrong.push(`${c} in the model forward at n = ${x.n}`);
  if (m?.decode && !m.decode.kv.sameIds) wrong.push('the KV cache\'s greedy ids between runs');
  return wrong;
}

/** bench.js --only model: the machine, this section, its text on the console and (not in quick mode) in docs/BENCHMARKS.md. */
export async function modelOnly(r, { quick }) {
  const command = `${quick ? 'BENCH_QUICK=1 ' : ''}node bench/bench.js --only model`;
  let ort = null;
  try { ({ ort } = await (await import('./impls.js')).loadOrt()); } catch (e) { progress(`onnxruntime-web failed to load: ${e.message}`); }
  r.model = ort ? await benchModel({ ort }) : { skipped: 'onnxruntime-web did not load' };
  const text = modelReport(r.model, r.machine, command);
  console.log(`\n${MODEL_HEADING}\n\n${text}\n`);
  const wrong = modelDisagreements(r.model);
  if (wrong.length) { console.error(`bench: disagreements: ${wrong.join(', ')}`); process.exitCode = 1; }
  if (!quick) {
    writeSection(path.join(root, 'docs/BENCHMARKS.md'), MODEL_HEADING, text);
    progress('wrote the model section of docs/BENCHMARKS.md');
  }
}
