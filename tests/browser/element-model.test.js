// <attention-heatmap model="…"> in real Chromium (issue 16): the shipped toy (model="toy-zh") and a
// checkpoint folder fetched from the page's host, as ES modules and as the one-file embed (classic
// script, file://, strict CSP), the messages for missing and broken files, and what the embed
// without a model loads. Expected numbers: attnmap/model in Node on the same files, or the PyTorch
// golden data of tests/golden/gpt2/two-layer-f16-prefix/.
//
// Until the trained toy lands in web/models/toy-zh/, toy-zh is the stand-in
// tests/fixtures/element-model/toy-standin/ (scripts/build-model.js); the tests hold for both.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { startServer } from '../../scripts/serve.js';
import { BUDGET, OUT as EMBED, gzipSize } from '../../scripts/build-embed.js';
import { buildModelFiles, sourceOf } from '../../scripts/build-model.js';
import { loadModel } from '../../web/model/model.js';
import { root } from '../helpers.js';
import { launch, settled as settleAll } from './browser.js';

const FIXTURES = 'tests/fixtures/element-model/';
const GOLDEN = 'tests/golden/gpt2/two-layer-f16-prefix/';
const BERT = 'tests/golden/bert/bert-mlm-f32/';
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'";
const MODEL_FILES = ['web/dist/attnmap-model.js', 'web/dist/toy-zh.js'];

const server = await startServer({
  root,
  allow: [FIXTURES, GOLDEN, BERT, 'tests/fixtures/embed/', 'tests/fixtures/element/'],
  headers: (urlPath) => (/\/element-model\/csp-[^/]*\.html$/.test(urlPath) ? { 'content-security-policy': CSP } : {}),
});
const browser = await launch();
after(async () => { await browser.close(); await server.close(); });

