// The one-file embed, web/dist/attention-heatmap.min.js, loaded the ways a blog loads it, in real
// Chromium: a classic <script src> from file:// and over http, a <script type="module" src>, both
// under a strict Content-Security-Policy, the file loaded three times on one page, and elements
// that exist before the file defines them. Each page must show the section-5 heatmap with its
// numbers (row 吃: 0.3157 / 0.3686 / 0.3157) and the x + seed heatmap with PyTorch's (torch-rng is
// inside the file), load nothing from web/ but the one file, add no global and log no error.
// The element's full behaviour against the file: tests/browser/embed.test.js.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startServer } from '../../scripts/serve.js';
import { root, golden, assertClose } from '../helpers.js';
import { launch, settled } from './browser.js';

const FIXTURES = 'tests/fixtures/embed/';
const BUNDLE = 'web/dist/attention-heatmap.min.js';
const STRICT_CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";
const ROW1 = [0.3157, 0.3686, 0.3157];

const server = await startServer({
  root,
  allow: [FIXTURES, 'tests/fixtures/element/'],
  headers: (urlPath) => (/\/embed\/csp-[^/]*\.html$/.test(urlPath) ? { 'content-security-policy': STRICT_CSP } : {}),
});
const browser = await launch();
after(async () => { await browser.close(); await server.close(); });

/**
 * Open a fixture (over http, or from disk with { file: true }); record page errors, console errors
 * and warnings, CSP violations, calls of customElements.define, the globals the page's scripts add,
 * and every request.
 */
