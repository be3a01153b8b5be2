// A seeded property test of the BERT family's loader (issue 25): mutated config.json texts of the
// family (its own keys: type_vocab_size, layer_norm_eps, hidden_act, position_embedding_type,
// is_decoder, add_cross_attention, model_type), and mutated checkpoints (tensor names moved
// between weight/bias and gamma/beta, under and out of the bert. prefix, into the head or the
// pooler, dropped, doubled, reshaped; the tied decoder's bytes changed). Every outcome must be a
// model that runs, or an AttentionError (INVALID_MODEL, TOO_LARGE, NON_FINITE), never another exception.
//   BERT_FUZZ_SEED=7 BERT_FUZZ_CASES=3000 node --test tests/fuzz/bert-load.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { AttentionError } from '../../web/core/errors.js';
import { readConfig } from '../../web/model/load/config.js';
import { loadModel } from '../../web/model/model.js';
import { root, seeded } from '../helpers.js';

const SEED = Number(process.env.BERT_FUZZ_SEED || 25);
const CASES = Number(process.env.BERT_FUZZ_CASES || 1200);
const ALLOWED = new Set(['INVALID_MODEL', 'TOO_LARGE', 'NON_FINITE']);   // NON_FINITE: a flipped bit made a weight NaN, ±Inf or huge
const GOLDEN = path.join(root, 'tests/golden/bert');

const rand = seeded(SEED);
const int = (n) => Math.floor(rand() * n);
const pick = (xs) => xs[int(xs.length)];

const FOLDERS = fs.readdirSync(GOLDEN).filter((d) => fs.existsSync(path.join(GOLDEN, d, 'config.json'))).map((d) => path.join(GOLDEN, d));
const CONFIGS = FOLDERS.map((d) => JSON.parse(fs.readFileSync(path.join(d, 'config.json'), 'utf8')));
const KEYS = ['model_type', 'hidden_size', 'intermediate_size', 'num_hidden_layers', 'num_attention_heads', 'vocab_size',
  'max_position_embeddings', 'type_vocab_size', 'layer_norm_eps', 'hidden_act', 'position_embedding_type', 'is_decoder',
  'add_cross_attention'];
const VALUES = () => pick([0, 1, 2, 3, 5, 8, 16, -1, 0.5, 1e-12, 1e-50, 2 ** 31, 1e308, NaN, null, true, false, '', 'bert',
  'roberta', 'gelu', 'gelu_new', 'relu', 'absolute', 'relative_key', [], {}, [1]]);

function expectAllowed(e, what) {
  if (!(e instanceof AttentionError)) assert.fail(`${what}: threw ${e?.name}: ${e?.message}\n${e?.stack}`);
  assert.ok(ALLOWED.has(e.code), `${what}: code ${e.code} (${e.message})`);
}

test(`fuzz: ${CASES} mutated BERT config.json objects give a config or an AttentionError (seed ${SEED})`, () => {
  let read = 0;
  for (let i = 0; i < CASES; i++) {
    const c = structuredClone(pick(CONFIGS));
    for (let k = 1 + int(2); k > 0; k--) { const key = pick(KEYS); if (rand() < 0.25) delete c[key]; else c[key] = VALUES(); }
    try {
      const r = readConfig(c);
      if (r.family !== 'bert') continue;
      assert.ok(r.hidden % r.heads === 0 && r.types >= 1 && Math.fround(r.eps) > 0, `case ${i}: ${JSON.stringify(c)}`);
      read++;
    } catch (e) {
      expectAllowed(e, `config case ${i}: ${JSON.stringify(c).slice(0, 200)}`);
    }
  }
  assert.ok(read > CASES / 10, `only ${read} configs read`);
});

// a golden checkpoint's safetensors, with its header edited (the data section as it was)
function split(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return { header: JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))), body: bytes.subarray(8 + n) };
}
function join(header, body) {
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (text.length % 8)) % 8);
  const head = new TextEncoder().encode(text), out = new Uint8Array(8 + head.length + body.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(head.length), true);
  out.set(head, 8);
  out.set(body, 8 + head.length);
  return out;
}

const RENAMES = [
  (n) => n.replace(/\.weight$/, '.gamma'), (n) => n.replace(/\.bias$/, '.beta'), (n) => n.replace(/^bert\./, ''),
  (n) => `bert.${n}`, (n) => n.replace(/^bert\.encoder/, 'cls.predictions'), (n) => n.replace(/layer\.0\./, 'layer.7.'),
  (n) => n.replace(/LayerNorm/, 'layer_norm'), (n) => `${n}_`, () => 'bert.pooler.dense.weight', () => 'cls.predictions.decoder.bias',
];

function mutateWeights(bytes) {
  const { header, body } = split(bytes), names = Object.keys(header).filter((k) => k !== '__metadata__');
  const edited = new Uint8Array(body);
  for (let k = 1 + int(2); k > 0; k--) {
    const name = pick(names), r = rand();
    if (!header[name]) continue;
    if (r < 0.45) { const to = pick(RENAMES)(name); if (!header[to]) { header[to] = header[name]; delete header[name]; } }
    else if (r < 0.6) header[name] = { ...header[name], shape: [...header[name].shape].reverse() };
    else if (r < 0.7) header[name] = { ...header[name], dtype: pick(['F16', 'BF16', 'F64', 'I64', 'U8']) };
    else edited[int(edited.length)] ^= 1 << int(8);   // one bit of the data: a weight, maybe the tied decoder's
  }
  return join(header, edited);
}

const FILES = FOLDERS.map((d) => ({
  config: fs.readFileSync(path.join(d, 'config.json'), 'utf8'),
  vocabTxt: fs.readFileSync(path.join(d, 'vocab.txt'), 'utf8'),
  weights: new Uint8Array(fs.readFileSync(path.join(d, 'model.safetensors'))),
}));

test(`fuzz: ${Math.round(CASES / 4)} mutated BERT checkpoints load and run, or give an AttentionError`, async () => {
  const outcomes = { ran: 0, refused: 0 };
  for (let i = 0; i < Math.round(CASES / 4); i++) {
    const f = pick(FILES);
    let model;
    try {
      model = await loadModel({ config: f.config, vocabTxt: f.vocabTxt, weights: mutateWeights(f.weights) });
      const r = model.forward(model.encode('猫吃鱼').ids, { attention: true });
      assert.ok((r.logits ?? r.hidden).data.every(Number.isFinite), `case ${i}: finite`);
      outcomes.ran++;
    } catch (e) {
      expectAllowed(e, `weights case ${i}`);
      outcomes.refused++;
    } finally {
      model?.dispose();
    }
  }
  assert.ok(outcomes.ran > 0 && outcomes.refused > 0, JSON.stringify(outcomes));
});