// the toy in Node, on the files the element loads
const toy = await loadModel({ ...(await import('../../web/models/toy-zh/toy-zh.js')) });
function expected(text, layer, head) {
  const ids = toy.encode(text);
  const { data, shape } = toy.forward(ids, { attention: true }).attention[layer][head];
  return { ids, tokens: toy.tokens(ids), values: Array.from(data), shape };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A fixture over http (or { file: true } from disk), with its errors, CSP violations and requests (paths). */
async function open(fixture, { file = false, route } = {}) {
  const page = await browser.newPage({ viewport: { width: 820, height: 900 } });
  if (route) await page.route(...route);
  const log = { pageErrors: [], consoleErrors: [], requests: [] };
  page.on('pageerror', (e) => log.pageErrors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') log.consoleErrors.push(`${m.type()}: ${m.text()}`); });
  page.on('request', (r) => log.requests.push(decodeURIComponent(new URL(r.url()).pathname)));
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`), true);
  });
  const url = file ? pathToFileURL(path.join(root, fixture)).href : server.url + fixture;
  const response = await page.goto(url);
  return { page, log, response };
}

// the model loads first: a longer wait than browser.js's default
const settled = (page) => settleAll(page, 15000);

/** What one element shows: its svg's data-* attributes, cells, labels, message, loading state. */
function inspect(page, id) {
  return page.evaluate((id) => {
    const el = document.getElementById(id), sr = el.shadowRoot;
    const svg = sr.querySelector('[part="heatmap"]:not([hidden]) svg');
    const message = sr.querySelector('[part="message"]');
    return {
      svg: svg && { model: svg.dataset.model, layer: svg.dataset.layer, head: svg.dataset.head, ids: svg.dataset.ids },
      cells: svg ? [...svg.querySelectorAll('rect.cell')].map((r) => ({ row: +r.dataset.row, col: +r.dataset.col, value: Number(r.dataset.value) })) : [],
      labels: svg ? [...svg.querySelectorAll('.row-label')].map((t) => t.textContent) : [],
      title: svg?.querySelector('.attnmap-title')?.textContent ?? null,
      message: message.hidden ? null : [...message.querySelectorAll('p')].map((p) => p.textContent),
      busy: sr.querySelector('[part="root"]').getAttribute('aria-busy'),
      loadingShown: !sr.querySelector('.loading').hidden,
      error: el.error?.message ?? null,
    };
  }, id);
}

/** The cells in row-major order equal the expected values (the same wasm on both sides: 1e-6 allows nothing visible). */
function assertCells(cells, values, n, what) {
  assert.equal(cells.length, n * n, `${what}: ${n}×${n} cells`);
  const sorted = [...cells].sort((a, b) => a.row - b.row || a.col - b.col);
  sorted.forEach((c, p) => assert.ok(Math.abs(c.value - values[p]) <= 1e-6, `${what}: cell (${c.row}, ${c.col}) = ${c.value}, expected ${values[p]}`));
}

async function assertToy(page, id, { text, layer, head, model = 'toy-zh' }) {
  const e = expected(text, layer, head), r = await inspect(page, id);
  assert.equal(r.error, null, `#${id}: no error`);
  assert.deepEqual(r.svg, { model, layer: String(layer), head: String(head), ids: JSON.stringify(e.ids) }, `#${id}: the svg's data attributes`);
  assert.deepEqual(r.labels, e.tokens, `#${id}: the tokens label the rows`);
  assertCells(r.cells, e.values, e.ids.length, `#${id}`);
  assert.equal(r.busy, null, `#${id}: not busy once drawn`);
  return r;
}

/** Set attributes on an element and wait for its next attention-computed event. */
function rerender(page, id, attrs) {
  return page.evaluate(([id, attrs]) => new Promise((resolve, reject) => {
    const el = document.getElementById(id);
    el.addEventListener('attention-computed', (e) => resolve({ head: e.detail.head, layer: e.detail.layer, ids: e.detail.ids }), { once: true });
    setTimeout(() => reject(new Error(`#${id} did not re-render: ${el.error?.message}`)), 10000);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  }), [id, attrs]);
}

const count = (requests, ending) => requests.filter((p) => p.endsWith(ending)).length;

describe('<attention-heatmap model="…">', { concurrency: 3 }, () => {
  test(`model="toy-zh" (${sourceOf('toy-zh')}): data-model/-layer/-head/-ids, cells = model.forward in Node; head, layer and text re-render without loading again`, async () => {
    const { page, log } = await open(FIXTURES + 'toy.html');
    await settled(page);
    const a = await assertToy(page, 'a', { text: '猫吃鱼', layer: 0, head: 1 });
    assert.equal(a.title, '第 0 层 · 头 1');
    const b = await assertToy(page, 'b', { text: '狗喝奶', layer: 1, head: 3 });
    assert.equal(b.title, 'layer 1 · head 3');
    // the toy's data and the model code: one request each for both elements (ES modules)
    const loads = () => ({ toy: count(log.requests, '/web/models/toy-zh/toy-zh.js'), model: count(log.requests, '/web/model/model.js'), wasm: count(log.requests, '/web/wasm/attention-model-wasm.js') });
    assert.deepEqual(loads(), { toy: 1, model: 1, wasm: 1 });
    assert.equal(log.requests.filter((p) => p.startsWith('/web/dist/')).length, 0, 'the ES modules load no classic script');
    assert.deepEqual(await rerender(page, 'a', { head: '2' }), { head: 2, layer: 0, ids: expected('猫吃鱼', 0, 2).ids });
    await assertToy(page, 'a', { text: '猫吃鱼', layer: 0, head: 2 });
    await rerender(page, 'a', { layer: '1', text: '鸟吃虫' });
    await assertToy(page, 'a', { text: '鸟吃虫', layer: 1, head: 2 });
    assert.deepEqual(loads(), { toy: 1, model: 1, wasm: 1 }, 'nothing is loaded again');
    assert.deepEqual([log.pageErrors, log.consoleErrors], [[], []]);
    await page.screenshot({ path: '/tmp/element-model-toy.png', fullPage: true });
    await page.close();
  });

  // the model is held back until release(), so aria-busy must come; if it never does, the
  // harness's timeout stops the wait
  test('while the model loads: a loading line and aria-busy; then the heatmap, not busy', { timeout: 60000 }, async () => {
    let release;
    const held = new Promise((r) => { release = r; });
    const { page, log } = await open(FIXTURES + 'toy.html', { route: ['**/toy-zh.js', async (route) => { await held; await route.continue(); }] });
    while (!(await page.evaluate(() => document.getElementById('a')?.shadowRoot?.querySelector('[part="root"]')?.getAttribute('aria-busy')))) {
      await sleep(20);
    }
    const text = (id) => page.evaluate((id) => document.getElementById(id).shadowRoot.querySelector('.loading').textContent, id);
    const a = await inspect(page, 'a');
    assert.deepEqual([a.busy, a.loadingShown, a.svg, a.message, await text('a'), await text('b')], ['true', true, null, null, '正在加载模型…', 'Loading the model…']);
    release();
    await settled(page);
    await assertToy(page, 'a', { text: '猫吃鱼', layer: 0, head: 1 });
    assert.equal((await inspect(page, 'a')).loadingShown, false);
    assert.deepEqual([log.pageErrors, log.consoleErrors], [[], []]);
    await page.close();
  });

  test(`a checkpoint folder from the page's host under "${CSP}": every layer × head equals the PyTorch golden data; one fetch per file for all elements`, async () => {
    const { page, log, response } = await open(FIXTURES + 'csp-folder.html');
    assert.equal(response.headers()['content-security-policy'], CSP, 'the header is really sent');
    const golden = JSON.parse(fs.readFileSync(path.join(root, GOLDEN, 'expected.json'), 'utf8'));
    const seq = golden.sequences.find((s) => s.ids.length > 8);
    const { n_layer: L, n_head: H } = golden.config;
    await page.evaluate(([folder, ids, L, H]) => {
      for (let l = 0; l < L; l++) {
        for (let h = 0; h < H; h++) {
          const el = Object.assign(document.createElement('attention-heatmap'), { id: `m${l}${h}` });
          for (const [k, v] of Object.entries({ model: folder, ids: JSON.stringify(ids), layer: l, head: h, decimals: 3 })) el.setAttribute(k, v);
          document.getElementById('main').append(el);
        }
      }
    }, [`/${GOLDEN}`, seq.ids, L, H]);
    await settled(page);
    const n = seq.ids.length;
    for (let l = 0; l < L; l++) {
      for (let h = 0; h < H; h++) {
        const r = await inspect(page, `m${l}${h}`);
        assert.equal(r.error, null);
        assert.deepEqual(r.svg, { model: `/${GOLDEN}`, layer: String(l), head: String(h), ids: JSON.stringify(seq.ids) });
        assert.deepEqual(r.labels, seq.ids.map(String), 'without a tokenizer the ids label the rows');
        const sorted = [...r.cells].sort((a, b) => a.row - b.row || a.col - b.col);
        assert.equal(sorted.length, n * n);
        // float16 weights, float32 maths against PyTorch's float64: the golden file's own bound is 6.6e-7
        sorted.forEach((c) => assert.ok(Math.abs(c.value - seq.attention[l][h][c.row][c.col]) <= 2e-6,
          `layer ${l} head ${h} (${c.row}, ${c.col}): ${c.value} vs ${seq.attention[l][h][c.row][c.col]}`));
        assert.equal(p0(sorted), n * (n - 1) / 2, 'the causal upper triangle is 0');
      }
    }
    for (const f of ['config.json', 'model.safetensors', 'vocab.json', 'vocab.txt']) assert.equal(count(log.requests, `/${GOLDEN}${f}`), 1, `${f} fetched once for ${L * H} elements`);
    assert.equal(count(log.requests, '/merges.txt'), 0, 'no vocab.json: merges.txt is not asked for');
    assert.deepEqual(await page.evaluate(() => window.__violations), [], 'CSP violations');
    assert.deepEqual(log.pageErrors, []);
    // the two optional tokenizer files answer 404 (the browser logs them); nothing else
    assert.deepEqual(log.consoleErrors.filter((m) => !/404/.test(m)), []);
    await page.close();
  });

  test('a BERT folder (an encoder): every head equals the PyTorch golden data, no causal triangle; text gets [CLS] … [SEP]', async () => {
    const { page, log } = await open(FIXTURES + 'csp-folder.html');
    const golden = JSON.parse(fs.readFileSync(path.join(root, BERT, 'expected.json'), 'utf8'));
    const seq = golden.sequences[0], n = seq.ids.length, H = golden.config.heads;
    await page.evaluate(([folder, ids, H]) => {
      const add = (id, attrs) => {
        const el = Object.assign(document.createElement('attention-heatmap'), { id });
        for (const [k, v] of Object.entries({ model: folder, decimals: 4, ...attrs })) el.setAttribute(k, v);
        document.getElementById('main').append(el);
      };
      for (let h = 0; h < H; h++) add(`b${h}`, { ids: JSON.stringify(ids), head: h });
      add('text', { text: '猫吃[MASK]' });
    }, [`/${BERT}`, seq.ids, H]);
    await settled(page);
    for (let h = 0; h < H; h++) {
      const r = await inspect(page, `b${h}`);
      assert.equal(r.error, null);
      const sorted = [...r.cells].sort((a, b) => a.row - b.row || a.col - b.col);
      assert.equal(sorted.length, n * n);
      sorted.forEach((c) => assert.ok(Math.abs(c.value - seq.attention[0][h][c.row][c.col]) <= 1e-5, `head ${h} (${c.row}, ${c.col}): ${c.value} vs ${seq.attention[0][h][c.row][c.col]}`));
      assert.equal(p0(sorted), 0, 'bidirectional: no cell above the diagonal is 0');
    }
    const t = await inspect(page, 'text');
    assert.deepEqual(t.labels, ['[CLS]', '猫', '吃', '[MASK]', '[SEP]']);
    assert.equal(t.cells.length, 25);
    assert.deepEqual(log.pageErrors, []);
    await page.close();
  });

  test('missing and broken files, characters outside the vocabulary, a layer that does not exist: readable messages; the other elements keep working', async () => {
    const { page, log } = await open(FIXTURES + 'errors.html');
    await settled(page);
    const at = (rel) => `${server.url}${FIXTURES}${rel}`;
    const missing = await inspect(page, 'missing');
    assert.deepEqual(missing.message, ['注意力热力图无法显示：模型文件缺失或损坏。', `${at('missing-folder/config.json')}: HTTP 404 Not Found`,
      '检查文件夹的地址：它要有 config.json 和 model.safetensors。']);
    assert.equal(missing.busy, null, 'not busy once the message shows');
    const noWeights = await inspect(page, 'no-weights');
    assert.equal(noWeights.message[0], 'The attention heatmap cannot be shown: the model\'s files are missing or broken.');
    assert.equal(noWeights.message[1], `${at('no-weights/model.safetensors')}: HTTP 404 Not Found (nor is there a model.safetensors.index.json for a sharded checkpoint)`);
    const broken = await inspect(page, 'broken');
    assert.equal(broken.message[0], noWeights.message[0]);
    assert.match(broken.message[1], /^INVALID_MODEL: .*model\.safetensors/, 'loadModel\'s message about the cut file');
    const vocab = await inspect(page, 'vocab');
    assert.deepEqual(vocab.message.slice(0, 2), ['The attention heatmap cannot be shown: the input is not valid.', `not in the model's vocabulary (${toy.config.vocab_size} tokens): 龙`]);
    const layer = await inspect(page, 'layer');
    const L = toy.config.n_layer;
    assert.equal(layer.message[1], `the layer attribute must be an integer from 0 to ${L - 1} (this model has ${L} layers); received "9"`);
    // the others: the section-5 heatmap, the toy (loaded although another element's text failed), a good folder
    const s5 = await page.evaluate(() => Array.from(document.getElementById('s5').result.weights.data.subarray(3, 6), (x) => x.toFixed(4)));
    assert.deepEqual(s5, ['0.3157', '0.3686', '0.3157']);
    await assertToy(page, 'toy', { text: '猫吃鱼', layer: 1, head: 0 });
    assert.equal((await inspect(page, 'standin')).svg.model, 'toy-standin/');
    // a folder that appears later works: the failure is not kept
    await page.evaluate(() => document.getElementById('missing').setAttribute('model', 'toy-standin/'));
    await sleep(50);
    await settled(page);
    assert.equal((await inspect(page, 'missing')).error, null);
    assert.deepEqual(log.pageErrors, []);
    assert.deepEqual(log.consoleErrors.filter((m) => !/404/.test(m)), [], 'only the 404s of the missing files');
    await page.screenshot({ path: '/tmp/element-model-errors.png', fullPage: true });
    await page.close();
  });

  test('the one-file embed from file:// with model="toy-zh": web/dist/attnmap-model.js and web/dist/toy-zh.js load as classic scripts, once', async () => {
    const { page, log } = await open(FIXTURES + 'embed-classic.html', { file: true });
    assert.ok(page.url().startsWith('file://'));
    await settled(page);
    await assertToy(page, 'a', { text: '猫吃鱼', layer: 0, head: 1 });
    await assertToy(page, 'b', { text: '狗喝奶', layer: 1, head: 3 });
    await rerender(page, 'a', { head: '3' });
    await assertToy(page, 'a', { text: '猫吃鱼', layer: 0, head: 3 });
    const web = log.requests.filter((p) => p.includes('/web/')).map((p) => p.slice(p.indexOf('/web/') + 1));
    assert.deepEqual(web, ['web/dist/attention-heatmap.min.js', ...MODEL_FILES], 'the embed, then the two classic scripts, each once');
    const scripts = await page.evaluate(() => [...document.querySelectorAll('script')].map((s) => ({ src: s.src.slice(s.src.indexOf('/web/') + 1), type: s.type })));
    assert.deepEqual(scripts.slice(1).map((s) => s.type), ['', ''], 'classic <script src>, not modules');
    assert.deepEqual([log.pageErrors, log.consoleErrors], [[], []]);
    await page.close();
  });

  for (const [fixture, what] of [['csp-embed-classic.html', `classic, CSP "${CSP}"`], ['embed-module.html', '<script type="module" src>']]) {
    test(`the one-file embed over http (${what}) finds the model scripts beside itself`, async () => {
      const { page, log } = await open(FIXTURES + fixture);
      await settled(page);
      await assertToy(page, 'a', { text: '猫吃鱼', layer: 0, head: 1 });
      await assertToy(page, 'b', { text: '狗喝奶', layer: 1, head: 3 });
      for (const f of MODEL_FILES) assert.equal(count(log.requests, `/${f}`), 1, f);
      assert.deepEqual(await page.evaluate(() => window.__violations), [], 'CSP violations');
      assert.deepEqual([log.pageErrors, log.consoleErrors], [[], []]);
      await page.close();
    });
  }

  test('the embed without a model attribute requests neither model file (file:// and http)', async () => {
    for (const file of [true, false]) {
      const { page, log } = await open('tests/fixtures/embed/classic.html', { file });
      await settled(page);
      assert.equal(await page.evaluate(() => document.getElementById('s5').result.weights.data.length), 9);
      const asked = log.requests.filter((p) => /attnmap-model\.js|toy-zh\.js|\/web\/model/.test(p));
      assert.deepEqual(asked, [], `file: ${file}`);
      assert.deepEqual(await page.evaluate(() => Object.keys(globalThis).filter((k) => k.startsWith('__attnmap'))), []);
      await page.close();
    }
  });
});

const p0 = (cells) => cells.filter((c) => c.col > c.row && c.value === 0).length;

describe('the model files and sizes', () => {
  test('node scripts/build-model.js --check: the generated files are fresh', () => {
    const r = spawnSync(process.execPath, ['scripts/build-model.js', '--check'], { cwd: root, encoding: 'utf8' });
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  });

  test('sizes: the embed stays within its budget and holds no model code; the model files, gzipped', async () => {
    const embed = fs.readFileSync(EMBED);
    const gz = gzipSize(embed);
    const lines = [`  ${path.relative(root, EMBED).padEnd(36)} ${String(gz).padStart(7)} B gz (budget ${BUDGET} B)`];
    for (const { rel, bytes } of await buildModelFiles()) lines.push(`  ${rel.padEnd(36)} ${String(gzipSize(bytes)).padStart(7)} B gz, ${bytes.length} B`);
    console.log(`# model mode, gzip -9:\n${lines.join('\n')}`);
    assert.ok(gz <= BUDGET, `the embed is ${gz} B gzipped, over its budget of ${BUDGET} B`);
    const text = embed.toString('latin1');
    const modelWasm = Buffer.from((await import('../../web/wasm/attention-model-wasm.js')).default, 'base64');
    assert.ok(!text.includes(modelWasm.subarray(0, 64).toString('hex')) && !text.includes(modelWasm.subarray(0, 48).toString('base64')), 'no model wasm inside');
    for (const name of ['loadModel', 'fetchCheckpoint', 'safetensors', 'wordpiece']) assert.ok(!text.includes(name), `${name} is not inside the embed`);
    const page = fs.readFileSync(path.join(root, 'web/dist/page.js'), 'latin1');
    assert.ok(!page.includes(modelWasm.subarray(0, 48).toString('base64')), 'no model wasm inside web/dist/page.js');
  });
});
