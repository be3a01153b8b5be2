// Tests of bin/attnmap.js, run as a child process the way a user runs it.
//
//   node --test tests/cli.test.js
//
// Tolerance (STYLE.md): |a - e| <= atol + rtol * |e|, here atol = 1e-4, rtol = 0, because the
// expected values are the episode's section-5 weights printed by PyTorch to 4 decimals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/attnmap.js', import.meta.url));
const run = (...args) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, ATTNMAP_DEBUG: '' } });

// EP05 section 5: 猫吃鱼, d_k = 4
const Q = '[[1.0,0.2,0.1,0.0],[0.3,0.8,0.2,0.1],[0.1,0.1,0.9,0.3]]';
const K = '[[0.9,0.1,0.0,0.2],[0.2,0.7,0.3,0.0],[0.0,0.2,1.0,0.1]]';
// PyTorch 1.13: F.softmax(Q @ K.T / 2, dim=-1), row of 吃 (the section's hand calculation)
const ROW_CHI = [0.3157, 0.3686, 0.3157];
// all rows: softmax(Q·Kᵀ / 2) evaluated in float64 (Python math.exp), rounded to 4 decimals
const ALL = [[0.4104, 0.3117, 0.2779], [0.3157, 0.3686, 0.3157], [0.2786, 0.3079, 0.4135]];
const ATOL = 1e-4;
const close = (a, e) => Math.abs(a - e) <= ATOL + 0 * Math.abs(e);

const cellsOf = (svg) => [...svg.matchAll(/<rect class="cell"[^>]*?data-row="(\d+)" data-col="(\d+)" data-value="([^"]*)"/g)]
  .map(([, r, c, v]) => ({ row: Number(r), col: Number(c), value: Number(v) }));

