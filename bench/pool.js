// pool.js - bench.js's section on more than one core: createAttentionPool (worker threads,
// rows split by work, no SharedArrayBuffer) against the single-threaded public API, same
// inputs, samples alternating, medians. The pool's output is checked bit for bit first.
import os from 'node:os';
import { createAttention } from '../web/core/attention.js';
import { createAttentionPool } from '../web/pool/attention-pool-node.js';
import { makeInputs, median, fmt, attentionFlops } from './lib.js';

export async function benchPool({ quick, progress }) {
  const cases = quick
    ? [{ n: 1024, causal: false, rounds: 5 }]
    : [{ n: 512, causal: false, rounds: 15 }, { n: 1024, causal: false, rounds: 11 }, { n: 2048, causal: false, rounds: 9 },
      { n: 4096, causal: false, rounds: 7 }, { n: 4096, causal: true, rounds: 7 }];
  const workers = Math.min(8, os.availableParallelism?.() ?? os.cpus().length);
  const attn = await createAttention();
  const t0 = performance.now();
  const pool = await createAttentionPool({ workers });
  const startMs = performance.now() - t0;
  const rows = [];
  try {
    for (const { n, causal, rounds } of cases) {
      progress(`pool: n = ${n}${causal ? ', causal' : ''}, ${workers} workers, ${rounds} rounds`);
      const inputs = makeInputs(n, 64);
      const options = { causal, weights: false };
      const single = () => attn.attention(inputs, options).output.data;
      const parallel = async () => (await pool.attention(inputs, { causal })).output.data;
      const a = single(), b = await parallel();
      let same = a.length === b.length;
      for (let i = 0; i < a.length && same; i++) same = Object.is(a[i], b[i]);
      // warm up both (the workers' instances tier up like the main one), then alternate
      for (let i = 0, t = performance.now(); i < 5 || (i < 50 && performance.now() - t < 1000); i++) { single(); await parallel(); }
      const ts = [], tp = [];
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 ? [[single, ts], [parallel, tp]] : [[parallel, tp], [single, ts]];
        for (const [fn, into] of order) { const t = performance.now(); await fn(); into.push(performance.now() - t); }
      }
      const flops = attentionFlops(n, n, 64, 64) / (causal ? 2 : 1);
      rows.push({ n, causal, rounds, same, single: median(ts), pool: median(tp), flops });
    }
  } finally {
    await pool.close();
  }
  return { workers, startMs, rows };
}

export function poolReport(p) {
  const lines = [
    `### ${p.workers} workers (createAttentionPool) against one thread (createAttention), d = 64, \`weights: false\`; median ms per forward`,
    '',
    '| n | causal | one thread | pool | speed-up | pool GFLOP/s | output bit for bit | samples |',
    '| --: | :-- | --: | --: | --: | --: | :-- | --: |',
    ...p.rows.map((x) => `| ${x.n} | ${x.causal ? 'yes' : 'no'} | ${fmt(x.single)} | ${fmt(x.pool)} | ${fmt(x.single / x.pool)}× | ${fmt(x.flops / x.pool / 1e6)} | ${x.same ? 'yes' : '**no**'} | ${x.rounds} |`),
    '',
    `Starting the pool (${p.workers} workers, each compiling its own copy of the core) took ${fmt(p.startMs)} ms. ` +
      'Every pool call copies q, k and v to each worker (structured clone, no SharedArrayBuffer, so no COOP/COEP headers), ' +
      'each worker computes a contiguous range of query rows with `attention(..., { weights: false, rows })`, and the ranges ' +
      'are cut so that each gets the same work (with causal, later rows see more keys). GFLOP/s counts 4·n²·d (half that when causal).',
  ];
  return lines.join('\n');
}
