// The GPT-2 runtime (web/model/runtime.js over web/wasm/attention-model.wasm) with random small
// models made here: the parameters reach the right slots (against a float64 GPT-2 written in
// this file), the KV cache gives the full pass's logits and attention, every bad input is an
// AttentionError, and the runtime stays usable after each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRuntime } from '../../web/model/runtime.js';
import { assertClose, expectError } from '../helpers.js';

const KINDS = ['wte', 'wpe', 'ln1_w', 'ln1_b', 'qkv_w', 'qkv_b', 'attproj_w', 'attproj_b',
  'ln2_w', 'ln2_b', 'fc_w', 'fc_b', 'fcproj_w', 'fcproj_b', 'lnf_w', 'lnf_b'];

// a random model: tensors[kind][layer or 0] as Float32Array, weights U(±1/√fan_in)
function randomModel(config, seed = 7) {
  let s = seed >>> 0;
  const rnd = () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 2 ** 32 * 2 - 1; };
  const { n_layer: L, n_embd: C, vocab_size: V, n_positions: P } = config;
  const shapes = { wte: [V, C], wpe: [P, C], qkv_w: [C, 3 * C], qkv_b: [3 * C], attproj_w: [C, C], fc_w: [C, 4 * C], fc_b: [4 * C], fcproj_w: [4 * C, C] };
  const tensors = {};
  for (const kind of KINDS) {
    const shape = shapes[kind] ?? [C], n = shape.reduce((a, b) => a * b, 1);
    const scale = kind === 'wte' || kind === 'wpe' ? 1 : kind.endsWith('_w') && shape.length === 2 ? 1 / Math.sqrt(shape[0]) : 0.1;
    const layers = ['wte', 'wpe', 'lnf_w', 'lnf_b'].includes(kind) ? 1 : L;
    tensors[kind] = Array.from({ length: layers }, () => Float32Array.from({ length: n }, () => (kind.startsWith('ln') && kind.endsWith('_w') ? 1 : 0) + scale * rnd()));
  }
  return tensors;
}

const fillFrom = (tensors) => (kind, layer, view) => view.set(tensors[kind][Math.max(layer, 0)]);

// GPT-2 in float64 (no cache): logits (T, V) and attention [l][h][i][j]
function reference(config, t, ids) {
  const { n_layer: L, n_head: H, n_embd: C, vocab_size: V, layer_norm_epsilon: eps } = config, d = C / H, T = ids.length;
  const ln = (x, w, b) => x.map((r) => {
    const mean = r.reduce((a, v) => a + v, 0) / C, v = r.reduce((a, x0) => a + (x0 - mean) ** 2, 0) / C;
    return r.map((x0, c) => (x0 - mean) / Math.sqrt(v + eps) * w[c] + b[c]);
  });
  const lin = (x, w, b, k, p) => x.map((r) => Array.from({ length: p }, (_, j) => { let s = b[j]; for (let q = 0; q < k; q++) s += r[q] * w[q * p + j]; return s; }));
  let h = ids.map((id, i) => Array.from({ length: C }, (_, c) => t.wte[0][id * C + c] + t.wpe[0][i * C + c]));
  const att = [];
  for (let l = 0; l < L; l++) {
    const qkv = lin(ln(h, t.ln1_w[l], t.ln1_b[l]), t.qkv_w[l], t.qkv_b[l], C, 3 * C);
    const y = h.map(() => new Array(C).fill(0));
    att.push([]);
    for (let hd = 0; hd < H; hd++) {
      const w = qkv.map((qi, i) => {
        const s = qkv.map((kj, j) => { let dot = 0; for (let c = 0; c < d; c++) dot += qi[hd * d + c] * kj[C + hd * d + c]; return j <= i ? dot / Math.sqrt(d) : -Infinity; });
        const mx = Math.max(...s), e = s.map((x) => Math.exp(x - mx)), sum = e.reduce((a, b) => a + b, 0);
        return e.map((x) => x / sum);
      });
      att[l].push(w);
      for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) for (let c = 0; c < d; c++) y[i][hd * d + c] += w[i][j] * qkv[j][2 * C + hd * d + c];
    }
    const a = lin(y, t.attproj_w[l], t.attproj_b[l], C, C);
    h = h.map((r, i) => r.map((x, c) => x + a[i][c]));
    const f = lin(ln(h, t.ln2_w[l], t.ln2_b[l]), t.fc_w[l], t.fc_b[l], C, 4 * C)
      .map((r) => r.map((x) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)))));
    const m = lin(f, t.fcproj_w[l], t.fcproj_b[l], 4 * C, C);
    h = h.map((r, i) => r.map((x, c) => x + m[i][c]));
  }
  const o = ln(h, t.lnf_w[0], t.lnf_b[0]);
  const logits = o.map((r) => Array.from({ length: V }, (_, v) => r.reduce((a, x, c) => a + x * t.wte[0][v * C + c], 0)));
  return { logits, att };
}

