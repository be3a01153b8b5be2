// createAttentionPool: query rows split across workers (worker_threads here, Web Workers in
// Chromium), bit for bit what attention() gives, with attention()'s own errors.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import path from 'node:path';
import { createAttention, AttentionError } from '../../web/core/attention.js';
import { createAttentionPool, splitRows } from '../../web/pool/attention-pool-node.js';
import { root, bitsHex, seededMatrix as matrix } from '../helpers.js';
import { startServer } from '../../scripts/serve.js';
import { launch, pageErrors } from './browser.js';

const attn = await createAttention();
const pool = await createAttentionPool({ workers: 3, inlineBelow: 0 });
after(() => pool.close());

async function rejects(promise) {
  try { await promise; } catch (e) { return e; }
  assert.fail('expected a rejection');
}

// 'resolved', 'rejected' or 'pending' before the next turn of the event loop: a call that
// settles then was decided in this thread, before anything was sent to a worker and waited for
// (an order, not a time: no limit that a slow machine could pass)
function beforeNextTurn(promise) {
  return Promise.race([promise.then(() => 'resolved', () => 'rejected'), new Promise((resolve) => setImmediate(() => resolve('pending')))]);
}

test('splitRows: contiguous ranges that cover the rows, with equal work', () => {
  for (const [r0, r1, m, causal, parts] of [[0, 1, 1, false, 4], [0, 10, 10, false, 3], [0, 4096, 4096, true, 2], [5, 1000, 300, true, 3], [0, 7, 100, false, 8]]) {
    const ranges = splitRows(r0, r1, m, causal, parts);
    assert.ok(ranges.length >= 1 && ranges.length <= parts);
    assert.equal(ranges[0][0], r0);
    assert.equal(ranges.at(-1)[1], r1);
    for (let i = 0; i < ranges.length; i++) {
      assert.ok(ranges[i][0] < ranges[i][1], `range ${i} is empty`);
      if (i > 0) assert.equal(ranges[i][0], ranges[i - 1][1]);
    }
  }
  // causal, n = m = 4096, two parts: the cut is near n/√2, not n/2 (rows see i + 1 keys)
  const [[, cut]] = splitRows(0, 4096, 4096, true, 2);
  assert.ok(Math.abs(cut - 4096 / Math.SQRT2) < 8, `cut at ${cut}`);
});

test('the pool gives attention()\'s output bit for bit: odd sizes, n != m, causal, masks, row ranges', async () => {
  const cases = [
    { n: 1, m: 1, dk: 1, dv: 1 },
    { n: 2, m: 5, dk: 3, dv: 7 },            // fewer rows than workers
    { n: 37, m: 41, dk: 9, dv: 5, causal: true },
    { n: 300, m: 200, dk: 64, dv: 64 },
    { n: 515, m: 515, dk: 64, dv: 48, causal: true },
    { n: 130, m: 97, dk: 16, dv: 16, masked: true },
    { n: 130, m: 97, dk: 16, dv: 16, masked: true, causal: true },
    { n: 400, m: 400, dk: 32, dv: 32, causal: true, rows: [123, 389] },
  ];
  for (const [i, c] of cases.entries()) {
    const q = matrix(c.n, c.dk, 10 * i + 1), k = matrix(c.m, c.dk, 10 * i + 2), v = matrix(c.m, c.dv, 10 * i + 3);
    const options = { causal: !!c.causal };
    if (c.masked) {
      const data = new Uint8Array(c.n * c.m);
      for (let j = 0; j < data.length; j++) data[j] = (j * 7919) % 5 !== 0;
      data.fill(0, 3 * c.m, 4 * c.m);   // row 3 sees nothing: zeros
      options.mask = { data, shape: [c.n, c.m] };
    }
    if (c.rows) options.rows = c.rows;
    const want = attn.attention({ q, k, v }, { ...options, weights: false }).output;
    const got = (await pool.attention({ q, k, v }, options)).output;
    assert.deepEqual(got.shape, want.shape, JSON.stringify(c));
    assert.ok(got.data instanceof Float32Array);
    assert.equal(bitsHex(got.data), bitsHex(want.data), JSON.stringify(c));
  }
});

test('several calls in flight each get their own answer', async () => {
  const inputs = [0, 1, 2, 3, 4].map((i) => ({ q: matrix(64 + i, 8, i + 100), k: matrix(50, 8, i + 200), v: matrix(50, 4, i + 300) }));
  const got = await Promise.all(inputs.map((x) => pool.attention(x, { causal: true })));
  inputs.forEach((x, i) => {
    assert.equal(bitsHex(got[i].output.data), bitsHex(attn.attention(x, { causal: true, weights: false }).output.data));
  });
});

