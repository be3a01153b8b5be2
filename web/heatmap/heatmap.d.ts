/**
 * An attention matrix as an SVG heatmap: a pure function, no DOM, no dependencies.
 *
 * Rows are queries (who is looking), columns are keys (who is looked at). One `<rect class="cell">`
 * per cell carries `data-row`, `data-col` and `data-value` (the full-precision value); each cell's
 * `<g class="cell-group">` has a `<title>` and an `aria-label` such as `吃 → 猫: 0.3157`.
 *
 * @example
 * ```js
 * import { createAttention } from 'attnmap';
 * import { renderHeatmap } from 'attnmap/heatmap';
 *
 * const attn = await createAttention();
 * const { weights } = attn.attention({ q, k, v });          // { data: Float32Array, shape: [3, 3] }
 * const tokens = ['猫', '吃', '鱼'];
 *
 * // inline, e.g. into a shadow root under `style-src 'self'`: no <style>, no style=""
 * shadowRoot.innerHTML = renderHeatmap(weights, { rowLabels: tokens, colLabels: tokens, idPrefix: 'ep05' });
 *
 * // a file on disk: xmlns, embedded font stack and a background
 * fs.writeFileSync('heatmap.svg', renderHeatmap(weights, {
 *   rowLabels: tokens, colLabels: tokens, lang: 'en', decimals: 4, standalone: true,
 * }));
 * ```
 *
 * Callers pass options and insert the string as it is: roles, the tab stop, a focus ring, the
 * cells' labels, the captions and the description are options (see below), so nothing has to
 * rewrite the SVG afterwards.
 *
 * Invalid input (ragged rows, a label count that does not match, NaN or ±Infinity, an unknown
 * option, more than 65,536 cells) throws a `TypeError` or `RangeError` whose message names what
 * was expected and what came. The same input always gives the same string.
 *
 * Any finite input returns, in time and size bounded by the cell count (at most 65,536): a colour
 * domain below the precision of its numbers (1e15 to 1e15 + 0.2) or up to ±1.8e308 gets a legend
 * of its two ends, printed as short as they still differ; labels are repeated in the cells cut to
 * ⌊1,048,576 / (rows × cols)⌋ characters, so a 256×256 heatmap stays under about 20 million
 * characters whatever the labels (it was 137 MB with 470-character labels).
 */
export function renderHeatmap(matrix: HeatmapMatrix, options?: HeatmapOptions): string;

/** Row-major: `number[][]`, or `{ data, shape: [rows, cols] }` as returned by `attention()`. */
export type HeatmapMatrix =
  | ArrayLike<number>[]
  | { data: Float32Array | Float64Array | ArrayLike<number>; shape: [rows: number, cols: number] };

/**
 * `true` (or 1) = this cell was masked out. Same shape as the matrix; or `"causal"`: query i sees
 * only keys j <= i (the cells right of the diagonal are masked), as `attention(..., { causal: true })`.
 */
export type HeatmapMask =
  | 'causal'
  | ArrayLike<boolean | 0 | 1>[]
  | { data: Uint8Array | ArrayLike<boolean | number>; shape: [rows: number, cols: number] };

/** What a `cellLabel` function is given for one cell. */
export interface HeatmapCell {
  /** Row (query) and column (key) index, from 0. */
  row: number;
  col: number;
  /** The value, full precision. */
  value: number;
  /** The cell is masked out (drawn hatched). */
  masked: boolean;
  /** The row and column labels as the cell shows them: XML-safe, cut to the cell budget, bidi-isolated. */
  rowLabel: string;
  colLabel: string;
  /** The value with max(4, decimals) decimals, never "-0.0000". */
  valueText: string;
  /** The default label, e.g. "吃 → 猫: 0.3157" (with "（已遮蔽）" / " (masked)" for a masked cell). */
  label: string;
}

