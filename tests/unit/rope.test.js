// RoPE (attn.rope, c_src/rope.c attn_rope) against PyTorch: tests/golden/rope.json, made by
// tests/golden/make_rope.py (Hugging Face LLaMA's rotate-half, written out from the maths). Then
// the property that makes RoPE a *relative* encoding, and every bad input's AttentionError. Then
// the one RoPE (issue 36): the model build's attn_rope_frequencies (llama3 scaling) against
// PyTorch, and a LLaMA checkpoint's attention maps equal to what the page's attn.rope gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAttention, AttentionError, toRows } from '../../web/core/attention.js';
import { decodeBase64, WASM_IMPORTS } from '../../web/core/instantiate.js';
import modelBase64 from '../../web/wasm/attention-model-wasm.js';
import { loadModel } from '../../web/model/model-node.js';
import { root, assertClose, ATOL, RTOL } from '../helpers.js';
import { writeSafetensors } from '../model-helpers.js';
import { ropeModel, ROPE_BASE } from '../../web/page/page-rope.js';

const data = JSON.parse(fs.readFileSync(path.join(root, 'tests/golden/rope.json'), 'utf8'));
const attn = await createAttention();

test('golden data is the version the tests expect', () => {
  assert.equal(data.version, 2);
  assert.ok(data.cases.length >= 18 && data.page.length >= 4 && data.frequencies.length >= 6);
  const grid = new Set(data.cases.map((c) => `${c.d} ${c.base} ${c.offset}`));
  for (const d of [4, 8, 64]) for (const base of [10000, 1e6]) for (const offset of [0, 1, 7]) assert.ok(grid.has(`${d} ${base} ${offset}`), `d ${d} base ${base} offset ${offset}`);
});

for (const c of data.cases) {
  test(`golden rope ${c.name}`, () => {
    const r = attn.rope({ x: c.x }, { base: c.base, offset: c.offset, heads: c.heads });
    assert.deepEqual(r.output.shape, [c.x.length, c.heads * c.d]);
    assertClose(r.output, c.expected, `${c.name} vs float64`);
    // θ: base^(-2i/d) rounded once to float32, as the core does (the same bits); PyTorch's float32
    // 1 / base^(2i/d) rounds twice (the power, then the quotient): within two roundings
    assert.deepEqual(Array.from(r.theta), c.theta.map(Math.fround), `${c.name} theta`);
    assertClose(r.theta, c.theta_hf_f32, `${c.name} theta vs torch float32`, { atol: 0, rtol: 2.4e-7 });
    // PyTorch's own float32 path (the angle rounded to float32 before cos/sin): within the tolerance
    // where it is itself within the tolerance of float64; else within its own error
    const torchErr = c.hf_f32_error;
    if (torchErr <= ATOL) assertClose(r.output, c.expected_hf_f32, `${c.name} vs torch float32`);
    else assertClose(r.output, c.expected_hf_f32, `${c.name} vs torch float32 (its error ${torchErr})`, { atol: ATOL + torchErr, rtol: RTOL });
  });
}

test('float32 angles: PyTorch\'s float32 path is 8e-3 off at position 100000, the core is not', () => {
  const c = data.cases.find((x) => x.offset === 100000);
  assert.ok(c.hf_f32_error > 1e-3, `torch float32 error ${c.hf_f32_error}`);
  assertClose(attn.rope({ x: c.x }, { base: c.base, offset: c.offset }).output, c.expected, 'core vs float64');
});

test('the page\'s q and k (X = E[token], seeded W_q, W_k): rotated as PyTorch does, maps equal when shifted', () => {
  for (const c of data.page) {
    const m = ropeModel(attn, { tokens: c.tokens, seed: c.seed, dk: c.dk });
    assert.equal(m.base, ROPE_BASE);
    assertClose(m.e.flat(), c.e, `${c.name} E`);
    assertClose(m.q.flat(), c.q, `${c.name} q`);
    assertClose(m.k.flat(), c.k, `${c.name} k`);
    assertClose(m.qr.flat(), c.q_rope, `${c.name} q after RoPE`);
    assertClose(m.kr.flat(), c.k_rope, `${c.name} k after RoPE`);
    assertClose(m.weights.flat(), c.weights, `${c.name} map`);
    assertClose(m.plain.flat(), c.weights_no_rope, `${c.name} map without RoPE`);
    const s = ropeModel(attn, { tokens: c.tokens, seed: c.seed, dk: c.dk }, { offset: 1 });
    assertClose(s.qr.flat(), c.q_rope_shifted, `${c.name} q at positions 1..n`);
    assertClose(s.weights.flat(), c.weights_shifted, `${c.name} map at positions 1..n`);
  }
});

