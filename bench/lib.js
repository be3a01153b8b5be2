// lib.js - what bench.js's modules and its child processes share: inputs, statistics, formatting.

// mulberry32: a small seeded generator, so that every run and every process sees the same inputs
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** count standard normal float32 values (Box-Muller), seeded. */
export function gaussian(count, seed) {
  const rand = mulberry32(seed), out = new Float32Array(count);
  for (let i = 0; i < count; i += 2) {
    const u = 1 - rand(), w = rand();             // u in (0, 1]: log(u) is finite
    const r = Math.sqrt(-2 * Math.log(u));
    out[i] = r * Math.cos(2 * Math.PI * w);
    if (i + 1 < count) out[i + 1] = r * Math.sin(2 * Math.PI * w);
  }
  return out;
}

/**
 * The benchmark's inputs for one size: q, k, v (n, d), standard normal, so that the scaled
 * scores q·k/√d have unit variance and softmax is neither flat nor one-hot.
 */
export function makeInputs(n, d) {
  const seed = n * 1000 + d;
  const mat = (s) => ({ data: gaussian(n * d, seed + s), shape: [n, d] });
  return { q: mat(1), k: mat(2), v: mat(3) };
}

/** The episode-sized inputs of selfAttention: x (n, d_model), wq, wk, wv (d_model, d_model). */
export function makeSelfInputs(n, dModel) {
  const mat = (rows, s) => ({ data: gaussian(rows * dModel, 77 + s).map((x) => x * 0.5), shape: [rows, dModel] });
  return { x: mat(n, 0), wq: mat(dModel, 1), wk: mat(dModel, 2), wv: mat(dModel, 3) };
}

/**
 * A multi-head layer's inputs: x (n, d_model) standard normal; wq, wk, wv, wo (d_model, d_model)
 * normal with standard deviation 1/√d_model (so that Q, K, V have about unit variance); the
 * biases bq, bk, bv, bo (d_model) normal with standard deviation 0.1. All Float32Arrays.
 */
export function makeMhaInputs(n, dModel) {
  const seed = 500000 + n;
  const scaled = (count, s, sd) => gaussian(count, seed + s).map((x) => x * sd);
  const ww = 1 / Math.sqrt(dModel);
  return {
    x: gaussian(n * dModel, seed),
    wq: scaled(dModel * dModel, 1, ww), wk: scaled(dModel * dModel, 2, ww),
    wv: scaled(dModel * dModel, 3, ww), wo: scaled(dModel * dModel, 4, ww),
    bq: scaled(dModel, 5, 0.1), bk: scaled(dModel, 6, 0.1), bv: scaled(dModel, 7, 0.1), bo: scaled(dModel, 8, 0.1),
  };
}

export const nested = ({ data, shape: [rows, cols] }) =>
  Array.from({ length: rows }, (_, i) => Array.from(data.subarray(i * cols, (i + 1) * cols)));

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b), h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/** Largest |a - b| over two equal-length arrays (NaN anywhere gives NaN). */
export function maxAbsDiff(a, b) {
  if (a.length !== b.length) return NaN;
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    const e = Math.abs(a[i] - b[i]);
    if (!(e <= worst)) worst = e;               // also catches NaN
  }
  return worst;
}

/** Attention flops for n queries, m keys: Q·Kᵀ and weights·V, 2 flops per multiply-add. */
export const attentionFlops = (n, m, dk, dv) => 2 * n * m * dk + 2 * n * m * dv;

/**
 * A multi-head self-attention layer's flops (n tokens, E = d_model): the four projections
 * 4·2·n·E² and, over all heads, Q·Kᵀ and weights·V 4·n²·E; softmax and biases not counted.
 */
export const mhaFlops = (n, E) => 8 * n * E * E + 4 * n * n * E;

/** A number with about three significant digits, no exponent. */
export function fmt(x, digits = 3) {
  if (x === undefined || x === null || Number.isNaN(x)) return '–';
  if (x === 0) return '0';
  const mag = Math.floor(Math.log10(Math.abs(x)));
  const dp = Math.max(0, Math.min(6, digits - 1 - mag));
  return x.toFixed(dp);
}

/** A markdown table; align defaults to the first column left, the others right. */
export function table(header, rows, align) {
  const a = align ?? header.map((_, i) => (i === 0 ? ':--' : '--:'));
  return [`| ${header.join(' | ')} |`, `|${a.map((x) => ` ${x} `).join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

export const fmtBytes = (b) => (b >= 1048576 ? `${fmt(b / 1048576)} MiB` : b >= 1024 ? `${fmt(b / 1024)} KiB` : `${b} B`);

/**
 * Both builds of attnmap and onnxruntime-web in one engine (bench/chromium.html, bench/node-relaxed.js):
 * impls { default, relaxed, ort }, each x => output (or a promise of it). Per size, every output is
 * compared with the default build's, each is calibrated to about sampleMs per sample, then the
 * samples rotate between them for `rounds` rounds. Returns [{ n, rounds, results: { name: { median,
 * min, diff, reps } } }].
 */
export async function timeBuilds(impls, sizes, sampleMs, calibrateMs) {
  const out = [];
  for (const { n, rounds } of sizes) {
    const x = makeInputs(n, 64);
    const ref = await impls.default(x);
    const live = [];
    for (const [name, f] of Object.entries(impls)) {
      const diff = maxAbsDiff(await f(x), ref);
      let once = Infinity;
      for (let i = 0, t0 = performance.now(); i < 20 && performance.now() - t0 < calibrateMs; i++) {
        const t = performance.now(); await f(x); once = Math.min(once, performance.now() - t);
      }
      live.push({ name, f, diff, reps: Math.max(1, Math.ceil(sampleMs / once)), ms: [] });
    }
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < live.length; i++) {
        const l = live[(i + r) % live.length];
        const t = performance.now();
        for (let k = 0; k < l.reps; k++) await l.f(x);
        l.ms.push((performance.now() - t) / l.reps);
      }
    }
    out.push({ n, rounds, results: Object.fromEntries(live.map((l) => [l.name, { median: median(l.ms), min: Math.min(...l.ms), diff: l.diff, reps: l.reps }])) });
  }
  return out;
}

/** timeBuilds' sizes as a markdown table: both builds, onnxruntime-web, ratios, GFLOP/s, differences. */
export function buildsTable(sizes) {
  const row = (s) => {
    const d = s.results.default, x = s.results.relaxed, o = s.results.ort, gf = (ms) => fmt(attentionFlops(s.n, s.n, 64, 64) / ms / 1e6);
    return `| ${s.n} | ${fmt(d.median)} | ${fmt(x.median)} | ${fmt(o.median)} | ${fmt(d.median / x.median)}× | ${fmt(o.median / d.median)}× | ${fmt(o.median / x.median)}× | ${gf(d.median)} | ${gf(x.median)} | ${x.diff.toExponential(1)} | ${o.diff.toExponential(1)} |`;
  };
  return [
    '| n | attnmap | attnmap relaxed | onnxruntime-web | relaxed speed-up | ORT ÷ attnmap | ORT ÷ attnmap relaxed | attnmap GFLOP/s | relaxed GFLOP/s | max \\|diff\\| relaxed | max \\|diff\\| ORT |',
    '| --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |',
    ...sizes.map(row),
  ].join('\n');
}
