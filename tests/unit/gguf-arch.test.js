// gguf-arch.test.js - the GGUF reader's last two pieces (issue 38 item 1):
// 1. rope_freqs.weight, the F32 factors convert_hf_to_gguf.py writes for a Llama 3.1/3.2 config with
//    rope_type "llama3" and llama.cpp divides RoPE's frequencies by: the golden llama3-rope-bf16
//    checkpoint written as that GGUF gives PyTorch's logits and maps (expected.json, a float64
//    forward of HF's llama3 scaling) and those of the same checkpoint read from safetensors; the
//    same file without the tensor does not (the scaling is seen). Its type and shape are checked
//    strictly, and so are its values.
// 2. arch gpt2: a random GPT-2 written as GPT2Model writes it (llama.cpp's names, c_attn, c_proj
//    and c_fc transposed to (out, in)) gives the bits of the safetensors checkpoint holding the same
//    values: F32 as it is, F16 and Q8_0 against a checkpoint of the rounded values worked out here
//    (float16 bits, ggml's Q8_0 blocks), and within rounding of the F32 checkpoint.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel } from '../../web/model/model-node.js';
import { parseSafetensors } from '../../web/model/load/safetensors.js';
import { writeGguf, gv } from '../gguf-writer.js';
import { ggufMetadata, gpt2Metadata, ggufName, permuteRows } from '../../scripts/gguf-writer.js';
import { randomGpt2, gpt2Shapes, writeSafetensors, encode, toF16Bits, fromF16Bits, maxDiff } from '../model-helpers.js';
import { root } from '../helpers.js';

const LLAMA3 = path.join(root, 'tests/golden/llama/llama3-rope-bf16');
const LOGITS_TOL = 1e-4, ATTENTION_TOL = 1e-5;   // model-llama.test.js's, against PyTorch

const bytesOf = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
const f32Bytes = (values) => bytesOf(Float32Array.from(values));

// everything a forward gives: logits, every map, the heads' scores
function run(model, ids) {
  const r = model.forward(ids, { attention: true });
  const h = model.forward(ids, { heads: true, logits: false }).heads;
  return { logits: r.logits.data, maps: r.attention.flat().map((m) => m.data), previous: h.previous, entropy: h.entropy };
}
const asBytes = (r) => Buffer.concat([bytesOf(r.logits), ...r.maps.map(bytesOf), bytesOf(r.previous), bytesOf(r.entropy)]);

function largest(a, b) {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}
const mapsDiff = (a, b) => Math.max(...a.maps.map((m, i) => largest(m, b.maps[i])));

async function rejects(files, pattern) {
  await assert.rejects(loadModel(files), (e) => e.name === 'AttentionError' && e.code === 'INVALID_MODEL' && pattern.test(e.message), String(pattern));
}

// ----------------------------------------------------------------------------
// 1. rope_freqs.weight

// convert_hf_to_gguf.py's factors for rope_type "llama3", in float32 as its torch tensors are:
// 1 for wavelengths below original / high_freq_factor, factor above original / low_freq_factor,
// 1 / ((1 - smooth) / factor + smooth) between
function llama3Factors(c) {
  const p = c.rope_parameters, D = c.head_dim, f = Math.fround;
  const low = p.original_max_position_embeddings / p.low_freq_factor, high = p.original_max_position_embeddings / p.high_freq_factor;
  const out = [];
  for (let i = 0; i < D; i += 2) {
    const freq = f(1 / f(p.rope_theta ** f(i / D))), wavelen = f(2 * Math.PI / freq);
    if (wavelen < high) out.push(1);
    else if (wavelen > low) out.push(p.factor);
    else {
      const smooth = f(f(f(p.original_max_position_embeddings / wavelen) - p.low_freq_factor) / (p.high_freq_factor - p.low_freq_factor));
      out.push(f(1 / f(f(f(1 - smooth) / p.factor) + smooth)));
    }
  }
  return out;
}

