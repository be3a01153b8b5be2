// page-scaling-strings.js - the words of the √d_k demo (web/page/page-scaling.js), in Chinese
// (default) and English: T.scaleTitle … T.scaleCode once page-strings.js has merged them.
// Trusted constants (they may hold markup, set with innerHTML); functions take numbers only.
import { QKT, SQRT_DK } from '../strings/page-math.js';
export const zh = {
  scaleTitle: `为什么要除以 ${SQRT_DK}？`,
  scaleText: '取 8 个查询和 8 个键，每一维都是独立的标准正态随机数（种子同上），看点积 ' + QKT + ' 怎样随维度 d_k 变化；为了让趋势稳定，每个 d_k 抽 64 组取平均。' +
    '点积是 d_k 个乘积之和，方差随 d_k 线性增长，标准差约为 √d_k。不缩放的话，分数之间的差距越来越大，softmax 把几乎全部权重都给最大的那一个（接近 one-hot）。' +
    '这时 softmax 的雅可比矩阵 diag(p) − pp<sup>T</sup> 整个趋近于 0，连得分最高的那一格也不例外：p 接近 0 或 1 的地方，p(1 − p) 都接近 0，梯度几乎传不回去——这就是论文 3.2.1 节说的“梯度极小的区域”。除以 √d_k 之后，标准差回到 1 左右，权重的分布不再随维度变化。',
  scaleHead: ['d_k', '分数的标准差', 'softmax(QKᵀ/√d_k)', 'softmax(QKᵀ) 不缩放'],
  scaleStd: (std, root) => `${std}（√d_k = ${root}）`,
  scaleAfter: (s) => `缩放后 ${s}`,
  scaleMax: (first, mean) => `最大 ${first}（64 组 × 8 行的最大值平均 ${mean}）`,
  scaleBars: (label, values) => `${label}：第 1 个查询对 8 个键的权重 ${values}`,
  scaleNote: '柱子是第 1 个查询对 8 个键的权重（8 根柱子加起来等于 1；每根都是 1/8 = 0.125 时最平均，一根是 1 时就是 one-hot）。' +
    '柱子来自第 1 组；括号里是 64 组、每组 8 个查询各自最大权重的平均，标准差也按 64 组的全部分数计算。分数和权重都由 C 核心计算；标准差和 PyTorch 的 <code>std()</code> 一样用无偏估计。',
  scaleCode: '用 PyTorch 复现这张表',
};

export const en = {
  scaleTitle: `Why divide by ${SQRT_DK}?`,
  scaleText: 'Take 8 queries and 8 keys whose entries are independent standard normal numbers (same seed as above), and watch the dot products ' + QKT + ' as the width d_k grows; for a steady trend, each d_k averages 64 such draws. ' +
    'A dot product is a sum of d_k products, so its variance grows linearly with d_k and its standard deviation is about √d_k. Unscaled, the gaps between scores keep growing and the softmax gives almost all the weight to the largest one (nearly one-hot). ' +
    'Then the softmax\'s whole Jacobian diag(p) − pp<sup>T</sup> goes to 0, the winning entry included: where p is near 0 or near 1, p(1 − p) is near 0, and hardly any gradient flows back: the “regions where it has extremely small gradients” of section 3.2.1 of the paper. Divided by √d_k, the standard deviation is back near 1 and the weights no longer depend on the width.',
  scaleHead: ['d_k', 'std of the scores', 'softmax(QKᵀ/√d_k)', 'softmax(QKᵀ), unscaled'],
  scaleStd: (std, root) => `${std} (√d_k = ${root})`,
  scaleAfter: (s) => `scaled ${s}`,
  scaleMax: (first, mean) => `max ${first} (mean of the row maxima over 64 draws × 8 rows: ${mean})`,
  scaleBars: (label, values) => `${label}: weights of the first query over 8 keys ${values}`,
  scaleNote: 'The bars are the first query\'s weights over the 8 keys (they sum to 1; all at 1/8 = 0.125 is perfectly even, a single 1 is one-hot). ' +
    'The bars come from the first draw; in brackets, the largest weight of each of the 8 queries, averaged over all 64 draws, and the standard deviation is over the scores of all 64 draws. Scores and weights come from the C core; the standard deviation is the unbiased one, like PyTorch\'s <code>std()</code>.',
  scaleCode: 'Reproduce this table in PyTorch',
};
