// model-bert.test.js - BERT encoders against PyTorch: the checkpoints of tests/golden/bert/ (made by
// make_golden.py from a float64 torch forward written from Hugging Face's modeling_bert.py) loaded
// from their folders: BertForMaskedLM with the `bert.` prefix and the tied decoder stored, a
// BertForPreTraining-shaped file with gamma/beta LayerNorms, pooler and NSP head, a BertModel without
// a head; F32, BF16, F16; 1 to 3 layers; single texts, sentence pairs and padding under a mask.
// Logits (or hidden states) and every attention map within the project's model tolerances;
// fill-mask's tokens and probabilities; the API's refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadModel } from '../../web/model/model-node.js';
import { root } from '../helpers.js';
import { maxDiff } from '../model-helpers.js';

const GOLDEN = path.join(root, 'tests/golden/bert');
const CASES = fs.readdirSync(GOLDEN).filter((d) => fs.existsSync(path.join(GOLDEN, d, 'expected.json')));
const OUT_TOL = 1e-4, ATTENTION_TOL = 1e-5;   // as GPT-2's and LLaMA's golden tests; float32 vs float64: ≤ 1.2e-5, ≤ 9.2e-7

const rejects = (fn, code, re) => assert.throws(fn, (e) => e.code === code && re.test(e.message), `expected ${code} matching ${re}`);

test('the golden cases are all here', () => {
  assert.deepEqual(CASES.sort(), ['bert-encoder-f16', 'bert-mlm-f32', 'bert-pair-bf16']);
});

for (const name of CASES) {
  const folder = path.join(GOLDEN, name), g = JSON.parse(fs.readFileSync(path.join(folder, 'expected.json'), 'utf8'));

  test(`${name}: ${g.config.head ? 'logits' : 'hidden states'} and every layer's and head's attention equal PyTorch's (${g.dtype}, ${g.config.layers} layer${g.config.layers > 1 ? 's' : ''})`, async () => {
    const model = await loadModel(folder);
    try {
      assert.deepEqual([model.config.family, model.config.layers, model.config.heads, model.config.encoder], ['bert', g.config.layers, g.config.heads, true]);
      for (const seq of g.sequences) {
        const r = model.forward(seq.ids, { attention: true, tokenTypes: seq.types, mask: seq.mask });
        const out = g.config.head ? r.logits : r.hidden;
        assert.ok(out, `the result has ${g.config.head ? 'logits' : 'hidden'}`);
        assert.deepEqual(out.shape, [seq.ids.length, g.config.head ? g.config.vocab : g.config.hidden]);
        const d = maxDiff(g.config.head ? seq.logits : seq.hidden, out.data);
        assert.ok(d <= OUT_TOL, `${seq.ids.length} tokens: output differs by ${d}`);
        let da = 0;
        seq.attention.forEach((heads, l) => heads.forEach((map, h) => { da = Math.max(da, maxDiff(map, r.attention[l][h].data)); }));
        assert.ok(da <= ATTENTION_TOL, `${seq.ids.length} tokens: attention differs by ${da}`);
        // bidirectional: the first token attends to the last real one (no causal triangle), padding gets 0
        const n = seq.ids.length, real = seq.mask.lastIndexOf(1), a = r.attention[0][0].data;
        assert.ok(a[real] > 0, 'row 0 sees the last real token');
        for (let i = 0; i < n; i++) for (let j = real + 1; j < n; j++) assert.equal(a[i * n + j], 0, `padding key ${j} seen from ${i}`);
      }
    } finally {
      model.dispose();
    }
  });
}

test('bert-pair-bf16: types change the result (a pair is not two texts run together)', async () => {
  const folder = path.join(GOLDEN, 'bert-pair-bf16'), g = JSON.parse(fs.readFileSync(path.join(folder, 'expected.json'), 'utf8'));
  const model = await loadModel(folder);
  try {
    const pair = g.sequences[1];
    const zeros = model.forward(pair.ids).logits.data, typed = model.forward(pair.ids, { tokenTypes: pair.types }).logits.data;
    assert.ok(maxDiff(Array.from(zeros), typed) > 1e-3, 'token types are read');
    assert.ok(maxDiff(pair.logits, typed) <= OUT_TOL);
  } finally {
    model.dispose();
  }
});

