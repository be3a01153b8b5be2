// tiny.js - the tiny call (n = 3, d_model = d_k = d_v = 8, the episode's size): median µs per call
// over batches of calls, batches interleaved; the public API, plain JS, the peers, and the C
// kernels alone through the committed wasm's exports.
import fs from 'node:fs';
import path from 'node:path';
import { makeInputs, makeSelfInputs, median, nested } from './lib.js';
import { TINY, WARMUP_MS, progress, root } from './plan.js';
import { now } from './runner.js';

export async function tinyCalls(impls) {
  progress(`tiny calls: ${TINY.batches} batches of ${TINY.calls}`);
  const cases = await tinyCases(impls);
  for (const c of cases) {                          // warm-up, as in benchSize
    c.us = [];
    for (let i = 0, t0 = now(); i < 20000 && now() - t0 < WARMUP_MS; i++) await c.run();
  }
  for (let b = 0; b < TINY.batches; b++) {
    for (let i = 0; i < cases.length; i++) {
      const c = cases[(i + b) % cases.length];
      const t0 = now();
      if (c.async) for (let j = 0; j < c.calls; j++) await c.run();
      else for (let j = 0; j < c.calls; j++) c.run();
      c.us.push(((now() - t0) * 1000) / c.calls);
    }
  }
  return cases.map(({ name, label, calls, us }) => ({ name, label, calls, batches: us.length, median: median(us), min: Math.min(...us) }));
}

async function tinyCases(impls) {
  const self = makeSelfInputs(3, 8);
  const selfNested = { x: nested(self.x), wq: nested(self.wq), wk: nested(self.wk), wv: nested(self.wv) };
  const att = makeInputs(3, 8);
  const { attn } = impls.ours;
  const cases = [
    { name: 'self', label: 'attnmap: selfAttention, { data, shape } inputs', calls: TINY.calls, run: () => attn.selfAttention(self) },
    { name: 'selfNested', label: 'attnmap: selfAttention, number[][] inputs', calls: TINY.calls, run: () => attn.selfAttention(selfNested) },
    { name: 'attnNoW', label: 'attnmap: attention, { weights: false }', calls: TINY.calls, run: () => attn.attention(att, { weights: false }) },
    { name: 'attnW', label: 'attnmap: attention, { weights: true }', calls: TINY.calls, run: () => attn.attention(att) },
    { name: 'plain', label: 'plain JS attention', calls: TINY.calls, run: () => impls.plain.forward(att) },
  ];
  // the C kernels alone: the committed wasm instantiated here, called through its exports with
  // the inputs already in its memory (no checks, no copies, no result objects): the floor
  // under the public API's time
  const raw = await rawKernels(self, att);
  if (raw) cases.push(...raw);
  if (impls.ort) {
    const session = await impls.ort.session(8);
    const { ort } = impls.ort;
    const feeds = () => ({
      q: new ort.Tensor('float32', att.q.data, [3, 8]), k: new ort.Tensor('float32', att.k.data, [3, 8]),
      v: new ort.Tensor('float32', att.v.data, [3, 8]),
    });
    cases.push({ name: 'ort', label: 'onnxruntime-web: session.run, bare attention graph', calls: TINY.calls, async: true, run: () => session.run(feeds()) });
  }
  if (impls.tf) cases.push({ name: 'tf', label: 'TF.js wasm: attention ops + dataSync', calls: Math.ceil(TINY.calls / 10), run: () => impls.tf.forward(att) });
  return cases;
}

async function rawKernels(self, att) {
  try {
    const bytes = fs.readFileSync(path.join(root, 'web/wasm/attention.wasm'));
    const { instance } = await WebAssembly.instantiate(bytes, { env: { emscripten_notify_memory_growth() {} } });
    const e = instance.exports;
    e._initialize?.();
    const base = e.malloc(1 << 16), f32 = new Float32Array(e.memory.buffer);
    const at = (i) => base + i * 256;               // 64 floats per slot: enough for (8, 8)
    [self.x, self.wq, self.wk, self.wv, att.q, att.k, att.v].forEach((m, i) => f32.set(m.data, at(i) >>> 2));
    const scale = e.attn_default_scale(8);
    // attn_workspace_size(n, m, d_k, d_v), or the older (m): extra arguments are ignored
    if (e.attn_workspace_size(3, 3, 8, 8) > 16 * 256) throw new Error('workspace larger than expected');
    const selfRun = () => e.attn_self_forward(at(7), at(8), at(9), at(10), at(11), at(12), at(13), at(0), at(1), at(2), at(3), 0, 3, 8, 8, 8, scale, 0);
    const attRun = () => e.attn_forward(at(14), 0, at(15), at(4), at(5), at(6), 0, 3, 3, 8, 8, scale, 0);
    if (selfRun() !== 0 || attRun() !== 0) throw new Error('a kernel returned an error status');
    return [
      { name: 'rawSelf', label: 'attnmap C alone: attn_self_forward via the wasm export', calls: TINY.calls, run: selfRun },
      { name: 'rawAtt', label: 'attnmap C alone: attn_forward, weights NULL, via the wasm export', calls: TINY.calls, run: attRun },
    ];
  } catch (err) {
    progress(`tiny calls: the raw kernels were not measured: ${err.message}`);
    return null;
  }
}
