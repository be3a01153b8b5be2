// draw-heatmap.test.js - drawHeatmap (attnmap/heatmap) in real browsers: Debian's Chromium (through
// playwright-core, tests/browser/browser.js) and Firefox ESR (through puppeteer-core's WebDriver
// BiDi, tests/browser/firefox.js). A page of the served checkout imports web/heatmap/heatmap.js,
// draws known matrices into a canvas and an OffscreenCanvas, and reads the pixels back with
// getImageData. The spec is colour.js's scale run here in Node, colour(v): each pixel must be the
// colour of the value it stands for (values on the 256-colour table's points, so exactly), and a
// lone 1.0 among 1,000,000 zeros on a 256 × 256 canvas lights exactly the pixels its cell covers.
//
//   node --test tests/browser/draw-heatmap.test.js
//
// Without Firefox the Firefox test skips, saying why, except under CI (env CI set), where it fails
// naming the package (as firefox.test.js).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../scripts/serve.js';
import { root } from '../helpers.js';
import { launch } from './browser.js';
import { firefoxMissing, launchFirefox, pageProblems, leftovers } from './firefox.js';
import { colour } from '../../web/heatmap/colour.js';

const MISSING = firefoxMissing();
const SKIP_FIREFOX = MISSING && !process.env.CI ? `${MISSING}; under CI this test runs` : false;
const TIMEOUT = 120000;              // a budget against a hang, not a timing assertion

const UNIT = { scale: 'sequential', colourScale: 'unit', dmin: 0, dmax: 1 };
// 3 × 3 on the table's points (k / 255): each pixel is exactly colour(v)
const M3 = [[0, 51 / 255, 102 / 255], [1, 204 / 255, 153 / 255], [17 / 255, 0, 238 / 255]];
const LONE = { n: 1000, row: 517, col: 289, size: 256 };

let server;
before(async () => { server = await startServer({ root }); });
after(async () => { await server?.close(); });

/**
 * Runs in the page: draws M3 into a 90 × 60 canvas and an OffscreenCanvas (legend: false), the
 * lone cell into a 256 × 256 canvas, and M3 with a legend; returns the pixels read back.
 */
async function drawInPage({ m3, lone }) {
  const { drawHeatmap } = await import('/web/heatmap/heatmap.js');
  const read = (ctx, w, h) => Array.from(ctx.getImageData(0, 0, w, h).data);
  const canvas = Object.assign(document.createElement('canvas'), { width: 90, height: 60 });
  const drawn = drawHeatmap(canvas, m3, { legend: false });
  const off = new OffscreenCanvas(90, 60);
  const offDrawn = drawHeatmap(off, m3, { legend: false });
  const data = new Float32Array(lone.n * lone.n);
  data[lone.row * lone.n + lone.col] = 1;
  const big = Object.assign(document.createElement('canvas'), { width: lone.size, height: lone.size });
  const bigDrawn = drawHeatmap(big, { data, shape: [lone.n, lone.n] }, { legend: false });
  const framed = Object.assign(document.createElement('canvas'), { width: 300, height: 200 });
  const framedDrawn = drawHeatmap(framed, m3);
  return {
    plain: read(canvas.getContext('2d'), 90, 60), plot: drawn.plot, hit: drawn.cellAt(45, 10),
    offscreen: read(off.getContext('2d'), 90, 60), offPlot: offDrawn.plot,
    lone: read(big.getContext('2d'), lone.size, lone.size), lonePlot: bigDrawn.plot,
    framed: read(framed.getContext('2d'), 300, 200), framedPlot: framedDrawn.plot,
  };
}

const px = (buf, w, x, y) => buf.slice((y * w + x) * 4, (y * w + x) * 4 + 4);
const opaque = (rgb) => [...rgb, 255];

