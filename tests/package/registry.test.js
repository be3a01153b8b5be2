// The package as the registry shows it and a user unpacks it (issue 13): `npm pack`, unpacked and
// installed (with --engine-strict) in a fresh folder; there: every relative link of the shipped
// Markdown resolves to a shipped file, every subpath's types resolve under TypeScript's node10,
// node16 and bundler resolution, `attnmap --version` prints the version, the shipped Makefile
// builds the C library; and in the repository, `scripts/sizes.js --check` (the sizes quoted in
// the docs are the files' sizes). tests/package/installed.test.js covers the rest of the install.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { root } from '../helpers.js';

const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-registry-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26, ...opts });
const node = (args, opts) => sh(process.execPath, args, opts);

// pack (as installed.test.js does), unpack, and install into an empty app; --engine-strict fails
// the install when "engines" excludes the Node running this test (the test line: 20.20 and 24.22)
const [packInfo] = JSON.parse(sh('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: root }));
const tarball = path.join(tmp, packInfo.filename);
const packed = new Set(packInfo.files.map((f) => f.path));
sh('tar', ['-xzf', tarball, '-C', tmp]);
const unpacked = path.join(tmp, 'package');
const app = path.join(tmp, 'app');
fs.mkdirSync(app);
fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
let installError = null;
try {
  sh('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--engine-strict', tarball], { cwd: app });
} catch (e) {
  installError = `${e.stdout}${e.stderr}`;
}
const installed = path.join(app, 'node_modules/attnmap');
const requireInstalled = () => assert.equal(installError, null, `npm install --engine-strict of the tarball failed on Node ${process.version} (engines: ${JSON.stringify(pkg.engines)}):\n${installError}`);

/** The link targets of a Markdown text, outside code: [t](x), ![a](x), [id]: x, <a href>, <img src>. */
function markdownLinks(text) {
  const prose = text
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')   // fenced code blocks
    .replace(/(`+)[^`][\s\S]*?\1/g, '')                      // code spans
    .replace(/<!--[\s\S]*?-->/g, '');                        // comments
  const links = [];
  for (const [, target] of prose.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g)) links.push(target);
  for (const [, target] of prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) links.push(target);
  for (const [, target] of prose.matchAll(/<(?:a|img|source)\b[^>]*?\s(?:href|src)\s*=\s*["']([^"']+)["']/gi)) links.push(target);
  return links;
}

test('engines admits the Node running this test: the tarball installs with npm install --engine-strict', () => {
  requireInstalled();
  assert.ok(fs.existsSync(path.join(installed, 'package.json')));
});

