// gguf-load.test.js - loadModel from a GGUF file (issue 38, items 1-2 and 5 for F32, F16 and BF16):
// the golden LLaMA, Qwen2 and Qwen3 checkpoints written as llama.cpp's convert_hf_to_gguf.py writes
// them (tests/gguf-writer.js: its metadata keys, its tensor names, ne = [in, out], arch llama's q
// and k rows permuted for interleaved RoPE, no output.weight when tied), then loaded by path, as
// bytes and as a Blob: the logits and every attention map are the bits of the same checkpoint
// loaded from safetensors. Then what is refused by name: a type attnmap does not read (Q8_1), rope_freqs.weight,
// another architecture, an unknown tensor, gguf given with config.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadModel } from '../../web/model/model-node.js';
import { parseSafetensors } from '../../web/model/load/safetensors.js';
import { writeGguf, gv } from '../gguf-writer.js';
import { root } from '../helpers.js';

const GOLDEN = path.join(root, 'tests/golden/llama');
const NAMES = ['llama-f32', 'llama-bias-f32', 'qwen2-bf16', 'qwen3-f16-headdim'];

const GLOBAL = { 'model.embed_tokens.weight': 'token_embd.weight', 'model.norm.weight': 'output_norm.weight', 'lm_head.weight': 'output.weight' };
const LAYER = {
  'input_layernorm.weight': 'attn_norm', 'post_attention_layernorm.weight': 'ffn_norm',
  'self_attn.q_proj.weight': 'attn_q', 'self_attn.q_proj.bias': 'attn_q.bias', 'self_attn.k_proj.weight': 'attn_k',
  'self_attn.k_proj.bias': 'attn_k.bias', 'self_attn.v_proj.weight': 'attn_v', 'self_attn.v_proj.bias': 'attn_v.bias',
  'self_attn.o_proj.weight': 'attn_output', 'self_attn.q_norm.weight': 'attn_q_norm', 'self_attn.k_norm.weight': 'attn_k_norm',
  'mlp.gate_proj.weight': 'ffn_gate', 'mlp.up_proj.weight': 'ffn_up', 'mlp.down_proj.weight': 'ffn_down',
  'self_attn.o_proj.bias': 'attn_output.bias', 'mlp.gate_proj.bias': 'ffn_gate.bias', 'mlp.up_proj.bias': 'ffn_up.bias',
  'mlp.down_proj.bias': 'ffn_down.bias',
};

// llama.cpp's name for a Hugging Face tensor name
function ggufName(name) {
  if (GLOBAL[name]) return GLOBAL[name];
  const m = /^model\.layers\.(\d+)\.(.+)$/.exec(name);
  const part = LAYER[m[2]];
  return `blk.${m[1]}.${part.includes('.') ? part : `${part}.weight`}`;
}

// LlamaModel.permute: head h's row a·D/2 + b goes to row 2b + a (rows of rowBytes bytes)
function permute(bytes, rows, heads) {
  const D = rows / heads, half = D / 2, rowBytes = bytes.length / rows, out = new Uint8Array(bytes.length);
  for (let h = 0; h < heads; h++) {
    for (let a = 0; a < 2; a++) {
      for (let b = 0; b < half; b++) {
        out.set(bytes.subarray((h * D + a * half + b) * rowBytes, (h * D + a * half + b + 1) * rowBytes), (h * D + 2 * b + a) * rowBytes);
      }
    }
  }
  return out;
}

/** The golden checkpoint `name` as a GGUF file's bytes, as convert_hf_to_gguf.py would write it. */
export function goldenAsGguf(name, { arch: archOverride, extra = [], type } = {}) {
  const dir = path.join(GOLDEN, name), c = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const bytes = new Uint8Array(fs.readFileSync(path.join(dir, 'model.safetensors')));
  const st = parseSafetensors(bytes);
  const arch = archOverride ?? c.model_type, H = c.num_attention_heads, G = c.num_key_value_heads ?? H;
  const D = c.head_dim ?? c.hidden_size / H;
  const metadata = [
    ['general.architecture', gv.str(arch)],
    [`${arch}.block_count`, gv.u32(c.num_hidden_layers)],
    [`${arch}.context_length`, gv.u32(c.max_position_embeddings)],
    [`${arch}.embedding_length`, gv.u32(c.hidden_size)],
    [`${arch}.feed_forward_length`, gv.u32(c.intermediate_size)],
    [`${arch}.attention.head_count`, gv.u32(H)],
    [`${arch}.attention.head_count_kv`, gv.u32(G)],
    [`${arch}.attention.key_length`, gv.u32(D)],
    [`${arch}.attention.value_length`, gv.u32(D)],
    [`${arch}.attention.layer_norm_rms_epsilon`, gv.f32(c.rms_norm_eps)],
    [`${arch}.rope.freq_base`, gv.f32(c.rope_theta)],
    [`${arch}.vocab_size`, gv.u32(c.vocab_size)],
  ];
  const tensors = [];
  for (const [hf, info] of st.tensors) {
    if (hf === 'lm_head.weight' && c.tie_word_embeddings) continue;
    let data = bytes.slice(info.begin, info.end);
    const name = ggufName(hf);
    if (arch === 'llama' && /attn_[qk]\.(weight|bias)$/.test(name)) data = permute(data, info.shape[0], name.includes('attn_q') ? H : G);
    const quantized = type?.(name);   // a quantized type: the writer's seeded bytes of its size
    tensors.push({ name, shape: info.shape, type: quantized ?? info.dtype, ...(quantized ? {} : { data }) });
  }
  return writeGguf({ metadata, tensors: [...tensors, ...extra] }).bytes;
}

const bytesOf = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

