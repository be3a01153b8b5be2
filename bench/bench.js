// bench.js - `npm run bench`: attnmap against plain JS, onnxruntime-web, TF.js (wasm) and the
// same C compiled natively. Prints tables; a full run also rewrites docs/BENCHMARKS.md.
//
//   npm run bench                   the full run (2.5 to 4.5 minutes on 2 cores), writes the doc
//   BENCH_QUICK=1 npm run bench     a smoke run (about 25 s), prints only; `--quick` after any
//                                   command here does the same (node bench/bench.js --only threads --quick)
//   node bench/bench.js --only pool    the pool's section alone (about a minute), rewrites only its part of the doc
//   node bench/bench.js --only model   the whole-model section alone (GPT-2 small against
//                                   onnxruntime-web, bench/model.js; about 5 minutes), rewrites only its part of the doc
//   node bench/bench.js --only threads the model on 1 and 2 threads against onnxruntime-web on 2 (GPT-2
//                                   small's shape, and Qwen2.5-0.5B's; in Node and in Chromium; bench/threads.js;
//                                   about 8 minutes), rewrites only its part of the doc
//   node bench/bench.js --only heads   every head's role scores in one pass (forward(ids, { heads }), SmolLM2-135M's
//                                   shape; bench/heads.js; about 6 minutes), rewrites only its part of the doc
//   node bench/page-heads.js        (standalone) the page's heads panel at 1,000 tokens in Chromium, off the main
//                                   thread and on it: the longest main-thread task, the first thumbnail; its part of the doc
//   node bench/bench.js --only gguf    GGUF files with quantized matrices against BF16 safetensors (Qwen2.5-0.5B's
//                                   shape; Llama-3.2-1B's and Qwen2.5-3B's peak in a fresh process; bench/gguf.js;
//                                   about 10 minutes, 3 GB of temporary files), rewrites only its part of the doc;
//                                   a full run measures it last and rewrites that part after the rest
//   node bench/bench.js --only llama   the LLaMA family's section alone (Qwen2.5-0.5B's shape against
//                                   onnxruntime-web, Qwen3-0.6B's; bench/llama.js; about 15 minutes, 8 GB of
//                                   memory, 6 GB of temporary files), rewrites only its part of the doc
//   node bench/element-memory.js    a model by URL as the element loads it: peak RSS over the weights
//                                   (SmolLM2-135M's shape; about 20 s), rewrites only its part of the doc;
//                                   a full run measures it after the GGUF section
//
// Besides single-head attention at several n, it times one GPT-2-small multi-head attention
// layer (n = 1024, d_model = 768, 12 heads, biases; n = 128 in quick mode): attnmap's
// multiHeadAttention against onnxruntime-web (com.microsoft MultiHeadAttention and plain ops)
// and native C (bench/native-mha.c), see mha.js.
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
//
// The parts, one concern each: plan.js (sizes, rounds, durations), machine.js, runner.js
// (sampling, rounds, medians; the single-head sizes), impls.js (attnmap and the peers, loaded as
// their users load them), native.js (gcc and the C child process), mha.js, pool.js, chromium.js,
// node-relaxed.js, tiny.js, model.js (GPT-2 small, the whole model), llama.js + llama-report.js
// (the LLaMA family), heads.js (every head's role scores), gguf.js (GGUF files, quantized),
// element-memory.js (a model by URL: the element's peak memory), fresh.js
// (cold start, memory), shipped.js (gzip sizes), report.js (tables, console), reading.js (targets,
// prose), markdown.js (docs/BENCHMARKS.md).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchChromium } from './chromium.js';
import { coldStarts, memory } from './fresh.js';
import { loadAll } from './impls.js';
import { machine, sourcesMatchWasm } from './machine.js';
import { markdown } from './markdown.js';
import { ggufOnly } from './gguf.js';
import { elementMemoryOnly } from './element-memory.js';
import { headsOnly } from './heads.js';
import { benchMha } from './mha.js';
import { benchLlama } from './llama.js';
import { llamaOnly } from './llama-report.js';
import { benchModel, modelOnly } from './model.js';
import { peak } from './native.js';
import { benchNodeRelaxed } from './node-relaxed.js';
import { IMPLS, ONLY, QUICK, SIZES, TOLERANCE, progress, root } from './plan.js';
import { benchPool, poolOnly } from './pool.js';
import { disagreements, printReport, report } from './report.js';
import { benchSizes } from './runner.js';
import { gzipSizes } from './shipped.js';
import { threadsOnly } from './threads.js';
import { tinyCalls } from './tiny.js';

