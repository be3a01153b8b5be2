// Issue 39's page items P1, P2, P4 and P10 on the real page in Chromium (over http): each test
// failed on the page before its fix.
//   P1   16 tokens, Embedding without PE: the sentence and its reverse, aligned, differ only by
//        float32 rounding (a few 1e-8); that counts as zero: the difference map is one flat
//        colour with the zero caption, and the verdict says the cells are equal
//   P2   at a temperature T ≠ 1 the three captions that compare with the top map (the note under
//        it about the Python code, the trained section's random mode, the multi-head note with
//        one head) say that they hold for T = 1 and that the top map is at T; back at T = 1 the
//        qualification goes, and the claims hold (the maps are equal)
//   P4   every table counts its numbered rows and columns from 1 (the page's own rule), E[token],
//        PE[pos] and RoPE's pairs too; RoPE's text names 吃 as token 2, as the toy says character 2
//   P10  the word-order verdict follows the numbers the maps show: in torch.randn mode it gives
//        the aligned difference the map shows; the PE switch is off when PE is not applied; with
//        PE and the causal mask it gives each cause's own gap (PE alone, the mask alone)
//
//   node --test tests/browser/page-review39b.test.js
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../scripts/serve.js';
import { root } from '../helpers.js';
import { launch, openPage } from './browser.js';
import * as PE_WORDS from '../../web/page/page-pe-strings.js';
import { ulp32, roundingOnly, difference } from '../../web/page/page-pe.js';

let browser, server;

before(async () => {
  server = await startServer({ root, port: 0 });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** The page at hash, every section drawn. */
const open = (hash, width = 1280) => openPage(browser, `${server.url}index.html${hash}`, { viewport: { width, height: 900 } });

/** The hash of the page's state: tokens, then the fields (page-state.js formatHash's order). */
const hashOf = (tokens, fields) => `#${tokens.map((t) => `t=${encodeURIComponent(t)}`).join('&')}&${fields}`;

/** A heatmap's cells as an n × n matrix of the values it draws (data-value; masked cells hold their weight, 0). */
const matrixOf = (page, sel) => page.$$eval(`${sel} rect.cell`, (rs) => {
  const n = Math.round(Math.sqrt(rs.length)), m = Array.from({ length: n }, () => new Array(n).fill(NaN));
  for (const r of rs) m[Number(r.dataset.row)][Number(r.dataset.col)] = Number(r.dataset.value);
  return m;
});

/** The largest |a[i][j] − b[n−1−i][n−1−j]|: a against b, the reversed sentence's map, word by word. */
const alignedGap = (a, b) => {
  const n = a.length;
  return Math.max(...a.flatMap((row, i) => row.map((v, j) => Math.abs(v - b[n - 1 - i][n - 1 - j]))));
};

const text = (page, sel) => page.$eval(sel, (el) => el.textContent);

// ------------------------------------------------------------------------------------------------
// P1

test('P1 (Node): float32\'s ulp, and a gap of at most 2n ulp of the larger weight is rounding (n: the row\'s length)', () => {
  assert.equal(ulp32(1), 2 ** -23);
  assert.equal(ulp32(0.0625), 2 ** -27);
  assert.equal(ulp32(0.07), 2 ** -27);             // in [2⁻⁴, 2⁻³)
  assert.equal(ulp32(-3), 2 ** -22);
  assert.equal(ulp32(0), 2 ** -149);
  const w = 0.0625;                                 // 16 tokens: 32 ulp of 2⁻²⁷
  assert.equal(roundingOnly(w, w + 32 * 2 ** -27, 16), true);
  assert.equal(roundingOnly(w + 32 * 2 ** -27, w, 16), true);
  assert.equal(roundingOnly(w, w + 33 * 2 ** -27, 16), false);
  assert.equal(roundingOnly(w, w + 32 * 2 ** -27, 15), false, 'fewer terms, less rounding');
  assert.deepEqual(difference([[0.5, 0.5]], [[0.5 + 2 ** -24, 0.5 - 2 ** -24]]), { diff: [[0, 0]], max: 0, row: 0, col: 0 });
  const d = difference([[0.5, 0.5], [0.25, 0.75]], [[0.5, 0.5], [0.375, 0.625]]);
  assert.deepEqual(d, { diff: [[0, 0], [0.125, 0.125]], max: 0.125, row: 1, col: 0 });
});

const LETTERS = 'abcdefghijklmnop'.split('');

test('P1: 16 tokens without PE, gaps at float32 rounding count as zero: one flat colour, the zero caption, a true verdict (en and zh)', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, context, errors } = await open(hashOf(LETTERS, `seed=0&dk=8&causal=0&heads=2&input=embed&pe=0&lang=${lang}`));
    try {
      const W = PE_WORDS[lang].teach.words;
      const a = await matrixOf(page, '#words-a'), b = await matrixOf(page, '#words-b');
      const gap = alignedGap(a, b);
      // the maps' own numbers: reordered, they differ by rounding only (the sum of 16 exps added in another order)
      assert.ok(gap > 0 && gap < 1e-7, `the aligned maps differ by float32 rounding, not more: ${gap}`);
      const diff = await page.$$eval('#words-diff rect.cell', (rs) => rs.map((r) => ({ v: Number(r.dataset.value), fill: r.getAttribute('fill') })));
      assert.equal(diff.length, 256);
      assert.deepEqual([...new Set(diff.map((c) => c.v))], [0], 'every cell of the difference map is 0');
      assert.equal(new Set(diff.map((c) => c.fill)).size, 1, 'one flat colour');
      assert.equal(await text(page, '#words-diff-cap'), W.diffZero);
      const perm = `(${LETTERS.map((_, k) => 16 - k).join(' ')})`;
      const sentence = (ts) => ts.join(' ');
      const want = W.verdictNoPe(perm, true, false).map((p) => (p === 'A' ? sentence(LETTERS) : p === 'B' ? sentence([...LETTERS].reverse()) : p)).join('');
      assert.equal(await text(page, '#words-verdict'), want);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  }
});

