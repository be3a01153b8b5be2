// The JS API: argument forms, every bad input with its error code, copies, memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAttention, AttentionError, toRows } from '../../web/core/attention.js';
import { golden, assertClose, seededMatrix, caseOptions, bitsHex, mhaGolden, mhaCaseArgs } from '../helpers.js';

const attn = await createAttention();
const S5 = golden().cases.find((c) => c.name === 'section5-hand');
const q = S5.q, k = S5.k, v = S5.v;
const flat = (rows) => ({ data: Float32Array.from(rows.flat()), shape: [rows.length, rows[0].length] });

function expectError(fn, code, pattern) {
  let err;
  try { fn(); } catch (e) { err = e; }
  assert.ok(err, `expected an AttentionError ${code}, nothing was thrown`);
  assert.ok(err instanceof AttentionError, `expected AttentionError, got ${err?.name}: ${err?.message}`);
  assert.ok(err instanceof Error);
  assert.equal(err.name, 'AttentionError');
  assert.equal(err.code, code, `code for "${err.message}"`);
  if (pattern) assert.match(err.message, pattern);
  return err;
}

test('createAttention loads once and shares the instance', async () => {
  assert.equal(await createAttention(), attn);
  assert.equal(await createAttention({}), attn);
});

test('createAttention accepts bytes, a Module and a Response', async () => {
  const fs = await import('node:fs');
  const bytes = fs.readFileSync(new URL('../../web/wasm/attention.wasm', import.meta.url));
  const fromBytes = await createAttention({ wasm: bytes });
  const fromModule = await createAttention({ wasm: await WebAssembly.compile(bytes) });
  const fromResponse = await createAttention({ wasm: new Response(bytes, { headers: { 'content-type': 'application/wasm' } }) });
  for (const a of [fromBytes, fromModule, fromResponse]) {
    assert.notEqual(a, attn);
    assert.deepEqual(Array.from(a.attention({ q, k, v }).weights.data), Array.from(attn.attention({ q, k, v }).weights.data));
  }
  await assert.rejects(createAttention({ wasm: 42 }), (e) => e.code === 'INVALID_ARGUMENT' && /options\.wasm/.test(e.message));
  await assert.rejects(createAttention('x'), (e) => e.code === 'INVALID_ARGUMENT');
});

test('number[][] and { data, shape } give identical results; results are copies', () => {
  const a = attn.attention({ q, k, v });
  const b = attn.attention({ q: flat(q), k: flat(k), v: { data: v.flat(), shape: [3, 3] } });
  assert.ok(a.weights.data instanceof Float32Array);
  assert.deepEqual(a.weights.shape, [3, 3]);
  assert.deepEqual(a.output.shape, [3, 3]);
  assert.deepEqual(Array.from(a.weights.data), Array.from(b.weights.data));
  assert.deepEqual(Array.from(a.output.data), Array.from(b.output.data));
  // not a view into wasm memory (which is >= 1 MiB): unaffected by later calls
  assert.ok(a.weights.data.buffer.byteLength <= 8192, `buffer of ${a.weights.data.buffer.byteLength} bytes`);
  const before = Array.from(a.weights.data);
  attn.attention({ q: k, k: q, v });
  assert.deepEqual(Array.from(a.weights.data), before);
  assert.deepEqual(toRows(a.weights)[1].map((x) => x.toFixed(4)), ['0.3157', '0.3686', '0.3157']);
});