// the golden llama3 checkpoint as LlamaModel writes it: arch llama, q and k permuted, BF16 kept,
// rope_freqs.weight appended (unless given other tensors or metadata in its place)
function llama3Gguf({ ropeFreqs, arch = 'llama' } = {}) {
  const c = JSON.parse(fs.readFileSync(path.join(LLAMA3, 'config.json'), 'utf8'));
  const bytes = new Uint8Array(fs.readFileSync(path.join(LLAMA3, 'model.safetensors'))), st = parseSafetensors(bytes);
  const metadata = ggufMetadata(arch, { ...c, rope_theta: c.rope_parameters.rope_theta });
  const tensors = [];
  for (const [hf, info] of st.tensors) {
    const name = ggufName(hf);
    let data = bytes.slice(info.begin, info.end);
    if (arch === 'llama' && /attn_[qk]\.weight$/.test(name)) data = permuteRows(data, info.shape[0], name.includes('attn_q') ? c.num_attention_heads : c.num_key_value_heads);
    tensors.push({ name, shape: info.shape, type: info.dtype, data });
  }
  const freqs = ropeFreqs === undefined ? { name: 'rope_freqs.weight', shape: [c.head_dim / 2], type: 'F32', data: f32Bytes(llama3Factors(c)) } : ropeFreqs;
  return writeGguf({ metadata, tensors: freqs ? [...tensors, freqs] : tensors }).bytes;
}

test('the factors written here are convert_hf_to_gguf.py\'s for this config: 1, the blend, then the factor 8', () => {
  const c = JSON.parse(fs.readFileSync(path.join(LLAMA3, 'config.json'), 'utf8'));
  const r = llama3Factors(c);
  assert.equal(r.length, 8);
  assert.equal(r[0], 1);                    // wavelength 2π < 40 / 4
  assert.ok(r[1] > 1 && r[1] < 8, `${r[1]}`); // 500000^(1/8)·2π ≈ 32 in [10, 40]: blended
  assert.deepEqual(r.slice(2), [8, 8, 8, 8, 8, 8]);
  // the frequencies they make are PyTorch's inv_freq (expected.json, HF's _compute_llama3_parameters in float64)
  const want = JSON.parse(fs.readFileSync(path.join(LLAMA3, 'expected.json'), 'utf8')).inv_freq;
  r.forEach((x, i) => assert.ok(Math.abs(500000 ** (-2 * i / 16) / x - want[i]) <= 1e-6 * want[i], `frequency ${i}`));
});

test('llama3 RoPE from a GGUF\'s rope_freqs.weight: PyTorch\'s logits and maps, and the safetensors checkpoint\'s; without it they differ', async () => {
  const g = JSON.parse(fs.readFileSync(path.join(LLAMA3, 'expected.json'), 'utf8'));
  const fromSt = await loadModel(LLAMA3), fromGguf = await loadModel({ gguf: llama3Gguf() }), plain = await loadModel({ gguf: llama3Gguf({ ropeFreqs: null }) });
  try {
    assert.equal(fromGguf.config.ropeFreqs, true);
    assert.equal(fromGguf.config.ropeScaling, null, 'no scaling from the metadata: the factors do it');
    assert.equal(plain.config.ropeFreqs, false);
    for (const seq of g.sequences) {
      const r = fromGguf.forward(seq.ids, { attention: true });
      const dl = maxDiff(seq.logits, r.logits.data);
      assert.ok(dl <= LOGITS_TOL, `${seq.ids.length} tokens: logits differ from PyTorch's by ${dl}`);
      let da = 0;
      seq.attention.forEach((heads, l) => heads.forEach((map, h) => { da = Math.max(da, maxDiff(map, r.attention[l][h].data)); }));
      assert.ok(da <= ATTENTION_TOL, `${seq.ids.length} tokens: maps differ from PyTorch's by ${da}`);
    }
    const long = g.sequences.at(-1);
    const unscaled = plain.forward(long.ids).logits.data;
    assert.ok(maxDiff(long.logits, unscaled) > 100 * LOGITS_TOL, 'without rope_freqs the 48-token logits are not PyTorch\'s: the factors matter here');
    // against the safetensors checkpoint (C's llama3 frequencies): θ_1 may differ by its last bit
    const ids = Array.from({ length: 64 }, (_, i) => (i * 7 + 3) % 64);
    const a = run(fromSt, ids), b = run(fromGguf, ids);
    assert.ok(largest(a.logits, b.logits) <= 1e-5, `logits: ${largest(a.logits, b.logits)}`);
    assert.ok(mapsDiff(a, b) <= 1e-6, `maps: ${mapsDiff(a, b)}`);
    assert.ok(mapsDiff(a, run(plain, ids)) > 1e-3, 'the maps without rope_freqs differ');
  } finally {
    for (const m of [fromSt, fromGguf, plain]) m.dispose();
  }
});

