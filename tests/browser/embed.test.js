// The one-file embed, web/dist/attention-heatmap.min.js (issue 12): fresh, at most 25 KiB
// gzipped, self-contained, and with exactly the element's behaviour: the element tests
// (element.test.js, element-heads.test.js) run again in a child `node --test` with
// ATTNMAP_EMBED=bundle, where their server answers the define module's URL with the one file.
// How blogs load it (file://, classic, module, CSP): tests/browser/embed-load.test.js.
//
//   node --test tests/browser/embed.test.js
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { spawn, spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { OUT, BUDGET, TARGET, WASM, defaultWasm, gzipSize, buildEmbed, breakdown } from '../../scripts/build-embed.js';
import { root } from '../helpers.js';

const rel = path.relative(root, OUT);
const kib = (b) => `${(b / 1024).toFixed(1)} KiB`;

test(`the committed ${rel} matches a fresh build (node scripts/build-embed.js --check)`, () => {
  const r = spawnSync(process.execPath, ['scripts/build-embed.js', '--check'], { cwd: root, encoding: 'utf8' });
  assert.equal(r.status, 0, `node scripts/build-embed.js --check failed:\n${r.stdout}${r.stderr}`);
});

// the budget is not issue 12's 25 KiB target yet (see scripts/build-embed.js): both are printed
test(`${rel} stays within its size budget gzipped (level 9); issue 12's target of 25 KiB is printed`, async () => {
  const gz = gzipSize(fs.readFileSync(OUT));
  const rows = await breakdown((await buildEmbed()).metafile);
  console.log(`one-file embed: ${rel} ${fs.statSync(OUT).size} B, gzip -9 ${gz} B (${kib(gz)}), budget ${BUDGET} B (${kib(BUDGET)}), ` +
    `target ${TARGET} B (${kib(TARGET)}): ${gz <= TARGET ? 'met' : `NOT met, ${gz - TARGET} B over`}; wasm: ${defaultWasm()}\n` +
    rows.map((r) => `  ${r.input.padEnd(46)} ${String(r.bytesInOutput).padStart(7)} B minified` +
      `${r.alone === null ? '' : `, ${r.alone} B gz alone`}`).join('\n'));
  assert.ok(gz <= BUDGET, `${rel} is ${gz} B gzipped, over the budget of ${BUDGET} B by ${gz - BUDGET} B`);
});

test(`${rel}: one ASCII script that imports nothing, with one wasm build inside`, async () => {
  const bytes = fs.readFileSync(OUT);
  const text = bytes.toString('latin1');
  assert.ok(bytes.every((b) => b < 0x80), 'ASCII only: the charset a page declares cannot matter');
  assert.match(text, /^\/\*! <attention-heatmap> from attnmap [^\n]*\n[^\n]*\*\/\n\(\(\)=>\{/, 'a banner, then the IIFE');
  assert.ok(text.endsWith('})();\n'), 'one IIFE, nothing after it');
  new vm.Script(text, { filename: rel });                     // parses as a classic script
  assert.doesNotMatch(text, /\bimport\s*\.\s*meta\b|\brequire\s*\(/);
  // bundling the bundle finds no import(): nothing is fetched at run time (torch-rng.js is inside)
  const again = await esbuild.build({ absWorkingDir: root, entryPoints: [OUT], bundle: true, write: false, metafile: true, format: 'iife', logLevel: 'silent' });
  assert.deepEqual(Object.keys(again.metafile.inputs), [rel]);
  // the wasm build that ships, once (as hex), and no other build, in any encoding
  const wasmOf = async (file) => Buffer.from((await import(pathToFileURL(path.join(root, file)).href)).default, 'base64');
  const ships = await wasmOf(WASM[defaultWasm()]);
  assert.equal(text.split(ships.toString('hex')).length - 1, 1, `the ${defaultWasm()} wasm is inside, once`);
  for (const other of [...Object.values(WASM), 'web/wasm/attention-relaxed-wasm.js']) {
    if (other === WASM[defaultWasm()] || !fs.existsSync(path.join(root, other))) continue;
    const b = await wasmOf(other);
    assert.ok(!text.includes(b.toString('hex')) && !text.includes(b.toString('base64')), `${other} is not inside`);
  }
  assert.ok(!text.includes(ships.toString('base64')), 'the wasm is inside once, as hex only');
});

// ------------------------------------------------------------------------------------------------
// The element tests against the one file.

const FILES = ['tests/browser/element.test.js', 'tests/browser/element-heads.test.js'];
const REPORTER = path.join(root, 'tests/fixtures/embed/reporter.mjs');

// Tests of source files, which have no counterpart in the one file: left out of the child run, and
// listed here as skipped with the reason. Everything else must pass.
const NOT_APPLICABLE = [
  { file: 'element.test.js', name: 'the class module defines nothing and imports in Node without a DOM',
    reason: 'imports the source class module web/element/attention-heatmap-element.js (in Node and in the page) and checks that importing it defines nothing; the one file has no separate class module. Its behavioural half (properties set before the definition are picked up at the upgrade) runs against the one file in embed-load.test.js' },
  { file: 'element.test.js', name: 'size budget: what the embed loads, gzipped',
    reason: 'measures the source files the define module imports; the one file\'s size is tested above' },
  { file: 'element-heads.test.js', name: 'types: heads, wq…wo and the MHA event detail type-check (tsc)',
    reason: 'type-checks web/element/attention-heatmap.d.ts with tsc, in Node; nothing is loaded' },
];

// How they are left out. Node 20 has no --test-skip-pattern; its --test-name-pattern runs a test
// whose name or whose suite's name matches, and reports the others as skipped. The suites' names
// ("<attention-heatmap> …") and node:test's "<root>" start with "<", so the pattern matches none
// of them. Node 22 and later ignore that negative pattern; --test-skip-pattern leaves the tests out
// there, unreported.
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const NAMES = `(?:${NOT_APPLICABLE.map((t) => escape(t.name)).join('|')})`;
const SKIP_PATTERN = Number(process.versions.node.split('.')[0]) >= 22;
const LEAVE_OUT = SKIP_PATTERN ? `--test-skip-pattern=^${NAMES}$` : `--test-name-pattern=^(?!<)(?!${NAMES}$)`;

// Each test file of the child gets at most this long (node --test's --test-timeout bounds a file as
// a whole): a test that waits for an event that never comes must fail, not hang the run. The two
// files take under a minute each on a quiet machine.
const CHILD_FILE_TIMEOUT = 300000;

/**
 * Run the element tests with ATTNMAP_EMBED=bundle; resolves to { status, results, stderr }. The child
 * runs in its own process group, ended (browsers included) when `signal` aborts.
 */
function runChild(signal) {
  return new Promise((resolve, reject) => {
    // NODE_TEST_CONTEXT (set by the runner that runs this file) would make the child report in
    // the runner's own protocol instead of running its files with our reporter
    const { NODE_TEST_CONTEXT, ...env } = process.env;
    const child = spawn(process.execPath, ['--test', `--test-reporter=${REPORTER}`, LEAVE_OUT,
      `--test-timeout=${CHILD_FILE_TIMEOUT}`, ...FILES],
    { cwd: root, env: { ...env, ATTNMAP_EMBED: 'bundle' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const stop = () => { try { process.kill(-child.pid, 'SIGTERM'); } catch { /* already gone */ } };
    signal.addEventListener('abort', stop, { once: true });
    let stdout = '', stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (status) => {
      signal.removeEventListener('abort', stop);
      resolve({ status, stderr, results: stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)) });
    });
  });
}

describe(`the element tests against ${rel} (ATTNMAP_EMBED=bundle)`, () => {
  test(`${FILES.map((f) => path.basename(f)).join(' and ')} pass with the one file served at web/element/attention-heatmap.js`, { timeout: FILES.length * CHILD_FILE_TIMEOUT + 60000 }, async (t) => {
    const { status, results, stderr } = await runChild(t.signal);
    assert.ok(results.length > 0, `the child node --test reported no test (exit ${status})\n${stderr.slice(-4000)}`);
    const failed = results.filter((r) => !r.passed);
    assert.deepEqual(failed.map((r) => `${path.basename(r.file ?? '?')}: ${r.name}: ${r.error}`), [], 'failed against the one file');
    assert.deepEqual(results.filter((r) => r.todo).map((r) => r.name), [], 'todo tests do not count');
    const skipped = results.filter((r) => r.skip).map((r) => `${path.basename(r.file ?? '?')}: ${r.name}`).sort();
    const leftOut = NOT_APPLICABLE.map((t) => `${t.file}: ${t.name}`).sort();
    assert.deepEqual(skipped, SKIP_PATTERN ? [] : leftOut, 'skipped: exactly the tests that do not apply');
    const passed = results.filter((r) => r.passed && !r.skip && !r.todo);
    const ran = passed.map((r) => `${path.basename(r.file ?? '?')}: ${r.name}`);
    assert.deepEqual(leftOut.filter((t) => ran.includes(t)), [], 'the tests that do not apply were left out');
    for (const f of FILES) {
      assert.ok(passed.some((r) => r.file?.endsWith(f)), `tests of ${f} ran`);
    }
    console.log(`against the one file (node ${process.version}): ${passed.length} passed, ${leftOut.length} not applicable (left out), ${failed.length} failed`);
    assert.equal(status, 0, `the child node --test exited with ${status}\n${stderr.slice(-4000)}`);
  });

  for (const t of NOT_APPLICABLE) {
    test(`${t.file}: ${t.name}`, { skip: `not applicable to the one file: ${t.reason}` }, () => {});
  }
});
