// web/heatmap/zoom.js's arithmetic (the zoom and pan of a large map on a canvas, issue 37 item 4:
// the page's heads panel and the element over 256 tokens): windows stay inside the map and at least
// MIN_CELLS a side, the point under the pointer stays put, the slice copies the window's cells. The
// events are tested in Chromium (tests/browser/page-heads.test.js, tests/browser/element-long.test.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MIN_CELLS, fullView, clampView, zoomAt, panBy, sliceOf } from '../../web/heatmap/zoom.js';

test('clampView: inside the map, whole cells, at least MIN_CELLS a side (or the map when smaller)', () => {
  assert.deepEqual(clampView({ r0: -5, c0: 900, k: 100 }, 1000), { r0: 0, c0: 900, k: 100 });
  assert.deepEqual(clampView({ r0: 950, c0: 2.6, k: 100 }, 1000), { r0: 900, c0: 3, k: 100 });
  assert.deepEqual(clampView({ r0: 0, c0: 0, k: 2 }, 1000), { r0: 0, c0: 0, k: MIN_CELLS });
  assert.deepEqual(clampView({ r0: 3, c0: 3, k: 5000 }, 1000), { r0: 0, c0: 0, k: 1000 });
  assert.deepEqual(clampView({ r0: 1, c0: 1, k: 2 }, 5), { r0: 0, c0: 0, k: 5 }, 'a 5-token map is its own smallest window');
});

test('zoomAt: the point under the pointer stays under it; zooming out ends at the whole map', () => {
  const v = zoomAt(fullView(1000), 1000, 0.5, 0.25, 0.75);
  assert.equal(v.k, 500);
  // the point at fraction (u, v) = (0.25, 0.75) was cell (750, 250); it is at the same fractions now
  assert.equal(v.r0 + 0.75 * v.k, 750);
  assert.equal(v.c0 + 0.25 * v.k, 250);
  let w = v;
  for (let i = 0; i < 20; i++) w = zoomAt(w, 1000, 0.5);
  assert.equal(w.k, MIN_CELLS, 'zooming in stops at MIN_CELLS');
  for (let i = 0; i < 20; i++) w = zoomAt(w, 1000, 2);
  assert.deepEqual(w, fullView(1000), 'zooming out ends at the whole map');
});

test('panBy: moves by whole cells and stops at the edges', () => {
  assert.deepEqual(panBy({ r0: 10, c0: 10, k: 100 }, 1000, 5.4, -3), { r0: 15, c0: 7, k: 100 });
  assert.deepEqual(panBy({ r0: 10, c0: 10, k: 100 }, 1000, -50, 5000), { r0: 0, c0: 900, k: 100 });
});

test('sliceOf: the window\'s cells, row by row', () => {
  const n = 6, data = Float32Array.from({ length: n * n }, (_, i) => i);
  const s = sliceOf({ data, shape: [n, n] }, { r0: 2, c0: 3, k: 3 });
  assert.deepEqual(s.shape, [3, 3]);
  assert.deepEqual(Array.from(s.data), [15, 16, 17, 21, 22, 23, 27, 28, 29]);
});