test('fill-mask: 猫吃[MASK] gives PyTorch\'s top tokens and probabilities, from vocab.txt', async () => {
  for (const name of ['bert-mlm-f32', 'bert-pair-bf16']) {
    const g = JSON.parse(fs.readFileSync(path.join(GOLDEN, name, 'expected.json'), 'utf8'));
    const model = await loadModel(path.join(GOLDEN, name));
    try {
      assert.deepEqual(model.encode('猫吃[MASK]'), { ids: g.fill_mask.ids, tokenTypes: g.fill_mask.ids.map(() => 0) });
      const [fill, ...more] = model.fillMask(g.fill_mask.text, { topK: g.fill_mask.top.length });
      assert.equal(more.length, 0);
      assert.equal(fill.index, 3);
      assert.deepEqual(fill.top.map((t) => [t.id, t.token]), g.fill_mask.top.map((t) => [t.id, t.token]));
      fill.top.forEach((t, i) => assert.ok(Math.abs(t.p - g.fill_mask.top[i].p) <= 1e-5, `${name}: p of ${t.token}: ${t.p} vs ${g.fill_mask.top[i].p}`));
      assert.equal(model.fillMask('[MASK]吃[MASK]').length, 2, 'one answer per [MASK]');
      // with a second sentence: the gap is read in [CLS] a [SEP] b [SEP] with its token types,
      // the answer is the softmax of forward's logits there (forward checked against PyTorch above)
      const pair = model.encode('猫吃[MASK]', '狗追猫');
      const V = model.config.vocab_size, row = model.forward(pair.ids, { tokenTypes: pair.tokenTypes }).logits.data.subarray(3 * V, 4 * V);
      const max = Math.max(...row), z = row.reduce((a, x) => a + Math.exp(x - max), 0);
      const [paired] = model.fillMask('猫吃[MASK]', { topK: 3, pair: '狗追猫' });
      assert.equal(paired.index, 3);
      const want = Array.from(row, (x, id) => ({ id, p: Math.exp(x - max) / z })).sort((a, b) => b.p - a.p).slice(0, 3);
      assert.deepEqual(paired.top.map((t) => t.id), want.map((t) => t.id));
      paired.top.forEach((t, i) => assert.ok(Math.abs(t.p - want[i].p) <= 1e-12));
      assert.notDeepEqual(paired.top.map((t) => t.p), fill.top.slice(0, 3).map((t) => t.p), 'the second sentence changes the answer');
    } finally {
      model.dispose();
    }
  }
});

test('encode(a, b): [CLS] a [SEP] b [SEP] with token types', async () => {
  const model = await loadModel(path.join(GOLDEN, 'bert-mlm-f32'));
  try {
    const words = fs.readFileSync(path.join(GOLDEN, 'bert-mlm-f32', 'vocab.txt'), 'utf8').split('\n');
    const id = (t) => words.indexOf(t);
    assert.deepEqual(model.encode('猫吃鱼', '鱼吃猫'), {
      ids: [id('[CLS]'), id('猫'), id('吃'), id('鱼'), id('[SEP]'), id('鱼'), id('吃'), id('猫'), id('[SEP]')],
      tokenTypes: [0, 0, 0, 0, 0, 1, 1, 1, 1],
    });
  } finally {
    model.dispose();
  }
});

