// The page's episode-06 section (multi-head attention, web/page/page-mha.js) against PyTorch:
// tests/golden/page-mha.json, made by tests/golden/make_page_mha.py, which runs the very snippet
// the page shows. Node checks first (snippet text, weights, numbers, hash), then the real page in
// Chromium over http (one browser for the file).
//
//   node --test tests/page-mha.test.js
//
// Screenshots for a person to look at: /tmp/mha-{desktop-2,desktop-8,desktop-1,causal,english,dark,phone-2,phone-8}.png
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../../scripts/serve.js';
import { createAttention, toRows } from '../../web/core/attention.js';
import { episodeWeights } from '../../web/rng/torch-rng.js';
import { mhaWeights, computeMha, mhaSnippet } from '../../web/page/page-mha.js';
import { inputWeights } from '../../web/page/page-pe.js';
import { parseHash, formatHash, defaultState, HEAD_CHOICES } from '../../web/page/page-state.js';
import { root, assertClose } from '../helpers.js';
import { launch } from './browser.js';

const GOLDEN = JSON.parse(fs.readFileSync(path.join(root, 'tests/golden/page-mha.json'), 'utf8'));
const byName = (name) => GOLDEN.cases.find((c) => c.name === name);
const flat = (m) => m.flat(Infinity);

let browser, server, attn, URL0;

