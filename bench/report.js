// report.js - the run's tables: the single-head sizes (median ms, GFLOP/s, agreement), the tiny
// call, the cold start, memory and shipped size; the console printout of every section; and
// the list of outputs that disagreed with attnmap.
import { chromiumReport } from './chromium.js';
import { attentionFlops, fmt, fmtBytes, table } from './lib.js';
import { mhaReport } from './mha.js';
import { llamaDisagreements } from './llama.js';
import { LLAMA_HEADING, llamaReport } from './llama-report.js';
import { MODEL_HEADING, modelDisagreements, modelReport } from './model.js';
import { nodeRelaxedReport } from './node-relaxed.js';
import { COLD_RUNS, IMPLS, LABEL, MEMORY_N, QUICK, TOLERANCE } from './plan.js';
import { poolReport } from './pool.js';
import { reading, targetsReport } from './reading.js';

// the tables of the results section, in this order
export function report(r) {
  return [sizeTables(r), tinyTable(r), coldTable(r), memoryTable(r), shippedTable(r)].join('\n');
}

const sizeLabel = (x) => `${x.n}${x.d !== 64 ? ` (d = ${x.d})` : ''}`;
const time = (x, name) => x.results[name]?.median;
const cols = [...IMPLS, 'native'];

// single-head attention at each size: medians and ratios, GFLOP/s, agreement, samples
function sizeTables(r) {
  const out = [];
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
  return out.join('\n');
}

function tinyTable(r) {
  const out = [];
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
  return out.join('\n');
}

function coldTable(r) {
  const out = [];
  out.push(`\n### Cold start: a fresh \`node\` process, ${COLD_RUNS} runs each, medians (ms)\n`);
  out.push(table(['', 'import + create', 'first call (n = 3)', 'import + create + first call', 'from the script\'s first line', 'from process start'],
    Object.entries(r.cold).map(([name, c]) => [LABEL[name], fmt(c.importAndCreate), fmt(c.first), fmt(c.createAndFirst), fmt(c.fromScript), fmt(c.fromProcessStart)])));
  out.push('\n"Import + create + first call" is the median of their sum in each run: the cold start of issue 4 (target: under 15 ms). ' +
    '"From the script\'s first line" is measured inside the child (bench/cold.js) from its first statement, ' +
    'with every module imported dynamically after it; "from process start" is performance.now() at the end, whose origin is the ' +
    'start of the Node process (it adds Node\'s own start-up, the same for all). onnxruntime-web\'s "create" includes creating the session of the bare graph.');
  return out.join('\n');
}

function memoryTable(r) {
  const out = [];
  out.push(`\n### Peak memory of one forward at n = ${MEMORY_N}, d = 64 (fresh process each)\n`);
  out.push(table(['', 'RSS before', 'peak RSS during the forward', 'peak growth', 'held after it (after GC)', 'wasm memory before → after'],
    Object.entries(r.memory).map(([name, m]) => [LABEL[name], fmtBytes(m.rssBefore), fmtBytes(m.peak), fmtBytes(m.growth),
      fmtBytes(m.retained), m.wasmAfter ? `${fmtBytes(m.wasmBefore)} → ${fmtBytes(m.wasmAfter)}` : '–'])));
  out.push('\nMeasured by bench/memory.js: a tiny warm-up forward, the inputs, a GC, then the kernel\'s peak-RSS mark is reset ' +
    '(`/proc/self/clear_refs`) and read back after one forward (`VmHWM`); peak growth = that peak − RSS just before; ' +
    '"held after it" = RSS after the forward and a GC − RSS before. ' +
    'Plain JS is left out (it needs one row of m scores, and seconds per call at n = 4096). ' +
    `The inputs and output of n = ${MEMORY_N}, d = 64 are ${fmtBytes(4 * MEMORY_N * 64 * 4)} together; an n×n float32 matrix is ${fmtBytes(4 * MEMORY_N * MEMORY_N)}.`);
  return out.join('\n');
}

function shippedTable(r) {
  const out = [];
  out.push('\n### Shipped size (gzip level 9, each file compressed on its own, summed)\n');
  out.push(table(['what', 'files', 'raw', 'gzip'],
    r.sizes_gz.map((g) => [g.name, g.files.map((f) => `\`${f.file}\``).join(', '), fmtBytes(g.raw), fmtBytes(g.gzip)]), [':--', ':--', '--:', '--:']));
  return out.join('\n');
}

export const modelCommand = `${QUICK ? 'BENCH_QUICK=1 ' : ''}npm run bench`;

// The console: the machine in one line, then every section as in docs/BENCHMARKS.md.
export function printReport(r, body) {
  const m = r.machine;
  console.log(`\n${m.cpu}, ${m.cores} cores, Node ${m.node}, ${m.date}, load ${fmt(m.loadStart, 2)} → ${fmt(m.loadEnd, 2)}` +
    `${r.peak.gflops ? `, peak ${fmt(r.peak.gflops)} GFLOP/s` : ''}${r.nativeError ? `\nnative C not measured: ${r.nativeError}` : ''}\n`);
  console.log(body);
  console.log(`\n## GPT-2-small multi-head attention layer\n\n${mhaReport(r)}`);
  console.log(`\n## In Chromium, with relaxed SIMD\n\n${chromiumReport(r.chromium)}`);
  console.log(`\n## In Node, with relaxed SIMD switched on\n\n${nodeRelaxedReport(r.nodeRelaxed)}`);
  console.log(`\n## More than one core\n\n${poolReport(r.pool)}`);
  console.log(`\n${MODEL_HEADING}\n\n${modelReport(r.model, r.machine, modelCommand)}`);
  console.log(`\n${LLAMA_HEADING}\n\n${llamaReport(r.llama, r.machine, modelCommand)}`);
  console.log(`\n## Issue 4's targets in this run\n\n${targetsReport(r)}`);
  console.log(`\n${reading(r)}\n`);
}

// Outputs that disagreed with attnmap by more than TOLERANCE, anywhere in the run.
export function disagreements(r) {
  const wrong = [];
  for (const x of r.sizes) for (const [c, v] of Object.entries(x.results)) if (!v.ok) wrong.push(`${c} at n = ${x.n}`);
  for (const [c, v] of Object.entries(r.mha.results)) if (!v.ok) wrong.push(`${c} in the multi-head layer`);
  for (const s of r.chromium.sizes ?? []) for (const [c, v] of Object.entries(s.results)) if (!(v.diff <= TOLERANCE)) wrong.push(`${c} in Chromium at n = ${s.n}`);
  for (const s of r.nodeRelaxed.sizes ?? []) for (const [c, v] of Object.entries(s.results)) if (!(v.diff <= TOLERANCE)) wrong.push(`${c} in Node with relaxed SIMD at n = ${s.n}`);
  for (const x of r.pool.rows) if (!x.same) wrong.push(`the pool at n = ${x.n}${x.causal ? ' (causal)' : ''}`);
  wrong.push(...modelDisagreements(r.model), ...llamaDisagreements(r.llama));
  return wrong;
}
