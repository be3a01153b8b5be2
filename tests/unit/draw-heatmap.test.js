// draw-heatmap.test.js - drawHeatmap (web/heatmap/canvas.js, pixels.js) in Node, on a fake canvas
// that keeps what putImageData wrote (Node has no canvas; tests/browser/draw-heatmap.test.js
// draws in Chromium and Firefox). The spec is colour.js's scale, colour(v): every pixel is the
// colour of the value it stands for, within half a step of the 256-colour table; cells map to
// pixels as heatmap.d.ts says (cell (i, j) covers x from j·W/m to (j+1)·W/m; a pixel over several
// cells shows their max, or mean); bad matrices get renderHeatmap's messages, named drawHeatmap.
//
//   node --test tests/unit/draw-heatmap.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { drawHeatmap, renderHeatmap } from '../../web/heatmap/heatmap.js';
import { axisMap } from '../../web/heatmap/pixels.js';
import { colour } from '../../web/heatmap/colour.js';
import { colourLut, lutIndex } from '../../web/heatmap/pixels.js';

/** A canvas that records its 2D calls and keeps the pixels putImageData wrote (RGBA, 0 = never written). */
export function fakeCanvas(width, height, { noContext = false } = {}) {
  const pixels = new Uint8ClampedArray(width * height * 4);
  const calls = [];
  const ctx = {
    createImageData: (w, h) => ({ width: w, height: h, data: new Uint8ClampedArray(w * h * 4) }),
    putImageData(img, x, y) {
      calls.push(['putImageData', img.width, img.height, x, y]);
      for (let r = 0; r < img.height; r++) pixels.set(img.data.subarray(r * img.width * 4, (r + 1) * img.width * 4), ((y + r) * width + x) * 4);
    },
    measureText: (t) => ({ width: t.length * 6 }),
  };
  for (const k of ['clearRect', 'fillRect', 'fillText', 'save', 'restore', 'translate', 'rotate']) ctx[k] = (...a) => calls.push([k, ...a]);
  return {
    width, height, calls, getContext: (kind) => (kind === '2d' && !noContext ? ctx : null),
    pixel: (x, y) => Array.from(pixels.subarray((y * width + x) * 4, (y * width + x) * 4 + 4)),
  };
}

const UNIT = { scale: 'sequential', colourScale: 'unit', dmin: 0, dmax: 1 };
const opaque = (rgb) => [...rgb, 255];

test('without legend and labels the map fills the canvas, cell (i, j) over x j·W/m to (j+1)·W/m, in one putImageData', () => {
  // values on the table's points (k/255): the pixels are exactly colour(v)
  const M = [[0, 51 / 255, 102 / 255], [1, 204 / 255, 153 / 255], [17 / 255, 0, 1]];
  const c = fakeCanvas(7, 5);
  const drawn = drawHeatmap(c, M, { legend: false });
  assert.deepEqual(drawn.plot, { x: 0, y: 0, width: 7, height: 5 });
  assert.deepEqual(c.calls, [['putImageData', 7, 5, 0, 0]], 'one putImageData, no fillRect, no text');
  for (let y = 0; y < 5; y++) {
    for (let x = 0; x < 7; x++) {
      // the cell whose box holds the pixel's centre: j·7/3 <= x + 0.5 < (j+1)·7/3
      const i = [0, 1, 2].find((r) => r * 5 <= (y + 0.5) * 3 && (y + 0.5) * 3 < (r + 1) * 5);
      const j = [0, 1, 2].find((k) => k * 7 <= (x + 0.5) * 3 && (x + 0.5) * 3 < (k + 1) * 7);
      assert.deepEqual(c.pixel(x, y), opaque(colour(M[i][j], UNIT)), `pixel (${x}, ${y}) is cell [${i}][${j}]`);
      assert.deepEqual(drawn.cellAt(x + 0.5, y + 0.5), { row: i, col: j, value: M[i][j] });
    }
  }
  assert.equal(drawn.cellAt(-0.1, 2), null);
  assert.equal(drawn.cellAt(7, 2), null);
  assert.equal(drawn.cellAt(3, 5), null);
});

test('axisMap: blocks by the centre with fewer cells than pixels, every overlapping cell with more', () => {
  for (const [cells, px] of [[3, 256], [255, 256], [256, 256], [257, 256], [1000, 256], [4096, 1024], [7, 3], [1, 5], [5, 1]]) {
    const { lo, hi } = axisMap(cells, px);
    for (let p = 0; p < px; p++) {
      // cell j covers [j·px/cells, (j+1)·px/cells); in integers, times cells
      const overlaps = [];
      for (let j = 0; j < cells; j++) if (j * px < (p + 1) * cells && (j + 1) * px > p * cells) overlaps.push(j);
      if (cells <= px) {
        const centre = overlaps.filter((j) => j * px * 2 <= (2 * p + 1) * cells && (2 * p + 1) * cells < (j + 1) * px * 2);
        assert.deepEqual([lo[p], hi[p]], [centre[0], centre[0]], `${cells} cells on ${px} px, pixel ${p}`);
      } else {
        assert.deepEqual([lo[p], hi[p]], [overlaps[0], overlaps.at(-1)], `${cells} cells on ${px} px, pixel ${p}`);
      }
    }
  }
});

