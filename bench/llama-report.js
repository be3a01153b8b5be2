// llama-report.js - bench/llama.js's measurements as text: the section of docs/BENCHMARKS.md on
// the LLaMA family (tables, targets met or missed), and `node bench/bench.js --only llama`.
import path from 'node:path';
import { fmt, fmtBytes, table } from './lib.js';
import { benchLlama, llamaDisagreements } from './llama.js';
import { versionOf } from './machine.js';
import { MODEL_HEADING } from './model.js';
import { LLAMA, LLAMA_TOLERANCE, progress, root } from './plan.js';
import { writeSection } from './sections.js';

export const LLAMA_HEADING = '## The LLaMA family: Qwen2.5-0.5B\'s shape';

const NAMES = { 'qwen2.5-0.5b': 'Qwen2.5-0.5B', 'qwen3-0.6b': 'Qwen3-0.6B', 'smollm2-135m': 'SmolLM2-135M' };
const ms = (x) => (x?.median ? `${fmt(x.median)} (${fmt(x.min)})` : '–');
const exp = (x) => (x === undefined || x === null ? '–' : x.toExponential(1));

/** The section's text (without its heading). m = r.llama, machine = r.machine. */
export function llamaReport(m, machine, command) {
  if (!m) return 'Not measured.';
  const head = `Measured by \`${command}\` (bench/llama.js) on ${machine.date}: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ` +
    `load average ${fmt(machine.loadStart, 2)} at the start of the run.`;
  if (m.skipped) return `${head}\n\n**Not measured: ${m.skipped}.** bench/model/make_onnx_llama.py needs Debian's /usr/bin/python3 with torch (python3-torch).`;
  const out = [head, '', ...setup(m)];
  if (m.failed) return [...out, '', `**The section failed: ${m.failed}.**`].join('\n');
  out.push('', ...forwardTables(m), '', ...decodeTables(m), '', ...loadTables(m));
  if (m.second) out.push('', ...secondTables(m.second));
  out.push('', '### Issue 22\'s targets in this run', '', targets(m));
  return out.join('\n');
}

