// page-bert.test.js - an encoder (BERT, issue 25) in the page's checkpoint section, in Chromium:
// every layer × head is the full bidirectional square PyTorch computed (no causal triangle), for a
// pair of sentences with their token types; [CLS] and [SEP] are shown, and hidden on request with
// each row renormalised over what is left; the fill-mask box gives PyTorch's top tokens for
// 猫吃[MASK]; no generation controls; zh and en; axe finds nothing.
//
// Golden data: tests/golden/bert (make_golden.py: random-weight BertForMaskedLM in HF's layout,
// a float64 PyTorch reference).
//
//   node --test tests/browser/page-bert.test.js
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../../scripts/serve.js';
import { assertClose, root } from '../helpers.js';
import { launch, openPage } from './browser.js';
import { axe, axeReport } from './axe.js';

const GOLDEN = path.join(root, 'tests/golden/bert');
const expected = (name) => JSON.parse(fs.readFileSync(path.join(GOLDEN, name, 'expected.json'), 'utf8'));
const SPECIAL = new Set(['[CLS]', '[SEP]']);

let browser, server;
before(async () => {
  server = await startServer({ root, port: 0 });
  browser = await launch();
});
after(async () => { await browser?.close(); await server?.close(); });

async function loadFolder(page, name) {
  await page.setInputFiles('input[name=checkpoint]', ['config.json', 'model.safetensors', 'vocab.txt'].map((f) => path.join(GOLDEN, name, f)));
  await page.waitForSelector('#checkpoint-model:not([hidden])', { timeout: 30000 });
}

/** The grid, once it shows these ids: each thumbnail's cells as an n×n matrix (absent cells: null). */
async function gridMaps(page, ids) {
  await page.waitForFunction((want) => document.querySelector('#checkpoint-grid')?.dataset.state === 'ready' &&
    document.querySelector('#checkpoint-grid button.thumb svg')?.dataset.ids === want, JSON.stringify(ids), { timeout: 30000 });
  return page.$$eval('#checkpoint-grid button.thumb', (bs, n) => bs.map((b) => {
    const m = Array.from({ length: n }, () => new Array(n).fill(null));
    for (const r of b.querySelectorAll('rect.cell')) m[Number(r.dataset.row)][Number(r.dataset.col)] = Number(r.dataset.value);
    const svg = b.querySelector('svg');
    return { layer: Number(b.dataset.layer), head: Number(b.dataset.head), special: svg.dataset.special, first: svg.dataset.first ?? null, cells: b.querySelectorAll('rect.cell').length, m };
  }), ids.length);
}

