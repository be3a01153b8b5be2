// pool.js - bench.js's section on more than one core: createAttentionPool (worker threads,
// rows split by work, no SharedArrayBuffer) against the single-threaded public API, same
// inputs, samples alternating, medians. The pool's output is checked bit for bit first.
// Two pools: one that splits every call (inlineBelow: 0), which finds the crossover, and one
// with the default INLINE_BELOW, which computes small calls in the calling thread (issue 26).
import os from 'node:os';
import { createAttention } from '../web/core/attention.js';
import path from 'node:path';
import { createAttentionPool, INLINE_BELOW } from '../web/pool/attention-pool-node.js';
import { makeInputs, median, fmt, attentionFlops } from './lib.js';
import { writeSection } from './sections.js';
import { progress, root } from './plan.js';

export const POOL_HEADING = '## More than one core';

/** `node bench/bench.js --only pool`: this section alone, printed and (not quick) written. */
export async function poolOnly(r, { quick }) {
  const text = `${poolReport(await benchPool({ quick, progress }))}\n\n` +
    `Written by \`node bench/bench.js --only pool\` on ${new Date().toISOString().slice(0, 16)}Z; ${r.machine.cpu}, ${r.machine.cores} cores, Node ${r.machine.node}.`;
  console.log(`\n${POOL_HEADING}\n\n${text}\n`);
  if (!quick) writeSection(path.join(root, 'docs/BENCHMARKS.md'), POOL_HEADING, text);
}

export async function benchPool({ quick, progress }) {
  const cases = quick
    ? [{ n: 1024, causal: false, rounds: 5 }]
    : [{ n: 64, causal: false, rounds: 41 }, { n: 128, causal: false, rounds: 31 }, { n: 192, causal: false, rounds: 31 },
      { n: 256, causal: false, rounds: 25 }, { n: 384, causal: false, rounds: 21 }, { n: 512, causal: false, rounds: 15 },
      { n: 1024, causal: false, rounds: 11 }, { n: 2048, causal: false, rounds: 9 }, { n: 4096, causal: false, rounds: 7 },
      { n: 512, causal: true, rounds: 15 }, { n: 4096, causal: true, rounds: 7 }];
  const workers = Math.min(8, os.availableParallelism?.() ?? os.cpus().length);
  const attn = await createAttention();
  const t0 = performance.now();
  const pool = await createAttentionPool({ workers, inlineBelow: 0 });
  const startMs = performance.now() - t0;
  const auto = await createAttentionPool({ workers });
  const rows = [];
  try {
    for (const { n, causal, rounds } of cases) {
      progress(`pool: n = ${n}${causal ? ', causal' : ''}, ${workers} workers, ${rounds} rounds`);
      const inputs = makeInputs(n, 64);
      const options = { causal, weights: false };
      const single = () => attn.attention(inputs, options).output.data;
      const parallel = async () => (await pool.attention(inputs, { causal })).output.data;
      const chosen = async () => (await auto.attention(inputs, { causal })).output.data;
      const a = single(), b = await parallel(), c = await chosen();
      let same = a.length === b.length && a.length === c.length;
      for (let i = 0; i < a.length && same; i++) same = Object.is(a[i], b[i]) && Object.is(a[i], c[i]);
      const split = (await auto.attention(inputs, { causal })).workers > 0;
      // warm up all three (the workers' instances tier up like the main one), then alternate
      for (let i = 0, t = performance.now(); i < 5 || (i < 50 && performance.now() - t < 1000); i++) { single(); await parallel(); await chosen(); }
      const ts = [], tp = [], tc = [];
      for (let r = 0; r < rounds; r++) {
        const order = [[single, ts], [parallel, tp], [chosen, tc]];
        for (let k = 0; k < 3; k++) { const [fn, into] = order[(k + r) % 3]; const t = performance.now(); await fn(); into.push(performance.now() - t); }
      }
      const flops = attentionFlops(n, n, 64, 64) / (causal ? 2 : 1);
      rows.push({ n, causal, rounds, same, single: median(ts), pool: median(tp), auto: median(tc), split, flops });
    }
  } finally {
    await pool.close();
    await auto.close();
  }
  return { workers, startMs, rows };
}

export function poolReport(p) {
  const lines = [
    `### ${p.workers} workers (createAttentionPool) against one thread (createAttention), d = 64, \`weights: false\`; median ms per forward`,
    '',
    '| n | causal | one thread | split in every call | speed-up | split GFLOP/s | the pool as it ships | its path | speed-up | output bit for bit | samples |',
    '| --: | :-- | --: | --: | --: | --: | --: | :-- | --: | :-- | --: |',
    ...p.rows.map((x) => `| ${x.n} | ${x.causal ? 'yes' : 'no'} | ${fmt(x.single)} | ${fmt(x.pool)} | ${fmt(x.single / x.pool)}× | ${fmt(x.flops / x.pool / 1e6)} | ` +
      `${fmt(x.auto)} | ${x.split ? 'split' : 'this thread'} | ${fmt(x.single / x.auto)}× | ${x.same ? 'yes' : '**no**'} | ${x.rounds} |`),
    '',
    `"Split in every call": \`inlineBelow: 0\`. "The pool as it ships": the default \`inlineBelow\` = INLINE_BELOW = ${INLINE_BELOW.toLocaleString('en-US')} ` +
      'multiply-adds (rows × keys seen × (d_k + d_v); n = 384 at d = 64 is 18.9 M, 512 is 33.6 M): a smaller call runs in the calling thread and costs only the pool\'s checks and the await (issue 26). ' +
      'The crossover is where "split" first beats one thread; it moves with the machine, so the constant errs towards this thread.',
    '',
    `Starting the pool (${p.workers} workers, each compiling its own copy of the core) took ${fmt(p.startMs)} ms. ` +
      'Every pool call copies q, k and v to each worker (structured clone, no SharedArrayBuffer, so no COOP/COEP headers), ' +
      'each worker computes a contiguous range of query rows with `attention(..., { weights: false, rows })`, and the ranges ' +
      'are cut so that each gets the same work (with causal, later rows see more keys). GFLOP/s counts 4·n²·d (half that when causal).',
  ];
  return lines.join('\n');
}
