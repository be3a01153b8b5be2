// web/models/toy-zh (the toy model trained by scripts/train_toy_zh.py) through attnmap/model:
// the tokenizer gives the golden ids, forward gives the float64 PyTorch logits and attention of
// tests/golden/toy-zh.json, greedy predictions agree; the folder stays small and has its model card.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { root } from '../helpers.js';
import { maxDiff } from '../model-helpers.js';
import { loadModel } from '../../web/model/model-node.js';

const FOLDER = path.join(root, 'web/models/toy-zh');
const golden = JSON.parse(fs.readFileSync(path.join(root, 'tests/golden/toy-zh.json'), 'utf8'));
// as for tests/golden/gpt2 (model.test.js): float32 lands within ~1e-5 of float64 on logits, ~1e-6 on attention
const LOGITS_TOL = 1e-4, ATTENTION_TOL = 1e-5;
// an argmax is only compared where float64 wins by more than float32 can move it
const MIN_MARGIN = 1e-3;
const MAX_WEIGHT_BYTES = 200 * 1024;


function argmaxRows(logits) {
  const [n, V] = logits.shape;
  return Array.from({ length: n }, (_, i) => {
    let best = 0;
    for (let j = 1; j < V; j++) if (logits.data[i * V + j] > logits.data[i * V + best]) best = j;
    return best;
  });
}

test('toy-zh: config, vocabulary and the golden file agree', async () => {
  const model = await loadModel(FOLDER);
  try {
    const c = model.config;
    assert.deepEqual(
      { n_layer: c.n_layer, n_head: c.n_head, n_embd: c.n_embd, vocab_size: c.vocab_size, n_positions: c.n_positions, layer_norm_epsilon: c.layer_norm_epsilon },
      golden.config);
    const lines = fs.readFileSync(path.join(FOLDER, 'vocab.txt'), 'utf8').split('\n').filter((l) => l !== '');
    assert.equal(lines.length, c.vocab_size, 'vocab.txt has one line per token id');
    assert.equal(lines[1], '[UNK]');
    assert.ok(c.n_layer <= 2 && c.n_head >= 2 && c.n_head <= 4 && c.n_embd <= 64, 'a toy: 1-2 layers, 2-4 heads, d_model <= 64');
  } finally {
    model.dispose();
  }
});

for (const seq of golden.sequences) {
  test(`toy-zh: ${seq.text} (${seq.why}): ids, logits, every layer's and head's attention, argmax equal PyTorch's`, async () => {
    const model = await loadModel(FOLDER);
    try {
      const ids = model.encode(seq.text);
      assert.deepEqual(ids, seq.ids, 'encode(text): one id per character, no BOS');
      assert.deepEqual(model.tokens(ids), seq.tokens);
      const n = ids.length;
      const { n_layer: L, n_head: H, vocab_size: V } = golden.config;
      const r = model.forward(ids, { attention: true });
      assert.deepEqual(r.logits.shape, [n, V]);
      const dl = maxDiff(seq.logits, r.logits.data);
      assert.ok(dl <= LOGITS_TOL, `logits differ by ${dl}`);
      assert.equal(r.attention.length, L);
      for (let l = 0; l < L; l++) {
        assert.equal(r.attention[l].length, H);
        for (let h = 0; h < H; h++) {
          assert.deepEqual(r.attention[l][h].shape, [n, n]);
          const da = maxDiff(seq.attention[l][h], r.attention[l][h].data);
          assert.ok(da <= ATTENTION_TOL, `layer ${l} head ${h} differs by ${da}`);
        }
      }
      const next = argmaxRows(r.logits);
      let compared = 0;
      seq.next.forEach((want, i) => {
        if (seq.margins[i] < MIN_MARGIN) return;
        assert.equal(next[i], want, `argmax after position ${i}`);
        compared++;
      });
      assert.ok(compared >= n - 1, `${compared} of ${n} rows decisive`);
    } finally {
      model.dispose();
    }
  });
}

test('toy-zh: the training sentences are learned: after 猫吃 comes 鱼, after 狗吃 肉, after 猫喝 奶, after 鸟吃 虫', async () => {
  const model = await loadModel(FOLDER);
  try {
    for (const text of ['猫吃鱼', '狗吃肉', '猫喝奶', '鸟吃虫']) {
      const ids = model.encode(text);
      const next = argmaxRows(model.forward(ids.slice(0, 2)).logits);
      assert.equal(model.tokens([next[1]])[0], text[2], text);
    }
  } finally {
    model.dispose();
  }
});

test('toy-zh: greedy generation (KV cache) gives the golden new tokens (stop: false runs past 。, the eos)', async () => {
  const model = await loadModel(FOLDER);
  try {
    for (const g of golden.generate) {
      assert.deepEqual(model.encode(g.prompt), g.prompt_ids);
      const ids = [];
      for await (const step of model.generate(g.prompt_ids, { maxTokens: g.new_tokens.length, stop: false })) ids.push(step.id);
      assert.deepEqual(ids, g.new_tokens, `${g.prompt} → ${g.new_text}`);
    }
  } finally {
    model.dispose();
  }
});

test('toy-zh: weights at most 200 KB; the model card says it is a toy and how to retrain it', () => {
  const weights = fs.statSync(path.join(FOLDER, 'model.safetensors')).size;
  assert.ok(weights <= MAX_WEIGHT_BYTES, `model.safetensors is ${weights} bytes`);
  for (const f of ['config.json', 'vocab.txt', 'README.md']) assert.ok(fs.existsSync(path.join(FOLDER, f)), f);
  const card = fs.readFileSync(path.join(FOLDER, 'README.md'), 'utf8');
  assert.match(card, /\/usr\/bin\/python3 scripts\/train_toy_zh\.py/);
  assert.match(card, /This is a toy/);
  assert.match(card, /held-out/i);
  assert.ok(fs.existsSync(path.join(root, 'scripts/train_toy_zh.py')));
});
