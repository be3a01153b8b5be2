// hub.test.js - models by name in Chromium (issue 23), against the mock hub on loopback (two
// origins: the hub and its download host; the page is a third): the page's "load from Hugging
// Face" panel shows the size first, downloads with progress on the reader's word, lists what it
// keeps; a second visit loads it with the mock stopped (the Cache API); the element's
// model="…/resolve/main/" loads a folder from the hub across origins and the download host's
// redirect (the element fetches on each visit: the Cache API is the panel's and loadModel's).
// Numbers: PyTorch's (tests/golden/llama/qwen2-bf16).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../../scripts/serve.js';
import { startMockHub } from '../fixtures/hub/mock-hub.js';
import { assertClose, root } from '../helpers.js';
import { goldenGguf } from '../golden-gguf.js';
import { launch } from './browser.js';

const GOLDEN = path.join(root, 'tests/golden/llama/qwen2-bf16');
const EXPECTED = JSON.parse(fs.readFileSync(path.join(GOLDEN, 'expected.json'), 'utf8'));
const FILES = Object.fromEntries(['config.json', 'model.safetensors'].map((f) => [f, fs.readFileSync(path.join(GOLDEN, f))]));
// a GGUF repo: the same checkpoint as llama.cpp writes it, twice (two "quantizations"), and a projector
const GGUF = goldenGguf();
const REPOS = {
  'attnmap/qwen2': { commit: 'e'.repeat(40), files: { ...FILES, 'pytorch_model.bin': Buffer.alloc(30000, 1) } },
  'attnmap/qwen2-GGUF': { commit: 'd'.repeat(40), files: { 'qwen2-a.gguf': GGUF, 'qwen2-b.gguf': GGUF, 'mmproj-qwen2-f16.gguf': Buffer.alloc(64, 3), 'README.md': '# qwen2\n' } },
};

let browser, server, hub;
before(async () => {
  server = await startServer({ root, port: 0, allow: ['test-results/hub/'] });
  browser = await launch();
});
after(async () => { await browser?.close(); await server?.close(); await hub?.stop().catch(() => {}); });

const seq = EXPECTED.sequences[1];

async function gridOf(page) {
  await page.fill('#model-text', seq.ids.join(' '));
  await page.waitForFunction((want) => document.querySelector('#checkpoint-grid')?.dataset.state === 'ready' &&
    document.querySelector('#checkpoint-grid button.thumb svg')?.dataset.ids === want, JSON.stringify(seq.ids), { timeout: 30000 });
  return page.$$eval('#checkpoint-grid button.thumb', (bs) => bs.map((b) => ({
    layer: Number(b.dataset.layer), head: Number(b.dataset.head),
    cells: [...b.querySelectorAll('rect.cell')].map((r) => [Number(r.dataset.row), Number(r.dataset.col), Number(r.dataset.value)]),
  })));
}

function assertGrid(maps) {
  const n = seq.ids.length;
  assert.equal(maps.length, EXPECTED.config.layers * EXPECTED.config.heads);
  for (const m of maps) {
    const got = Array.from({ length: n }, () => new Array(n).fill(0));
    for (const [r, c, v] of m.cells) got[r][c] = v;
    assertClose(got.flat(), seq.attention[m.layer][m.head].flat(), `layer ${m.layer} head ${m.head}`, { atol: 1e-5, rtol: 1e-5 });
  }
}

