// budgets.js - what one heatmap, one element and one CLI call may draw, in one place: small
// input can never make huge output (README, "Budgets"; docs/EMBED.md).
export const MAX_CELLS = 65536;         // 256 × 256: beyond that an SVG is tens of megabytes
export const MAX_LABEL_CHARS = 16384;   // all tokens together (256 tokens of 64 characters)
export const CELL_TEXT = 1048576;       // tokens in cell tooltips are cut to CELL_TEXT / cells characters
// drawHeatmap: no cell budget (its cost is the canvas's pixels, and the matrix is the caller's);
// a canvas of at most 8,192 px a side and 8,192 × 8,192 pixels (256 MiB of RGBA) in all
export const MAX_CANVAS_SIDE = 8192;
export const MAX_CANVAS_PIXELS = 67108864;