const config = Object.freeze({ n_layer: 2, n_head: 2, n_embd: 12, vocab_size: 19, n_positions: 40, layer_norm_epsilon: 1e-5 });
const tensors = randomModel(config);
const ids = Array.from({ length: 36 }, (_, i) => (i * 7 + 3) % config.vocab_size);
const rt = await createRuntime();
rt.upload(config, fillFrom(tensors));
const full = rt.forward(ids, { attention: true });
const ref = reference(config, tensors, ids);

// the rows pos .. pos + T of the full pass's attention, (L, H, T, pos + T), from rt.forward's
function fullRows(pos, T) {
  const { n_layer: L, n_head: H } = config, n = ids.length, m = pos + T, out = [];
  for (let lh = 0; lh < L * H; lh++) {
    for (let i = 0; i < T; i++) {
      const row = full.attention.data.subarray((lh * n + pos + i) * n, (lh * n + pos + i + 1) * n);
      assert.ok(row.subarray(m).every((x) => x === 0), 'keys after the query get weight 0');
      out.push(...row.subarray(0, m));
    }
  }
  return out;
}
const fullLogits = (pos, T) => full.logits.data.subarray(pos * config.vocab_size, (pos + T) * config.vocab_size);

test('fill gets every tensor once, in the order of the forward pass, with its shape and a view of that size', async () => {
  const r = await createRuntime(), seen = [];
  const info = r.upload(config, (kind, layer, view, shape) => {
    seen.push(`${kind}:${layer}`);
    assert.ok(view instanceof Float32Array);
    assert.equal(view.length, shape.reduce((a, b) => a * b, 1), `${kind} view length`);
    view.set(tensors[kind][Math.max(layer, 0)]);
  });
  const blocks = ['ln1_w', 'ln1_b', 'qkv_w', 'qkv_b', 'attproj_w', 'attproj_b', 'ln2_w', 'ln2_b', 'fc_w', 'fc_b', 'fcproj_w', 'fcproj_b'];
  assert.deepEqual(seen, ['wte:-1', 'wpe:-1', ...blocks.map((k) => `${k}:0`), ...blocks.map((k) => `${k}:1`), 'lnf_w:-1', 'lnf_b:-1']);
  const { n_embd: C, vocab_size: V, n_positions: P, n_layer: L } = config;
  assert.equal(info.parameters, V * C + P * C + L * (12 * C * C + 13 * C) + 2 * C);
  assert.deepEqual(r.forward(ids.slice(0, 5)).logits.data, full.logits.data.subarray(0, 5 * V));
  r.dispose();
});

test('the full pass equals GPT-2 in float64: logits and every layer and head', () => {
  assert.deepEqual(full.logits.shape, [ids.length, config.vocab_size]);
  assert.deepEqual(full.attention.shape, [2 * 2, ids.length, ids.length], 'every head: block l·H + h');
  assert.deepEqual(Array.from(full.attention.slots), [0, 1, 2, 3]);
  assertClose(full.logits, ref.logits.flat(), 'logits');
  assertClose(full.attention, ref.att.flat(3), 'attention');
});

test('KV cache: prefill n - 1 then one step, token by token, chunks at pos > 0', () => {
  const n = ids.length;
  let r = rt.forward(ids.slice(0, n - 1), { attention: true });
  assertClose(r.logits, fullLogits(0, n - 1), 'prefill logits');
  r = rt.forward(ids.slice(n - 1), { pos: n - 1, attention: true });
  assert.deepEqual(r.attention.shape, [2 * 2, 1, n]);
  assertClose(r.logits, fullLogits(n - 1, 1), 'step logits');
  assertClose(r.attention, fullRows(n - 1, 1), 'step attention');
  for (let pos = 0; pos < n; pos++) {
    r = rt.forward([ids[pos]], { pos, attention: true });
    assertClose(r.logits, fullLogits(pos, 1), `token ${pos} logits`);
    assertClose(r.attention, fullRows(pos, 1), `token ${pos} attention`);
  }
  for (let pos = 0, T = 2; pos < n; pos += T, T++) {
    const t = Math.min(T, n - pos);
    r = rt.forward(ids.slice(pos, pos + t), { pos, attention: true });
    assertClose(r.logits, fullLogits(pos, t), `chunk at ${pos} logits`);
    assertClose(r.attention, fullRows(pos, t), `chunk at ${pos} attention`);
  }
  assert.equal(rt.length, n);
  // lastOnly, and the tiled attention kernel (no weights, pos + T >= 32)
  r = rt.forward([ids[n - 1]], { pos: n - 1, lastOnly: true });
  assert.deepEqual(r.logits.shape, [1, config.vocab_size]);
  assertClose(r.logits, fullLogits(n - 1, 1), 'lastOnly step');
  assert.equal(r.attention, undefined);
});