test('bad inputs reject with attention()\'s own error; the pool stays usable', async () => {
  const good = { q: [[1, 2]], k: [[1, 2]], v: [[3]] };
  const bad = [
    [{ q: [[1, 2]], k: [[1]], v: [[1]] }, undefined],
    [{ q: [[1, NaN]], k: [[1, 2]], v: [[1]] }, undefined],
    [{ q: { data: new Float32Array([1, Infinity]), shape: [1, 2] }, k: [[1, 2]], v: [[1]] }, undefined],
    [{ q: [[1, 2]], k: [[1, 2]], v: [[1], [2]] }, undefined],
    [{ q: [[1, 2]], k: [[1, 2]] }, undefined],
    [{ q: [], k: [[1, 2]], v: [[1]] }, undefined],
    [null, undefined],
    [good, { causal: 'yes' }],
    [good, { scale: -1 }],
    [good, { rows: [0, 5] }],
    [good, { mask: [[true, false]] }],
    [good, new Map()],
  ];
  for (const [inputs, options] of bad) {
    let want;
    try { attn.attention(inputs, options === undefined ? { weights: false } : options instanceof Map ? options : { ...options, weights: false }); } catch (e) { want = e; }
    assert.ok(want instanceof AttentionError, `attention() accepted ${JSON.stringify(inputs)}`);
    const got = await rejects(pool.attention(inputs, options));
    assert.ok(got instanceof AttentionError, `${got?.name}: ${got?.message}`);
    assert.equal(got.code, want.code, want.message);
    assert.equal(got.message, want.message);
  }
  let e = await rejects(pool.attention(good, { weights: true }));
  assert.equal(e.code, 'INVALID_ARGUMENT');
  assert.match(e.message, /output only/);
  // an unknown option: attention()'s words, with the pool's own options in the list
  e = await rejects(pool.attention(good, { heads: 2 }));
  assert.deepEqual([e.code, e.message], ['INVALID_ARGUMENT', 'attention: unknown option "heads"; expected one of causal, scale, mask, weights, rows, signal, timeout']);
  // what structured clone cannot send, or would change, is checked here first, as attention() checks it
  class Options { constructor() { this.causal = true; } }
  const viaProto = Object.create({ q: [[1, 2]], k: [[1, 2]], v: [[3]] });
  const huge = { q: { data: new Float32Array(4), shape: [1e12, 1] }, k: [[1]], v: [[1]] };
  for (const [inputs, options] of [[{ q: [[1, 2]], k: [[1, 2]], v: [[() => 1]] }], [good, new Options()], [good, () => {}],
    [good, { rows: 5 }], [good, { rows: [0, 1, 2] }], [good, { rows: '0,1' }], [good, { rows: [1, 2] }], [huge]]) {
    let want;
    try { attn.attention(inputs, options === undefined || !Object.getPrototypeOf(options) || Object.getPrototypeOf(options) === Object.prototype ? { ...options, weights: false } : options); } catch (err) { want = err; }
    const call = pool.attention(inputs, options);
    assert.equal(await beforeNextTurn(call), 'rejected', 'rejected at once, in this thread');
    const got = await rejects(call);
    assert.deepEqual([got.code, got.message], [want.code, want.message]);
  }
  assert.deepEqual((await pool.attention(viaProto)).output.shape, [1, 1]);   // inherited inputs work, as in attention()
  // a small view of a large buffer: only the view's values count
  const big = new Float32Array(1000).fill(NaN);
  big.set([1, 2], 500);
  assert.deepEqual((await pool.attention({ q: { data: big.subarray(500, 502), shape: [1, 2] }, k: [[1, 2]], v: [[3]] })).output.data, Float32Array.of(3));
  assert.deepEqual((await pool.attention(good)).output.shape, [1, 1]);
});

test('createAttentionPool checks its options; a closed pool refuses calls', async () => {
  for (const workers of [0, -1, 1.5, '2', 65, NaN]) {
    const e = await rejects(createAttentionPool({ workers }));
    assert.equal(e.code, 'INVALID_ARGUMENT');
    assert.match(e.message, /workers must be an integer/);
  }
  const e = await rejects(createAttentionPool({ workerUrl: new URL('file:///nonexistent/worker.js') }));
  assert.equal(e.code, 'INVALID_ARGUMENT');
  assert.match(e.message, /a worker failed: the worker script failed to load \(file:\/\/\/nonexistent\/worker\.js\)/, 'the message names the URL tried');
  const p = await createAttentionPool({ workers: 1, inlineBelow: 0 });
  assert.equal(p.size, 1);
  const big = { q: matrix(2000, 64, 1), k: matrix(2000, 64, 2), v: matrix(2000, 64, 3) };
  const running = rejects(p.attention(big));
  await p.close();
  assert.match((await running).message, /closed/);
  assert.match((await rejects(p.attention({ q: [[1]], k: [[1]], v: [[1]] }))).message, /closed/);
});

test('in Node, a global Worker installed by another library (onnxruntime-web does) is not used', async () => {
  const saved = Object.getOwnPropertyDescriptor(globalThis, 'Worker');
  globalThis.Worker = class { constructor() { this.postMessage = () => {}; this.terminate = () => {}; } };   // never answers
  try {
    const p = await createAttentionPool({ workers: 1, inlineBelow: 0 });
    assert.deepEqual((await p.attention({ q: [[1, 0]], k: [[1, 0]], v: [[2]] })).output.shape, [1, 1]);
    await p.close();
  } finally {
    if (saved) Object.defineProperty(globalThis, 'Worker', saved); else delete globalThis.Worker;
  }
});

