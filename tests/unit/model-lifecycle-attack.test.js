// model-lifecycle-attack.test.js - a model's life under attack (issue 35, findings 11 and 13).
// 11: a getter, a Proxy or a callback among the arguments of a public method (forward, generate,
// encode, decode, tokens, fillMask; the runtime's forward and upload) that calls dispose(): the
// call fails with INVALID_ARGUMENT "the model was disposed", never runs on freed memory (it
// failed with "every dimension must be at least 1", "unknown flag bits" or a wrong TOO_LARGE),
// the memory and the workers are freed once the call is over, and the other models go on with
// their bits. 13: threads past the host's cores are clamped to them (model.threads, and
// model.threadsRequested for what was asked), and the workers of models dropped undisposed end
// when they are garbage-collected (a child process with --expose-gc).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { loadModel } from '../../web/model/model-node.js';
import { createRuntime, useThreadHost } from '../../web/model/runtime.js';
import { spawnNode, build, cores } from '../../web/model/threads/threads-node.js';
import { root } from '../helpers.js';

const TOY = path.join(root, 'web/models/toy-zh');                    // GPT-2 with vocab.txt
const MLM = path.join(root, 'tests/golden/bert/bert-mlm-f32');       // BERT with a masked-LM head and vocab.txt
const QWEN = path.join(root, 'tests/golden/llama/qwen2-bf16');
const IDS = [5, 6, 7, 8];
const bytes = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
// the error a call gets when its arguments dispose the model; its cause, when it has one, says
// the call stopped there (the model's or the runtime's check after the arguments were read), not
// in a step that ran on a freed model ("no model", "4 GiB", a C status)
const disposedError = (name) => (e) => e.name === 'AttentionError' && e.code === 'INVALID_ARGUMENT'
  && e.message.startsWith(`model.${name}: the model was disposed`)
  && (e.cause === undefined || /^(model\.\w+|forward): the (model|runtime) was disposed/.test(e.cause.message));

// the host with its own spawn, counting workers started and ended, and `count` cores
function countingHost(count) {
  const seen = { started: 0, exits: [] };
  useThreadHost({ spawn: (d) => { const w = spawnNode(d); seen.started++; w.exited.then((c) => seen.exits.push(c)); return w; }, build, cores: () => count });
  return seen;
}
const restoreHost = () => useThreadHost({ spawn: spawnNode, build, cores });

// an array whose element i calls fn when read
function trapAt(values, i, fn) {
  const a = [...values];
  Object.defineProperty(a, i, { get() { fn(); return values[i]; }, enumerable: true });
  return a;
}

// Each attack: the method, and how its arguments dispose the model (m) when read.
const DECODER_ATTACKS = [
  ['forward', 'a Proxy of ids whose length disposes', (m) => m.forward(new Proxy(IDS, { get: (t, k) => { if (k === 'length') m.dispose(); return t[k]; } }))],
  ['forward', 'an id whose getter disposes', (m) => m.forward(trapAt(IDS, 2, () => m.dispose()))],
  ['forward', 'options.attention as a getter that disposes', (m) => m.forward(IDS, { get attention() { m.dispose(); return true; } })],
  ['forward', 'attention.layers whose getter disposes', (m) => m.forward(IDS, { attention: { get layers() { m.dispose(); return [0]; } } })],
  ['generate', 'an id whose getter disposes', (m) => m.generate(trapAt(IDS, 0, () => m.dispose()))],
  ['generate', 'options.maxTokens as a getter that disposes', (m) => m.generate(IDS, { get maxTokens() { m.dispose(); return 3; } })],
  ['encode', 'options.specialTokens as a getter that disposes', (m) => m.encode('猫吃鱼', { get specialTokens() { m.dispose(); return false; } })],
  ['decode', 'an id whose getter disposes', (m) => m.decode(trapAt(IDS, 1, () => m.dispose()))],
  ['tokens', 'an id whose getter disposes', (m) => m.tokens(trapAt(IDS, 1, () => m.dispose()))],
];
const ENCODER_ATTACKS = [
  ['forward', 'an id whose getter disposes', (m) => m.forward(trapAt([2, 5, 4, 3], 1, () => m.dispose()))],
  ['forward', 'a mask entry whose getter disposes (read inside the runtime)', (m) => m.forward([2, 5, 4, 3], { mask: trapAt([1, 1, 1, 1], 3, () => m.dispose()) })],
  ['forward', 'options.tokenTypes as a getter that disposes', (m) => m.forward([2, 5, 4, 3], { get tokenTypes() { m.dispose(); return [0, 0, 0, 0]; } })],
  ['fillMask', 'options.topK as a getter that disposes', (m) => m.fillMask('猫吃[MASK]', { get topK() { m.dispose(); return 3; } })],
  ['fillMask', 'options.pair as a getter that disposes', (m) => m.fillMask('猫吃[MASK]', { get pair() { m.dispose(); return '鱼'; } })],
];