test('bad inputs are AttentionErrors, and the runtime stays usable after each', async () => {
  const V = config.vocab_size, again = () => assertClose(rt.forward(ids.slice(0, 4)).logits, fullLogits(0, 4), 'after an error');
  rt.forward(ids.slice(0, 4));
  const cases = [
    [() => rt.forward([0, V]), /ids\[1\].*\[0, vocab_size = 19\)/],
    [() => rt.forward([-1]), /ids\[0\]/],
    [() => rt.forward([1.5]), /ids\[0\]/],
    [() => rt.forward(['3']), /ids\[0\]/],
    [() => rt.forward([]), /empty/],
    [() => rt.forward('abc'), /array of token ids/],
    [() => rt.forward([1], { pos: 9 }), /pos must be an integer in \[0, 4\]/],
    [() => rt.forward([1], { pos: -1 }), /pos must be/],
    [() => rt.forward(new Array(41).fill(1)), /past the model's n_positions = 40/],
    [() => rt.forward([1, 2], { pos: 3, lastOnly: 1 }), /true or false/],
    [() => rt.forward([1], null), /options/],
  ];
  for (const [fn, pattern] of cases) {
    expectError(fn, 'INVALID_ARGUMENT', pattern);
    again();
  }
  // a forward from pos rewinds the cache to pos
  rt.forward(ids.slice(0, 10));
  expectError(() => rt.forward([V], { pos: 5 }), 'INVALID_ARGUMENT');
  assert.equal(rt.length, 10, 'a call refused before C keeps the cache');
  rt.reset();
  assert.equal(rt.length, 0);
  expectError(() => rt.forward([1], { pos: 1 }), 'INVALID_ARGUMENT', /\[0, 0\]/);
  again();
});

test('upload: bad configs, a non-finite parameter, a fill that throws, too large; then a good upload works', async () => {
  const r = await createRuntime();
  expectError(() => r.forward([1]), 'INVALID_ARGUMENT', /upload/);
  expectError(() => r.upload({ ...config, n_head: 5 }, () => {}), 'INVALID_MODEL', /n_head = 5 must divide n_embd = 12/);
  expectError(() => r.upload({ ...config, n_layer: 0 }, () => {}), 'INVALID_MODEL', /n_layer/);
  expectError(() => r.upload({ ...config, layer_norm_epsilon: 0 }, () => {}), 'INVALID_MODEL', /layer_norm_epsilon/);
  expectError(() => r.upload(null, () => {}), 'INVALID_ARGUMENT');
  expectError(() => r.upload(config, 'fill'), 'INVALID_ARGUMENT', /fill must be a function/);
  expectError(() => r.upload(config, () => {}, { maxPositions: 41 }), 'INVALID_ARGUMENT', /maxPositions/);
  const nan = (kind, layer, view) => { fillFrom(tensors)(kind, layer, view); if (kind === 'fc_w' && layer === 1) view[17] = NaN; };
  expectError(() => r.upload(config, nan), 'NON_FINITE', /fc_w of layer 1 holds NaN at index 17/);
  expectError(() => r.forward([1]), 'INVALID_ARGUMENT', /upload/);   // a failed upload leaves no model
  const boom = (kind) => { if (kind === 'qkv_b') throw new Error('boom'); };
  const e = expectError(() => r.upload(config, boom), 'INVALID_ARGUMENT', /fill failed: boom/);
  assert.equal(e.cause.message, 'boom');
  expectError(() => r.upload(config, () => r.forward([1])), 'INVALID_ARGUMENT', /inside upload's fill/);
  expectError(() => r.upload({ ...config, vocab_size: 2 ** 20, n_embd: 1024, n_head: 8 }, () => {}), 'TOO_LARGE');
  // a smaller cache than n_positions
  r.upload(config, fillFrom(tensors), { maxPositions: 8 });
  assert.equal(r.maxPositions, 8);
  assertClose(r.forward(ids.slice(0, 8)).logits, fullLogits(0, 8), 'after the failed uploads');
  expectError(() => r.forward([1], { pos: 8 }), 'INVALID_ARGUMENT', /maxPositions = 8/);
  r.dispose();
  assert.equal(r.config, null);
  expectError(() => r.forward([1]), 'INVALID_ARGUMENT', /upload/);
});

test('a forward whose result overflows float32 is NON_FINITE, and the cache is rewound to its pos', async () => {
  // finite parameters: the residual stream overflows at position 5 only (±3e38 + ±1e38)
  const r = await createRuntime(), big = randomModel(config, 3), C = config.n_embd;
  for (const b of big.fcproj_b) for (let c = 0; c < C; c++) b[c] = c % 2 ? 1e38 : -1e38;
  for (let c = 0; c < C; c++) big.wpe[0][5 * C + c] = c % 2 ? 3e38 : -3e38;
  r.upload(config, fillFrom(big));
  r.forward(ids.slice(0, 5));
  assert.equal(r.length, 5);
  expectError(() => r.forward(ids.slice(0, 8)), 'NON_FINITE', /overflows float32/);
  assert.equal(r.length, 0, 'positions from pos on are no longer in the cache');
  expectError(() => r.forward([1], { pos: 1 }), 'INVALID_ARGUMENT', /\[0, 0\]/);
  r.forward(ids.slice(0, 5));
  expectError(() => r.forward(ids.slice(3, 8), { pos: 3 }), 'NON_FINITE');
  assert.equal(r.length, 3);
  r.upload(config, fillFrom(tensors));
  assertClose(r.forward(ids.slice(0, 3)).logits, fullLogits(0, 3), 'a new model after the error');
  r.dispose();
});
