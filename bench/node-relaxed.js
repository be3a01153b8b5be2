// node-relaxed.js - bench.js's section on Node with relaxed SIMD switched on: a child
// `node --experimental-wasm-relaxed-simd` (what Node 22+ has without a flag) times
// createAttention() (which then picks the fused multiply-add build), createAttention({ relaxed:
// false }) and onnxruntime-web on the same inputs, samples rotating, medians.
//   node bench/node-relaxed.js child '{"sizes":[...],"sampleMs":5}'   (bench.js starts it)
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { makeInputs, median, maxAbsDiff, fmt, attentionFlops } from './lib.js';

const FLAG = '--experimental-wasm-relaxed-simd';

export function benchNodeRelaxed({ quick, progress }) {
  const plan = {
    sizes: quick ? [{ n: 1024, rounds: 3 }] : [{ n: 1024, rounds: 15 }, { n: 2048, rounds: 11 }, { n: 4096, rounds: 7 }],
    sampleMs: quick ? 2 : 5,
  };
  progress(`node ${FLAG}: n = ${plan.sizes.map((s) => s.n).join(', ')}`);
  const p = spawnSync(process.execPath, [FLAG, fileURLToPath(import.meta.url), 'child', JSON.stringify(plan)], { encoding: 'utf8', timeout: 600000 });
  if (p.status !== 0) return { error: (p.stderr || p.error?.message || `exit ${p.status}`).trim().split('\n').slice(-3).join(' ') };
  return JSON.parse(p.stdout.trim().split('\n').pop());
}

async function child({ sizes, sampleMs }) {
  const { createAttention, hasRelaxedSimd } = await import('../web/attention.js');
  const { loadOrt } = await import('./impls.js');
  const relaxed = await createAttention(), exact = await createAttention({ relaxed: false });
  const ort = await loadOrt();
  await ort.session(64);
  const impls = {
    default: (x) => exact.attention(x, { weights: false }).output.data,
    relaxed: (x) => relaxed.attention(x, { weights: false }).output.data,
    ort: (x) => ort.forward(x),
  };
  const out = { hasRelaxed: hasRelaxedSimd(), relaxedUsed: relaxed.relaxed, exactRelaxed: exact.relaxed, sizes: [] };
  for (const { n, rounds } of sizes) {
    const x = makeInputs(n, 64);
    const ref = impls.default(x);
    const live = [];
    for (const [name, f] of Object.entries(impls)) {
      const diff = maxAbsDiff(await f(x), ref);
      let once = Infinity;
      for (let i = 0, t0 = performance.now(); i < 20 && performance.now() - t0 < 1000; i++) {
        const t = performance.now(); await f(x); once = Math.min(once, performance.now() - t);
      }
      live.push({ name, f, diff, reps: Math.max(1, Math.ceil(sampleMs / once)), ms: [] });
    }
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < live.length; i++) {
        const l = live[(i + r) % live.length];
        const t = performance.now();
        for (let k = 0; k < l.reps; k++) await l.f(x);
        l.ms.push((performance.now() - t) / l.reps);
      }
    }
    out.sizes.push({ n, rounds, results: Object.fromEntries(live.map((l) => [l.name, { median: median(l.ms), diff: l.diff, samples: l.ms.length }])) });
  }
  return out;
}

export function nodeRelaxedReport(c) {
  if (c.error) return `Not measured: ${c.error}`;
  const row = (s) => {
    const d = s.results.default, x = s.results.relaxed, o = s.results.ort, gf = (ms) => fmt(attentionFlops(s.n, s.n, 64, 64) / ms / 1e6);
    return `| ${s.n} | ${fmt(d.median)} | ${fmt(x.median)} | ${fmt(o.median)} | ${fmt(d.median / x.median)}× | ${fmt(o.median / d.median)}× | ${fmt(o.median / x.median)}× | ${gf(d.median)} | ${gf(x.median)} | ${x.diff.toExponential(1)} | ${o.diff.toExponential(1)} |`;
  };
  return [
    `### Node ${process.version} with \`${FLAG}\`, one process, d = 64, \`weights: false\`; median ms per forward`,
    '',
    `Relaxed SIMD with the flag: ${c.hasRelaxed ? 'yes' : 'no'}; \`createAttention()\` ran the ${c.relaxedUsed ? 'fused multiply-add' : '**default**'} build ("attnmap relaxed"); "attnmap" is \`createAttention({ relaxed: false })\`${c.exactRelaxed ? ' (**which ran the relaxed build**)' : ''}.`,
    '',
    '| n | attnmap | attnmap relaxed | onnxruntime-web | relaxed speed-up | ORT ÷ attnmap | ORT ÷ attnmap relaxed | attnmap GFLOP/s | relaxed GFLOP/s | max \\|diff\\| relaxed | max \\|diff\\| ORT |',
    '| --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |',
    ...c.sizes.map(row),
    '',
    `bench/node-relaxed.js in a child \`node ${FLAG}\`: what Node 22 and later run without a flag (on a newer V8, so only an indication). ` +
      'Samples rotate between the three implementations each round; onnxruntime-web as in the main table. Differences are against attnmap\'s default build.',
  ].join('\n');
}

if (process.argv[2] === 'child') {
  console.log(JSON.stringify(await child(JSON.parse(process.argv[3]))));
}
