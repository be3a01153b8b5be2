// random-checkpoint.js - a checkpoint folder in a real model's exact shapes and Hugging Face's
// layout, with random weights: for the memory test and the benchmark, which must not depend on
// downloading a model (and never commit one).
//
//   node scripts/random-checkpoint.js SHAPE OUTDIR [--dtype BF16|F32]    SHAPE: one of SHAPES below
//                                         (the LLaMA family's, and bert-base-chinese's)
//   import { writeRandomCheckpoint, SHAPES } from './scripts/random-checkpoint.js';
//
// Writes config.json and model.safetensors (tensors in save_pretrained's order, streamed to disk
// a piece at a time: a 1 GB file needs a few MB of memory). Weights ~ U(±a) with a = 1/√fan_in
// (norms around 1), from a seeded generator: one seed, one file.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** config.json of each shape, as the real checkpoints have it (sizes and RoPE; weights random). */
export const SHAPES = {
  'qwen2.5-0.5b': {
    architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', hidden_size: 896, intermediate_size: 4864,
    num_hidden_layers: 24, num_attention_heads: 14, num_key_value_heads: 2, max_position_embeddings: 32768,
    vocab_size: 151936, rms_norm_eps: 1e-6, rope_theta: 1000000.0, tie_word_embeddings: true, hidden_act: 'silu',
    use_sliding_window: false, sliding_window: 32768, max_window_layers: 24, bos_token_id: 151643, eos_token_id: 151643,
    torch_dtype: 'bfloat16',
  },
  'qwen3-0.6b': {
    architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', hidden_size: 1024, intermediate_size: 3072,
    num_hidden_layers: 28, num_attention_heads: 16, num_key_value_heads: 8, head_dim: 128, max_position_embeddings: 40960,
    vocab_size: 151936, rms_norm_eps: 1e-6, rope_theta: 1000000, tie_word_embeddings: true, hidden_act: 'silu',
    attention_bias: false, use_sliding_window: false, bos_token_id: 151643, eos_token_id: 151645, torch_dtype: 'bfloat16',
  },
  'smollm2-135m': {
    architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 576, intermediate_size: 1536,
    num_hidden_layers: 30, num_attention_heads: 9, num_key_value_heads: 3, max_position_embeddings: 8192,
    vocab_size: 49152, rms_norm_eps: 1e-5, rope_theta: 100000, tie_word_embeddings: true, hidden_act: 'silu',
    attention_bias: false, mlp_bias: false, bos_token_id: 0, eos_token_id: 0, torch_dtype: 'bfloat16',
  },
  'llama-3.2-1b': {
    architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 2048, intermediate_size: 8192,
    num_hidden_layers: 16, num_attention_heads: 32, num_key_value_heads: 8, head_dim: 64, max_position_embeddings: 131072,
    vocab_size: 128256, rms_norm_eps: 1e-5, rope_theta: 500000.0,
    rope_scaling: { factor: 32.0, high_freq_factor: 4.0, low_freq_factor: 1.0, original_max_position_embeddings: 8192, rope_type: 'llama3' },
    tie_word_embeddings: true, hidden_act: 'silu', attention_bias: false, mlp_bias: false, bos_token_id: 128000,
    eos_token_id: 128001, torch_dtype: 'bfloat16',
  },
  'bert-base-chinese': {
    architectures: ['BertForMaskedLM'], model_type: 'bert', hidden_size: 768, intermediate_size: 3072,
    num_hidden_layers: 12, num_attention_heads: 12, max_position_embeddings: 512, vocab_size: 21128,
    type_vocab_size: 2, layer_norm_eps: 1e-12, hidden_act: 'gelu', pad_token_id: 0, directionality: 'bidi',
    attention_probs_dropout_prob: 0.1, hidden_dropout_prob: 0.1, initializer_range: 0.02, pooler_type: 'first_token_transform',
  },
};

// BERT's tensors as bert-base-chinese's file has them (BertForPreTraining: the encoder under
// "bert.", its pooler, the masked-LM head and the next-sentence head); LayerNorm biases small
function bertTensorsOf(c) {
  const C = c.hidden_size, F = c.intermediate_size, s = 1 / Math.sqrt(C), b = 0.02;
  const ln = (p) => [[`${p}LayerNorm.weight`, [C], 0], [`${p}LayerNorm.bias`, [C], b]];
  const dense = (p, out, inp) => [[`${p}.weight`, [out, inp], 1 / Math.sqrt(inp)], [`${p}.bias`, [out], b]];
  const out = [['bert.embeddings.word_embeddings.weight', [c.vocab_size, C], 1], ['bert.embeddings.position_embeddings.weight', [c.max_position_embeddings, C], 0.5],
    ['bert.embeddings.token_type_embeddings.weight', [c.type_vocab_size, C], 0.5], ...ln('bert.embeddings.')];
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `bert.encoder.layer.${l}.`;
    out.push(...dense(`${p}attention.self.query`, C, C), ...dense(`${p}attention.self.key`, C, C), ...dense(`${p}attention.self.value`, C, C),
      ...dense(`${p}attention.output.dense`, C, C), ...ln(`${p}attention.output.`), ...dense(`${p}intermediate.dense`, F, C),
      ...dense(`${p}output.dense`, C, F), ...ln(`${p}output.`));
  }
  out.push(...dense('bert.pooler.dense', C, C), ...dense('cls.predictions.transform.dense', C, C), ...ln('cls.predictions.transform.'),
    ['cls.predictions.bias', [c.vocab_size], b], ...dense('cls.seq_relationship', 2, C));
  return out.map(([name, shape, scale]) => [name, shape, scale === 0 ? 0 : scale || s]);
}