test('an idle pool that is never closed does not keep Node running', () => {
  const script = `import { createAttentionPool } from ${JSON.stringify(path.join(root, 'web/pool/attention-pool-node.js'))};
    const pool = await createAttentionPool({ workers: 2, inlineBelow: 0 });
    const r = await pool.attention({ q: [[1, 0]], k: [[1, 0], [0, 1]], v: [[1], [2]] });
    console.log(r.output.data.length);`;
  // a child that Node would keep running is killed after 60 s (status null): only a hang gets there
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60000 });
  assert.equal(r.status, 0, `status ${r.status} (${r.signal ?? 'no signal'}): ${r.stderr}`);
  assert.equal(r.stdout.trim(), '1');
});

test('in Chromium: Web Workers (module), no SharedArrayBuffer, the same bits as the page\'s own attention()', async () => {
  const server = await startServer({ root, allow: ['tests/fixtures/pool/'] });
  const browser = await launch();
  try {
    const page = await browser.newPage();
    const errors = pageErrors(page);
    await page.goto(`${server.url}tests/fixtures/pool/index.html`);
    await page.waitForFunction(() => window.ready);
    await page.evaluate(() => window.ready);
    const r = await page.evaluate(async () => {
      const mk = (rows, cols, seed) => { let s = seed; const data = new Float32Array(rows * cols); for (let i = 0; i < data.length; i++) { s = (s * 1664525 + 1013904223) >>> 0; data[i] = s / 2 ** 31 - 1; } return { data, shape: [rows, cols] }; };
      const x = { q: mk(700, 64, 1), k: mk(650, 64, 2), v: mk(650, 32, 3) };
      const want = window.attn.attention(x, { causal: true, weights: false }).output.data;
      const got = (await window.pool.attention(x, { causal: true })).output.data;
      let same = want.length === got.length;
      for (let i = 0; i < want.length && same; i++) same = Object.is(want[i], got[i]);
      let err;
      try { await window.pool.attention({ q: [[1, NaN]], k: [[1, 2]], v: [[1]] }); } catch (e) { err = [e.name, e.code]; }
      return { same, size: window.pool.size, sab: typeof SharedArrayBuffer, isolated: self.crossOriginIsolated, err };
    });
    assert.equal(r.same, true);
    assert.equal(r.size, 2);
    assert.equal(r.isolated, false, 'the page is not cross-origin isolated (no COOP/COEP headers)');
    assert.deepEqual(r.err, ['AttentionError', 'NON_FINITE']);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await server.close();
  }
});

// ----------------------------------------------------------------------------
// security review: (a) each argument read once, (b) a caller's exceptions as AttentionErrors,
// (c) a call bounded by { signal } and { timeout }

// a matching object whose getters count how often each key is read
function counting(values, reads) {
  const o = {};
  for (const [key, value] of Object.entries(values)) {
    Object.defineProperty(o, key, { enumerable: true, get() { reads[key] = (reads[key] ?? 0) + 1; return value; } });
  }
  return o;
}

for (const inline of [false, true]) {
  test(`a: every input and every option is read exactly once (counting getters), ${inline ? 'a small call computed in this thread' : 'split'}`, async () => {
  const p = inline ? await createAttentionPool({ workers: 2 }) : pool;
  try {
  const n = 40, m = 30;
  const q = matrix(n, 8, 1), k = matrix(m, 8, 2), v = matrix(m, 4, 3);
  const mask = { data: new Uint8Array(n * m).fill(1), shape: [n, m] };
  mask.data.fill(0, 5 * m, 5 * m + 7);
  const want = attn.attention({ q, k, v }, { causal: true, scale: 0.5, mask, weights: false, rows: [3, 37] }).output;
  // attention()'s own options
  let reads = {};
  let got = await p.attention(counting({ q, k, v }, reads), counting({ causal: true, scale: 0.5, mask, weights: false, rows: [3, 37] }, reads));
  assert.deepEqual(reads, { q: 1, k: 1, v: 1, causal: 1, scale: 1, mask: 1, weights: 1, rows: 1 });
  assert.equal(bitsHex(got.output.data), bitsHex(want.data));
  // and the pool's
  reads = {};
  const options = counting({ causal: true, scale: 0.5, mask, weights: false, rows: [3, 37], signal: new AbortController().signal, timeout: 60000 }, reads);
  got = await p.attention(counting({ q, k, v }, reads), options);
  assert.deepEqual(reads, { q: 1, k: 1, v: 1, causal: 1, scale: 1, mask: 1, weights: 1, rows: 1, signal: 1, timeout: 1 });
  assert.equal(bitsHex(got.output.data), bitsHex(want.data));
  // a Proxy counts every [[Get]], whatever the key
  const gets = [];
  const spy = (target, label) => new Proxy(target, { get: (t, key, r) => { gets.push(`${label}.${String(key)}`); return Reflect.get(t, key, r); } });
  got = await p.attention(spy({ q, k, v }, 'inputs'), spy({ causal: true, mask }, 'options'));
  assert.deepEqual(gets.filter((g) => g.startsWith('inputs')).sort(), ['inputs.k', 'inputs.q', 'inputs.v']);
  assert.deepEqual(gets.filter((g) => g.startsWith('options')).sort(), ['options.causal', 'options.mask', 'options.rows', 'options.scale', 'options.signal', 'options.timeout', 'options.weights']);
  assert.equal(bitsHex(got.output.data), bitsHex(attn.attention({ q, k, v }, { causal: true, mask, weights: false }).output.data));
    if (inline) assert.equal(got.workers, 0);
  } finally {
    if (inline) await p.close();
  }
  });
}

