// A seeded property test of the LLaMA family's loader (issue 22): mutated config.json texts of
// the family (its own keys: num_key_value_heads, head_dim, rope_theta, rope_scaling, the bias
// switches, tie_word_embeddings, rms_norm_eps, model_type) and mutated sharded checkpoints (the
// index's weight_map edited: folders and ".." in shard names, tensors moved, dropped or doubled,
// shards missing or unlisted, the text cut or nested). Every outcome must be a config or a table
// of tensors matched to it, or an AttentionError (INVALID_MODEL or TOO_LARGE), never another
// exception or a hang. tests/fuzz/model-load.test.js does the same for GPT-2 and for single files.
//   LLAMA_FUZZ_SEED=7 LLAMA_FUZZ_CASES=5000 node --test tests/fuzz/llama-load.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { AttentionError } from '../../web/core/errors.js';
import { readConfig } from '../../web/model/load/config.js';
import { readWeights } from '../../web/model/load/weights.js';
import { matchTensors } from '../../web/model/load/checkpoint.js';
import { root, seeded } from '../helpers.js';

const SEED = Number(process.env.LLAMA_FUZZ_SEED || 22);
const CASES = Number(process.env.LLAMA_FUZZ_CASES || 1500);
const ALLOWED = new Set(['INVALID_MODEL', 'TOO_LARGE']);
const GOLDEN = path.join(root, 'tests/golden/llama');

const rand = seeded(SEED);
const int = (n) => Math.floor(rand() * n);
const pick = (xs) => xs[int(xs.length)];

const CONFIGS = fs.readdirSync(GOLDEN).filter((d) => fs.existsSync(path.join(GOLDEN, d, 'config.json')))
  .map((d) => JSON.parse(fs.readFileSync(path.join(GOLDEN, d, 'config.json'), 'utf8')));
const KEYS = ['model_type', 'hidden_size', 'intermediate_size', 'num_hidden_layers', 'num_attention_heads', 'num_key_value_heads',
  'head_dim', 'vocab_size', 'max_position_embeddings', 'rms_norm_eps', 'rope_theta', 'rope_scaling', 'tie_word_embeddings',
  'attention_bias', 'mlp_bias', 'hidden_act', 'sliding_window', 'use_sliding_window', 'layer_types', 'rope_parameters'];
const VALUES = () => pick([0, 1, 2, 3, 7, 8, 64, -1, 0.5, 1e-6, 1e-50, 2 ** 31, 2 ** 53, 1e308, NaN, null, true, false, '', 'qwen3', 'llama',
  'silu', 'gelu', [], [1, 2], {}, { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8 },
  { rope_type: 'yarn', factor: 4 }, { type: 'linear', factor: 2 }, { rope_type: 'llama3', factor: -1 }, { rope_type: 'default', rope_theta: 1e4 }]);
const JSON_CHARS = ['{', '}', '[', ']', '"', ',', ':', '0', '9', '-', 'e', ' ', 'null', '\\', '\u0000', '\ufeff'];

function expectAllowed(e, what) {
  if (!(e instanceof AttentionError)) assert.fail(`${what}: threw ${e?.name}: ${e?.message}\n${e?.stack}`);
  assert.ok(ALLOWED.has(e.code), `${what}: code ${e.code} (${e.message})`);
  assert.ok(typeof e.message === 'string' && e.message.length > 10, `${what}: message ${e.message}`);
}

function mutateConfig(base) {
  let text = JSON.stringify(base);
  if (rand() < 0.3) {
    for (let k = 1 + int(3); k > 0; k--) {
      const at = int(text.length + 1);
      text = text.slice(0, at) + (rand() < 0.5 ? pick(JSON_CHARS) : '') + text.slice(at + (rand() < 0.5 ? 1 : 0));
    }
    return text;
  }
  const c = JSON.parse(text);
  for (let k = 1 + int(2); k > 0; k--) {
    const key = pick(KEYS);
    if (rand() < 0.25) delete c[key]; else c[key] = VALUES();
  }
  return JSON.stringify(c);
}