async function main() {
  // 1. the machine, and whether the committed wasm was built from c_src/ as it is now
  const r = { machine: machine(), sources: sourcesMatchWasm() };
  progress(`${QUICK ? 'quick' : 'full'} run${ONLY ? ` of ${ONLY} only` : ''} on ${r.machine.cpu}, ${r.machine.cores} cores, Node ${r.machine.node}`);
  if (ONLY === 'model') return modelOnly(r, { quick: QUICK });
  if (ONLY === 'llama') return llamaOnly(r, { quick: QUICK });
  if (ONLY === 'pool') return poolOnly(r, { quick: QUICK });
  if (ONLY === 'threads') return threadsOnly(r, { quick: QUICK });
  if (ONLY === 'heads') return headsOnly(r, { quick: QUICK });
  if (ONLY === 'gguf') return ggufOnly(r, { quick: QUICK });
  if (!r.sources.same) progress(`note: web/wasm/attention.wasm was built from sources ${r.sources.built}, c_src/ is now ${r.sources.now}`);
  progress('peak: 4-wide SSE mul + add, one core');
  r.peak = peak();

  // 2. the implementations; onnxruntime-web's sessions (one per d_k) created now, so that no timing includes them
  const impls = await loadAll(IMPLS, progress);
  for (const d of new Set([...SIZES.map((x) => x.d), 8])) await impls.ort?.session(d);

  // 3. single-head attention at each size, native C in its child process
  Object.assign(r, await benchSizes(impls));

  // 4. the other sections: the multi-head layer, the pool, Chromium, Node with relaxed SIMD
  r.mha = await benchMha(impls);
  r.pool = await benchPool({ quick: QUICK, progress });
  r.chromium = await benchChromium({ quick: QUICK, root, progress });
  r.nodeRelaxed = benchNodeRelaxed({ quick: QUICK, progress });

  // 5. tiny calls, the whole model (GPT-2 small, the LLaMA family), cold start and memory in fresh processes, shipped size
  r.tiny = await tinyCalls(impls);
  r.model = impls.ort ? await benchModel({ ort: impls.ort.ort }) : { skipped: 'onnxruntime-web did not load' };
  r.llama = impls.ort ? await benchLlama({ ort: impls.ort.ort }) : { skipped: 'onnxruntime-web did not load' };
  const peers = ['ours', 'ort', 'tf'].filter((x) => impls[x]);
  r.cold = coldStarts(peers);
  r.memory = memory(peers);
  r.sizes_gz = gzipSizes();
  r.machine.loadEnd = os.loadavg()[0];

  // 6. report: the console always, docs/BENCHMARKS.md on a full run; disagreements fail the run
  const body = report(r);
  printReport(r, body);
  const wrong = disagreements(r);
  if (wrong.length) {
    console.error(`bench: outputs that disagree with attnmap by more than ${TOLERANCE}: ${wrong.join(', ')}`);
    process.exitCode = 1;
  }
  if (!QUICK) {
    fs.mkdirSync(path.join(root, 'docs'), { recursive: true });
    fs.writeFileSync(path.join(root, 'docs/BENCHMARKS.md'), markdown(r, body));
    progress('wrote docs/BENCHMARKS.md');
  }

  // 7. GGUF files (bench/gguf.js), then a model by URL (bench/element-memory.js): measured last, each
  // section rewritten in the doc just written
  await ggufOnly(r, { quick: QUICK });
  await elementMemoryOnly(r, { quick: QUICK });
}

await main();
