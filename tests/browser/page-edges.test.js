// Issue 14, deliverable 4: the page's edges. Stale and untranslated errors, malformed links,
// clipped titles and silent scrollers, sticky "copied", exports that follow the OS theme, long
// numbers, the multi-head explanation, two wordings and the √d_k demonstration. Chromium
// (tests/browser/browser.js) over http, served like page.test.js.
//
//   node --test tests/browser/page-edges.test.js
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import zlib from 'node:zlib';
import { startServer } from '../../scripts/serve.js';
import { fixed, short, alike } from '../../web/page/page-format.js';
import { hashProblems } from '../../web/page/page-state.js';
import { root } from '../helpers.js';
import { launch } from './browser.js';

let browser, server, URL0;

before(async () => {
  server = await startServer({ root, port: 0 });
  URL0 = `${server.url}index.html`;
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

async function open(hash = '', contextOptions = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...contextOptions });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  await page.goto(URL0 + hash);
  await page.waitForSelector('html[data-complete="true"]', { timeout: 60000 });
  return { page, context, problems };
}

/** A new hash in the same page (hashchange), then two frames for the layout pass. */
async function go(page, hash) {
  await page.evaluate((h) => { location.hash = h; }, hash);
  await frames(page);
}
const frames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
const text = (page, sel) => page.textContent(sel);

const BIG = Array(8).fill('3e38').join(',');
const ONES = Array(8).fill('1').join(',');
const STALE = `#t=a&t=b&seed=0&x=${BIG};${ONES}`;

// ------------------------------------------------------------------------------------------------
// errors about X: translated, naming the token, gone with the X they were about