// ----------------------------------------------------------------------------------------------
// q_i·k_j after RoPE at positions (i, j) equals the same at (i + s, j + s)

function scores(q, k) {
  return q.map((qi) => k.map((kj) => qi.reduce((acc, v, c) => acc + v * kj[c], 0)));
}

test('shift invariance: the scores q_i·k_j at (i + s, j + s) equal those at (i, j) to float tolerance', () => {
  let seed = 7;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  for (const [d, base] of [[2, 10000], [8, 10000], [64, 1e6], [128, 500000]]) {
    const n = 6, q = Array.from({ length: n }, () => Array.from({ length: d }, rand)), k = Array.from({ length: n }, () => Array.from({ length: d }, rand));
    const at = (offset) => scores(toRows(attn.rope({ x: q }, { base, offset }).output), toRows(attn.rope({ x: k }, { base, offset }).output));
    const s0 = at(0);
    for (const shift of [1, 7, 1000]) {
      const s1 = at(shift);
      let gap = 0;
      s0.forEach((row, i) => row.forEach((v, j) => { gap = Math.max(gap, Math.abs(v - s1[i][j])); }));
      assert.ok(gap <= 1e-5 * Math.sqrt(d), `d ${d} base ${base} shift ${shift}: the scores moved by ${gap}`);
    }
    // and the map (softmax of the scores / √d) moves by float rounding only
    const map = (offset) => toRows(attn.attention({ q: attn.rope({ x: q }, { base, offset }).output, k: attn.rope({ x: k }, { base, offset }).output, v: k }).weights);
    assertClose(map(5).flat(), map(0).flat(), `d ${d} map shifted by 5`, { atol: 1e-6, rtol: 0 });
  }
});

test('position 0 is the identity, the heads rotate alike, and every pair keeps its length', () => {
  const x = [[1, 2, 3, 4, 5, 6, 7, 8], [-1, 0.5, 2, -3, 0.25, 1, -2, 4]];
  const r = toRows(attn.rope({ x }, { heads: 2 }).output);
  assert.deepEqual(r[0], x[0]);
  const one = toRows(attn.rope({ x: x.map((row) => row.slice(0, 4)) }).output), two = toRows(attn.rope({ x: x.map((row) => row.slice(4)) }).output);
  assert.deepEqual(r[1], [...one[1], ...two[1]]);
  for (let i = 0; i < 2; i++) {
    for (const h of [0, 4]) {
      const before = Math.hypot(x[1][h + i], x[1][h + i + 2]), after = Math.hypot(r[1][h + i], r[1][h + i + 2]);
      assert.ok(Math.abs(before - after) < 1e-6, `pair ${i} head ${h / 4}: ${before} -> ${after}`);
    }
  }
  // pair 0 (θ_0 = 1) at position 1 turns by exactly 1 radian
  const p = toRows(attn.rope({ x: [[0, 0], [1, 0]] }).output)[1];
  assert.deepEqual(p, [Math.fround(Math.cos(1)), Math.fround(Math.sin(1))]);
  // typed input, the result a copy
  const data = new Float32Array([1, 0, 0, 1]);
  const t = attn.rope({ x: { data, shape: [1, 4] } }, { offset: 3 });
  assert.ok(t.output.data instanceof Float32Array && t.output.data.buffer !== data.buffer);
  assert.equal(t.theta.length, 2);
  assert.equal(t.theta[0], 1);
  assert.equal(t.theta[1], Math.fround(1 / 100));
});