test('the page: size first, one question, progress, PyTorch\'s maps; the second visit loads from the Cache API with the hub stopped', async () => {
  hub = await startMockHub({ repos: REPOS });
  const context = await browser.newContext();
  const url = `${server.url}index.html?hub=${encodeURIComponent(hub.url)}`;
  try {
    let page = await context.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(url);
    await page.waitForSelector('html[data-complete="true"]');
    assert.equal(hub.requests.length, 0, 'the page asks the hub nothing until the reader does');
    await page.fill('#hub-id', 'attnmap/qwen2');
    await page.click('#hub-check');
    await page.waitForSelector('#hub-ask:not([hidden])', { timeout: 15000 });
    const size = FILES['config.json'].length + FILES['model.safetensors'].length;
    // the page writes sizes from 10 kB up as whole kB (this folder: tens of kB)
    assert.ok(size >= 10_000 && size < 1e6, `the fixture's size ${size} B is in the whole-kB range`);
    const kB = `${Math.round(size / 1000)} kB`;
    assert.match(await page.textContent('#hub-ask-text'), new RegExp(`attnmap/qwen2：要下载 2 个文件，共 ${kB}`));
    const before = hub.requests.filter((r) => /\/resolve\//.test(r.path)).length;
    assert.equal(before, 0, 'nothing downloaded before the reader says yes');
    await page.click('#hub-go');
    await page.waitForSelector('#checkpoint-model:not([hidden])', { timeout: 30000 });
    assertGrid(await gridOf(page));
    assert.ok(!hub.requests.some((r) => r.path.endsWith('.bin')), 'never the .bin');
    assert.match(await page.textContent('#hub-cached'), new RegExp(`attnmap/qwen2 main · ${kB}`));
    assert.deepEqual(problems, []);
    await page.close();
    await hub.stop();
    // the second visit: no hub at all
    page = await context.newPage();
    await page.goto(url);
    await page.waitForSelector('html[data-complete="true"]');
    await page.waitForFunction(() => document.querySelectorAll('#hub-cached li').length === 1, null, { timeout: 15000 });
    await page.fill('#hub-id', 'attnmap/qwen2');
    await page.click('#hub-check');
    await page.waitForSelector('#checkpoint-model:not([hidden])', { timeout: 30000 });
    assertGrid(await gridOf(page));
    assert.equal(await page.textContent('#hub-msg'), '');
    // delete: the list empties, and the Cache API holds nothing of it
    await page.click('#hub-cached button[data-repo="attnmap/qwen2"]');
    await page.waitForFunction(() => document.querySelectorAll('#hub-cached li').length === 0, null, { timeout: 15000 });
    assert.equal(await page.evaluate(async () => (await (await caches.open('attnmap-models')).keys()).length), 0);
    await page.locator('#hub').screenshot({ path: '/tmp/page-hub-1280.png' });
  } finally {
    await context.close();
  }
});

test('the element: model="http://hub/attnmap/qwen2/resolve/main/" (any absolute folder URL) loads across origins and redirects', async () => {
  hub = await startMockHub({ repos: REPOS });
  const dir = path.join(root, 'test-results/hub');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'element.html'), '<!doctype html><meta charset="utf-8"><script type="module" src="../../web/element/attention-heatmap.js"></script>' +
    `<attention-heatmap id="a" model="${hub.url}/attnmap/qwen2/resolve/main/" ids="${JSON.stringify(seq.ids)}" layer="1" head="2"></attention-heatmap>`);
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${server.url}test-results/hub/element.html`);
    await page.waitForFunction(() => { const e = document.getElementById('a'); return e.result || e.error; }, null, { timeout: 30000 });
    const got = await page.evaluate(() => {
      const e = document.getElementById('a');
      return { error: e.error?.message ?? null, cells: [...e.shadowRoot.querySelectorAll('rect.cell')].map((r) => [Number(r.dataset.row), Number(r.dataset.col), Number(r.dataset.value)]) };
    });
    assert.equal(got.error, null);
    const n = seq.ids.length, m = Array.from({ length: n }, () => new Array(n).fill(0));
    for (const [r, c, v] of got.cells) m[r][c] = v;
    assertClose(m.flat(), seq.attention[1][2].flat(), 'layer 1 head 2', { atol: 1e-5, rtol: 1e-5 });
    assert.ok(hub.requests.some((r) => r.host === 'cdn'), 'the weights came through the redirect to the download host');
  } finally {
    await context.close();
    await hub.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// a page that imports attnmap/model as window.attnmap, under test-results/hub/ (removed by the test): its folder
function apiPage() {
  const dir = path.join(root, 'test-results/hub');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'api.html'), '<!doctype html><meta charset="utf-8"><script type="module">window.attnmap = await import("../../web/model/model.js");</script>');
  return dir;
}

test('the API in a page: onProgress has each file\'s size before its first byte and ends on it; cache: false keeps nothing; a full quota is TOO_LARGE naming the bytes', async () => {
  hub = await startMockHub({ repos: REPOS });
  const dir = apiPage(), context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${server.url}test-results/hub/api.html`);
    await page.waitForFunction(() => window.attnmap);
    const got = await page.evaluate(async ({ hubUrl, ids }) => {
      const { loadModel, cachedModels, deleteCachedModel, AttentionError } = window.attnmap;
      const events = [];
      const model = await loadModel('attnmap/qwen2', { hubUrl, onProgress: (e) => events.push(e) });
      const logits = Array.from(model.forward(ids).logits.data.slice(0, 8));
      model.dispose();
      const cachedAfterLoad = (await cachedModels()).map((c) => c.repo);
      await deleteCachedModel('attnmap/qwen2');
      (await loadModel('attnmap/qwen2', { hubUrl, cache: false })).dispose();
      const keysNoCache = (await (await caches.open('attnmap-models')).keys()).length;
      const put = Cache.prototype.put;
      Cache.prototype.put = () => Promise.reject(new DOMException('The quota has been exceeded.', 'QuotaExceededError'));
      let quota;
      try { await loadModel('attnmap/qwen2', { hubUrl }); } catch (e) { quota = { isAttentionError: e instanceof AttentionError, code: e.code, message: e.message }; }
      Cache.prototype.put = put;
      return { events, logits, cachedAfterLoad, keysNoCache, quota };
    }, { hubUrl: hub.url, ids: seq.ids });
    for (const [file, bytes] of Object.entries(FILES)) {
      const of = got.events.filter((e) => e.file === file);
      assert.ok(of.length >= 2, `${file}: events`);
      assert.deepEqual(of[0], { file, loaded: 0, total: bytes.length }, `${file}: the total before the first byte`);
      assert.deepEqual(of.at(-1), { file, loaded: bytes.length, total: bytes.length }, `${file}: ends on its size`);
      for (let i = 1; i < of.length; i++) assert.ok(of[i].loaded >= of[i - 1].loaded, `${file}: loaded never goes back`);
    }
    assert.ok(!got.events.some((e) => e.file.endsWith('.bin')));
    assertClose(got.logits, seq.logits[0].slice(0, 8), 'logits of the downloaded model', { atol: 1e-4, rtol: 1e-4 });
    assert.deepEqual(got.cachedAfterLoad, ['attnmap/qwen2']);
    assert.equal(got.keysNoCache, 0, 'cache: false leaves the Cache API empty');
    assert.equal(got.quota?.isAttentionError, true, JSON.stringify(got.quota));
    assert.equal(got.quota.code, 'TOO_LARGE');
    // the first file put, config.json: its exact size
    assert.match(got.quota.message, new RegExp(`^the browser's storage refused ${FILES['config.json'].length} bytes for http://\\S+/attnmap/qwen2/resolve/e{40}/config\\.json \\(QuotaExceededError: its quota is full\\): free some space, or load with \\{ cache: false \\}$`));
  } finally {
    await context.close();
    await hub.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the API in a page: a GGUF repo by name with { file } (that one file fetched, with progress), PyTorch\'s logits; without file an error naming the files; a second load from the Cache API with the hub stopped', async () => {
  hub = await startMockHub({ repos: REPOS });
  const dir = apiPage(), context = await browser.newContext();
  const run = (page, what) => page.evaluate(async ({ hubUrl, ids, what }) => {
    const { loadModel, cachedModels } = window.attnmap;
    const caught = async (p) => { try { await p; return null; } catch (e) { return { name: e.name, code: e.code, message: e.message }; } };
    const logitsOf = async (file, onProgress) => {
      const model = await loadModel('attnmap/qwen2-GGUF', { hubUrl, file, onProgress });
      try { return Array.from(model.forward(ids).logits.data.slice(0, 8)); } finally { model.dispose(); }
    };
    if (what === 'first') {
      const events = [], several = await caught(loadModel('attnmap/qwen2-GGUF', { hubUrl }));
      const logits = await logitsOf('qwen2-a.gguf', (e) => events.push(e));
      const missing = await caught(loadModel('attnmap/qwen2-GGUF', { hubUrl, file: 'qwen2-c.gguf' }));
      return { several, logits, events, missing, cached: (await cachedModels()).filter((c) => c.repo === 'attnmap/qwen2-GGUF') };
    }
    return { logits: await logitsOf('qwen2-a.gguf'), other: await caught(loadModel('attnmap/qwen2-GGUF', { hubUrl, file: 'qwen2-b.gguf' })) };
  }, { hubUrl: hub.url, ids: seq.ids, what });
  try {
    const page = await context.newPage();
    await page.goto(`${server.url}test-results/hub/api.html`);
    await page.waitForFunction(() => window.attnmap);
    const got = await run(page, 'first');
    assert.equal(got.several?.code, 'INVALID_ARGUMENT', JSON.stringify(got.several));
    assert.match(got.several.message, /attnmap\/qwen2-GGUF holds 2 GGUF files; say which with \{ file \}.*qwen2-a\.gguf, qwen2-b\.gguf/);
    assertClose(got.logits, seq.logits[0].slice(0, 8), 'logits of the GGUF file downloaded', { atol: 1e-4, rtol: 1e-4 });
    const files = hub.requests.filter((r) => /\/resolve\//.test(r.path)).map((r) => r.path.split('/').pop());
    assert.deepEqual([...new Set(files)], ['qwen2-a.gguf'], 'the one file asked for is the one fetched');
    assert.deepEqual(got.events.filter((e) => e.loaded === 0)[0], { file: 'qwen2-a.gguf', loaded: 0, total: GGUF.length }, 'its size before its first byte');
    assert.ok(got.events.some((e) => e.file === 'qwen2-a.gguf' && e.loaded === GGUF.length), 'progress ends on its size');
    assert.equal(got.missing?.code, 'INVALID_ARGUMENT');
    assert.match(got.missing.message, /has no file qwen2-c\.gguf; its GGUF files: qwen2-a\.gguf, qwen2-b\.gguf/);
    assert.deepEqual(got.cached.map((c) => [c.source, c.gguf, c.bytes]), [['huggingface', ['qwen2-a.gguf'], GGUF.length]]);
    await hub.stop();
    const again = await run(page, 'again');
    assert.deepEqual(again.logits, got.logits, 'the same file from the Cache API, no hub');
    assert.equal(again.other?.name, 'ModelFetchError', `the other file is not kept: ${JSON.stringify(again.other)}`);
  } finally {
    await context.close();
    await hub.stop().catch(() => {});
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the page: a GGUF repo of several files offers them with their sizes (no projector); the one picked is the one downloaded, its maps PyTorch\'s', async () => {
  hub = await startMockHub({ repos: REPOS });
  const context = await browser.newContext({ viewport: { width: 390, height: 900 } });
  try {
    const page = await context.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${server.url}index.html?hub=${encodeURIComponent(hub.url)}`);
    await page.waitForSelector('html[data-complete="true"]');
    assert.equal(await page.isVisible('#hub-pick'), false, 'no file list before a repo of several is checked');
    await page.fill('#hub-id', 'attnmap/qwen2-GGUF');
    await page.click('#hub-check');
    await page.waitForSelector('#hub-pick:not([hidden])', { timeout: 15000 });
    const kB = `${Math.round(GGUF.length / 1000)} kB`;
    assert.deepEqual(await page.$$eval('#hub-file option', (os) => os.map((o) => o.textContent)), [`qwen2-a.gguf (${kB})`, `qwen2-b.gguf (${kB})`]);
    assert.match(await page.textContent('#hub-file-label'), /这个仓库有多个 GGUF 文件/);
    await page.selectOption('#hub-file', 'qwen2-b.gguf');
    assert.equal(await page.textContent('#hub-ask-text'), `attnmap/qwen2-GGUF · qwen2-b.gguf：要下载 1 个文件，共 ${kB}。下载后保存在浏览器里，下次不用联网。`);
    assert.equal(hub.requests.filter((r) => /\/resolve\//.test(r.path)).length, 0, 'nothing downloaded before the reader says yes');
    await page.locator('#hub').screenshot({ path: '/tmp/page-hub-gguf-390.png' });
    await page.click('#hub-go');
    await page.waitForSelector('#checkpoint-model:not([hidden])', { timeout: 30000 });
    assert.equal(await page.isVisible('#hub-pick'), false, 'the list goes once the download starts');
    assertGrid(await gridOf(page));
    assert.deepEqual([...new Set(hub.requests.filter((r) => /\/resolve\//.test(r.path)).map((r) => r.path.split('/').pop()))], ['qwen2-b.gguf']);
    assert.match(await page.textContent('#hub-cached'), /attnmap\/qwen2-GGUF main/);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
    await hub.stop().catch(() => {});
  }
});
