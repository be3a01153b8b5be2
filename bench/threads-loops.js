// threads-loops.js - the two measuring loops of bench/threads.js, in Node, and of
// bench/threads-chromium.html, in a page (so: no Node modules here). The host gives
//   cpuMs()          its CPU time so far, in ms, every thread's (process.cpuUsage; Chromium's /proc)
//   progress(what)   a line of progress
import { maxAbsDiff, median } from './lib.js';

const now = () => performance.now();
/** 100 ms between two samples. */
export const pause = () => new Promise((resolve) => setTimeout(resolve, 100));

/** The bytes of a typed array (for byte-for-byte comparison). */
export const bytesOf = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const sameBytes = (x, y) => x.length === y.length && x.every((v, i) => v === y[i]);

/**
 * A forward over ids by each of impls ({ one, two, ort2? }: ids -> output): outputs compared
 * (bits(output): the bytes that must match between one and two), then rounds of one sample each,
 * the order rotating, 100 ms apart. Medians of the times and of the cores in use.
 */
export async function forwards(impls, ids, rounds, { cpuMs, progress, bits = bytesOf }) {
  const n = ids.length, out = {};
  for (const [name, run] of Object.entries(impls)) out[name] = await run(ids);   // also the warm-up
  const sameBits = sameBytes(bits(out.one), bits(out.two));
  const ortDiff = out.ort2 ? maxAbsDiff(out.one, out.ort2) : null;
  const names = Object.keys(impls), ms = Object.fromEntries(names.map((k) => [k, []])), busy = Object.fromEntries(names.map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    progress(`forward ${n}, round ${r + 1} of ${rounds}`);
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + r) % names.length];
      await pause();   // a runtime's idle threads may spin for a while after a call (ORT's pool does): not into the next sample
      const c0 = await cpuMs(), t0 = now();
      await impls[name](ids);
      const wall = now() - t0;
      ms[name].push(wall);
      busy[name].push((await cpuMs() - c0) / wall);   // CPU time of every thread ÷ wall time: the cores in use
    }
  }
  const med = (o) => Object.fromEntries(names.map((k) => [k, median(o[k])]));
  return { n, rounds, sameBits, ortDiff, median: med(ms), cores: med(busy) };
}

/** KV-cache steps: models.one and .two generate from the prompt in turn; each step's time after the first (the prompt's pass). */
export async function decoding(models, prompt, { steps, decodeRuns }, { progress }) {
  const ms = { one: [], two: [] }, ids = {};
  for (let run = 0; run < decodeRuns; run++) {
    for (const name of run % 2 ? ['two', 'one'] : ['one', 'two']) {
      progress(`decoding, ${name === 'one' ? '1 thread' : '2 threads'}, run ${run + 1} of ${decodeRuns}`);
      await pause();
      const got = [];
      let last = now(), first = true;
      for await (const step of models[name].generate(prompt, { maxTokens: steps, stop: false })) {
        const t = now();
        if (!first) ms[name].push(t - last);
        first = false;
        last = t;
        got.push(step.id);
      }
      ids[name] = got;
    }
  }
  return { prompt: prompt.length, steps, runs: decodeRuns, sameIds: ids.one.join() === ids.two.join(), median: { one: median(ms.one), two: median(ms.two) } };
}