test('small results share an 8 KiB ArrayBuffer across calls, without overlap; large ones have their own', () => {
  // 40 calls fill several 8 KiB slabs: every result keeps its own values
  const calls = [];
  for (let i = 0; i < 40; i++) {
    const inputs = { q: seededMatrix(3, 4, i), k: seededMatrix(5, 4, 100 + i), v: seededMatrix(5, 3, 200 + i) };
    calls.push({ inputs, r: attn.attention(inputs), s: attn.selfAttention({ x: seededMatrix(3, 8, i), wq: seededMatrix(8, 8, i + 1), wk: seededMatrix(8, 8, i + 2), wv: seededMatrix(8, 8, i + 3) }) });
  }
  const spans = new Map();
  for (const { inputs, r, s } of calls) {
    const again = attn.attention(inputs);
    assert.deepEqual(Array.from(r.weights.data), Array.from(again.weights.data));
    assert.deepEqual(Array.from(r.output.data), Array.from(again.output.data));
    for (const m of [r.weights, r.output, ...Object.values(s)]) {
      assert.equal(m.data.buffer.byteLength, 8192);
      assert.equal(m.data.length, m.shape[0] * m.shape[1]);
      if (!spans.has(m.data.buffer)) spans.set(m.data.buffer, []);
      spans.get(m.data.buffer).push([m.data.byteOffset, m.data.byteOffset + m.data.byteLength]);
    }
  }
  assert.ok(spans.size >= 2, `${spans.size} slabs`);
  for (const list of spans.values()) {
    list.sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < list.length; i++) assert.ok(list[i][0] >= list[i - 1][1], 'results overlap');
  }
  // the shared buffer transferred away (it detaches the results that share it, as with
  // Node's Buffer pool): later calls start a fresh one
  const a = attn.attention({ q, k, v }), b = attn.attention({ q, k, v });
  assert.equal(a.output.data.buffer, b.output.data.buffer);
  structuredClone(a.output.data.buffer, { transfer: [a.output.data.buffer] });
  assert.equal(b.output.data.length, 0);
  const c = attn.attention({ q, k, v });
  assert.equal(c.weights.data.buffer.byteLength, 8192);
  assert.deepEqual(toRows(c.weights)[1].map((x) => x.toFixed(4)), ['0.3157', '0.3686', '0.3157']);
  // over 256 floats: an ArrayBuffer of its own, exactly its size
  const big = attn.attention({ q: seededMatrix(20, 8, 1), k: seededMatrix(20, 8, 2), v: seededMatrix(20, 16, 3) }, { weights: false });
  assert.equal(big.output.data.byteOffset, 0);
  assert.equal(big.output.data.buffer.byteLength, 20 * 16 * 4);
  const both = attn.attention({ q: seededMatrix(20, 8, 1), k: seededMatrix(20, 8, 2), v: seededMatrix(20, 16, 3) });
  assert.equal(both.weights.data.buffer, both.output.data.buffer);
  assert.equal(both.output.data.buffer.byteLength, (20 * 16 + 20 * 20) * 4);
  assert.deepEqual(Array.from(both.output.data), Array.from(big.output.data));
});

test('a { data, shape } shape is read once per entry, shape[1] only after shape[0] passed; holes are refused', () => {
  const shape = ['x', 0];
  Object.defineProperty(shape, 1, { get() { throw new Error('shape[1] was read'); } });
  expectError(() => attn.attention({ q: { data: new Float32Array(4), shape }, k: [[1, 0]], v: [[1]] }), 'INVALID_ARGUMENT', /^q\.shape must be \[rows, cols\] of non-negative integers/);
  for (const holey of [[2, , ], new Array(2), [, 2]]) {   // eslint-disable-line no-sparse-arrays
    expectError(() => attn.attention({ q: { data: new Float32Array(4), shape: holey }, k: [[1, 0], [0, 1]], v: [[1, 0], [0, 1]] }), 'INVALID_ARGUMENT', /^q\.shape must be/);
  }
  let reads = 0;
  const counted = [2, 2];
  Object.defineProperty(counted, 0, { get() { reads++; return reads === 1 ? 2 : 1.5; } });
  const r = attn.attention({ q: { data: new Float32Array(4), shape: counted }, k: [[1, 0], [0, 1]], v: [[1, 0], [0, 1]] });
  assert.deepEqual(r.output.shape, [2, 2]);
  assert.equal(reads, 1);
});

test('weights: false omits the weights and gives the same output', () => {
  const a = attn.attention({ q, k, v });
  const b = attn.attention({ q, k, v }, { weights: false });
  assert.equal('weights' in b, false);
  assert.deepEqual(Array.from(a.output.data), Array.from(b.output.data));
});

