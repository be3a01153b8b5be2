// grid-keys.js - where a key moves the active cell of a rows × cols grid of cells (the WAI-ARIA grid
// keys), for the page's heatmaps and the element's. Pure: the caller moves the focus.

/**
 * The cell that `key` ("ArrowLeft", "Home", ...) moves to from (row, col), or null when the key
 * does not move. Arrows move one cell and stop at the edges; Home and End go to the first and last
 * column (with Ctrl, the first and last cell); PageUp and PageDown to the first and last row.
 */
export function gridKey(key, ctrlKey, row, col, rows, cols) {
  switch (key) {
    case 'ArrowLeft': return { row, col: Math.max(0, col - 1) };
    case 'ArrowRight': return { row, col: Math.min(cols - 1, col + 1) };
    case 'ArrowUp': return { row: Math.max(0, row - 1), col };
    case 'ArrowDown': return { row: Math.min(rows - 1, row + 1), col };
    case 'Home': return { row: ctrlKey ? 0 : row, col: 0 };
    case 'End': return { row: ctrlKey ? rows - 1 : row, col: cols - 1 };
    case 'PageUp': return { row: 0, col };
    case 'PageDown': return { row: rows - 1, col };
    default: return null;
  }
}
