// The page's RoPE section (issue 24, web/page/page-rope.js) in Chromium, over http: its numbers are
// the core's attn.rope and equal PyTorch's (tests/golden/rope.json, "page" cases, made by
// tests/golden/make_rope.py); the map of the sentence moved one place equals the original; the row
// of 吃 differs between 猫吃鱼 and 鱼吃猫; a zh/en switch changes every string; nothing overflows
// at 390 px.
//
//   node --test tests/browser/page-rope.test.js
//
// Screenshots for a person to look at: /tmp/rope-{desktop,phone,english}.png
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../../scripts/serve.js';
import { createAttention } from '../../web/core/attention.js';
import { ropeModel, focusRow } from '../../web/page/page-rope.js';
import * as WORDS from '../../web/page/page-rope-strings.js';
import { root, assertClose } from '../helpers.js';
import { launch, openPage } from './browser.js';

const GOLDEN = JSON.parse(fs.readFileSync(path.join(root, 'tests/golden/rope.json'), 'utf8'));
const pageCase = (tokens, seed, dk) => GOLDEN.page.find((c) => c.tokens.join('') === tokens && c.seed === seed && c.dk === dk);

let browser, server, attn;

before(async () => {
  attn = await createAttention();
  server = await startServer({ root, port: 0 });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** The page at hash, with the RoPE section scrolled to and drawn. */
async function open(hash = '', viewport) {
  const r = await openPage(browser, `${server.url}index.html${hash}`, viewport ? { viewport } : {});
  await r.page.locator('#rope').scrollIntoViewIfNeeded();
  await r.page.waitForSelector('#rope-shift-verdict[data-gap]', { state: 'attached', timeout: 30000 });
  return r;
}

const cells = (page, sel) => page.$$eval(`${sel} rect.cell`, (rs) => rs.map((r) => Number(r.dataset.value)));
const tableNumbers = (page) => page.$$eval('#rope-pairs tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent))));

// every text node of the section (labels of the maps included), for the language switch
const texts = (page) => page.$$eval('#rope h2, #rope h3, #rope p, #rope figcaption, #rope caption, #rope th, #rope svg title', (els) => els.map((e) => e.textContent.trim()));

test('the section shows the core\'s numbers, equal to PyTorch\'s for 猫吃鱼 and 鱼吃猫 (seed 0, d_k 8 and 4; seed 42)', async () => {
  const { page, context, errors } = await open();
  try {
    for (const [hash, seed, dk] of [['', 0, 8], ['#seed=42', 42, 8], ['#dk=4', 0, 4]]) {
      if (hash) {
        await page.goto('about:blank');
        await page.goto(`${server.url}index.html${hash}`);
        await page.waitForSelector('html[data-ready="true"]');
        await page.locator('#rope').scrollIntoViewIfNeeded();
        await page.waitForSelector('#rope-shift-verdict[data-gap]', { state: 'attached', timeout: 30000 });
      }
      const cat = pageCase('猫吃鱼', seed, dk), fish = pageCase('鱼吃猫', seed, dk);
      const m = ropeModel(attn, { tokens: ['猫', '吃', '鱼'], seed, dk });
      // the maps: the core's (to the bit) and PyTorch's (to the tolerance)
      assert.deepEqual(await cells(page, '#rope-shift-a'), m.weights.flat().map(Math.fround), `seed ${seed} d_k ${dk}: positions 0..2 = the core's`);
      assertClose(await cells(page, '#rope-shift-a'), cat.weights, `seed ${seed} d_k ${dk}: 猫吃鱼 vs PyTorch`);
      assertClose(await cells(page, '#rope-shift-b'), cat.weights_shifted, `seed ${seed} d_k ${dk}: 猫吃鱼 at 1..3 vs PyTorch`);
      assertClose(await cells(page, '#rope-order-a'), cat.weights, `seed ${seed} d_k ${dk}: order map 猫吃鱼`);
      assertClose(await cells(page, '#rope-order-b'), fish.weights, `seed ${seed} d_k ${dk}: order map 鱼吃猫`);
      // the pair table: 吃's q before and after, θ, the angle, as the core gives them (4 decimals)
      const i = focusRow(['猫', '吃', '鱼']);
      assert.equal(i, 1);
      assert.equal(await page.getAttribute('#rope-pairs table', 'data-row'), '1');
      const rows = await tableNumbers(page);
      assert.equal(rows.length, dk / 2);
      const round = (v) => Number(v.toFixed(4));
      rows.forEach((r, p) => {
        const expect = [m.q[i][p], m.q[i][p + dk / 2], m.theta[p], i * m.theta[p], m.qr[i][p], m.qr[i][p + dk / 2]].map(round);
        r.forEach((v, c) => assert.ok(Math.abs(v - expect[c]) <= 1.0001e-4, `pair ${p} column ${c}: ${v} vs ${expect[c]}`));
        // and PyTorch's rotated q of 吃, to the 4 decimals shown
        assert.ok(Math.abs(r[4] - cat.q_rope[i][p]) <= 0.5001e-4 + 1e-6 && Math.abs(r[5] - cat.q_rope[i][p + dk / 2]) <= 0.5001e-4 + 1e-6, `pair ${p} after vs PyTorch`);
      });
      // θ_i = 10000^(-2i/d): the core's, shown
      assert.equal(rows[0][2], 1);
      if (dk >= 4) assert.equal(rows[1][2], round(10000 ** (-2 / dk)));
    }
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test('moved one place, the map is the same (largest difference <= 1e-6, shown); 吃\'s row differs between 猫吃鱼 and 鱼吃猫', async () => {
  const { page, context, errors } = await open();
  try {
    const a = await cells(page, '#rope-shift-a'), b = await cells(page, '#rope-shift-b');
    const gap = Math.max(...a.map((v, i) => Math.abs(v - b[i])));
    assert.ok(gap <= 1e-6, `the shifted map moved by ${gap}`);
    const shown = Number(await page.getAttribute('#rope-shift-verdict', 'data-gap'));
    assert.ok(shown <= 1e-6 && Math.abs(shown - gap) <= 1e-7, `verdict says ${shown}, the maps differ by ${gap}`);
    assert.match(await page.textContent('#rope-shift-verdict'), /最大差 (0|\d\.\de-\d)/);
    assert.deepEqual(await page.$$eval('#rope-shift-b .row-label', (ts) => ts.map((t) => t.textContent)), ['猫', '吃', '鱼']);
    assert.deepEqual(await page.$$eval('#rope-order-b .row-label', (ts) => ts.map((t) => t.textContent)), ['鱼', '吃', '猫']);

    // 吃 is row 1 of both; its weight on 猫 (column 0 in 猫吃鱼, column 2 in 鱼吃猫) changes with RoPE
    const A = await cells(page, '#rope-order-a'), B = await cells(page, '#rope-order-b');
    const rowA = A.slice(3, 6), rowB = B.slice(3, 6).reverse();     // 鱼吃猫's row in 猫吃鱼's word order
    const orderGap = Math.max(...rowA.map((v, j) => Math.abs(v - rowB[j])));
    assert.ok(orderGap > 1e-3, `with RoPE 吃's row differs between the two orders (by ${orderGap})`);
    const verdict = page.locator('#rope-order-verdict');
    assert.equal(await verdict.getAttribute('data-row'), '1');
    assert.ok(Math.abs(Number(await verdict.getAttribute('data-gap')) - orderGap) < 1e-6);
    assert.ok(Number(await verdict.getAttribute('data-plain-gap')) < 1e-6, 'without RoPE the orders give 吃 the same weights');
    const golden = pageCase('猫吃鱼', 0, 8), gfish = pageCase('鱼吃猫', 0, 8);
    const gA = golden.weights[1], gB = [...gfish.weights[1]].reverse(), plain = golden.weights_no_rope[1];
    const lines = await page.$$eval('#rope-order-verdict .rope-line', (ls) => ls.map((l) => l.textContent));
    assert.equal(lines.length, 3);
    lines.forEach((l, j) => {
      assert.ok(l.includes(`${gA[j].toFixed(4)} / ${gB[j].toFixed(4)}`), `line ${j}: ${l} (PyTorch ${gA[j].toFixed(4)} / ${gB[j].toFixed(4)})`);
      assert.ok(l.includes(plain[j].toFixed(4)), `line ${j} without RoPE: ${l}`);
    });
    assert.match(lines[0], /^吃 → 猫/);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test('zh/en: the switch changes every string of the section, and back', async () => {
  const { page, context, errors } = await open();
  try {
    const zh = await texts(page);
    assert.ok(zh.length > 20);
    assert.equal(await page.textContent('#rope-title'), WORDS.zh.title);
    await page.click('#lang');
    await page.locator('#rope').scrollIntoViewIfNeeded();
    await page.waitForFunction((t) => document.querySelector('#rope-title')?.textContent === t, WORDS.en.title);
    const en = await texts(page);
    assert.equal(en.length, zh.length);
    // every string that is words (not a number, a token or a formula) changed
    const wordy = (s) => /[^\P{Script=Han}猫吃鱼]/u.test(s);     // Chinese words, not only the sentence's tokens
    let changed = 0;
    zh.forEach((s, i) => { if (wordy(s)) { assert.notEqual(en[i], s, `string ${i} did not change: ${s}`); changed++; } });
    assert.ok(changed >= 15, `only ${changed} strings are words`);
    assert.ok(!en.some((s) => /[，。：（）]|位置|加 RoPE|对/.test(s)), `Chinese left in English: ${en.filter((s) => /[，。：（）]|位置|对/.test(s)).join(' | ')}`);
    assert.match(await page.textContent('#rope-shift-verdict'), /differ by at most/);
    assert.match(await page.textContent('#rope-order-verdict'), /The row of 吃/);
    await page.screenshot({ path: '/tmp/rope-english.png', fullPage: false });
    await page.click('#lang');
    await page.waitForFunction((t) => document.querySelector('#rope-title')?.textContent === t, WORDS.zh.title);
    assert.deepEqual(await texts(page), zh);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test('390 px wide: nothing in the section overflows it (16 tokens, d_k 64 too)', async () => {
  const latin = 'the cat saw the fish and the fish saw the cat eat it then ran off'.split(' ');
  for (const hash of ['', `#${latin.map((t) => `t=${t}`).join('&')}&dk=64`]) {
    const { page, context, errors } = await open(hash, { width: 390, height: 844 });
    try {
      const r = await page.$eval('#rope', (s) => ({ scroll: s.scrollWidth, client: s.clientWidth, doc: document.documentElement.scrollWidth, win: window.innerWidth }));
      assert.ok(r.scroll <= r.client, `#rope: scrollWidth ${r.scroll} > clientWidth ${r.client} (${hash || 'default'})`);
      assert.ok(r.doc <= r.win, `the page scrolls sideways: ${r.doc} > ${r.win}`);
      if (!hash) await page.locator('#rope').screenshot({ path: '/tmp/rope-phone.png' });
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  }
  const { page, context } = await open();
  await page.locator('#rope').screenshot({ path: '/tmp/rope-desktop.png' });
  await context.close();
});