before(async () => {
  attn = await createAttention();
  server = await startServer({ root, port: 0 });
  URL0 = `${server.url}index.html`;
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

// ------------------------------------------------------------------------------------------------
// Node: what the page computes and shows, against the golden data

test('golden file: a version, made by make_page_mha.py with torch, the 2-head seed-0 case present', () => {
  assert.equal(GOLDEN.version, 1);
  assert.equal(GOLDEN.generator, 'tests/golden/make_page_mha.py');
  assert.ok(fs.existsSync(path.join(root, GOLDEN.generator)));
  assert.match(GOLDEN.torch, /^1\./);
  const c = byName('seed0-heads2');
  assert.deepEqual(c.state, { tokens: ['猫', '吃', '鱼'], seed: 0, heads: 2, causal: false, x: null });
  assert.match(c.printed, /tensor\(\[\[\[0\.2801, 0\.3293, 0\.3906\]/, 'what the snippet printed');
});

test('the page shows exactly the PyTorch code that make_page_mha.py ran, in both languages', () => {
  for (const c of GOLDEN.cases) {
    for (const lang of ['zh', 'en']) {
      assert.equal(mhaSnippet(c.state, lang), c.snippet[lang], `${c.name} (${lang}): regenerate with /usr/bin/python3 tests/golden/make_page_mha.py`);
    }
  }
  const code = mhaSnippet(defaultState());
  assert.match(code, /^W_o = torch\.nn\.Linear\(d_model, d_model, bias=False\)$/m);
  assert.match(code, /^Q = W_q\(X\)\.view\(n, num_heads, d_head\)\.transpose\(0, 1\)$/m);
  // tokens go into a comment as JSON: a newline cannot start a line of code
  assert.doesNotMatch(mhaSnippet({ ...defaultState(), tokens: ['猫', '\nimport os', '鱼'] }), /^import os/m);
});

test('W_Q, W_K, W_V, W_O are drawn bit for bit as PyTorch draws them; W_Q..W_V are the episode\'s (d_k = 8)', () => {
  for (const c of GOLDEN.cases) {
    const embed = c.state.input === 'embed';   // X = E + PE: the W are the first draws after the seed
    const w = mhaWeights(c.state.seed, c.n, 8, { drawX: !embed });
    for (const k of ['wq', 'wk', 'wv', 'wo']) assertClose(w[k].data, c[k], `${c.name} ${k}`, { atol: 0, rtol: 0 });
    if (embed) {
      assert.equal(w.x, null);
      assertClose(inputWeights({ ...c.state, dk: 8 }).x.data, c.x, `${c.name} x = E + PE`, { atol: 0, rtol: 0 });
      continue;
    }
    if (!c.state.x) assertClose(w.x.data, c.x, `${c.name} x`, { atol: 0, rtol: 0 });
    const ep = episodeWeights(c.state.seed, c.n, 8, 8, 8);
    for (const k of ['x', 'wq', 'wk', 'wv']) assert.deepEqual(w[k].data, ep[k].data, `${c.name}: ${k} is the episode's`);
  }
});

test('computeMha (the C core) matches PyTorch for every golden case; rows sum to 1; masked weights are 0', () => {
  for (const c of GOLDEN.cases) {
    const m = computeMha(attn, { seed: c.state.seed, n: c.n, x: c.state.input === 'embed' ? c.x : c.state.x, heads: c.heads, causal: c.state.causal, input: c.state.input });
    assert.equal(m.perHead.length, c.heads);
    assert.equal(m.dHead, c.d_head);
    const weights = m.res.weights.flatMap((w) => Array.from(w.data));
    for (const [label, ref] of [['float64', c.expected], ['torch float32', c.expected_f32]]) {
      assertClose(weights, flat(ref.weights), `${c.name} weights vs ${label}`);
      assertClose(m.res.heads.flatMap((h) => Array.from(h.data)), flat(ref.heads), `${c.name} heads vs ${label}`);
      assertClose(m.res.concat.data, flat(ref.concat), `${c.name} concat vs ${label}`);
      assertClose(m.res.output.data, flat(ref.output), `${c.name} output vs ${label}`);
    }
    for (const ph of m.perHead) {
      ph.weights.forEach((row, i) => {
        assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-6, `${c.name}: row ${i} sums to 1`);
        if (c.state.causal) row.forEach((w, j) => { if (j > i) assert.equal(w, 0, `${c.name}: masked (${i}, ${j}) is exactly 0`); });
      });
      assert.equal(ph.q[0].length, c.d_head, 'each head sees d_head columns of Q');
    }
  }
});

test('1 head + W_O is the episode\'s self-attention followed by W_O', () => {
  const c = byName('seed0-heads1');
  const m = computeMha(attn, { seed: 0, n: 3, heads: 1 });
  const ep = episodeWeights(0, 3, 8, 8, 8);
  const sa = attn.selfAttention({ x: ep.x, wq: ep.wq, wk: ep.wk, wv: ep.wv });
  assertClose(m.res.weights[0].data, sa.weights.data, 'weights of the single head');
  assertClose(m.res.concat.data, sa.output.data, 'concat = the episode\'s output');
  const wo = toRows(m.w.wo), out = toRows(sa.output);
  const times = out.map((r) => wo[0].map((_, j) => r.reduce((s, v, k) => s + v * wo[k][j], 0)));
  assertClose(m.res.output.data, times.flat(), 'output = episode output · W_O', { atol: 1e-6, rtol: 1e-5 });
  assertClose(m.res.output.data, flat(c.expected.output), 'and PyTorch agrees');
});

test('hash: heads round trips; a bad value falls back to 2', () => {
  for (const heads of HEAD_CHOICES) {
    const s = { ...defaultState(), heads };
    const hash = formatHash(s);
    assert.match(hash, new RegExp(`(^|&)heads=${heads}(&|$)`));
    assert.equal(parseHash('#' + hash).heads, heads);
  }
  assert.equal(defaultState().heads, 2);
  for (const bad of ['#heads=3', '#heads=16', '#heads=0', '#heads=2.0', '#heads=%32%32', '#heads=', '#heads=-2', '#heads=4&heads=x']) {
    const want = bad === '#heads=4&heads=x' ? 4 : 2;   // URLSearchParams.get: the first value
    assert.equal(parseHash(bad).heads, want, bad);
  }
  // an old link without heads still opens (the EP05 page's hashes)
  assert.equal(parseHash('#t=猫&t=吃&t=鱼&seed=0&dk=8&causal=0&lang=zh').heads, 2);
});

// ------------------------------------------------------------------------------------------------
// the page in Chromium

async function open(hash = '', contextOptions = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...contextOptions });
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  await page.goto(URL0 + hash);
  await page.waitForSelector('html[data-complete="true"]', { timeout: 60000 });
  return { page, context, problems };
}

/** What the section shows: visible heatmaps (their titles and cell values), the tables, the snippet. */
const section = (page) => page.evaluate(() => {
  const figs = [...document.querySelectorAll('#mha-grid figure')].filter((f) => !f.hidden);
  const table = (sel) => [...document.querySelectorAll(`${sel} tbody tr`)].map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent)));
  return {
    heads: figs.map((f) => ({
      title: f.querySelector('.attnmap-title')?.textContent,
      label: f.querySelector('svg').getAttribute('aria-label'),
      caption: f.querySelector('figcaption').textContent,
      values: [...f.querySelectorAll('rect.cell')].map((r) => Number(r.dataset.value)),
      masked: [...f.querySelectorAll('rect.cell')].map((r) => r.dataset.masked === 'true'),
    })),
    checked: document.querySelector('#mha-heads input:checked')?.value,
    concat: table('#mha-tables .table-scroll:first-child'),
    wo: table('#mha-tables .table-scroll:last-child'),
    output: table('#mha-output'),
    groups: [...document.querySelectorAll('#mha-tables tr.head-groups th[colspan]')].map((th) => th.textContent),
    snippet: document.querySelector('#mha-snippet').textContent,
    setup: document.querySelector('#mha-setup').textContent,
    message: document.querySelector('#mha-msg').textContent,
    hash: location.hash,
  };
});