function setup(m) {
  const c = m.config ?? {}, th = m.threads, w = m.wasm, name = NAMES[m.shape] ?? m.shape;
  const D = c.head_dim ?? c.hidden_size / c.num_attention_heads;
  const lines = [];
  if (m.shape !== 'qwen2.5-0.5b') lines.push(`- **A smoke run (BENCH_QUICK=1) on ${name}'s shape, not Qwen2.5-0.5B's: these figures are not the section's.**`);
  lines.push(`- The model: ${name}'s exact shapes (${c.num_hidden_layers} layers, hidden ${c.hidden_size}, ${c.num_attention_heads} heads, ${c.num_key_value_heads} KV heads, ` +
    `head_dim ${D}, intermediate ${c.intermediate_size}, vocabulary ${c.vocab_size}, tied embeddings, rope_theta ${c.rope_theta}; ${fmt(m.parameters / 1e6)} M parameters), ` +
    'random weights from scripts/random-checkpoint.js (U(±1/√fan_in), norms 1 ± 0.1), written into a temporary folder and removed after the run. ' +
    `**BF16**: model.safetensors as written (${m.files ? fmtBytes(m.files.bf16['model.safetensors']) : '?'}); **F32**: the same file widened by bench/model/widen.js ` +
    `(${m.files ? fmtBytes(m.files.f32['model.safetensors']) : '?'}), the same numbers, so that all three runners compute the same function.`);
  lines.push(`- **attnmap**: \`loadModel(folder)\` of attnmap/model, one thread (wasm, SIMD, no threads); BF16 matrices are kept as BF16 in wasm memory. ` +
    `The model build measured: ${w.start.commit} (\`git log -1 --format=%h -- web/wasm/attention-model.wasm\`${w.start.modified ? ', **with uncommitted changes in the working tree**' : ''}, sha256 ${w.start.sha})` +
    (w.end && w.end.sha !== w.start.sha ? `; **it changed during the run (now ${w.end.commit}, sha256 ${w.end.sha}): the later figures may come from the new build**.` : ', unchanged during the run.'));
  const made = m.made ?? [];
  lines.push(`- **onnxruntime-web** ${versionOf('onnxruntime-web')}: bench/model/make_onnx_llama.py exports the same forward pass (RMSNorm, RoPE rotate-half, GQA, SwiGLU, tied lm_head; ` +
    'the maths of tests/golden/llama/make_golden.py\'s reference) with torch.onnx.export, opset 17, all weights float32, input_ids (1, n) with n dynamic. ' +
    `${made[1] ? `Its files: ${made[1].trim().replace(/;/g, ',')}. ` : ''}` +
    'Qwen2.5-0.5B\'s 1.98 GB F32 model as one protobuf (under protobuf\'s 2 GB limit, so torch writes it so) did not load when tried on this machine while this benchmark was written ' +
    '(`InferenceSession.create`: "Can\'t create a session. ERROR_CODE: 6, ERROR_MESSAGE: std::bad_alloc": the protobuf and the tensors parsed from it are both in its 4 GB wasm32 heap); ' +
    'so the script moves every initializer into model.onnx.data (ONNX external data, written by hand: torch 1.13 does so only above 2 GB, and the onnx package is not installable here), ' +
    'given to ORT as `externalData: [{ path: \'model.onnx.data\', data: <its path> }]` (ORT reads the file into JS memory, then copies each tensor into its heap). ' +
    `Wasm execution provider, graph optimisation "all", **${th.used} thread${th.used === 1 ? '' : 's'}** (\`env.wasm.numThreads\`); its default in Node is min(4, ⌈cores / 2⌉) = ${th.default} on this ${th.cores}-core machine` +
    `${th.default === th.used ? ', the same' : `: **not measured here, its figures with ${th.default} threads would differ**`}. The exported graph has no KV cache.`);
  lines.push(`- Method: token ids (i · 7919 + 13) mod vocabulary; logits (n, vocabulary) out as a Float32Array through each public API (\`model.forward(ids)\`, \`session.run\`). ` +
    `The logits are compared before timing (limit: ${LLAMA_TOLERANCE} × the largest |logit|); the checking call is the warm-up; then one call per sample, round-robin with the order rotating each round; medians (best in brackets). ` +
    'No timing is asserted anywhere. Machines differ between sessions: compare the ratios, measured in one run.');
  return lines;
}

function forwardTables(m) {
  const rows = m.forward.map((x) => {
    const { bf16: b, f32: f, ort: o } = x.results;
    const r = (a) => (a?.median && o?.median ? `${fmt(a.median / o.median)}×` : '–');
    const bad = (v) => (v.ok ? '' : ' **WRONG**');
    return [x.n, ms(b), ms(f), ms(o), r(b), r(f), `${exp(b.diff)}${bad(b)} / ${exp(f.diff)}${bad(f)}`, `±${fmt(x.maxLogit)} (limit ${fmt(x.limit)})`, b.samples ?? 0];
  });
  const out = [`### (1) Forward over n tokens: median ms (best); ratio = time ÷ onnxruntime-web's time`, '',
    table(['n', 'attnmap BF16', 'attnmap F32', `onnxruntime-web F32 (${m.threads.used} thread)`, 'BF16 ÷ ORT', 'F32 ÷ ORT', 'max \\|diff\\| vs ORT: BF16 / F32', 'largest \\|logit\\|', 'samples'], rows)];
  const t = m.forward.find((x) => x.torch);
  if (t) {
    out.push('', `Against torch's own float32 logits over the same ${t.n} tokens (make_onnx_llama.py): max |diff| onnxruntime-web ${exp(t.torch.ort)}, ` +
      `attnmap BF16 ${exp(t.torch.bf16)}, attnmap F32 ${exp(t.torch.f32)}; relative to the largest |logit| (${fmt(t.maxLogit)}): ` +
      `${exp(t.torch.ort / t.maxLogit)}, ${exp(t.torch.bf16 / t.maxLogit)}, ${exp(t.torch.f32 / t.maxLogit)}.`);
  }
  return out;
}

