// model-llama-hostile.test.js - the LLaMA family's config and sharded checkpoints, broken on
// purpose: every refusal an AttentionError naming the key, the file or the tensor; maths the
// runtime does not do refused by name, never ignored. The files are the golden checkpoints of
// tests/golden/llama/, edited here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadModel } from '../../web/model/model-node.js';
import { readConfig } from '../../web/model/load/config.js';
import { AttentionError } from '../../web/core/errors.js';
import { expectError, root } from '../helpers.js';
import { writeSafetensors } from '../model-helpers.js';
import { SHAPES, tensorsOf } from '../../scripts/random-checkpoint.js';

const GOLDEN = path.join(root, 'tests/golden/llama');
const config = (name) => JSON.parse(fs.readFileSync(path.join(GOLDEN, name, 'config.json'), 'utf8'));

async function rejects(promise, code, pattern) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof AttentionError, `${e?.name}: ${e?.message}`);
    assert.equal(e.code, code, e.message);
    assert.match(e.message, pattern);
    return true;
  });
}

// a copy of a golden folder, with some files replaced (null: removed)
function copy(name, edit = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-llama-'));
  for (const f of fs.readdirSync(path.join(GOLDEN, name))) fs.copyFileSync(path.join(GOLDEN, name, f), path.join(dir, f));
  for (const [f, content] of Object.entries(edit)) {
    if (content === null) fs.rmSync(path.join(dir, f));
    else fs.writeFileSync(path.join(dir, f), typeof content === 'string' || content instanceof Uint8Array ? content : JSON.stringify(content));
  }
  return dir;
}

test('config: maths the runtime does not do is refused by name', () => {
  const base = config('qwen2-bf16');
  const cases = [
    [{ hidden_act: 'gelu' }, /hidden_act is the string "gelu"; only "silu"/],
    [{ use_sliding_window: true }, /use_sliding_window: true is not supported \(sliding-window attention\)/],
    [{ rope_scaling: { rope_type: 'yarn', factor: 4 } }, /the RoPE type the string "yarn" is not supported; supported: "default", "llama3"/],
    [{ rope_scaling: { type: 'linear', factor: 2 } }, /the RoPE type the string "linear"/],
    [{ rope_scaling: { rope_type: 'dynamic', factor: 2 } }, /"dynamic"/],
    [{ layer_types: ['full_attention', 'sliding_attention'] }, /layer_types .* only "full_attention"/],
    [{ num_key_value_heads: 3 }, /num_attention_heads = 4 is not a multiple of num_key_value_heads = 3/],
    [{ head_dim: 7 }, /head_dim = 7 is odd; RoPE rotates pairs/],
    [{ rms_norm_eps: 1e-50 }, /rms_norm_eps = 1e-50 underflows to 0 in float32/],
    [{ rope_theta: -1 }, /rope_theta must be a finite number above 1/],
    [{ tie_word_embeddings: 'yes' }, /tie_word_embeddings must be true or false/],
    [{ model_type: 'mistral' }, /model_type is the string "mistral"; supported: "gpt2", "llama", "qwen2", "qwen3"/],
    [{ num_hidden_layers: undefined }, /num_hidden_layers is missing/],
  ];
  for (const [edit, pattern] of cases) {
    const c = { ...base, ...edit };
    for (const k of Object.keys(edit)) if (edit[k] === undefined) delete c[k];
    expectError(() => readConfig(c), 'INVALID_MODEL', pattern);
  }
  const llama3 = config('llama3-rope-bf16');
  expectError(() => readConfig({ ...llama3, rope_parameters: { ...llama3.rope_parameters, high_freq_factor: 0.5 } }), 'INVALID_MODEL', /high_freq_factor > low_freq_factor/);
  expectError(() => readConfig({ ...llama3, rope_parameters: { ...llama3.rope_parameters, factor: 'x' } }), 'INVALID_MODEL', /factor must be a positive number/);
  // what is read and ignored: a sliding window that is off, the old vintage's rope_theta
  const q = readConfig({ ...base, use_sliding_window: false, sliding_window: 4096, max_window_layers: 21, pretraining_tp: 1 });
  assert.equal(q.ropeTheta, base.rope_theta);
});

test('config against tensors: a bias the config does not promise, or one it promises and the file lacks', async () => {
  // llama-f32 has no biases; saying attention_bias makes its files lack them
  await rejects(loadModel(copy('llama-f32', { 'config.json': { ...config('llama-f32'), attention_bias: true } })), 'INVALID_MODEL',
    /tensor "model\.layers\.0\.self_attn\.q_proj\.bias" is missing: expected shape \[32\]/);
  // llama-bias-f32 has them; a config without attention_bias makes them unexpected
  await rejects(loadModel(copy('llama-bias-f32', { 'config.json': { ...config('llama-bias-f32'), attention_bias: false } })), 'INVALID_MODEL',
    /unexpected tensor "model\.layers\.\d+\.self_attn\.[qkvo]_proj\.bias"/);
  // an untied config over a file without lm_head
  await rejects(loadModel(copy('qwen2-bf16', { 'config.json': { ...config('qwen2-bf16'), tie_word_embeddings: false } })), 'INVALID_MODEL',
    /tensor "lm_head\.weight" is missing: expected shape \[64, 32\]/);
  // more layers than the file has, with no loop over them
  await rejects(loadModel(copy('qwen2-bf16', { 'config.json': { ...config('qwen2-bf16'), num_hidden_layers: 2147483647 } })), 'INVALID_MODEL',
    /num_hidden_layers|n_layer = 2147483647 but the file has tensors for 2 layers/);
});