test('mask polarity: true = may attend; boolean[][] and Uint8Array agree; causal is top-left', () => {
  const mask = [[true, false, true], [false, false, false], [true, true, true]];
  const a = attn.attention({ q, k, v }, { mask });
  const b = attn.attention({ q, k, v }, { mask: { data: Uint8Array.from(mask.flat(), Number), shape: [3, 3] } });
  assert.deepEqual(Array.from(a.weights.data), Array.from(b.weights.data));
  assert.equal(a.weights.data[1], 0);
  assert.deepEqual(Array.from(a.weights.data.subarray(3, 6)), [0, 0, 0], 'a fully masked row is zeros');
  assert.deepEqual(Array.from(a.output.data.subarray(3, 6)), [0, 0, 0]);
  const c = attn.attention({ q: [[1], [1], [1], [1]], k: [[1], [2]], v: [[10], [20]] }, { causal: true });
  assert.deepEqual(toRows(c.weights)[0], [1, 0], 'query 0 sees key 0 only (n > m, top-left)');
  assert.ok(c.weights.data[2] > 0 && c.weights.data[3] > 0);
});

test('scale: default 1/√d_k, custom, and 0 gives uniform weights', () => {
  const d = attn.attention({ q, k, v });
  const e = attn.attention({ q, k, v }, { scale: 0.5 });
  assert.deepEqual(Array.from(d.weights.data), Array.from(e.weights.data));
  const z = attn.attention({ q, k, v }, { scale: 0 });
  for (const w of z.weights.data) assert.ok(Math.abs(w - 1 / 3) < 1e-7);
});

test('selfAttention exposes every step and matches attention() on its own Q, K, V', () => {
  const c = golden().cases.find((x) => x.name === 'episode-snippet-seed-0');
  const s = attn.selfAttention({ x: c.x, wq: c.wq, wk: c.wk, wv: c.wv });
  for (const key of ['q', 'k', 'v', 'scores', 'scaled', 'weights', 'output']) {
    assert.ok(s[key].data instanceof Float32Array, key);
    assertClose(s[key], c.expected[key], key);
  }
  const r = attn.attention({ q: s.q, k: s.k, v: s.v });
  assert.deepEqual(Array.from(r.weights.data), Array.from(s.weights.data), 'bit-identical weights');
  const scale = Math.fround(1 / Math.sqrt(8));
  for (let i = 0; i < 9; i++) assert.equal(s.scaled.data[i], Math.fround(s.scores.data[i] * scale));
  // the scaled scores are before masking
  const m = attn.selfAttention({ x: c.x, wq: c.wq, wk: c.wk, wv: c.wv }, { causal: true });
  assert.deepEqual(Array.from(m.scaled.data), Array.from(s.scaled.data));
  assert.equal(m.weights.data[1], 0);
});

test('bad inputs: INVALID_ARGUMENT', () => {
  const I = 'INVALID_ARGUMENT';
  expectError(() => attn.attention(), I, /first argument/);
  expectError(() => attn.attention(null), I);
  expectError(() => attn.attention({ q, k }), I, /v is missing/);
  expectError(() => attn.attention({ q: 'abc', k, v }), I, /q must be a matrix.*string/);
  expectError(() => attn.attention({ q: [], k, v }), I, /q is empty/);
  expectError(() => attn.attention({ q: [[]], k, v }), I, /q is empty/);
  expectError(() => attn.attention({ q: [1, 2, 3], k, v }), I, /array of rows/);
  expectError(() => attn.attention({ q: [[1, 2, 3, 4], [1, 2]], k, v }), I, /ragged.*q\[1\] has 2/);
  expectError(() => attn.attention({ q: [[1, 2, 3, '4'], ...q.slice(1)], k, v }), I, /q\[0\]\[3\] must be a number; received the string "4"/);
  expectError(() => attn.attention({ q: { data: [1, 2], shape: [1] }, k, v }), I, /q\.shape/);
  expectError(() => attn.attention({ q: { data: [1, 2], shape: [1, 2.5] }, k, v }), I, /q\.shape/);
  expectError(() => attn.attention({ q: { data: [1, 2], shape: [-1, 2] }, k, v }), I, /q\.shape/);
  expectError(() => attn.attention({ q: { data: new Int32Array(4), shape: [1, 4] }, k, v }), I, /Int32Array/);
  expectError(() => attn.attention({ q: { data: [], shape: [0, 4] }, k, v }), I, /empty/);
  expectError(() => attn.attention({ q, k, v }, { scale: -1 }), I, /scale must be a finite number >= 0.*-1/);
  expectError(() => attn.attention({ q, k, v }, { scale: NaN }), I, /scale.*NaN/);
  expectError(() => attn.attention({ q, k, v }, { scale: Infinity }), I, /scale/);
  expectError(() => attn.attention({ q, k, v }, { scale: '0.5' }), I, /scale/);
  expectError(() => attn.attention({ q, k, v }, { causal: 'yes' }), I, /causal must be true or false/);
  expectError(() => attn.attention({ q, k, v }, { casual: true }), I, /unknown option "casual"/);
  expectError(() => attn.attention({ Q: q, q, k, v }), I, /attention: unknown input "Q"; expected q, k, v/);
  expectError(() => attn.selfAttention({ x: q, wq: k, wk: k, wv: k, wo: k }), I, /unknown input "wo"/);
  expectError(() => attn.attention({ q, k, v }, 5), I, /options must be a plain object/);
  expectError(() => attn.attention({ q, k, v }, { mask: 'all' }), I, /mask must be boolean/);
  expectError(() => attn.attention({ q, k, v }, { mask: [[1, 0, 1], [1, 1, 1], [1, 1, 1]] }), I, /mask\[0\]\[0\] must be true or false/);
  expectError(() => attn.attention({ q, k, v }, { mask: { data: [1, 1, 1, 1, 1, 1, 1, 1, 1], shape: [3, 3] } }), I, /Uint8Array/);
  expectError(() => attn.selfAttention({ x: q, wq: k, wk: k, wv: k }, { weights: false }), I, /unknown option "weights"/);
});

