// model-llama.test.js - the LLaMA family (Llama, Qwen2, Qwen3) against PyTorch: the checkpoints
// of tests/golden/llama/ (made by make_golden.py from a float64 torch forward written from
// Hugging Face's modelling code) loaded from their folders, in every dtype, GQA ratio 1, 2 and 4,
// head_dim ≠ hidden/heads, llama3 RoPE scaling past original_max_position_embeddings, tied and
// untied heads, biases, Qwen3's q/k norms, a sharded checkpoint. Logits and every attention map
// within the project's model tolerances, greedy ids equal, and the KV cache's rows equal to the
// full pass's on every layer and head.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel } from '../../web/model/model-node.js';
import { readConfig } from '../../web/model/load/config.js';
import { root } from '../helpers.js';
import { maxDiff } from '../model-helpers.js';

const GOLDEN = path.join(root, 'tests/golden/llama');
const CASES = fs.readdirSync(GOLDEN).filter((d) => fs.existsSync(path.join(GOLDEN, d, 'expected.json')));
const LOGITS_TOL = 1e-4, ATTENTION_TOL = 1e-5;   // as GPT-2's golden tests; float32 vs float64 here: ≤ 1.7e-5, ≤ 1.9e-6

test('the golden cases are all here', () => {
  assert.deepEqual(CASES.sort(), ['llama-bias-f32', 'llama-f32', 'llama3-rope-bf16', 'qwen2-bf16', 'qwen2-sharded-f32', 'qwen3-f16-headdim']);
});

for (const name of CASES) {
  const folder = path.join(GOLDEN, name), g = JSON.parse(fs.readFileSync(path.join(folder, 'expected.json'), 'utf8'));

  // RoPE's frequencies (c_src/rope.c, which the model runs) against PyTorch's: tests/unit/rope.test.js
  test(`${name}: the config as HF reads it`, () => {
    const c = readConfig(fs.readFileSync(path.join(folder, 'config.json'), 'utf8'));
    assert.deepEqual([c.family, c.layers, c.heads, c.kvHeads, c.headDim, c.hidden, c.vocab_size, c.n_positions, c.tied, c.qkNorm],
      ['llama', g.config.layers, g.config.heads, g.config.kvHeads, g.config.headDim, g.config.hidden, g.config.vocab, g.config.positions, g.config.tied, g.config.qkNorm]);
  });

  test(`${name}: logits and every layer's and query head's attention equal PyTorch's (${g.dtype})`, async () => {
    const model = await loadModel(folder);
    try {
      assert.equal(model.config.family, 'llama');
      for (const seq of g.sequences) {
        const { logits, attention } = model.forward(seq.ids, { attention: true });
        const dl = maxDiff(seq.logits, logits.data);
        assert.ok(dl <= LOGITS_TOL, `${seq.ids.length} tokens: logits differ by ${dl}`);
        let da = 0;
        seq.attention.forEach((heads, l) => heads.forEach((map, h) => { da = Math.max(da, maxDiff(map, attention[l][h].data)); }));
        assert.ok(da <= ATTENTION_TOL, `${seq.ids.length} tokens: attention differs by ${da}`);
      }
    } finally {
      model.dispose();
    }
  });

  test(`${name}: greedy generation with the KV cache gives PyTorch's ids; the cache's rows are the full pass's`, async () => {
    const model = await loadModel(folder);
    try {
      const ids = [];
      for await (const step of model.generate(g.greedy.prompt, { maxTokens: g.greedy.new_tokens.length, stop: false, attention: true })) ids.push(step);
      assert.deepEqual(ids.map((s) => s.id), g.greedy.new_tokens);
      // each step's attention rows against a full pass over the same ids
      const all = [...g.greedy.prompt, ...g.greedy.new_tokens.slice(0, -1)];
      const full = model.forward(all, { attention: true }).attention, n = all.length;
      ids.forEach((step, k) => {
        const row = g.greedy.prompt.length - 1 + k;
        step.attention.forEach((heads, l) => heads.forEach((r, h) => {
          const want = full[l][h].data.subarray(row * n, row * n + row + 1);
          assert.ok(maxDiff(Array.from(want), r) <= 1e-6, `step ${k}, layer ${l}, head ${h}`);
        }));
      });
    } finally {
      model.dispose();
    }
  });
}