test('a: what was checked is what is sent: getters that answer differently the second time', async () => {
  const k = matrix(6, 4, 2), v = matrix(6, 4, 3), q4 = matrix(4, 4, 1);
  const want = attn.attention({ q: q4, k, v }, { weights: false }).output;
  // the review's case: inputs.q is a checked 4-row q, then a 2000-row one
  let reads = 0;
  let got = (await pool.attention({ get q() { return reads++ === 0 ? q4 : matrix(2000, 4, 9); }, k, v })).output;
  assert.equal(reads, 1);
  assert.deepEqual(got.shape, [4, 4]);   // the old pool computed [2000, 4]
  assert.equal(bitsHex(got.data), bitsHex(want.data));
  // deeper down: q.data, q.shape, one number of a row, the mask's data
  const swap = (first, later) => { let i = 0; return () => (i++ === 0 ? first : later); };
  const data = swap(q4.data, new Float32Array(16).fill(1e30));
  got = (await pool.attention({ q: { get data() { return data(); }, shape: [4, 4] }, k, v })).output;
  assert.equal(bitsHex(got.data), bitsHex(want.data));
  const q2 = { data: matrix(2, 8, 4).data, shape: null };
  const shape = swap([2, 8], [4, 4]);
  Object.defineProperty(q2, 'shape', { get: shape, enumerable: true });
  const k8 = matrix(6, 8, 5);
  got = (await pool.attention({ q: q2, k: k8, v })).output;
  assert.deepEqual(got.shape, [2, 4]);
  assert.equal(bitsHex(got.data), bitsHex(attn.attention({ q: { data: q2.data, shape: [2, 8] }, k: k8, v }, { weights: false }).output.data));
  const row = [0.5, 0.25];
  const value = swap(0.75, 1e6);
  Object.defineProperty(row, 1, { get: value, enumerable: true });
  const nk = [[1, 0], [0, 1]], nv = [[1], [2]];
  got = (await pool.attention({ q: [[1, 2], row], k: nk, v: nv })).output;
  assert.equal(bitsHex(got.data), bitsHex(attn.attention({ q: [[1, 2], [0.5, 0.75]], k: nk, v: nv }, { weights: false }).output.data));
  const ones = new Uint8Array(24).fill(1), mdata = swap(ones, new Uint8Array(24));
  got = (await pool.attention({ q: q4, k, v }, { mask: { get data() { return mdata(); }, shape: [4, 6] } })).output;
  assert.equal(bitsHex(got.data), bitsHex(want.data));   // all ones: as without a mask, not all zeros
});

