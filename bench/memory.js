// memory.js - peak memory of one forward, in a fresh process: node bench/memory.js IMPL N
//
// Loads the implementation, runs one tiny forward (so that lazy set-up is not counted), makes
// the (N, 64) inputs, collects garbage, resets the kernel's peak-RSS mark (writing 5 to
// /proc/self/clear_refs, Linux >= 4.0), runs one forward at N and reads the peak back (VmHWM
// in /proc/self/status). growth = peak - RSS just before the forward. (resourceUsage().maxRSS
// cannot be reset and, in a child, starts from the parent's size at fork.) For ours it also
// reports the wasm memory (attn.memoryBytes) before and after. retained = RSS after the forward
// and a GC - RSS before (wasm memory never shrinks; the peers keep their arenas). One JSON line.
import fs from 'node:fs';
import { loaders } from './impls.js';
import { makeInputs } from './lib.js';

const status = (key) => Number(fs.readFileSync('/proc/self/status', 'utf8').match(new RegExp(`${key}:\\s+(\\d+) kB`))[1]) * 1024;

const [which, nArg] = process.argv.slice(2);
const n = Number(nArg), d = 64;
const impl = await loaders[which]();
await impl.forward(makeInputs(4, d));
const inputs = makeInputs(n, d);
globalThis.gc?.();
fs.writeFileSync('/proc/self/clear_refs', '5');
const rssBefore = status('VmRSS');
const wasmBefore = impl.attn?.memoryBytes;
const out = await impl.forward(inputs);
const peak = status('VmHWM');
const wasmAfter = impl.attn?.memoryBytes;
if (out.length !== n * d) throw new Error(`memory ${which}: unexpected output`);
// what stays after a GC: wasm memory never shrinks, and the peers keep their arenas
globalThis.gc?.();
const rssAfter = status('VmRSS');
console.log(JSON.stringify({
  impl: which, n, rssBefore, peak, growth: peak - rssBefore, rssAfter, retained: rssAfter - rssBefore, wasmBefore, wasmAfter,
}));
process.exit(0);
