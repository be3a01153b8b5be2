// page-headview.test.js - the head view on the page (issue 24), in Chromium: a sharded Qwen2
// checkpoint (tests/golden/llama/qwen2-sharded-f32) loaded into the checkpoint section; the head
// view under its grid draws each head's lines with PyTorch's weights (data-value, opacity); a
// head's toggle hides its lines; hovering a token, or focusing it with the keyboard and moving
// with the arrows, keeps its lines alone; another layer draws that layer; zh → en renames it;
// "save as SVG" downloads the drawing. Screenshots at 390 and 1280 px in /tmp.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../../scripts/serve.js';
import { root } from '../helpers.js';
import { launch, openPage } from './browser.js';

const SHARDED = path.join(root, 'tests/golden/llama/qwen2-sharded-f32');
const EXPECTED = JSON.parse(fs.readFileSync(path.join(SHARDED, 'expected.json'), 'utf8'));
const seq = EXPECTED.sequences[1], n = seq.ids.length, { layers: L, heads: H } = EXPECTED.config;

let browser, server;
before(async () => { server = await startServer({ root, port: 0 }); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

const linesOf = (page) => page.$$eval('#headview-svg line.hv-line', (ls) => ls.map((l) => ({
  head: Number(l.dataset.head), row: Number(l.dataset.row), col: Number(l.dataset.col), value: Number(l.dataset.value), opacity: Number(l.getAttribute('stroke-opacity')),
})));

async function loaded(width) {
  const { page, context, errors: problems } = await openPage(browser, `${server.url}index.html`, { viewport: { width, height: 900 }, acceptDownloads: true });
  await page.setInputFiles('#checkpoint-files', fs.readdirSync(SHARDED).filter((f) => f !== 'expected.json').map((f) => path.join(SHARDED, f)));
  await page.waitForSelector('#checkpoint-model:not([hidden])', { timeout: 30000 });
  await page.fill('#model-text', seq.ids.join(' '));
  await page.waitForFunction((want) => document.querySelector('#headview-svg svg')?.dataset.ids === want, JSON.stringify(seq.ids), { timeout: 30000 });
  return { page, context, problems };
}

function assertLayer(lines, layer, hidden = []) {
  let want = 0;
  for (let h = 0; h < H; h++) {
    for (let r = 0; r < n; r++) {
      for (let c = 0; c <= r; c++) {
        const v = seq.attention[layer][h][r][c], line = lines.find((l) => l.head === h && l.row === r && l.col === c);
        if (hidden.includes(h) || !(v > 0)) { assert.equal(line, undefined, `layer ${layer} head ${h} (${r}, ${c}) not drawn`); continue; }
        want++;
        assert.ok(line, `layer ${layer} head ${h}: ${r} -> ${c} drawn`);
        assert.ok(Math.abs(line.value - v) <= 1e-5, `layer ${layer} head ${h} (${r}, ${c}): ${line.value} vs PyTorch's ${v}`);
        assert.ok(Math.abs(line.opacity - v) <= 5e-4 + 1e-5, 'opacity: the weight');
      }
    }
  }
  assert.equal(lines.length, want);
}

test('the head view of a loaded checkpoint: PyTorch\'s weights as lines; toggles, hover, keys, layers, language, save', async () => {
  const { page, context, problems } = await loaded(1280);
  try {
    assert.equal(await page.$eval('#headview-svg svg', (s) => s.dataset.layer), '0');
    assertLayer(await linesOf(page), 0);
    // a head's toggle hides it, and shows it again
    await page.click('#headview-heads button[data-head="1"]');
    assert.equal(await page.getAttribute('#headview-heads button[data-head="1"]', 'aria-pressed'), 'false');
    assertLayer(await linesOf(page), 0, [1]);
    await page.click('#headview-heads button[data-head="1"]');
    // hover a query: its row alone
    await page.hover('#headview-svg g.hv-token[data-side="query"][data-index="3"]');
    let lines = await linesOf(page);
    assert.ok(lines.length === H * 4 && lines.every((l) => l.row === 3), `hover: row 3 alone (${lines.length} lines)`);
    await page.mouse.move(0, 0);   // leaving the drawing: every line again
    await page.waitForFunction((k) => document.querySelectorAll('#headview-svg line.hv-line').length === k, H * n * (n + 1) / 2);
    // keyboard: focus a key, move down and across
    await page.focus('#headview-svg g.hv-token[data-side="key"][data-index="0"]');
    lines = await linesOf(page);
    assert.ok(lines.every((l) => l.col === 0) && lines.length === H * n, 'focus on key 0: its column');
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.evaluate(() => document.activeElement.dataset.index), '1');
    assert.ok((await linesOf(page)).every((l) => l.col === 1), 'ArrowDown: key 1');
    await page.keyboard.press('ArrowLeft');
    assert.ok((await linesOf(page)).every((l) => l.row === 1), 'ArrowLeft: query 1');
    await page.keyboard.press('Escape');
    // another layer
    await page.selectOption('#headview-layer', String(L - 1));
    assert.equal(await page.$eval('#headview-svg svg', (s) => s.dataset.layer), String(L - 1));
    assertLayer(await linesOf(page), L - 1);
    assert.match(await page.textContent('#headview-title'), /头视图/);
    assert.match(await page.textContent('#headview-heads button[data-head="0"]'), /^头 1（kv 1）$/);
    // save: an SVG file of what is drawn
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#headview-save')]);
    const file = fs.readFileSync(await download.path(), 'utf8');
    assert.match(download.suggestedFilename(), new RegExp(`^head-view-.*-layer${L}\\.svg$`), "layers counted from 1 in the file name");
    assert.ok(file.startsWith('<svg') && file.includes('class="hv-line"') && !file.includes('currentColor'));
    await page.locator('#headview').screenshot({ path: '/tmp/page-headview-1280.png' });
    // English
    await page.click('#lang');
    await page.waitForSelector('html[lang="en"]');
    assert.match(await page.textContent('#headview-title'), /Head view/);
    assert.match(await page.textContent('#headview-heads button[data-head="0"]'), /^head 1 \(kv 1\)$/);
    assert.equal(await page.$eval('#headview-svg svg title', (t) => t.textContent), `Head view of layer ${L}`, 'a checkpoint with no name: no bare ": " before it');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('the head view at 390 px: the drawing fits the card', async () => {
  const { page, context, problems } = await loaded(390);
  try {
    const box = await page.$eval('#headview', (e) => ({ card: e.getBoundingClientRect().width, svg: e.querySelector('svg').getBoundingClientRect().width }));
    assert.ok(box.svg <= box.card, `svg ${box.svg} px in a card of ${box.card} px`);
    await page.locator('#headview').screenshot({ path: '/tmp/page-headview-390.png' });
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});