test('b: what a getter or a Proxy trap throws rejects as an AttentionError naming what was read', async () => {
  const good = { q: [[1, 2]], k: [[1, 2]], v: [[3]] };
  const boom = () => { throw new Error('boom'); };
  const cases = [
    [{ get q() { return boom(); }, k: good.k, v: good.v }, undefined, /reading inputs\.q failed: boom$/],
    [new Proxy(good, { get: boom }), undefined, /reading inputs\.q failed: boom$/],
    [new Proxy(good, { ownKeys: boom }), undefined, /reading the names of the inputs failed: boom$/],
    [{ ...good, q: { shape: [1, 2], get data() { return boom(); } } }, undefined, /reading inputs\.q\.data failed: boom$/],
    [{ ...good, q: { get shape() { return boom(); }, data: [1, 2] } }, undefined, /reading inputs\.q\.shape failed: boom$/],
    [{ ...good, q: { shape: [1, 2], data: new Proxy([1, 2], { get: (t, key) => (key === '1' ? boom() : t[key]) }) } }, undefined, /reading inputs\.q\.data\[1\] failed: boom$/],
    [{ ...good, k: [Object.defineProperty([1, 0], 1, { get: boom })] }, undefined, /reading inputs\.k\[0\]\[1\] failed: boom$/],
    [{ ...good, v: new Proxy([[3]], { get: (t, key) => (key === 'length' ? boom() : t[key]) }) }, undefined, /reading inputs\.v\.length failed: boom$/],
    [good, { get causal() { return boom(); } }, /reading options\.causal failed: boom$/],
    [good, { get signal() { return boom(); } }, /reading options\.signal failed: boom$/],
    [good, { get timeout() { return boom(); } }, /reading options\.timeout failed: boom$/],
    [good, new Proxy({}, { getPrototypeOf: boom }), /reading options failed: boom$/],
    [good, new Proxy({ causal: true }, { ownKeys: boom }), /reading the names of the options failed: boom$/],
    [good, { mask: { shape: [1, 1], get data() { return boom(); } } }, /reading options\.mask\.data failed: boom$/],
    [good, { mask: [new Proxy([true], { get: (t, key) => (key === '0' ? boom() : t[key]) })] }, /reading options\.mask\[0\]\[0\] failed: boom$/],
    [good, { rows: new Proxy([0, 1], { get: (t, key) => (key === '1' ? boom() : t[key]) }), weights: false }, /reading options\.rows failed: boom$/],
  ];
  for (const [inputs, options, message] of cases) {
    let p;
    assert.doesNotThrow(() => { p = pool.attention(inputs, options); }, 'a rejected promise, not a throw');
    const e = await rejects(p);
    assert.ok(e instanceof AttentionError, `${message}: ${e?.name}: ${e?.message}`);
    assert.equal(e.code, 'INVALID_ARGUMENT');
    assert.match(e.message, /^attention pool: /);
    assert.match(e.message, message);
    assert.equal(e.cause?.message, 'boom');
  }
  // what is thrown need not be an Error
  const weird = { toString() { throw new Error('no text'); } };
  for (const thrown of ['a string', Symbol('s'), null, weird]) {
    const e = await rejects(pool.attention({ get q() { throw thrown; }, k: good.k, v: good.v }));
    assert.ok(e instanceof AttentionError, String(e));
    assert.equal(e.code, 'INVALID_ARGUMENT');
    assert.match(e.message, /^attention pool: reading inputs\.q failed: /);
    assert.equal(e.cause, thrown);
  }
  // createAttentionPool's options too
  const e = await rejects(createAttentionPool({ get workers() { return boom(); } }));
  assert.ok(e instanceof AttentionError);
  assert.match(e.message, /^createAttentionPool: reading options\.workers failed: boom$/);
  assert.deepEqual((await pool.attention(good)).output.shape, [1, 1]);
});

const hangUrl = new URL('../fixtures/pool/hang-worker.js', import.meta.url);
const silentUrl = new URL('../fixtures/pool/silent-worker.js', import.meta.url);
// a call that gets hang-worker.js stuck (q starts with 777), and one that does not
const stuck = () => { const q = matrix(50, 8, 5); q.data[0] = 777; return { q, k: matrix(40, 8, 6), v: matrix(40, 4, 7) }; };
const fine = { q: matrix(64, 8, 1), k: matrix(40, 8, 2), v: matrix(40, 4, 3) };
const fineBits = bitsHex(attn.attention(fine, { weights: false }).output.data);

test('issue 26: a call below inlineBelow is computed in this thread, with the same bits; above it, split', { timeout: 60000 }, async () => {
  // default inlineBelow, on workers that never answer a q starting with 777: the small call is
  // answered anyway, so it never reached them
  const p = await createAttentionPool({ workers: 2, workerUrl: hangUrl, startTimeout: Infinity });
  try {
    const small = stuck();
    const r = await p.attention(small, { causal: true });
    assert.equal(r.workers, 0, 'computed here');
    assert.equal(bitsHex(r.output.data), bitsHex(attn.attention(small, { causal: true, weights: false }).output.data));
    // 50 rows × 40 keys × (8 + 4) = 24,000 multiply-adds: split when the limit is lower
    const q = await createAttentionPool({ workers: 2, workerUrl: hangUrl, inlineBelow: 24_000 });
    try {
      assert.equal((await rejects(q.attention(small, { timeout: 300 }))).name, 'TimeoutError', 'sent to the stuck workers');
      const split = await q.attention(fine);               // 64 × 40 × 12 = 30,720: split, by the new workers
      assert.equal(split.workers, 2);
      assert.equal(bitsHex(split.output.data), fineBits);
    } finally {
      await q.close();
    }
  } finally {
    await p.close();
  }
  // the real workers: a large call is split in two, bit for bit; the default limit is the constant
  const real = await createAttentionPool({ workers: 2 });
  try {
    const big = { q: matrix(600, 64, 1), k: matrix(600, 64, 2), v: matrix(600, 64, 3) };   // 600 × 600 × 128 = 46 M
    const r = await real.attention(big);
    assert.equal(r.workers, 2);
    assert.equal(bitsHex(r.output.data), bitsHex(attn.attention(big, { weights: false }).output.data));
    assert.equal((await real.attention(fine)).workers, 0);
  } finally {
    await real.close();
  }
  for (const inlineBelow of [-1, '5', NaN, null]) {
    const e = await rejects(createAttentionPool({ workers: 1, inlineBelow }));
    assert.equal(e.code, 'INVALID_ARGUMENT');
    assert.match(e.message, /inlineBelow must be a number of multiply-adds/);
  }
});

