// page-compare.test.js - issue 24's "make comparisons visual" on the page, in Chromium:
//   - 猫吃鱼 vs 鱼吃猫 (page-pe.js): the aligned view is 鱼吃猫's weights in 猫吃鱼's order, the
//     difference map is |w1 − w2| cell by cell, equal to PyTorch's (tests/golden/page-pe.json) with
//     PE, all zeros without it, its largest value printed with 4 decimals (0.0534);
//   - the main heatmap's default colour scale per map (page-scale.js): data range at 16 tokens,
//     0–1 at 3, a caption naming the scale on; a reader's choice wins and stays in the link;
//   - the trained toy (page-trained.js): 我看见小狗在追猫 by default (追 → 狗 0.9996 in layer 0
//     head 2), 猫吃鱼 one click away; its head view's lines are the toy's weights;
//   - defect 5: the random card's title is whole (no "…") at 320, 390 and 1280, zh and en, causal
//     on and off;
//   - defect 10: the toy's heads as the checkpoint grid's: thumbnails that are buttons, one head
//     enlarged, its cells hoverable and focusable with the arrow keys, no text under 9 px at
//     320, the caption's row marked.
// Screenshots for a person: /tmp/page-compare-*.png
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../../scripts/serve.js';
import { loadModel } from '../../web/model/model-node.js';
import { defaultState, formatHash } from '../../web/page/page-state.js';
import { zh, en } from '../../web/page/page-strings.js';
import { root, assertClose } from '../helpers.js';
import { launch, openPage } from './browser.js';

const TOL = { atol: 1e-5, rtol: 1e-5 };        // |a - e| <= atol + rtol·|e|
const GOLDEN = Object.fromEntries(JSON.parse(fs.readFileSync(path.join(root, 'tests/golden/page-pe.json'), 'utf8')).cases.map((c) => [c.name, c]));
const LONG = 'the cat saw the fish and the fish saw the cat eat it then ran off'.split(' ');   // 16 tokens
const EXAMPLE = '我看见小狗在追猫';
const STRINGS = { zh, en };

let browser, server, URL0, toy;
before(async () => {
  server = await startServer({ root, port: 0 });
  URL0 = `${server.url}index.html`;
  browser = await launch();
  const t = await import('../../web/models/toy-zh/toy-zh.js');
  toy = await loadModel({ config: t.config, weights: t.weights, vocabTxt: t.vocabTxt });
});
after(async () => { toy?.dispose(); await browser?.close(); await server?.close(); });

const hashOf = (st) => '#' + formatHash({ ...defaultState(), ...st });
/** A fresh page, every section drawn (page-lazy.js draws those below the fold in idle time). */
async function open(st = {}, width = 1280) {
  const r = await openPage(browser, URL0 + hashOf(st), { viewport: { width, height: 900 } });
  await drawn(r.page);
  return r;
}
const drawn = (page) => page.waitForSelector('html[data-complete="true"]', { state: 'attached', timeout: 30000 });
/** The cells of a heatmap as an n × n matrix of data-value (masked cells: null). */
const matrixOf = (page, sel) => page.$$eval(`${sel} rect.cell`, (rs) => {
  const n = Math.round(Math.sqrt(rs.length)), m = Array.from({ length: n }, () => new Array(n).fill(null));
  for (const r of rs) if (r.dataset.masked !== 'true') m[Number(r.dataset.row)][Number(r.dataset.col)] = Number(r.dataset.value);
  return m;
});
const toyRun = (text) => {
  const ids = toy.encode(text);
  return { ids, labels: toy.tokens(ids), attention: toy.forward(ids, { attention: true }).attention };
};
async function trainedMode(page) {
  await page.check('input[name="trained-mode"][value="trained"]');
  await page.waitForSelector('#trained-grid svg[data-model="toy-zh"]', { timeout: 20000 });
}

// ------------------------------------------------------------------------------------------------
// 猫吃鱼 vs 鱼吃猫