test('bad inputs: SHAPE_MISMATCH names the argument and both shapes', () => {
  const S = 'SHAPE_MISMATCH';
  expectError(() => attn.attention({ q, k: [[1, 2, 3], [1, 2, 3], [1, 2, 3]], v }), S, /k must have shape \(m, d_k\) = \(m, 4\).*q \(3, 4\).*received k \(3, 3\)/);
  expectError(() => attn.attention({ q, k, v: [[1], [2]] }), S, /v must have one row per key.*\(3, d_v\).*received v \(2, 1\)/);
  expectError(() => attn.attention({ q: { data: [1, 2, 3], shape: [2, 2] }, k, v }), S, /q\.data has 3 values but shape \(2, 2\) needs 4/);
  expectError(() => attn.attention({ q, k, v }, { mask: [[true, true, true]] }), S, /mask must have shape \(3, 3\)/);
  expectError(() => attn.attention({ q, k, v }, { mask: [[true], [true], [true]] }), S, /mask\[0\] has 1 columns/);
  expectError(() => attn.attention({ q, k, v }, { mask: { data: new Uint8Array(9), shape: [3, 2] } }), S, /received shape \[3, 2\]/);
  const x = [[1, 2], [3, 4], [5, 6]];
  expectError(() => attn.selfAttention({ x, wq: [[1, 2, 3]], wk: [[1]], wv: [[1]] }), S, /wq must have shape \(d_model, d_k\) with d_model = 2.*received wq \(1, 3\)/);
  expectError(() => attn.selfAttention({ x, wq: [[1], [2]], wk: [[1, 2], [3, 4]], wv: [[1], [2]] }), S, /wk must have shape \(2, 1\) like wq/);
  const err = expectError(() => attn.selfAttention({ x: [[1, 2, 3]], wq: [[1, 2, 3], [1, 2, 3]], wk: [[1, 2, 3], [1, 2, 3]], wv: [[1, 2, 3], [1, 2, 3]] }), S);
  assert.match(err.message, /nn\.Linear weight is \(out, in\): pass its transpose/);
});

