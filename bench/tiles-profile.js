// tiles-profile.js - single-head attention (d = 64, { weights: false }: the tiled kernel) against
// onnxruntime-web in one process, for comparing builds of the kernel (issue 39 item 7):
//
//   node bench/tiles-profile.js [--n 1024,2048] [--rounds 15] [build.wasm ...]
//
// Each build given (default: web/wasm/attention.wasm) is loaded with createAttention({ wasm }),
// checked against the first one and against onnxruntime-web (max |difference| <= 1e-4), then
// sampled round-robin with onnxruntime-web (bench/runner.js: warm-up, a few ms per sample, the
// order rotating each round). Prints per n the median ms of each and its ratio to
// onnxruntime-web's (and the same for the fastest samples), and the load average before and after. Needs bench/node_modules
// (node bench/install.js).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAttention } from '../web/core/attention.js';
import { loadOrt } from './impls.js';
import { makeInputs, maxAbsDiff, median } from './lib.js';
import { TOLERANCE, root } from './plan.js';
import { firstCall, repsFor, roundRobin, sample, warmUp } from './runner.js';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const sizes = option('--n', '1024,2048').split(',').map(Number);
const rounds = Number(option('--rounds', '15'));
const files = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
if (!files.length) files.push(path.join(root, 'web/wasm/attention.wasm'));

// one build through the public API, as loadOurs does with the embedded one
async function loadBuild(file) {
  const attn = await createAttention({ wasm: fs.readFileSync(file) });
  return { name: path.basename(file), forward: (inputs) => attn.attention(inputs, { weights: false }).output.data };
}

// the implementations at one size, their outputs checked, then timed round-robin
async function measure(impls, n) {
  const inputs = makeInputs(n, 64);
  const ref = impls[0].forward(inputs);
  const live = [];
  for (const impl of impls) {
    const { out, isAsync, once } = await firstCall(impl, inputs);
    const diff = maxAbsDiff(out, ref);
    if (!(diff <= TOLERANCE)) throw new Error(`n = ${n}: ${impl.name} differs from ${impls[0].name} by ${diff}; expected <= ${TOLERANCE}`);
    const reps = repsFor(await warmUp(impl, inputs, isAsync, once, { calls: 200 }));
    live.push({ name: impl.name, ms: [], sample: () => sample(impl, inputs, reps, isAsync) });
  }
  await roundRobin(live, rounds);
  return live.map((x) => ({ name: x.name, ms: median(x.ms), min: Math.min(...x.ms) }));
}

const ort = await loadOrt();
await ort.session(64);
const builds = [];
for (const file of files) builds.push(await loadBuild(file));
const impls = [...builds, { name: 'onnxruntime-web', forward: ort.forward }];
console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
for (const n of sizes) {
  const res = await measure(impls, n);
  const ortMs = res.at(-1).ms;
  const ortMin = res.at(-1).min;
  for (const r of res) {
    console.log(`n = ${n}  ${r.name.padEnd(28)} median ${r.ms.toFixed(3)} ms  ${(r.ms / ortMs).toFixed(3)}× onnxruntime-web  (fastest sample ${r.min.toFixed(3)} ms, ${(r.min / ortMin).toFixed(3)}×)`);
  }
}
console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