/** Tables print 4 decimals: each shown number is the golden value rounded. */
function assertTable(shown, expected, label) {
  const e = flat(expected);
  const a = shown.flat();
  assert.equal(a.length, e.length, `${label}: ${a.length} numbers, expected ${e.length}`);
  a.forEach((v, i) => assert.ok(Math.abs(v - e[i]) <= 5e-5 + 1e-6, `${label}[${i}] shows ${v}, expected ${e[i]}`));
}

function assertSection(s, c, lang = 'zh') {
  assert.equal(s.heads.length, c.heads, `${c.name}: one heatmap per head`);
  assert.equal(s.checked, String(c.heads));
  s.heads.forEach((h, k) => {
    const want = lang === 'zh' ? `头 ${k + 1} · d_head = ${c.d_head}` : `head ${k + 1} · d_head = ${c.d_head}`;
    assert.equal(h.title, want, `${c.name}: head ${k + 1} is labelled`);
    assert.equal(h.values.length, c.n * c.n);
    assertClose(h.values, flat(c.expected_f32.weights[k]), `${c.name} head ${k + 1} weights vs PyTorch float32`);
    assertClose(h.values, flat(c.expected.weights[k]), `${c.name} head ${k + 1} weights vs float64`);
    if (c.state.causal) h.masked.forEach((m, idx) => assert.equal(m, idx % c.n > Math.floor(idx / c.n)));
  });
  assertTable(s.concat, c.expected.concat, `${c.name} concat`);
  assertTable(s.wo, c.wo, `${c.name} W_O`);
  assertTable(s.output, c.expected.output, `${c.name} output`);
  assert.equal(s.snippet, c.snippet[lang], `${c.name}: the page shows the code that was run`);
  assert.match(s.hash, new RegExp(`heads=${c.heads}`));
  assert.equal(s.message, '');
}

