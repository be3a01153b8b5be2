// reading.js - what this run says, written from its numbers so that it stays true on every
// rerun: issue 4's targets against this run's figures, and a reading of the tables in sentences.
import { attentionFlops, fmt, fmtBytes, table } from './lib.js';
import { LABEL, MEMORY_N } from './plan.js';

// Issue 4's targets against this run's figures, one row each: what was asked, what was measured.
export function targetsReport(r) {
  const rows = [];
  const yes = (ok) => (ok ? 'met' : '**not met**');
  const large = r.sizes.filter((x) => x.n >= 1024 && x.n <= 4096 && x.results.ours);
  const gf = (x, ms) => attentionFlops(x.n, x.n, x.d, x.d) / 1e6 / ms;
  if (large.length) {
    const g = large.map((x) => gf(x, x.results.ours.median));
    rows.push(['≥ 42 GFLOP/s at n = 1024–4096, d = 64, public API (Node)', `${large.map((x, i) => `${fmt(g[i])} (n = ${x.n})`).join(', ')}`, yes(Math.min(...g) >= 42)]);
    const withOrt = large.filter((x) => x.results.ort);
    if (withOrt.length) {
      const q = withOrt.map((x) => x.results.ort.median / x.results.ours.median);
      rows.push(['≥ 1.6× onnxruntime-web, same run (Node)', withOrt.map((x, i) => `${fmt(q[i])}× (n = ${x.n})`).join(', '), yes(Math.min(...q) >= 1.6)]);
    }
  }
  // the two sections that run both builds: Chromium, and Node with relaxed SIMD switched on
  for (const [section, where] of [[r.chromium, 'Chromium'], [r.nodeRelaxed, 'Node with --experimental-wasm-relaxed-simd']]) {
    const cs = (section?.sizes ?? []).filter((s) => s.n >= 1024 && s.results.default && s.results.ort);
    if (!cs.length) continue;
    for (const [key, label] of [['default', '{ relaxed: false }'], ['relaxed', 'createAttention(), the relaxed SIMD build']]) {
      if (!cs.every((s) => s.results[key])) continue;
      const g = cs.map((s) => attentionFlops(s.n, s.n, 64, 64) / 1e6 / s.results[key].median);
      const q = cs.map((s) => s.results.ort.median / s.results[key].median);
      rows.push([`≥ 1.6× onnxruntime-web and ≥ 42 GFLOP/s (${where}, ${label})`, cs.map((s, i) => `${fmt(q[i])}×, ${fmt(g[i])} (n = ${s.n})`).join('; '),
        yes(Math.min(...q) >= 1.6 && Math.min(...g) >= 42)]);
    }
  }
  const t = Object.fromEntries(r.tiny.map((x) => [x.name, x]));
  if (t.self) rows.push(['tiny selfAttention (n = 3, d = 8, public API) < 2 µs median', `${fmt(t.self.median)} µs`, yes(t.self.median < 2)]);
  if (t.self && t.ort) rows.push(['tiny call ≥ 7× faster than onnxruntime-web session.run', `${fmt(t.ort.median / t.self.median)}×`, yes(t.ort.median / t.self.median >= 7)]);
  if (r.cold.ours) rows.push(['cold start: import + createAttention() + first call < 15 ms', `${fmt(r.cold.ours.createAndFirst)} ms`, yes(r.cold.ours.createAndFirst < 15)]);
  rows.push(['32,768² with { weights: false }, nothing n×m, < 128 MiB growth; n = 4096 with weights', 'tests/unit/long.test.js in `npm test`', 'see the tests']);
  if (r.pool?.rows?.length) {
    const sp = r.pool.rows.filter((x) => x.n >= 1024).map((x) => x.single / x.pool);
    if (sp.length) rows.push([`stretch: more than one core without SharedArrayBuffer (${r.pool.workers} workers, n ≥ 1024)`, sp.length > 1 ? `${fmt(Math.min(...sp))}× to ${fmt(Math.max(...sp))}×` : `${fmt(sp[0])}×`, yes(Math.min(...sp) > 1)]);
  }
  return table(['target (issue 4)', 'this run', ''], rows, [':--', ':--', ':--']);
}