/** A failed run: exit 2, one line "attnmap: ..." on stderr, nothing on stdout, no stack trace. */
function assertUsageError(r, pattern) {
  assert.equal(r.status, 2, `exit status; stderr: ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^attnmap: [^\n]+\n$/, 'one line starting "attnmap: "');
  assert.doesNotMatch(r.stderr, /\n\s+at |Error:/, 'no stack trace');
  assert.match(r.stderr, pattern);
}

test('section 5 q/k: a standalone SVG with 3×3 cells; row 吃 col 猫 is 0.3157', () => {
  const r = run('svg', '--tokens', '猫 吃 鱼', '--q', Q, '--k', K);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.match(r.stdout, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.match(r.stdout, /<\/svg>\n$/);
  assert.match(r.stdout, /<style>/, 'standalone');
  const cells = cellsOf(r.stdout);
  assert.equal(cells.length, 9);
  const chiMao = cells.find((c) => c.row === 1 && c.col === 0);
  assert.ok(close(chiMao.value, 0.3157), `吃 → 猫 = ${chiMao.value}, expected 0.3157 ± ${ATOL}`);
  for (let j = 0; j < 3; j++) {
    const got = cells.find((c) => c.row === 1 && c.col === j).value;
    assert.ok(close(got, ROW_CHI[j]), `吃 row, column ${j}: ${got} vs ${ROW_CHI[j]}`);
  }
  for (const c of cells) assert.ok(close(c.value, ALL[c.row][c.col]), `(${c.row}, ${c.col}): ${c.value} vs ${ALL[c.row][c.col]}`);
  for (let i = 0; i < 3; i++) {
    const sum = cells.filter((c) => c.row === i).reduce((s, c) => s + c.value, 0);
    assert.ok(Math.abs(sum - 1) < 1e-6, `row ${i} sums to ${sum}`);
  }
  assert.ok(r.stdout.includes('aria-label="吃 → 猫: 0.3157"'));
});

test('--tokens as a JSON array, --v, --lang en, --decimals, --title, --scale', () => {
  const r = run('svg', '--tokens', '["猫","吃","鱼"]', '--q', Q, '--k', K, '--v', '[[1],[2],[3]]',
    '--lang', 'en', '--decimals', '4', '--title', 'EP05 <猫吃鱼>', '--scale', '0.5');
  assert.equal(r.status, 0, r.stderr);
  assert.ok(r.stdout.includes('>0.3157<'), 'four decimals in the cells');
  assert.ok(r.stdout.includes('key (who is looked at)'));
  assert.ok(r.stdout.includes('<title>EP05 &lt;猫吃鱼&gt;</title>'));
  const same = run('svg', '--tokens', '猫 吃 鱼', '--q', Q, '--k', K, '--lang', 'en', '--decimals', '4', '--title', 'EP05 <猫吃鱼>');
  assert.equal(same.stdout, r.stdout, 'scale 0.5 is the default 1/√4, and v does not change the weights');
  const sharp = cellsOf(run('svg', '--q', Q, '--k', K, '--scale', '10').stdout);
  assert.ok(sharp.find((c) => c.row === 0 && c.col === 0).value > 0.99, '--scale 10 sharpens the softmax');
});

test('--causal: the upper triangle is masked (hatched, weight 0), rows still sum to 1', () => {
  const r = run('svg', '--tokens', '猫 吃 鱼', '--q', Q, '--k', K, '--causal');
  assert.equal(r.status, 0, r.stderr);
  const cells = cellsOf(r.stdout);
  for (const c of cells.filter((x) => x.col > x.row)) assert.equal(c.value, 0);
  assert.equal((r.stdout.match(/data-masked="true"/g) ?? []).length, 3);
  assert.equal(cells.find((c) => c.row === 0 && c.col === 0).value, 1);
});

test('bad JSON: exit 2 naming the argument', () => {
  assertUsageError(run('svg', '--q', '[[1, 2]', '--k', K), /--q is not valid JSON/);
  assertUsageError(run('svg', '--q', Q, '--k', 'nope'), /--k is not valid JSON/);
  assertUsageError(run('svg', '--q', '[1, 2]', '--k', K), /--q must be a JSON array of rows.*\(for one row write \[\[1,2\]\]\)/);
  assertUsageError(run('svg', '--q', '[[1, "2"]]', '--k', '[[1, 2]]'), /--q\[0\]\[1\] must be a number; received the string "2"/);
  assertUsageError(run('svg', '--q', '[[1, 2], [3]]', '--k', '[[1, 2]]'), /--q is ragged: --q\[0\] has 2 numbers but --q\[1\] has 1/);
  assertUsageError(run('svg', '--q', '[[1e999]]', '--k', '[[1]]'), /--q\[0\]\[0\] is Infinity/);
  assertUsageError(run('svg', '--q', '[]', '--k', K), /--q must be a JSON array of rows/);
  assertUsageError(run('svg', '--q', Q, '--k', K, '--tokens', '["猫", 1]'), /--tokens must be a JSON array of strings/);
});

test('mismatched shapes: exit 2 naming the argument and both shapes', () => {
  assertUsageError(run('svg', '--q', Q, '--k', '[[1, 2, 3]]'),
    /--k has rows of 3 numbers but --q has rows of 4.*q \(3, 4\), k \(1, 3\)/);
  assertUsageError(run('svg', '--q', Q, '--k', K, '--v', '[[1], [2]]'),
    /--v has 2 rows but --k has 3.*v \(2, 1\)/);
});

test('token count != rows: exit 2', () => {
  assertUsageError(run('svg', '--tokens', '猫 吃', '--q', Q, '--k', K), /--tokens has 2 tokens but --q has 3 rows/);
  assertUsageError(run('svg', '--tokens', '猫吃鱼', '--q', Q, '--k', K), /separate tokens with spaces/);
  assertUsageError(run('svg', '--tokens', 'a b', '--q', '[[1], [2]]', '--k', '[[1], [2], [3]]'), /give --key-tokens with 3 labels/);
  const cross = run('svg', '--tokens', 'a b', '--key-tokens', 'x y z', '--q', '[[1], [2]]', '--k', '[[1], [2], [3]]');
  assert.equal(cross.status, 0, cross.stderr);
  assert.equal(cellsOf(cross.stdout).length, 6);
});

test('other usage errors: exit 2 with a message; bad values reported by the core exit 2 too', () => {
  assertUsageError(run(), /missing command/);
  assertUsageError(run('png'), /unknown command "png"/);
  assertUsageError(run('svg', '--k', K), /--q is required/);
  assertUsageError(run('svg', '--q', Q, '--k', K, '--bogus'), /Unknown option '--bogus'/);
  assertUsageError(run('svg', '--q', Q, '--k', K, '--lang', 'fr'), /--lang must be zh or en/);
  assertUsageError(run('svg', '--q', Q, '--k', K, '--decimals', '-1'), /--decimals/);
  assertUsageError(run('svg', '--q', Q, '--k', K, '--scale', 'big'), /--scale must be a number/);
  assertUsageError(run('svg', '--q', Q, '--k', K, '--scale=-1'), /scale must be a finite number >= 0/); // from AttentionError
  assertUsageError(run('svg', '--q', '[[3e38, 3e38]]', '--k', '[[3e38, 3e38]]'), /overflows float32/); // NON_FINITE from the core
});

test('--help: exit 0, usage on stdout, says v defaults to k', () => {
  for (const args of [['--help'], ['-h'], ['svg', '--help']]) {
    const r = run(...args);
    assert.equal(r.status, 0, args.join(' '));
    assert.match(r.stdout, /^Usage: attnmap svg --q JSON --k JSON/);
    assert.match(r.stdout, /default: the keys \(--v = --k\)/);
    assert.equal(r.stderr, '');
  }
});

test('--version and -v: exit 0, the version of package.json and nothing else on stdout', () => {
  const { version } = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  assert.match(version, /^\d+\.\d+\.\d+/);
  for (const args of [['--version'], ['-v'], ['svg', '--version']]) {
    const r = run(...args);
    assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, `${version}\n`, args.join(' '));
    assert.equal(r.stderr, '');
  }
  assert.match(run('--help').stdout, /^ {2}-v, --version {8}print the version/m, '--help lists it');
  assertUsageError(run('--version=1'), /--version/);
});

// ---------------------------------------------------------------------------------------------
// issue 6: budgets, checked before anything is computed. 120 KB of --tokens used to make 105 MB
// of SVG (each cell repeats its labels).

test('budgets: 120 KB of --tokens is refused at once with a message naming the budget', () => {
  const n = 256;
  const tokens = Array.from({ length: n }, (_, i) => String(i).padEnd(469, 'x')).join(' ');
  const q = JSON.stringify(Array.from({ length: n }, (_, i) => [i % 7]));
  assert.ok(tokens.length > 120000);
  // "at once": status 2 and not one byte of SVG written (spawnSync's 30 s limit only stops a hang)
  const r = spawnSync(process.execPath, [BIN, 'svg', '--tokens', tokens, '--q', q, '--k', q],
    { encoding: 'utf8', env: { ...process.env, ATTNMAP_DEBUG: '' }, timeout: 30000, maxBuffer: 256 * 1024 * 1024 });
  assertUsageError(r, /^attnmap: the tokens have 120064 characters; the budget is 16384 characters/);
  // --tokens and --key-tokens count together
  const half = Array.from({ length: 2 }, (_, i) => String(i).padEnd(4100, 'y')).join(' ');
  assertUsageError(run('svg', '--tokens', half, '--key-tokens', half, '--q', '[[1],[2]]', '--k', '[[1],[2]]'),
    /the tokens have 16400 characters \(--tokens and --key-tokens\); the budget is 16384/);
  // just under the budget is drawn
  const ok = run('svg', '--tokens', half, '--q', '[[1],[2]]', '--k', '[[1],[2]]');
  assert.equal(ok.status, 0, ok.stderr);
});

test('budgets: more than 65536 cells is refused before the core computes anything', () => {
  const big = JSON.stringify(Array.from({ length: 300 }, (_, i) => [i % 7]));
  assertUsageError(run('svg', '--q', big, '--k', big), /--q has 300 rows and --k 300: 90000 cells; the budget is 65536 cells \(256×256\)/);
  // many keys for one query (the argument must stay under Linux's 128 KiB per argument)
  const keys = JSON.stringify(Array.from({ length: 30000 }, () => [1]));
  const queries = JSON.stringify(Array.from({ length: 3 }, () => [1]));
  assertUsageError(run('svg', '--q', queries, '--k', keys), /--q has 3 rows and --k 30000: 90000 cells; the budget is 65536 cells/);
});

test('budgets: the SVG is at most 32 MiB, or --max-bytes', () => {
  const r = run('svg', '--q', Q, '--k', K, '--max-bytes', '1000');
  assertUsageError(r, /^attnmap: the SVG would be \d{4} bytes; the output budget is 1000 bytes \(--max-bytes\)/);
  const size = Number(/would be (\d+) bytes/.exec(r.stderr)[1]);
  const exact = run('svg', '--q', Q, '--k', K, '--max-bytes', String(size));
  assert.equal(exact.status, 0, exact.stderr);
  assert.equal(Buffer.byteLength(exact.stdout), size, 'the size named is the size written');
  for (const bad of ['0', '-1', '1.5', 'lots', '33554433', '1e6']) {
    assertUsageError(run('svg', '--q', Q, '--k', K, `--max-bytes=${bad}`), /--max-bytes must be a whole number from 1 to 33554432/);
  }
  assert.match(run('--help').stdout, /--max-bytes N[\s\S]*Budgets: at most 65536 cells/);
});

// issue 7: stdout that cannot be written (a full disk, a reader that went away) is one line on
// stderr and exit status 1, never a stack trace.
test('stdout on /dev/full (ENOSPC): one line, exit 1, no stack trace', { skip: !fs.existsSync('/dev/full') && 'no /dev/full' }, () => {
  const full = fs.openSync('/dev/full', 'w');
  try {
    const r = spawnSync(process.execPath, [BIN, 'svg', '--tokens', '猫 吃 鱼', '--q', Q, '--k', K],
      { encoding: 'utf8', stdio: ['ignore', full, 'pipe'], env: { ...process.env, ATTNMAP_DEBUG: '' }, timeout: 30000 });
    assert.equal(r.status, 1, `exit status; stderr: ${r.stderr}`);
    assert.equal(r.stderr, 'attnmap: cannot write to stdout: ENOSPC: no space left on the device\n');
    const help = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8', stdio: ['ignore', full, 'pipe'], timeout: 30000 });
    assert.equal(help.status, 1);
    assert.match(help.stderr, /^attnmap: cannot write to stdout: ENOSPC[^\n]*\n$/);
  } finally {
    fs.closeSync(full);
  }
});

test('stdout whose reader has gone (EPIPE): one line, exit 1, no stack trace', async () => {
  const child = spawn(process.execPath, [BIN, 'svg', '--tokens', '猫 吃 鱼', '--q', Q, '--k', K],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ATTNMAP_DEBUG: '' } });
  child.stdout.destroy();                  // close our end before the child writes
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const [status] = await once(child, 'close');
  assert.equal(status, 1, `exit status; stderr: ${stderr}`);
  assert.equal(stderr, 'attnmap: cannot write to stdout: EPIPE: the reader closed the pipe\n');
});