test('a BERT pair on the page: every layer × head is PyTorch\'s full square; [CLS]/[SEP] shown, then hidden and renormalised', async () => {
  const g = expected('bert-pair-bf16'), seq = g.sequences[1];
  const { page, context, errors } = await openPage(browser, `${server.url}index.html`);
  try {
    await loadFolder(page, 'bert-pair-bf16');
    assert.equal(await page.inputValue('#model-text'), '猫吃[MASK]', 'an encoder whose vocabulary knows 猫: a gap to fill');
    assert.equal(await page.isVisible('#model-pair'), true, 'a second sentence can be typed');
    assert.equal(await page.isVisible('#model-generate'), false, 'an encoder has nothing to generate');
    assert.match(await page.textContent('#checkpoint-status'), /编码器，双向注意力/);
    // seq 1: [CLS] 见狗猫我的 [SEP] 有是追小 [SEP], token types 0 × 7 then 1 × 5
    await page.fill('#model-text', '见狗猫我的');
    await page.fill('#model-pair', '有是追小');
    const n = seq.ids.length, { layers: L, heads: H } = g.config;
    let maps = await gridMaps(page, seq.ids);
    assert.equal(maps.length, L * H);
    for (const m of maps) {
      assert.equal(m.cells, n * n, `layer ${m.layer} head ${m.head}: every cell drawn, no causal triangle`);
      assert.equal(m.special, 'shown');
      assert.equal(m.first, null, 'an encoder has no "first token" switch');
      assertClose(m.m.flat(), seq.attention[m.layer][m.head].flat(), `layer ${m.layer} head ${m.head}`, { atol: 1e-5, rtol: 1e-5 });
    }
    const big = () => page.$eval('#checkpoint-big svg', (svg) => ({
      rows: [...svg.querySelectorAll('.row-label')].map((t) => t.textContent), cells: svg.querySelectorAll('rect.cell').length,
      masked: svg.querySelectorAll('.masked-key').length,
    }));
    const labels = ['[CLS]', '见', '狗', '猫', '我', '的', '[SEP]', '有', '是', '追', '小', '[SEP]'];
    assert.deepEqual(await big(), { rows: labels, cells: n * n, masked: 0 });
    assert.match(await page.textContent('#checkpoint-big-note'), /没有因果遮蔽/);
    assert.equal(await page.isVisible('#headview'), true, 'the head view draws the encoder too');
    assert.match(await page.textContent('#model-fill'), /写上 \[MASK\]/, 'no gap in the text: the box says how to make one');

    // hide [CLS] and [SEP]: their rows and columns go, each row renormalised over the rest
    assert.equal(await page.textContent('#model-hide-first-label'), '隐藏 [CLS] 和 [SEP]');
    await page.check('#model-hide-first');
    const kept = labels.flatMap((t, i) => (SPECIAL.has(t) ? [] : [i]));
    maps = await gridMaps(page, kept.map((i) => seq.ids[i]));
    for (const m of maps) {
      assert.equal(m.special, 'hidden');
      const want = kept.map((i) => {
        const row = kept.map((j) => seq.attention[m.layer][m.head][i][j]), sum = row.reduce((a, b) => a + b, 0);
        return row.map((v) => v / sum);
      });
      assertClose(m.m.slice(0, kept.length).map((r) => r.slice(0, kept.length)).flat(), want.flat(), `hidden: layer ${m.layer} head ${m.head}`, { atol: 2e-5, rtol: 1e-5 });
    }
    assert.deepEqual((await big()).rows, kept.map((i) => labels[i]));
    assert.match(await page.textContent('#model-options-note'), /BERT 的很多头/);
    await page.locator('#checkpoint').screenshot({ path: '/tmp/page-bert-1280.png' });
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test('fill-mask on the page: 猫吃[MASK] gives PyTorch\'s five tokens and probabilities, at 390 px, in zh and en; axe finds nothing', async () => {
  const g = expected('bert-mlm-f32');
  const { page, context, errors } = await openPage(browser, `${server.url}index.html`, { viewport: { width: 390, height: 844 } });
  try {
    await loadFolder(page, 'bert-mlm-f32');
    await gridMaps(page, g.fill_mask.ids);
    await page.waitForSelector('#model-fill .fill-list');
    const fill = () => page.$$eval('#model-fill li', (ls) => ls.map((l) => ({
      index: Number(l.dataset.index), at: l.querySelector('.fill-at').textContent,
      top: [...l.querySelectorAll('.fill-tok')].map((t) => ({ id: Number(t.dataset.id), token: t.dataset.token, p: Number(t.dataset.p), shown: t.textContent })),
    })));
    let got = await fill();
    assert.equal(got.length, 1, 'one [MASK]');
    assert.equal(got[0].index, 3);
    assert.equal(got[0].at, '第 4 个 token：');
    assert.deepEqual(got[0].top.map((t) => [t.id, t.token]), g.fill_mask.top.map((t) => [t.id, t.token]));
    got[0].top.forEach((t, i) => {
      assert.ok(Math.abs(t.p - g.fill_mask.top[i].p) <= 1e-5, `p of ${t.token}: ${t.p} vs PyTorch ${g.fill_mask.top[i].p}`);
      assert.equal(t.shown, `${t.token} ${g.fill_mask.top[i].p.toFixed(3)}`);
    });
    assert.ok(await page.evaluate(() => document.scrollingElement.scrollWidth) <= 390, 'no sideways scroll at 390 px');
    await page.locator('#checkpoint-model').screenshot({ path: '/tmp/page-bert-fill-390.png' });

    await page.click('#lang');
    await page.waitForFunction(() => document.documentElement.lang === 'en');
    got = await fill();
    assert.equal(got[0].at, 'token 4: ');
    assert.match(await page.textContent('#model-fill .fill-lead'), /^Fill the gap/);
    assert.match(await page.textContent('#model-pair-label'), /^Second sentence/);
    assert.equal(await page.textContent('#model-hide-first-label'), 'Hide [CLS] and [SEP]');
    assert.match(await page.textContent('#checkpoint-big-note'), /no causal mask/);
    const found = await axe(page);
    assert.deepEqual(found, [], axeReport(found, 'with a BERT model loaded'));
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test('a BertModel without the masked-LM head: its maps, and a fill-mask box that says why it cannot fill', async () => {
  const { page, context, errors } = await openPage(browser, `${server.url}index.html`);
  try {
    await loadFolder(page, 'bert-encoder-f16');
    await page.waitForSelector('#checkpoint-grid[data-state="ready"]');
    assert.match(await page.textContent('#model-fill'), /没有掩码语言模型头/);
    // back to a causal model: its triangle, its switch and its generation controls return
    await page.setInputFiles('input[name=checkpoint]', ['config.json', 'model.safetensors'].map((f) => path.join(root, 'tests/golden/gpt2/wide-f32', f)));
    await page.waitForSelector('#checkpoint-grid[data-state="ready"] svg[data-first="shown"]', { timeout: 30000 });
    assert.equal(await page.isVisible('#model-generate'), true);
    assert.equal(await page.isVisible('#model-pair'), false);
    assert.equal(await page.isVisible('#model-fill'), false);
    assert.equal(await page.textContent('#model-hide-first-label'), '隐藏第一个 token');
    const n = JSON.parse(await page.getAttribute('#checkpoint-grid button.thumb svg', 'data-ids')).length;
    assert.equal(await page.locator('#checkpoint-grid button.thumb').first().locator('rect.cell').count(), n * (n + 1) / 2, 'the lower triangle only');
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});