const ratio = (x, c) => (x.results[c]?.median ? x.results[c].median / x.results.ours.median : NaN);
const range = (c, xs) => {
  const rs = xs.map((x) => ({ n: x.n, v: ratio(x, c) })).filter((y) => Number.isFinite(y.v));
  if (!rs.length) return null;
  const lo = rs.reduce((a, b) => (b.v < a.v ? b : a)), hi = rs.reduce((a, b) => (b.v > a.v ? b : a));
  return { lo, hi, rs };
};

// A reading of the numbers, written from the numbers, so that it stays true on every rerun.
export function reading(r) {
  return [...peerLines(r), ...speedLines(r), ...tinyLines(r), ...runLines(r)].join('\n');
}

// plain JS, onnxruntime-web and TF.js against attnmap over the sizes
function peerLines(r) {
  const lines = [];
  for (const c of ['plain', 'ort', 'tf']) {
    const g = range(c, r.sizes);
    if (!g) { lines.push(`- ${LABEL[c]}: not measured (it failed to load or disagreed with attnmap).`); continue; }
    // within 10 % counts as level: runs on this machine move by more than that
    const ns = (f) => g.rs.filter((y) => f(y.v)).map((y) => y.n);
    const faster = ns((v) => v > 1.1), level = ns((v) => v >= 0.9 && v <= 1.1), slower = ns((v) => v < 0.9);
    const parts = [];
    if (faster.length) parts.push(`faster at ${faster.length === g.rs.length ? 'every size' : `n = ${faster.join(', ')}`}`);
    if (level.length) parts.push(`level (within 10 %) at ${level.length === g.rs.length ? 'every size' : `n = ${level.join(', ')}`}`);
    if (slower.length) parts.push(`slower at ${slower.length === g.rs.length ? 'every size' : `n = ${slower.join(', ')}`}`);
    lines.push(`- **${LABEL[c]}** takes ${fmt(g.lo.v)}× (n = ${g.lo.n}) to ${fmt(g.hi.v)}× (n = ${g.hi.n}) attnmap's time: ` +
      `attnmap is ${parts.join(', ')}.`);
  }
  return lines;
}

// native C, and the single-core peak
function speedLines(r) {
  const lines = [];
  const big = r.sizes.filter((x) => x.n >= 64);
  const nat = range('native', big);
  if (nat) {
    lines.push(`- **Native C** (the same source, gcc -O3 -march=native) takes ${fmt(nat.lo.v)}× (n = ${nat.lo.n}) to ${fmt(nat.hi.v)}× (n = ${nat.hi.n}) ` +
      'attnmap\'s time for n ≥ 64, so attnmap through its JS API runs at ' +
      `${fmt(100 * nat.lo.v, 2)} % to ${fmt(100 * nat.hi.v, 2)} % of native speed. ` +
      'The gap holds the public API (checks, copies in and out, the output\'s allocation) and code generation ' +
      '(natively gcc may use 256-bit AVX for the loops it vectorises itself; wasm SIMD is 128-bit).');
  }
  if (r.peak.gflops) {
    const gf = (x, c = 'ours') => attentionFlops(x.n, x.n, x.d, x.d) / 1e6 / x.results[c].median;
    const last = r.sizes[r.sizes.length - 1], best = big.reduce((a, b) => (gf(b) > gf(a) ? b : a), big[0] ?? last);
    lines.push(`- At n = ${last.n} attnmap does ${fmt(gf(last))} GFLOP/s, ${fmt((100 * gf(last)) / r.peak.gflops, 2)} % of the ${fmt(r.peak.gflops)} GFLOP/s ` +
      `that one core retires in 4-wide mul + add (its best here: ${fmt(gf(best))} GFLOP/s at n = ${best.n}` +
      `${best.results.native?.median ? `; native C ${fmt(gf(best, 'native'))}` : ''}). exp, max and the loads and stores are not counted as flops, ` +
      'so 100 % is out of reach; the distance to native C is the fairer yardstick.');
  }
  return lines;
}