test('PE on: the aligned view is 鱼吃猫 in 猫吃鱼\'s order; the difference map is |w1 − w2|, PyTorch\'s, max 0.0534 printed', async () => {
  const { page, context, errors } = await open({ input: 'embed', pe: true });
  try {
    const cat = GOLDEN['cat-pe-seed0'].expected.weights, fish = GOLDEN['fish-pe-seed0'].expected.weights;
    const n = 3, back = (i) => n - 1 - i;                      // 鱼吃猫 is 猫吃鱼 backwards
    const want = cat.map((row, i) => row.map((v, j) => Math.abs(v - fish[back(i)][back(j)])));
    const a = await matrixOf(page, '#words-a'), b = await matrixOf(page, '#words-b');
    const aligned = await matrixOf(page, '#words-aligned'), diff = await matrixOf(page, '#words-diff');
    // from the core's two maps on the page
    assert.deepEqual(aligned, a.map((row, i) => row.map((_, j) => b[back(i)][back(j)])), 'aligned: B\'s cells moved to A\'s rows and columns');
    assertClose(diff.flat(), a.flat().map((v, k) => Math.abs(v - aligned.flat()[k])), 'difference = |A − aligned B|', { atol: 1e-7, rtol: 0 });
    // and PyTorch's
    assertClose(aligned.flat(), fish.map((r, i) => r.map((_, j) => fish[back(i)][back(j)])).flat(), 'aligned vs PyTorch', TOL);
    assertClose(diff.flat(), want.flat(), 'difference vs PyTorch', TOL);
    const max = Math.max(...want.flat());
    assert.ok(max > 0.05 && max < 0.06, `the largest difference is ${max}`);
    const cap = await page.textContent('#words-diff-cap');
    assert.ok(cap.includes(max.toFixed(4)), `the caption prints ${max.toFixed(4)}: ${cap}`);
    assert.ok(cap.includes('「猫」→「鱼」'), `and where: ${cap}`);
    // the cell values are drawn with 4 decimals, so 0.0534 is not "0.05"
    const drawn = await page.$$eval('#words-diff text.cell-value', (ts) => ts.map((t) => t.textContent));
    assert.ok(drawn.includes(max.toFixed(4)), `the cell shows ${max.toFixed(4)}: ${drawn}`);
    await page.locator('#words').screenshot({ path: '/tmp/page-compare-words-pe.png' });
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test('PE off: the aligned view equals 猫吃鱼 and the difference map is all zeros; causal: the mask moves with the words', async () => {
  const { page, context, errors } = await open({ input: 'embed', pe: false });
  try {
    const a = await matrixOf(page, '#words-a'), aligned = await matrixOf(page, '#words-aligned');
    assertClose(aligned.flat(), a.flat(), 'aligned = A without PE', { atol: 1e-7, rtol: 0 });
    assertClose(aligned.flat(), GOLDEN['cat-nope-seed0'].expected.weights.flat(), 'aligned vs PyTorch', TOL);
    assert.ok((await matrixOf(page, '#words-diff')).flat().every((v) => v === 0), 'every difference is 0');
    assert.equal(await page.textContent('#words-diff-cap'), STRINGS.zh.teach.words.diffZero);
    // causal, no PE: 鱼吃猫's mask, aligned, hides the upper-right of 鱼吃猫 = the lower-left of 猫吃鱼
    await page.click('#causal');
    await page.waitForFunction(() => document.querySelectorAll('#words-aligned rect.cell[data-masked="true"]').length > 0);
    const masked = await page.$$eval('#words-aligned rect.cell[data-masked="true"]', (rs) => rs.map((r) => [Number(r.dataset.row), Number(r.dataset.col)]));
    assert.deepEqual(masked.sort(), [[1, 0], [2, 0], [2, 1]]);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

// ------------------------------------------------------------------------------------------------
// the colour scale's default, per map

test('colour scale: data range by default at 16 tokens, 0–1 at 3, the caption names it; a reader\'s 0–1 stays in the link', async () => {
  const note = (page) => page.$eval('#colour-note', (e) => ({ ...e.dataset, text: e.textContent }));
  const checked = (page) => page.$eval('#colour-scale input:checked', (e) => e.value);
  const { page, context, errors } = await open({ tokens: LONG, lang: 'en' });
  try {
    const w = await matrixOf(page, '#main-heatmap');
    assert.ok(Math.max(...w.flat()) <= 0.25, 'a long sentence: every weight 0.25 or less');
    assert.deepEqual([await checked(page), (await note(page)).scale, (await note(page)).auto], ['data', 'data', 'true']);
    assert.match((await note(page)).text, /Colour scale on: data range .*default/);
    // the map is drawn on its data's range: its legend's ends are the data's extremes
    const ticks = await page.$$eval('#main-heatmap .legend text', (ts) => ts.map((t) => Number(t.textContent)).filter(Number.isFinite));
    assert.ok(Math.max(...ticks) < 0.5, `the legend does not run to 1: ${ticks}`);
    assert.doesNotMatch(await page.evaluate(() => location.hash), /colour=/, 'a default is not written in the link');
    // the reader picks 0–1: it wins, and the link keeps it
    await page.click('#colour-scale .seg-item:has(input[value="unit"])');
    await page.waitForFunction(() => document.querySelector('#colour-note').dataset.scale === 'unit');
    assert.equal((await note(page)).auto, 'false');
    assert.match(await page.evaluate(() => location.hash), /colour=unit/);
    await page.reload();
    await page.waitForSelector('html[data-ready="true"]');
    await drawn(page);
    assert.deepEqual([await checked(page), (await note(page)).scale, (await note(page)).auto], ['unit', 'unit', 'false']);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
  // 3 tokens: 0–1 is the default, and says so
  const three = await open();
  try {
    const { page } = three;
    assert.deepEqual([await checked(page), (await note(page)).scale, (await note(page)).auto], ['unit', 'unit', 'true']);
    assert.match((await note(page)).text, /现在的色标：0–1.*默认/);
    assert.deepEqual(three.errors, []);
  } finally {
    await three.context.close();
  }
});

// ------------------------------------------------------------------------------------------------
// the trained toy

test('trained: 我看见小狗在追猫 by default (追 → 狗 0.9996, layer 0 head 2); 猫吃鱼 one click away; the head view draws the toy\'s weights', async () => {
  const { page, context, errors } = await open();
  try {
    await trainedMode(page);
    const run = toyRun(EXAMPLE);
    assert.equal(await page.$eval('#trained-grid svg[data-model="toy-zh"]', (s) => s.dataset.ids), JSON.stringify(Array.from(run.ids)));
    const cap = await page.$eval('#trained-caption', (e) => ({ ...e.dataset, text: e.textContent }));
    const zhui = run.labels.indexOf('追'), gou = run.labels.indexOf('狗');
    assert.deepEqual([Number(cap.row), Number(cap.layer), Number(cap.head), Number(cap.col)], [zhui, 0, 2, gou]);
    const w = run.attention[0][2].data[zhui * run.ids.length + gou];
    assert.ok(Math.abs(Number(cap.weight) - w) <= 1e-6 && w > 0.999, `追 → 狗: ${cap.weight} vs the toy's ${w}`);
    assert.ok(cap.text.includes('1.00'), cap.text);
    // the head view: one line per visible weight of the layer's heads, its value the toy's
    const n = run.ids.length;
    const lines = await page.$$eval('#trained-hv-svg line.hv-line', (ls) => ls.map((l) => ({
      head: Number(l.dataset.head), row: Number(l.dataset.row), col: Number(l.dataset.col), value: Number(l.dataset.value) })));
    let drawn = 0;
    run.attention[0].forEach(({ data }, h) => {
      for (let r = 0; r < n; r++) {
        for (let c = 0; c <= r; c++) {
          const v = data[r * n + c], line = lines.find((l) => l.head === h && l.row === r && l.col === c);
          if (!(v > 0)) continue;
          drawn++;
          assert.ok(line && Math.abs(line.value - v) <= 1e-6, `head ${h}: ${r} -> ${c} drawn with ${v}`);
        }
      }
    });
    assert.equal(lines.length, drawn);
    // layer 2 of the head view
    await page.selectOption('#trained-hv-layer', '1');
    const l1 = await page.$$eval('#trained-hv-svg line.hv-line[data-head="3"]', (ls) => ls.map((l) => [Number(l.dataset.row), Number(l.dataset.col), Number(l.dataset.value)]));
    for (const [r, c, v] of l1) assert.ok(Math.abs(v - run.attention[1][3].data[r * n + c]) <= 1e-6, `layer 1 head 3 (${r}, ${c})`);
    // one click: the page's sentence, 猫吃鱼
    await page.check('input[name="trained-sentence"][value="page"]');
    const cat = toyRun('猫吃鱼');
    await page.waitForFunction((ids) => document.querySelector('#trained-grid svg[data-model="toy-zh"]').dataset.ids === ids, JSON.stringify(Array.from(cat.ids)));
    assert.equal(await page.$eval('#trained-hv-svg svg', (s) => s.dataset.ids), JSON.stringify(Array.from(cat.ids)));
    assert.match(await page.textContent('#trained-sentence'), /猫吃鱼/);
    // and back
    await page.check('input[name="trained-sentence"][value="example"]');
    await page.waitForFunction((ids) => document.querySelector('#trained-grid svg[data-model="toy-zh"]').dataset.ids === ids, JSON.stringify(Array.from(run.ids)));
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

// ------------------------------------------------------------------------------------------------
// defect 5: the random card's title

test('defect 5: the random card\'s title is whole at 320, 390 and 1280, zh and en, causal on and off', async () => {
  for (const width of [320, 390, 1280]) {
    for (const lang of ['zh', 'en']) {
      for (const causal of [false, true]) {
        const { page, context, errors } = await open({ lang, causal }, width);
        try {
          const want = STRINGS[lang].heatmapTitle(0, 8, causal);
          const t = await page.$eval('#trained-grid .trained-map-title', (e) => ({ text: e.textContent, sw: e.scrollWidth, cw: e.clientWidth, visible: e.getClientRects().length > 0 }));
          assert.equal(t.text, want, `${width} ${lang} causal ${causal}`);
          assert.ok(t.visible && t.sw <= t.cw, `${width} ${lang} causal ${causal}: ${t.sw} > ${t.cw}`);
          // nothing drawn in the card is cut with an ellipsis
          const cut = await page.$$eval('#trained-grid svg text', (ts) => ts.filter((x) => x.getClientRects().length && getComputedStyle(x).display !== 'none' && x.textContent.includes('…')).map((x) => x.textContent));
          assert.deepEqual(cut, [], `${width} ${lang} causal ${causal}`);
          if (width === 320 && causal) await page.locator('#trained').screenshot({ path: `/tmp/page-compare-random-${lang}-320.png` });
          assert.deepEqual(errors, []);
        } finally {
          await context.close();
        }
      }
    }
  }
});

// ------------------------------------------------------------------------------------------------
// defect 10: the toy's heads like the checkpoint grid

/** Every visible <text> under sel, with its rendered font size in px (font-size × the SVG's scale). */
const textSizes = (page, sel) => page.$$eval(`${sel} text`, (ts) => ts.filter((t) => t.getClientRects().length && getComputedStyle(t).display !== 'none' && t.textContent.trim()).map((t) => {
  const svg = t.ownerSVGElement, vb = svg.viewBox.baseVal;
  const scale = vb && vb.width ? svg.getBoundingClientRect().width / vb.width : 1;
  return { text: t.textContent, px: Number(getComputedStyle(t).fontSize.replace('px', '')) * scale };
}));

test('defect 10: at 320 the toy\'s heads are buttons that enlarge; the enlarged cells hover and focus; no text under 9 px; the caption\'s row marked', async () => {
  const { page, context, errors } = await open({}, 320);
  try {
    await trainedMode(page);
    const run = toyRun(EXAMPLE), n = run.ids.length, { n_layer: L, n_head: H } = toy.config;
    assert.equal(await page.locator('#trained-grid button.thumb').count(), L * H, 'a button per head');
    // enlarged: the caption's head first, then the one clicked (or chosen with the keyboard)
    const big = () => page.$eval('#trained-big svg', (s) => [Number(s.dataset.layer), Number(s.dataset.head)]);
    assert.deepEqual(await big(), [0, 2]);
    await page.click('#trained-grid button.thumb[data-layer="1"][data-head="3"]');
    assert.deepEqual(await big(), [1, 3]);
    assert.equal(await page.getAttribute('#trained-grid button.thumb[data-layer="1"][data-head="3"]', 'aria-pressed'), 'true');
    await page.focus('#trained-grid button.thumb[data-layer="1"][data-head="0"]');
    await page.keyboard.press('Enter');
    assert.deepEqual(await big(), [1, 0]);
    assertClose((await matrixOf(page, '#trained-big')).flat().map((v) => v ?? 0),
      Array.from({ length: n * n }, (_, k) => (k % n <= Math.floor(k / n) ? run.attention[1][0].data[k] : 0)), 'the enlarged map is the toy\'s layer 1 head 0', TOL);
    // readable at 320: labels and legend at 9 px or more, numbers hidden rather than drawn tiny
    const sizes = await textSizes(page, '#trained-big');
    assert.ok(sizes.length >= 2 * n, 'the labels are drawn');
    for (const s of sizes) assert.ok(s.px >= 9, `"${s.text}" at ${s.px.toFixed(1)} px`);
    // the caption's row: its label and cells marked
    const zhui = run.labels.indexOf('追');
    assert.equal(await page.$eval('#trained-big svg', (s) => s.dataset.captioned), String(zhui));
    assert.equal(await page.locator(`#trained-big g.cell-group.captioned[data-row="${zhui}"]`).count(), n);
    assert.equal(await page.locator('#trained-big g.cell-group.captioned').count(), n, 'that row only');
    assert.equal(await page.$eval('#trained-big .row-label.captioned', (t) => [t.textContent, getComputedStyle(t).fontWeight]).then(([t, w]) => `${t} ${w}`), '追 700');
    // hover a cell: the line under the map gives its weight
    await page.hover(`#trained-big g.cell-group[data-row="${n - 1}"][data-col="1"]`);
    const v = run.attention[1][0].data[(n - 1) * n + 1];
    assert.equal(await page.$eval('#trained-cell', (e) => `${e.dataset.row},${e.dataset.col}`), `${n - 1},1`);
    assert.ok((await page.textContent('#trained-cell')).includes(v.toFixed(4)), await page.textContent('#trained-cell'));
    // focus: one tab stop in the map, the arrows move it
    await page.focus('#trained-big g.cell-group[tabindex="0"]');
    const start = await page.evaluate(() => [Number(document.activeElement.dataset.row), Number(document.activeElement.dataset.col)]);
    await page.keyboard.press('ArrowUp');
    assert.deepEqual(await page.evaluate(() => [Number(document.activeElement.dataset.row), Number(document.activeElement.dataset.col)]), [Math.max(0, start[0] - 1), start[1]]);
    assert.equal(await page.locator('#trained-big g.cell-group[tabindex="0"]').count(), 1);
    assert.equal(await page.$eval('#trained-cell', (e) => e.dataset.row), String(Math.max(0, start[0] - 1)));
    assert.ok(await page.evaluate(() => document.scrollingElement.scrollWidth) <= 320, 'no sideways scroll at 320 px');
    await page.locator('#trained').screenshot({ path: '/tmp/page-compare-trained-320.png' });
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});