test('bad inputs: NON_FINITE names the position, also for overflow', () => {
  const N = 'NON_FINITE';
  expectError(() => attn.attention({ q: [[1, 2, NaN, 4], ...q.slice(1)], k, v }), N, /q\[0\]\[2\] is NaN/);
  expectError(() => attn.attention({ q, k: [...k.slice(0, 2), [0, Infinity, 0, 0]], v }), N, /k\[2\]\[1\] is Infinity/);
  expectError(() => attn.attention({ q, k, v: { data: [1, 2, 3, 4, 5, 6, 7, 8, -Infinity], shape: [3, 3] } }), N, /v\[2\]\[2\] is -Infinity/);
  expectError(() => attn.attention({ q, k, v: { data: new Float64Array([1, 2, 3, 4, 5, 6, 7, 8, 1e39]), shape: [3, 3] } }), N, /v\[2\]\[2\] = 1e\+39 is outside the float32 range/);
  expectError(() => attn.attention({ q: [[3e38, 3e38]], k: [[3e38, 3e38]], v: [[1]] }), N, /overflows float32/);
  // the unscaled Q·Kᵀ overflows even when scale would bring it back (fuzzing found scale 0
  // giving a silent row of zeros): refused on every path alike
  expectError(() => attn.attention({ q: [[3e38, 3e38]], k: [[3e38, 3e38]], v: [[1]] }, { scale: 0 }), N, /overflows float32/);
  const q32 = [[2e38, 0, 2e38, 2e38]], k32 = Array.from({ length: 32 }, () => [1, 0, 1, -1]), v32 = Array.from({ length: 32 }, () => [1]);
  for (const weights of [true, false]) {
    expectError(() => attn.attention({ q: q32, k: k32, v: v32 }, { scale: 0.09375, weights }), N, /overflows float32/);
  }
  expectError(() => attn.selfAttention({ x: [[1e30, 1e30]], wq: [[1e30], [1e30]], wk: [[1], [1]], wv: [[1], [1]] }), N, /overflows float32/);
});

test('bad inputs: TOO_LARGE and OUT_OF_MEMORY', () => {
  const big = { data: new Float32Array(200000), shape: [200000, 1] };
  const err = expectError(() => attn.attention({ q: big, k: big, v: big }), 'TOO_LARGE', /149\.0 GiB.*weights: false/);
  assert.match(err.message, /200000, 200000/);
  expectError(() => attn.attention({ q: { data: [], shape: [2 ** 31, 1] }, k, v }), 'TOO_LARGE');
  // the same when memory is already partly used: the limit is the address space
});

// The wasm with its memory maximum lowered to `pages` (64 KiB each): what a browser that
// refuses to grow memory looks like. Rewrites the limits of the memory section only.
function withMaxPages(bytes, pages) {
  const leb = (n) => { const out = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return out; };
  const readLeb = (buf, at) => { let n = 0, shift = 0, b; do { b = buf[at++]; n |= (b & 0x7f) << shift; shift += 7; } while (b & 0x80); return [n >>> 0, at]; };
  const out = Array.from(bytes.subarray(0, 8));
  let at = 8, patched = false;
  while (at < bytes.length) {
    const id = bytes[at];
    const [size, start] = readLeb(bytes, at + 1);
    let body = Array.from(bytes.subarray(start, start + size));
    if (id === 5) {
      let [count, p] = readLeb(body, 0);
      assert.equal(count, 1);
      const flags = body[p++];
      assert.equal(flags & 1, 1, 'memory has a maximum');
      const [initial] = readLeb(body, p);   // then the maximum, which `pages` replaces
      body = [1, flags, ...leb(initial), ...leb(pages)];
      patched = true;
    }
    out.push(id, ...leb(body.length), ...body);
    at = start + size;
  }
  assert.ok(patched, 'found the memory section');
  return Uint8Array.from(out);
}

test('OUT_OF_MEMORY when the engine cannot grow memory, and the instance keeps working', async () => {
  const fs = await import('node:fs');
  const bytes = fs.readFileSync(new URL('../../web/wasm/attention.wasm', import.meta.url));
  const small = await createAttention({ wasm: withMaxPages(bytes, 64) });   // at most 4 MiB
  const n = 1200;
  const m = { data: new Float32Array(n), shape: [n, 1] };
  expectError(() => small.attention({ q: m, k: m, v: m }), 'OUT_OF_MEMORY', /5\.5 MiB.*allocation failed/);
  const r = small.attention({ q: m, k: m, v: m }, { weights: false });   // no n×m: fits
  assert.equal(r.output.data.length, n);
  assert.deepEqual(toRows(small.attention({ q, k, v }).weights)[1].map((x) => x.toFixed(4)), ['0.3157', '0.3686', '0.3157']);
});