function decodeTables(m) {
  const rows = m.decode.map((x) => {
    const { bf16: b, f32: f } = x.results;
    return [`${x.from} to ${x.context}`, ms(b), ms(f), `${fmt(b.median / f.median)}×`, fmt(1000 / b.median), fmt(1000 / f.median), `${b.runs} × ${LLAMA.steps}`,
      b.sameIds && f.sameIds ? (x.bf16IdsEqualF32 ? 'yes; BF16 = F32' : 'yes; BF16 ≠ F32') : '**no**'];
  });
  const out = ['### (2) One decode step with the KV cache: BF16 weights against the same weights in F32', '',
    table(['contexts of the steps', 'BF16 ms per step', 'F32 ms per step', 'BF16 ÷ F32', 'BF16 tokens/s', 'F32 tokens/s', 'runs × steps', 'same greedy ids every run'], rows),
    '', `Each run: \`model.generate\` from a prompt of context − ${LLAMA.steps} tokens (its pass not timed) for ${LLAMA.steps} one-token steps, the last attending over \`context\` positions; ` +
    'runs round-robin between the cells; the median and best of all steps. tokens/s = 1000 ÷ the median step.'];
  const k = m.kvRatio;
  out.push('', `### (3) One KV-cache step against a full forward (attnmap BF16)`, '');
  out.push(k ? `The step at context ${k.context}: ${fmt(k.step)} ms; the forward over ${k.context} tokens: ${fmt(k.full)} ms; ratio ${fmt(k.ratio)} = 1/${fmt(1 / k.ratio)}.`
    : 'Not measured in this run.');
  return out;
}

function loadTables(m) {
  const L = m.load ?? {};
  const row = (label, x, file) => (!x || x.error ? [label, file, `not measured: ${x?.error ?? '?'}`, '–', '–', '–', '–']
    : [label, file, fmt(x.loadMs), fmtBytes(x.loaded.rss), fmtBytes(x.loaded.wasm), fmtBytes(x.afterForward.rss), fmtBytes(x.afterForward.peak)]);
  const f = m.files ?? {};
  const onnx = f.onnx ? `model.onnx ${fmtBytes(f.onnx['model.onnx'])} + model.onnx.data ${fmtBytes(f.onnx['model.onnx.data'])}` : '?';
  return ['### (4) Load and memory: each checkpoint in a fresh process (bench/model/load.js)', '',
    table(['', 'files', 'load ms', 'RSS after loading', 'wasm memory after loading', 'RSS after a forward over 32 tokens', 'peak RSS'], [
      row('attnmap `loadModel(folder)`, BF16', L.bf16, f.bf16 ? fmtBytes(f.bf16['model.safetensors']) : '?'),
      row('attnmap `loadModel(folder)`, F32', L.f32, f.f32 ? fmtBytes(f.f32['model.safetensors']) : '?'),
      row('onnxruntime-web `InferenceSession.create`, F32, external data', L.ort, onnx),
    ], [':--', '--:', '--:', '--:', '--:', '--:', '--:']),
    '', 'Load = from the call to a usable model, the files already in the page cache. wasm memory = the memory of every WebAssembly instance in the process; ' +
    'RSS from /proc/self/status after a GC, peak RSS = VmHWM. ORT\'s peak includes the external data file, read whole into JS memory while the session is created.'];
}

