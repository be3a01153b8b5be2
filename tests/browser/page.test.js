// Tests of the page (index.html + web/page*.js, bundled to web/dist/page.js) in a real Chromium,
// served over http and opened from disk (file://).
//
//   node --test tests/page.test.js
//
// Needs /usr/bin/chromium (apt-get install -y chromium) and the devDependency playwright-core;
// it never downloads a browser. One browser for the whole file. Screenshots of the page are
// written to /tmp/page-{desktop-light,desktop-dark,phone,english}.png for a person to look at
// (docs/screenshots/ holds committed ones).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/serve.js';
import { createAttention, toRows } from '../../web/core/attention.js';
import { episodeWeights } from '../../web/rng/torch-rng.js';
import { parseHash, formatHash, defaultState, splitTokens, shortestFloat32 } from '../../web/page/page-state.js';
import { factor, short, pythonSnippet } from '../../web/page/page-format.js';
import { root, golden, assertClose } from '../helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-sync'];
const FILE_URL = pathToFileURL(path.join(root, 'index.html')).href;
const TOL = 1e-6;               // page vs the same core in Node: |a - e| <= 1e-6

let browser, server, attn, HTTP_URL;

before(async () => {
  attn = await createAttention();
  server = await startServer({ root, port: 0 });
  HTTP_URL = `${server.url}index.html`;
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** A fresh page that records console errors, page errors, dialogs and a fetch of the relaxed build; waits for the first render. */
async function open(url, contextOptions = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...contextOptions });
  const page = await context.newPage();
  const problems = [];
  const dialogs = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => { if (!r.url().startsWith('blob:')) problems.push(`request failed: ${r.url()}`); });
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  // the page's sizes never reach the kernel relaxed SIMD speeds up: it must not fetch that build
  page.on('request', (r) => { if (r.url().endsWith('/attention-relaxed-wasm.js')) problems.push(`loaded ${r.url()}`); });
  await page.goto(url);
  await page.waitForSelector('html[data-complete="true"]', { timeout: 60000 });
  return { page, context, problems, dialogs };
}

const cellValues = (page, sel = '#main-heatmap') => page.$$eval(`${sel} rect.cell`, (rs) => rs.map((r) => ({
  row: Number(r.dataset.row), col: Number(r.dataset.col), value: Number(r.dataset.value), masked: r.dataset.masked === 'true',
})));

function assertNear(actual, expected, tol, label) {
  assert.equal(actual.length, expected.length, `${label}: ${actual.length} values, expected ${expected.length}`);
  let worst = 0;
  actual.forEach((a, i) => {
    const d = Math.abs(a - expected[i]);
    worst = Math.max(worst, d);
    assert.ok(d <= tol, `${label}: value ${i} is ${a}, expected ${expected[i]} (difference ${d} > ${tol})`);
  });
  return worst;
}

/** The episode case for a seed, computed in Node by the same core. */
function nodeCase(seed, tokens, dk = 8, causal = false) {
  const w = episodeWeights(seed, tokens.length, 8, dk, dk);
  return attn.selfAttention({ x: w.x, wq: w.wq, wk: w.wk, wv: w.wv }, { causal });
}

// ------------------------------------------------------------------------------------------------
// Node-only checks: the bundle, the hash, the snippet

test('the committed bundle web/dist/page.js matches a fresh build', () => {
  const r = spawnSync(process.execPath, ['scripts/build-page.js', '--check'], { cwd: root, encoding: 'utf8' });
  assert.equal(r.status, 0, `node scripts/build-page.js --check failed:\n${r.stdout}${r.stderr}`);
});

