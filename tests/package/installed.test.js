// The package as a user installs it: `npm pack`, `npm install --prefer-offline <tarball>` into a fresh
// folder, then, there: every `exports` entry imported by Node, the bin, tsc on a consumer of
// every exported type (nodenext and bundler resolution), publint, the packed file list, and a
// Vite build of a page (tests/fixtures/vite-app/) served and opened in Chromium.
// tests/package.test.js covers the basics (self-import, a first tsc); this goes further.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { root } from '../helpers.js';
import { startServer } from '../../scripts/serve.js';
import { launch } from '../browser/browser.js';

const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-installed-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 24, ...opts });
const node = (args, opts) => sh(process.execPath, args, opts);

// pack, then install the tarball into a copy of the Vite app (it has no other dependency)
const [packInfo] = JSON.parse(sh('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: root }));
const tarball = path.join(tmp, packInfo.filename);
const app = path.join(tmp, 'app');
fs.cpSync(path.join(root, 'tests/fixtures/vite-app'), app, { recursive: true });
sh('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], { cwd: app });
const installed = path.join(app, 'node_modules/attnmap');
const packed = packInfo.files.map((f) => f.path).sort();

test('the packed files: the whitelist and nothing else, everything the exports map and the imports need', () => {
  const kib = (b) => `${(b / 1024).toFixed(1)} KiB`;
  console.log(`# ${packInfo.filename}: ${kib(packInfo.size)} packed, ${kib(packInfo.unpackedSize)} unpacked, ${packed.length} files`);
  for (const f of packInfo.files) console.log(`#   ${String(f.size).padStart(7)}  ${f.path}`);

  for (const f of packed) {
    assert.doesNotMatch(f, /(^|\/)(tests?|bench|scripts|node_modules|build|\.cache|\.ci|coverage|test-results|tmp)\//, `${f} should not be packed`);
    assert.doesNotMatch(f, /\.(tgz|log|orig|rej|swp)$|(^|\/)\.|-changed\.svg$|\.test\.js$/, `${f} should not be packed`);
    const whitelisted = ['package.json', 'README.md', 'LICENSE'].includes(f) || pkg.files.some((w) => f === w || f.startsWith(`${w.replace(/\/$/, '')}/`));
    assert.ok(whitelisted, `${f} is packed but not in "files"`);
  }
  for (const w of pkg.files) assert.ok(packed.some((f) => f === w || f.startsWith(`${w}/`)), `"files" lists ${w}, which is not packed (missing?)`);

  // every target of the exports map, main, types and bin
  const targets = [];
  const walk = (v) => { if (typeof v === 'string') targets.push(v); else if (v && typeof v === 'object') Object.values(v).forEach(walk); };
  walk(pkg.exports);
  targets.push(pkg.main, pkg.types, ...Object.values(pkg.bin ?? {}));
  for (const t of targets.filter(Boolean)) {
    const f = path.posix.normalize(t);
    assert.ok(packed.includes(f), `${t} (exports/main/types/bin) is not packed`);
  }

  // every relative import of a packed module, static or dynamic, .js or .d.ts, is packed too
  for (const f of packed.filter((p) => /\.(m?js|d\.ts)$/.test(p))) {
    const text = fs.readFileSync(path.join(installed, f), 'utf8');
    for (const [, spec] of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(f), spec));
      const candidates = f.endsWith('.d.ts') ? [target, target.replace(/\.js$/, '.d.ts')] : [target];
      assert.ok(candidates.some((c) => packed.includes(c)), `${f} imports ${spec}, which is not packed`);
    }
  }
  // the C sources ship with the header they include
  if (packed.some((f) => f.startsWith('c_src/'))) {
    for (const f of packed.filter((p) => p.endsWith('.c'))) {
      const text = fs.readFileSync(path.join(installed, f), 'utf8');
      for (const [, h] of text.matchAll(/#include "([^"]+)"/g)) assert.ok(packed.includes(`c_src/${h}`), `${f} includes ${h}, not packed`);
    }
    assert.equal(pkg.files.filter((f) => f.endsWith('.c')).length, fs.readdirSync(path.join(root, 'c_src')).filter((f) => f.endsWith('.c')).length,
      'every c_src/*.c is in "files" (a C user of the package needs them all)');
  }
});

test('Node ESM: every exports entry imports from the installed package; other paths are closed', () => {
  const check = `
    import fs from 'node:fs';
    const pkg = JSON.parse(fs.readFileSync(new URL(import.meta.resolve('attnmap/package.json')), 'utf8'));
    const out = {};
    for (const key of Object.keys(pkg.exports)) {
      const spec = 'attnmap' + key.slice(1);
      const url = import.meta.resolve(spec);
      if (!url.includes('/node_modules/attnmap/')) throw new Error(spec + ' resolved outside the installed package: ' + url);
      if (key.endsWith('.wasm') && !WebAssembly.validate(fs.readFileSync(new URL(url)))) {
        out[key] = 'does not validate here';   // the relaxed-SIMD build where the engine lacks it
      } else if (key.endsWith('.wasm')) {
        const { createAttention } = await import('attnmap');
        const attn = await createAttention({ wasm: fs.readFileSync(new URL(url)) });
        const w = attn.attention({ q: [[0.3, 0.8, 0.2, 0.1]], k: [[0.9, 0.1, 0.0, 0.2], [0.2, 0.7, 0.3, 0.0], [0.0, 0.2, 1.0, 0.1]], v: [[1], [2], [3]] }).weights;
        out[key] = Array.from(w.data, (x) => x.toFixed(4)).join(' ');
      } else if (key.endsWith('.json')) {
        out[key] = (await import(spec, { with: { type: 'json' } })).default.name;
      } else if (key === './pool/worker') {   // a worker script: imported outside a worker it refuses, by name
        out[key] = await import(spec).then(() => 'imported', (e) => 'throws: ' + e.message);
      } else {
        out[key] = Object.keys(await import(spec)).sort().join(',');
      }
    }
    for (const closed of ['attnmap/web/core/attention.js', 'attnmap/c_src/attention.h', 'attnmap/bin/attnmap.js']) {
      try { await import(closed); out[closed] = 'OPEN'; } catch (e) { out[closed] = e.code; }
    }
    console.log(JSON.stringify(out));`;
  const out = JSON.parse(node(['--input-type=module', '-e', check], { cwd: app }).trim());
  console.log(`# exports: ${JSON.stringify(out)}`);
  assert.match(out['.'], /\bcreateAttention\b/);
  assert.match(out['.'], /\bAttentionError\b/);
  assert.match(out['.'], /\btoRows\b/);
  assert.equal(out['./heatmap'], 'drawHeatmap,renderHeatmap');
  assert.equal(out['./head-view'], 'HEAD_COLOURS,renderHeadView');
  assert.match(out['./torch-rng'], /\bmanualSeed\b/);
  assert.match(out['./attention-heatmap'], /\bAttentionHeatmapElement\b/);
  assert.match(out['./attention-heatmap-element'], /\bAttentionHeatmapElement\b/);
  assert.equal(out['./attention.wasm'], '0.3157 0.3686 0.3157');
  // Node 20 runs relaxed SIMD only behind a flag: there the relaxed build must not validate
  assert.ok(['0.3157 0.3686 0.3157', 'does not validate here'].includes(out['./attention-relaxed.wasm']), out['./attention-relaxed.wasm']);
  assert.match(out['./pool'], /\bcreateAttentionPool\b/);
  assert.equal(out['./pool/worker'], 'throws: attnmap/pool/worker is the pool\'s worker script, started by createAttentionPool: import attnmap/pool instead');
  assert.equal(out['./package.json'], 'attnmap');
  for (const key of Object.keys(pkg.exports)) assert.ok(out[key], `exports["${key}"] was not checked`);
  for (const closed of ['attnmap/web/core/attention.js', 'attnmap/c_src/attention.h', 'attnmap/bin/attnmap.js']) {
    assert.equal(out[closed], 'ERR_PACKAGE_PATH_NOT_EXPORTED', `${closed} should not be importable`);
  }
});

test('the bin works from the install: npx attnmap svg', () => {
  const bin = path.join(app, 'node_modules/.bin/attnmap');
  assert.ok(fs.existsSync(bin), 'node_modules/.bin/attnmap');
  const svg = sh(bin, ['svg', '--tokens', '猫 吃 鱼', '--q', '[[1.0,0.2,0.1,0.0],[0.3,0.8,0.2,0.1],[0.1,0.1,0.9,0.3]]',
    '--k', '[[0.9,0.1,0.0,0.2],[0.2,0.7,0.3,0.0],[0.0,0.2,1.0,0.1]]', '--lang', 'en'], { cwd: app });
  assert.match(svg, /^<svg[\s\S]*<\/svg>\s*$/);
  assert.match(svg, /吃 → 猫: 0\.3157/);
});

test('TypeScript: a consumer of every exported type checks (nodenext and bundler resolution)', () => {
  // generated: every name each .d.ts exports, so that a new export is covered without editing this test
  const lines = ['// generated by tests/installed.test.js: every export of every entry point'];
  let i = 0;
  for (const [key, value] of Object.entries(pkg.exports)) {
    if (typeof value !== 'object' || !value.types) continue;
    const dts = fs.readFileSync(path.join(installed, value.types), 'utf8');
    const names = new Set();
    for (const [, kind, name] of dts.matchAll(/^export\s+(?:declare\s+)?(interface|type|class|function|const|let|enum|abstract class)\s+(\w+)/gm)) names.add(`${kind}:${name}`);
    for (const [, list] of dts.matchAll(/^export\s+(?:type\s+)?\{([^}]+)\}/gm)) {
      for (const n of list.split(',')) names.add(`type:${n.trim().split(/\s+as\s+/).pop().replace(/^type\s+/, '')}`);
    }
    const alias = `E${i++}`;
    lines.push(`import * as ${alias} from 'attnmap${key.slice(1)}';`);
    if (names.size === 0) {   // a script with no exports (the pool's worker): its types must still resolve
      assert.match(dts, /^export \{\};$/m, `${value.types} exports nothing and does not say so with \`export {};\``);
      lines.push(`export type All${alias} = typeof ${alias};`);
      continue;
    }
    const refs = [...names].map((n) => { const [kind, name] = n.split(':'); return ['function', 'const', 'let'].includes(kind) ? `typeof ${alias}.${name}` : `${alias}.${name}`; });
    lines.push(`export type All${alias} = [${refs.join(', ')}];`);
  }
  fs.writeFileSync(path.join(app, 'exports.generated.ts'), lines.join('\n') + '\n');
  const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
  for (const [label, compilerOptions] of [
    ['nodenext', { module: 'nodenext', moduleResolution: 'nodenext' }],
    ['bundler', { module: 'esnext', moduleResolution: 'bundler' }],
  ]) {
    const config = path.join(app, `tsconfig.${label}.json`);
    fs.writeFileSync(config, JSON.stringify({
      compilerOptions: { ...compilerOptions, target: 'es2022', lib: ['es2022', 'dom', 'dom.iterable'], strict: true, noEmit: true, skipLibCheck: false, types: [] },
      files: ['consumer.ts', 'exports.generated.ts'],
    }));
    try {
      node([tsc, '-p', config], { cwd: app });
    } catch (e) {
      assert.fail(`tsc (${label}) failed:\n${e.stdout}${e.stderr}`);
    }
  }
});

test('publint: no errors (warnings and suggestions listed)', async () => {
  const { publint } = await import('publint');
  const { formatMessage } = await import('publint/utils');
  // publint packs the repository itself (pack: 'npm'): only then can it tell files that exist but are not published
  const { messages, pkg: linted } = await publint({ pkgDir: root, pack: 'npm', level: 'suggestion' });
  for (const m of messages) console.log(`# publint ${m.type}: ${formatMessage(m, linted, { color: false })}`);
  if (messages.length === 0) console.log('# publint: all good');
  const errors = messages.filter((m) => m.type === 'error');
  assert.deepEqual(errors.map((m) => formatMessage(m, linted, { color: false })), []);
});

test('Vite: a page importing attnmap/attention-heatmap builds, and renders section 5 in Chromium', { timeout: 120000 }, async () => {
  const vite = path.join(root, 'node_modules/vite/bin/vite.js');
  const log = node([vite, 'build', '--logLevel', 'warn', '--emptyOutDir'], { cwd: app, env: { ...process.env, NO_COLOR: '1' } });
  if (log.trim()) console.log(log.trim().split('\n').map((l) => `# vite: ${l}`).join('\n'));
  const dist = path.join(app, 'dist');
  const files = fs.readdirSync(path.join(dist, 'assets'));
  const size = (f) => fs.statSync(path.join(dist, 'assets', f)).size;
  console.log(`# vite build: ${files.map((f) => `${f} ${(size(f) / 1024).toFixed(1)} KiB`).join(', ')}`);
  assert.ok(files.some((f) => f.endsWith('.wasm')), 'attention.wasm?url emitted the .wasm');
  assert.ok(files.filter((f) => f.endsWith('.js')).length >= 2, 'torch-rng.js is a separate chunk (dynamic import)');

  const server = await startServer({ root: dist, allow: ['assets/'] });
  const browser = await launch();
  try {
    const page = await browser.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
    page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(server.url);
    const start = Date.now();
    for (;;) {
      const ready = await page.evaluate(() => ['s5', 'xs', 'props'].every((id) => { const el = document.getElementById(id); return el && (el.result || el.error); }) &&
        document.querySelector('#api').textContent !== '');
      if (ready) break;
      // a limit that only stops a hang: a slow machine does not get near 60 s
      if (Date.now() - start > 60000) assert.fail(`the elements did not render (a hang: 60 s): ${problems.join('; ')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const state = await page.evaluate(() => {
      const cells = (id) => [...document.getElementById(id).shadowRoot.querySelectorAll('[part="heatmap"] rect.cell')].map((r) => ({
        row: Number(r.dataset.row), col: Number(r.dataset.col), value: Number(r.dataset.value),
        label: r.closest('.cell-group')?.getAttribute('aria-label'),
      }));
      const error = (id) => { const e = document.getElementById(id).error; return e ? `${e.name}: ${e.message}` : null; };
      return {
        s5: cells('s5'), props: cells('props'), xs: document.getElementById('xs').result?.weights?.shape,
        errors: ['s5', 'xs', 'props'].map(error).filter(Boolean),
        api: JSON.parse(document.querySelector('#api').textContent),
        events: window.__events.map((e) => e.id).sort(),
        staticCells: document.querySelectorAll('#static rect.cell').length,
      };
    });
    assert.deepEqual(state.errors, []);
    for (const id of ['s5', 'props']) {
      const row1 = state[id].filter((c) => c.row === 1).sort((a, b) => a.col - b.col);
      assert.deepEqual(row1.map((c) => c.value.toFixed(4)), ['0.3157', '0.3686', '0.3157'], `${id}: the row of 吃`);
      assert.equal(row1[0].label, '吃 → 猫: 0.3157', id);
    }
    assert.deepEqual(state.xs, [3, 3], 'x + seed rendered (torch-rng chunk loaded)');
    assert.deepEqual(state.api.embedded, ['0.3157', '0.3686', '0.3157']);
    assert.deepEqual(state.api.fetched, ['0.3157', '0.3686', '0.3157'], 'the .wasm fetched by URL');
    assert.equal(state.api.sameClass, true);
    assert.deepEqual(state.events, ['props', 's5', 'xs']);
    assert.equal(state.staticCells, 9);
    assert.ok(requests.every((u) => u.startsWith(server.url)), `requests outside the page's origin: ${requests.filter((u) => !u.startsWith(server.url))}`);
    assert.deepEqual(problems, []);
    await page.screenshot({ path: path.join(os.tmpdir(), 'attnmap-vite-app.png'), fullPage: true });
  } finally {
    await browser.close();
    await server.close();
  }
});
