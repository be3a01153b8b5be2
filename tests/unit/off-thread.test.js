// off-thread.test.js - model.forwardAsync and result.mapAsync (issue 37 item 5: a page's forward
// in a worker): the C call made by the threads' caller worker (web/model/threads/threads.js
// startCaller, web/model/runtime-call.js) over the shared memory, this thread free the while.
// - the same bits as forward and map, for a decoder of each family and an encoder, on the
//   threaded build with one thread (loadModel's offThread) and with two;
// - this thread runs while it works: a setImmediate queued after the call runs before the call
//   settles (where the forward runs here, the promise has settled first: the model without
//   offThread shows the test can tell);
// - while it runs every other call is refused with INVALID_ARGUMENT, and all work after;
// - dispose during it: the promise rejects with a typed error, and the model is gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { loadModel } from '../../web/model/model-node.js';
import { root, expectError } from '../helpers.js';

const GOLDEN = path.join(root, 'tests/golden');
const IDS = Array.from({ length: 40 }, (_, i) => (i * 37 + 11) % 90);
const bits = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

// 'settled' or 'free' (the setImmediate ran first)
async function race(promise) {
  let first = null;
  promise.then(() => { first ??= 'settled'; }, () => { first ??= 'settled'; });
  setImmediate(() => { first ??= 'free'; });
  await promise.catch(() => {});
  await new Promise((resolve) => setImmediate(resolve));
  return first;
}

for (const [name, options] of [['llama/llama3-rope-bf16', { offThread: true }], ['gpt2/wide-f32', { threads: 2 }], ['bert/bert-mlm-f32', { offThread: true }]]) {
  test(`${name} ${JSON.stringify(options)}: forwardAsync and mapAsync give forward's and map's bits, off this thread`, async () => {
    const m = await loadModel(path.join(GOLDEN, name), options);
    try {
      assert.equal(m.offThread, true);
      const ids = IDS.slice(0, m.config.n_positions).map((i) => i % m.config.vocab_size);
      const sync = m.forward(ids, { heads: { repeat: 10 } });
      const maps = [[0, 0], [m.config.n_layer - 1, m.config.n_head - 1]].map(([l, h]) => sync.map(l, h));
      const pending = m.forwardAsync(ids, { heads: { repeat: 10 } });
      assert.equal(await race(pending), 'free', 'this thread ran before the forward ended');
      const r = await pending;
      const out = r.logits ?? r.hidden, want = sync.logits ?? sync.hidden;
      assert.ok(bits(out.data).equals(bits(want.data)), 'logits: the same bits');
      for (const k of ['sink', 'previous', 'entropy', 'induction']) assert.ok(bits(r.heads[k]).equals(bits(sync.heads[k])), `heads.${k}: the same bits`);
      for (const [k, [l, h]] of [[0, 0], [m.config.n_layer - 1, m.config.n_head - 1]].entries()) {
        const a = await r.mapAsync(l, h);
        assert.deepEqual(a.shape, maps[k].shape);
        assert.ok(bits(a.data).equals(bits(maps[k].data)), `map(${l}, ${h}): the same bits`);
        assert.ok(bits(r.map(l, h).data).equals(bits(maps[k].data)), 'the sync map of the async forward too');
      }
    } finally {
      m.dispose();
    }
  });
}

test('without threads forwardAsync runs here: the promise has settled before this thread runs (the race above can tell)', async () => {
  const m = await loadModel(path.join(GOLDEN, 'llama/llama3-rope-bf16'), { threads: 1 });
  try {
    assert.equal(m.offThread, false);
    const ids = IDS.map((i) => i % m.config.vocab_size);
    const pending = m.forwardAsync(ids, { heads: true });
    assert.equal(await race(pending), 'settled');
    assert.ok(bits((await pending).logits.data).equals(bits(m.forward(ids).logits.data)));
  } finally {
    m.dispose();
  }
});

test('while forwardAsync runs, every other call is refused (INVALID_ARGUMENT); after it, all work', async () => {
  const m = await loadModel(path.join(GOLDEN, 'llama/llama3-rope-bf16'), { offThread: true });
  try {
    const ids = IDS.map((i) => i % m.config.vocab_size);
    const first = m.forward(ids, { heads: true });
    const pending = m.forwardAsync(ids, { heads: true });
    await new Promise((resolve) => setImmediate(resolve));   // the call is with the caller now
    const busy = /running a forwardAsync or mapAsync off this thread; await it first/;
    expectError(() => m.forward(ids), 'INVALID_ARGUMENT', busy);
    await assert.rejects(m.forwardAsync(ids), (e) => e.code === 'INVALID_ARGUMENT' && busy.test(e.message));
    await assert.rejects(async () => { for await (const step of m.generate(ids.slice(0, 4), { maxTokens: 2 })) void step; },
      (e) => e.code === 'INVALID_ARGUMENT' && busy.test(e.message));
    const r = await pending;
    expectError(() => first.map(0, 0), 'INVALID_ARGUMENT', /heads are gone/);   // the async forward was the next forward
    assert.equal(r.map(0, 0).shape[0], ids.length);
    assert.equal(m.forward(ids).logits.shape[0], ids.length, 'usable after');
  } finally {
    m.dispose();
  }
});

test('dispose during forwardAsync: the promise rejects with a typed error; the model is gone', async () => {
  const m = await loadModel(path.join(GOLDEN, 'llama/llama3-rope-bf16'), { offThread: true });
  const ids = IDS.map((i) => i % m.config.vocab_size);
  await m.forwardAsync(ids);   // the caller up
  const pending = m.forwardAsync(ids, { heads: true });
  await new Promise((resolve) => setImmediate(resolve));
  m.dispose();
  await assert.rejects(pending, (e) => e.code === 'INVALID_ARGUMENT' && /disposed/.test(e.message));
  expectError(() => m.forward(ids), 'INVALID_ARGUMENT', /disposed/);
});