/** n × n zeros with value at (r, c), as the core returns a map. */
function lone(n, r, c, value = 1) {
  const data = new Float32Array(n * n);
  data[r * n + c] = value;
  return { data, shape: [n, n] };
}

/** The pixels of a W × H plot that cover cell (r, c) of an n × m matrix (the geometry, in integers). */
function coveringPixels(r, c, n, m, W, H) {
  const xs = [], ys = [];
  for (let x = 0; x < W; x++) if (c * W < (x + 1) * m && (c + 1) * W > x * m) xs.push(x);
  for (let y = 0; y < H; y++) if (r * H < (y + 1) * n && (r + 1) * H > y * n) ys.push(y);
  return { xs, ys };
}

test('more cells than pixels: each pixel shows the max of the cells it covers, so a lone 1.0 among 1,000,000 zeros stays visible', () => {
  const c = fakeCanvas(256, 256);
  const drawn = drawHeatmap(c, lone(1000, 517, 289), { legend: false });
  assert.deepEqual(drawn.domain, { min: 0, max: 1 });
  const { xs, ys } = coveringPixels(517, 289, 1000, 1000, 256, 256);
  const top = opaque(colour(1, UNIT)), bottom = opaque(colour(0, UNIT));
  let lit = 0;
  for (let y = 0; y < 256; y++) {
    for (let x = 0; x < 256; x++) {
      const on = xs.includes(x) && ys.includes(y);
      assert.deepEqual(c.pixel(x, y), on ? top : bottom, `pixel (${x}, ${y})`);
      lit += on;
    }
  }
  assert.ok(lit >= 1, 'the lone cell lights at least one pixel');
  // a cell on a pixel boundary (cell 125 spans x = 32.0 to 32.256) lights one column; 126 (32.256 to 32.512) too
  assert.deepEqual(coveringPixels(0, 125, 1000, 1000, 256, 256).xs, [32]);
});

test("reduce: 'mean' averages the cells a pixel covers (a lone cell dims); 'max' keeps it", () => {
  // 8 × 8 on 2 × 2: each pixel covers 4 × 4 cells, so the lone 1 becomes 1/16
  const mean = fakeCanvas(2, 2), max = fakeCanvas(2, 2);
  drawHeatmap(mean, lone(8, 1, 6), { legend: false, reduce: 'mean' });
  drawHeatmap(max, lone(8, 1, 6), { legend: false });
  assert.deepEqual(mean.pixel(1, 0), opaque(colour(16 / 255, UNIT)), 'the mean of 16 cells, 1/16: the entry nearest (16/255)');
  assert.deepEqual(max.pixel(1, 0), opaque(colour(1, UNIT)));
  for (const [x, y] of [[0, 0], [0, 1], [1, 1]]) {
    assert.deepEqual(mean.pixel(x, y), opaque(colour(0, UNIT)));
    assert.deepEqual(max.pixel(x, y), opaque(colour(0, UNIT)));
  }
});

test('the axes map apart: 1 × 4,096 on 64 × 64 is one block down and the max across', () => {
  const data = new Float32Array(4096);
  data[3000] = 0.8;
  const c = fakeCanvas(64, 64);
  drawHeatmap(c, { data, shape: [1, 4096] }, { legend: false });
  for (let y = 0; y < 64; y++) {
    for (let x = 0; x < 64; x++) assert.deepEqual(c.pixel(x, y), opaque(colour(x === 46 ? 0.8 : 0, UNIT)), `pixel (${x}, ${y})`);
  }
});

