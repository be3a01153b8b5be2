// page-heads-strings.js - the words of the heads panel of the checkpoint section (web/page/page-heads.js,
// issue 37 item 5), in Chinese (default) and English: T.models.heads once page-strings.js has merged
// them. Layers and heads (l, h) come in as indices from 0 and are printed from 1, as in
// page-checkpoint-strings.js; token positions (i, j) are printed as they are, from 0, as the
// scores' definitions count them.

const zhNum = (n) => n.toLocaleString('zh-CN');
const enNum = (n) => n.toLocaleString('en-US');
const secs = (ms) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`);

export const zh = { models: { heads: {
  title: '每个头在做什么：长输入上的得分',
  intro: '对每一层的每一个头，模型一次前向就算出几个得分（不保存任何注意力图），按选中的得分从高到低排出最突出的头。' +
    '点一个缩略图，看这个头完整的注意力图。',
  textLabel: (cap) => `长文本（最多 ${zhNum(cap)} 个 token；留空则用上面的文本）`,
  run: '计算每个头的得分',
  induction: '检测归纳头',
  savePng: '把这张图保存为 PNG',
  sortLabel: '排序依据',
  sorts: {
    sink: '汇点（看第一个 token）',
    previous: '前一个 token',
    self: '自己',
    next: '后一个 token',
    entropy: '熵（注意力有多分散）',
    distance: '平均距离',
    induction: '归纳（重复时看上次的下一个）',
    duplicate: '重复（看上次的同一个）',
  },
  needRepeat: '“归纳”和“重复”需要一段重复的输入：点“检测归纳头”。',
  busy: '模型正在生成，等它结束再计算。',
  tooFew: '得分要至少 2 个 token（它们是第 1 行到最后一行的平均）。',
  computing: (n, off) => `正在计算 ${zhNum(n)} 个 token……${off ? '（在后台线程上运行，页面照常可用）' : '（在主线程上运行，页面可能会卡一会儿）'}`,
  computingInduction: (s) => `正在计算：${s} 个随机 token（种子 0）重复两次……`,
  drawing: (k, total) => `前向已完成；正在画注意力图 ${k} / ${total}……`,
  done: (n, forward, thumbs) => `${zhNum(n)} 个 token：前向 ${secs(forward)}，缩略图 ${secs(thumbs)}。`,
  doneInduction: (s, forward, thumbs) => `归纳头测试：${s} 个随机 token（种子 0）重复两次，共 ${2 * s} 个；前向 ${secs(forward)}，缩略图 ${secs(thumbs)}。`,
  cut: (n, cap) => `共有 ${zhNum(n)} 个 token，只用前 ${zhNum(cap)} 个（模型的上下文长度或 4,096）。`,
  gridTitle: (score) => `每层 × 每个头：${score}`,
  gridNote: (score) => `行是层，列是头，颜色是“${score}”得分（颜色范围取数据的最小到最大）。点一格打开这个头。`,
  rowCaption: '层',
  colCaption: '头',
  cellLabel: (l, h, score, v) => `层 ${l + 1} 的头 ${h + 1}：${score} = ${v}`,
  thumbsTitle: (k, score) => `按“${score}”排在最前的 ${k} 个头`,
  thumbLabel: (l, h, score, v) => `层 ${l + 1} 的头 ${h + 1}，${score} = ${v}：打开完整的注意力图`,
  thumbCaption: (l, h) => `层 ${l + 1} · 头 ${h + 1}`,
  layerShort: (l) => `层 ${l + 1}`,
  headShort: (h) => `头 ${h + 1}`,
  bigNote: (l, h, n) => `层 ${l + 1} 的头 ${h + 1}，${zhNum(n)} × ${zhNum(n)}。每行是一个 token 在看谁；像素比格子少时，一个像素显示它覆盖的格子里的最大值。`,
  hover: (i, j, a, b, v) => `第 ${i} 行（${a}）看第 ${j} 列（${b}）：${v}`,
  hoverHint: '把鼠标移到图上，看某一格的两个 token 和权重；下面是这一行的 token 在看谁（它附近的 token，和它最看重的 4 个，不论多远）。',
  nearTitle: (l, h, i, t) => `层 ${l + 1} · 头 ${h + 1}：第 ${i + 1} 个 token（${t}）看向谁`,
  zoom: (r0, c0, k, n) => (k === n ? `整张图（${zhNum(n)} × ${zhNum(n)}）。滚轮、双指或 + − 放大，拖动或方向键平移，0 回到整张图。`
    : `第 ${r0} – ${r0 + k - 1} 行 × 第 ${c0} – ${c0 + k - 1} 列（共 ${zhNum(n)}）。滚轮、双指或 + − 缩放，拖动或方向键平移，0 回到整张图。`),
} } };

export const en = { models: { heads: {
  title: 'What each head does: scores over a long input',
  intro: 'One forward pass gives every head of every layer a few scores (no attention map is kept), and the heads that stand out ' +
    'on the chosen score come first. Click a thumbnail to see that head\'s whole map.',
  textLabel: (cap) => `A long text (up to ${enNum(cap)} tokens; empty: the text above)`,
  run: 'Score every head',
  induction: 'Test for induction heads',
  savePng: 'Save this map as PNG',
  sortLabel: 'Order by',
  sorts: {
    sink: 'sink (looks at the first token)',
    previous: 'previous token',
    self: 'itself',
    next: 'next token',
    entropy: 'entropy (how spread out)',
    distance: 'mean distance',
    induction: 'induction (what came next last time)',
    duplicate: 'duplicate (the same token last time)',
  },
  needRepeat: '“Induction” and “duplicate” need a repeated input: press “Test for induction heads”.',
  busy: 'The model is generating: score the heads when it is done.',
  tooFew: 'The scores need at least 2 tokens (they are means over rows 1 to the last).',
  computing: (n, off) => `Computing ${enNum(n)} tokens… ${off ? '(in a background thread: the page stays usable)' : '(on the main thread: the page may pause for a moment)'}`,
  computingInduction: (s) => `Computing: ${s} random tokens (seed 0), repeated twice…`,
  drawing: (k, total) => `Forward done; drawing map ${k} of ${total}…`,
  done: (n, forward, thumbs) => `${enNum(n)} tokens: forward ${secs(forward)}, thumbnails ${secs(thumbs)}.`,
  doneInduction: (s, forward, thumbs) => `Induction test: ${s} random tokens (seed 0) repeated twice, ${2 * s} in all; forward ${secs(forward)}, thumbnails ${secs(thumbs)}.`,
  cut: (n, cap) => `The text has ${enNum(n)} tokens; the first ${enNum(cap)} are used (the model's context, or 4,096).`,
  gridTitle: (score) => `Every layer × head: ${score}`,
  gridNote: (score) => `Rows are layers, columns heads, the colour the “${score}” score (from the data's lowest to its highest). Click a cell to open that head.`,
  rowCaption: 'layer',
  colCaption: 'head',
  cellLabel: (l, h, score, v) => `Layer ${l + 1}, head ${h + 1}: ${score} = ${v}`,
  thumbsTitle: (k, score) => `The ${k} heads highest on “${score}”`,
  thumbLabel: (l, h, score, v) => `Layer ${l + 1}, head ${h + 1}, ${score} = ${v}: open its whole map`,
  thumbCaption: (l, h) => `L${l + 1} · H${h + 1}`,
  layerShort: (l) => `L${l + 1}`,
  headShort: (h) => `H${h + 1}`,
  bigNote: (l, h, n) => `Layer ${l + 1}, head ${h + 1}, ${enNum(n)} × ${enNum(n)}. Each row is where a token looks; where there are more cells than pixels, a pixel shows the largest cell it covers.`,
  hover: (i, j, a, b, v) => `Row ${i} (${a}) looks at column ${j} (${b}): ${v}`,
  hoverHint: 'Move the pointer over the map to see a cell\'s two tokens and its weight; below, where that row\'s token looks (its neighbours, and its 4 heaviest keys however far).',
  nearTitle: (l, h, i, t) => `L${l + 1} · H${h + 1}: where token ${i + 1} (${t}) looks`,
  zoom: (r0, c0, k, n) => (k === n ? `The whole map (${enNum(n)} × ${enNum(n)}). Wheel, pinch or + − to zoom, drag or the arrow keys to pan, 0 for the whole map.`
    : `Rows ${r0}–${r0 + k - 1} × columns ${c0}–${c0 + k - 1} (of ${enNum(n)}). Wheel, pinch or + − to zoom, drag or the arrow keys to pan, 0 for the whole map.`),
} } };