test('an encoder refuses what it cannot do, by name', async () => {
  const model = await loadModel(path.join(GOLDEN, 'bert-mlm-f32'));
  const noHead = await loadModel(path.join(GOLDEN, 'bert-encoder-f16'));
  try {
    rejects(() => model.generate([2, 5]), 'INVALID_ARGUMENT', /bert is an encoder.*fillMask/);
    rejects(() => model.forward([2, 5, 3], { mask: [0, 0, 0] }), 'INVALID_ARGUMENT', /mask is all 0/);
    rejects(() => model.forward([2, 5, 3], { mask: [1, 1] }), 'INVALID_ARGUMENT', /mask has 2 entries for 3 ids/);
    rejects(() => model.forward([2, 5, 3], { tokenTypes: [0, 2, 0] }), 'INVALID_ARGUMENT', /tokenTypes\[1\].*vocab_size = 2/);
    rejects(() => model.forward([2, 5, 3], { pos: 1 }), 'INVALID_ARGUMENT', /unknown option "pos"/);
    rejects(() => model.forward(Array(25).fill(5)), 'INVALID_ARGUMENT', /25 ids; the model reads at most max_position_embeddings = 24/);
    rejects(() => model.fillMask('猫吃鱼'), 'INVALID_ARGUMENT', /no \[MASK\] to fill/);
    rejects(() => model.fillMask('猫[MASK]', { topK: 0 }), 'INVALID_ARGUMENT', /topK must be an integer/);
    rejects(() => model.fillMask('猫[MASK]', { pair: 7 }), 'INVALID_ARGUMENT', /pair must be a string/);
    rejects(() => model.fillMask('猫[MASK]', { top: 3 }), 'INVALID_ARGUMENT', /unknown option "top"; expected topK or pair/);
    rejects(() => noHead.fillMask('猫吃[MASK]'), 'INVALID_ARGUMENT', /no masked-LM head/);
    assert.equal(model.forward([2, 5, 3]).logits.shape[1], 40, 'still usable after the refusals');
  } finally {
    model.dispose();
    noHead.dispose();
  }
});

// a copy of a golden folder with its model.safetensors rewritten by edit(header, body)
function variant(name, edit) {
  const from = path.join(GOLDEN, name), to = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-bert-'));
  for (const f of fs.readdirSync(from)) fs.copyFileSync(path.join(from, f), path.join(to, f));
  const bytes = fs.readFileSync(path.join(from, 'model.safetensors'));
  const n = Number(bytes.readBigUInt64LE(0)), header = JSON.parse(bytes.subarray(8, 8 + n).toString());
  const body = Buffer.from(bytes.subarray(8 + n));
  edit(header, body);
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (text.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(text)));
  fs.writeFileSync(path.join(to, 'model.safetensors'), Buffer.concat([len, Buffer.from(text), body]));
  return to;
}

test('hostile files: a decoder that is not the word table, a relative position type, a missing LayerNorm', async () => {
  const decoder = variant('bert-mlm-f32', (h, body) => {
    const [s] = h['cls.predictions.decoder.weight'].data_offsets;
    body.writeFloatLE(body.readFloatLE(s + 4 * 7) + 1, s + 4 * 7);
  });
  await assert.rejects(loadModel(decoder), (e) => e.code === 'INVALID_MODEL' && /cls\.predictions\.decoder\.weight" differs from bert\.embeddings\.word_embeddings\.weight at index 7/.test(e.message));
  const missing = variant('bert-pair-bf16', (h) => {   // its bytes kept under a name that is ignored
    h['bert.embeddings.position_ids'] = h['bert.encoder.layer.1.output.LayerNorm.beta'];
    delete h['bert.encoder.layer.1.output.LayerNorm.beta'];
  });
  await assert.rejects(loadModel(missing), (e) => e.code === 'INVALID_MODEL' && /"bert\.encoder\.layer\.1\.output\.LayerNorm\.bias" is missing/.test(e.message));
  const relative = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-bert-'));
  for (const f of fs.readdirSync(path.join(GOLDEN, 'bert-mlm-f32'))) fs.copyFileSync(path.join(GOLDEN, 'bert-mlm-f32', f), path.join(relative, f));
  const cfg = JSON.parse(fs.readFileSync(path.join(relative, 'config.json'), 'utf8'));
  for (const [key, value, re] of [['position_embedding_type', 'relative_key', /position_embedding_type is the string "relative_key"; only "absolute"/],
    ['hidden_act', 'gelu_new', /hidden_act is the string "gelu_new"; only "gelu"/], ['is_decoder', true, /is_decoder: true is not supported/]]) {
    fs.writeFileSync(path.join(relative, 'config.json'), JSON.stringify({ ...cfg, [key]: value }));
    await assert.rejects(loadModel(relative), (e) => e.code === 'INVALID_MODEL' && re.test(e.message), key);
  }
  for (const d of [decoder, missing, relative]) fs.rmSync(d, { recursive: true });
});
