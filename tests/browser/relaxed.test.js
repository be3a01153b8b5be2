// The relaxed-SIMD build (fused multiply-add in the tiled kernel): picked by default where the
// engine has relaxed SIMD, never where it lacks it or with { relaxed: false }; as accurate as the default build against float64;
// the same bits as the default build on every path that is not the tiled kernel.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createAttention, hasRelaxedSimd } from '../../web/core/attention.js';
import { root } from '../helpers.js';
import { startServer } from '../../scripts/serve.js';
import { launch } from './browser.js';

const cpuHasFma = (() => { try { return /\bfma\b/.test(fs.readFileSync('/proc/cpuinfo', 'utf8')); } catch { return false; } })();

test('without engine support the default build runs, asked for relaxed or not; bad values are refused', async () => {
  const d = await createAttention({ relaxed: false }), auto = await createAttention(), r = await createAttention({ relaxed: true });
  assert.equal(d.relaxed, false);
  assert.equal(auto.relaxed, hasRelaxedSimd());
  assert.equal(r, auto, 'relaxed: true is the default');
  if (!hasRelaxedSimd()) assert.equal(r, d, 'the shared default instance');
  // options.wasm is one given build: with relaxed left out there is no conflict
  const given = await createAttention({ wasm: fs.readFileSync(path.join(root, 'web/wasm/attention.wasm')) });
  assert.equal(given.relaxed, false);
  for (const relaxed of ['yes', 1, null]) {
    await assert.rejects(createAttention({ relaxed }), { name: 'AttentionError', code: 'INVALID_ARGUMENT', message: /relaxed must be true or false/ });
  }
  await assert.rejects(createAttention({ relaxed: true, wasm: new Uint8Array(8) }), { code: 'INVALID_ARGUMENT', message: /either wasm or relaxed/ });
  // the relaxed module must not validate where relaxed SIMD is missing (it is only picked after the probe)
  if (!hasRelaxedSimd()) assert.equal(WebAssembly.validate(fs.readFileSync(path.join(root, 'web/wasm/attention-relaxed.wasm'))), false);
});

// run in a child with relaxed SIMD switched on (Node 20: a V8 flag; Node 22+ has it anyway)
const CHILD = `
import { createAttention, hasRelaxedSimd } from ${JSON.stringify(path.join(root, 'web/core/attention.js'))};
import { createAttentionPool } from ${JSON.stringify(path.join(root, 'web/pool/attention-pool-node.js'))};
import { referenceAttention, seededMatrix } from ${JSON.stringify(path.join(root, 'tests/helpers.js'))};
const d = await createAttention({ relaxed: false }), r = await createAttention(), asked = await createAttention({ relaxed: true });
if (asked !== r) throw new Error('createAttention() and { relaxed: true } are not the same shared instance');
let seed = 12345;
const mk = (n, c) => seededMatrix(n, c, seed++);
function reference(x, o) {   // float64, on the same float32 values
  const [n, dk] = x.q.shape, [m] = x.k.shape, dv = x.v.shape[1];
  const allowed = (i, j) => !(o.causal && j > i) && !(o.mask && !o.mask.data[i * m + j]);
  return referenceAttention(x.q.data, x.k.data, x.v.data, n, m, dk, dv, 1 / Math.sqrt(dk), allowed).output;
}
const cases = [];
for (const [n, m, dk, dv, causal, masked] of [[300, 300, 64, 64, false, false], [257, 199, 33, 17, true, false], [64, 500, 128, 8, false, true], [1, 40, 3, 5, false, false]]) {
  const x = { q: mk(n, dk), k: mk(m, dk), v: mk(m, dv) }, o = { causal, weights: false };
  if (masked) o.mask = { data: Uint8Array.from({ length: n * m }, (_, i) => (i * 31) % 7 !== 0), shape: [n, m] };
  const a = d.attention(x, o).output.data, b = r.attention(x, o).output.data, ref = reference(x, o);
  let errD = 0, errR = 0, differ = 0, bad = 0;
  for (let i = 0; i < a.length; i++) {
    errD = Math.max(errD, Math.abs(a[i] - ref[i])); errR = Math.max(errR, Math.abs(b[i] - ref[i]));
    if (a[i] !== b[i]) differ++;
    if (!(Math.abs(b[i] - ref[i]) <= 1e-5 + 1.3e-6 * Math.abs(ref[i]))) bad++;
  }
  cases.push({ n, m, errD, errR, differ, bad });
}
// every other path: bit for bit the default build
const small = { q: mk(3, 8), k: mk(3, 8), v: mk(3, 8) }, mid = { q: mk(40, 16), k: mk(40, 16), v: mk(40, 16) };
const same = (p, q) => p.length === q.length && p.every((v, i) => Object.is(v, q[i]));
const sameOther = same(d.attention(small).weights.data, r.attention(small).weights.data) &&
  same(d.attention(mid).output.data, r.attention(mid).output.data) &&
  (() => { const w = { x: small.q, wq: mk(8, 8), wk: mk(8, 8), wv: mk(8, 8) }; return same(d.selfAttention(w).output.data, r.selfAttention(w).output.data); })();
const pool = await createAttentionPool({ workers: 2, inlineBelow: 0 }), exactPool = await createAttentionPool({ workers: 2, relaxed: false, inlineBelow: 0 });
const x = { q: mk(333, 64), k: mk(321, 64), v: mk(321, 64) };
const poolSame = same((await pool.attention(x, { causal: true })).output.data, r.attention(x, { causal: true, weights: false }).output.data);
const exactPoolSame = same((await exactPool.attention(x, { causal: true })).output.data, d.attention(x, { causal: true, weights: false }).output.data);
await pool.close(); await exactPool.close();
console.log(JSON.stringify({ has: hasRelaxedSimd(), relaxed: r.relaxed, exact: d.relaxed, poolRelaxed: pool.relaxed, exactPoolRelaxed: exactPool.relaxed, cases, sameOther, poolSame, exactPoolSame }));
`;

