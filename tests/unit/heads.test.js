// heads.test.js - forward's heads (issue 37, items 1-3): every head's scores computed in C without
// its map (c_src/heads.c), `logits`, and `map(layer, head)` from what the forward kept.
// The reference is this file's own: the definitions of attention.h applied in float64 to the full
// maps of forward({ attention: true }) (a log per cell), for every family's golden checkpoints
// (GPT-2, LLaMA/Qwen2/Qwen3, BERT with padding masks), on inputs below and above the 32 keys where
// the tiled kernel takes over, with `repeat`, and on 1, 2 and 3 threads (the same bits on each).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel } from '../../web/model/model-node.js';
import { useThreadHost } from '../../web/model/runtime.js';
import { spawnNode, build, cores } from '../../web/model/threads/threads-node.js';
import { root, seeded, expectError } from '../helpers.js';

const GOLDEN = path.join(root, 'tests/golden');
const NAMES = ['gpt2/wide-f32', 'gpt2/odd-heads-bf16', 'llama/llama-bias-f32', 'llama/qwen3-f16-headdim', 'llama/llama3-rope-bf16',
  'bert/bert-pair-bf16', 'bert/bert-mlm-f32'];
const SCORES = ['sink', 'previous', 'self', 'next', 'entropy', 'distance'];

// the scores of heads.h from one map (n, n) over the real tokens `real` (indices), float64
function reference(map, n, real, repeat) {
  const A = (i, j) => map[real[i] * n + real[j]], N = real.length;
  const mean = (from, to, f) => { let s = 0; for (let i = from; i <= to; i++) s += f(i); return to >= from ? s / (to - from + 1) : 0; };
  const row = (i, f) => { let s = 0; for (let j = 0; j < N; j++) s += f(A(i, j), j); return s; };
  const out = {
    sink: mean(1, N - 1, (i) => A(i, 0)),
    previous: mean(1, N - 1, (i) => A(i, i - 1)),
    self: mean(1, N - 1, (i) => A(i, i)),
    next: mean(1, N - 2, (i) => A(i, i + 1)),
    entropy: mean(1, N - 1, (i) => row(i, (w) => (w > 0 ? -w * Math.log2(w) : 0))),
    distance: mean(1, N - 1, (i) => row(i, (w, j) => w * Math.abs(i - j))),
  };
  if (repeat) {
    out.induction = mean(repeat, N - 1, (i) => A(i, i - repeat + 1));
    out.duplicate = mean(repeat, N - 1, (i) => A(i, i - repeat));
  }
  return out;
}

// the inputs of a checkpoint: its golden sequences, and a long one (the tiled kernel) that repeats
function inputsOf(name, config) {
  const g = JSON.parse(fs.readFileSync(path.join(GOLDEN, name, 'expected.json'), 'utf8'));
  const seqs = (g.sequences ?? g.cases).map((s) => ({ ids: s.ids, mask: s.mask, types: s.types }));
  const P = config.n_positions, V = config.vocab_size, rand = seeded(11);
  const block = Array.from({ length: Math.min(20, Math.floor(P / 2)) }, () => Math.floor(rand() * V));
  const long = [...block, ...block].slice(0, P);
  seqs.push({ ids: long, repeat: block.length });
  if (config.encoder) seqs.push({ ids: long, mask: long.map((_, i) => (i % 7 === 3 || i > long.length - 4 ? 0 : 1)) });
  return seqs;
}

function optionsOf(model, s, extra) {
  const o = { ...extra };
  if (model.config.encoder) { if (s.mask) o.mask = s.mask; if (s.types) o.tokenTypes = s.types; }
  return o;
}

const bytes = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

for (const name of NAMES) {
  test(`${name}: every head's scores equal those of its full map; the same bits on 1, 2 and 3 threads`, async () => {
    const runs = [];
    useThreadHost({ spawn: spawnNode, build, cores: () => 16 });
    try {
      for (const threads of [1, 2, 3]) {
        const model = await loadModel(path.join(GOLDEN, name), { threads });
        try {
          const { n_layer: L, n_head: H } = model.config;
          const run = [];
          for (const s of inputsOf(name, model.config)) {
            const n = s.ids.length, real = [...Array(n).keys()].filter((i) => !s.mask || s.mask[i]);
            if (real.length < 2) continue;   // refused (the last test)
            const heads = s.repeat ? { repeat: s.repeat } : true;
            const r = model.forward(s.ids, optionsOf(model, s, { heads }));
            const maps = model.forward(s.ids, optionsOf(model, s, { attention: true })).attention;
            assert.equal(r.heads.layers, L);
            assert.equal(r.heads.heads, H);
            assert.equal('induction' in r.heads, Boolean(s.repeat));
            for (let l = 0; l < L; l++) {
              for (let h = 0; h < H; h++) {
                const want = reference(maps[l][h].data, n, real, s.repeat);
                for (const [key, value] of Object.entries(want)) {
                  const got = r.heads[key][l * H + h];
                  assert.ok(Math.abs(got - value) <= 2e-6 + 2e-6 * Math.abs(value),
                    `${name}, n = ${n}${s.mask ? ' masked' : ''}, threads ${threads}: layer ${l} head ${h} ${key} = ${got}, from the map ${value}`);
                }
              }
            }
            if (!model.config.encoder) assert.ok([...r.heads.next].every((x) => x === 0), 'a decoder never looks ahead');
            run.push(Buffer.concat([...SCORES, ...(s.repeat ? ['induction', 'duplicate'] : [])].map((k) => bytes(r.heads[k]))));
          }
          runs.push(run);
        } finally {
          model.dispose();
        }
      }
    } finally {
      useThreadHost({ spawn: spawnNode, build, cores });
    }
    for (const k of [1, 2]) runs[k].forEach((b, i) => assert.ok(b.equals(runs[0][i]), `${k + 1} threads, input ${i}: not the bits of one thread`));
  });
}