// every tensor's name, shape and init scale, in the order save_pretrained writes a state dict
export function tensorsOf(c) {
  if (c.model_type === 'bert') return bertTensorsOf(c);
  const C = c.hidden_size, F = c.intermediate_size, H = c.num_attention_heads, G = c.num_key_value_heads;
  const D = c.head_dim ?? C / H, out = [['model.embed_tokens.weight', [c.vocab_size, C], 1]];
  const bias = c.model_type === 'qwen2' || c.attention_bias;
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    out.push([`${p}self_attn.q_proj.weight`, [H * D, C], 1 / Math.sqrt(C)]);
    if (bias) out.push([`${p}self_attn.q_proj.bias`, [H * D], 0.1]);
    out.push([`${p}self_attn.k_proj.weight`, [G * D, C], 1 / Math.sqrt(C)]);
    if (bias) out.push([`${p}self_attn.k_proj.bias`, [G * D], 0.1]);
    out.push([`${p}self_attn.v_proj.weight`, [G * D, C], 1 / Math.sqrt(C)]);
    if (bias) out.push([`${p}self_attn.v_proj.bias`, [G * D], 0.1]);
    out.push([`${p}self_attn.o_proj.weight`, [C, H * D], 1 / Math.sqrt(H * D)]);
    if (c.model_type === 'qwen3') out.push([`${p}self_attn.q_norm.weight`, [D], 0], [`${p}self_attn.k_norm.weight`, [D], 0]);
    out.push([`${p}mlp.gate_proj.weight`, [F, C], 1 / Math.sqrt(C)], [`${p}mlp.up_proj.weight`, [F, C], 1 / Math.sqrt(C)],
      [`${p}mlp.down_proj.weight`, [C, F], 1 / Math.sqrt(F)],
      [`${p}input_layernorm.weight`, [C], 0], [`${p}post_attention_layernorm.weight`, [C], 0]);
  }
  out.push(['model.norm.weight', [C], 0]);
  if (!c.tie_word_embeddings) out.push(['lm_head.weight', [c.vocab_size, C], 1 / Math.sqrt(C)]);
  return out;
}

// xorshift32: fast and seeded
function generator(seed) {
  let s = seed >>> 0 || 1;
  return () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 4294967296; };
}

// n values of U(±scale) (scale 0: 1 + U(±0.1), a norm) in dtype, into a buffer
function fillRandom(buf, n, scale, dtype, rand) {
  const f = new Float32Array(1), u = new Uint32Array(f.buffer);
  for (let i = 0; i < n; i++) {
    f[0] = scale === 0 ? 1 + (rand() * 2 - 1) * 0.1 : (rand() * 2 - 1) * scale;
    if (dtype === 'F32') buf.writeUInt32LE(u[0], 4 * i);
    else buf.writeUInt16LE((u[0] + 0x7fff + ((u[0] >>> 16) & 1)) >>> 16, 2 * i);
  }
}

/**
 * Writes OUTDIR/config.json and OUTDIR/model.safetensors; returns { parameters, bytes }. shape:
 * a name of SHAPES, or a config.json object of the LLaMA family or BERT (a test's own small shape).
 */
export function writeRandomCheckpoint(shape, dir, { dtype = 'BF16', seed = 1 } = {}) {
  const base = typeof shape === 'string' ? SHAPES[shape] : shape;
  if (!base) throw new Error(`random-checkpoint: no shape ${shape}; there are ${Object.keys(SHAPES).join(', ')}`);
  const config = { ...base, torch_dtype: dtype === 'F32' ? 'float32' : 'bfloat16' };
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  const width = dtype === 'F32' ? 4 : 2, list = tensorsOf(config), header = { __metadata__: { format: 'pt' } };
  let at = 0, parameters = 0;
  for (const [name, shapeOf] of list) {
    const n = shapeOf.reduce((a, b) => a * b, 1);
    header[name] = { dtype, shape: shapeOf, data_offsets: [at, at + n * width] };
    at += n * width;
    parameters += n;
  }
  let head = Buffer.from(JSON.stringify(header));
  head = Buffer.concat([head, Buffer.alloc((8 - (head.length % 8)) % 8, 0x20)]);
  const fd = fs.openSync(path.join(dir, 'model.safetensors'), 'w'), rand = generator(seed);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(head.length));
  fs.writeSync(fd, len);
  fs.writeSync(fd, head);
  const PIECE = 1 << 20, buf = Buffer.alloc(PIECE * width);
  for (const [, shapeOf, scale] of list) {
    for (let left = shapeOf.reduce((a, b) => a * b, 1); left > 0; left -= PIECE) {
      const n = Math.min(PIECE, left);
      fillRandom(buf, n, scale, dtype, rand);
      fs.writeSync(fd, buf, 0, n * width);
    }
  }
  fs.closeSync(fd);
  return { parameters, bytes: 8 + head.length + at };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [shape, dir] = process.argv.slice(2);
  const dtype = process.argv.includes('--dtype') ? process.argv[process.argv.indexOf('--dtype') + 1] : 'BF16';
  if (!shape || !dir) {
    process.stderr.write(`usage: node scripts/random-checkpoint.js SHAPE OUTDIR [--dtype BF16|F32]; shapes: ${Object.keys(SHAPES).join(', ')}\n`);
    process.exit(2);
  }
  const r = writeRandomCheckpoint(shape, dir, { dtype });
  process.stdout.write(`${dir}: ${r.parameters} parameters, ${r.bytes} bytes\n`);
}
