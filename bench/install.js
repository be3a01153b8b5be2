// install.js - the benchmark's peers (onnxruntime-web, TF.js), which only `npm run bench` uses,
// installed from bench/package-lock.json into bench/node_modules on first use. The tests never
// install them: `npm ci` at the root installs what the tests use and nothing more.
//
//   node bench/install.js        installs when bench/node_modules lacks a peer, else does nothing
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { dependencies } = JSON.parse(fs.readFileSync(path.join(here, 'package.json'), 'utf8'));
const missing = Object.keys(dependencies).filter((name) => !fs.existsSync(path.join(here, 'node_modules', name, 'package.json')));
if (missing.length) {
  process.stderr.write(`bench: installing ${missing.join(', ')} into bench/node_modules (npm ci, once)\n`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const run = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: here, stdio: 'inherit' });
  process.exit(run.status ?? 1);
}
