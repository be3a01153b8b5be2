// page-words.test.js - what the page says, checked against what is true (issue 39, P3 and P9):
// the RoPE section named a model family the runtime refuses, its English misread the word-order
// demo, and the checkpoint's status said "已加载 checkpoint" in Chinese and "1 layers × 1 heads".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { zh, en } from '../../web/page/page-strings.js';
import * as WORDS from '../../web/page/page-rope-strings.js';
import { MODEL_TYPES } from '../../web/model/families/index.js';
import { loadModel } from '../../web/model/model-node.js';

const plain = (html) => html.replace(/<[^>]+>/g, '');

test('P3: the RoPE section names only families the runtime loads', async () => {
  for (const words of [WORDS.zh, WORDS.en]) {
    for (const name of ['Mistral', 'Gemma', 'Phi']) assert.doesNotMatch(plain(words.text), new RegExp(name), `${name} is not run (MODEL_TYPES: ${MODEL_TYPES.join(', ')})`);
  }
  // and a file of the family the text names loads: a Mistral config is refused by name
  await assert.rejects(loadModel({ config: { model_type: 'mistral', hidden_size: 8, intermediate_size: 16, num_hidden_layers: 1, num_attention_heads: 2, vocab_size: 8, max_position_embeddings: 8 }, weights: new Uint8Array(8) }),
    (e) => e.code === 'INVALID_MODEL' && /mistral/.test(e.message));
});

test('P3: without positions, reversing the sentence keeps 吃\'s weights (the English no longer says 猫 and 鱼 get the same)', () => {
  assert.doesNotMatch(WORDS.en.orderText, /gives 猫 and 鱼 exactly the same weights/);
  assert.match(WORDS.en.orderText, /stay exactly what they were/);
});

test('P9: the status names the checkpoint in the page\'s language, and English counts agree with their numbers', () => {
  const one = { n_layer: 1, n_head: 1, n_embd: 8, vocab_size: 10 }, many = { n_layer: 12, n_head: 12, n_embd: 768, vocab_size: 50257 };
  assert.doesNotMatch(zh.models.ckpt.loaded('', one, 'bpe', []), /checkpoint/);
  assert.match(zh.models.ckpt.loaded('', one, 'bpe', []), /^已加载 模型：1 层 × 1 个头/);
  assert.match(en.models.ckpt.loaded('', one, 'bpe', []), /^Loaded the checkpoint: 1 layer × 1 head, /);
  assert.match(en.models.ckpt.loaded('gpt2', many, 'bpe', []), /^Loaded gpt2: 12 layers × 12 heads, /);
});
