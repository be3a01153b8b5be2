// Issue 16 on the page: the trained toy model beside the article's random weights
// (web/page/page-trained.js), and a checkpoint the reader loads from disk (web/page/page-checkpoint.js):
// every layer × head, enlarge, log scale, hiding the first token, generation with the KV cache,
// broken checkpoints. Node checks of the pure parts first, then the real page in Chromium, over
// http and from disk. No request may leave the page's origin.
//
//   node --test tests/browser/page-model.test.js
//
// The toy's numbers are checked against tests/golden/toy-zh.json (PyTorch, float64) when it
// exists, else against attnmap/model in Node on the same files. The loaded checkpoint is
// tests/golden/gpt2/two-layer-f16-prefix: it has no tokenizer files, so the page's text field
// takes token ids, and its expected.json is PyTorch's attention.
//
// Screenshots for a person to look at: /tmp/page-model-{trained,grid}-{390,1280}.png
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startServer } from '../../scripts/serve.js';
import { loadModel } from '../../web/model/model-node.js';       // also takes a folder's path
import { toyText, strongestHead, defaultRow } from '../../web/page/page-trained.js';
import { thumbSvg, thumbFill } from '../../web/page/page-thumbs.js';
import { sortCheckpointFiles, parseIds } from '../../web/page/page-files.js';
import { root, assertClose } from '../helpers.js';
import { launch } from './browser.js';

const TOL = { atol: 1e-5, rtol: 1e-5 };        // the wasm runtime vs PyTorch's float64: |a - e| <= atol + rtol·|e|
const CKPT = path.join(root, 'tests/golden/gpt2/two-layer-f16-prefix');
const EXPECTED = JSON.parse(fs.readFileSync(path.join(CKPT, 'expected.json'), 'utf8'));
// PyTorch's outputs of the trained toy; they apply once web/models/toy-zh/toy-zh.js is generated
// from it (scripts/build-model.js), not while it is the stand-in checkpoint
const TOY_GOLDEN = path.join(root, 'tests/golden/toy-zh.json');
const TOY_STANDIN = /STAND-IN/.test(fs.readFileSync(path.join(root, 'web/models/toy-zh/toy-zh.js'), 'utf8').slice(0, 2000));
const TOY_PYTORCH = fs.existsSync(TOY_GOLDEN) && !TOY_STANDIN;
const FILE_URL = pathToFileURL(path.join(root, 'index.html')).href;

let browser, server, URL0, toy;

before(async () => {
  server = await startServer({ root, port: 0 });
  URL0 = `${server.url}index.html`;
  browser = await launch();
  const t = await import('../../web/models/toy-zh/toy-zh.js');
  toy = await loadModel({ config: t.config, weights: t.weights, vocabTxt: t.vocabTxt });
});

after(async () => {
  toy?.dispose();
  await browser?.close();
  await server?.close();
});

/** A fresh page; problems: page errors, console errors, and every request that leaves the page's origin. */
async function open(url = URL0, viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems = [];
  const origin = url.startsWith('file:') ? 'file://' : new URL(url).origin + '/';
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:')) problems.push(`left the origin: ${u}`);
  });
  await page.goto(url);
  await page.waitForSelector('html[data-complete="true"]', { timeout: 60000 });
  return { page, context, problems };
}

/** Every map under sel: { layer, head, ids, model, cells: [{ row, col, value, fill }] }. */
const maps = (page, sel) => page.$$eval(sel, (svgs) => svgs.map((s) => ({
  layer: Number(s.dataset.layer), head: Number(s.dataset.head), ids: JSON.parse(s.dataset.ids ?? 'null'), model: s.dataset.model,
  cells: [...s.querySelectorAll('rect.cell')].map((r) => ({ row: Number(r.dataset.row), col: Number(r.dataset.col), value: Number(r.dataset.value), fill: r.getAttribute('fill') })),
})));

/** The cells of a map against an n×n expected matrix: cells drawn must match, cells not drawn must be 0 (the causal mask). */
function assertMap(map, expected, label) {
  const n = expected.length;
  const got = Array.from({ length: n }, () => new Array(n).fill(0));
  for (const c of map.cells) {
    assert.ok(c.row < n && c.col < n, `${label}: cell (${c.row}, ${c.col}) outside ${n}×${n}`);
    got[c.row][c.col] = c.value;
  }
  assertClose(got.flat(), expected.flat(), label, TOL);
}