// ------------------------------------------------------------------------------------------------
// P2

const TEMPERATURES = [0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 10];      // page-state.js, the slider's steps

/** Move the temperature slider to t, as a reader does, and wait for the next frame. */
async function slide(page, t) {
  await page.$eval('#temp', (el, i) => { el.value = String(i); el.dispatchEvent(new Event('input', { bubbles: true })); }, TEMPERATURES.indexOf(t));
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.waitForSelector('html[data-complete="true"]', { state: 'attached' });
}

const CAPTIONS = { source: '#source-note', trained: '#trained-status', mha: '#mha-one' };
const captions = async (page) => Object.fromEntries(await Promise.all(Object.entries(CAPTIONS).map(async ([k, sel]) => [k, await text(page, sel)])));

test('P2: at T ≠ 1 the Python note, the random-weights status and the one-head note say they hold at T = 1; at T = 1 they need not (zh and en)', async () => {
  for (const lang of ['zh', 'en']) {
    const { page, context, errors } = await open(`#t=猫&t=吃&t=鱼&seed=0&dk=8&causal=0&heads=1&temp=2&lang=${lang}`);
    try {
      assert.equal(await page.isVisible('#mha-one'), true);
      const top = (await matrixOf(page, '#main-heatmap')).flat();
      const random = (await matrixOf(page, '#trained-grid')).flat(), head = (await matrixOf(page, '#mha-grid')).flat();
      const far = (x, y) => Math.max(...x.map((v, k) => Math.abs(v - y[k])));
      // why a caption without T was false: the top map at T = 2 is not the random-weights map nor the one head's
      assert.ok(far(top, random) > 0.01 && far(top, head) > 0.01, `T = 2 moves the top map (${far(top, random)}, ${far(top, head)})`);
      for (const [k, s] of Object.entries(await captions(page))) {
        assert.match(s, /T = 2\b/, `${k} names the top map's temperature: ${s}`);
        assert.match(s, /T = 1\b/, `${k} says its claim is about T = 1: ${s}`);
      }
      // the slider, on the drawn page: the captions follow it
      await slide(page, 1);
      for (const [k, s] of Object.entries(await captions(page))) assert.doesNotMatch(s, /T = /, `${k} at T = 1: ${s}`);
      const top1 = (await matrixOf(page, '#main-heatmap')).flat();
      assert.deepEqual(top1, random, 'at T = 1 the random-weights map is the top map');
      assert.ok(far(top1, head) < 1e-6, 'at T = 1 the one head is the top map');
      await slide(page, 0.5);
      for (const [k, s] of Object.entries(await captions(page))) assert.match(s, /T = 0\.5\b/, `${k} at T = 0.5: ${s}`);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  }
});

// ------------------------------------------------------------------------------------------------
// P4

/**
 * Every table of the page: its caption, and its header cells' texts along the top (the last header
 * row, the corner left out) and down the side.
 */
const tables = (page) => page.$$eval('main table', (ts) => ts.map((t) => ({
  caption: t.caption?.textContent ?? '', box: t.closest('section')?.id ?? '',
  cols: [...(t.tHead?.rows[t.tHead.rows.length - 1]?.querySelectorAll('th:not(.corner)') ?? [])].map((th) => th.textContent.trim()),
  rows: [...t.querySelectorAll('tbody th[scope="row"]')].map((th) => th.textContent.trim()),
})));

const oneTo = (k) => Array.from({ length: k }, (_, i) => String(i + 1));

test('P4: tables count from 1 (E[token], PE[pos], X, RoPE\'s pairs and every other), and RoPE calls 吃 token 2 (zh and en)', async () => {
  for (const lang of ['zh', 'en']) {
    const { page, context, errors } = await open(`#t=猫&t=吃&t=鱼&seed=0&dk=8&causal=0&heads=2&input=embed&pe=1&lang=${lang}`);
    try {
      const all = await tables(page);
      const of = (box, k = 0) => all.filter((t) => t.box === box)[k];
      const [e, pe] = [of('words', 0), of('words', 1)];
      assert.match(e.caption, /^E\[/);
      assert.deepEqual(e.cols, oneTo(8), 'E[token]\'s columns');
      assert.deepEqual(e.rows, ['猫', '吃', '鱼']);
      assert.match(pe.caption, /^PE\[/);
      assert.deepEqual(pe.cols, oneTo(8), 'PE[pos]\'s columns');
      assert.deepEqual(pe.rows, oneTo(3), 'PE[pos]\'s rows');
      assert.deepEqual(of('step-x').cols, oneTo(8), 'X\'s columns, as before');
      const rope = of('rope');
      assert.deepEqual(rope.rows, oneTo(4), 'RoPE\'s pairs (d_k = 8: 4 pairs)');
      // and every table whose headers are numbers counts them 1, 2, 3, …
      for (const t of all) {
        for (const [side, labels] of [['cols', t.cols], ['rows', t.rows]]) {
          if (labels.length && labels.every((s) => /^\d+$/.test(s))) assert.deepEqual(labels, oneTo(labels.length), `${t.box} “${t.caption}” ${side}`);
        }
      }
      // the text above RoPE's table: 吃 is the sentence's word 2 (the toy's caption says character 2)
      const said = await text(page, '#rope-pairs-text');
      if (lang === 'zh') {
        assert.match(said, /第 2 个词/, said);
        assert.doesNotMatch(said, /位置 1\b/, said);
      } else {
        assert.match(said, /\btoken 2\b/, said);
        assert.doesNotMatch(said, /position 1\b/, said);
      }
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  }
});

// ------------------------------------------------------------------------------------------------
// P10

const CAT = ['猫', '吃', '鱼'];

test('P10: in torch.randn mode the verdict gives the aligned gap the difference map shows, and the PE switch is off (not applied) (zh and en)', async () => {
  for (const lang of ['zh', 'en']) {
    for (const causal of [0, 1]) {
      const { page, context, errors } = await open(hashOf(CAT, `seed=0&dk=8&causal=${causal}&heads=2&lang=${lang}`));
      try {
        const a = await matrixOf(page, '#words-a'), b = await matrixOf(page, '#words-b');
        assert.deepEqual(a, b, 'X ignores the words: the two maps hold the same numbers, position by position');
        const gap = alignedGap(a, b);
        assert.ok(gap > 0.1, `word by word they differ: ${gap}`);
        const verdict = await text(page, '#words-verdict');
        assert.ok(verdict.includes(gap.toFixed(4)), `the verdict gives the difference map's ${gap.toFixed(4)}: ${verdict}`);
        assert.equal(Number(await page.getAttribute('#words-diff-cap', 'data-max')).toFixed(4), gap.toFixed(4));
        // the switch shows what is applied: no PE in this mode
        assert.equal(await page.isChecked('#words-pe'), false, 'PE is not applied to torch.randn');
        assert.equal(await page.isDisabled('#words-pe'), true);
        if (causal === 0) {
          await page.click('#words-input .seg-item:has(input[value="embed"])');
          await page.waitForSelector('html[data-complete="true"]', { state: 'attached' });
          assert.equal(await page.isChecked('#words-pe'), true, 'with Embedding, PE is on by default');
          assert.equal(await page.isDisabled('#words-pe'), false);
        }
        assert.deepEqual(errors, []);
      } finally {
        await context.close();
      }
    }
  }
});

test('P10: with PE and the causal mask the verdict gives both causes\' gaps (PE alone, the mask alone), measured on the maps (zh and en)', async () => {
  for (const lang of ['zh', 'en']) {
    const gapOf = async (fields) => {
      const { page, context } = await open(hashOf(CAT, `seed=0&dk=8&heads=2&input=embed&${fields}&lang=${lang}`));
      try {
        return { gap: alignedGap(await matrixOf(page, '#words-a'), await matrixOf(page, '#words-b')), verdict: await text(page, '#words-verdict') };
      } finally {
        await context.close();
      }
    };
    const pe = await gapOf('causal=0&pe=1'), mask = await gapOf('causal=1&pe=0'), both = await gapOf('causal=1&pe=1');
    assert.ok(pe.gap > 1e-3 && mask.gap > 1e-3, `each cause alone moves the weights: PE ${pe.gap}, the mask ${mask.gap}`);
    assert.equal(both.gap.toFixed(4), '0.6755', 'the issue\'s case');
    for (const g of [both.gap, pe.gap, mask.gap]) {
      assert.ok(both.verdict.includes(g.toFixed(4)), `the verdict gives ${g.toFixed(4)}: ${both.verdict}`);
    }
    // PE alone: the verdict gives its gap and no mask
    assert.ok(pe.verdict.includes(pe.gap.toFixed(4)), pe.verdict);
  }
});
