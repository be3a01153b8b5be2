// helpers.js - shared by the Node tests (not a test file itself).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import http from 'node:http';
import { AttentionError } from '../web/core/errors.js';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// The one tolerance of the project, for every comparison with a reference:
//   |actual - expected| <= ATOL + RTOL * |expected|
// with the numbers torch.testing.assert_close uses for float32 (tests/native/c/test_core.c too).
export const ATOL = 1e-5;
export const RTOL = 1.3e-6;

export const golden = () => JSON.parse(fs.readFileSync(path.join(root, 'tests/golden/attention.json'), 'utf8'));

/** Compare a flat array to nested or flat expected values; fails naming the largest difference and the first bad index. */
export function assertClose(actual, expected, label, { atol = ATOL, rtol = RTOL } = {}) {
  const e = Array.isArray(expected) && Array.isArray(expected[0]) ? expected.flat() : Array.from(expected);
  const a = Array.from(actual.data ?? actual);
  assert.equal(a.length, e.length, `${label}: ${a.length} values, expected ${e.length}`);
  let worst = 0, worstAt = -1, first = -1;
  for (let i = 0; i < e.length; i++) {
    const d = Math.abs(a[i] - e[i]);
    if (!(d <= worst)) { worst = d; worstAt = i; }
    if (first < 0 && !(d <= atol + rtol * Math.abs(e[i]))) first = i;
  }
  if (first >= 0) {
    assert.fail(`${label}: first failure at index ${first}: got ${a[first]}, expected ${e[first]}; ` +
      `largest difference ${worst} at index ${worstAt} (tolerance ${atol} + ${rtol}·|e|)`);
  }
  return worst;
}

/** The golden case's options for the JS API. */
export function caseOptions(c) {
  const o = { causal: c.causal };
  if (c.scale !== null && c.scale !== undefined) o.scale = c.scale;
  if (c.mask) o.mask = c.mask;
  return o;
}

/** Bits of a Float32Array as hex, for exact comparisons across runtimes. */
export const bitsHex = (f32) => Buffer.from(f32.buffer, f32.byteOffset, f32.byteLength).toString('hex');

/** tests/golden/mha.json: multi-head attention from nn.MultiheadAttention (tests/golden/make_mha.py). */
export const mhaGolden = () => JSON.parse(fs.readFileSync(path.join(root, 'tests/golden/mha.json'), 'utf8'));

/** A golden mha case as multiHeadAttention's two arguments (extra: more options). */
export function mhaCaseArgs(c, extra = {}) {
  const inputs = { x: c.x, wq: c.wq, wk: c.wk, wv: c.wv, wo: c.wo };
  for (const key of ['kv', 'bq', 'bk', 'bv', 'bo']) if (c[key] !== null) inputs[key] = c[key];
  const options = { heads: c.heads, causal: c.causal, ...extra };
  if (c.kv_heads !== c.heads) options.kvHeads = c.kv_heads;
  if (c.mask) options.mask = c.mask;
  return [inputs, options];
}

// ----------------------------------------------------------------------------
// a float64 reference (tests/differential.test.js, tests/relaxed.test.js), on the float32
// values the core receives; allowed(i, j) says whether query i may attend to key j

/** softmax(q kᵀ · scale) per row over allowed keys (all 0 when none is), then · v. */
export function referenceAttention(q, k, v, n, m, dk, dv, scale, allowed) {
  const weights = new Float64Array(n * m), output = new Float64Array(n * dv);
  const s = new Float64Array(m);
  for (let i = 0; i < n; i++) {
    let max = -Infinity;
    for (let j = 0; j < m; j++) {
      if (!allowed(i, j)) { s[j] = -Infinity; continue; }
      let dot = 0;
      for (let c = 0; c < dk; c++) dot += q[i * dk + c] * k[j * dk + c];
      s[j] = dot * scale;
      if (s[j] > max) max = s[j];
    }
    if (max === -Infinity) continue;  // fully masked: weights 0, output 0
    let sum = 0;
    for (let j = 0; j < m; j++) { const e = s[j] === -Infinity ? 0 : Math.exp(s[j] - max); weights[i * m + j] = e; sum += e; }
    for (let j = 0; j < m; j++) {
      const w = (weights[i * m + j] /= sum);
      if (w !== 0) for (let c = 0; c < dv; c++) output[i * dv + c] += w * v[j * dv + c];
    }
  }
  return { weights, output };
}

/** A function giving numbers in [0, 1) from a small LCG: the same sequence for the same seed. */
export function seeded(seed) {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32; };
}

/** A (rows, cols) matrix of values in [-1, 1), from a small LCG: the same numbers for the same seed. */
export function seededMatrix(rows, cols, seed) {
  let s = seed >>> 0;
  const data = new Float32Array(rows * cols);
  for (let i = 0; i < data.length; i++) { s = (s * 1664525 + 1013904223) >>> 0; data[i] = s / 2 ** 31 - 1; }
  return { data, shape: [rows, cols] };
}

/** fn() throws an AttentionError with this code (and a message matching pattern); returns it. */
export function expectError(fn, code, pattern) {
  let err;
  try { fn(); } catch (e) { err = e; }
  assert.ok(err, `expected an AttentionError ${code}, nothing was thrown`);
  assert.ok(err instanceof AttentionError, `expected AttentionError, got ${err?.name}: ${err?.message}`);
  assert.equal(err.code, code, `code for "${err.message}"`);
  if (pattern) assert.match(err.message, pattern);
  return err;
}

// serve(handler) -> { url, requests, close }; handler(req, res, name) for /m/NAME
export async function serve(handler) {
  const requests = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url);
    handler(req, res, req.url.replace(/^\/m\//, ''));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/m/`, requests,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  };
}