test('a refused X from a link: the message names the token, is translated, and goes with the X', async () => {
  const { page, context, problems } = await open(STALE);
  try {
    let msg = await text(page, '#x-msg');
    assert.match(msg, /^链接里的 X 没有用上/, msg);
    assert.match(msg, /「a」的第 1 维是 3\.000e38/, 'names the token and the dimension');
    assert.match(msg, /NON_FINITE/, 'the core\'s own words follow');
    // 1. the language: the same problem, now in English
    await page.click('#lang');
    msg = await text(page, '#x-msg');
    assert.match(msg, /^The X in the link was not used/, msg);
    assert.match(msg, /Row a, dimension 1/);
    assert.doesNotMatch(msg, /[链接没有]/, 'no Chinese left on the English page');
    // 2. the seed: another X, the message is gone
    await page.fill('#seed', '1');
    assert.equal(await text(page, '#x-msg'), '');
    // 3. another link
    await page.goto('about:blank');
    await page.goto(URL0 + STALE);
    await page.waitForSelector('html[data-complete="true"]');
    assert.notEqual(await text(page, '#x-msg'), '');
    await go(page, '#t=猫&t=吃&t=鱼&seed=0&lang=en');
    assert.equal(await text(page, '#x-msg'), '');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('a NaN typed into X on the Chinese page: a Chinese sentence naming the token and the dimension', async () => {
  const { page, context, problems } = await open();
  try {
    const cell = '#x-table input[data-row="1"][data-col="2"]';
    await page.fill(cell, 'abc');
    await page.press(cell, 'Enter');
    const msg = await text(page, '#x-msg');
    assert.match(msg, /^这个数没有用上/);
    assert.ok(msg.includes('「吃」的第 3 维不是一个有限的数'), msg);
    assert.equal(await page.$eval('#x-msg .tok', (e) => e.textContent), '吃');
    // a number beyond float32, in the last row
    const last = '#x-table input[data-row="2"][data-col="7"]';
    await page.fill(cell, '0');
    await page.press(cell, 'Enter');
    await page.fill(last, '1e39');
    await page.press(last, 'Enter');
    assert.ok((await text(page, '#x-msg')).includes('「鱼」的第 8 维是 1.000e39，超出了 float32 的范围'));
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

// ------------------------------------------------------------------------------------------------
// malformed links: a note that names what was ignored, and the rest kept

test('hashProblems names each field a link could not use (Node)', () => {
  const many = '#t=' + Array.from({ length: 17 }, (_, i) => `w${i}`).join('&t=');
  assert.deepEqual(hashProblems(many), [{ field: 't', reason: 'tooMany', count: 17, value: '' }]);
  assert.deepEqual(hashProblems('#seed=99999999999&dk=4'), [{ field: 'seed', value: '99999999999' }]);
  assert.deepEqual(hashProblems('#x=1,2;3'), [{ field: 'x', reason: 'shape', rows: 3, count: 2 }]);
  assert.equal(hashProblems('#x=' + '1,'.repeat(50000))[0].reason, 'long');
  assert.deepEqual(hashProblems('#t=猫&t=吃&t=鱼&seed=0&dk=8&causal=0&heads=2&lang=zh'), []);
  assert.deepEqual(hashProblems(''), []);
});

test('malformed links: a dismissible, translated note naming what was ignored; valid fields kept', async () => {
  const many = Array.from({ length: 17 }, (_, i) => `t=w${i}`).join('&');
  const cases = [
    [`#${many}&dk=4`, '17 个词（最多 16 个）', '17 tokens (at most 16)'],
    ['#x=1,2;3&dk=4', 'X（应该是 3 行、每行 8 个数，链接里是 2 行）', 'X (3 rows of 8 numbers expected, the link has 2 rows)'],
    ['#seed=99999999999&dk=4', '种子“99999999999”', 'the seed “99999999999”'],
    [`#dk=4&x=${'1,'.repeat(50000)}`, 'X（太长）', 'X (too long)'],
  ];
  const { page, context, problems } = await open();
  try {
    assert.equal(await page.isVisible('#link-note'), false, 'no note for a good link');
    for (const [hash, zh, en] of cases) {
      await page.goto('about:blank');
      await page.goto(URL0 + hash);
      await page.waitForSelector('html[data-complete="true"]');
      assert.ok(await page.isVisible('#link-note'), hash.slice(0, 40));
      assert.ok((await text(page, '#link-note-text')).includes(zh), `${hash.slice(0, 40)}: ${await text(page, '#link-note-text')}`);
      assert.equal(await page.inputValue('#dk'), '4', 'd_k = 4 from the same link is kept');
      await page.click('#lang');
      assert.ok((await text(page, '#link-note-text')).includes(en), await text(page, '#link-note-text'));
      await page.click('#link-note-close');
      assert.equal(await page.isVisible('#link-note'), false, 'dismissed');
    }
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

// ------------------------------------------------------------------------------------------------
// nothing clipped; a cue where a map scrolls

const T16 = ['The', 'quick', 'brown', 'fox', 'jumps', 'over', 'the', 'lazy', 'dog', 'and', 'then', '猫', '吃', '鱼', 'again', 'today'];
const TOKENS = { 1: ['猫'], 3: ['猫', '吃', '鱼'], 16: T16 };

/** Every visible map: title clipped?, overflow, cue shown; heads' cards inside the page. */
const layoutOf = (page) => page.evaluate(() => {
  const visible = (el) => el.checkVisibility();
  const vw = document.documentElement.clientWidth;
  // the teaching maps (main, section 5, the heads): a .map with its .heatmap box; the PE and trained
  // sections' figures are checked by page-compare.test.js
  const maps = [...document.querySelectorAll('.map')].filter((m) => visible(m) && m.querySelector('svg') && m.querySelector('.heatmap'));
  return {
    // the page itself never scrolls sideways (wide tables and maps scroll in their own boxes)
    pageWidth: document.documentElement.scrollWidth,
    mapsOut: maps.filter((m) => m.getBoundingClientRect().right > vw + 0.5).map((m) => m.querySelector('.heatmap').id),
    maps: maps.map((m) => {
      const title = m.querySelector('.map-title'), box = m.querySelector('.heatmap');
      const r = title.getBoundingClientRect();
      const svgTitles = [...m.querySelectorAll('svg text.attnmap-title')].filter(visible).length;
      return {
        id: box.id, title: title.textContent,
        titleClipped: title.scrollWidth > title.clientWidth + 1 || r.left < -0.5 || r.right > vw + 0.5,
        svgTitles,
        overflow: box.scrollWidth > box.clientWidth + 1,
        cue: m.classList.contains('scrolls') && visible(m.querySelector('.hint-scroll')) &&
          getComputedStyle(m.querySelector('.map-box'), '::after').content !== 'none',
      };
    }),
    cards: [...document.querySelectorAll('#mha-grid figure')].filter(visible).map((f) => {
      const r = f.getBoundingClientRect();
      return { left: r.left, right: r.right, inside: r.left >= -0.5 && r.right <= vw + 0.5 };
    }),
  };
});

for (const width of [320, 390, 1280]) {
  test(`${width} px: no title clipped (zh, en × 1, 3, 16 tokens × 1, 2, 4, 8 heads); a scroll cue exactly where a map overflows`, async () => {
    const { page, context, problems } = await open('', { viewport: { width, height: 900 } });
    try {
      for (const lang of ['zh', 'en']) {
        for (const n of [1, 3, 16]) {
          for (const heads of [1, 2, 4, 8]) {
            const hash = `#${TOKENS[n].map((t) => `t=${encodeURIComponent(t)}`).join('&')}&seed=4294967295&causal=1&heads=${heads}&lang=${lang}`;
            await go(page, hash);
            const L = await layoutOf(page);
            const where = `${width} px ${lang} ${n} tokens ${heads} heads`;
            assert.deepEqual(L.mapsOut, [], `${where}: maps reaching beyond the page`);
            assert.ok(L.pageWidth <= width, `${where}: the page is ${L.pageWidth} px wide, wider than the window`);
            assert.equal(L.maps.length, 2 + heads, `${where}: main, section 5 and ${heads} heads`);
            for (const m of L.maps) {
              assert.ok(!m.titleClipped, `${where}: the title "${m.title}" of #${m.id} is clipped`);
              assert.equal(m.svgTitles, 0, `${where}: #${m.id} draws no one-line SVG title that could be cut`);
              assert.equal(m.cue, m.overflow, `${where}: #${m.id} overflows: ${m.overflow}, cue shown: ${m.cue}`);
            }
            for (const c of L.cards) assert.ok(c.inside, `${where}: a head's card reaches ${c.left}–${c.right}`);
          }
        }
      }
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
}

// ------------------------------------------------------------------------------------------------
// feedback that goes away; exports in the light theme unless dark is picked

test('"已复制" and "link copied" go back after a few seconds', async () => {
  const { page, context, problems } = await open('', { permissions: ['clipboard-read', 'clipboard-write'] });
  try {
    await page.click('#copy-code');
    await page.waitForFunction(() => document.querySelector('#copy-code').textContent === '已复制');
    await page.click('#copy-link');
    await page.waitForFunction(() => document.querySelector('#action-msg').textContent !== '');
    // that they go back, not how soon: Playwright's default limit (30 s) only stops a hang
    await page.waitForFunction(() => document.querySelector('#copy-code').textContent === '复制代码');
    await page.waitForFunction(() => document.querySelector('#action-msg').textContent === '');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

/** The RGBA of pixel (0, 0) of a PNG file (the first scanline's first pixel needs no unfiltering). */
function firstPixel(png) {
  const idat = [];
  for (let p = 8; p < png.length;) {
    const len = png.readUInt32BE(p), type = png.toString('latin1', p + 4, p + 8);
    if (type === 'IDAT') idat.push(png.subarray(p + 8, p + 8 + len));
    p += 12 + len;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  return [...raw.subarray(1, 5)];
}

test('exports: light in a dark-mode browser unless the reader picks dark', async () => {
  const { page, context, problems } = await open('', { colorScheme: 'dark', acceptDownloads: true });
  try {
    const exportOf = async (sel) => {
      const [dl] = await Promise.all([page.waitForEvent('download'), page.click(sel)]);
      return { name: dl.suggestedFilename(), data: fs.readFileSync(await dl.path()) };
    };
    const bgOf = async (svg) => {
      const p = await context.newPage();
      await p.setContent(svg.toString('utf8'));
      const fill = await p.$eval('.attnmap-bg', (r) => getComputedStyle(r).fill);
      await p.close();
      return fill;
    };
    let png = await exportOf('#export-png');
    assert.deepEqual(firstPixel(png.data), [255, 255, 255, 255], 'PNG background is white');
    let svg = await exportOf('#export-svg');
    assert.equal(await bgOf(svg.data), 'rgb(255, 255, 255)', 'SVG background is white in a dark browser');
    assert.match(svg.name, /^attention-weights-seed0-dk8\.svg$/);
    await page.check('#export-dark');
    png = await exportOf('#export-png');
    assert.deepEqual(firstPixel(png.data), [13, 17, 23, 255], 'dark, once picked');
    svg = await exportOf('#export-svg');
    assert.equal(await bgOf(svg.data), 'rgb(13, 17, 23)');
    assert.match(svg.name, /-dark\.svg$/);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

// ------------------------------------------------------------------------------------------------
// numbers, the heads, the wording, the √d_k demonstration

test('numbers beyond 1e6 and tiny ones print in scientific notation', async () => {
  assert.equal(fixed(1.1241954490712064e16, 4), '1.124e16');
  assert.equal(short(1.1241954490712064e16), '1.124e16');
  assert.equal(fixed(-3.05e-7, 4), '-3.050e-7');
  assert.equal(fixed(0.3157, 4), '0.3157');
  assert.equal(fixed(0, 4), '0.0000');
  const row = Array(8).fill('1e8').join(',');
  const { page, context, problems } = await open(`#x=${row};${row};${row}`);
  try {
    for (const sel of ['#scores-table', '#scaled-table', '#qkv-tables', '#x-table']) {
      const t = sel === '#x-table'
        ? (await page.$$eval('#x-table input', (is) => is.map((i) => i.value))).join(' ')
        : (await page.$$eval(`${sel} td`, (ts) => ts.map((td) => td.textContent))).join(' ');
      assert.doesNotMatch(t, /\d{7,}/, `${sel}: no long runs of digits`);
      assert.match(t, /\de\d/, `${sel}: scientific notation`);
    }
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('one line of the explanation\'s arithmetic uses one notation: 1.788e-4 ÷ 2 = 8.939e-5, never 0.0002 ÷ 2 = 8.939e-5', async () => {
  assert.deepEqual(alike(0.00017878, 0.00008939), ['1.788e-4', '8.939e-5']);
  assert.deepEqual(alike(0.37, 0.185), ['0.37', '0.185']);
  assert.deepEqual(alike(0, 1e-5), ['0.0', '1.000e-5']);
  // small X: dot products near 1e-4, so that some are >= 1e-4 while their scaled value is not
  let straddled = 0;
  for (const v of ['0.008', '0.01', '0.012', '0.015']) {
    const row = Array(8).fill(v).join(',');
    const { page, context, problems } = await open(`#x=${row};${row};${row}`);
    try {
      for (let i = 0; i < 3; i++) {
        for (let j = 0; j < 3; j++) {
          await page.hover(`#main-heatmap rect.cell[data-row="${i}"][data-col="${j}"]`);
          const [dotStep, scaleStep] = await page.$$eval('#main-explain .ex-steps li .ex-v', (vs) => vs.slice(0, 2).map((v) => v.textContent));
          const bold = dotStep.split(' = ').pop();
          const m = scaleStep.match(/^(\S+) ÷ √8 = (\S+) ÷ 2\.8284 = (\S+)$/);
          assert.ok(m, `cell ${i},${j}: the ② line: ${scaleStep}`);
          const [, a, b, c] = m;
          assert.ok(bold === a && a === b, `cell ${i},${j}: one printing of the dot product: ${bold} ${a} ${b}`);
          assert.equal(a.includes('e'), c.includes('e'), `cell ${i},${j}: ${a} ÷ 2.8284 = ${c} mixes notations`);
          // the sentence a screen reader announces quotes the same two numbers
          await page.waitForFunction(() => document.querySelector('#main-explain [aria-live]')?.textContent);
          const said = await page.textContent('#main-explain [aria-live]');
          assert.ok(said.includes(a) && said.includes(c), `cell ${i},${j}: the announcement quotes ${a} and ${c}: ${said}`);
          if (Math.abs(Number(a)) >= 1e-4 && Math.abs(Number(c)) < 1e-4) straddled++;
        }
      }
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  }
  assert.ok(straddled > 0, 'some dot product >= 1e-4 had a scaled value below it');
});

test('multi-head: the explanation divides by √d_head; every head map has a colour bar', async () => {
  for (const heads of [1, 2, 4, 8]) {
    const { page, context, problems } = await open(`#heads=${heads}`);
    try {
      await page.hover('#mha-h0 rect.cell[data-row="2"][data-col="1"]');
      const t = await text(page, '#mha-explain');
      assert.ok(t.includes('(b) 除以 √d_head'), t);          // (a)–(e): ①–④ number the four steps (issue 24)
      assert.ok(!t.includes('√d_k'), `${heads} heads: no √d_k in ${t}`);
      const legends = await page.$$eval('#mha-grid figure:not([hidden])', (fs) => fs.map((f) => f.querySelectorAll('.legend').length));
      assert.deepEqual(legends, Array(heads).fill(1));
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  }
});

test('wording: step ④ and SQL; the saturated softmax\'s Jacobian', async () => {
  const { page, context } = await open();
  try {
    let s4 = await text(page, '#step-4'), sc = await text(page, '#scaling');
    assert.ok(!s4.includes('分数最高的一行'), 'a JOIN has no scores');
    assert.ok(s4.includes('JOIN 没有分数'), s4);
    assert.ok(!sc.includes('其余位置的梯度几乎为 0'), 'not only the other positions');
    assert.ok(sc.includes('diag(p) − ppT') && sc.includes('连得分最高的那一格也不例外'), sc);
    await page.click('#lang');
    s4 = await text(page, '#step-4'); sc = await text(page, '#scaling');
    assert.ok(!s4.includes('best-scoring'), s4);
    assert.ok(s4.includes('A SQL JOIN has no scores'));
    assert.ok(!sc.includes('close to 0 everywhere else'));
    assert.ok(sc.includes('diag(p) − ppT') && sc.includes('the winning entry included'), sc);
  } finally {
    await context.close();
  }
});

test('√d_k demo: averaged, the unscaled max weight grows with d_k, the scaled one stays flat (seeds 0 and 7)', async () => {
  const { page, context, problems } = await open();
  try {
    for (const seed of ['0', '7']) {
      await page.fill('#seed', seed);
      await page.waitForSelector('html[data-complete="true"]');   // the √d_k demo, off-screen, is drawn in idle time (issue 24)
      const [scaled, unscaled] = await page.evaluate(() => {
        const rows = [...document.querySelectorAll('#scale-grid .scale-row:not(.scale-head)')];
        const col = (k) => rows.map((r) => Number(r.querySelectorAll('.scale-max')[k].dataset.meanMax));
        return [col(0), col(1)];
      });
      assert.equal(unscaled.length, 5);
      for (let k = 1; k < 5; k++) assert.ok(unscaled[k] > unscaled[k - 1] + 0.02, `seed ${seed}: unscaled ${unscaled}`);
      assert.ok(unscaled[4] > 0.9, `seed ${seed}: d_k = 1024 unscaled is nearly one-hot: ${unscaled[4]}`);
      assert.ok(Math.max(...scaled) - Math.min(...scaled) < 0.03, `seed ${seed}: scaled ${scaled}`);
      assert.match(await text(page, '#scale-snippet'), /for _ in range\(64\):/);
    }
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('on a 320 px phone the 猫吃鱼 heatmap still shows its numbers (2 decimals, not hidden); 4 decimals from 390 px', async () => {
  for (const [width, shown] of [[320, ['0.31', '0.24', '0.45']], [390, ['0.3146', '0.2396', '0.4458']]]) {
    const { page, context, problems } = await open('', { viewport: { width, height: 900 } });
    try {
      await frames(page);
      const state = await page.evaluate(() => {
        const map = document.querySelector('#main-heatmap').closest('.map');
        const values = [...document.querySelectorAll('#main-heatmap .cell-value')];
        const v = values[0];
        const px = v ? Number(v.getAttribute('font-size')) * v.closest('svg').getBoundingClientRect().width / Number(v.closest('svg').getAttribute('width')) : 0;
        return { hidden: map.classList.contains('values-hidden'), row0: values.slice(0, 3).map((t) => t.textContent), px };
      });
      assert.equal(state.hidden, false, `${width} px: the numbers are hidden`);
      assert.deepEqual(state.row0, shown, `${width} px: row 猫`);
      assert.ok(state.px >= 10, `${width} px: numbers drawn at ${state.px.toFixed(1)} px`);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  }
});