test('index.html loads only local, classic resources', () => {
  const html = fs.readFileSync(path.join(root, 'index.html'), 'utf8');
  assert.match(html, /<script src="web\/dist\/page\.js" defer><\/script>/);
  assert.doesNotMatch(html, /type="module"/);
  assert.doesNotMatch(html, /\b(src|href)="(https?:)?\/\//, 'no network resources');
});

test('hash: round trip, and every bad field falls back to its default', () => {
  const s = { tokens: ['a&b', '<i>', '猫'], seed: 4294967295, dk: 16, causal: true, lang: 'en',
    x: [[1.5, -0, 1e-7, 3.4e38, -2, 0.1, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8], [0, 0, 0, 0, 0, 0, 0, 0.30000001192092896]] };
  const back = parseHash('#' + formatHash(s));
  assert.deepEqual(back.tokens, s.tokens);
  assert.equal(back.seed, s.seed);
  assert.equal(back.dk, 16);
  assert.equal(back.causal, true);
  assert.equal(back.lang, 'en');
  assert.deepEqual(back.x.flat(), s.x.flat().map(Math.fround));
  assert.deepEqual(parseHash(''), defaultState());
  for (const bad of ['#t=&seed=abc&dk=7&causal=maybe&lang=fr', '#%E0%A4%A', '#seed=-1&dk=8.0&x=1,2;3',
    '#seed=99999999999', '#t=a%00b', '#x=NaN,1,1,1,1,1,1,1;1,1,1,1,1,1,1,1;1,1,1,1,1,1,1,1', '#&&&==&t',
    '#t=' + Array.from({ length: 17 }, (_, i) => `w${i}`).join('&t='), '#x=' + '1,'.repeat(30000)]) {
    assert.deepEqual(parseHash(bad), defaultState(), bad.slice(0, 60));
  }
  assert.equal(shortestFloat32(0.1), '0.1');
  assert.equal(shortestFloat32(-1.1258398294448853), '-1.1258398');
});

test('tokens: whitespace-separated, 1 to 16, readable errors', () => {
  assert.deepEqual(splitTokens('  猫  吃\t鱼 ').tokens, ['猫', '吃', '鱼']);
  assert.equal(splitTokens('   ').error, 'empty');
  assert.equal(splitTokens(Array(17).fill('x').join(' ')).error, 'tooMany');
  assert.equal(splitTokens('x'.repeat(25)).error, 'tooLong');
});

test('the Python snippet is the episode code with the seed, and cannot be broken out of', () => {
  const code = pythonSnippet({ ...defaultState(), tokens: ['猫', '\n\nimport os', '鱼'] });
  assert.match(code, /^torch\.manual_seed\(0\)/m);
  assert.match(code, /^X = torch\.randn\(3, 8\)$/m);
  assert.match(code, /^W_q = torch\.nn\.Linear\(d_model, d_k, bias=False\)$/m);
  assert.doesNotMatch(code, /^import os/m);
});

// ------------------------------------------------------------------------------------------------
// the page, over http and from disk

for (const mode of ['http', 'file']) {
  test(`${mode}: opens on 猫吃鱼, seed 0, with the core's numbers and section 5's true row`, async () => {
    const { page, context, problems } = await open(mode === 'http' ? HTTP_URL : FILE_URL);
    try {
      const cells = await cellValues(page);
      assert.equal(cells.length, 9, '3×3 heatmap');
      // the same seed-0 case in Node, from the golden PyTorch inputs
      const ep = golden().cases.find((c) => c.name === 'episode-snippet-seed-0');
      const mine = attn.selfAttention({ x: ep.x, wq: ep.wq, wk: ep.wk, wv: ep.wv });
      assertNear(cells.map((c) => c.value), Array.from(mine.weights.data), TOL, 'seed-0 weights');
      assertClose(cells.map((c) => c.value), ep.expected.weights, 'seed-0 weights vs PyTorch');
      assert.deepEqual(await page.$$eval('#main-heatmap .row-label', (ts) => ts.map((t) => t.textContent)), ['猫', '吃', '鱼']);
      // above the fold, with a legend, axis captions and numbers in the cells
      const box = await page.locator('#main-heatmap svg').boundingBox();
      assert.ok(box.y + box.height <= 800, `heatmap bottom at ${box.y + box.height}px, below the fold`);
      assert.equal(await page.locator('#main-heatmap .legend').count(), 1);
      assert.equal(await page.locator('#main-heatmap .axis-caption').count(), 2);
      assert.equal(await page.locator('#main-heatmap .cell-value').first().textContent(), mine.weights.data[0].toFixed(4));
      // the reproduction snippet
      assert.match(await page.textContent('#snippet'), /torch\.manual_seed\(0\)/);
      if (mode === 'http') await page.screenshot({ path: '/tmp/page-desktop-light.png' });
      // section 5, by attn.attention
      const s5 = (await cellValues(page, '#s5-heatmap')).filter((c) => c.row === 1).map((c) => c.value);
      assertNear(s5, [0.3157, 0.3686, 0.3157], 1e-4, 'section-5 row of 吃');
      const compare = await page.textContent('#s5-compare');
      for (const s of ['0.30', '0.42', '0.28', '0.3157', '0.3686']) assert.ok(compare.includes(s), `comparison shows ${s}`);
      if (mode === 'file') {
        // exports work from disk too: SVG, and PNG through a data: URL image and a canvas
        const [svgDl] = await Promise.all([page.waitForEvent('download'), page.click('#export-svg')]);
        const svg = fs.readFileSync(await svgDl.path(), 'utf8');
        assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
        assert.equal((svg.match(/<rect class="cell"/g) ?? []).length, 9);
        const [pngDl] = await Promise.all([page.waitForEvent('download'), page.click('#export-png')]);
        const png = fs.readFileSync(await pngDl.path());
        assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG file');
        const width = png.readUInt32BE(16);
        assert.equal(width, 2 * Number(/width="(\d+)"/.exec(svg)[1]), 'PNG at 2×');
        assert.match(svgDl.suggestedFilename(), /^attention-weights-seed0-dk8\.svg$/);
      }
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
}

test('hover and focus explain a cell: dot-product terms, √d_k, exp, row sum, the core\'s weight', async () => {
  const { page, context, problems } = await open(HTTP_URL);
  try {
    const c = nodeCase(0, ['猫', '吃', '鱼']);
    const q = toRows(c.q), k = toRows(c.k);
    await page.hover('#main-heatmap rect.cell[data-row="2"][data-col="1"]');
    const text = await page.textContent('#main-explain');
    const terms = q[2].map((v, m) => `${factor(v)}×${factor(k[1][m])}`).join(' + ');
    assert.ok(text.includes(terms), `explanation shows the terms ${terms}\n got: ${text}`);
    assert.ok(text.includes(`= ${short(toRows(c.scores)[2][1])}`), 'the dot product');
    assert.ok(text.includes('√8'), 'the division by √d_k');
    assert.ok(text.includes(toRows(c.weights)[2][1].toFixed(4)), 'the weight');
    // section 5: exactly the article's arithmetic
    await page.focus('#s5-heatmap g.cell-group[data-row="1"][data-col="0"]');
    const s5 = await page.textContent('#s5-explain');
    assert.ok(s5.includes('0.3×0.9 + 0.8×0.1 + 0.2×0.0 + 0.1×0.2 = 0.37'), s5);
    assert.ok(s5.includes('0.37 ÷ √4 = 0.37 ÷ 2 = 0.185'), s5);
    assert.ok(s5.includes('0.3157'), s5);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('causal mask zeros the upper triangle; 5 tokens give 5×5; 17 give a message', async () => {
  const { page, context, problems } = await open(HTTP_URL);
  try {
    await page.click('#causal');
    let cells = await cellValues(page);
    for (const c of cells) {
      if (c.col > c.row) {
        assert.equal(c.value, 0, `masked cell ${c.row},${c.col} is exactly 0`);
        assert.ok(c.masked, `cell ${c.row},${c.col} drawn as masked`);
      } else assert.ok(c.value > 0 && !c.masked);
    }
    assertNear(cells.map((c) => c.value), Array.from(nodeCase(0, ['猫', '吃', '鱼'], 8, true).weights.data), TOL, 'causal');
    await page.click('#causal');

    const five = ['我', '爱', '吃', '小', '鱼'];
    await page.fill('#tokens', five.join(' '));
    cells = await cellValues(page);
    assert.equal(cells.length, 25);
    assertNear(cells.map((c) => c.value), Array.from(nodeCase(0, five).weights.data), TOL, '5 tokens');

    const many = Array.from({ length: 17 }, (_, i) => `t${i}`).join(' ');
    await page.fill('#tokens', many);
    assert.match(await page.textContent('#tokens-msg'), /16/);
    assert.equal(await page.getAttribute('#tokens', 'aria-invalid'), 'true');
    assert.equal((await cellValues(page)).length, 25, 'keeps the last valid heatmap');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('hostile tokens are shown literally and run nothing', async () => {
  const { page, context, problems, dialogs } = await open(HTTP_URL);
  try {
    const hostile = '<img src=x onerror=alert(1)> </svg> & "';
    await page.fill('#tokens', hostile);
    const tokens = hostile.split(' ');
    // a label cut to fit carries the whole token in its <title>
    assert.deepEqual(await page.$$eval('#main-heatmap .row-label',
      (ts) => ts.map((t) => t.querySelector('title')?.textContent ?? t.textContent)), tokens);
    assert.deepEqual(await page.$$eval('#x-table tbody th', (ts) => ts.map((t) => t.textContent)), tokens);
    const labels = await page.$$eval('#main-heatmap g.cell-group', (gs) => gs.map((g) => g.getAttribute('aria-label')));
    assert.ok(labels[0].startsWith('<img → <img: '), labels[0]);
    await page.hover('#main-heatmap rect.cell[data-row="0"][data-col="3"]');
    assert.ok((await page.textContent('#main-explain')).includes('<img → </svg>'));
    // a whole token with spaces can only come from a link: it is rejected, not run
    await page.goto(`${HTTP_URL}#t=${encodeURIComponent('<img src=x onerror=alert(2)>')}&t=b`);
    await page.waitForSelector('#main-heatmap rect.cell');
    assert.equal(await page.locator('img').count(), 0, 'no <img> element anywhere');
    await page.waitForTimeout(100);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('the URL hash holds the state: reload it and see the same numbers; bad hashes fall back', async () => {
  const { page, context, problems } = await open(HTTP_URL);
  try {
    await page.fill('#tokens', 'the cat ate fish');
    await page.fill('#seed', '7');
    await page.selectOption('#dk', '4');
    await page.click('#causal');
    await page.fill('#x-table input[data-row="0"][data-col="0"]', '1.5');
    await page.press('#x-table input[data-row="0"][data-col="0"]', 'Enter');
    await page.click('#lang');
    const hash = await page.evaluate(() => location.hash);
    const before = await cellValues(page);
    assert.equal(before.length, 16);
    const st = parseHash(hash);
    assert.deepEqual(st.tokens, ['the', 'cat', 'ate', 'fish']);
    assert.equal(st.seed, 7); assert.equal(st.dk, 4); assert.equal(st.causal, true); assert.equal(st.lang, 'en');
    assert.equal(st.x[0][0], 1.5);

    const again = await open(`${HTTP_URL}${hash}`);
    try {
      assert.deepEqual(await cellValues(again.page), before);
      assert.equal(await again.page.inputValue('#tokens'), 'the cat ate fish');
      assert.equal(await again.page.inputValue('#seed'), '7');
      assert.equal(await again.page.inputValue('#x-table input[data-row="0"][data-col="0"]'), '1.5000');
      assert.equal(await again.page.getAttribute('html', 'lang'), 'en');
      assert.ok(await again.page.isChecked('#causal'));
      assert.deepEqual(again.problems, []);
    } finally {
      await again.context.close();
    }

    // an edited X that the core rejects, and plain garbage: defaults, a message, no error
    const defaults = Array.from(nodeCase(0, ['猫', '吃', '鱼']).weights.data);
    for (const bad of ['#seed=abc&dk=7&causal=maybe&lang=fr&t=', '#%E0%A4%A', '#x=1e38,1e38,1e38,1e38,1e38,1e38,1e38,1e38;1,1,1,1,1,1,1,1;1,1,1,1,1,1,1,1']) {
      await page.goto('about:blank');
      await page.goto(`${HTTP_URL}${bad}`);
      await page.waitForSelector('html[data-complete="true"]');
      assertNear((await cellValues(page)).map((c) => c.value), defaults, TOL, bad);
    }
    assert.match(await page.textContent('#x-msg'), /NON_FINITE/, 'the rejected X is explained');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('editing X: the core recomputes; a bad value gets the core\'s message', async () => {
  const { page, context, problems } = await open(HTTP_URL);
  try {
    const cell = '#x-table input[data-row="1"][data-col="2"]';
    await page.fill(cell, 'abc');
    await page.press(cell, 'Enter');
    assert.match(await page.textContent('#x-msg'), /x\[1\]\[2\] is NaN.*NON_FINITE/);
    assert.equal(await page.getAttribute(cell, 'aria-invalid'), 'true');
    await page.fill(cell, '2');
    await page.press(cell, 'Enter');
    assert.equal(await page.textContent('#x-msg'), '');
    const w = episodeWeights(0, 3, 8, 8, 8);
    const x = toRows(w.x);
    x[1][2] = 2;
    const expected = attn.selfAttention({ x, wq: w.wq, wk: w.wk, wv: w.wv });
    assertNear((await cellValues(page)).map((c) => c.value), Array.from(expected.weights.data), TOL, 'edited X');
    assert.match(await page.textContent('#snippet'), /X = torch\.tensor\(\[/);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('language switch changes the texts', async () => {
  const { page, context, problems } = await open(HTTP_URL);
  try {
    const zh = await page.textContent('h1');
    assert.match(zh, /自注意力/);
    await page.click('#lang');
    assert.match(await page.textContent('h1'), /Self-attention/);
    await page.screenshot({ path: '/tmp/page-english.png' });
    assert.equal(await page.getAttribute('html', 'lang'), 'en');
    assert.match(await page.getAttribute('#main-heatmap svg', 'aria-label'), /^Attention weights/);
    assert.match(await page.textContent('#main-explain'), /dot product/);
    assert.match(await page.evaluate(() => location.hash), /lang=en/);
    await page.click('#lang');
    assert.equal(await page.textContent('h1'), zh);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('keyboard: Tab reaches a cell, arrow keys move between cells', async () => {
  const { page, context, problems } = await open(HTTP_URL);
  try {
    const focused = () => page.evaluate(() => {
      const el = document.activeElement;
      return { role: el.getAttribute('role'), label: el.getAttribute('aria-label'), inMain: Boolean(el.closest('#main-heatmap')) };
    });
    let f;
    for (let i = 0; i < 10; i++) {
      await page.keyboard.press('Tab');
      f = await focused();
      if (f.role === 'gridcell') break;
    }
    assert.equal(f.role, 'gridcell', 'Tab reaches a heatmap cell');
    assert.ok(f.inMain);
    const w = toRows(nodeCase(0, ['猫', '吃', '鱼']).weights);
    assert.equal(f.label, `吃 → 猫: ${w[1][0].toFixed(4)}`);
    await page.keyboard.press('ArrowRight');
    f = await focused();
    assert.equal(f.label, `吃 → 吃: ${w[1][1].toFixed(4)}`);
    assert.match(await page.textContent('#main-explain'), /吃 → 吃/);
    await page.keyboard.press('ArrowDown');
    assert.equal((await focused()).label, `鱼 → 吃: ${w[2][1].toFixed(4)}`);
    // the focus ring is visible
    const stroke = await page.$eval('#main-heatmap .ring-outer', (r) => getComputedStyle(r).strokeWidth);
    assert.equal(stroke, '4.5px');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('a 360-px phone: no horizontal page scroll, also with 16 tokens', async () => {
  const { page, context, problems } = await open(HTTP_URL,
    { viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  try {
    await page.screenshot({ path: '/tmp/page-phone.png' });
    const scrollWidth = () => page.evaluate(() => document.scrollingElement.scrollWidth);
    assert.ok(await scrollWidth() <= 360, `scrollWidth ${await scrollWidth()}`);
    await page.fill('#tokens', 'The quick brown fox jumps over the lazy dog and then 猫 吃 鱼 again today');
    assert.equal((await cellValues(page)).length, 256);
    assert.ok(await scrollWidth() <= 360, `scrollWidth with 16 tokens ${await scrollWidth()}`);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

// The other screenshots are taken along the way: desktop-light (the http test), english (the
// language test), phone (the 360-px test).
test('dark mode: the page follows prefers-color-scheme (/tmp/page-desktop-dark.png)', async () => {
  const { page, context, problems } = await open(HTTP_URL, { colorScheme: 'dark' });
  try {
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(bg, 'rgb(13, 17, 23)');
    await page.screenshot({ path: '/tmp/page-desktop-dark.png' });
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});
