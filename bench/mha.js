// mha.js - bench.js's section on GPT-2 small's multi-head attention layer: attnmap's
// multiHeadAttention against onnxruntime-web (com.microsoft MultiHeadAttention, and the same
// layer in plain ONNX ops) and native C (bench/native-mha.c), on the same data, round-robin, as
// the single-head sizes (runner.js). Its table, and its method for docs/BENCHMARKS.md.
import { ortMhaLayers } from './impls.js';
import { fmt, makeMhaInputs, maxAbsDiff, mhaFlops, table } from './lib.js';
import { compileNativeMha, NativeChild, readMhaOutput, writeMhaInputs } from './native.js';
import { MHA, SAMPLE_MS, TOLERANCE, progress } from './plan.js';
import { accept, firstCall, repsFor, roundRobin, sample, summarize, warmUp } from './runner.js';

export async function benchMha(impls) {
  const { n, dModel: E, heads, rounds } = MHA;
  progress(`multi-head layer: n = ${n}, d_model = ${E}, ${heads} heads, ${rounds} rounds`);
  const nat = compileNativeMha();
  if (nat.error) progress(`mha: native C not measured: ${nat.error}`);
  const w = makeMhaInputs(n, E);
  const row = { ...MHA, flops: mhaFlops(n, E), results: {}, errors: {} };
  const cands = [oursLayer(impls.ours.attn, w)];
  for (const c of impls.ort ? await ortMhaLayers(impls.ort, w, MHA) : []) {
    if (c.forward) cands.push(c);
    else { row.errors[c.name] = c.error; progress(`mha: ${c.name} not measured: ${c.error}`); }
  }
  // check every output against ours before timing anything
  const ours = cands[0].forward();
  const live = [];
  for (const c of cands) {
    const x = await calibrate(c, ours, row.results);
    if (x) live.push(x);
  }
  const native = nat.exe ? await startNative(nat.exe, w, ours, row, live) : null;
  await roundRobin(live, rounds, (x, e) => {              // only native C can fail here
    row.errors[x.name] = e.message;
    progress(`mha: ${x.name} stopped: ${e.message}`);
  });
  summarize(live, row.results);
  if (native) {
    if (row.results.native?.samples && !native.exited) {
      const own = await native.ask('done');
      Object.assign(row.results.native, { median: own.median_ms, min: own.min_ms, samples: own.rounds });
    }
    native.close();
  }
  if (nat.error) row.errors.native = nat.error;
  return row;
}

function oursLayer(attn, w) {
  const { n, dModel: E, heads } = MHA;
  const M = (data, rows) => ({ data, shape: [rows, E] });
  const inputs = { x: M(w.x, n), wq: M(w.wq, E), wk: M(w.wk, E), wv: M(w.wv, E), wo: M(w.wo, E), bq: w.bq, bk: w.bk, bv: w.bv, bo: w.bo };
  return { name: 'ours', forward: () => attn.multiHeadAttention(inputs, { heads, weights: false }).output.data };
}

// check the first output, warm up with a few calls (each takes a fraction of a second), calibrate
async function calibrate(c, ours, results) {
  const impl = { forward: c.forward };
  const { out, isAsync, once: first } = await firstCall(impl, null);
  if (!accept(results, c.name, c.name === 'ours' ? 0 : maxAbsDiff(out, ours), 'mha: ')) return null;
  const once = await warmUp(impl, null, isAsync, first, { calls: 20 });
  const reps = repsFor(once);
  return { name: c.name, reps, ms: [], sample: () => sample(impl, null, reps, isAsync) };
}

// native C in its child: the same data through a file, its output checked; its samples join live
async function startNative(exe, w, ours, row, live) {
  let native = null;
  try {
    writeMhaInputs(w);
    native = new NativeChild(exe);
    const { reps } = await native.ask(`load ${MHA.n} ${MHA.dModel} ${MHA.heads} ${SAMPLE_MS}`);
    if (accept(row.results, 'native', maxAbsDiff(readMhaOutput(), ours), 'mha: ')) {
      live.push({ name: 'native', reps, ms: [], sample: async () => (await native.ask('sample')).ms });
    }
    return native;
  } catch (e) {
    row.errors.native = e.message;
    progress(`mha: native C not measured: ${e.message}`);
    native?.close();
    return null;
  }
}

const MHA_LABEL = {
  ours: 'attnmap: `multiHeadAttention(..., { heads: 12, weights: false })`',
  ortMha: 'onnxruntime-web: com.microsoft `MultiHeadAttention` graph',
  ortOps: 'onnxruntime-web: the same layer in plain ONNX ops',
  native: 'native C: `attn_mha_forward`, weights NULL',
};

// The multi-head layer's table and a few sentences read from it.
export function mhaReport(r) {
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
  const lines = mhaReading(x);
  if (lines.length) out.push(`\n${lines.join('\n')}`);
  return out.join('\n');
}

function mhaReading(x) {
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
  return lines;
}

// docs/BENCHMARKS.md: what the multi-head section measures, and how
export function mhaMethod() {
  return `One self-attention layer the size of GPT-2 small's: d_model = ${MHA.dModel}, ${MHA.heads} heads (d_head ${MHA.dModel / MHA.heads}),
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
  The load average at the start and end of the whole run is under "Machine" above.`;
}