test('bad input: an AttentionError with a code, before anything is computed', () => {
  const x = [[1, 2, 3, 4]];
  const bad = (inputs, options, code, re) => assert.throws(() => attn.rope(inputs, options), (e) => {
    assert.ok(e instanceof AttentionError, e);
    assert.equal(e.code, code, e.message);
    if (re) assert.match(e.message, re);
    return true;
  });
  bad(undefined, undefined, 'INVALID_ARGUMENT', /first argument/);
  bad({}, undefined, 'INVALID_ARGUMENT', /x is missing/);
  bad({ x, q: x }, undefined, 'INVALID_ARGUMENT', /unknown input "q"/);
  bad({ x: [] }, undefined, 'INVALID_ARGUMENT', /empty/);
  bad({ x: [[1, 2], [3]] }, undefined, 'INVALID_ARGUMENT', /ragged/);
  bad({ x: [[1, 2, 3]] }, undefined, 'SHAPE_MISMATCH', /even width/);
  bad({ x }, { heads: 3 }, 'SHAPE_MISMATCH', /even width/);
  bad({ x }, { heads: 4 }, 'SHAPE_MISMATCH', /even width/);
  bad({ x }, { heads: 0 }, 'INVALID_ARGUMENT', /heads/);
  bad({ x }, { heads: 1.5 }, 'INVALID_ARGUMENT', /heads/);
  bad({ x }, { base: 0.5 }, 'INVALID_ARGUMENT', /base/);
  bad({ x }, { base: NaN }, 'INVALID_ARGUMENT', /base/);
  bad({ x }, { base: Infinity }, 'INVALID_ARGUMENT', /base/);
  bad({ x }, { base: '10000' }, 'INVALID_ARGUMENT', /base/);
  bad({ x }, { offset: -1 }, 'INVALID_ARGUMENT', /offset/);
  bad({ x }, { offset: 0.5 }, 'INVALID_ARGUMENT', /offset/);
  bad({ x }, { offset: 2 ** 20 }, 'INVALID_ARGUMENT', /2\^20/);
  bad({ x: [[1, 2], [3, 4]] }, { offset: 2 ** 20 - 1 }, 'INVALID_ARGUMENT', /2\^20/);
  bad({ x }, { causal: true }, 'INVALID_ARGUMENT', /unknown option "causal"/);
  bad({ x }, 'fast', 'INVALID_ARGUMENT', /options/);
  bad({ x: [[1, NaN, 3, 4]] }, undefined, 'NON_FINITE', /x\[0\]\[1\]/);
  bad({ x: [[1, 2, Infinity, 4]] }, undefined, 'NON_FINITE', /x\[0\]\[2\]/);
  bad({ x: [[3e38, 3e38]] }, { offset: 1 }, 'NON_FINITE', /overflows/);
  // the last position is allowed, and a getter that throws becomes INVALID_ARGUMENT
  assert.equal(attn.rope({ x: [[1, 0]] }, { offset: 2 ** 20 - 1 }).output.shape[0], 1);
  bad({ get x() { throw new Error('boom'); } }, undefined, 'INVALID_ARGUMENT', /boom/);
});

test('the one-file embed\'s build has no RoPE: rope says so, by name, and the instance goes on', async () => {
  const embed = await createAttention({ wasm: fs.readFileSync(path.join(root, 'web/wasm/attention-embed.wasm')) });
  assert.throws(() => embed.rope({ x: [[1, 0, 0, 1]] }), (e) => e instanceof AttentionError && e.code === 'INVALID_ARGUMENT' && /attention-embed\.wasm.*has no RoPE/.test(e.message));
  const { weights } = embed.attention({ q: [[1, 0]], k: [[1, 0], [0, 1]], v: [[1], [2]] }, { weights: true });
  assert.equal(weights.data.length, 2);
});

// ----------------------------------------------------------------------------------------------
// one RoPE: the model's frequencies are C's, and the model rotates as the page's attn.rope does

// the model build's C (what web/model/families/llama.js calls when it uploads a checkpoint)
async function modelExports() {
  const { instance } = await WebAssembly.instantiate(decodeBase64(modelBase64), WASM_IMPORTS);
  instance.exports._initialize();
  return instance.exports;
}