/** One row renormalised without key 0, for rows 1..n-1: the page's "hide the first token". */
const hideFirst = (m) => m.slice(1).map((row, k) => {
  const rest = row.slice(1, k + 2);
  const sum = rest.reduce((a, b) => a + b, 0);
  return [...rest.map((v) => v / sum), ...new Array(m.length - 2 - k).fill(0)];
});

const toRows = ({ data, shape: [n, m] }) => Array.from({ length: n }, (_, i) => Array.from(data.subarray(i * m, (i + 1) * m)));

/** The toy's attention for a text: PyTorch's (toy-zh.json) when the file has the sentence, else the model in Node. */
function toyAttention(text) {
  const ids = toy.encode(text);
  if (TOY_PYTORCH) {
    const g = JSON.parse(fs.readFileSync(TOY_GOLDEN, 'utf8')).sequences.find((q) => q.text === text);
    assert.ok(g, `${text} is one of toy-zh.json's sentences`);
    assert.deepEqual(g.ids, ids, `${text}: the page's tokenizer gives PyTorch's ids`);
    return { ids, attention: g.attention, source: 'PyTorch' };
  }
  return { ids, attention: toy.forward(ids, { attention: true }).attention.map((l) => l.map(toRows)), source: 'model.forward' };
}

async function loadCheckpoint(page, files) {
  await page.setInputFiles('input[name=checkpoint]', files);
}

const ckptFiles = (dir = CKPT) => ['config.json', 'model.safetensors'].map((f) => path.join(dir, f));
const gridReady = (page) => page.waitForSelector('#checkpoint-grid[data-state="ready"]', { timeout: 15000 });

async function typeIds(page, ids) {
  await page.fill('#model-text', ids.join(' '));
  await page.waitForFunction((want) => {
    const s = document.querySelector('#checkpoint-grid[data-state="ready"] svg');
    return s && s.dataset.ids === want;
  }, JSON.stringify(ids), { timeout: 15000 });
}

// ------------------------------------------------------------------------------------------------
// Node: the pure parts

test('toyText, defaultRow, strongestHead: the caption\'s measurement', () => {
  assert.equal(toyText(['猫', '吃', '鱼']), '猫吃鱼');
  assert.equal(toyText(['我', '看见', '猫', '。']), '我看见猫。');
  assert.equal(toyText(['the', 'cat', '吃']), 'the cat 吃');
  assert.equal(defaultRow(['猫', '吃', '鱼']), 1);
  assert.equal(defaultRow(['我', '看', '见', '猫', '在', '吃', '鱼']), 5, 'the last verb');
  assert.equal(defaultRow(['小', '猫']), 1, 'no verb: the last token');
  const m = (rows) => ({ data: Float32Array.from(rows.flat()), shape: [rows.length, rows.length] });
  const att = [[m([[1, 0, 0], [0.3, 0.7, 0], [0.2, 0.2, 0.6]]), m([[1, 0, 0], [0.9, 0.1, 0], [0.5, 0.4, 0.1]])]];
  const r = strongestHead(att, 1);
  assert.deepEqual([r.top.layer, r.top.head, r.top.col], [0, 1, 0]);
  assert.equal(Math.fround(r.top.weight), Math.fround(0.9));
  assert.equal(r.agree, 1);
  assert.equal(r.total, 2);
  assert.equal(strongestHead(att, 2).top.col, 2, 'head 0 gives 0.6 to itself: more than head 1\'s 0.5');
});

test('thumbnails: one rect per lower-triangle cell with data-row/col/value; log recolours', () => {
  const rows = [[1], [0.25, 0.75], [0.001, 0.009, 0.99]];
  const svg = thumbSvg(rows, 'unit', { 'data-layer': 3, 'data-head': 1 });
  assert.equal((svg.match(/<rect class="cell"/g) ?? []).length, 6);
  assert.match(svg, /data-layer="3" data-head="1"/);
  assert.match(svg, /data-row="2" data-col="1" data-value="0\.009"/);
  assert.notEqual(thumbFill(0.009, 'unit'), thumbFill(0.009, 'log'));
  assert.equal(thumbFill(1, 'unit'), thumbFill(1, 'log'));
  assert.equal(thumbFill(0.0001, 'log'), thumbFill(0, 'log'), 'below the floor: the bottom colour');
});

