// make-seeds.js - writes the seed corpus in tests/fuzz/corpus/<target>/ (committed).
// Each seed is a whole input in the byte layout its target reads (see the target's header
// comment and fuzz.h), with plain values (one byte each: (b - 108) / 32) so that the first
// runs reach the successful paths; the fuzzer mutates from there.
//   node tests/fuzz/make-seeds.js
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'corpus');

let state = 12345;
const rand = () => { state = (state * 1103515245 + 12345) >>> 0; return state / 2 ** 32; };
// a matrix: mode byte (low bits 0 = plain values; high 5 bits pick the amplitude, 0 = 1),
// then one byte per value in [-2, 2]
const matrix = (count, mode = 0) => [mode, ...Array.from({ length: count }, () => 108 + Math.round((rand() * 4 - 2) * 32))];
const special = (count) => [0x05, ...Array.from({ length: count }, (_, i) => (i % 7 === 3 ? 216 + (i % 28) : 100 + (i % 20)))];
// a mask: mode byte (0 random bits, 2 random rows fully masked), then per row [dead byte], one byte per 8 keys
const mask = (n, m, mode = 0) => {
  const out = [mode];
  for (let i = 0; i < n; i++) {
    if (mode === 2) out.push(i % 3 === 1 ? 0 : 1);
    for (let j = 0; j < m; j += 8) out.push(Math.floor(rand() * 256));
  }
  return out;
};

// forward: n-1 m-1 d_k-1 d_v-1 | opt: bit0 weights, bits1-2 workspace (3 = NULL), bit3 mask,
// bits4-5 scale mode, bits6-7 = 3 break | flags | workspace offset / 4 | [break] [scale] q k v [mask]
function forward({ n, m, dk, dv, weights = true, workspace = true, hasMask = false, maskMode = 0, scale = null, causal = false, offset = 0, values = matrix, tail = [] }) {
  const opt = (weights ? 1 : 0) | (workspace ? 0 : 6) | (hasMask ? 8 : 0) | (scale === null ? 0 : 16);
  return [n - 1, m - 1, dk - 1, dv - 1, opt, causal ? 1 : 0, offset, ...(scale === null ? [] : [scale]),
    ...values(n * dk), ...values(m * dk), ...values(m * dv), ...(hasMask ? mask(n, m, maskMode) : []), ...tail];
}

// rows: n-1 m-1 d_k-1 d_v-1 | opt: bit0 weights, bit1 mask, bits2-3 scale mode | flags | range kind + 2 bytes | q k v [mask] | split lengths
function rows({ n, m, dk, dv, weights = true, hasMask = false, causal = false, range = [5, 0, 0] }) {
  return [n - 1, m - 1, dk - 1, dv - 1, (weights ? 1 : 0) | (hasMask ? 2 : 0), causal ? 1 : 0, ...range,
    ...matrix(n * dk), ...matrix(m * dk), ...matrix(m * dv), ...(hasMask ? mask(n, m) : []),
    ...Array.from({ length: n }, (_, i) => (i * 7) % 20)];
}

// self: n-1 d_model-1 d_k-1 d_v-1 | opt: bit0 mask, bits1-2 scale mode, bits3-7 = 31 break | [scale] flags | [break] x wq wk wv [mask]
function self({ n, dm, dk, dv, hasMask = false, causal = false, scale = null, brk = null }) {
  const opt = (hasMask ? 1 : 0) | (scale === null ? 0 : 2) | (brk === null ? 0 : 0xf8);
  return [n - 1, dm - 1, dk - 1, dv - 1, opt, ...(scale === null ? [] : [scale]), causal ? 1 : 0, ...(brk ?? []),
    ...matrix(n * dm), ...matrix(dm * dk), ...matrix(dm * dk), ...matrix(dm * dv), ...(hasMask ? mask(n, n) : [])];
}

// matmul: n-1 c-1 p-1 | opt (low 4 bits = 15: break) | [break] a b
const matmul = ({ n, c, p, brk = null, mode = 0 }) =>
  [n - 1, c - 1, p - 1, brk === null ? 0 : 15, ...(brk ?? []), ...matrix(n * c, mode), ...matrix(c * p, mode)];

