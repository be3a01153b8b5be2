// The package in every bundler: one app (tests/fixtures/bundler-app/: the API, the heatmap, the
// element and the pool, imported by package name) built from the packed tarball by Vite 7 and 8,
// webpack 5, esbuild and Rollup 4 (the versions pinned in devDependencies), each with the command
// the README shows and nothing else, then opened in Chromium: the element's numbers, the pool
// bit for bit equal to attention(), no failed request, no console error, no Node module in the
// bundle.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { root } from '../helpers.js';
import { startServer } from '../../scripts/serve.js';
import { launch } from '../browser/browser.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-bundlers-'));
const app = path.join(tmp, 'app');
const bin = (rel) => path.join(root, 'node_modules', rel);
const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 24, ...opts });
const node = (args) => sh(process.execPath, args, { cwd: app, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });

let browser;
before(() => {
  const [info] = JSON.parse(sh('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: root }));
  fs.cpSync(path.join(root, 'tests/fixtures/bundler-app'), app, { recursive: true });
  sh('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', path.join(tmp, info.filename)], { cwd: app });
});
after(async () => {
  await browser?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

// the page for a bundle that is not Vite's: the fixture's page, its script tag pointing at the bundle
function writePage(out, tag) {
  const html = fs.readFileSync(path.join(app, 'index.html'), 'utf8'), entry = '<script type="module" src="./main.js"></script>';
  assert.ok(html.includes(entry), 'the fixture page has the script tag this test replaces');
  fs.writeFileSync(path.join(out, 'index.html'), html.replace(entry, tag));
}

function webpack(out, mode) {
  const log = node([bin('webpack-cli/bin/cli.js'), '--mode', mode, '--entry', './main.js', '--output-path', out]);
  writePage(out, '<script defer src="./main.js"></script>');
  // webpack's own words for a problem ("WARNING in …", "ERROR in …", "compiled with 1 warning"), not
  // module names that contain them (web/core/errors.js)
  return log.split('\n').filter((l) => /^(WARNING|ERROR)\b|compiled with \d+ (warning|error)/.test(l)).join('\n');
}

// Each bundler: the command a user runs (as the README shows it) and the page it leaves in `out`.
const BUNDLERS = {
  'Vite 8': (out) => node([bin('vite8/bin/vite.js'), 'build', '--logLevel', 'warn', '--outDir', out]),
  'Vite 7': (out) => node([bin('vite/bin/vite.js'), 'build', '--logLevel', 'warn', '--outDir', out]),
  'webpack 5': (out) => webpack(out, 'production'),
  'webpack 5 (development)': (out) => webpack(out, 'development'),
  esbuild: (out) => {
    const log = sh(bin('.bin/esbuild'), ['main.js', 'attention-worker=attnmap/pool/worker', '--bundle', '--format=esm',
      `--outdir=${out}`, '--log-level=warning'], { cwd: app });
    writePage(out, '<script type="module" src="./main.js"></script>');
    return log;
  },
  'Rollup 4': (out) => {
    const log = node([bin('rollup/dist/bin/rollup'), 'main=main.js', 'attention-worker=attnmap/pool/worker',
      '-p', '@rollup/plugin-node-resolve', '--format', 'es', '--dir', out, '--silent']);
    writePage(out, '<script type="module" src="./main.js"></script>');
    return log;
  },
};

// everything under `out`, as root-relative paths
const filesOf = (out) => fs.readdirSync(out, { recursive: true }).map((f) => f.split(path.sep).join('/'))
  .filter((f) => fs.statSync(path.join(out, f)).isFile());

// the app at `url` in Chromium, once main() and both elements have finished: what they show
async function openApp(url) {
  browser ??= await launch();
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  try {
    await page.goto(url);
    await page.waitForFunction(() => window.__result && ['s5', 'xs'].every((id) => document.getElementById(id)?.result || document.getElementById(id)?.error),
      null, { timeout: 30000 }).catch(() => assert.fail(`the app did not finish within 30 s: ${problems.join('; ') || 'no error seen'}`));
    const state = await page.evaluate(() => ({
      result: window.__result,
      s5: [...document.getElementById('s5').shadowRoot.querySelectorAll('[part="heatmap"] rect.cell')]
        .filter((r) => r.dataset.row === '1').sort((a, b) => a.dataset.col - b.dataset.col).map((r) => Number(r.dataset.value).toFixed(4)),
      xs: document.getElementById('xs').result?.weights?.shape,
      errors: ['s5', 'xs'].map((id) => document.getElementById(id).error?.message).filter(Boolean),
      staticCells: document.querySelectorAll('#static rect.cell').length,
    }));
    return { state, problems };
  } finally {
    await page.close();
  }
}

function checkApp({ state, problems }) {
  assert.deepEqual(state.result.error, undefined, 'main() finished');
  assert.deepEqual(state.errors, []);
  assert.deepEqual(state.s5, ['0.3157', '0.3686', '0.3157'], 'the element: the row of 吃 (episode 05, section 5)');
  assert.deepEqual(state.result.row1, ['0.3157', '0.3686', '0.3157'], 'the API');
  assert.deepEqual(state.xs, [3, 3], 'x + seed rendered (torch-rng loaded)');
  assert.equal(state.staticCells, 9, 'the heatmap renderer');
  assert.equal(state.result.poolSize, 2);
  assert.equal(state.result.poolLength, 96 * 16);
  assert.equal(state.result.poolEqual, true, 'the pool equals attention() bit for bit');
  assert.deepEqual(problems, []);
}

for (const [name, build] of Object.entries(BUNDLERS)) {
  test(`${name}: the app builds with no configuration; element, API, heatmap and pool work in Chromium`, { timeout: 180000 }, async () => {
    const out = path.join(tmp, `dist-${name.replace(/\W+/g, '-')}`);
    const log = build(out).trim();
    const files = filesOf(out);
    const size = (f) => fs.statSync(path.join(out, f)).size;
    console.log(`# ${name}: ${files.filter((f) => f.endsWith('.js')).map((f) => `${f} ${(size(f) / 1024).toFixed(1)} KiB`).join(', ')}`);
    assert.equal(log, '', `${name} printed warnings or errors`);
    // no Node module reaches a bundle for the browser (attention-pool-node.js is the "node" condition's)
    for (const f of files.filter((x) => x.endsWith('.js'))) {
      assert.doesNotMatch(fs.readFileSync(path.join(out, f), 'utf8'), /(\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)["'](node:)?(worker_threads|os)["']/, `${f} imports a Node module`);
    }
    const server = await startServer({ root: out, allow: filesOf(out) });
    try {
      checkApp(await openApp(server.url));
    } finally {
      await server.close();
    }
  });
}

// Vite's dev server, as `vite` runs it, with the options the README gives (Vite 7's dependency
// optimizer moves the pool into node_modules/.vite/deps/, away from its worker: excluded there)
const DEV = {
  'Vite 8': { module: 'vite8', options: {} },
  'Vite 7': { module: 'vite', options: { optimizeDeps: { exclude: ['attnmap'] } } },
};
for (const [name, { module, options }] of Object.entries(DEV)) {
  test(`${name} dev server: the app works in Chromium${options.optimizeDeps ? ' (optimizeDeps.exclude, as the README says)' : ' with no configuration'}`, { timeout: 120000 }, async () => {
    const { createServer } = await import(pathToFileURL(bin(`${module}/dist/node/index.js`)).href);
    const cacheDir = path.join(tmp, `vite-cache-${module}`);
    const server = await createServer({ root: app, configFile: false, cacheDir, logLevel: 'error', server: { host: '127.0.0.1', port: 0 }, ...options });
    try {
      await server.listen();
      checkApp(await openApp(server.resolvedUrls.local[0]));
    } finally {
      await server.close();
    }
  });
}
