// axe-core over the page and the element's demo pages in Chromium (issue 24 item 17): WCAG 2.0
// and 2.1, levels A and AA, with the experimental rule label-content-name-mismatch that found
// every heatmap cell's name and text apart (18 on the page). The page is checked whole, after
// every section has rendered, in zh and en, light and dark, with a checkpoint loaded (its grid,
// the enlarged map, the head view and a generation) and with a load error shown; the element in
// tests/fixtures/element/section5.html and variants.html, light and dark. Each run must find
// nothing; what it finds is printed by rule and target.
//
//   node --test tests/browser/page-a11y.test.js
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../../scripts/serve.js';
import { root } from '../helpers.js';
import { launch, openPage, settled } from './browser.js';
import { axe, axeReport } from './axe.js';

const FIXTURES = 'tests/fixtures/element/';
const CKPT = path.join(root, 'tests/golden/gpt2/wide-f32');            // 3 layers × 4 heads, no tokenizer

let browser, server;

before(async () => {
  server = await startServer({ root, port: 0, allow: [FIXTURES] });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** Every section of the page drawn: scrolled through (the lazy ones render near the viewport), then idle. */
async function renderAll(page) {
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  for (let y = 0; y < height; y += 700) {
    await page.evaluate((top) => window.scrollTo(0, top), y);
    await page.waitForTimeout(30);
  }
  await page.waitForSelector('html[data-complete="true"]', { timeout: 60000 });
  await page.evaluate(() => window.scrollTo(0, 0));
}

/** A checkpoint, a text, a generation: the section's grid, enlarged map, head view and output line. */
async function loadCheckpoint(page) {
  await page.setInputFiles('input[name=checkpoint]', ['config.json', 'model.safetensors'].map((f) => path.join(CKPT, f)));
  await page.waitForSelector('#checkpoint-grid[data-state="ready"]', { timeout: 30000 });
  await page.fill('#model-text', '1 2 3 4 5');
  await page.waitForFunction(() => document.querySelector('#checkpoint-big svg')?.dataset.ids === '[1,2,3,4,5]');
  await page.fill('#model-max', '2');
  await page.click('#model-generate');
  await page.waitForSelector('#model-output[data-state="done"]', { timeout: 15000 });
}

for (const [lang, scheme] of [['zh', 'light'], ['zh', 'dark'], ['en', 'light'], ['en', 'dark']]) {
  test(`axe finds nothing on the page, ${lang}, ${scheme}, every section drawn and a checkpoint loaded`, async () => {
    const { page, context, errors } = await openPage(browser, `${server.url}index.html`, { colorScheme: scheme });
    try {
      if (lang === 'en') await page.click('#lang');
      await renderAll(page);
      await loadCheckpoint(page);
      const found = await axe(page);
      assert.deepEqual(found, [], axeReport(found, `(${lang}, ${scheme})`));
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });
}

test('axe finds nothing on the page with a load error shown (its folded detail) at 390 px', async () => {
  const { page, context, errors } = await openPage(browser, `${server.url}index.html`, { viewport: { width: 390, height: 900 } });
  try {
    await renderAll(page);
    await page.setInputFiles('input[name=checkpoint]', [
      { name: 'config.json', mimeType: 'application/json', buffer: fs.readFileSync(path.join(CKPT, 'config.json')) },
      { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.from('this is not weights') }]);
    await page.waitForSelector('#checkpoint-msg details');
    const found = await axe(page);
    assert.deepEqual(found, [], axeReport(found, 'with the error'));
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

for (const file of ['section5.html', 'variants.html']) {
  test(`axe finds nothing on the element's ${file}, light and dark`, async () => {
    for (const scheme of ['light', 'dark']) {
      const context = await browser.newContext({ viewport: { width: 820, height: 900 }, colorScheme: scheme });
      try {
        const page = await context.newPage();
        await page.goto(server.url + FIXTURES + file);
        await settled(page);
        const found = await axe(page);
        assert.deepEqual(found, [], axeReport(found, `on ${file} (${scheme})`));
      } finally {
        await context.close();
      }
    }
  });
}
