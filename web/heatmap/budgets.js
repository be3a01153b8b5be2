// budgets.js - what one heatmap, one element and one CLI call may draw, in one place: small
// input can never make huge output (README, "Budgets"; docs/EMBED.md).
export const MAX_CELLS = 65536;         // 256 × 256: beyond that an SVG is tens of megabytes
export const MAX_LABEL_CHARS = 16384;   // all tokens together (256 tokens of 64 characters)
export const CELL_TEXT = 1048576;       // tokens in cell tooltips are cut to CELL_TEXT / cells characters
