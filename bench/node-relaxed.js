// node-relaxed.js - bench.js's section on Node with relaxed SIMD switched on: a child
// `node --experimental-wasm-relaxed-simd` (what Node 22+ has without a flag) times
// createAttention() (which then picks the fused multiply-add build), createAttention({ relaxed:
// false }) and onnxruntime-web on the same inputs, samples rotating, medians.
//   node bench/node-relaxed.js child '{"sizes":[...],"sampleMs":5}'   (bench.js starts it)
// Node 22 and later refuse the flag ("bad option"): where relaxed SIMD is already on, the child
// runs without it.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { hasRelaxedSimd } from '../web/core/attention.js';
import { timeBuilds, buildsTable } from './lib.js';

const FLAG = '--experimental-wasm-relaxed-simd';
const flags = hasRelaxedSimd() ? [] : [FLAG];
const how = flags.length ? `\`${FLAG}\`` : 'relaxed SIMD on by default';

export function benchNodeRelaxed({ quick, progress }) {
  const plan = {
    sizes: quick ? [{ n: 1024, rounds: 3 }] : [{ n: 1024, rounds: 15 }, { n: 2048, rounds: 11 }, { n: 4096, rounds: 7 }],
    sampleMs: quick ? 2 : 5,
  };
  progress(`node ${flags.join(' ') || '(relaxed SIMD by default)'}: n = ${plan.sizes.map((s) => s.n).join(', ')}`);
  const p = spawnSync(process.execPath, [...flags, fileURLToPath(import.meta.url), 'child', JSON.stringify(plan)], { encoding: 'utf8', timeout: 600000 });
  if (p.status !== 0) return { error: (p.stderr || p.error?.message || `exit ${p.status}`).trim().split('\n').slice(-3).join(' ') };
  return JSON.parse(p.stdout.trim().split('\n').pop());
}

async function child({ sizes, sampleMs }) {
  const { createAttention, hasRelaxedSimd } = await import('../web/core/attention.js');
  const { loadOrt } = await import('./impls.js');
  const relaxed = await createAttention(), exact = await createAttention({ relaxed: false });
  const ort = await loadOrt();
  await ort.session(64);
  const impls = {
    default: (x) => exact.attention(x, { weights: false }).output.data,
    relaxed: (x) => relaxed.attention(x, { weights: false }).output.data,
    ort: (x) => ort.forward(x),
  };
  return { hasRelaxed: hasRelaxedSimd(), relaxedUsed: relaxed.relaxed, exactRelaxed: exact.relaxed, sizes: await timeBuilds(impls, sizes, sampleMs, 1000) };
}

export function nodeRelaxedReport(c) {
  if (c.error) return `Not measured: ${c.error}`;
  return [
    `### Node ${process.version} with ${how}, one process, d = 64, \`weights: false\`; median ms per forward`,
    '',
    `Relaxed SIMD with the flag: ${c.hasRelaxed ? 'yes' : 'no'}; \`createAttention()\` ran the ${c.relaxedUsed ? 'fused multiply-add' : '**default**'} build ("attnmap relaxed"); "attnmap" is \`createAttention({ relaxed: false })\`${c.exactRelaxed ? ' (**which ran the relaxed build**)' : ''}.`,
    '',
    buildsTable(c.sizes),
    '',
    `bench/node-relaxed.js in a child \`${['node', ...flags].join(' ')}\`: what Node 22 and later run without a flag (on a newer V8, so only an indication). ` +
      'Samples rotate between the three implementations each round; onnxruntime-web as in the main table. Differences are against attnmap\'s default build.',
  ].join('\n');
}

if (process.argv[2] === 'child') {
  console.log(JSON.stringify(await child(JSON.parse(process.argv[3]))));
}