test('map(layer, head) is the forward\'s own map, for every head of every family; after the next forward or dispose() it throws', async () => {
  for (const name of ['gpt2/wide-f32', 'llama/qwen3-f16-headdim', 'bert/bert-pair-bf16']) {
    const model = await loadModel(path.join(GOLDEN, name));
    const s = inputsOf(name, model.config).at(-1);
    const r = model.forward(s.ids, optionsOf(model, s, { heads: true }));
    const { n_layer: L, n_head: H } = model.config, n = s.ids.length;
    const maps = [];
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) maps.push(r.map(l, h));
    // each head asked for alone (the forward that runs that head on the row path and every other
    // on the tiled kernel, as heads does): the same bits
    maps.forEach((m, i) => {
      const [l, h] = [Math.floor(i / H), i % H];
      const alone = model.forward(s.ids, optionsOf(model, s, { attention: { layers: [l], heads: [h] } })).attention[l][h];
      assert.deepEqual(m.shape, [n, n]);
      assert.ok(bytes(m.data).equals(bytes(alone.data)), `${name}: map(${l}, ${h}) is not the map of that head asked for alone`);
    });
    // every head's map at once: the row path everywhere, so the later layers' inputs differ in the
    // last bits (layer 0: the same bits)
    const full = model.forward(s.ids, optionsOf(model, s, { attention: true })).attention;
    maps.forEach((m, i) => {
      const want = full[Math.floor(i / H)][i % H].data;
      m.data.forEach((x, j) => assert.ok(Math.abs(x - want[j]) <= 1e-5, `${name}: map(${Math.floor(i / H)}, ${i % H}) cell ${j}: ${x}, want ${want[j]}`));
      if (i < H) assert.ok(bytes(m.data).equals(bytes(want)), `${name}: map(0, ${i}) is not the forward's map`);
    });
    const r2 = model.forward(s.ids, optionsOf(model, s, { heads: true }));
    expectError(() => r.map(0, 0), 'INVALID_ARGUMENT', /gone: the model ran another forward/);
    const again = r2;
    expectError(() => again.map(L, 0), 'INVALID_ARGUMENT', /layer must be an integer in \[0, \d+\)/);
    expectError(() => again.map(0, -1), 'INVALID_ARGUMENT', /head must be an integer/);
    model.dispose();
    expectError(() => again.map(0, 0), 'INVALID_ARGUMENT', /gone/);
  }
});

test('logits: true (every row), \'last\' ([1, vocab], the last row\'s bits) or false (null)', async () => {
  const model = await loadModel(path.join(GOLDEN, 'llama/llama-f32'));
  const ids = [3, 9, 4, 1, 7];
  const all = model.forward(ids).logits, V = model.config.vocab_size;
  const last = model.forward(ids, { logits: 'last' }).logits;
  assert.deepEqual(last.shape, [1, V]);
  assert.ok(bytes(last.data).equals(bytes(all.data.subarray(4 * V))));
  assert.deepEqual(model.forward(ids, { logits: true }).logits.shape, [5, V]);
  const none = model.forward(ids, { logits: false, heads: true });
  assert.equal(none.logits, null);
  assert.ok(none.heads.sink.length === model.config.n_layer * model.config.n_head);
  model.dispose();
});

test('bad heads and logits options are INVALID_ARGUMENT, saying what was expected', async () => {
  const model = await loadModel(path.join(GOLDEN, 'gpt2/wide-f32'));
  const ids = [1, 2, 3, 4];
  expectError(() => model.forward(ids, { heads: { repeat: 0 } }), 'INVALID_ARGUMENT', /heads\.repeat must be an integer in \[1, 3\].*received number 0/);
  expectError(() => model.forward(ids, { heads: { repeat: 4 } }), 'INVALID_ARGUMENT', /heads\.repeat must be an integer in \[1, 3\]/);
  expectError(() => model.forward(ids, { heads: { repeat: 1.5 } }), 'INVALID_ARGUMENT', /heads\.repeat/);
  expectError(() => model.forward(ids, { heads: { period: 2 } }), 'INVALID_ARGUMENT', /unknown key "period" in heads; expected repeat/);
  expectError(() => model.forward(ids, { heads: 'yes' }), 'INVALID_ARGUMENT', /heads must be true, false or \{ repeat \}/);
  expectError(() => model.forward([5], { heads: true }), 'INVALID_ARGUMENT', /at least 2 tokens/);
  for (const bad of ['first', 1, null, 'LAST']) {
    expectError(() => model.forward(ids, { logits: bad }), 'INVALID_ARGUMENT', /logits must be true, 'last' or false/);
  }
  model.dispose();
  const bert = await loadModel(path.join(GOLDEN, 'bert/bert-mlm-f32'));
  expectError(() => bert.forward([1, 2, 3, 4], { heads: { repeat: 3 }, mask: [1, 1, 1, 0] }), 'INVALID_ARGUMENT', /\[1, 2\]/);
  expectError(() => bert.forward([1, 2, 3], { heads: true, mask: [1, 0, 0] }), 'INVALID_ARGUMENT', /at least 2 tokens/);
  bert.dispose();
});