function secondTables(s) {
  const c = s.config, name = NAMES[s.shape] ?? s.shape, L = s.load;
  return [`### ${name}'s shape (attnmap alone, BF16)`, '',
    `${c.num_hidden_layers} layers, hidden ${c.hidden_size}, ${c.num_attention_heads} heads, ${c.num_key_value_heads} KV heads, head_dim ${c.head_dim}, q/k norms, ` +
    `intermediate ${c.intermediate_size}, vocabulary ${c.vocab_size}, tied; ${fmt(s.parameters / 1e6)} M parameters, ${fmtBytes(s.bytes)} (scripts/random-checkpoint.js). ` +
    `Logits finite: ${s.finite ? 'yes' : '**no**'}, largest |logit| ${fmt(s.maxLogit)}.`, '',
    table(['load ms (fresh process)', 'peak RSS', 'wasm memory after loading', `forward over ${s.forward?.n} tokens, ms`, `decode step, contexts ${s.decode?.from} to ${s.decode?.context}, ms`, 'decode tokens/s'], [[
      L.error ? `not measured: ${L.error}` : fmt(L.loadMs), L.error ? '–' : fmtBytes(L.afterForward.peak), L.error ? '–' : fmtBytes(L.loaded.wasm),
      `${ms(s.forward)}, ${s.forward?.samples} samples`, `${fmt(s.decode?.median)}, ${s.decode?.steps} steps`, fmt(s.decode?.tokensPerS),
    ]], Array(6).fill('--:'))];
}

// met, or "missed: 1.3× ORT's time"
function targets(m) {
  const rows = [];
  for (const x of m.forward) {
    for (const w of ['bf16', 'f32']) {
      const a = x.results[w]?.median, o = x.results.ort?.median;
      if (!a || !o) { rows.push([`forward over ${x.n} tokens, attnmap ${w.toUpperCase()} ≤ 0.8× onnxruntime-web's time`, 'not measured', '–']); continue; }
      rows.push([`forward over ${x.n} tokens, attnmap ${w.toUpperCase()} ≤ 0.8× onnxruntime-web's time`, `${fmt(a / o)}× (${fmt(a)} ms against ${fmt(o)} ms)`,
        a / o <= 0.8 ? 'met' : `**missed: ${fmt(a / o)}× ORT's time**`]);
    }
  }
  for (const x of m.decode) {
    const { bf16: b, f32: f } = x.results, r = b.median / f.median;
    rows.push([`decode step at context ${x.context}, BF16 ≤ 0.6× the F32 step's time`, `${fmt(r)}× (${fmt(b.median)} ms against ${fmt(f.median)} ms)`,
      r <= 0.6 ? 'met' : `**missed: ${fmt(r)}× the F32 step's time**`]);
  }
  const k = m.kvRatio;
  rows.push(k ? [`KV step at context ${k.context} ≤ 1/8 of a forward over ${k.context} tokens (BF16)`, `1/${fmt(1 / k.ratio)} = ${fmt(k.ratio)} (${fmt(k.step)} ms against ${fmt(k.full)} ms)`,
    k.ratio <= 1 / 8 ? 'met' : `**missed: 1/${fmt(1 / k.ratio)} of the forward's time**`] : ['KV step ≤ 1/8 of a forward', 'not measured', '–']);
  return table(['target (issue 22)', 'this run', ''], rows, [':--', ':--', ':--']);
}

/** bench.js --only llama: the machine, this section, its text on the console and (not in quick mode) in docs/BENCHMARKS.md. */
export async function llamaOnly(r, { quick }) {
  const command = `${quick ? 'BENCH_QUICK=1 ' : ''}node bench/bench.js --only llama`;
  let ort = null;
  try { ({ ort } = await (await import('./impls.js')).loadOrt()); } catch (e) { progress(`onnxruntime-web failed to load: ${e.message}`); }
  r.llama = ort ? await benchLlama({ ort }) : { skipped: 'onnxruntime-web did not load' };
  const text = llamaReport(r.llama, r.machine, command);
  console.log(`\n${LLAMA_HEADING}\n\n${text}\n`);
  const wrong = llamaDisagreements(r.llama);
  if (wrong.length) { console.error(`bench: disagreements: ${wrong.join(', ')}`); process.exitCode = 1; }
  if (r.llama.failed) process.exitCode = 1;
  if (!quick) {
    writeSection(path.join(root, 'docs/BENCHMARKS.md'), LLAMA_HEADING, text, { after: MODEL_HEADING });
    progress('wrote the LLaMA section of docs/BENCHMARKS.md');
  }
}