test('files: sorted by name; missing parts named; ids parsed', () => {
  const f = (name) => ({ name });
  const a = sortCheckpointFiles([f('config.json'), f('model.safetensors'), f('vocab.json'), f('merges.txt'), f('README.md')]);
  assert.equal(a.problem, null);
  assert.deepEqual(a.ignored, ['README.md']);
  assert.equal(sortCheckpointFiles([f('model.safetensors')]).problem, 'noConfig');
  assert.equal(sortCheckpointFiles([f('config.json'), f('pytorch_model.bin')]).problem, 'binOnly');
  assert.equal(sortCheckpointFiles([f('config.json'), f('model.safetensors'), f('vocab.json')]).problem, 'noMerges');
  assert.deepEqual(parseIds('[3, 7,5]'), [3, 7, 5]);
  assert.deepEqual(parseIds(' 3 7 5 '), [3, 7, 5]);
  assert.equal(parseIds('3 x'), null);
  assert.equal(parseIds(''), null);
});

// ------------------------------------------------------------------------------------------------
// the trained toy

for (const mode of ['http', 'file']) {
  test(`${mode}: trained mode shows every layer × head of the toy, equal to ${TOY_PYTORCH ? 'PyTorch (tests/golden/toy-zh.json)' : 'model.forward in Node (the toy is the stand-in)'}`, async () => {
    const { page, context, problems } = await open(mode === 'http' ? URL0 : FILE_URL);
    try {
      // random mode first: the article's weights, the main heatmap's numbers
      assert.equal(await page.locator('#trained-grid svg[data-model="random"]').count(), 1);
      const main = await page.$$eval('#main-heatmap rect.cell', (rs) => rs.map((r) => r.dataset.value));
      assert.deepEqual(await page.$$eval('#trained-grid rect.cell', (rs) => rs.map((r) => r.dataset.value)), main);
      await page.check('input[name="trained-mode"][value="trained"]');
      // two of toy-zh.json's sentences (the stand-in toy, until the trained one lands, has no 。)
      const long = TOY_STANDIN ? '我看见那只猫在吃鱼' : '我看见那只猫在吃鱼。';
      for (const sentence of [['猫', '吃', '鱼'], Array.from(long)]) {
        await page.fill('#tokens', sentence.join(' '));
        const text = toyText(sentence);
        const want = toyAttention(text);
        await page.waitForFunction((ids) => document.querySelector('#trained-grid svg[data-model="toy-zh"]')?.dataset.ids === ids,
          JSON.stringify(want.ids), { timeout: 15000 });
        const got = await maps(page, '#trained-grid svg[data-model="toy-zh"]');
        const { n_layer: L, n_head: H } = toy.config;
        assert.equal(got.length, L * H, `${L} × ${H} heatmaps`);
        for (const m of got) {
          assert.deepEqual(m.ids, want.ids);
          assertMap(m, want.attention[m.layer][m.head], `${text} layer ${m.layer} head ${m.head} vs ${want.source}`);
        }
        assert.deepEqual(got.map((m) => [m.layer, m.head]), Array.from({ length: L * H }, (_, k) => [Math.floor(k / H), k % H]));
        // the caption names the head that the numbers name
        const cap = await page.$eval('#trained-caption', (e) => ({ ...e.dataset, text: e.textContent }));
        const row = defaultRow(toy.tokens(want.ids));
        const f = strongestHead(toy.forward(want.ids, { attention: true }).attention, row);
        assert.deepEqual([Number(cap.row), Number(cap.layer), Number(cap.head), Number(cap.col)], [row, f.top.layer, f.top.head, f.top.col]);
        assert.ok(cap.text.includes(f.top.weight.toFixed(2)), `the caption says ${f.top.weight.toFixed(2)}: ${cap.text}`);
      }
      // another row for the caption
      await page.selectOption('#trained-row', '0');
      assert.equal(await page.$eval('#trained-caption', (e) => e.dataset.row), '0');
      assert.match(await page.textContent('#trained-caption'), /因果遮蔽/);
      if (mode === 'http') {
        await page.fill('#tokens', '猫 吃 鱼');
        await page.waitForFunction(() => document.querySelectorAll('#trained-grid svg[data-model="toy-zh"]').length > 0);
        await page.locator('#trained').screenshot({ path: '/tmp/page-model-trained-1280.png' });
        await page.setViewportSize({ width: 390, height: 844 });
        await page.fill('#tokens', '猫 吃');
        await page.fill('#tokens', '猫 吃 鱼');
        await page.locator('#trained').screenshot({ path: '/tmp/page-model-trained-390.png' });
        assert.ok(await page.evaluate(() => document.scrollingElement.scrollWidth) <= 390, 'no sideways scroll at 390 px');
      }
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
}

test('a character outside the toy\'s vocabulary: a clear message naming it; the rest of the page keeps working', async () => {
  const { page, context, problems } = await open();
  try {
    await page.check('input[name="trained-mode"][value="trained"]');
    await page.waitForSelector('#trained-grid svg[data-model="toy-zh"]', { timeout: 15000 });
    await page.fill('#tokens', '猫 吃 苹果');
    await page.waitForFunction(() => document.querySelector('#trained-msg').textContent.length > 0);
    const msg = await page.textContent('#trained-msg');
    assert.match(msg, /不认识/);
    assert.ok(msg.includes('苹') && msg.includes('果'), msg);
    assert.ok(!/不认识这些字：[^。]*猫/.test(msg), 'known characters are not named as unknown');
    assert.equal(await page.locator('#trained-grid svg').count(), 0, 'no heatmap of [UNK]s');
    assert.equal(await page.isHidden('#trained-caption'), true);
    assert.equal(await page.locator('#main-heatmap rect.cell').count(), 9, 'the random-weights heatmap follows the sentence');
    await page.click('#lang');
    assert.match(await page.textContent('#trained-msg'), /does not know these characters: 苹 果/);
    await page.fill('#tokens', '猫 吃 鱼');
    await page.waitForSelector('#trained-grid svg[data-model="toy-zh"]');
    assert.equal(await page.textContent('#trained-msg'), '');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

// ------------------------------------------------------------------------------------------------
// a checkpoint from disk

for (const mode of ['http', 'file']) {
  test(`${mode}: two-layer-f16-prefix through the file input: every layer × head equals PyTorch's attention`, async () => {
    const { page, context, problems } = await open(mode === 'http' ? URL0 : FILE_URL);
    try {
      await loadCheckpoint(page, ckptFiles());
      await gridReady(page);
      assert.match(await page.textContent('#checkpoint-status'), /2 层 × 2 个头/);
      assert.match(await page.textContent('label[for="model-text"]'), /token id/);
      for (const seq of EXPECTED.sequences) {
        await typeIds(page, seq.ids);
        const got = await maps(page, '#checkpoint-grid svg');
        assert.equal(got.length, 4);
        for (const m of got) {
          assert.deepEqual(m.ids, seq.ids);
          assertMap(m, seq.attention[m.layer][m.head], `${seq.ids.length} tokens, layer ${m.layer} head ${m.head}`);
        }
        const big = (await maps(page, '#checkpoint-big svg'))[0];
        assertMap(big, seq.attention[big.layer][big.head], 'the enlarged map');
      }
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
}

test('enlarge with Enter; the log and hide-the-first-token options change the maps', async () => {
  const { page, context, problems } = await open();
  try {
    await loadCheckpoint(page, ckptFiles());
    await gridReady(page);
    const seq = EXPECTED.sequences[1];
    await typeIds(page, seq.ids);
    // Enter on layer 1 head 1
    await page.focus('#checkpoint-grid button.thumb[data-layer="1"][data-head="1"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#checkpoint-big svg[data-layer="1"][data-head="1"]');
    assert.equal(await page.getAttribute('#checkpoint-grid button.thumb[data-layer="1"][data-head="1"]', 'aria-pressed'), 'true');
    const big = (await maps(page, '#checkpoint-big svg'))[0];
    assertMap(big, seq.attention[1][1], 'enlarged layer 1 head 1');
    const labels = await page.$$eval('#checkpoint-big .col-label', (ts) => ts.map((t) => t.textContent));
    assert.deepEqual(labels, seq.ids.map(String), 'its tokens');
    assert.ok(await page.locator('#checkpoint-big .cell-value').count() > 0, 'its numbers');
    // log: the same values, other colours (thumbnails and the big map)
    const before = await maps(page, '#checkpoint-grid svg');
    const bigFills = await page.$$eval('#checkpoint-big rect.cell', (rs) => rs.map((r) => r.getAttribute('fill')));
    await page.check('#model-log');
    await page.waitForSelector('#checkpoint-grid[data-state="ready"] svg[data-scale="log"]');
    const logged = await maps(page, '#checkpoint-grid svg');
    assert.deepEqual(logged.map((m) => m.cells.map((c) => c.value)), before.map((m) => m.cells.map((c) => c.value)));
    assert.notDeepEqual(logged.map((m) => m.cells.map((c) => c.fill)), before.map((m) => m.cells.map((c) => c.fill)));
    assert.notDeepEqual(await page.$$eval('#checkpoint-big rect.cell', (rs) => rs.map((r) => r.getAttribute('fill'))), bigFills);
    assert.match(await page.textContent('#checkpoint-big'), /log/);
    await page.uncheck('#model-log');
    // hide the first token: its row and column gone, the rest renormalised
    await page.check('#model-hide-first');
    await page.waitForSelector('#checkpoint-grid[data-state="ready"] svg[data-first="hidden"]');
    for (const m of await maps(page, '#checkpoint-grid svg')) {
      assert.deepEqual(m.ids, seq.ids.slice(1));
      assertMap(m, hideFirst(seq.attention[m.layer][m.head]), `hidden first, layer ${m.layer} head ${m.head}`);
    }
    assert.match(await page.textContent('#model-options-note'), /重新归一化/);
    await page.uncheck('#model-hide-first');
    await page.waitForSelector('#checkpoint-grid[data-state="ready"] svg[data-first="shown"]');
    assert.deepEqual((await maps(page, '#checkpoint-grid svg')).map((m) => m.cells.map((c) => c.value)), before.map((m) => m.cells.map((c) => c.value)));
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('generation: each step adds a row to every head (the KV cache\'s rows equal a full pass); stop stops', async () => {
  const { page, context, problems } = await open();
  try {
    await loadCheckpoint(page, ckptFiles());
    await gridReady(page);
    const prompt = EXPECTED.greedy.prompt;
    await typeIds(page, prompt);
    await page.fill('#model-max', '8');
    await page.click('#model-generate');
    await page.waitForSelector('#model-output[data-state="done"]', { timeout: 15000 });
    // greedy: PyTorch's new tokens; the grid has a row for every token the model has read
    assert.match(await page.textContent('#model-output'), new RegExp(EXPECTED.greedy.new_tokens.join(' ')));
    const ids = [...prompt, ...EXPECTED.greedy.new_tokens.slice(0, 7)];
    const model = await loadModel(CKPT);
    const full = model.forward(ids, { attention: true }).attention;
    model.dispose();
    for (const m of await maps(page, '#checkpoint-grid svg')) {
      assert.deepEqual(m.ids, ids);
      assertMap(m, toRows(full[m.layer][m.head]), `after generation, layer ${m.layer} head ${m.head}`);
    }
    // stop: pressed as soon as the first new row appears
    await typeIds(page, prompt);
    await page.fill('#model-max', '16');
    await page.evaluate(() => {
      const svg = document.querySelector('#checkpoint-grid svg');
      new MutationObserver((_, obs) => { obs.disconnect(); document.querySelector('#model-stop').click(); }).observe(svg, { childList: true });
    });
    await page.click('#model-generate');
    await page.waitForSelector('#model-output[data-state="stopped"]', { timeout: 15000 });
    const count = Number(await page.getAttribute('#model-output', 'data-count'));
    assert.ok(count >= 2 && count < 16, `stopped after ${count} of 16 tokens`);
    const rows = await page.$eval('#checkpoint-grid svg', (s) => Math.max(...[...s.querySelectorAll('rect.cell')].map((r) => Number(r.dataset.row))) + 1);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await page.$eval('#checkpoint-grid svg', (s) => Math.max(...[...s.querySelectorAll('rect.cell')].map((r) => Number(r.dataset.row))) + 1), rows, 'no rows after stop');
    assert.equal(rows, prompt.length + count - 1);
    assert.equal(await page.isEnabled('#model-generate'), true);
    assert.equal(await page.isDisabled('#model-stop'), true);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('broken checkpoints: a message, and the rest of the page keeps working', async () => {
  const { page, context, problems } = await open();
  try {
    const config = fs.readFileSync(path.join(CKPT, 'config.json'));
    const weights = fs.readFileSync(path.join(CKPT, 'model.safetensors'));
    const file = (name, buffer) => ({ name, mimeType: 'application/octet-stream', buffer });
    // truncated weights
    await loadCheckpoint(page, [file('config.json', config), file('model.safetensors', weights.subarray(0, weights.length - 1000))]);
    await page.waitForFunction(() => document.querySelector('#checkpoint-msg').textContent.length > 0);
    assert.match(await page.textContent('#checkpoint-msg'), /不是一个能用的检查点：/);
    assert.match(await page.textContent('#checkpoint-msg'), /model\.safetensors/);
    assert.equal(await page.isHidden('#checkpoint-model'), true);
    // a 19-byte text named model.safetensors: not a safetensors file (it said "too large", with a
    // header length rounded through a float; "this is no" is 2338328219631577204 exactly)
    await loadCheckpoint(page, [file('config.json', config), file('model.safetensors', Buffer.from('this is not weights'))]);
    await page.waitForFunction(() => /not a safetensors file/.test(document.querySelector('#checkpoint-msg').textContent));
    const text = await page.textContent('#checkpoint-msg');
    assert.doesNotMatch(text, /太大/);
    assert.match(text, /header length of 2338328219631577204 bytes but the file has only 11 bytes/);
    // missing config.json
    await loadCheckpoint(page, [file('model.safetensors', weights)]);
    await page.waitForFunction(() => /config\.json/.test(document.querySelector('#checkpoint-msg').textContent));
    // PyTorch weights only
    await loadCheckpoint(page, [file('config.json', config), file('pytorch_model.bin', Buffer.from('not really'))]);
    await page.waitForFunction(() => /MODELS\.md/.test(document.querySelector('#checkpoint-msg').textContent));
    // the page still works: the sentence, the heatmap, the trained toy
    await page.fill('#tokens', '猫 吃 鱼 了');
    assert.equal(await page.locator('#main-heatmap rect.cell').count(), 16);
    await page.fill('#tokens', '猫 吃 鱼');
    await page.check('input[name="trained-mode"][value="trained"]');
    await page.waitForSelector('#trained-grid svg[data-model="toy-zh"]', { timeout: 15000 });
    // and a good checkpoint after the bad ones loads, the message gone
    await loadCheckpoint(page, ckptFiles());
    await gridReady(page);
    assert.equal(await page.textContent('#checkpoint-msg'), '');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('screenshots of the layer × head grid at 1280 and 390 px (/tmp/page-model-grid-*.png)', async () => {
  for (const width of [1280, 390]) {
    const { page, context, problems } = await open(URL0, { width, height: 900 });
    try {
      const dir = path.join(root, 'tests/golden/gpt2/wide-f32');
      await loadCheckpoint(page, ckptFiles(dir));
      await gridReady(page);
      await typeIds(page, Array.from({ length: 24 }, (_, i) => (i * 7) % 64));
      assert.equal(await page.locator('#checkpoint-grid svg').count(), 12);
      await page.locator('#checkpoint').screenshot({ path: `/tmp/page-model-grid-${width}.png` });
      assert.ok(await page.evaluate(() => document.scrollingElement.scrollWidth) <= width, `no sideways scroll at ${width} px`);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  }
});
