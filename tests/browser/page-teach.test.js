// Issue 14 on the page: X = E[token] + PE(position) against PyTorch (tests/golden/page-pe.json, made by
// tests/golden/page_pe.py, which runs the very snippet the page shows), word order with and without
// PE, step ④ as a picture, the formula bar, the heatmap's colour scales and its temperature. Node
// checks first, then the real page in Chromium over http (one browser for the file).
//
//   node --test tests/browser/page-teach.test.js
//
// Screenshots for a person to look at: /tmp/teach-{1280,390}-{top,words,step4}.png
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../../scripts/serve.js';
import { createAttention, toRows } from '../../web/core/attention.js';
import { renderHeatmap } from '../../web/heatmap/heatmap.js';
import { inputWeights, positionalEncoding, tokenSeed, reversed, alignRows, difference } from '../../web/page/page-pe.js';
import { entropyBits } from '../../web/page/page-scale.js';
import { pythonSnippet } from '../../web/page/page-format.js';
import { parseHash, formatHash, defaultState } from '../../web/page/page-state.js';
import { root, assertClose } from '../helpers.js';
import { launch, pageErrors } from './browser.js';

const GOLDEN = JSON.parse(fs.readFileSync(path.join(root, 'tests/golden/page-pe.json'), 'utf8'));
const byName = (name) => GOLDEN.cases.find((c) => c.name === name);

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

async function open(hash = '', viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const errors = pageErrors(page);
  await page.goto(URL0 + hash);
  await page.waitForSelector('html[data-complete="true"]', { timeout: 60000 });
  return { page, context, errors };
}

const hashOf = (st) => '#' + formatHash({ ...defaultState(), ...st });
const cells = (page, sel = '#main-heatmap') => page.$$eval(`${sel} rect.cell`, (rs) => rs.map((r) => Number(r.dataset.value)));
const fills = (page, sel = '#main-heatmap') => page.$$eval(`${sel} rect.cell`, (rs) => rs.map((r) => r.getAttribute('fill')));
const legendText = (page) => page.$$eval('#main-heatmap .legend text', (ts) => ts.map((t) => t.textContent));
const tableRows = (page, sel) => page.$$eval(`${sel} tbody tr`, (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent))));
// two frames: page.js adjusts the heatmap boxes (margins, scroll hints) in a requestAnimationFrame
const settle = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
const softmax = (z) => { const m = Math.max(...z); const e = z.map((v) => Math.exp(v - m)); const s = e.reduce((a, b) => a + b, 0); return e.map((v) => v / s); };

// ------------------------------------------------------------------------------------------------
// Node: the definition, the snippet and the renderer option

