// svg.js - renderHeatmap, the SVG renderer (heatmap.js's header says what it draws and why).
// A module of its own so that the element, which draws SVG only, never loads the canvas code.
import { describe, readMatrix, readOptions } from './read.js';
import { draw } from './draw.js';

const OPTION_KEYS = ['rowLabels', 'colLabels', 'title', 'lang', 'decimals', 'masked', 'standalone',
  'idPrefix', 'min', 'max', 'scale', 'colourScale', 'legend', 'cellSize',
  'role', 'activeCell', 'focusRing', 'cellLabel', 'rowCaption', 'colCaption', 'description'];

/**
 * Render a matrix (rows = queries, columns = keys) as an SVG string. See heatmap.d.ts.
 * @param {number[][] | {data: ArrayLike<number>, shape: [number, number]}} matrix
 * @param {object} [options]
 * @returns {string}
 */
export function renderHeatmap(matrix, options = {}) {
  FULL_API: checkOptionsObject(options);         // the element's options are an object of known keys
  const { rows, cols, values } = readMatrix(matrix);
  const o = readOptions(options, rows, cols, values);
  return draw(rows, cols, values, o);
}

function checkOptionsObject(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`renderHeatmap: options must be an object; received ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.includes(key)) {
      throw new TypeError(`renderHeatmap: unknown option "${key}"; expected one of ${OPTION_KEYS.join(', ')}`);
    }
  }
}
