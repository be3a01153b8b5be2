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

/** `true` (or 1) = this cell was masked out. Same shape as the matrix. */
export type HeatmapMask =
  | ArrayLike<boolean | 0 | 1>[]
  | { data: Uint8Array | ArrayLike<boolean | number>; shape: [rows: number, cols: number] };

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
   * Draw the colour ramp with tick labels. Default true. Ticks are round steps (1, 2, 2.5, 5 × 10^k);
   * when those cannot be told apart (a domain below the precision of its numbers), the two ends.
   */
  legend?: boolean;
  /** Cell side in px (8–200). Default: 56 up to 9×9, then smaller, at least 14. */
  cellSize?: number;
}