// attn_rope_frequencies(theta, d, base, scaling) -> [status, theta (d/2)]
function frequencies(ex, d, base, scaling) {
  const at = ex.malloc(d * 2), s = scaling ? ex.malloc(32) : 0;
  try {
    if (s) new Float64Array(ex.memory.buffer, s, 4).set([scaling.factor, scaling.low_freq_factor, scaling.high_freq_factor, scaling.original_max_position_embeddings]);
    const status = ex.attn_rope_frequencies(at, d, base, s);
    return [status, Array.from(new Float32Array(ex.memory.buffer, at, d / 2))];
  } finally {
    ex.free(at);
    if (s) ex.free(s);
  }
}

test('inverse frequencies (C, the model build): PyTorch\'s float64 values rounded once, llama3 scaling\'s three bands included', async () => {
  const ex = await modelExports();
  const bands = { high: 0, low: 0, medium: 0 };
  for (const c of data.frequencies) {
    const [status, theta] = frequencies(ex, c.d, c.base, c.scaling);
    assert.equal(status, 0, c.name);
    assert.deepEqual(theta, c.theta.map(Math.fround), `${c.name}: θ as float32 of the float64 formula`);
    // transformers computes in float32: within its own error (the blend's subtraction) and one rounding
    assertClose(theta, c.theta_hf_f32, `${c.name} vs transformers' float32`, { atol: 0, rtol: c.hf_f32_rel_error + 1.2e-7 });
    for (const b of Object.keys(bands)) bands[b] += c.bands[b];
  }
  assert.ok(bands.high > 0 && bands.low > 0 && bands.medium >= 10, JSON.stringify(bands));
  // statuses: attention.h's rules for the scaling's numbers
  const l3 = { factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 };
  const RANGE = 8, SIZE = 2;
  assert.equal(frequencies(ex, 8, 0.5, null)[0], RANGE, 'base < 1');
  assert.equal(frequencies(ex, 8, Infinity, null)[0], RANGE, 'base ∞');
  assert.equal(frequencies(ex, 8, 500000, { ...l3, factor: 0.5 })[0], RANGE, 'factor < 1');
  assert.equal(frequencies(ex, 8, 500000, { ...l3, high_freq_factor: 1 })[0], RANGE, 'high <= low');
  assert.equal(frequencies(ex, 8, 500000, { ...l3, low_freq_factor: 0 })[0], RANGE, 'low 0');
  assert.equal(frequencies(ex, 8, 500000, { ...l3, original_max_position_embeddings: NaN })[0], RANGE, 'original NaN');
  assert.equal(frequencies(ex, 7, 500000, l3)[0], SIZE, 'odd d');
});

