// heads.js - bench.js's section on every head's role in one pass (issue 37): forward(ids, { heads })
// on SmolLM2-135M's shape (BF16, random weights: scripts/random-checkpoint.js), in one process.
//
//   node bench/bench.js --only heads    this section alone (about 6 minutes on 2 cores), rewrites only its part of the doc
//   node bench/heads.js [--quick] [--print]   the same without bench.js (--quick: 256 and 512 tokens, one
//                                       round, prints only; --print: the full run, printed, the doc left as it is)
//
// Measured:
//   (a) one thread, 1,024 tokens: forward(ids, { logits: 'last' }) against forward(ids, { heads: true,
//       logits: 'last' }), samples round-robin, medians; the ratio (target ≤ 1.15×), and that the
//       logits are the same bits with and without the scores;
//   (b) result.map(l, h) after that forward: the median over heads spread across the layers (target
//       ≤ 30 ms), and its largest difference from forward(ids, { attention: { layers: [l], heads: [h] } })'s map;
//   (c) forward with heads on 2 threads against 1 at 1,024 and 2,048 tokens (target ≤ 0.55× at
//       1,024), and that the scores are the same bits on both;
//   (d) peak RSS of a fresh process (this file run as `node bench/heads.js --peak FOLDER N`) that
//       loads the checkpoint and runs one forward with heads over 2,048 tokens on one thread,
//       against the weights' bytes (target ≤ weights + 500 MiB);
//   (e) the same for Qwen2.5-0.5B's shape over 4,096 tokens on 2 threads (1,024 with --quick): that
//       it runs in wasm32, and its peak (target ≤ 2 GiB).
// No figure is asserted: a measurement, not a test.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, fmtBytes, maxAbsDiff, median, table } from './lib.js';
import { bytesOf, forwards } from './threads-loops.js';
import { tokenIds } from './model.js';
import { progress, root } from './plan.js';
import { writeSection } from './sections.js';
import { THREADS_HEADING } from './threads.js';
import { writeRandomCheckpoint } from '../scripts/random-checkpoint.js';

export const HEADS_HEADING = '## Every head\'s role in one pass (forward(ids, { heads }))';
const SHAPE = 'smollm2-135m';
const PLAN = {
  full: { n: 1024, rounds: 3, maps: 9, threadN: [1024, 2048], threadRounds: { 1024: 3, 2048: 2 }, peakN: 2048, longN: 4096 },
  quick: { n: 256, rounds: 1, maps: 5, threadN: [256, 512], threadRounds: { 256: 1, 512: 1 }, peakN: 512, longN: 1024 },
};
const MiB = 1048576;
const host = { cpuMs: () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; }, progress: (what) => progress(`heads: ${what}`) };

/** `node bench/bench.js --only heads`: measure, print, and (a full run) rewrite the section. */
export async function headsOnly(r, { quick, write = !quick }) {
  const res = await benchHeads({ quick });
  const text = `${headsReport(res)}\n\n` +
    `Written by \`node bench/bench.js --only heads\` on ${new Date().toISOString().slice(0, 16)}Z; ${r.machine.cpu}, ${r.machine.cores} cores, Node ${r.machine.node}; ` +
    `load average (1 min) ${fmt(r.machine.loadStart, 2)} at the start, ${fmt(os.loadavg()[0], 2)} at the end.`;
  console.log(`\n${HEADS_HEADING}\n\n${text}\n`);
  if (write && !res.failed) writeSection(path.join(root, 'docs/BENCHMARKS.md'), HEADS_HEADING, text, { after: THREADS_HEADING });
}