/** The checks on what drawInPage returned, against colour() and the geometry of heatmap.d.ts. */
function check(r, browser) {
  for (const [name, buf, plot] of [['canvas', r.plain, r.plot], ['OffscreenCanvas', r.offscreen, r.offPlot]]) {
    assert.deepEqual(plot, { x: 0, y: 0, width: 90, height: 60 }, `${browser} ${name}: the map fills the canvas`);
    for (let y = 0; y < 60; y++) {
      for (let x = 0; x < 90; x++) {
        const i = Math.floor(y / 20), j = Math.floor(x / 30);      // 30 × 20 pixel blocks
        assert.deepEqual(px(buf, 90, x, y), opaque(colour(M3[i][j], UNIT)), `${browser} ${name}: pixel (${x}, ${y}) is cell [${i}][${j}] = ${M3[i][j]}`);
      }
    }
  }
  assert.deepEqual(r.hit, { row: 0, col: 1, value: M3[0][1] });

  // the lone cell: pixels x with 289·256 < (x+1)·1000 and 290·256 > x·1000, likewise y
  const { n, row, col, size } = LONE;
  const over = (c) => Array.from({ length: size }, (_, p) => p).filter((p) => c * size < (p + 1) * n && (c + 1) * size > p * n);
  const xs = over(col), ys = over(row);
  const top = opaque(colour(1, UNIT)), bottom = opaque(colour(0, UNIT));
  const lit = [], wrong = [];
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const p = px(r.lone, size, x, y), on = xs.includes(x) && ys.includes(y);
      if (String(p) === String(top)) lit.push([x, y]);
      if (String(p) !== String(on ? top : bottom)) wrong.push([x, y, p]);
    }
  }
  assert.deepEqual(wrong, [], `${browser}: every pixel is the top colour where the lone cell is, the bottom one elsewhere`);
  assert.ok(lit.length >= 1, `${browser}: the lone 1.0 is visible`);

  // with the legend: the map keeps its colours left of a ramp whose top is colour(max), bottom colour(min)
  const f = r.framedPlot;
  assert.ok(f.x === 0 && f.width < 300 - 24, `${browser}: the legend's strip on the right (plot ${JSON.stringify(f)})`);
  const cx = (j) => f.x + Math.floor(((j + 0.5) * f.width) / 3), cy = (i) => f.y + Math.floor(((i + 0.5) * f.height) / 3);
  for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) assert.deepEqual(px(r.framed, 300, cx(j), cy(i)), opaque(colour(M3[i][j], UNIT)));
  const rampX = f.x + f.width + 12 + 6;
  assert.deepEqual(px(r.framed, 300, rampX, f.y), opaque(colour(1 - 0.5 / f.height, UNIT)), `${browser}: the ramp's top row`);
  assert.deepEqual(px(r.framed, 300, rampX, f.y + f.height - 1), opaque(colour(0.5 / f.height, UNIT)), `${browser}: the ramp's bottom row`);
}

test('Chromium: pixels against the colour scale (canvas, OffscreenCanvas, a lone cell in 1,000²)', { timeout: TIMEOUT }, async () => {
  const browser = await launch();
  try {
    const page = await browser.newPage();
    // the page's errors, but for the favicon.ico that a plain-text page asks for (404)
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error' && !/\/favicon\.ico$/.test(m.location().url)) errors.push(m.text()); });
    await page.goto(`${server.url}LICENSE`);
    check(await page.evaluate(drawInPage, { m3: M3, lone: LONE }), 'Chromium');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});

test('Firefox ESR: the same pixels', { timeout: TIMEOUT, skip: SKIP_FIREFOX }, async () => {
  const ff = await launchFirefox();
  try {
    const page = await ff.browser.newPage();
    const problems = pageProblems(page);
    await page.goto(`${server.url}LICENSE`);
    check(await page.evaluate(drawInPage, { m3: M3, lone: LONE }), 'Firefox');
    assert.deepEqual(problems, []);
  } finally {
    await ff.close();
    assert.deepEqual(leftovers(ff.pid), [], `processes of Firefox ${ff.pid} still running after close`);
  }
});