test('every relative link in the shipped README.md, CHANGELOG.md and docs/*.md resolves to a file in the tarball', () => {
  const docs = [...packed].filter((f) => f.endsWith('.md')).sort();
  for (const f of ['README.md', 'CHANGELOG.md', 'docs/EMBED.md']) assert.ok(docs.includes(f), `${f} is not in the tarball`);
  const missing = [];
  let checked = 0;
  for (const doc of docs) {
    for (const link of markdownLinks(fs.readFileSync(path.join(unpacked, doc), 'utf8'))) {
      if (/^[a-z][a-z\d+.-]*:/i.test(link) || link.startsWith('#')) continue;   // https:, mailto:, an anchor in the same file
      checked++;
      if (link.startsWith('/')) { missing.push(`${doc}: ${link} (a site-root path, nothing to resolve it against in the package)`); continue; }
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(doc), decodeURI(link.replace(/[#?].*$/, ''))));
      const isFile = packed.has(target);
      const isFolder = [...packed].some((p) => p.startsWith(`${target.replace(/\/$/, '')}/`));
      if (!isFile && !isFolder) missing.push(`${doc}: ${link} (${target} is not in the tarball)`);
    }
  }
  console.log(`# ${checked} relative links in ${docs.length} shipped Markdown files: ${docs.join(', ')}`);
  assert.ok(checked >= 3, `only ${checked} relative links found: is the link parser broken?`);
  assert.deepEqual(missing, []);
});

test('typesVersions maps every exports subpath to the same types as exports', () => {
  const map = pkg.typesVersions?.['*'] ?? {};
  for (const [key, value] of Object.entries(pkg.exports)) {
    if (key === '.' || key === './package.json') continue;
    assert.equal(typeof value, 'object', `exports["${key}"] has no "types" condition`);
    assert.ok(value.types, `exports["${key}"] has no "types" condition`);
    assert.deepEqual(map[key.slice(2)], [value.types], `typesVersions["*"]["${key.slice(2)}"] should be ["${value.types}"], as exports["${key}"].types`);
  }
  for (const key of Object.keys(map)) assert.ok(pkg.exports[`./${key}`], `typesVersions maps "${key}", which is not an exports subpath`);
});

test('TypeScript (node10, node16, bundler): every subpath resolves to its types in the installed package and type-checks', () => {
  requireInstalled();
  const subpaths = Object.keys(pkg.exports).filter((k) => k !== './package.json');
  const lines = ['// generated by tests/package/registry.test.js: every subpath of attnmap'];
  subpaths.forEach((key, i) => {
    lines.push(`import * as E${i} from 'attnmap${key.slice(1)}';`, `export type K${i} = keyof typeof E${i};`);
  });
  lines.push(
    "import type { WasmInput } from 'attnmap/attention.wasm';",
    "import type { WasmInput as RelaxedInput } from 'attnmap/attention-relaxed.wasm';",
    "import type { CreateAttentionOptions } from 'attnmap';",
    'export const bytes: WasmInput = new Uint8Array(8);',
    'export const options: CreateAttentionOptions = { wasm: bytes as RelaxedInput };',
    '// a .wasm file has no value that every host agrees on: none is declared',
    '// @ts-expect-error no default export',
    "import wasmDefault from 'attnmap/attention.wasm';",
    'export { wasmDefault };',
  );
  fs.writeFileSync(path.join(app, 'subpaths.ts'), lines.join('\n') + '\n');
  const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
  for (const [label, compilerOptions] of [
    ['node10', { module: 'es2022', moduleResolution: 'node10' }],
    ['node16', { module: 'node16', moduleResolution: 'node16' }],
    ['bundler', { module: 'esnext', moduleResolution: 'bundler' }],
  ]) {
    const config = path.join(app, `tsconfig.${label}.json`);
    fs.writeFileSync(config, JSON.stringify({
      compilerOptions: { ...compilerOptions, target: 'es2022', lib: ['es2022', 'dom', 'dom.iterable'], strict: true, noEmit: true, skipLibCheck: false, types: [] },
      files: ['subpaths.ts'],
    }));
    let trace;
    try {
      trace = node([tsc, '-p', config, '--traceResolution'], { cwd: app });
    } catch (e) {
      const errors = `${e.stdout}`.split('\n').filter((l) => /error TS/.test(l)).join('\n');
      assert.fail(`tsc (${label}) failed:\n${errors || e.stdout + e.stderr}`);
    }
    const resolved = new Map();
    for (const [, spec, file] of trace.matchAll(/Module name '(attnmap[^']*)' was successfully resolved to '([^']+)'/g)) {
      if (!resolved.has(spec)) resolved.set(spec, file);
    }
    for (const key of subpaths) {
      const spec = `attnmap${key.slice(1)}`;
      const types = typeof pkg.exports[key] === 'object' ? pkg.exports[key].types : pkg.types;
      const expected = fs.realpathSync(path.join(installed, types));
      assert.ok(resolved.has(spec), `${label}: ${spec} did not resolve`);
      assert.equal(fs.realpathSync(resolved.get(spec)), expected, `${label}: ${spec}`);
    }
    console.log(`# tsc ${label}: ${subpaths.length} subpaths resolved to their types`);
  }
});

test('the CLI from the tarball: attnmap --version and -v print the package version', () => {
  requireInstalled();
  const bin = path.join(app, 'node_modules/.bin/attnmap');
  assert.equal(JSON.parse(fs.readFileSync(path.join(unpacked, 'package.json'), 'utf8')).version, pkg.version);
  for (const flag of ['--version', '-v']) assert.equal(sh(bin, [flag], { cwd: app }), `${pkg.version}\n`, `attnmap ${flag}`);
});

test('the shipped c_src/Makefile builds the C library from the unpacked tarball (make -C c_src)', { skip: spawnSync('make', ['--version']).error && 'no make' }, () => {
  assert.ok(packed.has('c_src/Makefile'), 'c_src/Makefile is not in the tarball');
  sh('make', ['-s', '-C', path.join(unpacked, 'c_src')]);
  assert.ok(fs.statSync(path.join(unpacked, 'build/native/libattention.a')).size > 0, 'build/native/libattention.a');
});

test('the sizes quoted in README.md and docs/ are the files\' sizes: node scripts/sizes.js --check', () => {
  const r = spawnSync(process.execPath, [path.join(root, 'scripts/sizes.js'), '--check'], { cwd: root, encoding: 'utf8' });
  assert.equal(r.status, 0, `scripts/sizes.js --check:\n${r.stderr}${r.stdout}\n(run node scripts/sizes.js to rewrite the marked sizes)`);
  console.log(`# ${r.stdout.trim()}`);
});

test('CHANGELOG.md: an Unreleased section, then released versions newest first, package.json\'s the newest; each tagged v<version> where the clone has tags', () => {
  const text = fs.readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8');
  const heads = [...text.matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d\d-\d\d))?/gm)].map(([, v, date]) => ({ v, date }));
  assert.equal(heads[0]?.v, 'Unreleased', 'the first section is [Unreleased]');
  const released = heads.slice(1);
  assert.ok(released.length > 0, 'at least one released version');
  for (const { v, date } of released) {
    assert.match(v, /^\d+\.\d+\.\d+$/, `version ${v}`);
    assert.ok(date, `version ${v} has a date`);
  }
  const key = (v) => v.split('.').map(Number).reduce((a, x) => a * 1e6 + x, 0);
  for (let i = 1; i < released.length; i++) assert.ok(key(released[i - 1].v) > key(released[i].v), 'newest first');
  assert.equal(released[0].v, pkg.version, 'package.json\'s version is the newest released one (bump both together)');
  // a shallow or tag-less clone (CI's) cannot say; a clone with tags must have every release's
  const tags = spawnSync('git', ['tag', '--list', 'v*'], { cwd: root, encoding: 'utf8' }).stdout?.split('\n').filter(Boolean) ?? [];
  if (tags.length) for (const { v } of released) assert.ok(tags.includes(`v${v}`), `git tag v${v} (git tag -a v${v} <commit>)`);
});
