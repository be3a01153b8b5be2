// Issue 39's page items P5, P6 and P7 on the real page in Chromium (over http): each test failed
// on the page before its fix.
//   P5   a language switch changes the words only: the trained toy's sentence, caption row,
//        enlarged head and active cell, and the multi-head explanation with the cell it is
//        about (outlined), are the same after zh → en → zh
//   P6   the checkpoint's enlarged map at 320 px (6 tokens) and 390 px (26 tokens): one tab stop,
//        the arrow keys move it cell by cell, and a line under the map gives the focused cell's
//        weight, which is PyTorch's (tests/golden/gpt2/wide-f32/expected.json)
//   P7   16 tokens at 320, 390 and 1280 px, zh and en: no text of the words, aligned, difference,
//        RoPE and multi-head (8 heads) maps is drawn under 9 px, and no cell number under 10 px
//        (the top map's rule); the maps of weights follow the top map's colour-scale rule (maps
//        side by side, one of whose weights are all at most 0.25, span the whole ramp) and say
//        which scale is on; the reader's choice at the top (0–1) is theirs too; the trained
//        section's random map (the top map) is legible too, in the top map's colours
//
//   node --test tests/browser/page-review39c.test.js
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../../scripts/serve.js';
import { root } from '../helpers.js';
import { launch, openPage } from './browser.js';
import * as MHA_WORDS from '../../web/page/page-mha-strings.js';
import * as SCALE_WORDS from '../../web/page/page-scale-strings.js';

const CKPT = path.join(root, 'tests/golden/gpt2/wide-f32');            // 3 layers × 4 heads, no tokenizer
const EXPECTED = JSON.parse(fs.readFileSync(path.join(CKPT, 'expected.json'), 'utf8'));

let browser, server;

