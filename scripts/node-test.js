// node-test.js - `node --test` over folders, on any Node: the folders' test files are found here,
// with Node 20's rules, and passed to `node --test` as files.
//
//   node scripts/node-test.js [--NODE-OPTION[=VALUE] ...] [FILE|DIR ...]     default: tests/
//
// (an option's value goes after '=': `--test-name-pattern=golden`, not two arguments.)
//
// Node 20 searches a folder given to `node --test`; Node 22 and later read every argument as a
// glob pattern and load a folder as a module ("Cannot find module .../tests"), and Node 20 has
// no globs. A list of files works on both. Exits with the tests' status. scripts/node24.js runs
// the same list on Node 24.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Node 20's rules for `node --test DIR`: every file below DIR, outside node_modules, named
// test.js, test-*.js, *.test.js, *-test.js or *_test.js (also .cjs, .mjs), or in a folder named test
const TEST_FILE = /^(test|test-.*|.*[.\-_]test)\.[cm]?js$/;

export function testFiles(dir, inTestDir = false) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules') out.push(...testFiles(file, inTestDir || e.name === 'test'));
    } else if (/\.[cm]?js$/.test(e.name) && (inTestDir || TEST_FILE.test(e.name))) {
      out.push(file);
    }
  }
  return out.sort();
}

// `node --test` with args (options, then files or folders; tests/ when none) on the binary node;
// returns its exit status (1 when it could not start or was killed)
// (skip: folders left out when no target is given: scripts/node24.js's tests/browser)
export function runTests(node, args, { env = process.env, say = () => {}, skip = [] } = {}) {
  const options = args.filter((a) => a.startsWith('-'));
  const targets = args.filter((a) => !a.startsWith('-'));
  const left = (f) => targets.length || !skip.some((dir) => f.startsWith(path.join(root, dir) + path.sep));
  const files = [...new Set((targets.length ? targets.map((t) => path.resolve(t)) : [path.join(root, 'tests')])
    .flatMap((t) => (fs.statSync(t).isDirectory() ? testFiles(t) : [t])))].filter(left);
  if (!files.length) {
    process.stderr.write(`node-test: no test files in ${targets.join(' ') || 'tests/'}\n`);
    return 1;
  }
  say(`${files.length} test file${files.length === 1 ? '' : 's'}`);
  const run = spawnSync(node, [...options, '--test', ...files.map((f) => path.relative(process.cwd(), f))], { stdio: 'inherit', env });
  if (run.error) process.stderr.write(`node-test: could not start ${node}: ${run.error.message}\n`);
  return run.status ?? 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exit(runTests(process.execPath, process.argv.slice(2)));
}