test('c: { timeout }: a call on stuck workers rejects with a TimeoutError; the workers are replaced, calls queued behind go on', { timeout: 30000 }, async () => {
  const p = await createAttentionPool({ workers: 2, inlineBelow: 0, workerUrl: hangUrl });
  try {
    assert.equal(bitsHex((await p.attention(fine)).output.data), fineBits);
    // the worker never answers this call, so the limit fires however fast or slow the machine is
    const e = await rejects(p.attention(stuck(), { timeout: 300 }));
    assert.ok(e instanceof DOMException, `${e?.name}: ${e?.message}`);
    assert.equal(e.name, 'TimeoutError');
    assert.match(e.message, /^attention pool: the call did not finish within 300 ms/, 'the call\'s own limit fired');
    assert.equal(bitsHex((await p.attention(fine)).output.data), fineBits);
    // a call sent behind a stuck one: computed by the replacement workers
    const first = rejects(p.attention(stuck(), { timeout: 300 }));
    const behind = p.attention(fine);
    assert.equal((await first).name, 'TimeoutError');
    assert.equal(bitsHex((await behind).output.data), fineBits);
  } finally {
    await p.close();
  }
});

test('c: { signal }: an abort rejects with the signal\'s reason; the pool goes on', { timeout: 30000 }, async () => {
  const p = await createAttentionPool({ workers: 2, inlineBelow: 0, workerUrl: hangUrl });
  try {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    let e = await rejects(p.attention(stuck(), { signal: ac.signal }));
    assert.equal(e, ac.signal.reason);
    assert.ok(e instanceof DOMException);
    assert.equal(e.name, 'AbortError');
    assert.equal(bitsHex((await p.attention(fine)).output.data), fineBits);
    // a reason of one's own, as fetch() does
    const ac2 = new AbortController(), reason = new Error('enough');
    const running = rejects(p.attention(stuck(), { signal: ac2.signal }));
    ac2.abort(reason);
    assert.equal(await running, reason);
    // AbortSignal.timeout(); an aborted signal rejects at once
    e = await rejects(p.attention(stuck(), { signal: AbortSignal.timeout(200) }));
    assert.equal(e.name, 'TimeoutError');
    const early = p.attention(fine, { signal: AbortSignal.abort() });
    assert.equal(await beforeNextTurn(early), 'rejected', 'rejected at once, nothing sent');
    assert.equal((await rejects(early)).name, 'AbortError');
    // an abort after the call ended changes nothing
    const ac3 = new AbortController();
    assert.equal(bitsHex((await p.attention(fine, { signal: ac3.signal, timeout: 5000 })).output.data), fineBits);
    ac3.abort();
    assert.equal(bitsHex((await p.attention(fine)).output.data), fineBits);
  } finally {
    await p.close();
  }
});

test('c: createAttentionPool({ timeout }) is every call\'s limit (a call\'s own timeout wins) and the workers\' start\'s (startTimeout apart)', { timeout: 30000 }, async () => {
  // startTimeout: Infinity: the calls are bounded here, not the start, which a slow machine may
  // take longer than 300 ms for
  const p = await createAttentionPool({ workers: 2, inlineBelow: 0, workerUrl: hangUrl, timeout: 300, startTimeout: Infinity });
  try {
    assert.match((await rejects(p.attention(stuck()))).message, /within 300 ms/);
    assert.match((await rejects(p.attention(stuck(), { timeout: 100 }))).message, /within 100 ms/);
    assert.equal(bitsHex((await p.attention(fine, { timeout: Infinity })).output.data), fineBits);
    assert.equal(bitsHex((await p.attention(fine)).output.data), fineBits);
  } finally {
    await p.close();
  }
  // workers that never answer init: the start's limit is startTimeout, by default timeout
  for (const [options, ms] of [[{ timeout: 300 }, 300], [{ startTimeout: 200 }, 200], [{ timeout: Infinity, startTimeout: 200 }, 200]]) {
    const e = await rejects(createAttentionPool({ workers: 2, inlineBelow: 0, workerUrl: silentUrl, ...options }));
    assert.equal(e.name, 'TimeoutError', JSON.stringify(options));
    assert.equal(e.message, `createAttentionPool: the workers' start did not finish within ${ms} ms (timeout)`);
  }
});