test('rope_freqs.weight is read as llama.cpp reads it or refused by name: F32, head_dim / 2 values, each positive and not below its frequency', async () => {
  const freqs = (type, shape, values) => ({ name: 'rope_freqs.weight', shape, type, ...(values ? { data: type === 'F32' ? f32Bytes(values) : encode(values, type) } : {}) });
  const eights = [1, 2, 8, 8, 8, 8, 8, 8];
  await rejects({ gguf: llama3Gguf({ ropeFreqs: freqs('F16', [8], eights) }) }, /tensor "rope_freqs\.weight" \(RoPE's frequency factors, Llama 3's scaling\) is F16; expected F32/);
  await rejects({ gguf: llama3Gguf({ ropeFreqs: freqs('BF16', [8], eights) }) }, /"rope_freqs\.weight" .* is BF16; expected F32/);
  await rejects({ gguf: llama3Gguf({ ropeFreqs: freqs('F32', [4], [1, 2, 8, 8]) }) }, /"rope_freqs\.weight" .* has shape \[4\]; expected \[8\]: one factor per pair of a head's head_dim = 16 dimensions/);
  await rejects({ gguf: llama3Gguf({ ropeFreqs: freqs('F32', [1, 8], eights) }) }, /"rope_freqs\.weight" .* has shape \[1, 8\]; expected \[8\]/);
  await rejects({ gguf: llama3Gguf({ ropeFreqs: freqs('F32', [16], [...eights, ...eights]) }) }, /has shape \[16\]; expected \[8\]/);
  await rejects({ gguf: llama3Gguf({ ropeFreqs: freqs('F32', [8], [1, 2, 8, NaN, 8, 8, 8, 8]) }) }, /tensor "rope_freqs\.weight" has a non-finite value \(NaN\) at index 3/);
  await rejects({ gguf: llama3Gguf({ ropeFreqs: freqs('F32', [8], [1, 2, 8, 8, Infinity, 8, 8, 8]) }) }, /"rope_freqs\.weight" has a non-finite value \(Infinity\) at index 4/);
  await rejects({ gguf: llama3Gguf({ ropeFreqs: freqs('F32', [8], [1, 2, 0, 8, 8, 8, 8, 8]) }) }, /"rope_freqs\.weight" holds 0 at index 2; RoPE's frequency factors .* must be positive/);
  await rejects({ gguf: llama3Gguf({ ropeFreqs: freqs('F32', [8], [1, 2, 8, 8, 8, -8, 8, 8]) }) }, /"rope_freqs\.weight" holds -8 at index 5/);
  await rejects({ gguf: llama3Gguf({ ropeFreqs: freqs('F32', [8], [0.5, 2, 8, 8, 8, 8, 8, 8]) }) }, /"rope_freqs\.weight" holds 0\.5 at index 0, which makes RoPE's frequency 1 \/ 0\.5 = 2, above 1/);
  // llama.cpp reads it for arch llama alone: a qwen2 file's is not one of its tensors
  await rejects({ gguf: llama3Gguf({ arch: 'qwen2' }) }, /unexpected tensor "rope_freqs\.weight": not a tensor of a qwen2 model/);
  // and a safetensors checkpoint never has one
  const st = new Uint8Array(fs.readFileSync(path.join(LLAMA3, 'model.safetensors'))), parsed = parseSafetensors(st);
  const file = new Map([...parsed.tensors].map(([n, i]) => [n, { shape: i.shape, dtype: i.dtype, bytes: st.slice(i.begin, i.end) }]));
  file.set('rope_freqs.weight', { shape: [8], dtype: 'F32', bytes: f32Bytes(eights) });
  await rejects({ config: fs.readFileSync(path.join(LLAMA3, 'config.json'), 'utf8'), weights: writeSafetensors(file) }, /unexpected tensor "rope_freqs\.weight"/);
});

// ----------------------------------------------------------------------------
// 2. arch gpt2

const SIZES = { L: 2, H: 4, C: 32, V: 64, P: 16 };   // every matrix's rows a multiple of Q8_0's 32
const TRANSPOSED = /\.(attn\.c_attn|attn\.c_proj|mlp\.c_fc|mlp\.c_proj)\.weight$/;
const IDS = Array.from({ length: 16 }, (_, i) => (i * 11 + 5) % 64);

// ggml's quantize_row_q8_0_ref: d = max|x| / 127 (float16 in the block), q = round(x / d), half away from 0
function q8Blocks(values) {
  const out = new Uint8Array(values.length / 32 * 34), view = new DataView(out.buffer);
  for (let b = 0; b < values.length / 32; b++) {
    const x = values.subarray(32 * b, 32 * b + 32), amax = Math.max(...x.map(Math.abs));
    const d = Math.fround(amax / 127), id = d ? Math.fround(1 / d) : 0;
    view.setUint16(34 * b, toF16Bits(d), true);
    for (let j = 0; j < 32; j++) {
      const v = Math.fround(x[j] * id);
      view.setInt8(34 * b + 2 + j, Math.sign(v) * Math.floor(Math.abs(v) + 0.5));
    }
  }
  return out;
}

// the values of Q8_0 blocks: q · d, d the float16 scale, rounded to float32 (ggml's dequantize_row_q8_0)
function q8Values(blocks) {
  const view = new DataView(blocks.buffer, blocks.byteOffset, blocks.length), out = new Float32Array(blocks.length / 34 * 32);
  for (let b = 0; b < out.length / 32; b++) {
    const d = fromF16Bits(view.getUint16(34 * b, true));
    for (let j = 0; j < 32; j++) out[32 * b + j] = Math.fround(view.getInt8(34 * b + 2 + j) * d);
  }
  return out;
}

// (rows, cols) -> (cols, rows)
function transposed(values, rows, cols) {
  const out = new Float32Array(values.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = values[r * cols + c];
  return out;
}

/**
 * A GPT-2's tensors as GPT2Model writes them: llama.cpp's names, Conv1D weights transposed to
 * (out, in), matrices of `type` (F32, F16 or Q8_0; vectors stay F32), the output's copy when asked.
 * -> { gguf: bytes, values: Map(name -> the values as the GGUF file holds them, in GPT-2's layout) }
 */
function gpt2Gguf(config, tensors, { type = 'F32', output = false, override = {} } = {}) {
  const list = [], values = new Map();
  for (const [name, shape] of gpt2Shapes(SIZES)) {
    const v = tensors.get(name), matrix = shape.length === 2, t = override[ggufName(name)] ?? (matrix ? type : 'F32');
    const stored = TRANSPOSED.test(name) ? transposed(v, shape[0], shape[1]) : v, storedShape = TRANSPOSED.test(name) ? [shape[1], shape[0]] : shape;
    let data, held;
    if (t === 'Q8_0') { data = q8Blocks(stored); held = q8Values(data); }
    else if (t === 'F16') { data = encode(stored, 'F16'); held = Float32Array.from(stored, (x) => fromF16Bits(toF16Bits(x))); }
    else if (t === 'F32') { data = encode(stored, 'F32'); held = stored; }
    else data = undefined;   // another type: the writer's seeded bytes, to be refused
    list.push({ name: ggufName(name), shape: storedShape, type: t, ...(data ? { data } : {}) });
    if (held) values.set(name, TRANSPOSED.test(name) ? transposed(held, storedShape[0], storedShape[1]) : held);
  }
  if (output) list.splice(1, 0, { name: 'output.weight', ...output });
  return { gguf: writeGguf({ metadata: gpt2Metadata(config), tensors: list }).bytes, values };
}

// a safetensors checkpoint of these values (F32), under GPT-2's names
const gpt2Checkpoint = (config, values) => ({ config, weights: writeSafetensors(new Map([...values].map(([n, data]) => [n, { shape: gpt2Shapes(SIZES).find(([m]) => m === n)[1], data }]))) });

test('a gpt2 GGUF file (F32) gives the bits of its safetensors checkpoint, as bytes and as a Blob; the output copy older conversions wrote is not read', async () => {
  const { config, bytes, tensors } = randomGpt2({ ...SIZES, seed: 7 });
  const want = asBytes(run(await loadModel({ config, weights: bytes }), IDS));
  const { gguf } = gpt2Gguf(config, tensors);
  const m = await loadModel({ gguf });
  assert.equal(m.config.family, 'gpt2');
  assert.deepEqual([m.config.n_layer, m.config.n_head, m.config.n_embd, m.config.vocab_size, m.config.n_positions], [2, 4, 32, 64, 16]);
  assert.ok(asBytes(run(m, IDS)).equals(want), 'as bytes');
  m.dispose();
  const blob = await loadModel({ gguf: new Blob([gguf]) });
  assert.ok(asBytes(run(blob, IDS)).equals(want), 'as a Blob');
  blob.dispose();
  const copy = { shape: [64, 32], type: 'F32', data: encode(tensors.get('wte.weight'), 'F32') };
  const withOutput = await loadModel({ gguf: gpt2Gguf(config, tensors, { output: copy }).gguf });
  assert.ok(asBytes(run(withOutput, IDS)).equals(want), 'with output.weight');
  withOutput.dispose();
});

for (const type of ['F16', 'Q8_0']) {
  test(`a gpt2 GGUF file of ${type} matrices: the bits of a checkpoint of the values it holds (as bytes and as a Blob), within rounding of the F32 one`, async () => {
    const { config, bytes, tensors } = randomGpt2({ ...SIZES, seed: 11 });
    const { gguf, values } = gpt2Gguf(config, tensors, { type });
    const exact = await loadModel(gpt2Checkpoint(config, values)), f32 = await loadModel({ config, weights: bytes });
    const want = run(exact, IDS), near = run(f32, IDS);
    for (const files of [{ gguf }, { gguf: new Blob([gguf]) }]) {
      const m = await loadModel(files);
      const got = run(m, IDS);
      assert.ok(asBytes(got).equals(asBytes(want)), `${type}: the bits of the checkpoint of its values`);
      const dl = largest(got.logits, near.logits), dm = mapsDiff(got, near);
      assert.ok(dl > 0 && dl <= (type === 'F16' ? 2e-3 : 2e-2), `${type}: logits within rounding of F32's (${dl})`);
      assert.ok(dm <= (type === 'F16' ? 2e-4 : 2e-3), `${type}: maps within rounding of F32's (${dm})`);
      m.dispose();
    }
    exact.dispose();
    f32.dispose();
  });
}

test('what a gpt2 GGUF load refuses, by name: a type the float32 forward is not read from, a vector quantized, an output of another shape, a llama tensor, a rope_freqs', async () => {
  const { config, tensors } = randomGpt2({ ...SIZES, seed: 3 });
  const make = (opts) => ({ gguf: gpt2Gguf(config, tensors, opts).gguf });
  await rejects(make({ override: { 'blk.1.ffn_up.weight': 'Q4_0' } }), /tensor "blk\.1\.ffn_up\.weight" is Q4_0; a gpt2 file's tensors are read as F32, F16, BF16, Q8_0/);
  await rejects(make({ override: { 'blk.0.attn_qkv.weight': 'Q8_1' } }), /tensor "blk\.0\.attn_qkv\.weight" is Q8_1; attnmap reads GGUF tensors of type/);
  await rejects(make({ override: { 'blk.0.attn_norm.weight': 'Q8_0' } }), /tensor "blk\.0\.attn_norm\.weight" is Q8_0 with 1 dimension: .* a vector \(a norm, a bias\) must be F32, F16 or BF16/);
  await rejects(make({ output: { shape: [64, 16], type: 'F32' } }), /tensor "lm_head\.weight" has shape \[64, 16\] but wte\.weight has \[64, 32\]: GPT-2 ties them/);
  for (const [name, shape] of [['blk.0.attn_q.weight', [32, 32]], ['rope_freqs.weight', [4]]]) {
    const list = [...gpt2Shapes(SIZES)].map(([n, s]) => ({ name: ggufName(n), shape: TRANSPOSED.test(n) ? [s[1], s[0]] : s, type: 'F32' }));
    const gguf = writeGguf({ metadata: gpt2Metadata(config), tensors: [...list, { name, shape, type: 'F32' }] }).bytes;
    await rejects({ gguf }, new RegExp(`unexpected tensor "${name.replace(/\./g, '\\.')}": not a tensor of a gpt2 model`));
  }
  // metadata GPT-2 does not have: n_inner other than 4·n_embd
  const odd = writeGguf({ metadata: [...gpt2Metadata(config).filter(([k]) => k !== 'gpt2.feed_forward_length'), ['gpt2.feed_forward_length', gv.u32(100)]], tensors: [] }).bytes;
  await rejects({ gguf: odd }, /n_inner is number 100; supported: null or 4 · n_embd = 128/);
});
