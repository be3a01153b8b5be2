// createAttentionPool: query rows split across workers (worker_threads here, Web Workers in
// Chromium), bit for bit what attention() gives, with attention()'s own errors.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { createAttention, AttentionError } from '../web/attention.js';
import { createAttentionPool, splitRows } from '../web/attention-pool.js';
import { root, bitsHex, seededMatrix as matrix } from './helpers.js';
import { startServer } from '../scripts/serve.js';
import { launch, pageErrors } from './browser.js';

const attn = await createAttention();
const pool = await createAttentionPool({ workers: 3 });
after(() => pool.close());

async function rejects(promise) {
  try { await promise; } catch (e) { return e; }
  assert.fail('expected a rejection');
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
    [good, { heads: 2 }],
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
  // what structured clone cannot send, or would change, is checked here first, as attention() checks it
  class Options { constructor() { this.causal = true; } }
  const viaProto = Object.create({ q: [[1, 2]], k: [[1, 2]], v: [[3]] });
  const huge = { q: { data: new Float32Array(4), shape: [1e12, 1] }, k: [[1]], v: [[1]] };
  for (const [inputs, options] of [[{ q: [[1, 2]], k: [[1, 2]], v: [[() => 1]] }], [good, new Options()], [good, () => {}],
    [good, { rows: 5 }], [good, { rows: [0, 1, 2] }], [good, { rows: '0,1' }], [good, { rows: [1, 2] }], [huge]]) {
    let want;
    try { attn.attention(inputs, options === undefined || !Object.getPrototypeOf(options) || Object.getPrototypeOf(options) === Object.prototype ? { ...options, weights: false } : options); } catch (err) { want = err; }
    const t0 = Date.now();
    const got = await rejects(pool.attention(inputs, options));
    assert.ok(Date.now() - t0 < 2000, 'rejected at once');
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
  const p = await createAttentionPool({ workers: 1 });
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
    const p = await createAttentionPool({ workers: 1 });
    assert.deepEqual((await p.attention({ q: [[1, 0]], k: [[1, 0]], v: [[2]] })).output.shape, [1, 1]);
    await p.close();
  } finally {
    if (saved) Object.defineProperty(globalThis, 'Worker', saved); else delete globalThis.Worker;
  }
});

test('an idle pool that is never closed does not keep Node running', () => {
  const script = `import { createAttentionPool } from ${JSON.stringify(path.join(root, 'web/attention-pool.js'))};
    const pool = await createAttentionPool({ workers: 2 });
    const r = await pool.attention({ q: [[1, 0]], k: [[1, 0], [0, 1]], v: [[1], [2]] });
    console.log(r.output.data.length);`;
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), '1');
  assert.ok(Date.now() - t0 < 20000);
});

test('in Chromium: Web Workers (module), no SharedArrayBuffer, the same bits as the page\'s own attention()', async () => {
  const server = await startServer({ root });
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
