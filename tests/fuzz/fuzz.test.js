// The libFuzzer targets of tests/fuzz/ in the normal suite: the committed seeds and the
// regressions are replayed, then every target fuzzes for a few seconds. `npm run fuzz`
// (scripts/fuzz.sh) runs them for minutes. Without clang + libFuzzer the replays still run
// (tests/fuzz/replay.c, built with cc under the sanitizers); the fuzzing pass is skipped with
// a message, except under CI, where it fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { root } from '../helpers.js';

const SECONDS = Number(process.env.FUZZ_TEST_SECONDS || 1);
const INSTALL = 'apt-get install -y clang libclang-rt-14-dev';
const fuzzDir = path.join(root, 'tests/fuzz');
const targets = fs.readdirSync(fuzzDir).filter((f) => /^fuzz_\w+\.c$/.test(f)).map((f) => f.slice(5, -2)).sort();
// the C core the targets link: heads.c (fuzz_stats) runs its jobs through parallel.c, whose linear
// kernels' jobs need linear.c (no threads natively: parallel.c imports them only under ATTN_THREADS)
const sources = ['c_src/attention.c', 'c_src/mha.c', 'c_src/rope.c', 'c_src/heads.c', 'c_src/parallel.c', 'c_src/linear.c']
  .filter((f) => fs.existsSync(path.join(root, f)));
const out = path.join(root, 'build/fuzz-test');
fs.mkdirSync(out, { recursive: true });

const files = (dir) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort().map((f) => path.join(dir, f)) : []);

function run(cmd, args, { env = {}, cwd = root } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d) => { text += d; });
    child.stderr.on('data', (d) => { text += d; });
    child.on('close', (code, signal) => resolve({ code, signal, text }));
  });
}

// at most `width` jobs at a time (this machine has 2 cores)
async function pool(items, width, job) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) { const i = next++; results[i] = await job(items[i], i); }
  }));
  return results;
}

// The first lines that say what broke: our CHECK message, or the sanitizer's report.
const why = (text) => {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => /contract violated|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|Test unit written/.test(l));
  return (at < 0 ? lines.slice(-15) : lines.slice(at, at + 4)).join('\n');
};

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
const CFLAGS = ['-std=c11', '-g', '-O1', '-ffp-contract=off', '-fno-sanitize-recover=all', '-Ic_src'];

