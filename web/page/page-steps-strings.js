// page-steps-strings.js - the words of the four steps (web/page/page-steps.js: X, W, Q K V, ①–④,
// the article's section 5) and of step ④'s picture and the formula bar (page-step4.js), in Chinese
// (default) and English. page-strings.js merges them into the page's strings (T), where the
// section reads them: T.stepXTitle …, T.teach.formula, T.teach.step4.
// Trusted constants (they may hold markup, set with innerHTML); functions take numbers only.
import { QKT, DK, SQRT_DK } from '../strings/page-math.js';
export const zh = {
  stepXTitle: '第 0 步 · 输入 X',
  stepXText: '每个词一行：它经过 Embedding 和位置编码（EP03、EP04）之后的 8 维向量，d_model = 8。和文章的代码一样，这里默认用 <code>torch.randn</code> 代替；在上面的「Embedding + 位置编码」里换成 E[词] + PE。' +
    '<b>表里的数都可以改</b>：改完按 Enter 或离开这一格，后面每一步立刻重算。' +
    '本页的文字和表格都从 1 开始数（第 1 个词、第 1 维、头 1、层 1），只有 Python 代码和公式里的下标从 0 开始：表里第 1 行、第 1 列的数就是代码里的 <code>X[0, 0]</code>。',
  xRandom: (n, seed) => `X = torch.randn(${n}, 8)，种子 ${seed}。`,
  xEdited: 'X 已被你修改，链接里会带上它。',
  resetX: '恢复随机 X',
  xError: '这个数用不了。C 核心的检查结果：',
  xCellLabel: (i, j) => `第 ${i + 1} 个词，第 ${j + 1} 维`,

  stepWTitle: `三个投影矩阵 W<sub>Q</sub>、W<sub>K</sub>、W<sub>V</sub>`,
  stepWText: 'Q、K、V 不是三种不同的输入：它们来自同一个 X，只是乘了三个不同的矩阵，形状都是 d_model × d_k。' +
    '训练之前它们是随机的（nn.Linear 的默认初始化：每个数均匀分布在 ±1/√d_model = ±0.3536 之间），训练会不断调整它们——模型就是这样学会怎么提问、怎么被检索、交出什么信息。',
  stepQKVTitle: `Q = X·W<sub>Q</sub>，K = X·W<sub>K</sub>，V = X·W<sub>V</sub>`,
  stepQKVText: '每个词得到三个向量。用文章里 SQL 的比喻：Query 是“我想找什么”的查询条件，Key 是每一行拿出来被检索的索引字段，Value 是这一行真正的数据。',
  step1Title: `① 算相似度：${QKT}`,
  step1Text: '第 i 行第 j 列，是第 i 个词的 Query 和第 j 个词的 Key 的点积，越大越匹配。和 SQL 的精确匹配不同，每一对词都有一个连续的分数。',
  step2Title: `② 缩放：÷ ${SQRT_DK}`,
  step2Text: (dk, root) => `d_k = ${dk}，√${dk} = ${root}。维度越高，点积越大；除以 √d_k 把数值拉回合理区间，softmax 才不会变成“非 0 即 1”（见下面的演示）。`,
  step2Causal: '开启了因果遮蔽：每个词后面的位置在 softmax 之前被换成 −∞（灰色）。',
  step3Title: '③ 归一化：softmax',
  step3Text: '对每一行做 softmax(s)<sub>j</sub> = e<sup>s<sub>j</sub></sup> ÷ Σ<sub>k</sub> e<sup>s<sub>k</sub></sup>：每个数都变成正数，并且一行加起来等于 1。这就是热力图里的数；最右一列是每行的和。',
  rowSum: '行和',
  outputName: '输出',
  step4Title: '④ 加权求和：输出 = 权重 · V',
  step4Text: '每个词的输出，是所有词的 Value 按这一行的权重混合。SQL 的 JOIN 没有分数：条件相等就命中、整行返回，不相等就没有；注意力则是“每个都要一点”，匹配度越高，拿得越多。输出的每一行，就是这个词“看过”整句话之后的新向量。',
  step4Example: ['「', '」的输出 = '],
  step4Follow: '（跟随热力图里选中的行）',

  sec5Title: `对照文章第五节的手算（${DK} = 4）`,
  sec5Text: '为了方便手算，文章把维度简化成 d_k = 4，直接给出了三个词的 Query 和 Key。把这两张表原样交给 C 核心（<code>attn.attention</code>，V 取单位矩阵，所以输出就是权重）：',
  sec5Hint: '把鼠标移到格子上（或用 Tab 和方向键），看每一格的算式。',
  sec5Row: '「吃」这一行',
  sec5Article: '文章里的数（示意）',
  sec5True: 'C 核心算出的真实值',
  sec5Note: (a, b, c) => `文章里的 0.30 / 0.42 / 0.28 只是示意（原文也写了“这组数字只是示意”）。用文中给的 Q、K 真算一遍，「吃」这一行是 <b>${a} / ${b} / ${c}</b>：` +
    '吃·猫 和 吃·鱼 的点积都是 0.37，所以看猫和看鱼的权重相同；吃·吃 = 0.68 最大，所以看自己最多。结论和文章一致：「吃」大约三成看「猫」，三成看「鱼」，剩下的留给自己。',
  heatmapTitle5: '第五节：softmax(QKᵀ/√4)',
  teach: {
    formula: {
      label: '公式：点一部分跳到对应的步骤',
      steps: ['① 算相似度 QKᵀ', '② 缩放 ÷ √d_k', '③ 归一化 softmax', '④ 加权求和 × V'],
      idle: '向下滚动，跟着公式走完四步',
    },
    step4: {
      title: (tok) => `「${tok}」的输出 = 各个词的 V 按权重缩放后相加`,
      desc: (k, dk) => `${k} 条 V 向量（每条 ${dk} 维），每条先乘以自己的权重，再逐维相加成输出向量。`,
      output: '输出',
      key: '空心的柱子是 V 原来的值，实心的是乘上权重之后的值；所有实心柱子逐维相加，就是最下面的输出（C 核心算出的）。在上面的热力图里换一行，这张图跟着变。',
    },
  },
};

