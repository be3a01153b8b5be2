// strings/heatmap-scale.js - the renderer's words for colourScale 'data' and 'log' (web/heatmap/draw.js):
// the legend's caption and a sentence of the description. A module of its own, read only by
// statements labelled FULL_API, so that the one-file embed (which never sets colourScale) leaves it out.

export const zh = {
  legendScale: { data: (a, b) => `数据范围 ${a}–${b}`, log: (a, b) => `对数 ${a}–${b}` },
  scaleDesc: { data: '色标从数据的最小值到最大值。', log: '色标是对数刻度：每一格的颜色按 log₁₀（数值）排列。' },
};

export const en = {
  legendScale: { data: (a, b) => `data range ${a}–${b}`, log: (a, b) => `log ${a}–${b}` },
  scaleDesc: { data: ' The colours span the data\'s own range.', log: ' The colour scale is logarithmic: colours follow log₁₀ of the value.' },
};