export interface HeatmapOptions {
  /**
   * One label per row (query token). Default: "0", "1", ... Labels are escaped, and longer than
   * ~10em cut with "…" on the axis (full text in a <title>). In each cell's <title> and aria-label
   * a label is cut with "…" to ⌊1,048,576 / (rows × cols)⌋ characters: 16 at 256×256, 256 at
   * 64×64, 12,945 at 9×9.
   */
  rowLabels?: readonly string[];
  /** One label per column (key token). Default: "0", "1", ... */
  colLabels?: readonly string[];
  /** Shown above the heatmap and used as the root <title>. Default "注意力权重" / "Attention weights". */
  title?: string;
  /** Language of the axis captions and descriptions. Default "zh". */
  lang?: 'zh' | 'en';
  /** Decimals of the number printed in each cell (0–10). Default 2. Cell titles use max(4, decimals). */
  decimals?: number;
  /** Masked cells are drawn hatched, without a number, with `data-masked="true"`. */
  masked?: HeatmapMask;
  /**
   * `true` for a file on disk: adds an embedded <style> (CJK font stack, dark-mode colours) and a
   * background rect. Default `false`: no <style> element and no style="" attribute at all.
   */
  standalone?: boolean;
  /** Prefix of the ids (hatch pattern, legend gradient). Default: derived from the data. Set it when several heatmaps share a document. */
  idPrefix?: string;
  /** Lower end of the colour domain. Default 0 for values in [0, 1] (weights), else the data minimum (sequential) or -max|value| (diverging). */
  min?: number;
  /** Upper end of the colour domain. Default 1 for values in [0, 1], else the data maximum (sequential) or max|value| (diverging). */
  max?: number;
  /** "sequential" (viridis, for weights; default) or "diverging" (blue–white–red around 0, for raw scores). */
  scale?: 'sequential' | 'diverging';
  /**
   * How a sequential scale maps values to colours. 'unit' (the default): [0, 1] when every value
   * lies in it, else the data's range (min/max override). 'data': the range of the cells that are
   * not masked, so structure inside a narrow range shows. 'log': log10 from the smallest positive
   * unmasked value to the largest (cells <= 0 take the bottom colour; ticks at powers of ten).
   * With 'data' and 'log' the legend gets a caption naming the scale and its ends.
   */
  colourScale?: 'unit' | 'data' | 'log';
  /**
   * Draw the colour ramp with tick labels. Default true. Ticks are round steps (1, 2, 2.5, 5 × 10^k);
   * when those cannot be told apart (a domain below the precision of its numbers), the two ends.
   */
  legend?: boolean;
  /** Cell side in px (8–200). Default: 56 up to 9×9, then smaller, at least 14. */
  cellSize?: number;

  // Accessibility and interaction: what a page or widget needs, so that it inserts the SVG as it is.

  /**
   * The root's role, and with it the cells'. `"img"` (default): one image, described by its
   * <title> and <desc>. `"group"`: a labelled group whose cells are `role="img"`, each reachable
   * with its label. `"grid"`: an ARIA grid (`aria-rowcount`, `aria-colcount`) of
   * `<g role="row" aria-rowindex aria-label="row label">` rows of `role="gridcell"` cells with
   * `aria-colindex`; the drawn title, captions, labels and masked key are `aria-hidden`, since
   * every cell's label repeats them.
   */
  role?: 'img' | 'group' | 'grid';
  /**
   * Makes the cells keyboard-focusable with a roving tabindex: this cell `[row, col]` gets
   * `tabindex="0"`, every other `tabindex="-1"`, so the heatmap is one tab stop (the caller moves
   * the stop and the focus with the arrow keys). Each `<g class="cell-group">` then also carries
   * `data-row` and `data-col`, so that an event's target names its cell.
   */
  activeCell?: readonly [row: number, col: number];
  /**
   * With `activeCell`: draw a ring around that cell, above everything (`<g class="ring">` with
   * `rect.ring-outer` and `rect.ring-inner`; fill none, stroked in currentColor and white unless
   * page CSS says otherwise), for a page that moves it as the focus moves. Default false.
   */
  focusRing?: boolean;
  /**
   * Each cell's `aria-label` and `<title>`, from what it is given (see HeatmapCell). Default: the
   * cell's `label`, "吃 → 猫: 0.3157". Return plain text; it is escaped. Keep it short: it is
   * repeated in every cell.
   * @example (c) => `head 2 · ${c.label}`   or   (c) => `${c.rowLabel} · dim ${c.col}: ${c.valueText}`
   */
  cellLabel?: (cell: HeatmapCell) => string;
  /** The caption of the rows (drawn rotated, left of the row labels). Default "查询（谁在看）" / "query (who is looking)". */
  rowCaption?: string;
  /** The caption of the columns (drawn above them). Default "键（被看的词）" / "key (who is looked at)". */
  colCaption?: string;
  /** The root's <desc>. Default: how to read the heatmap, its colour domain and each row's largest value. */
  description?: string;
}