test('page: the section opens with 2 heads on 猫吃鱼, seed 0: PyTorch\'s numbers; 1, 4 and 8 heads by the radio buttons', async () => {
  const { page, context, problems } = await open();
  try {
    assertSection(await section(page), byName('seed0-heads2'));
    const mha = page.locator('#mha');
    await mha.scrollIntoViewIfNeeded();
    await page.screenshot({ path: '/tmp/mha-desktop-2.png', fullPage: true, clip: await clipOf(page, '#mha', 1500) });
    for (const heads of [1, 4, 8]) {
      await page.check(`#mha-heads input[value="${heads}"]`);
      const s = await section(page);
      assertSection(s, byName(`seed0-heads${heads}`));
      if (heads === 8) await page.screenshot({ path: '/tmp/mha-desktop-8.png', fullPage: true, clip: await clipOf(page, '#mha', 1500) });
      if (heads === 1) {
        // with one head, the heatmap is the one at the top of the page (d_k = 8)
        const main = await page.$$eval('#main-heatmap rect.cell', (rs) => rs.map((r) => Number(r.dataset.value)));
        assertClose(s.heads[0].values, main, 'head 1 of 1 = the page\'s heatmap');
        assert.equal(await page.isVisible('#mha-one'), true);
        await page.screenshot({ path: '/tmp/mha-desktop-1.png', fullPage: true, clip: await clipOf(page, '#mha', 1100) });
      } else {
        assert.equal(await page.isVisible('#mha-one'), false);
      }
      // the concat's head bands: one group per head
      assert.equal(s.groups.length, heads);
    }
    // the page state stays one: the rest of the page did not move
    assert.equal(await page.$$eval('#main-heatmap rect.cell', (rs) => rs.length), 9);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('page: tokens, seed, causal and an edited X come from the page state (golden cases); hash round trip', async () => {
  const { page, context, problems } = await open();
  try {
    await page.click('#causal');
    assertSection(await section(page), byName('seed0-heads2-causal'));
    await page.screenshot({ path: '/tmp/mha-causal.png', fullPage: true, clip: await clipOf(page, '#mha', 900) });
    await page.click('#causal');
    await page.fill('#tokens', '我 爱 吃 小 鱼');
    await page.fill('#seed', '42');
    await page.check('#mha-heads input[value="4"]');
    const s = await section(page);
    assertSection(s, byName('seed42-5tokens-heads4'));
    // reload from the hash: the same section
    const again = await open(s.hash);
    try {
      assert.deepEqual(await section(again.page), s);
      assert.deepEqual(again.problems, []);
    } finally {
      await again.context.close();
    }
    // the edited-X case through a link, and through the X table; d_k = 4 leaves the section alone
    const c = byName('seed7-edited-x-heads2-causal');
    const hash = '#' + formatHash({ ...defaultState(), ...c.state, dk: 4 });
    await page.goto('about:blank');
    await page.goto(URL0 + hash);
    await page.waitForSelector('html[data-complete="true"]');
    const e = await section(page);
    assertSection(e, c);
    assert.match(e.setup, /d_k = 4/, 'the setup line says that d_k does not apply here');
    await page.fill('#x-table input[data-row="3"][data-col="7"]', '-2');
    await page.press('#x-table input[data-row="3"][data-col="7"]', 'Enter');
    const x = c.state.x.map((r) => [...r]);
    x[3][7] = -2;
    const m = computeMha(attn, { seed: 7, n: 4, x, heads: 2, causal: true });
    const after = await section(page);
    assertClose(after.heads[1].values, m.res.weights[1].data, 'edited X: recomputed by the core');
    assert.match(after.snippet, /\[3\.0, 0\.0, 0\.0, 0\.0, 0\.0, 0\.0, 0\.0, -2\.0\],/);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('page: an X the core refuses for the MHA (but not for episode 05) gives a message in the section, no stale numbers', async () => {
  // X = 1.4e19 everywhere: with d_k = 2 the episode's scores fit in float32, the 8-wide head's do not
  const row = Array(8).fill('1.4e19').join(',');
  const { page, context, problems } = await open(`#dk=2&heads=1&x=${row};${row};${row}`);
  try {
    const s = await section(page);
    assert.match(s.message, /NON_FINITE/);
    assert.equal(s.heads.length, 0, 'no heatmaps');
    assert.deepEqual([s.concat, s.output, s.snippet], [[], [], '']);
    assert.equal(await page.$$eval('#main-heatmap rect.cell', (rs) => rs.length), 9, 'the rest of the page works');
    // a valid X again: the section comes back
    await page.click('#reset-x');
    const back = await section(page);
    assert.equal(back.message, '');
    assert.equal(back.heads.length, 1);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('page: keyboard reaches each head\'s heatmap; the explanation names the head and d_head', async () => {
  const { page, context, problems } = await open('#heads=2');
  try {
    // head 2's grid has its own tab stop, after head 1's
    await page.focus('#mha-heads input:checked');
    const focused = () => page.evaluate(() => {
      const el = document.activeElement;
      return { role: el.getAttribute('role'), label: el.getAttribute('aria-label'), box: el.closest('.heatmap')?.id ?? null };
    });
    const seen = [];
    for (let i = 0; i < 6 && seen.length < 2; i++) {
      await page.keyboard.press('Tab');
      const f = await focused();
      if (f.role === 'gridcell') seen.push(f.box);
    }
    assert.deepEqual(seen, ['mha-h0', 'mha-h1'], 'Tab goes through head 1, then head 2');
    const w = byName('seed0-heads2').expected_f32.weights[1];
    assert.equal((await focused()).label, `吃 → 猫: ${w[1][0].toFixed(4)}`);
    await page.keyboard.press('ArrowRight');
    assert.equal((await focused()).label, `吃 → 吃: ${w[1][1].toFixed(4)}`);
    const text = await page.textContent('#mha-explain');
    assert.match(text, /^头 2 · d_head = 4/);
    assert.ok(text.includes('√4'), 'scaled by √d_head');
    assert.ok(text.includes(w[1][1].toFixed(4)), 'ends on the core\'s weight');
    // the radio group works by keyboard too
    await page.focus('#mha-heads input:checked');
    await page.keyboard.press('ArrowRight');
    assert.equal((await section(page)).heads.length, 4);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('page: English, and dark mode', async () => {
  const { page, context, problems } = await open('#heads=2&lang=en', { colorScheme: 'dark' });
  try {
    const s = await section(page);
    assertSection(s, byName('seed0-heads2'), 'en');
    assert.match(await page.textContent('#mha-title'), /Multi-head attention/);
    assert.equal(s.heads[0].caption, 'uses columns 1–4 of WQ, WK, WV');
    await page.screenshot({ path: '/tmp/mha-dark.png', fullPage: true, clip: await clipOf(page, '#mha', 1100) });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.screenshot({ path: '/tmp/mha-english.png', fullPage: true, clip: await clipOf(page, '#mha', 1100) });
    await page.click('#lang');
    assert.equal((await section(page)).heads[0].title, '头 1 · d_head = 4');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('page: a 360-px phone has no horizontal page scroll with 1, 2, 4, 8 heads, also with 16 tokens', async () => {
  const { page, context, problems } = await open('', { viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  try {
    const scrollWidth = () => page.evaluate(() => document.scrollingElement.scrollWidth);
    for (const heads of [1, 2, 4, 8]) {
      await page.check(`#mha-heads input[value="${heads}"]`);
      assert.equal((await section(page)).heads.length, heads);
      assert.ok(await scrollWidth() <= 360, `${heads} heads: scrollWidth ${await scrollWidth()}`);
      if (heads === 2 || heads === 8) {
        await page.screenshot({ path: `/tmp/mha-phone-${heads}.png`, fullPage: true, clip: await clipOf(page, '#mha', 1500, 360) });
      }
    }
    // heads wrap: with 8 heads, one per row on a phone (two side by side would draw their
    // legends' numbers under 9 px: issue 39 P7, tests/browser/page-review39c.test.js)
    const tops = await page.$$eval('#mha-grid figure:not([hidden])', (fs) => fs.map((f) => Math.round(f.getBoundingClientRect().top)));
    assert.equal(new Set(tops).size, 8, `8 heads in 8 rows, got tops ${tops}`);
    await page.fill('#tokens', 'The quick brown fox jumps over the lazy dog and then 猫 吃 鱼 again today');
    assert.equal((await section(page)).heads[0].values.length, 256);
    assert.ok(await scrollWidth() <= 360, `16 tokens, 8 heads: scrollWidth ${await scrollWidth()}`);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

/** A clip of the page around a selector (for full-page screenshots), at most maxHeight tall. */
async function clipOf(page, sel, maxHeight, width = 1280) {
  const box = await page.locator(sel).boundingBox();
  const y = Math.max(0, box.y + (await page.evaluate(() => window.scrollY)) - 8);
  return { x: 0, y, width, height: Math.min(maxHeight, box.height + 16) };
}