test('the instance keeps working after every kind of error', () => {
  const good = Array.from(attn.attention({ q, k, v }).weights.data);
  for (const bad of [() => attn.attention({ q: [[NaN]], k, v }), () => attn.attention({ q, k: [[1]], v }),
    () => attn.attention({ q: [[3e38, 3e38]], k: [[3e38, 3e38]], v: [[1]] })]) {
    assert.throws(bad, AttentionError);
    assert.deepEqual(Array.from(attn.attention({ q, k, v }).weights.data), good);
  }
});

test('20,000 calls, good and bad, do not grow WebAssembly memory', () => {
  for (let i = 0; i < 200; i++) attn.attention({ q, k, v });  // warm up the allocator
  const before = attn.memoryBytes;
  const x = golden().cases.find((c) => c.name === 'episode-snippet-seed-0');
  for (let i = 0; i < 20000; i++) {
    switch (i % 5) {
      case 0: attn.attention({ q, k, v }); break;
      case 1: attn.selfAttention({ x: x.x, wq: x.wq, wk: x.wk, wv: x.wv }, { causal: true }); break;
      case 2: assert.throws(() => attn.attention({ q: [[1, 2, 3, NaN], ...q.slice(1)], k, v }), AttentionError); break;
      case 3: assert.throws(() => attn.attention({ q: [[3e38, 3e38]], k: [[3e38, 3e38]], v: [[1]] }), AttentionError); break;
      case 4: assert.throws(() => attn.attention({ q, k, v }, { mask: [[true, 1, true], [true, true, true], [true, true, true]] }), AttentionError); break;
    }
  }
  assert.equal(attn.memoryBytes, before);
});

test('views are refreshed when memory grows', () => {
  const n = 2048, d = 64;
  const m = { data: new Float32Array(n * d).map((_, i) => Math.sin(i)), shape: [n, d] };
  const r = attn.attention({ q: m, k: m, v: m });   // 16 MiB of weights: grows memory
  assert.equal(r.weights.data.length, n * n);
  for (let i = 0; i < n; i += 511) {
    let s = 0;
    for (let j = 0; j < n; j++) s += r.weights.data[i * n + j];
    assert.ok(Math.abs(s - 1) < 1e-4, `row ${i} sums to ${s}`);
  }
  assert.deepEqual(toRows(attn.attention({ q, k, v }).weights)[1].map((x) => x.toFixed(4)), ['0.3157', '0.3686', '0.3157']);
});

test('rows: [begin, end) of the queries, bit for bit those rows of the whole output; bad ranges refused', () => {
  const x = { q: seededMatrix(70, 12, 7), k: seededMatrix(45, 12, 8), v: seededMatrix(45, 5, 9) };
  for (const causal of [false, true]) {
    const full = attn.attention(x, { causal, weights: false }).output.data;
    for (const [b, e] of [[0, 70], [0, 1], [69, 70], [8, 16], [13, 58]]) {
      const part = attn.attention(x, { causal, weights: false, rows: [b, e] }).output;
      assert.deepEqual(part.shape, [e - b, 5]);
      assert.deepEqual(Array.from(part.data), Array.from(full.subarray(b * 5, e * 5)), `rows [${b}, ${e}) causal ${causal}`);
    }
  }
  for (const rows of [[0, 0], [5, 3], [0, 71], [-1, 3], [1.5, 3], [0], '0,3', [0, 3, 5], [0n, 3]]) {
    expectError(() => attn.attention(x, { weights: false, rows }), 'INVALID_ARGUMENT', /rows must be \[begin, end\]/);
  }
  expectError(() => attn.attention(x, { rows: [0, 3] }), 'INVALID_ARGUMENT', /rows needs \{ weights: false \}/);
});

