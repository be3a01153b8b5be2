// fresh.js - what is measured in fresh Node processes: the cold start (bench/cold.js, runs
// interleaved between the implementations) and the peak memory of one forward (bench/memory.js).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { median } from './lib.js';
import { COLD_RUNS, MEMORY_N, here, progress, root } from './plan.js';

// Cold start: fresh `node bench/cold.js IMPL` processes, interleaved.
export function coldStarts(names) {
  progress(`cold start: ${COLD_RUNS} fresh processes each`);
  const runs = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < COLD_RUNS; r++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + r) % names.length];
      const p = spawnSync(process.execPath, [path.join(here, 'cold.js'), name], { encoding: 'utf8', cwd: root });
      if (p.status !== 0) { progress(`cold ${name}: ${p.stderr.trim().split('\n').slice(-3).join(' ')}`); continue; }
      runs[name].push(JSON.parse(p.stdout.trim().split('\n').pop()));
    }
  }
  return Object.fromEntries(names.map((name) => {
    const xs = runs[name];
    const m = (key) => (xs.length ? median(xs.map((x) => x[key])) : NaN);
    return [name, { runs: xs.length, fromScript: m('fromScript'), fromProcessStart: m('fromProcessStart'), importAndCreate: m('importAndCreate'), first: m('first'), createAndFirst: m('createAndFirst') }];
  }));
}

export function memory(names) {
  progress(`memory at n = ${MEMORY_N}`);
  const out = {};
  for (const name of names) {
    const p = spawnSync(process.execPath, ['--expose-gc', path.join(here, 'memory.js'), name, String(MEMORY_N)], { encoding: 'utf8', cwd: root });
    if (p.status !== 0) { progress(`memory ${name}: ${p.stderr.trim().split('\n').slice(-3).join(' ')}`); continue; }
    out[name] = JSON.parse(p.stdout.trim().split('\n').pop());
  }
  return out;
}