test(`fuzz: ${CASES} mutated LLaMA-family config.json texts give a config or an AttentionError (seed ${SEED})`, () => {
  let read = 0;
  for (let i = 0; i < CASES; i++) {
    const text = mutateConfig(pick(CONFIGS));
    let parsed;
    try { parsed = JSON.parse(text); } catch { parsed = text; }   // a broken text goes in as text
    try {
      const c = readConfig(parsed);
      if (c.family !== 'llama') continue;                          // a mutated model_type may name GPT-2
      assert.ok(c.kvHeads >= 1 && c.heads % c.kvHeads === 0, `case ${i}: GQA divides (${c.heads} / ${c.kvHeads})`);
      assert.ok(c.headDim >= 2 && c.headDim % 2 === 0, `case ${i}: head_dim ${c.headDim} even`);
      assert.ok(c.eps > 0 && Math.fround(c.eps) > 0 && Number.isFinite(c.ropeTheta) && c.ropeTheta > 0, `case ${i}: eps ${c.eps}, theta ${c.ropeTheta}`);
      read++;
    } catch (e) {
      expectAllowed(e, `config case ${i}: ${text.slice(0, 200)}`);
    }
  }
  assert.ok(read > CASES / 10, `only ${read} configs read`);
});

// the sharded golden checkpoint, and mutations of its index and its set of shards
const SHARDED = path.join(GOLDEN, 'qwen2-sharded-f32');
const CONFIG = readConfig(fs.readFileSync(path.join(SHARDED, 'config.json'), 'utf8'));
const INDEX = JSON.parse(fs.readFileSync(path.join(SHARDED, 'model.safetensors.index.json'), 'utf8'));
const SHARDS = Object.fromEntries([...new Set(Object.values(INDEX.weight_map))].map((f) => [f, new Uint8Array(fs.readFileSync(path.join(SHARDED, f)))]));

const EDITS = [
  (ix) => { const k = pick(Object.keys(ix.weight_map)); ix.weight_map[k] = pick(['../' + ix.weight_map[k], 'a/' + ix.weight_map[k], 'a\\b.safetensors', '', '..', 'missing.safetensors', 7, null, {}]); },
  (ix) => { delete ix.weight_map[pick(Object.keys(ix.weight_map))]; },
  (ix) => { const k = pick(Object.keys(ix.weight_map)); ix.weight_map[k] = pick(Object.keys(SHARDS)); },   // moved, maybe to where it is not
  (ix) => { ix.weight_map[`model.layers.${int(5)}.extra.weight`] = pick(Object.keys(SHARDS)); },
  (ix) => { ix.weight_map = pick([null, [], 'x', 1, { a: { b: 'c' } }]); },
  (ix) => { delete ix.weight_map; },
  (ix) => { ix.metadata = pick([null, 1, { total_size: -1 }, { total_size: 2 ** 60 }]); },
];

function mutateSharded() {
  const ix = structuredClone(INDEX), shards = { ...SHARDS };
  const isMap = (m) => m !== null && typeof m === 'object' && !Array.isArray(m) && Object.keys(m).length > 0;
  for (let k = 1 + int(2); k > 0 && isMap(ix.weight_map); k--) pick(EDITS)(ix);   // an edit that removed the map ends the edits
  if (rand() < 0.15) delete shards[pick(Object.keys(shards))];
  if (rand() < 0.1) shards['model-00009-of-00009.safetensors'] = SHARDS[pick(Object.keys(SHARDS))];   // unlisted copy
  let index = JSON.stringify(ix);
  if (rand() < 0.2) {
    const at = int(index.length + 1);
    index = rand() < 0.5 ? index.slice(0, at) : index.slice(0, at) + '['.repeat(1 + int(100_000)) + index.slice(at);
  }
  return { index, shards };
}

test(`fuzz: ${Math.round(CASES / 3)} mutated sharded checkpoints (index and shards) give a table of tensors or an AttentionError`, async () => {
  const outcomes = { matched: 0, refused: 0 };
  for (let i = 0; i < Math.round(CASES / 3); i++) {
    const weights = mutateSharded();
    try {
      const tensors = matchTensors(CONFIG, await readWeights(weights));
      assert.ok(tensors.get('embed', -1), `case ${i}: matched, with its embedding`);
      outcomes.matched++;
    } catch (e) {
      expectAllowed(e, `sharded case ${i}: ${weights.index.slice(0, 200)}`);
      outcomes.refused++;
    }
  }
  assert.ok(outcomes.matched > 0 && outcomes.refused > outcomes.matched, JSON.stringify(outcomes));
});
