// Types for attnmap/head-view: BertViz's head view as an SVG string (web/heatmap/head-view.js).
// A subpath of its own, so that attnmap/heatmap (which the element loads) stays as small as it was.
import type { HeatmapMatrix } from './heatmap.js';

/**
 * One layer's heads as BertViz's head view: the tokens in two columns (left: queries, right:
 * keys) and a line from each query to each key it attends to, its opacity the weight, a colour
 * per head. An SVG string, like renderHeatmap: no DOM, CSP-safe, the same for the same input.
 * Each token is a focusable `<g role="button" data-side data-index>`; each line carries
 * data-head, data-row, data-col and data-value.
 *
 * `maps` takes a layer of attnmap/model's `forward(ids, { attention })` as it is: a null entry
 * is a head that was not computed (`{ attention: { heads } }`). It is not drawn; the other heads
 * keep their index, label and colour, and the description lists the heads drawn. Throws a
 * TypeError when every entry is null, and a TypeError or RangeError for matrices and options that
 * are not as described here, as renderHeatmap does.
 * @example
 * renderHeadView([map0, map1], { tokens: ['猫', '吃', '鱼'], heads: [0, 1], focus: { side: 'query', index: 1 } });
 * const { attention } = model.forward(ids, { attention: { layers: [1], heads: [0, 3] } });
 * renderHeadView(attention[1], { tokens: model.tokens(ids) });   // heads 0 and 3, in their colours
 */
export function renderHeadView(maps: readonly (HeatmapMatrix | null)[], options?: HeadViewOptions): string;

/** The head colours used when options.colours is not given (cycled past ten heads). */
export const HEAD_COLOURS: readonly string[];

export interface HeadViewOptions {
  /** n token labels (default 1 … n). */
  tokens?: readonly string[];
  /** A label per map, null ones included, used in data-head, hidden and the description (default 0 … H − 1). */
  heads?: readonly (string | number)[];
  /** Labels of heads not drawn. */
  hidden?: readonly (string | number)[];
  /** Only the lines of this token: the query's outgoing lines, or the key's incoming ones. */
  focus?: { side: 'query' | 'key'; index: number } | null;
  /** A CSS colour per map, null ones included. */
  colours?: readonly string[];
  lang?: 'zh' | 'en';
  title?: string;
  /** Lines with a weight ≤ min are left out (default 0). */
  min?: number;
  /** Prefix of the ids inside the SVG (default 'hv'). */
  idPrefix?: string;
}