export const en = {
  stepXTitle: 'Step 0 · The input X',
  stepXText: 'One row per token: its 8-dimensional vector after Embedding and Positional Encoding (episodes 03 and 04), d_model = 8. As in the episode\'s code, <code>torch.randn</code> stands in for them, unless you pick “Embedding + positions” above: then X = E[token] + PE. ' +
    '<b>Every number in the table can be edited</b>: press Enter or leave the cell, and every step below is recomputed. ' +
    'The page\'s text and tables count from 1 (token 1, dimension 1, head 1, layer 1); only the indices in the Python code and the formulas count from 0: row 1, column 1 of the table is <code>X[0, 0]</code> in the code.',
  xRandom: (n, seed) => `X = torch.randn(${n}, 8), seed ${seed}.`,
  xEdited: 'You edited X; the link carries your values.',
  resetX: 'Back to random X',
  xError: 'This value cannot be used. The C core\'s check says:',
  xCellLabel: (i, j) => `token ${i + 1}, dimension ${j + 1}`,

  stepWTitle: 'The three projections W<sub>Q</sub>, W<sub>K</sub>, W<sub>V</sub>',
  stepWText: 'Q, K and V are not three different inputs: they all come from the same X, multiplied by three different matrices of shape d_model × d_k. ' +
    'Before training they are random (nn.Linear\'s default initialisation: uniform between ±1/√d_model = ±0.3536); training keeps adjusting them, and that is how the model learns what to ask, how to be found and what to hand over.',
  stepQKVTitle: 'Q = X·W<sub>Q</sub>, K = X·W<sub>K</sub>, V = X·W<sub>V</sub>',
  stepQKVText: 'Every token gets three vectors. In the episode\'s SQL analogy, the Query is the search condition (“what am I looking for”), the Key is the indexed column each row offers, and the Value is the row\'s actual data.',
  step1Title: `① Similarity: ${QKT}`,
  step1Text: 'Row i, column j is the dot product of token i\'s query with token j\'s key: the larger, the better the match. Unlike an exact SQL match, every pair of tokens gets a continuous score.',
  step2Title: `② Scale: ÷ ${SQRT_DK}`,
  step2Text: (dk, root) => `d_k = ${dk}, √${dk} = ${root}. The wider the vectors, the larger the dot products; dividing by √d_k brings them back to a sensible range so that the softmax does not turn all-or-nothing (see the demonstration below).`,
  step2Causal: 'The causal mask is on: positions after each token are replaced by −∞ before the softmax (grey).',
  step3Title: '③ Normalise: softmax',
  step3Text: 'Each row goes through softmax(s)<sub>j</sub> = e<sup>s<sub>j</sub></sup> ÷ Σ<sub>k</sub> e<sup>s<sub>k</sub></sup>: every number becomes positive and each row sums to 1. These are the numbers in the heatmap; the last column is each row\'s sum.',
  rowSum: 'row sum',
  outputName: 'output',
  step4Title: '④ Weighted sum: output = weights · V',
  step4Text: 'Each token\'s output mixes the values of all tokens in the proportions of its row. A SQL JOIN has no scores: a row either matches the condition exactly and comes back whole, or it does not come back at all; attention takes “a little of each”, more of the better matches. Each output row is the token\'s new vector after it has looked at the whole sentence.',
  step4Example: ['Output of ', ' = '],
  step4Follow: ' (follows the row selected in the heatmap)',

  sec5Title: `The hand calculation of section 5 (${DK} = 4)`,
  sec5Text: 'To keep the arithmetic small, the episode shrinks the width to d_k = 4 and gives the queries and keys of the three tokens directly. Here are those two tables, handed to the C core unchanged (<code>attn.attention</code>, with V the identity so that the output is the weights):',
  sec5Hint: 'Hover a cell (or use Tab and the arrow keys) to see its arithmetic.',
  sec5Row: 'the row of 吃',
  sec5Article: 'in the article (illustrative)',
  sec5True: 'computed by the C core',
  sec5Note: (a, b, c) => `The article's 0.30 / 0.42 / 0.28 are only illustrative (the text says so: “这组数字只是示意”). Computed from the article's own Q and K, the row of 吃 is <b>${a} / ${b} / ${c}</b>: ` +
    '吃·猫 and 吃·鱼 are both 0.37, so the cat and the fish get the same weight; 吃·吃 = 0.68 is the largest, so 吃 looks at itself most. The conclusion stands: 吃 gives about a third of its attention to 猫, a third to 鱼, and keeps the rest for itself.',
  heatmapTitle5: 'Section 5: softmax(QKᵀ/√4)',
  teach: {
    formula: {
      label: 'The formula: a part links to its step',
      steps: ['① similarity QKᵀ', '② scale ÷ √d_k', '③ normalise: softmax', '④ weighted sum × V'],
      idle: 'Scroll down and follow the formula through the four steps',
    },
    step4: {
      title: (tok) => `The output of ${tok} = the values V, each scaled by its weight, added up`,
      desc: (k, dk) => `${k} value vectors of ${dk} numbers each; each is multiplied by its weight, and they are added dimension by dimension into the output vector.`,
      output: 'output',
      key: 'Outlined bars: V as it is; filled bars: V times its weight. The filled bars, added dimension by dimension, make the output at the bottom (computed by the C core). Pick another row in the heatmap above and the picture follows.',
    },
  },
};