// Is clang with libFuzzer here? null if so, else why not. FUZZ_CC names another compiler.
const CLANG = process.env.FUZZ_CC || 'clang';
function probeLibFuzzer() {
  if (!has(CLANG)) return `${CLANG} is not installed`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-fuzz-probe-'));
  try {
    fs.writeFileSync(path.join(dir, 'p.c'), '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n');
    const r = spawnSync(CLANG, ['-fsanitize=fuzzer,address,undefined', 'p.c', '-o', 'p'], { cwd: dir, encoding: 'utf8' });
    return r.status === 0 ? null : `${CLANG} cannot link a libFuzzer target: ${r.stderr.trim().split('\n').slice(-1)[0]}`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
const noFuzzer = probeLibFuzzer();

// Build every target: libFuzzer binaries with clang, or replay-only binaries with cc. The C
// core is compiled once per kind and linked into each target; a build whose inputs (sources,
// flags) have not changed is reused from build/fuzz-test/.
const kind = noFuzzer ? { cc: 'cc', lib: '-fsanitize=address,undefined', exe: '-fsanitize=address,undefined', prefix: 'replay' }
  : { cc: CLANG, lib: '-fsanitize=fuzzer-no-link,address,undefined', exe: '-fsanitize=fuzzer,address,undefined', prefix: 'fuzz' };
const digest = (parts) => crypto.createHash('sha256').update(parts.join('\0')).digest('hex');
const read = (f) => fs.readFileSync(path.join(root, f), 'utf8');

async function compile(args, output, inputs) {
  const hash = digest([kind.cc, ...args, ...inputs.map(read)]);
  const stamp = `${output}.hash`;
  if (fs.existsSync(output) && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === hash) return { ok: true, cached: true, hash };
  const r = await run(kind.cc, [...args, '-o', output]);
  if (r.code === 0) fs.writeFileSync(stamp, hash);
  return { ok: r.code === 0, cached: false, hash, text: r.text };
}

// every header of the core: a change to the private internal.h alone must rebuild too
const headers = fs.readdirSync(path.join(root, 'c_src')).filter((f) => f.endsWith('.h')).sort().map((f) => `c_src/${f}`);
const buildStart = Date.now();
const libs = await pool(sources, 2, (src) => compile([...CFLAGS, kind.lib, '-c', src],
  path.join(out, `${kind.prefix}-${path.basename(src, '.c')}.o`), [src, ...headers]));
const libObjects = sources.map((src) => path.join(out, `${kind.prefix}-${path.basename(src, '.c')}.o`));
const built = await pool(targets, 2, async (t) => {
  const exe = path.join(out, `${kind.prefix}_${t}`);
  const mains = noFuzzer ? ['tests/fuzz/replay.c'] : [];
  const r = libs.every((l) => l.ok)
    ? await compile([...CFLAGS, kind.exe, ...mains, `tests/fuzz/fuzz_${t}.c`, ...libObjects, '-lm'], exe,
      [...mains, `tests/fuzz/fuzz_${t}.c`, 'tests/fuzz/fuzz.h', 'c_src/attention.h', ...sources])
    : { ok: false, text: libs.map((l) => l.text || '').join('\n') };
  return { t, exe, ...r };
});
console.log(`# fuzz targets: ${targets.length} built with ${noFuzzer ? 'cc (replay only)' : 'clang + libFuzzer'} ` +
  `(${built.filter((b) => b.cached).length} reused) in ${((Date.now() - buildStart) / 1000).toFixed(1)} s`);

test('every fuzz target builds', () => {
  assert.ok(targets.length >= 6, `targets: ${targets.join(', ')}`);
  for (const b of built) assert.ok(b.ok, `tests/fuzz/fuzz_${b.t}.c does not build:\n${b.text}`);
  // a target for every entry point of attention.h
  const header = fs.readFileSync(path.join(root, 'c_src/attention.h'), 'utf8');
  const entry = [...header.matchAll(/^\S[^(]*?\b(attn_\w+)\(/gm)].map((m) => m[1]);
  const covered = targets.map((t) => fs.readFileSync(path.join(fuzzDir, `fuzz_${t}.c`), 'utf8')).join('\n');
  for (const fn of entry) assert.match(covered, new RegExp(`\\b${fn}\\(`), `no fuzz target calls ${fn} (c_src/attention.h)`);
});

test('the seed corpus and the regressions (inputs that once broke the contract) replay cleanly', async () => {
  await pool(built.filter((b) => b.ok), 2, async ({ t, exe }) => {
    const seeds = files(path.join(fuzzDir, 'corpus', t)), regressions = files(path.join(fuzzDir, 'regressions', t));
    assert.ok(seeds.length >= 3, `tests/fuzz/corpus/${t}/ has ${seeds.length} seeds`);
    const r = await run(exe, [...seeds, ...regressions]);
    assert.equal(r.code, 0, `${t}: an input breaks the contract:\n${why(r.text)}`);
  });
});

test(`a short fuzzing pass: every target for ${SECONDS} s`, {
  skip: noFuzzer && !process.env.CI ? `${noFuzzer}: skipping the fuzzing pass (${INSTALL}); under CI this test runs` : false,
}, async () => {
  assert.equal(noFuzzer, null, `clang with libFuzzer is required under CI (${INSTALL}): ${noFuzzer}`);
  const report = await pool(built, 2, async ({ t, exe }) => {
    const corpus = fs.mkdtempSync(path.join(os.tmpdir(), `attnmap-fuzz-${t}-`));
    try {
      const r = await run(exe, [`-max_total_time=${SECONDS}`, '-timeout=10', '-print_final_stats=1',
        `-artifact_prefix=${path.join(out, `${t}-`)}`, corpus, path.join(fuzzDir, 'corpus', t)]);
      const stat = (k) => Number((r.text.match(new RegExp(`stat::${k}:\\s*(\\d+)`)) || [])[1]);
      return { t, code: r.code, runs: stat('number_of_executed_units'), rate: stat('average_exec_per_sec'), text: r.text };
    } finally {
      fs.rmSync(corpus, { recursive: true, force: true });
    }
  });
  for (const r of report) console.log(`# fuzz ${r.t.padEnd(8)} ${String(r.runs).padStart(8)} runs  ${String(r.rate).padStart(6)} exec/s`);
  for (const r of report) {
    assert.equal(r.code, 0, `fuzz_${r.t} found an input that breaks the contract (replay it with FUZZ_DUMP=1):\n${why(r.text)}`);
    assert.ok(r.runs > 100, `fuzz_${r.t} ran only ${r.runs} inputs in ${SECONDS} s`);
  }
});
