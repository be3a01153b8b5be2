// tiny-profile.js - the tiny call in a loop, for a profiler:
//
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/tiny-profile.js [self|attention|nested] [calls]
//
// selfAttention (or attention) at n = 3, d_model = d_k = d_v = 8 through the public API, as in
// bench.js's tiny-call table. Prints µs per call; open the .cpuprofile in Chrome DevTools.
import { createAttention } from '../web/core/attention.js';
import { makeInputs, makeSelfInputs, nested } from './lib.js';

const [which = 'self', callsArg = '300000'] = process.argv.slice(2);
const calls = Number(callsArg);
const attn = await createAttention();
const self = makeSelfInputs(3, 8), att = makeInputs(3, 8);
const selfNested = { x: nested(self.x), wq: nested(self.wq), wk: nested(self.wk), wv: nested(self.wv) };
const run = {
  self: () => attn.selfAttention(self),
  nested: () => attn.selfAttention(selfNested),
  attention: () => attn.attention(att, { weights: false }),
}[which];
for (let i = 0; i < 10000; i++) run();
const t0 = performance.now();
for (let i = 0; i < calls; i++) run();
console.log(`${which}: ${(((performance.now() - t0) * 1000) / calls).toFixed(2)} µs per call`);
