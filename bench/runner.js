// runner.js - how a run times things: a first call checked against ours, warm-up and
// calibration, samples taken round-robin with the order rotating each round, medians. And the
// main table's measurement with it: single-head attention at each size, the JS implementations in
// this process and native C in its child (bench/native.c).
import { makeInputs, maxAbsDiff, median } from './lib.js';
import { compileNative, NativeChild, readNativeOutput, writeNativeInputs } from './native.js';
import { IMPLS, MAX_SAMPLES, SAMPLE_MS, SIZES, TOLERANCE, WARMUP_MS, progress } from './plan.js';

export const now = () => performance.now();

// one sample: reps calls in a row, ms per call; await only where the implementation is async
export async function sample(impl, inputs, reps, isAsync) {
  const t0 = now();
  if (isAsync) for (let i = 0; i < reps; i++) await impl.forward(inputs);
  else for (let i = 0; i < reps; i++) impl.forward(inputs);
  return (now() - t0) / reps;
}

// the first call, timed: its output, whether the implementation is async, how long it took
export async function firstCall(impl, inputs) {
  const t0 = now();
  const first = impl.forward(inputs);
  const isAsync = first instanceof Promise;
  const out = await first;
  return { out, isAsync, once: now() - t0 };
}

// Records an output's max |difference| from ours in results; one over TOLERANCE is reported
// (where: 'n = 64: ', 'mha: ') and not timed.
export function accept(results, name, diff, where) {
  results[name] = { diff, ok: diff <= TOLERANCE };
  if (!(diff <= TOLERANCE)) progress(`${where}${name} disagrees with ours (max |diff| = ${diff}); not timed`);
  return diff <= TOLERANCE;
}

// Warm-up: single calls until `calls` calls or WARMUP_MS spent (none once a call takes stopAtMs);
// returns the fastest single call, from which repsFor calibrates.
export async function warmUp(impl, inputs, isAsync, once, { calls, stopAtMs = Infinity }) {
  for (let i = 0, spent = 0; once < stopAtMs && i < calls && spent < WARMUP_MS; i++) {
    const t = await sample(impl, inputs, 1, isAsync);
    once = Math.min(once, t);
    spent += t;
  }
  return once;
}

// calls per sample, so that one sample takes about SAMPLE_MS
export const repsFor = (once, cap = Infinity) => (once >= SAMPLE_MS ? 1 : Math.min(cap, Math.ceil(SAMPLE_MS / Math.max(once, 1e-4))));

// Samples round-robin, the order rotating each round; each of live is { name, ms: [], sample,
// max? }. A failing sample throws, or with onError(x, e) drops that implementation.
export async function roundRobin(live, rounds, onError) {
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < live.length; i++) {
      const x = live[(i + r) % live.length];
      if (x.dead || !(x.ms.length < (x.max ?? Infinity))) continue;
      try { x.ms.push(await x.sample()); } catch (e) {
        if (!onError) throw e;
        x.dead = true;
        onError(x, e);
      }
    }
  }
}

export function summarize(live, results) {
  for (const x of live) if (x.ms.length && !x.dead) Object.assign(results[x.name], { median: median(x.ms), min: Math.min(...x.ms), reps: x.reps, samples: x.ms.length });
}

// One JS implementation at one size, its output accepted: warm up (WARMUP_MS or 20,000 calls: the
// peers' JS needs thousands of calls to reach its steady speed) and calibrate: reps so that one
// sample takes about SAMPLE_MS, from the fastest single call.
async function calibrate(name, impl, inputs, isAsync, first, max) {
  const once = await warmUp(impl, inputs, isAsync, first, { calls: 20000, stopAtMs: 1000 });
  const reps = repsFor(once, 100000);
  // a single sample of a call that takes seconds: the checked call is that sample (JIT warm-up is noise there)
  const ms = max === 1 && once > 1000 ? [once] : [];
  return { name, reps, max, ms, sample: () => sample(impl, inputs, reps, isAsync) };
}

async function benchSize(impls, native, { n, d, rounds }) {
  const inputs = makeInputs(n, d);
  const row = { n, d, rounds, results: {} };
  const live = [];
  // check every output against ours before timing anything
  const ours = await impls.ours.forward(inputs);
  for (const name of IMPLS) {
    const impl = impls[name];
    if (!impl) continue;
    const { out, isAsync, once } = await firstCall(impl, inputs);
    if (!accept(row.results, name, name === 'ours' ? 0 : maxAbsDiff(out, ours), `n = ${n}: `)) continue;
    live.push(await calibrate(name, impl, inputs, isAsync, once, MAX_SAMPLES[name]?.[n] ?? rounds));
  }
  // native C: the same inputs through a file; its samples join the round-robin
  if (native) {
    writeNativeInputs({ n }, inputs);
    const { reps } = await native.ask(`load ${n} ${d} ${SAMPLE_MS}`);
    if (accept(row.results, 'native', maxAbsDiff(readNativeOutput(n), ours), `n = ${n}: `)) {
      live.push({ name: 'native', reps, max: rounds, ms: [], sample: async () => (await native.ask(`sample ${n}`)).ms });
    }
  }
  await roundRobin(live, rounds);
  summarize(live, row.results);
  if (native && row.results.native) {
    // native C's own medians (the same samples, computed in C)
    const own = await native.ask(`done ${n}`);
    Object.assign(row.results.native, { median: own.median_ms, min: own.min_ms, samples: own.rounds });
  }
  return row;
}

// Every size of SIZES; if native C dies, the size is rerun and the run goes on without it.
// Returns { sizes, nativeError }.
export async function benchSizes(impls) {
  const nat = compileNative();
  let nativeError = nat.error;
  let native = nat.exe ? new NativeChild(nat.exe) : null;
  if (nat.error) progress(`native C not measured: ${nat.error}`);
  const sizes = [];
  for (const size of SIZES) {
    progress(`n = ${size.n}, d = ${size.d}: ${size.rounds} rounds`);
    try {
      sizes.push(await benchSize(impls, native, size));
    } catch (e) {
      if (!native?.exited) throw e;
      nativeError = e.message;                       // native C died: go on without it
      progress(e.message);
      native = null;
      sizes.push(await benchSize(impls, null, size));
    }
  }
  native?.close();
  return { sizes, nativeError };
}
