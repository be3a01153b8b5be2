// zoom.js - zoom and pan over a square map drawn on a canvas (issue 37 item 4), one module for the
// page's heads panel (web/page/page-heads.js) and the element's maps over 256 tokens
// (web/model/element-canvas.js): the view is a window of k × k cells whose top-left cell is
// (r0, c0), and the canvas shows only that window (drawHeatmap of the slice), so a 4,096² map
// zoomed in shows its cells one by one. No imports: it knows nothing of models or pages.
//
//   zoomAt(view, n, factor, u, v)   the window scaled by factor (< 1 zooms in) about the point at
//                                   fractions (u, v) of it, which stays under the pointer
//   panBy(view, n, dr, dc)          the window moved by dr rows and dc columns
//   sliceOf(matrix, view)           the window's cells as { data, shape } (a copy)
//   bindZoom(canvas, { view, set }) wheel, drag, pinch (two pointers) and keys (+ − arrows 0)
// Pure except bindZoom; views are clamped into the map, at least MIN_CELLS a side.
export const MIN_CELLS = 8;
const WHEEL_STEP = 1.25, KEY_STEP = 1.5;

/** The whole map. */
export const fullView = (n) => ({ r0: 0, c0: 0, k: n });

/** view with k in [min(MIN_CELLS, n), n] and the window inside the map, in whole cells. */
export function clampView({ r0, c0, k }, n) {
  const side = Math.max(Math.min(MIN_CELLS, n), Math.min(n, Math.round(k)));
  const inside = (x) => Math.max(0, Math.min(n - side, Math.round(x)));
  return { r0: inside(r0), c0: inside(c0), k: side };
}

export function zoomAt(view, n, factor, u = 0.5, v = 0.5) {
  const k = Math.max(Math.min(MIN_CELLS, n), Math.min(n, Math.round(view.k * factor)));
  return clampView({ r0: view.r0 + v * (view.k - k), c0: view.c0 + u * (view.k - k), k }, n);
}

export const panBy = (view, n, dr, dc) => clampView({ r0: view.r0 + dr, c0: view.c0 + dc, k: view.k }, n);

export function sliceOf({ data, shape: [, cols] }, { r0, c0, k }) {
  const out = new Float32Array(k * k);
  for (let i = 0; i < k; i++) out.set(data.subarray((r0 + i) * cols + c0, (r0 + i) * cols + c0 + k), i * k);
  return { data: out, shape: [k, k] };
}

/**
 * Wheel (about the pointer), drag with one pointer, pinch with two, and keys on the focused
 * canvas: + and − zoom about the centre, arrows pan by a quarter of the window, 0 shows all.
 * view() gives { view, n, plot } (plot: the cells' rectangle in canvas pixels); set(view) redraws.
 */
export function bindZoom(canvas, { view, set }) {
  const scale = () => canvas.width / (canvas.clientWidth || canvas.width);
  const at = (e) => {   // the pointer as fractions of the plot
    const { plot } = view(), k = scale();
    return [(e.offsetX * k - plot.x) / plot.width, (e.offsetY * k - plot.y) / plot.height];
  };
  canvas.addEventListener('wheel', (e) => {
    const s = view();
    if (!s) return;
    e.preventDefault();
    const [u, v] = at(e);
    set(zoomAt(s.view, s.n, e.deltaY < 0 ? 1 / WHEEL_STEP : WHEEL_STEP, clamp01(u), clamp01(v)));
  }, { passive: false });
  const pointers = new Map();
  let last = null;   // { x, y, dist } of the previous move
  canvas.addEventListener('pointerdown', (e) => {
    pointers.set(e.pointerId, e);
    canvas.setPointerCapture?.(e.pointerId);
    last = gesture(pointers);
  });
  const end = (e) => { pointers.delete(e.pointerId); last = gesture(pointers); };
  canvas.addEventListener('pointerup', end);
  canvas.addEventListener('pointercancel', end);
  canvas.addEventListener('pointermove', (e) => {
    const s = view();
    if (!s || !pointers.has(e.pointerId)) return;
    pointers.set(e.pointerId, e);
    const now = gesture(pointers);
    if (!last || !now || now.count !== last.count) { last = now; return; }
    const { plot } = s, k = scale(), cell = plot.width / s.view.k / k;   // CSS pixels a cell
    let next = panBy(s.view, s.n, -(now.y - last.y) / cell, -(now.x - last.x) / cell);
    if (now.count === 2 && last.dist > 0 && now.dist > 0) {
      const [u, v] = at({ offsetX: now.x, offsetY: now.y });
      next = zoomAt(next, s.n, last.dist / now.dist, clamp01(u), clamp01(v));
    }
    if (next.r0 !== s.view.r0 || next.c0 !== s.view.c0 || next.k !== s.view.k) { set(next); last = now; }
  });
  canvas.addEventListener('keydown', (e) => {
    const s = view();
    if (!s) return;
    const q = Math.max(1, Math.round(s.view.k / 4));
    const next = {
      '+': () => zoomAt(s.view, s.n, 1 / KEY_STEP), '=': () => zoomAt(s.view, s.n, 1 / KEY_STEP),
      '-': () => zoomAt(s.view, s.n, KEY_STEP), 0: () => fullView(s.n),
      ArrowUp: () => panBy(s.view, s.n, -q, 0), ArrowDown: () => panBy(s.view, s.n, q, 0),
      ArrowLeft: () => panBy(s.view, s.n, 0, -q), ArrowRight: () => panBy(s.view, s.n, 0, q),
    }[e.key];
    if (!next) return;
    e.preventDefault();
    set(next());
  });
}

const clamp01 = (x) => (Number.isFinite(x) ? Math.max(0, Math.min(1, x)) : 0.5);

// the pointers' centre (offset coordinates) and, for two, their distance
function gesture(pointers) {
  const ps = [...pointers.values()];
  if (!ps.length) return null;
  const x = ps.reduce((a, p) => a + p.offsetX, 0) / ps.length, y = ps.reduce((a, p) => a + p.offsetY, 0) / ps.length;
  const dist = ps.length === 2 ? Math.hypot(ps[0].offsetX - ps[1].offsetX, ps[0].offsetY - ps[1].offsetY) : 0;
  return { x, y, dist, count: ps.length };
}