test('the first bad value in argument order is named, also when a Float32Array (copied without a JS pass) comes first', () => {
  const f = (rows) => ({ data: Float32Array.from(rows.flat()), shape: [rows.length, rows[0].length] });
  expectError(() => attn.attention({ q: f([[1, NaN]]), k: [[1, 'x']], v: [[1]] }), 'NON_FINITE', /^q\[0\]\[1\] is NaN/);
  expectError(() => attn.attention({ q: f([[1, NaN]]), k: [[1, 2]], v: [[1]] }, { mask: [[1]] }), 'NON_FINITE', /^q\[0\]\[1\] is NaN/);
  expectError(() => attn.attention({ q: [[1, 2]], k: f([[Infinity, 1]]), v: [[NaN]] }), 'NON_FINITE', /^k\[0\]\[0\] is Infinity/);
  expectError(() => attn.selfAttention({ x: [[1, 2]], wq: f([[1], [2]]), wk: f([[1], [NaN]]), wv: [['a'], [1]] }), 'NON_FINITE', /^wk\[1\]\[0\] is NaN/);
  expectError(() => attn.multiHeadAttention({ x: f([[NaN, 1]]), wq: [[1, 0], [0, 1]], wk: [[1, 0], [0, 1]], wv: [[1, 0], [0, 1]], wo: [[1, 0], [0, 1]], bq: [NaN, 0] }, { heads: 1 }),
    'NON_FINITE', /^x\[0\]\[0\] is NaN/);
});

// ----------------------------------------------------------------------------
// the one-file embed's build (web/wasm/attention-embed.wasm: -Oz, no tiled kernel)

test('the embed build gives the default build\'s bits with weights: every golden case and n = m = 100', async () => {
  const fs = await import('node:fs');
  const read = (f) => fs.readFileSync(new URL(`../../web/wasm/${f}`, import.meta.url));
  const base = await createAttention({ wasm: read('attention.wasm') }), embed = await createAttention({ wasm: read('attention-embed.wasm') });
  const same = (op, args, label) => {
    const a = base[op](...args), b = embed[op](...args);
    assert.deepEqual(Object.keys(b), Object.keys(a), label);
    for (const key of Object.keys(a)) {
      const x = Array.isArray(a[key]) ? a[key] : [a[key]], y = Array.isArray(b[key]) ? b[key] : [b[key]];
      assert.equal(y.length, x.length, `${label} ${key}`);
      for (let i = 0; i < x.length; i++) {
        assert.deepEqual(y[i].shape, x[i].shape, `${label} ${key}[${i}]`);
        assert.equal(bitsHex(y[i].data), bitsHex(x[i].data), `${label} ${key}[${i}]: other bits`);
      }
    }
  };
  // the tutorial sizes: every golden case of tests/golden/attention.json and mha.json
  for (const c of golden().cases) {
    if (c.kind === 'sdpa') same('attention', [{ q: c.q, k: c.k, v: c.v }, caseOptions(c)], c.name);
    else same('selfAttention', [{ x: c.x, wq: c.wq, wk: c.wk, wv: c.wv }, caseOptions(c)], c.name);
  }
  for (const c of mhaGolden().cases) same('multiHeadAttention', mhaCaseArgs(c), `mha ${c.name}`);
  // n = m = 100 (past the tiled kernel's 32 keys: the default build computes weights by the row path too)
  const n = 100, mask = { data: Uint8Array.from({ length: n * n }, (_, i) => (i * 7919) % 5 !== 0), shape: [n, n] };
  const q = seededMatrix(n, 16, 1), k = seededMatrix(n, 16, 2), v = seededMatrix(n, 8, 3), x = seededMatrix(n, 32, 4);
  const w = (rows, cols, seed) => { const r = seededMatrix(rows, cols, seed); r.data.forEach((e, i) => { r.data[i] = e * 0.3; }); return r; };
  for (const options of [{}, { causal: true }, { mask }, { mask, causal: true, scale: 0.5 }]) {
    const label = `n = m = 100 ${JSON.stringify(Object.keys(options))}`;
    same('attention', [{ q, k, v }, options], `attention ${label}`);
    same('selfAttention', [{ x, wq: w(32, 16, 5), wk: w(32, 16, 6), wv: w(32, 8, 7) }, options], `selfAttention ${label}`);
    same('multiHeadAttention', [{ x, wq: w(32, 32, 8), wk: w(32, 32, 9), wv: w(32, 32, 10), wo: w(32, 32, 11), bq: Array(32).fill(0.01) },
      { heads: 4, ...options }], `multiHeadAttention ${label}`);
    same('multiHeadAttention', [{ x, kv: seededMatrix(n, 32, 12), wq: w(32, 32, 8), wk: w(32, 16, 9), wv: w(32, 16, 10), wo: w(32, 32, 11) },
      { heads: 4, kvHeads: 2, ...options }], `multiHeadAttention, grouped-query cross-attention ${label}`);
  }
});