// mha: n-1 | kv byte (bit0 given, m-1 above) | heads-1 | kv_heads divisor index | d_head-1 |
// opt: bit0 weights, bit1 concat, bit2 mask, bits3-6 biases, bit7 may break | [break? (0 = yes)] |
// scale mode | flags | offset | [what to break, bad value] | x [kv] wq wk wv wo [bq bk bv bo] [mask]
function mha({ n, m = null, heads, kvIndex = 0, dh, weights = true, concat = true, hasMask = false, biases = 0, causal = false, brk = null }) {
  const divisors = []; for (let g = 1; g <= heads; g++) if (heads % g === 0) divisors.push(g);
  const g = divisors[kvIndex], dm = heads * dh, dkv = g * dh, mm = m ?? n;
  const opt = (weights ? 1 : 0) | (concat ? 2 : 0) | (hasMask ? 4 : 0) | (biases << 3) | (brk === null ? 0 : 128);
  const blen = [dm, dkv, dkv, dm];
  return [n - 1, m === null ? 0 : 1 | ((m - 1) << 1), heads - 1, kvIndex, dh - 1, opt, ...(brk === null ? [] : [0]),
    0, causal ? 1 : 0, 0, ...(brk ?? []), ...matrix(n * dm), ...(m === null ? [] : matrix(m * dm)),
    ...matrix(dm * dm), ...matrix(dm * dkv), ...matrix(dm * dkv), ...matrix(dm * dm),
    ...blen.flatMap((len, i) => ((biases >> i) & 1 ? matrix(len) : [])), ...(hasMask ? mask(n, mm) : [])];
}

// stats (part byte 0): n-1 m-1 d_k-1 d_v-1 | opt: bit0 weights, bit1 mask, bits5-7 a NULL member |
// flags | range kind 5 (valid), begin, length - 1 | qpos kind, kpos kind (0: i + (kind >> 2) - 8, 1: the
// same × 1.5, 2: a matrix follows) | points mode (0 any, 1 heads.c's, 2 none, + 0x1c one broken), S,
// a byte per point [at lo, at hi, bad value] | q k v [mask]
function stats({ n, m, dk, dv, weights = true, hasMask = false, causal = false, nullMember = 0, range = [0, n - 1],
  qpos = [32], kpos = [32], points = 1, broken = null }) {
  const opt = (weights ? 1 : 0) | (hasMask ? 2 : 0) | (nullMember << 5);
  return [0, n - 1, m - 1, dk - 1, dv - 1, opt, causal ? 1 : 0, 5, ...range, ...qpos, ...kpos,
    points | (broken === null ? 0 : 0x1c), 3, ...Array.from({ length: n * 6 }, () => Math.floor(rand() * 256)), ...(broken ?? []),
    ...matrix(n * dk), ...matrix(m * dk), ...matrix(m * dv), ...(hasMask ? mask(n, m, 2) : [])];
}

// the heads' sizes (part byte 5): T m H d, each a byte < 192 picking an edge (15: INT_MAX, 0: INT_MIN,
// 5: 0, 6: 1) or >= 192 and 4 raw bytes
const sizes = (...picks) => [5, ...picks.flat()];

// attn_heads_map (part byte 6): L-1 H-1 G index d-1 T-1 | opt: bit0 decoder, bit1 key mask, bits2-6
// 16 + what to break | m - T, S - m, l, i, bad value | queries [cache | keys] [key mask mode, bits] | v
function map({ L, H, gIndex = 0, d, T, decoder = false, keyMask = false, extra = 0, sExtra = 0, l = 0, i = 0, brk = null, bad = 0 }) {
  const divisors = []; for (let g = 1; g <= H; g++) if (H % g === 0) divisors.push(g);
  const G = divisors[gIndex], m = T + (decoder ? 0 : extra), S = m + sExtra;
  const opt = (decoder ? 1 : 0) | (keyMask ? 2 : 0) | (brk === null ? 0 : (16 + brk) << 2);
  return [6, L - 1, H - 1, gIndex, d - 1, T - 1, opt, extra, sExtra, l, i, bad, ...matrix(L * H * T * d),
    ...matrix((decoder ? 2 * S : m) * L * G * d), ...(keyMask ? [2, ...Array.from({ length: m }, (_, j) => (j % 3 ? 1 : 0))] : []),
    ...matrix(m * d).slice(1)];
}