test('sharded: a shard missing, a tensor in two shards, a path in the index, a tensor the index does not list', async () => {
  const name = 'qwen2-sharded-f32';
  const index = JSON.parse(fs.readFileSync(path.join(GOLDEN, name, 'model.safetensors.index.json'), 'utf8'));
  await rejects(loadModel(copy(name, { 'model-00002-of-00003.safetensors': null })), 'INVALID_MODEL',
    /maps \d+ tensors? \(".*"…\) to "model-00002-of-00003\.safetensors", which is missing/);
  for (const evil of ['../model-00001-of-00003.safetensors', 'sub/model.safetensors', '/etc/passwd', '..', 'a\\b']) {
    const first = Object.keys(index.weight_map)[0];
    const edited = { ...index, weight_map: { ...index.weight_map, [first]: evil } };
    await rejects(loadModel(copy(name, { 'model.safetensors.index.json': edited })), 'INVALID_MODEL', /maps to .*which is not a file name in the checkpoint's folder/);
  }
  // a tensor also written into another shard
  const extra = writeSafetensors({ 'model.norm.weight': { shape: [24], data: new Float32Array(24).fill(1) } });
  const dup = { ...index, weight_map: { ...index.weight_map, 'model.norm.weight': 'extra.safetensors' } };
  await rejects(loadModel(copy(name, { 'extra.safetensors': extra, 'model.safetensors.index.json': dup })), 'INVALID_MODEL',
    /tensor "model\.norm\.weight" is in ".*" but model\.safetensors\.index\.json maps it to another shard|is in two shards/);
  // the index forgets a tensor that a shard holds
  const forgot = { ...index, weight_map: { ...index.weight_map } };
  delete forgot.weight_map['model.norm.weight'];
  await rejects(loadModel(copy(name, { 'model.safetensors.index.json': forgot })), 'INVALID_MODEL',
    /tensor "model\.norm\.weight" is in ".*" but model\.safetensors\.index\.json does not list it/);
  // the index maps a tensor to a shard that lacks it
  const wrong = { ...index, weight_map: { ...index.weight_map, 'model.norm.weight': 'model-00001-of-00003.safetensors' } };
  await rejects(loadModel(copy(name, { 'model.safetensors.index.json': wrong })), 'INVALID_MODEL', /maps it to another shard|does not have it/);
  await rejects(loadModel(copy(name, { 'model.safetensors.index.json': '{"weight_map": 5}' })), 'INVALID_MODEL', /weight_map must be an object/);
  await rejects(loadModel(copy(name, { 'model.safetensors.index.json': 'not json' })), 'INVALID_MODEL', /model\.safetensors\.index\.json: not valid JSON/);
});

test('a NaN in a BF16 matrix kept as BF16 is found and named', async () => {
  const name = 'qwen2-bf16', file = path.join(GOLDEN, name, 'model.safetensors');
  const bytes = new Uint8Array(fs.readFileSync(file));
  const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const info = header['model.layers.1.mlp.up_proj.weight'];
  const at = 8 + n + info.data_offsets[0] + 2 * 5;
  bytes[at] = 0xc0; bytes[at + 1] = 0x7f;                          // 0x7fc0: a BF16 NaN at index 5
  await rejects(loadModel(copy(name, { 'model.safetensors': bytes })), 'NON_FINITE', /model\.layers\.1\.mlp\.up_proj\.weight holds NaN or ±Infinity at index 5/);
});

test('an F32 Llama-3.2-1B (4.9 GB) is TOO_LARGE at once, before any weight is read or allocated, naming the bytes and the way out', async () => {
  // the header of the real shape's F32 file and a sparse file of its full length: nothing to read
  const c = SHAPES['llama-3.2-1b'];
  const header = {}, F32 = 4;
  let offset = 0;
  for (const [name, shape] of tensorsOf(c)) {
    const bytes = shape.reduce((a, b) => a * b, 1) * F32;
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (text.length % 8)) % 8);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-llama-f32-'));
  try {
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...c, torch_dtype: 'float32' }));
    const head = Buffer.alloc(8 + text.length);
    head.writeBigUInt64LE(BigInt(text.length));
    head.write(text, 8, 'latin1');
    fs.writeFileSync(path.join(dir, 'model.safetensors'), head);
    fs.truncateSync(path.join(dir, 'model.safetensors'), head.length + offset);
    assert.ok(offset > 2 ** 32, `the weights are ${offset} bytes`);
    await rejects(loadModel(dir), 'TOO_LARGE', new RegExp(`the weights take ${(offset / 2 ** 30).toFixed(1)} GiB in WebAssembly memory .* wasm32 can address at most 4 GiB: use a BF16 or F16 copy`));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