// A model of `folder` on `threads` threads is attacked; a bystander loaded before it must give
// the same bits after as before; the attacked model's workers must all end.
async function attack(folder, attacks, threads, input) {
  const seen = countingHost(threads);
  try {
    const bystander = await loadModel(folder, { threads });
    const out = (m) => { const r = m.forward(input, { attention: true }); return bytes((r.logits ?? r.hidden).data); };
    const before = out(bystander);
    for (const [name, how, call] of attacks) {
      const m = await loadModel(folder, { threads });
      const others = seen.started - (threads - 1);   // every worker but the bystander's
      assert.throws(() => call(m), disposedError(name), `${name} with ${how} (${threads} threads)`);
      assert.throws(() => m.forward(input), disposedError('forward'), `a later call, after ${name} with ${how}`);
      m.dispose();   // again: nothing more happens
      // the attacked model's workers end once the call is over (none left running on its memory)
      for (let i = 0; i < 250 && seen.exits.length < others; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(seen.exits.length, others, `${name} with ${how}: the attacked model's workers ended`);
    }
    assert.ok(out(bystander).equals(before), 'the bystander gives the same bits');
    bystander.dispose();
  } finally {
    restoreHost();
  }
}

for (const threads of [1, 2]) {
  test(`11: a getter that disposes the model, on each argument of each method of a decoder: "the model was disposed" (${threads} thread${threads > 1 ? 's' : ''})`, async () => {
    await attack(TOY, DECODER_ATTACKS, threads, IDS);
  });
  test(`11: the same for an encoder's forward and fillMask (${threads} thread${threads > 1 ? 's' : ''})`, async () => {
    await attack(MLM, ENCODER_ATTACKS, threads, [2, 5, 4, 3]);
  });
}

// generate's steps run after the call: a dispose between them (from the consumer's loop) fails
// the next step, and a generator made before a dispose never starts
test('11: dispose while a generation is under way, or before its first step', async () => {
  const m = await loadModel(TOY);
  const gen = m.generate(IDS, { maxTokens: 5, stop: false });
  const later = m.generate(IDS, { maxTokens: 5, stop: false });
  assert.equal((await gen.next()).done, false);
  m.dispose();
  await assert.rejects(gen.next(), (e) => e.code === 'INVALID_ARGUMENT' && /the model was disposed/.test(e.message));
  await assert.rejects(later.next(), (e) => e.code === 'INVALID_ARGUMENT' && /the model was disposed/.test(e.message));
});

// The runtime on its own: forward's ids and upload's fill may dispose it; the call fails, the
// memory is freed once it is over, and a new upload on the same instance works.
test('11: the runtime: dispose from forward\'s ids or from upload\'s fill waits for the call, which then fails', async () => {
  const config = { n_layer: 1, n_head: 2, n_embd: 8, vocab_size: 16, n_positions: 8, layer_norm_epsilon: 1e-5 };
  // every parameter a small value of its place (LayerNorm weights around 1)
  const fill = (kind, layer, dest) => dest.forEach((_, i) => { dest[i] = (/^ln.*_w$/.test(kind) ? 1 : 0) + 0.05 * Math.sin(i + 3 * layer); });
  const rt = await createRuntime();
  await rt.upload(config, fill);
  const expected = bytes(rt.forward([1, 2, 3]).logits.data);
  assert.throws(() => rt.forward(trapAt([1, 2, 3], 1, () => rt.dispose())),
    (e) => e.code === 'INVALID_ARGUMENT' && e.message === 'forward: the runtime was disposed while the arguments were read');
  assert.equal(rt.config, null, 'disposed once the call was over');
  let n = 0;
  assert.throws(() => rt.upload(config, (...a) => { if (++n === 3) rt.dispose(); return fill(...a); }),
    (e) => e.code === 'INVALID_ARGUMENT' && e.message === 'upload: the runtime was disposed during the call');
  assert.equal(rt.config, null);
  await rt.upload(config, fill);
  assert.ok(bytes(rt.forward([1, 2, 3]).logits.data).equals(expected), 'the instance goes on with the same bits');
  rt.dispose();
});

test('13: threads past the host\'s cores are clamped to them: model.threads, and threadsRequested', async () => {
  const here = os.availableParallelism();
  if (here < 16) {
    const m = await loadModel(QWEN, { threads: here + 1 });
    assert.deepEqual([m.threads, m.threadsRequested], [here, here + 1], `${here} cores here`);
    m.dispose();
  }
  const seen = countingHost(2);
  try {
    const m = await loadModel(QWEN, { threads: 16 });
    const one = await loadModel(QWEN, { threads: 1 });
    assert.deepEqual([m.threads, m.threadsRequested, seen.started], [2, 16, 1], 'a host of 2 cores: 2 threads, one worker');
    assert.deepEqual([one.threads, one.threadsRequested], [1, 1]);
    assert.ok(bytes(m.forward(IDS).logits.data).equals(bytes(one.forward(IDS).logits.data)));
    m.dispose(); one.dispose();
  } finally {
    restoreHost();
  }
});

// 30 models on 2 threads, never disposed, dropped: once collected, each one's worker ends. A
// child with --expose-gc; its loop of gc() and waits is a budget, the test asserts the count.
test('13: the workers of models dropped undisposed end when they are garbage-collected', { timeout: 180000 }, () => {
  const url = (p) => JSON.stringify(new URL(`../../web/model/${p}`, import.meta.url).href);
  const script = `
    const { loadModel } = await import(${url('model-node.js')});
    const { useThreadHost } = await import(${url('runtime.js')});
    const { spawnNode, build } = await import(${url('threads/threads-node.js')});
    let started = 0, ended = 0;
    useThreadHost({ spawn: (d) => { const w = spawnNode(d); started++; w.exited.then(() => ended++); return w; }, build, cores: () => 2 });
    const load = async () => { const m = await loadModel(${JSON.stringify(QWEN)}, { threads: 2 }); m.forward([1, 2, 3]); };
    for (let i = 0; i < 30; i++) await load();
    for (let i = 0; i < 300 && ended < started; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 50)); }
    console.log(JSON.stringify({ started, ended }));
  `;
  const out = execFileSync(process.execPath, ['--expose-gc', '--max-old-space-size=512', '--input-type=module', '-e', script],
    { encoding: 'utf8', cwd: root, timeout: 170000 });
  const { started, ended } = JSON.parse(out.trim().split('\n').pop());
  assert.deepEqual({ started, ended }, { started: 30, ended: 30 }, 'every dropped model\'s worker ended');
});

test('the fixtures are here', () => {
  for (const f of [TOY, MLM, QWEN]) assert.ok(fs.existsSync(path.join(f, 'config.json')), f);
});