test('the lookup table is the scale at 256 points; every pixel is within half a step of colour(v)', () => {
  const lut = colourLut(UNIT);
  for (let k = 0; k < 256; k++) assert.deepEqual(Array.from(lut.subarray(3 * k, 3 * k + 3)), colour(k / 255, UNIT), `entry ${k}`);
  assert.equal(lutIndex(0), 0);
  assert.equal(lutIndex(-3), 0);
  assert.equal(lutIndex(1), 255);
  assert.equal(lutIndex(7), 255);
  assert.equal(lutIndex(0.5 / 255 - 1e-9), 0);
  assert.equal(lutIndex(0.5 / 255 + 1e-9), 1);
  assert.equal(lutIndex(NaN), 128);
  // random values under each scale: each pixel is the colour of a value whose ramp position is
  // within 1/510 of v's, so each channel is within half the table's largest step (+1 for rounding)
  const n = 40, data = new Float64Array(n * n);
  let seed = 7;
  for (let p = 0; p < data.length; p++) { seed = (seed * 1103515245 + 12345) % 2147483648; data[p] = (seed / 2147483648) * 3 - 0.5; }
  for (const options of [{}, { scale: 'diverging' }, { colourScale: 'log' }, { colourScale: 'data' }, { min: 0.25, max: 1.5 }]) {
    const c = fakeCanvas(n, n);
    const drawn = drawHeatmap(c, { data, shape: [n, n] }, { ...options, legend: false });
    const o = { scale: options.scale ?? 'sequential', colourScale: options.colourScale ?? 'unit', dmin: drawn.domain.min, dmax: drawn.domain.max };
    const table = colourLut(o);
    let step = 0;
    for (let k = 3; k < table.length; k++) step = Math.max(step, Math.abs(table[k] - table[k - 3]));
    const tol = Math.ceil(step / 2) + 1;
    for (let p = 0; p < data.length; p++) {
      const got = c.pixel(p % n, Math.floor(p / n)), want = opaque(colour(data[p], o));
      assert.ok(got.every((ch, k) => Math.abs(ch - want[k]) <= tol), `${JSON.stringify(options)}: cell ${p} (${data[p]}) is ${got}, colour() ${want}, tolerance ${tol}`);
    }
  }
});

test('the domain is renderHeatmap\'s: 0–1 for weights, the data range, log from the smallest positive value, min/max', () => {
  const domain = (m, o) => drawHeatmap(fakeCanvas(4, 4), m, { legend: false, ...o }).domain;
  assert.deepEqual(domain([[0.2, 0.4]]), { min: 0, max: 1 });
  assert.deepEqual(domain([[0.2, 0.4]], { colourScale: 'data' }), { min: 0.2, max: 0.4 });
  assert.deepEqual(domain([[0, -1, 0.01, 10]], { colourScale: 'log' }), { min: 0.01, max: 10 });
  assert.deepEqual(domain([[-2, 3]], { scale: 'diverging' }), { min: -3, max: 3 });
  assert.deepEqual(domain([[0.2, 0.4]], { min: -1, max: 2 }), { min: -1, max: 2 });
  assert.deepEqual(domain({ data: new Float32Array([0.5, 0, 0, 0]), shape: [2, 2] }, { colourScale: 'log' }), { min: 0.05, max: 0.5 });
});

test('a Float32Array matrix is read in place, not copied (cellAt reads it at the call)', () => {
  const m = lone(4, 2, 3, 0.5);
  const drawn = drawHeatmap(fakeCanvas(8, 8), m, { legend: false });
  assert.equal(drawn.cellAt(7, 5).value, 0.5);
  m.data[2 * 4 + 3] = 0.25;
  assert.equal(drawn.cellAt(7, 5).value, 0.25, 'the caller\'s array, not a copy');
});

test('the legend takes a strip on the right only when asked for; labels take room only where legible', () => {
  const M = lone(4, 0, 0);
  const withLegend = fakeCanvas(200, 100);
  const a = drawHeatmap(withLegend, M);
  assert.equal(a.plot.x, 0);
  assert.ok(a.plot.width < 200 - 24 && a.plot.width > 100, `the legend's strip: plot ${JSON.stringify(a.plot)}`);
  assert.ok(withLegend.calls.filter((k) => k[0] === 'fillText').length >= 2, 'tick labels');
  assert.equal(withLegend.calls.filter((k) => k[0] === 'fillRect').length, a.plot.height + withLegend.calls.filter((k) => k[0] === 'fillText').length,
    'one ramp row per pixel, one mark per tick');
  assert.ok(withLegend.calls.some((k) => k[0] === 'clearRect'));

  const labels = ['猫', '吃', '鱼', 'a'];
  const legible = fakeCanvas(200, 200);
  const b = drawHeatmap(legible, M, { legend: false, rowLabels: labels, colLabels: labels });
  assert.ok(b.plot.x > 0 && b.plot.y > 0, `margins for the labels: ${JSON.stringify(b.plot)}`);
  assert.equal(b.plot.x + b.plot.width, 200);
  assert.equal(b.plot.y + b.plot.height, 200);
  assert.equal(legible.calls.filter((k) => k[0] === 'fillText').length, 8);

  // 64 rows on 200 px: 3 px a row, too small to read, so no labels and no margin
  const many = Array.from({ length: 64 }, (_, i) => `t${i}`);
  const small = fakeCanvas(200, 200);
  const d = drawHeatmap(small, lone(64, 0, 0), { legend: false, rowLabels: many, colLabels: many });
  assert.deepEqual(d.plot, { x: 0, y: 0, width: 200, height: 200 });
  assert.equal(small.calls.filter((k) => k[0] === 'fillText').length, 0);
});