async function open(fixture, { file = false } = {}) {
  const page = await browser.newPage({ viewport: { width: 820, height: 900 } });
  const log = { pageErrors: [], consoleErrors: [], requests: [] };
  page.on('pageerror', (e) => log.pageErrors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') log.consoleErrors.push(`${m.type()}: ${m.text()}`); });
  page.on('request', (r) => log.requests.push(r.url()));
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`), true);
    window.__defined = [];
    const define = customElements.define;
    customElements.define = function (name, ...rest) { window.__defined.push(name); return define.call(this, name, ...rest); };
    window.__globals = Object.getOwnPropertyNames(window);
  });
  const url = file ? pathToFileURL(path.join(root, FIXTURES, fixture)).href : server.url + FIXTURES + fixture;
  const response = await page.goto(url);
  return { page, log, response };
}


/** The section-5 and the x + seed heatmaps of the fixture, and what the page's scripts left behind. */
async function assertRenders(page, log, what) {
  await settled(page);
  const r = await page.evaluate(() => {
    const cells = (id) => [...document.getElementById(id).shadowRoot.querySelectorAll('[part="heatmap"] rect.cell')]
      .map((c) => ({ row: Number(c.dataset.row), col: Number(c.dataset.col), value: Number(c.dataset.value),
        label: c.closest('.cell-group').getAttribute('aria-label') }));
    const error = (id) => document.getElementById(id).error?.message ?? null;
    const before = new Set(window.__globals);
    return {
      s5: cells('s5'), xs: cells('xs'), errors: [error('s5'), error('xs')],
      xsWeights: Array.from(document.getElementById('xs').result?.weights.data ?? []),
      defined: window.__defined,
      added: Object.getOwnPropertyNames(window).filter((g) => !before.has(g) && !['__globals', '__defined', '__violations'].includes(g)),
      violations: window.__violations,
    };
  });
  assert.deepEqual(r.errors, [null, null], `${what}: element errors`);
  const row1 = r.s5.filter((c) => c.row === 1).sort((a, b) => a.col - b.col);
  assert.equal(r.s5.length, 9, `${what}: 3×3 cells`);
  ROW1.forEach((e, j) => assert.ok(Math.abs(row1[j].value - e) <= 1e-4, `${what}: weights[1][${j}] = ${row1[j].value}, expected ${e} ± 1e-4`));
  assert.deepEqual(row1.map((c) => c.label), ['吃 → 猫: 0.3157', '吃 → 吃: 0.3686', '吃 → 鱼: 0.3157']);
  const c = golden().cases.find((x) => x.name === 'episode-snippet-seed-0');
  assertClose(r.xsWeights, c.expected_f32.weights, `${what}: x + seed weights (torch-rng inside the file)`);
  assertClose(r.xs.map((x) => x.value), c.expected_f32.weights, `${what}: x + seed weights in the DOM`);
  assert.deepEqual(r.defined, ['attention-heatmap'], `${what}: customElements.define called once`);
  assert.deepEqual(r.added, [], `${what}: globals added by the file`);
  assert.deepEqual(r.violations, [], `${what}: CSP violations`);
  assert.deepEqual(log.pageErrors, [], `${what}: page errors`);
  assert.deepEqual(log.consoleErrors, [], `${what}: console errors`);
  // from web/ only the one file: no module, no wasm, no torch-rng.js, no relaxed build
  const fromWeb = [...new Set(log.requests.filter((u) => new URL(u).pathname.includes('/web/')).map((u) => new URL(u).pathname))];
  assert.deepEqual(fromWeb.map((p) => p.slice(p.indexOf('/web/') + 1)), [BUNDLE], `${what}: requests to web/`);
}

describe('web/dist/attention-heatmap.min.js, loaded as a blog loads it', { concurrency: 3 }, () => {
  test('file://, classic <script src>: section 5 shows 0.3157 / 0.3686 / 0.3157, x + seed works, nothing else is loaded', async () => {
    const { page, log } = await open('classic.html', { file: true });
    assert.ok(page.url().startsWith('file://'));
    await assertRenders(page, log, 'file:// classic');
    await page.screenshot({ path: '/tmp/embed-file-classic.png', fullPage: true });
    await page.close();
  });

  test('http, classic <script src>', async () => {
    const { page, log } = await open('classic.html');
    await assertRenders(page, log, 'http classic');
    await page.close();
  });

  test('http, <script type="module" src>', async () => {
    const { page, log } = await open('module.html');
    await assertRenders(page, log, 'http module');
    await page.close();
  });

  for (const kind of ['classic', 'module']) {
    test(`CSP "${STRICT_CSP}", ${kind} script: renders with zero violations`, async () => {
      const { page, log, response } = await open(`csp-${kind}.html`);
      assert.equal(response.headers()['content-security-policy'], STRICT_CSP, 'the header is really sent');
      await assertRenders(page, log, `CSP ${kind}`);
      const sheets = await page.evaluate(() => document.getElementById('s5').shadowRoot.adoptedStyleSheets.length);
      assert.equal(sheets, 1, 'the element\'s one constructable stylesheet applies under the CSP');
      await page.close();
    });
  }

  test('loaded three times (classic, module, classic again): defined once, no error', async () => {
    const { page, log } = await open('twice.html');
    await assertRenders(page, log, 'three times');
    const runs = log.requests.filter((u) => u.endsWith(BUNDLE)).length;
    assert.ok(runs >= 2, `the file was requested ${runs} times`);
    await page.close();
  });

  test('elements made before the file defines them are upgraded with their properties; the class can be subclassed', async () => {
    // the behavioural half of element.test.js's "the class module defines nothing …", which
    // imports the source class module and so cannot run against the one file
    const { page, log } = await open('empty.html');
    const r = await page.evaluate(async (src) => {
      const el = document.createElement('attention-heatmap');
      el.tokens = ['猫', '吃', '鱼'];
      el.q = [[1.0, 0.2, 0.1, 0.0], [0.3, 0.8, 0.2, 0.1], [0.1, 0.1, 0.9, 0.3]];
      el.k = [[0.9, 0.1, 0.0, 0.2], [0.2, 0.7, 0.3, 0.0], [0.0, 0.2, 1.0, 0.1]];
      el.decimals = 3;
      document.getElementById('main').append(el);
      const done = new Promise((res) => el.addEventListener('attention-computed', (e) => res(e.detail), { once: true }));
      const script = document.createElement('script');
      script.src = src;
      document.head.append(script);
      const d = await done;
      const Defined = customElements.get('attention-heatmap');
      const sub = document.createElement('sub-heatmap');
      sub.setAttribute('tokens', 'a b');
      sub.q = [[1, 0], [0, 1]]; sub.k = [[1, 0], [0, 1]];
      document.getElementById('main').append(sub);
      const subDone = new Promise((res) => sub.addEventListener('attention-computed', (e) => res(e.detail), { once: true }));
      customElements.define('sub-heatmap', class extends Defined {});
      const s = await subDone;
      return {
        row1: Array.from(d.weights.data.subarray(3, 6), (x) => x.toFixed(4)), decimals: el.getAttribute('decimals'),
        text: el.shadowRoot.querySelectorAll('.cell-value')[4].textContent, own: Object.keys(el),
        upgraded: el instanceof Defined, sub: Array.from(s.weights.data, (x) => x.toFixed(4)), subIsElement: sub instanceof Defined,
      };
    }, `/${BUNDLE}`);
    assert.deepEqual(r, {
      row1: ['0.3157', '0.3686', '0.3157'], decimals: '3', text: '0.369', own: [], upgraded: true,
      sub: ['0.6698', '0.3302', '0.3302', '0.6698'], subIsElement: true,
    });
    assert.deepEqual(log.pageErrors, []);
    assert.deepEqual(log.consoleErrors, []);
    await page.close();
  });

  test('the server\'s alias (ATTNMAP_EMBED=bundle in the element tests) answers the define module\'s URL with the one file', async () => {
    const aliased = await startServer({ root, alias: { 'web/element/attention-heatmap.js': BUNDLE } });
    try {
      const res = await fetch(`${aliased.url}web/element/attention-heatmap.js`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8');
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(fs.readFileSync(path.join(root, BUNDLE))), 'the body is the one file');
      assert.equal((await fetch(`${aliased.url}web/element/attention-heatmap.js/`)).status, 404, 'only the exact path is aliased');
      const other = await fetch(`${aliased.url}web/element/attention-heatmap-element.js`);
      assert.ok((await other.text()).includes('class AttentionHeatmapElement'), 'other paths are served as they are');
    } finally {
      await aliased.close();
    }
  });
});