// everything a forward gives, as bytes
function run(model) {
  const ids = Array.from({ length: 40 }, (_, i) => (i * 7 + 3) % model.config.vocab_size);
  const r = model.forward(ids, { attention: true });
  const h = model.forward(ids, { heads: true, logits: false }).heads;
  return Buffer.concat([bytesOf(r.logits.data), ...r.attention.flat().map((m) => bytesOf(m.data)), bytesOf(h.previous), bytesOf(h.entropy)]);
}

for (const name of NAMES) {
  test(`${name} as GGUF (by path, as bytes, as a Blob): the logits and every map are the bits of its safetensors`, async () => {
    const want = run(await loadModel(path.join(GOLDEN, name)));
    const gguf = goldenAsGguf(name);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-gguf-'));
    try {
      const file = path.join(dir, `${name}.gguf`);
      fs.writeFileSync(file, gguf);
      const progress = [];
      const byPath = await loadModel(file, { onProgress: (p) => progress.push(p) });
      assert.equal(byPath.config.family, 'llama');
      assert.equal(byPath.tokenizer, null, 'the tokenizer is not read from the metadata yet');
      assert.ok(run(byPath).equals(want), `${name}: by path`);
      assert.ok(progress.length > 0 && progress.at(-1).loaded <= progress.at(-1).total, 'onProgress as the file is read');
      byPath.dispose();
      const byBytes = await loadModel({ gguf });
      assert.ok(run(byBytes).equals(want), `${name}: as bytes`);
      byBytes.dispose();
      const byBlob = await loadModel({ gguf: new Blob([gguf]) });
      assert.ok(run(byBlob).equals(want), `${name}: as a Blob`);
      byBlob.dispose();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('what a GGUF load refuses, by name: a type it does not read, rope_freqs not F32, another architecture, an unknown tensor, gguf with config', async () => {
  const reject = (files, pattern) => assert.rejects(loadModel(files), (e) => e.name === 'AttentionError' && pattern.test(e.message), String(pattern));
  const q8 = goldenAsGguf('llama-f32', { type: (n) => (n === 'blk.0.ffn_up.weight' ? 'Q8_1' : undefined) });
  await reject({ gguf: q8 }, /tensor "blk\.0\.ffn_up\.weight" is Q8_1; attnmap reads GGUF tensors of type F32, F16, Q4_0, .*, BF16/);
  const freqs = goldenAsGguf('llama-f32', { extra: [{ name: 'rope_freqs.weight', shape: [4], type: 'F16' }] });
  await reject({ gguf: freqs }, /tensor "rope_freqs\.weight" .*is F16; expected F32/);   // read since issue 38: gguf-arch.test.js
  const odd = goldenAsGguf('llama-f32', { extra: [{ name: 'blk.0.attn_sinks.weight', shape: [4], type: 'F32' }] });
  await reject({ gguf: odd }, /unexpected tensor "blk\.0\.attn_sinks\.weight"/);
  await reject({ gguf: goldenAsGguf('llama-f32', { arch: 'gpt2' }) }, /GGUF|gpt2/);
  await reject({ gguf: goldenAsGguf('llama-f32'), config: '{}' }, /give gguf alone/);
  await reject({ gguf: 'model.gguf' }, /gguf must be the bytes of a \.gguf file/);
  // a file loaded by path is named as it is on disk, not as model.gguf
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-gguf-'));
  try {
    const cut = path.join(dir, 'cut-short.gguf'), typed = path.join(dir, 'odd-type.gguf'), whole = goldenAsGguf('llama-f32');
    fs.writeFileSync(cut, whole.subarray(0, whole.length - 100));
    fs.writeFileSync(typed, q8);
    await reject(cut, /^cut-short\.gguf/);
    await reject(typed, /^odd-type\.gguf: .*tensor "blk\.0\.ffn_up\.weight" is Q8_1/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a folder of .gguf files on disk: { file } picks one, its only one loads without, several without { file } name them', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-gguf-folder-'));
  const rejects = (p, re) => assert.rejects(p, (e) => e.code === 'INVALID_ARGUMENT' && re.test(e.message), String(re));
  try {
    const want = run(await loadModel(path.join(GOLDEN, 'qwen2-bf16')));
    const other = run(await loadModel(path.join(GOLDEN, 'llama-f32')));
    fs.writeFileSync(path.join(dir, 'qwen2-bf16.gguf'), goldenAsGguf('qwen2-bf16'));
    const one = await loadModel(dir);
    assert.ok(run(one).equals(want), 'the folder\'s only .gguf');
    one.dispose();
    fs.writeFileSync(path.join(dir, 'llama-f32.gguf'), goldenAsGguf('llama-f32'));
    fs.writeFileSync(path.join(dir, 'mmproj-f16.gguf'), 'a vision projector is not a model');
    await rejects(loadModel(dir), /holds 2 GGUF files; say which with \{ file \}.*: llama-f32\.gguf, qwen2-bf16\.gguf$/);
    for (const [file, bits] of [['qwen2-bf16.gguf', want], ['llama-f32.gguf', other]]) {
      const m = await loadModel(dir, { file });
      assert.ok(run(m).equals(bits), file);
      m.dispose();
    }
    await rejects(loadModel(dir, { file: 'nope.gguf' }), /has no file nope\.gguf; its GGUF files: llama-f32\.gguf, qwen2-bf16\.gguf/);
    await rejects(loadModel(dir, { file: '../x.gguf' }), /file must name a \.gguf file at the top of the repo or folder/);
    // a checkpoint folder is still read as one, { file } or not in the way
    const ckpt = await loadModel(path.join(GOLDEN, 'qwen2-bf16'));
    assert.ok(run(ckpt).equals(want));
    ckpt.dispose();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