test('golden file: made by page_pe.py with torch, both modes, the cases the issue asks for', () => {
  assert.equal(GOLDEN.version, 1);
  assert.equal(GOLDEN.generator, 'tests/golden/page_pe.py');
  assert.ok(fs.existsSync(path.join(root, GOLDEN.generator)));
  assert.match(GOLDEN.torch, /^1\./);
  for (const name of ['cat-pe-seed0', 'cat-nope-seed0', 'fish-pe-seed0', 'fish-nope-seed0', 'repeat-nope-seed42',
    'latin16-pe-seed42', 'latin16-nope-seed0', 'cat-pe-seed0-dk4-causal', 'cat-randn-seed0']) assert.ok(byName(name), name);
  assert.equal(byName('latin16-pe-seed42').n, 16);
  assert.match(byName('cat-pe-seed0').printed, /tensor\(\[\[0\.3283, 0\.2315, 0\.4401\]/, 'what the snippet printed');
});

test('the page shows exactly the code page_pe.py ran; E, PE, X and the W are PyTorch\'s bit for bit', () => {
  for (const c of GOLDEN.cases) {
    for (const lang of ['zh', 'en']) {
      assert.equal(pythonSnippet(c.state, lang), c.snippet[lang], `${c.name} (${lang}): regenerate with /usr/bin/python3 tests/golden/page_pe.py`);
    }
    const w = inputWeights(c.state);
    for (const k of ['x', 'wq', 'wk', 'wv']) assertClose(w[k].data, c[k], `${c.name} ${k}`, { atol: 0, rtol: 0 });
    if (c.e) assertClose(w.e.flat(), c.e, `${c.name} E`, { atol: 0, rtol: 0 });
    if (c.pe) assertClose(positionalEncoding(c.n).flat(), c.pe, `${c.name} PE`, { atol: 0, rtol: 0 });
    const r = attn.selfAttention({ x: w.x, wq: w.wq, wk: w.wk, wv: w.wv }, { causal: c.state.causal });
    assertClose(r.weights, c.expected.weights, `${c.name} weights`);
    assertClose(r.output, c.expected.output, `${c.name} output`);
  }
  // the article's mode is the article's snippet: X = torch.randn(n, 8), no E anywhere
  assert.match(pythonSnippet(defaultState()), /^X = torch\.randn\(3, 8\)$/m);
  assert.doesNotMatch(pythonSnippet(defaultState()), /embedding|PE/);
  // a token cannot break out of the Python string it becomes
  const code = pythonSnippet({ ...defaultState(), input: 'embed', tokens: ['猫', '"]\nimport os\n#', '鱼'] });
  assert.doesNotMatch(code, /^import os/m);
});

test('E is a lookup: the same word, the same vector wherever it stands and in any sentence', () => {
  const a = inputWeights({ tokens: ['猫', '吃', '鱼'], seed: 3, dk: 8, input: 'embed', pe: false });
  const b = inputWeights({ tokens: ['狗', '追', '猫', '猫'], seed: 3, dk: 8, input: 'embed', pe: false });
  assert.deepEqual(b.e[2], a.e[0]);
  assert.deepEqual(b.e[3], a.e[0]);
  assert.notDeepEqual(a.e[1], a.e[0]);
  assert.deepEqual(b.wq.data, a.wq.data, 'W does not depend on the sentence');
  assert.notDeepEqual(inputWeights({ tokens: ['猫'], seed: 4, dk: 8, input: 'embed' }).e[0], a.e[0], 'another seed, another table');
  assert.ok(Number.isInteger(tokenSeed(0, '猫')) && tokenSeed(0, '猫') >= 0 && tokenSeed(0, '猫') < 2 ** 32);
  const { perm } = reversed(['a', 'b', 'c']);
  assert.deepEqual(perm, [2, 1, 0]);
  assert.equal(difference([[1, 2], [3, 4]], alignRows([[4, 3], [2, 1]], [1, 0])).max, 0);
});

test('hash: the new fields round trip; the default link does not change', () => {
  const st = { ...defaultState(), input: 'embed', pe: false, temp: 2, colour: 'log' };
  const back = parseHash('#' + formatHash(st));
  for (const k of ['input', 'pe', 'temp', 'colour']) assert.equal(back[k], st[k], k);
  assert.equal(formatHash(defaultState()), 't=%E7%8C%AB&t=%E5%90%83&t=%E9%B1%BC&seed=0&dk=8&causal=0&heads=2&lang=zh');
  for (const bad of ['#input=bert', '#temp=0.4', '#temp=1e1', '#colour=rainbow', '#pe=2']) {
    const s = parseHash(bad);
    assert.deepEqual([s.input, s.pe, s.temp, s.colour], ['randn', true, 1, 'unit'], bad);
  }
});

test('renderer colourScale: absent and "unit" are byte-identical; "data" and "log" recolour and relabel', () => {
  const w = toRows(attn.selfAttention(inputWeights({ tokens: ['猫', '吃', '鱼'], seed: 0, dk: 8 })).weights);
  const sets = [{}, { rowLabels: ['猫', '吃', '鱼'], colLabels: ['猫', '吃', '鱼'], lang: 'en', decimals: 4 }, { masked: 'causal', standalone: true },
    { role: 'grid', activeCell: [1, 0], focusRing: true, idPrefix: 'm' }];
  for (const o of sets) assert.equal(renderHeatmap(w, { ...o, colourScale: 'unit' }), renderHeatmap(w, o));
  const fillsOf = (svg) => [...svg.matchAll(/<rect class="cell"[^>]* fill="(#[0-9a-f]{6})"/g)].map((m) => m[1]);
  const ticksOf = (svg) => [...svg.matchAll(/<text x="[\d.]+" y="[\d.]+" dy="0.35em" font-size="11" fill="currentColor">([^<]*)<\/text>/g)].map((m) => m[1]);
  const unit = renderHeatmap(w, {}), data = renderHeatmap(w, { colourScale: 'data' }), log = renderHeatmap(w, { colourScale: 'log' });
  assert.notDeepEqual(fillsOf(data), fillsOf(unit));
  assert.notDeepEqual(fillsOf(log), fillsOf(data));
  const flat = w.flat();
  // 'data': the smallest weight is the bottom of viridis, the largest the top
  assert.equal(fillsOf(data)[flat.indexOf(Math.min(...flat))], '#440154');
  assert.equal(fillsOf(data)[flat.indexOf(Math.max(...flat))], '#fde725');
  assert.deepEqual(ticksOf(unit), ['0', '0.25', '0.5', '0.75', '1']);
  assert.notDeepEqual(ticksOf(data), ticksOf(unit));
  assert.match(data, /class="legend-caption"[^>]*>数据范围 /);
  assert.match(log, /class="legend-caption"[^>]*>对数 /);
  // a log scale over 1e-4 .. 1 puts its ticks at the powers of ten, evenly spaced
  const wide = renderHeatmap([[1e-4, 1e-3], [1e-2, 1]], { colourScale: 'log', lang: 'en' });
  assert.deepEqual(ticksOf(wide), ['0.0001', '0.001', '0.01', '0.1', '1']);
  assert.throws(() => renderHeatmap(w, { colourScale: 'fancy' }), /colourScale must be/);
});

// ------------------------------------------------------------------------------------------------
// the page

test('PE mode on the page: the heatmap and X equal PyTorch\'s for every golden case; the snippet follows', async () => {
  const { page, context, errors } = await open();
  try {
    for (const c of GOLDEN.cases) {
      await page.goto('about:blank');
      await page.goto(URL0 + hashOf(c.state));
      await page.waitForSelector('html[data-complete="true"]');
      assertClose(await cells(page), c.expected.weights, `${c.name}: heatmap vs PyTorch`);
      assertClose((await page.$$eval('#x-table input', (is) => is.map((i) => Number(i.value)))), c.x, `${c.name}: X table`, { atol: 5e-5, rtol: 0 });
      assert.equal(await page.textContent('#snippet'), c.snippet.zh, `${c.name}: the snippet shown is the one PyTorch ran`);
    }
    // and through the controls: the article's page, then Embedding + PE, then PE off
    await page.goto(URL0);
    await page.waitForSelector('html[data-complete="true"]');
    assertClose(await cells(page), byName('cat-randn-seed0').expected.weights, 'default page');
    assert.equal(await page.isDisabled('#words-pe'), true, 'the PE switch waits for the embed mode');
    await page.click('#words-input .seg-item:has(input[value="embed"])');
    assertClose(await cells(page), byName('cat-pe-seed0').expected.weights, 'after choosing Embedding + PE');
    assert.match(await page.evaluate(() => location.hash), /input=embed&pe=1/);
    await page.click('#words .switch');
    assertClose(await cells(page), byName('cat-nope-seed0').expected.weights, 'after switching PE off');
    assert.match(await page.evaluate(() => location.hash), /input=embed&pe=0/);
    assert.equal(await page.textContent('#snippet'), byName('cat-nope-seed0').snippet.zh);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test('鱼吃猫 without PE is 猫吃鱼 with rows and columns reordered (3 2 1), exactly; with PE it is not', async () => {
  const { page, context, errors } = await open(hashOf({ input: 'embed', pe: false }));
  try {
    const grid = async (sel) => { const v = await cells(page, sel); const n = Math.sqrt(v.length); return Array.from({ length: n }, (_, i) => v.slice(i * n, i * n + n)); };
    const a = await grid('#words-a'), b = await grid('#words-b');
    assert.deepEqual(await page.$$eval('#words-b .row-label', (ts) => ts.map((t) => t.textContent)), ['鱼', '吃', '猫']);
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) assert.equal(b[i][j], a[2 - i][2 - j], `cell ${i},${j}`);
    assert.equal(await page.getAttribute('#words-verdict', 'data-perm'), '(3 2 1)');
    assert.equal(await page.getAttribute('#words-verdict', 'data-gap'), '0');
    assert.match(await page.textContent('#words-verdict'), /鱼吃猫 就是 猫吃鱼 的行和列按 \(3 2 1\) 重新排列/);
    // the same numbers as PyTorch's 鱼吃猫 (golden), and 猫吃鱼's
    assertClose(b.flat(), byName('fish-nope-seed0').expected.weights, '鱼吃猫 without PE');

    await page.click('#words .switch');
    const a2 = await grid('#words-a'), b2 = await grid('#words-b');
    assertClose(b2.flat(), byName('fish-pe-seed0').expected.weights, '鱼吃猫 with PE');
    const gap = Math.max(...b2.flatMap((r, i) => r.map((v, j) => Math.abs(v - a2[2 - i][2 - j]))));
    assert.ok(gap > 1e-3, `with PE the reordered weights differ (largest gap ${gap})`);
    assert.equal(Number(await page.getAttribute('#words-verdict', 'data-gap')), gap);
    // in the article's mode X ignores the words: the two heatmaps are identical
    await page.click('#words-input .seg-item:has(input[value="randn"])');
    assert.deepEqual(await cells(page, '#words-b'), await cells(page, '#words-a'));
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test('the same word gets the same row of X in two positions (PE off), and different rows with PE', async () => {
  const { page, context, errors } = await open(hashOf({ tokens: ['猫', '吃', '猫'], seed: 42, input: 'embed', pe: false }));
  try {
    const x = async () => page.$$eval('#x-table tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('input')].map((i) => i.value)));
    let rows = await x();
    assert.deepEqual(rows[2], rows[0]);
    assert.notDeepEqual(rows[1], rows[0]);
    assertClose(rows.flat().map(Number), byName('repeat-nope-seed42').x, 'X vs PyTorch', { atol: 5e-5, rtol: 0 });
    // both 猫 rows of the weights are equal too: same query, same keys
    const w = await cells(page);
    assert.deepEqual(w.slice(6, 9), w.slice(0, 3));
    await page.click('#words .switch');
    rows = await x();
    assert.notDeepEqual(rows[2], rows[0], 'PE tells the two 猫 apart');
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test('step ④ as a picture: the selected row\'s weighted V strips add up to its output row', async () => {
  const { page, context, errors } = await open(hashOf({ input: 'embed', tokens: ['我', '爱', '吃', '小', '鱼'], seed: 42, causal: true }));
  try {
    const out = await tableRows(page, '#output-table');
    for (const row of [1, 3, 4]) {
      await page.hover(`#main-heatmap rect.cell[data-row="${row}"][data-col="0"]`);
      const pic = await page.$eval('#step4-picture svg', (svg) => ({
        terms: [...svg.querySelectorAll('g.term')].map((g) => ({ col: Number(g.dataset.col), weight: Number(g.dataset.weight),
          bars: [...g.querySelectorAll('rect.bar.wv')].map((r) => Number(r.dataset.value)) })),
        out: [...svg.querySelectorAll('g.out rect.bar.out')].map((r) => Number(r.dataset.value)),
        outRow: Number(svg.querySelector('g.out').dataset.row),
        title: svg.querySelector('title').textContent,
      }));
      assert.equal(pic.outRow, row);
      assert.deepEqual(pic.terms.map((t) => t.col), Array.from({ length: row + 1 }, (_, j) => j), 'causal: V of the tokens up to the row');
      const sum = pic.out.map((_, k) => pic.terms.reduce((s, t) => s + t.bars[k], 0));
      assertClose(sum, pic.out, `row ${row}: the sum of the strips is the drawn output`);
      assertClose(pic.out, out[row], `row ${row}: the drawn output is the output table's row`, { atol: 5e-5, rtol: 0 });
      const weights = (await cells(page)).slice(row * 5, row * 5 + 5);
      pic.terms.forEach((t) => assert.equal(t.weight, weights[t.col]));
      assert.match(pic.title, new RegExp(`「${['我', '爱', '吃', '小', '鱼'][row]}」的输出`));
    }
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test('the formula stays in view through steps ①–④ and lights up the step being read', async () => {
  const { page, context, errors } = await open();
  try {
    for (const k of [1, 2, 3, 4]) {
      await page.evaluate((id) => document.getElementById(id).scrollIntoView(), `step-${k}`);
      await page.waitForFunction((k) => document.getElementById('formula-bar').dataset.step === String(k), k);
      const on = await page.$$eval('#formula-bar .f-part.on', (as) => as.map((a) => a.dataset.step));
      assert.ok(on.length >= 1 && on.every((s) => s === String(k)), `step ${k}: lit ${on}`);
      const top = await page.$eval('#formula-bar', (b) => b.getBoundingClientRect().top);
      assert.ok(top > -1 && top < 80, `step ${k}: the bar is in view at the top (${top})`);
      assert.equal(await page.isVisible('#formula-bar'), true);
    }
    assert.match(await page.textContent('#formula-bar'), /Attention\(Q, K, V\) = softmax\(QKT \/ √dk\) V/);
    await page.evaluate(() => document.getElementById('scaling').scrollIntoView());
    await page.waitForFunction(() => document.getElementById('formula-bar').classList.contains('past'));
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test('colour scales: data and log recolour the cells and relabel the bar; back to 0–1 is the same SVG', async () => {
  const { page, context, errors } = await open();
  try {
    await settle(page);
    const before = await page.innerHTML('#main-heatmap');
    const f0 = await fills(page), l0 = await legendText(page);
    assert.deepEqual(l0, ['0', '0.25', '0.5', '0.75', '1']);
    await page.click('#colour-scale .seg-item:has(input[value="data"])');
    const f1 = await fills(page), l1 = await legendText(page);
    assert.notDeepEqual(f1, f0);
    assert.ok(l1.some((t) => t.startsWith('数据范围')), l1.join(' | '));
    assert.match(await page.evaluate(() => location.hash), /colour=data/);
    await page.click('#colour-scale .seg-item:has(input[value="log"])');
    const f2 = await fills(page), l2 = await legendText(page);
    assert.notDeepEqual(f2, f1);
    assert.ok(l2.some((t) => t.startsWith('对数')), l2.join(' | '));
    await page.click('#colour-scale .seg-item:has(input[value="unit"])');
    await settle(page);
    assert.equal(await page.innerHTML('#main-heatmap'), before, '0–1 gives today\'s SVG byte for byte');
    assert.doesNotMatch(await page.evaluate(() => location.hash), /colour=/);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test('temperature: the weights become softmax(z/T) of the page\'s scores; the entropy read-out is right', async () => {
  const { page, context, errors } = await open();
  try {
    const z = (await tableRows(page, '#scores-table')).map((r) => r.map((v) => v / Math.sqrt(8)));   // QKᵀ/√d_k, 4 decimals
    // a slider's second input within a frame is drawn in the next frame (page.js setView): settle
    const setTemp = async (index) => {
      await page.$eval('#temp', (el, v) => { el.value = String(v); el.dispatchEvent(new Event('input', { bubbles: true })); }, index);
      await settle(page);
    };
    for (const [index, T] of [[8, 3], [2, 0.3], [5, 1]]) {
      await setTemp(index);
      assert.equal(await page.textContent('#temp-value'), `T = ${T}`);
      const w = await cells(page);
      const expected = z.flatMap((row) => softmax(row.map((v) => v / T)));
      assertClose(w, expected, `T = ${T}: softmax(z/T) from the page's scores table`, { atol: 5e-4 / T, rtol: 0 });
      // and tighter, against the same core in Node with scale 1/(T·√d_k)
      const wts = inputWeights({ ...defaultState() });
      const ref = attn.selfAttention({ x: wts.x, wq: wts.wq, wk: wts.wk, wv: wts.wv }, { scale: 1 / (T * Math.sqrt(8)) });
      assertClose(w, ref.weights.data, `T = ${T}: vs the core`, { atol: 1e-6, rtol: 0 });
      const bits = await page.$$eval('#entropy li', (ls) => ls.map((l) => Number(l.dataset.bits)));
      const rows = [0, 1, 2].map((i) => w.slice(i * 3, i * 3 + 3));
      assertClose(bits, rows.map(entropyBits), `T = ${T}: entropy`, { atol: 1e-6, rtol: 0 });
      const shown = await page.$$eval('#entropy .entropy-value', (ss) => ss.map((s) => s.textContent));
      assert.deepEqual(shown, bits.map((b) => `${b.toFixed(3)} 比特`));
      if (T !== 1) assert.match(await page.getAttribute('#main-heatmap svg', 'aria-label'), new RegExp(`softmax\\(QKᵀ/\\(${T}·√8\\)\\)`));
    }
    // hotter is flatter: entropy grows with T, up to log2(3)
    const at = async (index) => {
      await setTemp(index);
      return page.$$eval('#entropy li', (ls) => ls.map((l) => Number(l.dataset.bits)));
    };
    const cold = await at(0), hot = await at(10);
    cold.forEach((c, i) => assert.ok(c < hot[i] && hot[i] <= Math.log2(3) + 1e-12));
    await page.waitForFunction(() => /temp=10/.test(location.hash));    // written once the slider rests
    // the explanation divides by T·√d_k
    await page.hover('#main-heatmap rect.cell[data-row="1"][data-col="0"]');
    assert.match(await page.textContent('#main-explain'), /÷ \(10·√8\) = .* ÷ 28\.2843 = /);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test('screenshots at 1280 and 390 px (zh): no horizontal scroll (/tmp/teach-*.png)', async () => {
  for (const width of [1280, 390]) {
    const { page, context, errors } = await open(hashOf({ input: 'embed' }), { width, height: 900 });
    try {
      await page.screenshot({ path: `/tmp/teach-${width}-top.png` });
      await page.locator('#words').screenshot({ path: `/tmp/teach-${width}-words.png` });
      await page.evaluate(() => document.getElementById('step-4').scrollIntoView());
      await page.waitForTimeout(200);
      await page.screenshot({ path: `/tmp/teach-${width}-step4.png` });
      const sw = await page.evaluate(() => document.scrollingElement.scrollWidth);
      assert.ok(sw <= width, `scrollWidth ${sw} at ${width}px`);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  }
});

test('embed mode reaches the multi-head section and the notes: its snippet makes X = E + PE and prints the numbers shown (tests/golden/page-mha.json)', async () => {
  const mha = JSON.parse(fs.readFileSync(path.join(root, 'tests/golden/page-mha.json'), 'utf8'));
  const c = mha.cases.find((x) => x.name === 'seed42-embed-pe-heads2-causal');
  const { page, context, errors } = await open(hashOf({ ...c.state, heads: c.heads, lang: 'en' }));
  try {
    assert.equal(await page.textContent('#mha-snippet'), c.snippet.en, 'the snippet PyTorch ran');
    assert.match(c.snippet.en, /def embedding\(token\):/);
    assert.doesNotMatch(c.snippet.en, /torch\.randn\(4, 8\)/);
    const shown = await page.$$eval('#mha-grid svg', (svgs) => svgs.map((s) => [...s.querySelectorAll('rect.cell')].map((r) => Number(r.dataset.value))));
    assertClose(shown.flat(), c.expected.weights.flat(Infinity), 'each head\'s weights vs PyTorch');
    assert.match(await page.textContent('#source-note'), /X = E\[token\] \+ PE/);
    assert.match(await page.textContent('#step-x'), /unless you pick “Embedding \+ positions” above/);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});