function tinyLines(r) {
  const lines = [];
  const t = Object.fromEntries(r.tiny.map((x) => [x.name, x]));
  if (t.self && t.ort) {
    lines.push(`- **Tiny calls**: a selfAttention call of the episode's size takes ${fmt(t.self.median)} µs, ` +
      `attention without weights ${fmt(t.attnNoW.median)} µs, plain JS ${fmt(t.plain.median)} µs, onnxruntime-web's session.run ${fmt(t.ort.median)} µs. ` +
      (t.plain.median < t.attnNoW.median ? 'At this size plain JS beats the public API. ' : '') +
      (t.rawAtt ? `The C kernels alone take ${fmt(t.rawAtt.median)} µs (attention) and ${fmt(t.rawSelf.median)} µs (selfAttention), ` +
        `so ${fmt(100 * (1 - t.rawAtt.median / t.attnNoW.median), 2)} % and ${fmt(100 * (1 - t.rawSelf.median / t.self.median), 2)} % of a call is the JS wrapper: ` +
        'argument checks, copies in, and allocating the returned matrices (and the garbage collection they cause).' : ''));
  }
  return lines;
}

// cold start, memory, size, and the load on the machine
function runLines(r) {
  const lines = [];
  const c = r.cold;
  if (c.ours && c.ort && c.tf) {
    lines.push(`- **Cold start** (import, create, first call): attnmap ${fmt(c.ours.createAndFirst)} ms, TF.js ${fmt(c.tf.createAndFirst)} ms, ` +
      `onnxruntime-web ${fmt(c.ort.createAndFirst)} ms. From the script's first line, with the benchmark's own imports and Node's module loader ` +
      `starting up: attnmap ${fmt(c.ours.fromScript)} ms.`);
  }
  const m = r.memory;
  if (m.ours) {
    const nn = 4 * MEMORY_N * MEMORY_N;
    const times = (x) => `${fmt(x.growth / nn, 2)} n×n matrices`;
    lines.push(`- **Memory** at n = ${MEMORY_N}: one forward raises the peak RSS by ${fmtBytes(Math.max(0, m.ours.growth))} for attnmap (${times(m.ours)})` +
      `${m.ort ? `, ${fmtBytes(Math.max(0, m.ort.growth))} for onnxruntime-web (${times(m.ort)})` : ''}` +
      `${m.tf ? `, ${fmtBytes(Math.max(0, m.tf.growth))} for TF.js (${times(m.tf)})` : ''}. ` +
      'A graph of MatMul, Softmax and MatMul holds the n×n scores; attnmap with { weights: false } never allocates them.');
  }
  const gz = Object.fromEntries(r.sizes_gz.map((g) => [g.name.split(' ')[0] + (g.name.includes('embed') ? ' embed' : g.name.includes('core') ? ' core' : g.name.includes('raw') ? ' raw' : ''), g]));
  if (gz['attnmap embed'] && gz['onnxruntime-web,'] && gz['TF.js']) {
    lines.push(`- **Size**: the whole embed is ${fmtBytes(gz['attnmap embed'].gzip)} gzipped; onnxruntime-web's wasm build ${fmtBytes(gz['onnxruntime-web,'].gzip)}, TF.js core + wasm ${fmtBytes(gz['TF.js'].gzip)}.`);
  }
  // the benchmark itself keeps about one core busy: busy means other work on top of that
  const busy = Math.max(r.machine.loadStart, r.machine.loadEnd) > r.machine.cores + 1;
  lines.push(`- The machine is shared: the 1-minute load average was ${fmt(r.machine.loadStart, 2)} at the start and ${fmt(r.machine.loadEnd, 2)} at the end, on ${r.machine.cores} cores. ` +
    'Absolute times move between runs; the ratios, from interleaved samples, move less, but not to nothing. ' +
    (busy ? '**This run was taken on a busy machine** (load above the number of cores + 1, the benchmark\'s own process): other processes do not slow every ' +
      'implementation alike (in our runs onnxruntime-web at large n lost the most, for reasons not measured here), so treat the ' +
      'large-n ratios with care and rerun on an idle machine for fair ones.'
      : 'Runs on a busy machine (load above the number of cores + 1, the benchmark\'s own process) skew the ratios too: other processes do not slow every implementation alike.'));
  return lines;
}
