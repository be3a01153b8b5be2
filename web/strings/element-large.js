// strings/element-large.js - the words of <attention-heatmap>'s map over 256 tokens, drawn on a
// canvas (web/model/element-canvas.js, which loads with the model code): a module of its own, so
// that neither the one-file embed nor the element's module path loads them for a small map.
// Rows and columns count from 0, as the element's layer and head do.
export const large = {
  zh: {
    label: (layer, head, n) => `第 ${layer} 层 · 头 ${head}：${n} × ${n} 的注意力图，每行是一个 token 在看谁`,
    hint: '把鼠标移到图上，看某一格的两个 token 和权重。',
    hover: (i, j, a, b, v) => `第 ${i} 行（${a}）看第 ${j} 列（${b}）：${v}`,
    view: (r0, c0, k, n) => `${k === n ? `整张图（${n} × ${n}）` : `第 ${r0} – ${r0 + k - 1} 行 × 第 ${c0} – ${c0 + k - 1} 列（共 ${n}）`}。` +
      '滚轮、双指或 + − 缩放，拖动或方向键平移，0 回到整张图。',
    png: 'PNG', pngTitle: '把画布上的图保存为 PNG 文件',
  },
  en: {
    label: (layer, head, n) => `layer ${layer} · head ${head}: the ${n} × ${n} attention map, each row where a token looks`,
    hint: 'Move the pointer over the map to see a cell\'s two tokens and its weight.',
    hover: (i, j, a, b, v) => `Row ${i} (${a}) looks at column ${j} (${b}): ${v}`,
    view: (r0, c0, k, n) => `${k === n ? `The whole map (${n} × ${n})` : `Rows ${r0}–${r0 + k - 1} × columns ${c0}–${c0 + k - 1} (of ${n})`}. ` +
      'Wheel, pinch or + − to zoom, drag or the arrow keys to pan, 0 for the whole map.',
    png: 'PNG', pngTitle: 'Save the map on the canvas as a PNG file',
  },
};