before(async () => {
  server = await startServer({ root, port: 0 });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const complete = (page) => page.waitForSelector('html[data-complete="true"]', { state: 'attached', timeout: 30000 });

/** Click the language button and wait for the page in `lang`, every section drawn again. */
async function switchTo(page, lang) {
  await page.click('#lang');
  await page.waitForFunction((l) => document.documentElement.lang.startsWith(l), lang === 'zh' ? 'zh' : 'en');
  await complete(page);
}

// ------------------------------------------------------------------------------------------------
// P5

/** What the reader chose in the trained toy's section and the multi-head section, as the page shows it. */
const choices = (page) => page.evaluate(() => {
  const ringOf = (svg) => {
    const r = svg.querySelector('.ring-outer');
    return [Number(r.getAttribute('x')), Number(r.getAttribute('y'))];
  };
  const cellAt = (svg, i, j) => {
    const r = svg.querySelector(`rect.cell[data-row="${i}"][data-col="${j}"]`);
    return [Number(r.getAttribute('x')) - 2.5, Number(r.getAttribute('y')) - 2.5];
  };
  const big = document.querySelector('#trained-big svg'), line = document.querySelector('#trained-cell');
  const explained = document.querySelector('#mha-explain .ex-head');
  // the head the explanation names (its label is "头 k · …" / "head k · …") and the ring of that head's map
  const head = Number(/\d+/.exec(explained.querySelector('.ex-label').textContent)[0]);
  const svg = document.querySelector(`#mha-h${head - 1} svg`);
  const pair = explained.querySelector('.ex-pair').textContent;
  const active = svg.querySelector('g.cell-group[tabindex="0"]');
  return {
    trained: {
      sentence: document.querySelector('#trained-sentence input:checked')?.value,
      row: document.querySelector('#trained-row').value,
      caption: document.querySelector('#trained-caption').dataset.row,
      big: [big.dataset.layer, big.dataset.head],
      cell: [line.dataset.row, line.dataset.col],
      ring: String(ringOf(big)) === String(cellAt(big, Number(line.dataset.row), Number(line.dataset.col))),
    },
    mha: {
      head, pair,
      cell: [active.dataset.row, active.dataset.col],
      ring: String(ringOf(svg)) === String(cellAt(svg, Number(active.dataset.row), Number(active.dataset.col))),
    },
    label: explained.querySelector('.ex-label').textContent,
  };
});

test('P5: zh → en → zh keeps the trained toy\'s sentence, caption row, enlarged head and cell, and the multi-head explanation of the outlined cell', async () => {
  const { page, context, errors } = await openPage(browser, `${server.url}index.html#heads=4`);
  try {
    // the trained toy: its own example sentence (the default), the row of 狗, layer 2 head 3, a cell moved with the keys
    await page.check('input[name="trained-mode"][value="trained"]');
    await page.waitForSelector('#trained-big svg[data-model="toy-zh"]', { timeout: 30000 });
    await page.selectOption('#trained-row', '4');
    await page.waitForFunction(() => document.querySelector('#trained-caption').dataset.row === '4');
    await page.click('#trained-grid button.thumb[data-layer="1"][data-head="2"]');
    await page.focus('#trained-big g.cell-group[tabindex="0"]');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowLeft');
    // the multi-head section: a cell of head 3 (鱼 → 吃)
    await page.hover('#mha-h2 rect.cell[data-row="2"][data-col="1"]');
    const before = await choices(page);
    assert.deepEqual(before.trained, { sentence: 'example', row: '4', caption: '4', big: ['1', '2'], cell: before.trained.cell, ring: true });
    assert.notDeepEqual(before.trained.cell, ['4', '0'], 'the cell moved from where it started');
    assert.deepEqual(before.mha, { head: 3, pair: '鱼 → 吃', cell: ['2', '1'], ring: true });
    assert.equal(before.label, MHA_WORDS.zh.mhaHead(3, 2));

    await switchTo(page, 'en');
    const en = await choices(page);
    assert.deepEqual(en.trained, before.trained, 'in English, the toy\'s choices are the reader\'s');
    assert.deepEqual(en.mha, before.mha, 'in English, the explanation is of the outlined cell of head 3');
    assert.equal(en.label, MHA_WORDS.en.mhaHead(3, 2), 'in English words');

    await switchTo(page, 'zh');
    const after = await choices(page);
    assert.deepEqual(after, before, 'back in Chinese, everything as it was');
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

// ------------------------------------------------------------------------------------------------
// P6

/** GPT-2 is causal: the first n tokens' weights are the top-left n × n of a longer sequence's. */
const SEQ = EXPECTED.sequences.find((s) => s.ids.length >= 26);
const expectedWeight = (layer, head, i, j) => SEQ.attention[layer][head][i][j];

/** Where the focus is, and the line under the enlarged map. */
const focused = (page) => page.evaluate(() => {
  const a = document.activeElement, line = document.querySelector('#checkpoint-cell');
  return {
    inBig: Boolean(a?.closest('#checkpoint-big')) && a.matches('g.cell-group'),
    at: a?.dataset.row !== undefined ? [Number(a.dataset.row), Number(a.dataset.col)] : null,
    line: line?.textContent ?? null,
    lineAt: line ? [Number(line.dataset.row), Number(line.dataset.col)] : null,
    stops: document.querySelectorAll('#checkpoint-big [tabindex="0"]').length,
  };
});

for (const [width, n] of [[320, 6], [390, 26]]) {
  test(`P6: at ${width} px with ${n} tokens the enlarged checkpoint map is reached with Tab, moved with the arrows, and its line gives each cell's weight`, async () => {
    const { page, context, errors } = await openPage(browser, `${server.url}index.html`, { viewport: { width, height: 900 } });
    try {
      await page.setInputFiles('input[name=checkpoint]', ['config.json', 'model.safetensors'].map((f) => path.join(CKPT, f)));
      await page.waitForSelector('#checkpoint-grid[data-state="ready"]', { timeout: 30000 });
      const ids = SEQ.ids.slice(0, n);
      await page.fill('#model-text', ids.join(' '));
      await page.waitForFunction((want) => document.querySelector('#checkpoint-big svg')?.dataset.ids === want &&
        document.querySelector('#checkpoint-grid').dataset.state === 'ready', JSON.stringify(ids), { timeout: 15000 });
      const [layer, head] = [2, 1];
      await page.click(`#checkpoint-grid button.thumb[data-layer="${layer}"][data-head="${head}"]`);
      await page.waitForSelector(`#checkpoint-big svg[data-layer="${layer}"][data-head="${head}"]`);
      // the keyboard: from the last thumbnail, Tab lands on the map's one tab stop
      await page.focus('#checkpoint-grid button.thumb[data-layer="2"][data-head="3"]');
      await page.keyboard.press('Tab');
      let f = await focused(page);
      assert.ok(f.inBig, `${width} px: Tab after the grid reaches a cell of the enlarged map`);
      assert.equal(f.stops, 1, 'one tab stop in the map');
      // walk: to the first cell, then down and right along the diagonal's neighbours
      await page.keyboard.press('Control+Home');
      const path_ = [['ArrowDown', 1, 0], ['ArrowRight', 1, 1], ['ArrowDown', 2, 1], ['ArrowRight', 2, 2], ['ArrowRight', 2, 3],
        ['Control+End', n - 1, n - 1], ['Home', n - 1, 0], ['ArrowRight', n - 1, 1]];
      for (const [key, i, j] of path_) {
        await page.keyboard.press(key);
        f = await focused(page);
        assert.deepEqual(f.at, [i, j], `${width} px: ${key} moves the focus to ${i},${j}`);
        assert.deepEqual(f.lineAt, [i, j], 'the line follows');
        assert.equal(f.stops, 1, 'still one tab stop');
        assert.ok(f.line.includes(String(ids[i])) && f.line.includes(String(ids[j])), `the line names both tokens: ${f.line}`);
        if (j > i) {
          assert.doesNotMatch(f.line, /\d\.\d{4}/, `a masked cell has no weight of its own: ${f.line}`);
          continue;
        }
        const shown = Number(/(\d\.\d{4})/.exec(f.line)?.[1]);
        const want = expectedWeight(layer, head, i, j);
        assert.ok(Math.abs(shown - want) <= 0.5e-4 + 2e-6, `${width} px, cell ${i},${j}: the line says ${shown}, PyTorch ${want}`);
      }
      // the pointer too: hovering a cell moves the line to it
      await page.hover(`#checkpoint-big g.cell-group[data-row="${n - 1}"][data-col="${n - 2}"]`);
      f = await focused(page);
      assert.deepEqual(f.lineAt, [n - 1, n - 2]);
      await page.locator('#checkpoint .ckpt-big-card').screenshot({ path: `/tmp/page-review39c-big-${width}.png` });
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });
}

// ------------------------------------------------------------------------------------------------
// P7

const LETTERS = 'abcdefghijklmnop'.split('');
const HASH16 = `#${LETTERS.map((t) => `t=${t}`).join('&')}&seed=0&dk=8&causal=0&heads=8&input=embed&pe=1`;
const GROUPS = {
  words: ['words-a', 'words-b', 'words-aligned'],
  rope: ['rope-shift-a', 'rope-shift-b', 'rope-order-a', 'rope-order-b'],
  mha: Array.from({ length: 8 }, (_, k) => `mha-h${k}`),
};
const ALL = [...GROUPS.words, 'words-diff', ...GROUPS.rope, ...GROUPS.mha, 'trained-grid'];     // (the trained section's random map)

/**
 * Every text of each map that is drawn (not display: none), at the size it is drawn: its font size
 * times the SVG's scale (drawn width ÷ the width it was laid out for), and the same from its box.
 */
const textSizes = (page, ids) => page.evaluate((list) => list.map((id) => {
  const svg = document.querySelector(`#${id} svg`);
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const texts = [...svg.querySelectorAll('text')].filter((t) => t.getClientRects().length > 0 && getComputedStyle(t).display !== 'none' &&
    !t.closest('[display="none"]') && t.textContent.trim() !== '');
  return {
    id,
    texts: texts.map((t) => ({
      cls: t.getAttribute('class') ?? t.parentElement.getAttribute('class') ?? 'text',
      text: t.textContent,
      px: Number(t.getAttribute('font-size')) * scale,
    })),
  };
}), ids);

/** Each map's cells: value and fill, masked ones left out. */
const cellsOf = (page, ids) => page.evaluate((list) => Object.fromEntries(list.map((id) => [id,
  [...document.querySelectorAll(`#${id} rect.cell`)].filter((r) => r.dataset.masked !== 'true')
    .map((r) => ({ v: Number(r.dataset.value), fill: r.getAttribute('fill') }))])), ids);

const VIRIDIS_ENDS = ['#440154', '#fde725'];              // the ramp's two ends (web/heatmap/colour.js)

for (const width of [320, 390, 1280]) {
  test(`P7: ${width} px, 16 tokens, 8 heads: no map text under 9 px, no number under 10 px; maps of small weights span the colour ramp and say so (zh, en)`, async () => {
    const { page, context, errors } = await openPage(browser, `${server.url}index.html${HASH16}`, { viewport: { width, height: 900 } });
    try {
      for (const lang of ['zh', 'en']) {
        if (lang === 'en') await switchTo(page, 'en');
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));   // the numbers' rule runs in a frame
        const at = `${width} px ${lang}`;
        for (const map of await textSizes(page, ALL)) {
          const small = map.texts.filter((t) => t.px < (t.cls === 'cell-value' ? 10 : 9));
          assert.deepEqual(small.map((t) => `${t.cls} "${t.text}" ${t.px.toFixed(1)} px`), [], `${at}: #${map.id} draws text too small to read`);
          assert.ok(map.texts.some((t) => /label/.test(t.cls)), `${at}: #${map.id} draws its labels`);
        }
        // colours: a group of maps (drawn side by side, on one scale) with a map whose weights are
        // all at most 0.25 (the top map's rule for its data-range default) spans the ramp, darkest
        // to brightest
        const cells = await cellsOf(page, ALL);
        let spanned = 0;
        for (const [group, ids] of Object.entries(GROUPS)) {
          const tops = ids.map((id) => Math.max(...cells[id].map((c) => c.v)));
          if (Math.min(...tops) > 0.25) continue;
          spanned++;
          const fills = new Set(ids.flatMap((id) => cells[id].map((c) => c.fill)));
          for (const end of VIRIDIS_ENDS) assert.ok(fills.has(end), `${at}: the ${group} maps (largest weights ${tops.map((t) => t.toFixed(3))}) reach ${end}: ${[...fills].slice(0, 6)}…`);
        }
        assert.equal(spanned, 3, `${at}: in every group a map of small weights`);
        // and each says which scale it is on: the words and RoPE maps in a note, the heads in their legend
        const said = await page.evaluate(() => ({
          words: document.querySelector('#words-scale')?.textContent ?? '',
          rope: [...document.querySelectorAll('#rope .map-scale')].map((p) => p.textContent),
          heads: [...document.querySelectorAll('#mha-grid figure:not([hidden]) .legend-caption')].map((t) => t.textContent),
        }));
        const dataName = lang === 'zh' ? '数据范围' : 'data range';
        assert.ok(said.words.includes(dataName), `${at}: the words maps' scale is named: "${said.words}"`);
        assert.ok(said.rope.length >= 1 && said.rope.every((t) => t.includes(dataName)), `${at}: the RoPE maps' scale is named: ${said.rope}`);
        assert.equal(said.heads.length, 8, `${at}: each head's legend names its scale`);
        // the trained section's random-weights map is the top map: in its colours too
        const fills = (sel) => page.$$eval(`${sel} rect.cell`, (rs) => rs.map((r) => r.getAttribute('fill')));
        assert.deepEqual(await fills('#trained-grid svg[data-model="random"]'), await fills('#main-heatmap'), `${at}: the random map's colours are the top map's`);
      }
      await page.locator('#mha').screenshot({ path: `/tmp/page-review39c-mha-${width}.png` });
      await page.locator('#words').screenshot({ path: `/tmp/page-review39c-words-${width}.png` });
      await page.locator('#rope').screenshot({ path: `/tmp/page-review39c-rope-${width}.png` });
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });
}

test('P7: the reader\'s colour scale at the top (0–1 chosen) is the one of the maps below, which say so', async () => {
  const { page, context, errors } = await openPage(browser, `${server.url}index.html${HASH16}`);
  try {
    await page.click('#colour-scale input[value="unit"]');
    await complete(page);
    const cells = await cellsOf(page, [...GROUPS.words, ...GROUPS.rope]);
    for (const [id, cs] of Object.entries(cells)) {
      assert.ok(Math.max(...cs.map((c) => c.v)) < 0.5, `#${id}: weights under 0.5`);
      assert.ok(!cs.some((c) => c.fill === VIRIDIS_ENDS[1]), `#${id}: on 0–1 no weight reaches the brightest colour`);
    }
    const V = SCALE_WORDS.zh.teach.view;
    assert.equal(await page.textContent('#words-scale'), V.mapsScale(V.scales.unit, '0', '1', 'unit', true), 'the note says 0–1, the reader\'s choice');
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});
