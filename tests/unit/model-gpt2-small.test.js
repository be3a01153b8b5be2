// A GPT-2-small-shaped checkpoint (124,439,808 parameters, random weights made here, never
// committed: ~500 MB of float32) loads and runs in Node through attnmap/model. Prints what it
// takes: load time, process RSS, and the model build's wasm memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gpt2Shapes } from '../model-helpers.js';
import { loadModel } from '../../web/model/model.js';

const SMALL = { L: 12, H: 12, C: 768, V: 50257, P: 1024 };
const mib = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`;

// model.safetensors written straight into one buffer (no second copy of 500 MB): F32, values
// from a xorshift generator, LayerNorm weights around 1
function gpt2SmallFile() {
  const shapes = gpt2Shapes(SMALL);
  const header = {};
  let offset = 0;
  for (const [name, shape] of shapes) {
    const bytes = 4 * shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let text = JSON.stringify({ __metadata__: { format: 'pt' }, ...header });
  text += ' '.repeat((8 - (text.length % 8)) % 8);
  const file = new Uint8Array(8 + text.length + offset);
  new DataView(file.buffer).setBigUint64(0, BigInt(text.length), true);
  file.set(new TextEncoder().encode(text), 8);
  let s = 2463534242;
  for (const [name] of shapes) {
    const [begin, end] = header[name].data_offsets;
    const values = new Float32Array(file.buffer, 8 + text.length + begin, (end - begin) / 4);
    const base = /ln_[12f]\.weight$/.test(name) ? 1 : 0, scale = /bias$/.test(name) ? 0.01 : 0.04;
    for (let i = 0; i < values.length; i++) {
      s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
      values[i] = base + ((s >>> 0) / 2 ** 32 - 0.5) * scale;
    }
  }
  return { bytes: file, parameters: offset / 4 };
}

test('GPT-2 small\'s shape (124 M parameters, random weights) loads and runs in Node', { timeout: 300000 }, async () => {
  const rss0 = process.memoryUsage().rss;
  const { bytes, parameters } = gpt2SmallFile();
  assert.equal(parameters, 124439808);
  const config = { model_type: 'gpt2', activation_function: 'gelu_new', n_layer: 12, n_head: 12, n_embd: 768, vocab_size: 50257, n_positions: 1024, layer_norm_epsilon: 1e-5 };
  const t0 = performance.now();
  const model = await loadModel({ config, weights: bytes });
  const loadMs = performance.now() - t0;
  try {
    const ids = [464, 3797, 15063, 262, 5916, 13, 632, 373];
    const t1 = performance.now();
    const { logits, attention } = model.forward(ids, { attention: true });
    const forwardMs = performance.now() - t1;
    assert.deepEqual(logits.shape, [8, 50257]);
    assert.ok(logits.data.every(Number.isFinite), 'finite logits');
    assert.equal(attention.length, 12);
    for (const heads of attention) {
      assert.equal(heads.length, 12);
      for (const { data, shape } of heads) {
        assert.deepEqual(shape, [8, 8]);
        for (let i = 0; i < 8; i++) {
          let sum = 0;
          for (let j = 0; j < 8; j++) sum += data[i * 8 + j];
          assert.ok(Math.abs(sum - 1) < 1e-5 && data[i * 8 + i + 1] === (i < 7 ? 0 : undefined), `row ${i} is a causal distribution`);
        }
      }
    }
    const steps = [];
    for await (const s of model.generate(ids, { maxTokens: 4 })) steps.push(s.id);
    assert.equal(steps.length, 4);
    const rss = process.memoryUsage().rss;
    console.log(`# GPT-2 small shape: ${parameters} parameters (${mib(bytes.length)} file); load ${loadMs.toFixed(0)} ms, ` +
      `forward over 8 tokens with attention ${forwardMs.toFixed(0)} ms; RSS ${mib(rss0)} -> ${mib(rss)} (file and model both held)`);
  } finally {
    model.dispose();
  }
});