test('c: with the real worker, a long call aborted mid-computation ends at once; the call queued behind it is computed', { timeout: 60000 }, async () => {
  // the workers the pool terminates, seen through worker_threads' own Worker (the pool's Node entry uses it)
  const terminated = [];
  const terminate = Worker.prototype.terminate;
  Worker.prototype.terminate = function () { const exited = terminate.call(this); terminated.push(exited); return exited; };
  const p = await createAttentionPool({ workers: 2, inlineBelow: 0 });
  try {
    // n = m = 20,000: seconds of work for each worker (about 2.5 s on the 2-core machine of docs/BENCHMARKS.md)
    const big = { q: matrix(20000, 64, 11), k: matrix(20000, 64, 12), v: matrix(20000, 64, 13) };
    const ac = new AbortController();
    const long = p.attention(big, { signal: ac.signal });
    const behind = p.attention(fine);   // each worker holds a part of each call: long's first
    behind.catch(() => {});   // awaited below; a failing assertion before that should be the one reported
    await new Promise((resolve) => setTimeout(resolve, 50));   // (most likely computing by now; not needed for what follows)
    const before = terminated.length;   // (earlier tests' pools may still terminate workers that exited)
    ac.abort();
    const byAbort = terminated.slice(before);
    // abort() itself rejects the call and terminates both workers holding its parts; behind's
    // parts go to their replacements, not to workers still busy with long's rows
    assert.equal(byAbort.length, 2, 'the two workers computing the aborted call were terminated by abort()');
    assert.equal(await beforeNextTurn(long), 'rejected', 'the abort rejects the call at once');
    assert.equal((await rejects(long)).name, 'AbortError');
    assert.equal(bitsHex((await behind).output.data), fineBits);
    await Promise.all(byAbort);   // their threads end (a worker that could not be stopped would hang here)
  } finally {
    Worker.prototype.terminate = terminate;
    await p.close();
  }
});

test('c: a mix of stuck, aborted and plain calls in flight together: every call settles, the plain ones with the right bits', { timeout: 120000 }, async () => {
  // stuck calls time out waiting behind others, or while their worker spins; aborts come at any
  // time; the calls behind them must neither hang nor get another call's rows
  const p = await createAttentionPool({ workers: 3, inlineBelow: 0, workerUrl: hangUrl });
  try {
    let seed = 1;
    const rnd = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32);
    const calls = [];
    for (let i = 0; i < 150; i++) {
      const n = 1 + Math.floor(rnd() * 300), m = 1 + Math.floor(rnd() * 200);
      const x = { q: matrix(n, 16, i), k: matrix(m, 16, i + 1000), v: matrix(m, 8, i + 2000) };
      const kind = rnd();
      if (kind < 0.15) {
        x.q.data[0] = 777;
        calls.push(p.attention(x, { timeout: 50 + rnd() * 100 }).then(() => 'resolved', (e) => (e.name === 'TimeoutError' ? 'ok' : e.message)));
      } else {
        const want = bitsHex(attn.attention(x, { weights: false, causal: kind < 0.3 }).output.data);
        const check = (r) => (bitsHex(r.output.data) === want ? 'ok' : `call ${i}: other bits`);
        if (kind < 0.3) {
          const ac = new AbortController();
          setTimeout(() => ac.abort(), rnd() * 30);
          calls.push(p.attention(x, { signal: ac.signal, causal: true }).then(check, (e) => (e.name === 'AbortError' ? 'ok' : e.message)));
        } else {
          calls.push(p.attention(x).then(check, (e) => `call ${i}: ${e.name} ${e.message}`));
        }
      }
      if (rnd() < 0.1) await new Promise((resolve) => setTimeout(resolve, rnd() * 50));
    }
    const results = await Promise.all(calls);
    assert.deepEqual(results.filter((r) => r !== 'ok'), []);
  } finally {
    await p.close();
  }
});

test('c: signal, timeout and unknown options are checked (INVALID_ARGUMENT), by createAttentionPool too', async () => {
  const good = { q: [[1, 2]], k: [[1, 2]], v: [[3]] };
  for (const timeout of [0, -1, NaN, -Infinity, '100', 2 ** 31, 100n, {}]) {
    const e = await rejects(pool.attention(good, { timeout }));
    assert.deepEqual([e.name, e.code], ['AttentionError', 'INVALID_ARGUMENT']);
    assert.match(e.message, /^attention pool: timeout must be a number of milliseconds/);
    const e2 = await rejects(createAttentionPool({ workers: 1, inlineBelow: 0, timeout }));
    assert.deepEqual([e2.code, e2.message.replace('createAttentionPool', 'attention pool')], [e.code, e.message]);
    const e3 = await rejects(createAttentionPool({ workers: 1, inlineBelow: 0, startTimeout: timeout }));
    assert.deepEqual([e3.code, e3.message], [e.code, e.message.replace('attention pool: timeout', 'createAttentionPool: startTimeout')]);
  }
  for (const signal of [{}, 'abort', true, { aborted: false, addEventListener() {}, removeEventListener() {} }, new AbortController()]) {
    const e = await rejects(pool.attention(good, { signal }));
    assert.deepEqual([e.name, e.code], ['AttentionError', 'INVALID_ARGUMENT']);
    assert.match(e.message, /^attention pool: signal must be an AbortSignal/);
  }
  let e = await rejects(pool.attention(good, { timout: 100 }));
  assert.deepEqual([e.code, e.message], ['INVALID_ARGUMENT', 'attention: unknown option "timout"; expected one of causal, scale, mask, weights, rows, signal, timeout']);
  e = await rejects(pool.attention(good, { weights: 'no' }));
  assert.deepEqual([e.code, e.message], ['INVALID_ARGUMENT', 'weights must be true or false; received the string "no"']);
  e = await rejects(createAttentionPool({ wokers: 2 }));
  assert.deepEqual([e.code, e.message], ['INVALID_ARGUMENT', 'createAttentionPool: unknown option "wokers"; expected one of workers, workerUrl, relaxed, timeout, startTimeout, inlineBelow']);
  // accepted: none given (null, undefined), Infinity, a live signal
  for (const options of [{ timeout: null, signal: null }, { timeout: undefined, signal: undefined }, { timeout: Infinity }, { timeout: 2 ** 31 - 1, signal: new AbortController().signal }]) {
    assert.deepEqual((await pool.attention(good, options)).output.shape, [1, 1], JSON.stringify(options));
  }
});