/**
 * Draw a matrix into a canvas or an OffscreenCanvas: for maps too large for an SVG (4,096 × 4,096
 * and beyond). The colour scales are renderHeatmap's (`scale`, `colourScale`, `min`, `max`: viridis
 * or blue–white–red, linear or log, the 0–1 / data range / given domain), as are the legend's ticks
 * and the matrix forms, checks and error messages (prefixed `drawHeatmap:`); there is no cell budget.
 *
 * The layout is in the canvas's own pixels (`canvas.width` × `canvas.height`; set them to the CSS
 * size × devicePixelRatio for a sharp map). With `legend: false` and no labels the map fills the
 * canvas: cell (i, j) of an n × m matrix covers x from j·W/m to (j+1)·W/m and y from i·H/n to
 * (i+1)·H/n. The legend (default on) takes a strip on the right; `rowLabels` / `colLabels` take a
 * margin on the left / top, but only when each row / column gets at least 12 pixels (else they are
 * not drawn and take no room).
 *
 * How cells become pixels, along each axis: with fewer cells than pixels, a pixel shows the cell
 * under its centre (blocks); with more, a pixel shows every cell it overlaps, reduced by `reduce`:
 * `'max'` (default: a lone high cell among zeros stays visible) or `'mean'`. Colours come from a
 * 256-entry table of the scale, so a pixel is within half a step (1/510 of the ramp) of the exact
 * colour; the map is one `putImageData`.
 *
 * A `{ data: Float32Array | Float64Array, shape }` matrix is read in place, not copied: one pass
 * checks it for NaN and ±Infinity and measures its range. The canvas must be 1 to 8,192 pixels a
 * side and at most 8,192 × 8,192 pixels in all (`RangeError` otherwise).
 *
 * @example
 * ```js
 * import { drawHeatmap } from 'attnmap/heatmap';
 *
 * const canvas = document.querySelector('canvas');
 * canvas.width = canvas.clientWidth * devicePixelRatio;
 * canvas.height = canvas.clientHeight * devicePixelRatio;
 * const map = result.map(layer, head);                      // { data: Float32Array, shape: [n, n] }
 * const drawn = drawHeatmap(canvas, map, { legend: false, colourScale: 'log' });
 *
 * canvas.addEventListener('pointermove', (e) => {
 *   const s = canvas.width / canvas.clientWidth;             // CSS pixels -> canvas pixels
 *   const cell = drawn.cellAt(e.offsetX * s, e.offsetY * s);  // { row, col, value } or null
 *   if (cell) tooltip.textContent = `${cell.row} → ${cell.col}: ${cell.value.toFixed(4)}`;
 * });
 *
 * // in a worker
 * const off = new OffscreenCanvas(1024, 1024);
 * drawHeatmap(off, map, { legend: false });
 * const png = await off.convertToBlob();
 * ```
 */
export function drawHeatmap(canvas: HeatmapCanvas, matrix: HeatmapMatrix, options?: DrawHeatmapOptions): DrawnHeatmap;

/**
 * What drawHeatmap draws into: an HTMLCanvasElement or an OffscreenCanvas (any object with integer
 * `width` and `height` and a `getContext('2d')` giving createImageData, putImageData and the text calls).
 */
export type HeatmapCanvas = {
  width: number;
  height: number;
  getContext(contextId: '2d'): unknown;
};

export interface DrawHeatmapOptions {
  /** As renderHeatmap's; the domain's ends and the legend's ticks are the same. */
  min?: number;
  max?: number;
  scale?: 'sequential' | 'diverging';
  colourScale?: 'unit' | 'data' | 'log';
  /** The colour ramp with ticks, in a strip right of the map. Default true: pass false for a map that fills the canvas. */
  legend?: boolean;
  /** One label per row, drawn left of the map when each row gets at least 12 pixels; cut at ~10em with "…". */
  rowLabels?: readonly string[];
  /** One label per column, drawn upright above the map when each column gets at least 12 pixels. */
  colLabels?: readonly string[];
  /** How the cells a pixel covers become its value when there are more cells than pixels. Default 'max'. */
  reduce?: 'max' | 'mean';
  /** Colour of the labels and ticks (a canvas has no currentColor). Default '#1f2328'. */
  textColour?: string;
}

/** What drawHeatmap returns: where the map is, and which cell is under a point (for hover). */
export interface DrawnHeatmap {
  rows: number;
  cols: number;
  /** The map's box in canvas pixels: the whole canvas without legend and labels. */
  plot: { x: number; y: number; width: number; height: number };
  /** The colour domain used. */
  domain: { min: number; max: number };
  /**
   * The cell under canvas point (x, y) (canvas pixels, fractions allowed: with more cells than
   * pixels, x + 0.5 picks inside a pixel), or null outside the map. `value` is read from the
   * matrix at the call: a matrix changed since the draw gives its new value.
   */
  cellAt(x: number, y: number): { row: number; col: number; value: number } | null;
}
