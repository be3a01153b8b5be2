// strings/heatmap.js - the words of the SVG heatmap (web/heatmap/), in Chinese and English.
// Plain text: the renderer escapes it. Functions take numbers and already-escaped-safe text only.

export const zh = {
  htmlLang: 'zh-CN',
  title: '注意力权重',
  rows: '查询（谁在看）',
  cols: '键（被看的词）',
  masked: '已遮蔽',
  maskedWeight: '已遮蔽（权重为 0）',
  maskedCell: '（已遮蔽）',
  size: (r, c) => `（${r}×${c}）`,
  desc: (seq) => '行是查询（谁在看），列是键（被看的词），每个格子是这一行的词分给这一列的词的注意力。' +
    (seq ? '颜色越亮（黄）数值越大，越暗（紫）数值越小。' : '蓝色为负，红色为正，越接近白色越接近 0。'),
  domain: (a, b) => `色标范围 ${a} 到 ${b}。`,
  rowMax: '每行最大值：',
  sep: '；',
  end: '。',
  maskedCount: (k) => `有 ${k} 个格子被遮蔽（斜线）。`,
};

export const en = {
  htmlLang: 'en',
  title: 'Attention weights',
  rows: 'query (who is looking)',
  cols: 'key (who is looked at)',
  masked: 'masked',
  maskedWeight: 'masked (weight 0)',
  maskedCell: ' (masked)',
  size: (r, c) => ` (${r}×${c})`,
  desc: (seq) => 'Rows are queries (who is looking), columns are keys (who is looked at); each cell is how much the row token attends to the column token. ' +
    (seq ? 'Brighter (yellow) means larger, darker (purple) means smaller.' : 'Blue is negative, red is positive, white is near 0.'),
  domain: (a, b) => ` Colour scale from ${a} to ${b}.`,
  rowMax: ' Largest value in each row: ',
  sep: '; ',
  end: '.',
  maskedCount: (k) => ` ${k} cells are masked (hatched).`,
};