const seeds = {
  forward: {
    'section5-3x3': forward({ n: 3, m: 3, dk: 4, dv: 3 }),
    'tiled-causal-mask-m100': forward({ n: 15, m: 100, dk: 16, dv: 12, weights: false, hasMask: true, maskMode: 2, causal: true, offset: 1 }),
    'rows-mask-dead-rows': forward({ n: 9, m: 20, dk: 5, dv: 9, hasMask: true, maskMode: 2 }),
    'scale-zero-m40': forward({ n: 5, m: 40, dk: 8, dv: 10, weights: false, scale: 0, causal: true }),
    'special-values': forward({ n: 4, m: 6, dk: 3, dv: 2, values: special }),
    'null-weights-and-workspace': forward({ n: 3, m: 3, dk: 3, dv: 3, weights: false, workspace: false }),
    'bad-size-n': [2, 2, 2, 2, 0b11000001, 0, 0, 0, 1],
    'unknown-flags': [3, 3, 3, 3, 0b00000001, 0xe3, 0],
  },
  rows: {
    'split-with-weights': rows({ n: 21, m: 41, dk: 8, dv: 8, range: [5, 10, 4] }),
    'tiled-split-causal-mask': rows({ n: 36, m: 71, dk: 6, dv: 10, weights: false, hasMask: true, causal: true, range: [6, 33, 1] }),
    'range-begin-negative': rows({ n: 10, m: 10, dk: 4, dv: 4, range: [0, 2, 8] }),
    'range-end-past-n': rows({ n: 10, m: 10, dk: 4, dv: 4, range: [1, 5, 2] }),
    'range-extremes': rows({ n: 10, m: 40, dk: 4, dv: 4, weights: false, range: [4, 2, 3] }),
  },
  self: {
    'episode-3x8': self({ n: 3, dm: 8, dk: 8, dv: 8 }),
    'causal-mask-16': self({ n: 16, dm: 8, dk: 4, dv: 6, hasMask: true, causal: true }),
    'custom-scale': self({ n: 7, dm: 6, dk: 5, dv: 4, scale: 96 }),
    'null-pointer': self({ n: 4, dm: 4, dk: 4, dv: 4, brk: [0b1011] }),
    'bad-size': self({ n: 4, dm: 4, dk: 4, dv: 4, brk: [0b0100, 5] }),
  },
  matmul: {
    'small': matmul({ n: 3, c: 4, p: 5 }),
    'tall-odd': matmul({ n: 47, c: 14, p: 9 }),
    'specials': matmul({ n: 4, c: 5, p: 6, mode: 0x05 }),
    'null-out': matmul({ n: 3, c: 3, p: 3, brk: [0b001] }),
    'bad-size': matmul({ n: 3, c: 3, p: 3, brk: [0b010, 5] }),
  },
  api: {
    // status | d_k | n m d_k d_v | scale bits (4) | flags byte | begin end d_model | mode (bit0: all NULL) [which bad]
    'edges': [0, 1, 4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 1, 2, 3, 1],
    'small-sizes-bad-dim': [200, 131, 140, 150, 130, 135, 0, 0, 128, 63, 0, 0, 0, 0, 0, 0, 2, 1],
    'int-max-null': [5, 4, 4, 4, 4, 4, 0, 0, 0x80, 0x7f, 1, 0xff, 0xff, 0xff, 0xff, 5, 4, 4, 1],
  },
  mha: {
    'episode06-3x8-2heads-bias': mha({ n: 3, heads: 2, kvIndex: 1, dh: 4, biases: 15 }),
    'cross-gqa-6-heads-causal': mha({ n: 8, m: 36, heads: 6, kvIndex: 1, dh: 3, causal: true }),
    'mqa-mask-tiled': mha({ n: 10, m: 40, heads: 4, kvIndex: 0, dh: 4, weights: false, concat: false, hasMask: true, biases: 9 }),
    'heads-not-dividing': mha({ n: 4, heads: 3, kvIndex: 0, dh: 2, brk: [10, 0] }),
  },
  stats: {
    'rows-weights-heads-points-causal': stats({ n: 9, m: 9, dk: 8, dv: 8, causal: true }),
    'tiled-mask-dead-rows-m100': stats({ n: 20, m: 100, dk: 8, dv: 6, weights: false, hasMask: true, causal: true, range: [3, 13], kpos: [1 | (20 << 2)], points: 0 }),
    'point-out-of-range': stats({ n: 6, m: 40, dk: 4, dv: 4, weights: false, points: 0, broken: [7, 0, 2] }),
    'nan-position': stats({ n: 4, m: 5, dk: 3, dv: 3, qpos: [2, 0x05, 100, 228, 110, 120] }),
    'kpos-null': stats({ n: 4, m: 5, dk: 3, dv: 3, nullMember: 3 }),
    'sizes-int-max': sizes(15, 15, 15, 15),
    'sizes-edges': sizes(5, 6, 0, [192, 0, 0, 0, 64]),
    'map-encoder-key-mask': map({ L: 2, H: 4, gIndex: 1, d: 8, T: 6, keyMask: true, extra: 2, sExtra: 1, l: 1, i: 3 }),
    'map-decoder-gqa': map({ L: 2, H: 4, gIndex: 1, d: 5, T: 7, decoder: true, sExtra: 3, l: 1, i: 2 }),
    'map-range-i': map({ L: 1, H: 2, d: 4, T: 3, brk: 6, bad: 1 }),
  },
};
// Regressions: inputs that broke the contract (tests/fuzz/README.md, "Findings"), replayed by
// tests/fuzz.test.js. Written out in full so that they stay readable (FUZZ_DUMP=1).
const AMP_1E38 = 31 << 3;                       // mode byte: plain values times 1e38
const v = (x) => 108 + Math.round(x * 32);      // one plain value byte
const regressions = {
  forward: {
    // F1a: q = [2e38, 0, 2e38, 2e38], k = [1, 0, 1, -1], scale 6/64: the fast path sums
    // (2e38 + 0) + (2e38 - 2e38) = 2e38, the naive path 2e38 + 0 + 2e38 = inf
    'F1a-fast-ok-naive-overflow': [0, 0, 3, 0, 0b00010001, 0, 0, 6, AMP_1E38, v(2), v(0), v(2), v(2), 0, v(1), v(0), v(1), v(-1), 0, v(1)],
    // F1b: scale 0, q = k = [3e38, 3e38]: q·k = inf, inf·0 = NaN, the row comes back as if masked
    'F1b-scale-zero-row-zeroed': [0, 0, 1, 0, 0b00010001, 0, 0, 0, AMP_1E38, v(3), v(3), AMP_1E38, v(3), v(3), 0, v(1)],
  },
  matmul: {
    // F3: a = [NaN], b = [1]: ATTN_ERR_OVERFLOW instead of ATTN_ERR_NON_FINITE
    'F3-nan-input-overflow': [0, 0, 0, 0, 0x05, 228, 0, v(1)],
  },
  stats: {
    // F6: attn_heads_map with d = -1 (encoder, T = m = 3): workspace + T·d pointed 12 bytes before the
    // workspace and the key mask was written there
    'F6-heads-map-d-negative': [6, 0, 0, 0, 3, 2, (16 + 11) << 2, 0, 0, 0, 0, 1],
    // F7: attn_heads_map_floats(INT_MAX, INT_MAX, INT_MAX) = 5764607517665525762 floats, whose bytes
    // do not fit in size_t
    'F7-heads-map-floats-bytes-wrap': [5, 15, 15, 0, 15],
    // F8: attn_heads_map from a decoder's cache with m = 5 != T = 3: OK, a (3, 3) map in a (3, 5) buffer
    'F8-heads-map-decoder-m-not-t': [6, 0, 0, 0, 3, 2, 1 | ((16 + 13) << 2), 0, 0, 0, 0, 1],
  },
};

fs.rmSync(dir, { recursive: true, force: true });
// (other regressions are fuzzer outputs kept as found: only these files are rewritten)
const regDir = path.join(dir, '..', 'regressions');
for (const [target, files] of Object.entries(regressions)) {
  fs.mkdirSync(path.join(regDir, target), { recursive: true });
  for (const [name, bytes] of Object.entries(files)) fs.writeFileSync(path.join(regDir, target, name), Uint8Array.from(bytes));
}
for (const [target, files] of Object.entries(seeds)) {
  fs.mkdirSync(path.join(dir, target), { recursive: true });
  for (const [name, bytes] of Object.entries(files)) fs.writeFileSync(path.join(dir, target, name), Uint8Array.from(bytes));
}
console.log(`wrote ${Object.values(seeds).reduce((a, f) => a + Object.keys(f).length, 0)} seeds to ${path.relative(process.cwd(), dir)}`);