test('bad matrices get renderHeatmap\'s errors and messages, named drawHeatmap', () => {
  const bad = [
    [[1, 2], [3]], [], [[]], '[[1]]', [[1, NaN]], [[Infinity]], [[1, '2']], [[1], 2], null,
    { data: new Float32Array(8), shape: [3, 3] }, { data: [], shape: [0, 3] },
    { data: new Float32Array([0, NaN]), shape: [1, 2] }, { data: new Float64Array([0, 1, -Infinity, 0]), shape: [2, 2] },
    { data: [0, 'x'], shape: [1, 2] }, { data: 'abc', shape: [1, 3] }, { data: new Float32Array(4) },
  ];
  for (const m of bad) {
    let svg, canvas;
    try { renderHeatmap(m); } catch (e) { svg = e; }
    try { drawHeatmap(fakeCanvas(4, 4), m); } catch (e) { canvas = e; }
    assert.ok(svg && canvas, `both refuse ${JSON.stringify(m)}`);
    assert.equal(canvas.constructor, svg.constructor, String(svg.message));
    assert.equal(canvas.message, svg.message.replace(/^renderHeatmap:/, 'drawHeatmap:'));
  }
  // no cell budget: 300 × 300 is drawn (renderHeatmap refuses it)
  assert.throws(() => renderHeatmap(lone(300, 0, 0)), /at most 65536/);
  assert.equal(drawHeatmap(fakeCanvas(30, 30), lone(300, 0, 0), { legend: false }).rows, 300);
});

test('bad canvases and options are refused by name; the canvas size is bounded', () => {
  const M = [[0.5]];
  const cases = [
    [() => drawHeatmap(null, M), TypeError, /drawHeatmap: canvas must be an HTMLCanvasElement or an OffscreenCanvas; received null/],
    [() => drawHeatmap({ width: 4, height: 4 }, M), TypeError, /canvas must be/],
    [() => drawHeatmap(fakeCanvas(0, 4), M), RangeError, /the canvas is 0×4; it must be 1 to 8192 pixels a side/],
    [() => drawHeatmap(fakeCanvas(8193, 1), M), RangeError, /the canvas is 8193×1/],
    [() => drawHeatmap({ width: 8192, height: 8193, getContext: () => null }, M), RangeError, /at most 67108864 pixels/],
    [() => drawHeatmap({ width: 2.5, height: 4, getContext: () => null }, M), RangeError, /the canvas is 2.5×4/],
    [() => drawHeatmap(fakeCanvas(4, 4, { noContext: true }), M), TypeError, /gave no 2d context/],
    [() => drawHeatmap(fakeCanvas(20, 20), M), RangeError, /a 20×20 canvas leaves no room for the map beside the legend/],
    [() => drawHeatmap(fakeCanvas(4, 4), M, { reduce: 'min' }), RangeError, /reduce must be "max" or "mean"; received the string "min"/],
    [() => drawHeatmap(fakeCanvas(4, 4), M, { masked: 'causal' }), TypeError, /drawHeatmap: unknown option "masked"; expected one of rowLabels/],
    [() => drawHeatmap(fakeCanvas(4, 4), M, null), TypeError, /drawHeatmap: options must be an object; received null/],
    [() => drawHeatmap(fakeCanvas(4, 4), M, { scale: 'log' }), RangeError, /drawHeatmap: scale must be "sequential" or "diverging"/],
    [() => drawHeatmap(fakeCanvas(4, 4), M, { colourScale: 'log', min: 0 }), RangeError, /drawHeatmap: colourScale "log" needs 0 < min < max/],
    [() => drawHeatmap(fakeCanvas(4, 4), M, { min: 1, max: 0 }), RangeError, /drawHeatmap: min must be less than max/],
    [() => drawHeatmap(fakeCanvas(4, 4), M, { legend: 'no' }), TypeError, /drawHeatmap: legend must be true or false/],
    [() => drawHeatmap(fakeCanvas(4, 4), M, { rowLabels: ['a', 'b'] }), RangeError, /drawHeatmap: rowLabels has 2 labels but the matrix has 1 row/],
    [() => drawHeatmap(fakeCanvas(4, 4), M, { textColour: 3 }), TypeError, /textColour must be a CSS colour string/],
  ];
  for (const [fn, type, message] of cases) assert.throws(fn, (e) => e instanceof type && message.test(e.message), String(fn));
});