test('with relaxed SIMD (a child, with --experimental-wasm-relaxed-simd where the engine needs it): as accurate as the default build, the same bits off the tiled path', () => {
  // Node 20 has relaxed SIMD behind the flag; Node 22 and later have it on and refuse the flag ("bad option")
  const flags = hasRelaxedSimd() ? [] : ['--experimental-wasm-relaxed-simd'];
  const run = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', CHILD], { encoding: 'utf8', timeout: 120000 });
  assert.equal(run.status, 0, run.stderr);
  const r = JSON.parse(run.stdout.trim().split('\n').at(-1));
  assert.equal(r.has, true);
  assert.equal(r.relaxed, true, 'createAttention() picks the relaxed build where the engine has it');
  assert.equal(r.exact, false, '{ relaxed: false } keeps the default build');
  assert.equal(r.poolRelaxed, true);
  assert.equal(r.exactPoolRelaxed, false);
  for (const c of r.cases) {
    assert.equal(c.bad, 0, `n = ${c.n}, m = ${c.m}: ${c.bad} values outside the tolerance`);
    assert.ok(c.errR <= 2 * c.errD + 1e-7, `n = ${c.n}: relaxed error ${c.errR} vs default ${c.errD}`);
  }
  // on a CPU with FMA the fused build really rounds differently (so it is the one running)
  if (cpuHasFma) assert.ok(r.cases[0].differ > 0, 'the relaxed build gave the default bits at n = 300: is FMA used?');
  assert.equal(r.sameOther, true);
  assert.equal(r.poolSame, true);
  assert.equal(r.exactPoolSame, true);
});

test('in Chromium (relaxed SIMD on by default): createAttention() runs the fused build within tolerance', async () => {
  const missing = path.join(root, 'tests/fixtures/relaxed-missing');
  // web/core/ and, of web/wasm/, the default build only
  fs.cpSync(path.join(root, 'web/core'), path.join(missing, 'core'), { recursive: true });
  fs.mkdirSync(path.join(missing, 'wasm'), { recursive: true });
  fs.copyFileSync(path.join(root, 'web/wasm/attention-wasm.js'), path.join(missing, 'wasm/attention-wasm.js'));
  after(() => { for (const d of ['core', 'wasm']) fs.rmSync(path.join(missing, d), { recursive: true, force: true }); });
  const server = await startServer({ root, allow: ['tests/fixtures/core/', 'tests/fixtures/relaxed-missing/'] });
  const browser = await launch();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}tests/fixtures/core/index.html`);
    await page.waitForFunction(() => window.attnReady);
    const r = await page.evaluate(async () => {
      const { createAttention, hasRelaxedSimd } = await import('/web/core/attention.js');
      const d = await createAttention({ relaxed: false }), x = await createAttention();
      let s = 99;
      const mk = (n, c) => ({ data: Float32Array.from({ length: n * c }, () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 31 - 1; }), shape: [n, c] });
      const inputs = { q: mk(200, 64), k: mk(200, 64), v: mk(200, 64) };
      const a = d.attention(inputs, { weights: false }).output.data, b = x.attention(inputs, { weights: false }).output.data;
      let max = 0, differ = 0;
      for (let i = 0; i < a.length; i++) { max = Math.max(max, Math.abs(a[i] - b[i])); if (a[i] !== b[i]) differ++; }
      return { has: hasRelaxedSimd(), relaxed: x.relaxed, max, differ };
    });
    assert.equal(r.has, true);
    assert.equal(r.relaxed, true);
    assert.ok(r.max < 1e-6, `max difference ${r.max}`);
    // a host that copied only the embed's files: createAttention() falls back to the default build,
    // asks for the missing file once, and later calls get the same instance
    const asked = [];
    page.on('request', (q) => { if (q.url().endsWith('/relaxed-missing/wasm/attention-relaxed-wasm.js')) asked.push(q.url()); });
    const fallback = await page.evaluate(async () => {
      const { createAttention } = await import('/tests/fixtures/relaxed-missing/core/attention.js');
      const a = await createAttention(), b = await createAttention(), c = await createAttention({ relaxed: false });
      return { relaxed: a.relaxed, same: a === b && b === c, w: Array.from(a.attention({ q: [[1, 0]], k: [[1, 0], [0, 1]], v: [[1], [2]] }).output.data) };
    });
    assert.equal(fallback.relaxed, false);
    assert.equal(fallback.same, true, 'the fallback is the shared default instance, reused');
    assert.equal(asked.length, 1, `requests for the missing relaxed build: ${asked.length}`);
    assert.equal(fallback.w.length, 1);
    if (cpuHasFma) assert.ok(r.differ > 0);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