test('c: after a timeout or an abort nothing is left pending: Node exits, with close() and without', () => {
  const script = `import { createAttentionPool } from ${JSON.stringify(path.join(root, 'web/pool/attention-pool-node.js'))};
    const workerUrl = new URL(${JSON.stringify(hangUrl.href)});
    const stuck = () => ({ q: { data: new Float32Array(16).fill(777), shape: [4, 4] }, k: [[1, 0, 0, 0]], v: [[1]] });
    const out = [];
    const a = await createAttentionPool({ workers: 2, inlineBelow: 0, workerUrl });
    out.push(await a.attention(stuck(), { timeout: 200 }).catch((e) => e.name));
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    out.push(await a.attention(stuck(), { signal: ac.signal }).catch((e) => e.name));
    out.push((await a.attention({ q: [[1, 0]], k: [[1, 0]], v: [[2]] })).output.data[0]);
    const running = a.attention(stuck()).catch((e) => e.message);   // no limit: close() ends it
    await new Promise((resolve) => setTimeout(resolve, 100));
    await a.close();
    out.push(await running);
    // never closed; its start is not bounded (a slow machine may take longer than 200 ms for it)
    const b = await createAttentionPool({ workers: 2, inlineBelow: 0, workerUrl, timeout: 200, startTimeout: Infinity });
    out.push(await b.attention(stuck()).catch((e) => e.name));
    console.log(JSON.stringify(out));`;
  // a child that Node would keep running is killed after 60 s (status null): only a hang gets there
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60000 });
  assert.equal(r.status, 0, `status ${r.status} (${r.signal ?? 'no signal'}): ${r.stderr}`);
  assert.deepEqual(JSON.parse(r.stdout), ['TimeoutError', 'AbortError', 2, 'attention pool: closed while the call was running', 'TimeoutError']);
});

test('c: in Chromium: a stuck Web Worker is terminated on timeout and on abort; later calls work', { timeout: 60000 }, async () => {
  const server = await startServer({ root, allow: ['tests/fixtures/pool/'] });
  const browser = await launch();
  try {
    const page = await browser.newPage();
    const errors = pageErrors(page);
    await page.goto(`${server.url}tests/fixtures/pool/index.html`);
    await page.waitForFunction(() => window.ready);
    const r = await page.evaluate(async () => {
      const { createAttentionPool } = await import('/web/pool/attention-pool.js');
      const p = await createAttentionPool({ workers: 2, inlineBelow: 0, workerUrl: new URL('/tests/fixtures/pool/hang-worker.js', location.href) });
      const x = { q: [[1, 0], [0, 1], [1, 1]], k: [[1, 0], [0, 1]], v: [[1], [2]] };
      const stuck = { q: [[777, 0], [0, 1], [1, 1]], k: x.k, v: x.v };
      const before = Array.from((await p.attention(x)).output.data);
      const timedOut = await p.attention(stuck, { timeout: 300 }).then(() => 'resolved', (e) => [e.name, e instanceof DOMException, e.message]);
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 100);
      const aborted = await p.attention(stuck, { signal: ac.signal }).then(() => 'resolved', (e) => e === ac.signal.reason && e.name);
      const after = Array.from((await p.attention(x)).output.data);
      await p.close();
      // a worker script that is not there: the message names the URL the pool tried
      const missing = await createAttentionPool({ workers: 1, inlineBelow: 0, workerUrl: '/tests/fixtures/pool/no-such-worker.js' }).then(() => 'resolved', (e) => e.message);
      return { before, after, timedOut, aborted, missing };
    });
    assert.equal(r.missing, 'attention pool: a worker failed: the worker script failed to load (/tests/fixtures/pool/no-such-worker.js)');
    assert.deepEqual(r.timedOut, ['TimeoutError', true, 'attention pool: the call did not finish within 300 ms (timeout)']);
    assert.equal(r.aborted, 'AbortError');
    assert.equal(r.before.length, 3);
    assert.deepEqual(r.after, r.before);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