export async function benchHeads({ quick }) {
  const plan = quick ? PLAN.quick : PLAN.full;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-bench-heads-'));
  try {
    progress(`heads: ${SHAPE}'s shape, BF16 (scripts/random-checkpoint.js)`);
    const { parameters } = writeRandomCheckpoint(SHAPE, dir, { dtype: 'BF16' });
    const weights = fs.statSync(path.join(dir, 'model.safetensors')).size;
    const { loadModel } = await import('../web/model/model-node.js');
    const one = await loadModel(dir, { threads: 1 }), two = await loadModel(dir, { threads: 2 });
    const res = { plan, parameters, weights, config: one.config, threads: two.threads };
    try {
      const ids = tokenIds(plan.n, one.config.vocab_size);
      res.cost = await headsCost(one, ids, plan.rounds);
      res.map = mapTimes(one, ids, plan.maps);
      res.threads2 = [];
      for (const n of plan.threadN) res.threads2.push(await onThreads(one, two, tokenIds(n, one.config.vocab_size), plan.threadRounds[n]));
    } finally {
      one.dispose(); two.dispose();
    }
    res.peak = peakOf(dir, plan.peakN, one.config.vocab_size, 1);
    res.long = longRun(plan.longN);
    return res;
  } catch (e) {
    progress(`heads: failed: ${e.stack ?? e.message}`);
    return { failed: e.message.split('\n')[0] };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// (a) plain against heads on one thread, round-robin (threads-loops.js's forwards: 'one' is plain,
// 'two' the forward with heads; sameBits: the last row's logits)
async function headsCost(model, ids, rounds) {
  const impls = {
    one: async (x) => model.forward(x, { logits: 'last' }),
    two: async (x) => model.forward(x, { heads: true, logits: 'last' }),
  };
  const f = await forwards(impls, ids, rounds, { ...host, bits: (r) => bytesOf(r.logits.data) });
  return { n: ids.length, rounds, plain: f.median.one, heads: f.median.two, sameLogits: f.sameBits };
}

// (b) map(l, h) after a forward with heads, for `count` heads spread over the layers: each timed
// once (the first call included: a page opens one head at a time), then checked against that
// head's map from forward(ids, { attention }) (after the timings: that forward ends the result's maps)
function mapTimes(model, ids, count) {
  const { n_layer: L, n_head: H } = model.config;
  const heads = Array.from({ length: count }, (_, k) => ({ l: Math.round((k * (L - 1)) / Math.max(1, count - 1)), h: (k * 4) % H }));
  progress(`heads: map(l, h) at ${ids.length} tokens, ${count} heads`);
  const r = model.forward(ids, { heads: true, logits: false });
  const ms = [], maps = [];
  for (const { l, h } of heads) {
    const t0 = performance.now();
    const m = r.map(l, h);
    ms.push(performance.now() - t0);
    maps.push(m.data);
  }
  const { l, h } = heads[heads.length - 1];
  const full = model.forward(ids, { attention: { layers: [l], heads: [h] }, logits: false }).attention[l][h].data;
  return { n: ids.length, count, median: median(ms), min: Math.min(...ms), max: Math.max(...ms), diff: maxAbsDiff(maps[maps.length - 1], full), head: { l, h } };
}

// (c) forward with heads on 1 and on 2 threads, round-robin; sameBits: every score, byte for byte
async function onThreads(one, two, ids, rounds) {
  const run = (m) => async (x) => m.forward(x, { heads: true, logits: 'last' }).heads;
  const bits = (s) => Buffer.concat(['sink', 'previous', 'self', 'next', 'entropy', 'distance'].map((k) => bytesOf(s[k])));
  const f = await forwards({ one: run(one), two: run(two) }, ids, rounds, { ...host, bits });
  return { n: ids.length, rounds, one: f.median.one, two: f.median.two, sameBits: f.sameBits, cores: f.cores };
}

// (d) a fresh process: `node --expose-gc bench/heads.js --peak FOLDER N VOCAB THREADS` prints one JSON line
function peakOf(dir, n, vocab, threads) {
  progress(`heads: peak RSS of a fresh process, ${n} tokens with heads on ${threads} thread${threads > 1 ? 's' : ''}`);
  const p = spawnSync(process.execPath, ['--expose-gc', '--max-old-space-size=2048', fileURLToPath(import.meta.url), '--peak', dir, String(n), String(vocab), String(threads)],
    { encoding: 'utf8', cwd: root, timeout: 30 * 60 * 1000 });
  if (p.status !== 0) return { error: (p.stderr || p.error?.message || `exit ${p.status}`).trim().split('\n').slice(-2).join(' ') };
  return JSON.parse(p.stdout.trim().split('\n').pop());
}

const status = (key) => Number(fs.readFileSync('/proc/self/status', 'utf8').match(new RegExp(`${key}:\\s+(\\d+) kB`))[1]) * 1024;

// the child's side of (d): VmHWM over the whole process (loading included), and over the forward
// alone (the mark reset by /proc/self/clear_refs, Linux ≥ 4.0, as bench/memory.js does)
async function peakChild(dir, n, vocab, threads) {
  const { loadModel } = await import('../web/model/model-node.js');
  const model = await loadModel(dir, { threads });
  globalThis.gc?.();
  const loaded = status('VmRSS'), loadPeak = status('VmHWM');
  fs.writeFileSync('/proc/self/clear_refs', '5');
  const t0 = performance.now();
  const r = model.forward(tokenIds(n, vocab), { heads: true, logits: 'last' });
  const ms = performance.now() - t0;
  if (r.heads.sink.length !== model.config.n_layer * model.config.n_head) throw new Error('heads: unexpected scores');
  const finite = [...r.heads.sink, ...r.heads.entropy].every(Number.isFinite);
  console.log(JSON.stringify({ n, threads: model.threads, loaded, loadPeak, forwardPeak: status('VmHWM'), ms, finite }));
}

// (e) Qwen2.5-0.5B's shape over a long input with heads, on 2 threads, in a fresh process
function longRun(n) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-bench-heads-qwen-'));
  try {
    progress('heads: qwen2.5-0.5b\'s shape, BF16 (scripts/random-checkpoint.js)');
    const { parameters } = writeRandomCheckpoint('qwen2.5-0.5b', dir, { dtype: 'BF16' });
    const weights = fs.statSync(path.join(dir, 'model.safetensors')).size;
    const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
    return { parameters, weights, ...peakOf(dir, n, config.vocab_size, 2) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function longRow(q, n) {
  const what = `Qwen2.5-0.5B's shape (BF16, random weights), ${n} tokens with \`heads\`, 2 threads, fresh process: peak RSS`;
  if (q.error) return [what, `not measured: ${q.error}`, '', '≤ 2 GiB', ''];
  const peak = Math.max(q.loadPeak, q.forwardPeak);
  return [what, fmtBytes(peak), `weights + **${fmtBytes(peak - q.weights)}**`, '≤ 2 GiB',
    `ran in ${fmt(q.ms / 1000)} s on ${q.threads} threads; scores ${q.finite ? 'finite' : '**not finite**'}; weights ${fmtBytes(q.weights)}`];
}

function headsReport(r) {
  if (r.failed) return `Failed: ${r.failed}.`;
  const { cost: c, map: m, peak: p, config: cfg } = r;
  const rows = [
    [`forward over ${c.n} tokens, 1 thread, \`logits: 'last'\`: with \`heads\` ÷ without (${c.rounds} rounds)`, `${fmt(c.plain)} ms → ${fmt(c.heads)} ms`, `**${fmt(c.heads / c.plain, 3)}×**`, '≤ 1.15×',
      c.sameLogits ? 'the logits: the same bits' : '**the logits differ**'],
    [`one \`map(l, h)\` at ${m.n} tokens (median of ${m.count} heads; ${fmt(m.min)}–${fmt(m.max)} ms)`, `${fmt(m.median)} ms`, '', '≤ 30 ms',
      `max \\|diff\\| from the forward's map of L${m.head.l} H${m.head.h}: ${m.diff.toExponential(1)}`],
    ...r.threads2.map((t) => [`forward with \`heads\` over ${t.n} tokens: ${r.threads} threads ÷ 1 (${t.rounds} rounds)`, `${fmt(t.one)} ms → ${fmt(t.two)} ms`,
      `**${fmt(t.two / t.one, 3)}×**`, t.n === 1024 ? '≤ 0.55×' : '–', t.sameBits ? 'the scores: the same bits' : '**the scores differ**']),
    p.error ? [`peak RSS, ${r.plan.peakN} tokens with \`heads\``, `not measured: ${p.error}`, '', '≤ weights + 500 MiB', '']
      : [`peak RSS of a fresh process, ${p.n} tokens with \`heads\` (1 thread)`, fmtBytes(Math.max(p.loadPeak, p.forwardPeak)),
        `weights + **${fmtBytes(Math.max(p.loadPeak, p.forwardPeak) - r.weights)}**`, '≤ weights + 500 MiB',
        `weights ${fmtBytes(r.weights)}; after loading ${fmtBytes(p.loaded)} (peak while loading ${fmtBytes(p.loadPeak)}); during the forward ${fmtBytes(p.forwardPeak)}`],
    longRow(r.long, r.plan.longN),
  ];
  return `SmolLM2-135M's shape (${fmt(r.parameters / 1e6)} M parameters, BF16 kept as BF16, random weights: scripts/random-checkpoint.js; ` +
    `${cfg.n_layer} layers × ${cfg.n_head} query heads = ${cfg.n_layer * cfg.n_head} heads), token ids (i · 7919 + 13) mod vocab; one process, ` +
    'samples round-robin, medians. `heads: true` scores every head (sink, previous, self, next, entropy, distance: docs/HEADS.md) inside the attention step; ' +
    'no map is kept.\n\n' +
    table(['', 'measured', 'ratio / over', 'target', 'checked'], rows, [':--', '--:', '--:', '--:', ':--']) +
    `\n\nCores in use during a forward with \`heads\` (CPU time ÷ wall time, median): ${r.threads2.map((t) => `${t.n} tokens: ${fmt(t.cores.one, 2)} and ${fmt(t.cores.two, 2)}`).join('; ')}. ` +
    `The peak is VmHWM of /proc/self/status (${fmtBytes(MiB * 500)} over the weights' ${fmtBytes(r.weights)} is the target).`;
}

// run directly: the child of (d), or this section alone
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--peak');
  if (at >= 0) {
    const [dir, n, vocab, threads] = process.argv.slice(at + 1);
    await peakChild(dir, Number(n), Number(vocab), Number(threads));
    process.exit(0);
  }
  const { machine } = await import('./machine.js');
  const quick = process.argv.includes('--quick');
  await headsOnly({ machine: machine() }, { quick, write: !quick && !process.argv.includes('--print') });
}