// A 1-layer LLaMA (H query heads over G kv heads, head_dim D) whose q and k the test knows exactly:
// embedding rows of ±1 (RMSNorm's mean(x²) = 1: with eps 1e-12 and weights 1 it keeps them as
// they are) and small integer projections (exact sums). Its attention maps are then
// softmax(rope(q)·rope(k)ᵀ/√D, causal), which the page computes with attn.rope.
function tinyLlama({ V = 7, C = 8, H = 2, G = 1, D = 8, theta = ROPE_BASE } = {}) {
  let seed = 11;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 16;
  const ints = (n, lo, hi) => Float32Array.from({ length: n }, () => lo + next() % (hi - lo + 1));
  const embed = Float32Array.from({ length: V * C }, () => (next() & 1 ? 1 : -1));
  const ones = (n) => new Float32Array(n).fill(1);
  const w = { 'model.embed_tokens.weight': { shape: [V, C], data: embed }, 'model.norm.weight': { shape: [C], data: ones(C) },
    'lm_head.weight': { shape: [V, C], data: ints(V * C, -1, 1) } };
  const layer = (name, shape, data) => { w[`model.layers.0.${name}`] = { shape, data }; };
  const wq = ints(H * D * C, -3, 3), wk = ints(G * D * C, -3, 3);
  layer('input_layernorm.weight', [C], ones(C));
  layer('post_attention_layernorm.weight', [C], ones(C));
  layer('self_attn.q_proj.weight', [H * D, C], wq);
  layer('self_attn.k_proj.weight', [G * D, C], wk);
  layer('self_attn.v_proj.weight', [G * D, C], ints(G * D * C, -1, 1));
  layer('self_attn.o_proj.weight', [C, H * D], ints(C * H * D, -1, 1));
  layer('mlp.gate_proj.weight', [4, C], ints(4 * C, -1, 1));
  layer('mlp.up_proj.weight', [4, C], ints(4 * C, -1, 1));
  layer('mlp.down_proj.weight', [C, 4], ints(C * 4, -1, 1));
  const config = { architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: C, intermediate_size: 4,
    num_attention_heads: H, num_key_value_heads: G, head_dim: D, num_hidden_layers: 1, vocab_size: V,
    max_position_embeddings: 64, rms_norm_eps: 1e-12, rope_theta: theta, tie_word_embeddings: false, hidden_act: 'silu' };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-rope-'));
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), writeSafetensors(w));
  // x·Wᵀ for the rows of the tokens ids: exact (integers)
  const project = (ids, W, rows) => ids.map((id) => Array.from({ length: rows }, (_, o) => {
    let s = 0;
    for (let c = 0; c < C; c++) s += embed[id * C + c] * W[o * C + c];
    return s;
  }));
  return { dir, H, G, D, theta, q: (ids) => project(ids, wq, H * D), k: (ids) => project(ids, wk, G * D) };
}

// head h's columns of rows (T, heads·D)
const headOf = (rows, h, D) => rows.map((r) => r.slice(h * D, (h + 1) * D));

test('one RoPE: a LLaMA checkpoint\'s attention maps are softmax(rope(q)·rope(k)ᵀ/√d) with the page\'s attn.rope', async () => {
  const m = tinyLlama({ H: 2, G: 1, D: 8 });
  const model = await loadModel(m.dir);
  try {
    const ids = [3, 1, 4, 1, 5, 6, 2, 0, 6, 5], T = ids.length;
    const { attention } = model.forward(ids, { attention: true });
    // the page's RoPE (the core build's attn.rope, as page-rope.js's ropeModel calls it)
    const qr = toRows(attn.rope({ x: m.q(ids) }, { base: m.theta, heads: m.H }).output);
    const kr = toRows(attn.rope({ x: m.k(ids) }, { base: m.theta, heads: m.G }).output);
    for (let h = 0; h < m.H; h++) {
      const g = Math.floor(h / (m.H / m.G)), v = Array.from({ length: T }, () => [0]);
      const want = attn.attention({ q: headOf(qr, h, m.D), k: headOf(kr, g, m.D), v }, { causal: true, weights: true }).weights;
      assertClose(attention[0][h].data, want.data, `head ${h}`, { atol: 1e-6, rtol: 0 });
    }
    // a decoding step at position T (the KV cache's keys rotated then, its query now): attn.rope's offset
    const steps = [];
    for await (const step of model.generate(ids, { maxTokens: 2, stop: false, attention: true })) steps.push(step);
    const id = steps[0].id, row = steps[1].attention;   // the second step's query: token id at position T
    const q1 = toRows(attn.rope({ x: m.q([id]) }, { base: m.theta, offset: T, heads: m.H }).output);
    const k1 = toRows(attn.rope({ x: m.k([...ids, id]) }, { base: m.theta, heads: m.G }).output);
    for (let h = 0; h < m.H; h++) {
      const g = Math.floor(h / (m.H / m.G)), v = Array.from({ length: T + 1 }, () => [0]);
      const want = attn.attention({ q: headOf(q1, h, m.D), k: headOf(k1, g, m.D), v }, { weights: true }).weights;
      assertClose(row[0][h], want.data, `step at position ${T}, head ${h}`, { atol: 1e-6, rtol: 0 });
    }
  } finally {
    model.dispose();
    fs.rmSync(m.dir, { recursive: true, force: true });
  }
});
