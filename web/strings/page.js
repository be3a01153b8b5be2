// strings/page.js - every text of the page (index.html, web/page/), in Chinese (default) and English.
//
// Strings are trusted constants written here, and may hold markup (<code>, <sub>, <b>): the page
// puts them in with innerHTML. Functions take numbers only. Tokens are user input and never pass
// through this file: the page inserts them with textContent.

const M = (s) => `<span class="m">${s}</span>`;
const QKT = M('QK<sup>T</sup>');
const DK = M('d<sub>k</sub>');
const SQRT_DK = M('√d<sub>k</sub>');

export const zh = {
  htmlLang: 'zh-CN',
  docTitle: '自注意力 · 猫吃鱼 — 从零手写大模型 EP05',
  langButton: 'English',
  langButtonLang: 'en',
  langButtonLabel: 'Switch to English',
  kicker: '从零手写大模型 · 推理篇 05 · <span class="nw">Self-Attention</span>',
  title: '自注意力：「吃」在看谁？',
  lede: '自注意力让句子里的每个词去“看”所有的词，按匹配程度把它们的信息混合起来。热力图的<b>行</b>是正在看的词（Query），<b>列</b>是被看的词（Key），每一格是注意力权重，每一行加起来等于 1。',
  coreNote: '页面上的每个数都由 C 写的注意力核心（编译成 WebAssembly）在你的浏览器里算出，不联网也能用。',

  tokensLabel: '句子（词之间用空格隔开，1 到 16 个）',
  seedLabel: '随机种子',
  seedNew: '换一个',
  seedNewLabel: '随机换一个种子',
  dkLabel: `${DK}（Q、K、V 的宽度）`,
  causalLabel: '因果遮蔽：只看自己和前面的词',
  reset: '恢复默认',
  tokenErrors: {
    empty: () => '至少要有 1 个词。',
    tooMany: (n) => `最多 16 个词，现在是 ${n} 个。下面保持上一次的结果。`,
    tooLong: () => '每个词最多 24 个字符。',
    badChar: () => '词里不能有控制字符。',
  },
  seedError: '种子要是 0 到 4294967295 之间的整数。',

  heatmapTitle: (seed, dk, causal) => `注意力权重 softmax(QKᵀ/√${dk}) · 种子 ${seed}${causal ? ' · 因果遮蔽' : ''}`,
  sourceNote: (seed, dk, edited, embed, pe) => `权重来自文章第六节的代码，前面加一行 <code>torch.manual_seed(${seed})</code>（d_model = 8，d_k = ${dk}）` +
    (!embed ? '' : pe ? '，X = E[词] + PE（见「Embedding + 位置编码」）' : '，X = E[词]，没有位置编码（见「Embedding + 位置编码」）') + (edited ? '，X 换成了你改过的值' : '') + '。<a href="#reproduce">下面有可以直接运行的 Python 代码</a>，得到的数和这里一样。',
  exportSvg: '导出 SVG',
  exportPng: '导出 PNG',
  copyLink: '复制链接',
  linkCopied: '链接已复制：打开它会看到和现在一模一样的页面。',
  copyFailed: '浏览器不让访问剪贴板，请直接复制地址栏里的网址。',
  exportFailed: '导出失败：',

  explainTitle: '这一格是怎么算出来的',
  explainHint: '把鼠标移到格子上，或按 Tab 进入热力图后用方向键移动。',
  // the explanation's own steps are marked (a)–(e): ①–④ are the four steps' headings (issue 24)
  ex: {
    looks: ['「', '」看「', '」'],
    dot: '(a) 点积',
    scale: '(b) 除以 √d_k',
    scaleHead: '(b) 除以 √d_head',
    exp: '(c) 取指数',
    sum: '(d) 这一行的 exp 之和',
    weight: '(e) 权重 = exp ÷ 行和',
    core: 'C 核心',
    terms: (k) => `（共 ${k} 项，中间省略）`,
    masked: '因果遮蔽：这个词不能看排在它后面的词。这一格的分数在 softmax 之前被换成 −∞，e^(−∞) = 0，所以权重正好是 0，也不计入行和。',
    maskedPart: '（已遮蔽的格子不计入）',
    stable: (m) => `分数很大，为了不溢出，先减去这一行的最大值 m = ${m} 再取指数（C 核心也这么做），比值不变。`,
    summary: (dot, scaled, w) => `点积 ${dot}，缩放后 ${scaled}，权重 ${w}`,
    summaryMasked: '已遮蔽，权重 0',
  },

  reproTitle: '用 PyTorch 复现这些数字',
  reproText: '这就是文章第六节的代码，只在前面加了 <code>torch.manual_seed(…)</code>，并按你在本页的设置填好了词数、' + DK + '、遮蔽和 X。' +
    '页面用 JavaScript 逐位复现了 PyTorch 的随机数生成器（Mersenne Twister 和 nn.Linear 的初始化），所以 X 和三个 W 与 PyTorch 完全相同；' +
    '后面的计算由 C 核心完成，和 PyTorch 的 float32 结果只差最后一两位（约 10<sup>−7</sup>，因为加法顺序不同）。',
  copyCode: '复制代码',
  codeCopied: '已复制',

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

  mhaKicker: '第六期预告',
  mhaTitle: '多头注意力：同时开几个“脑袋”',
  mhaText: '文章最后留了一个问题：一组 W<sub>Q</sub>、W<sub>K</sub>、W<sub>V</sub> 只能学会<b>一种</b>关注模式。多头注意力的做法是把 d_model = 8 维分成几份：' +
    '每个头只用 W<sub>Q</sub>、W<sub>K</sub>、W<sub>V</sub> 里属于自己的 <b>d_head = d_model ÷ 头数</b> 列（论文里每个头的 d_k 就是它），在这个更窄的子空间里各自做一遍上面的四步——' +
    '缩放用 √d_head，<b>softmax 每个头分别做</b>，所以每个头有自己的一张热力图，每一行照样加起来等于 1。' +
    '然后把各个头的输出按列<b>拼接</b>回 (n, d_model)，再乘一个输出矩阵 <b>W<sub>O</sub></b>，把各个头看到的东西混合起来。总宽度不变，计算量也差不多，只是同样的 8 维分给了几个“脑袋”。',
  mhaHeadsLabel: '头数',
  mhaError: '用这个 X 算不了多头注意力（上面的第五期部分不受影响）。C 核心的检查结果：',
  mhaSetup: (n, heads, dHead, seed, causal, dk) => `${heads} 个头，每个头 d_head = 8 ÷ ${heads} = ${dHead}。` +
    `${n} 个词、种子 ${seed}${causal ? '、因果遮蔽' : ' '}和 X 都跟随页面上方的设置；` +
    (dk === 8 ? 'W<sub>Q</sub>、W<sub>K</sub>、W<sub>V</sub> 就是上面那三个 8 × 8 矩阵。'
      : `上面选的 d_k = ${dk} 只影响第五期的部分，这里的 W<sub>Q</sub>、W<sub>K</sub>、W<sub>V</sub> 都是 8 × 8（d_k = 8 时它们就是上面那三个）。`),
  mhaHead: (k, dHead) => `头 ${k} · d_head = ${dHead}`,
  mhaHeadCols: (a, b) => `用 W<sub>Q</sub>、W<sub>K</sub>、W<sub>V</sub> 的第 ${a === b ? a : `${a}–${b}`} 列`,
  mhaGroup: (k, short) => (short ? `头${k}` : `头 ${k}`),
  mhaExplainHint: '把鼠标移到任意一个头的格子上，或按 Tab 进入热力图后用方向键移动。每个头的点积只有 d_head 项，除以的是 √d_head。',
  mhaOne: '只有 1 个头时 d_head = 8：这张热力图和页面最上面的那张相同（d_k = 8 时），多头注意力就是第五期的自注意力，最后多乘一个 W<sub>O</sub>。',
  mhaConcatTitle: '拼接，再乘 W<sub>O</sub>',
  mhaConcatText: '每个头输出一个 (n, d_head) 的矩阵：它自己的权重乘它自己那几列的 V。把各个头的输出按顺序左右拼起来，就回到了 (n, d_model)——下面“拼接”表里每一段就是一个头的输出。' +
    'W<sub>O</sub> 的第 j 行乘的正是拼接的第 j 列，所以它的行也按头分段。',
  mhaConcatName: '拼接',
  mhaOutputText: '输出 = 拼接 · W<sub>O</sub>，形状 (n, 8) · (8, 8) = (n, 8)，和输入 X 一样宽，可以接着送进下一层。W<sub>O</sub> 和另外三个矩阵一样随机初始化、靠训练学习；有了它，每个输出维度都能用上所有头的结果。',
  mhaCodeTitle: '用 PyTorch 复现多头注意力',
  mhaCodeText: '四个矩阵按下面的顺序从种子抽取：先是第五期代码里的 X 和三个 <code>nn.Linear(8, 8, bias=False)</code>（d_k = 8），再多抽一个 <code>nn.Linear(8, 8, bias=False)</code> 作为 W<sub>O</sub>。' +
    '代码只用最基本的张量运算，用 <code>.view</code> 和 <code>.transpose</code> 拆出各个头；它打印的数和本页相同（在 PyTorch 1.13 上验证过，也和 PyTorch 自带的 <code>F.multi_head_attention_forward</code> 一致）。',

  footer: 'attnmap · 页面上的每个数都由 c_src/attention.c 编译成的 WebAssembly 计算 · 不联网、直接双击打开也能用',
  fatal: 'WebAssembly 核心加载失败：',
  // issue 14: messages about X name the token and the dimension (the token goes between the two
  // parts, as text); the core's own message follows as a detail
  xBad: {
    nan: (j) => ['「', `」的第 ${j + 1} 维不是一个有限的数（NaN 和无穷大都不行）。`],
    range: (j, v) => ['「', `」的第 ${j + 1} 维是 ${v}，超出了 float32 的范围（约 ±3.4×10^38）。`],
    overflow: (j, v) => ['「', `」的第 ${j + 1} 维是 ${v}：X 的数太大，Q·Kᵀ 的分数超出了 float32 的范围。`],
    other: (code) => ['', `C 核心拒绝了这个 X（${code}）。`],
  },
  xTyped: '这个数没有用上，表格保持上一次的 X：',
  xLink: '链接里的 X 没有用上，页面改用了随机的 X：',
  xDropped: '你改过的 X 在现在的设置下算不了，页面改用了随机的 X：',
  coreSaid: 'C 核心的原话：',
  // a link with fields the page could not use: [before, after] around the link's own text
  linkNote: '链接里有些设置用不了，已经忽略，其余照常使用：',
  linkNoteClose: '知道了',
  linkNoteCloseLabel: '关闭这条提示',
  linkIgnored: {
    t: {
      tooMany: (n) => [`${n} 个词（最多 16 个）`, ''],
      empty: () => ['词（是空的）', ''],
      tooLong: () => ['词“', '”（每个词最多 24 个字符）'],
      badChar: () => ['词（含有控制字符）', ''],
      space: () => ['词“', '”（一个词里不能有空格）'],
    },
    seed: ['种子“', '”（要是 0 到 4294967295 的整数）'],
    dk: ['d_k“', '”（只能是 2、4、8、16、32、64）'],
    causal: ['遮蔽“', '”（只能是 0 或 1）'],
    heads: ['头数“', '”（只能是 1、2、4、8）'],
    lang: ['语言“', '”（只能是 zh 或 en）'],
    x: {
      long: () => ['X（太长）', ''],
      shape: (rows, count) => [`X（应该是 ${rows} 行、每行 8 个数，链接里是 ${count} 行）`, ''],
      value: () => ['X（有的值不是数，或超出 float32 的范围）', ''],
    },
    unknown: ['不认识的字段“', '”'],
    sep: '；',
    end: '。',
  },
  exportDark: '导出深色版',
  mapScrolls: '图比屏幕宽：左右滑动查看整张图 →',
  tableScrolls: '表比屏幕宽：左右滑动查看整张表 →',
  mapValuesHidden: '格子太小，不显示数值：把鼠标移到格子上，或按 Tab 进入后用方向键查看。',
  matrixShape: (name, r, c) => `${name}（${r} × ${c}）`,
};

export const en = {
  htmlLang: 'en',
  docTitle: 'Self-attention · 猫吃鱼 — Writing an LLM from scratch, EP05',
  langButton: '中文',
  langButtonLang: 'zh-CN',
  langButtonLabel: '切换到中文',
  kicker: 'Writing an LLM from scratch · Inference · Episode 05 · <span class="nw">Self-Attention</span>',
  title: 'Self-attention: where does 吃 (eat) look?',
  lede: 'Self-attention lets every token of a sentence look at every token and mix their information by how well they match. In the heatmap, <b>rows</b> are the tokens that look (queries), <b>columns</b> the tokens looked at (keys); each cell is an attention weight, and every row sums to 1.',
  coreNote: 'Every number on this page is computed in your browser by the attention core, written in C and compiled to WebAssembly. It works offline.',

  tokensLabel: 'Tokens (separated by spaces, 1 to 16)',
  seedLabel: 'Random seed',
  seedNew: 'Draw another',
  seedNewLabel: 'Draw another seed at random',
  dkLabel: `${DK} (width of Q, K, V)`,
  causalLabel: 'Causal mask: look only at yourself and earlier tokens',
  reset: 'Reset',
  tokenErrors: {
    empty: () => 'Enter at least 1 token.',
    tooMany: (n) => `At most 16 tokens; this has ${n}. The page keeps the last valid result.`,
    tooLong: () => 'A token can have at most 24 characters.',
    badChar: () => 'Tokens cannot contain control characters.',
  },
  seedError: 'The seed must be a whole number from 0 to 4294967295.',

  heatmapTitle: (seed, dk, causal) => `Attention weights softmax(QKᵀ/√${dk}) · seed ${seed}${causal ? ' · causal' : ''}`,
  sourceNote: (seed, dk, edited, embed, pe) => `The weights come from the episode's section-6 code with <code>torch.manual_seed(${seed})</code> in front (d_model = 8, d_k = ${dk})` +
    (!embed ? '' : pe ? ', with X = E[token] + PE (see “Embedding + positions”)' : ', with X = E[token], no positional encoding (see “Embedding + positions”)') + (edited ? ', with X replaced by your edits' : '') + '. <a href="#reproduce">The Python code below</a> runs as is and prints the same numbers.',
  exportSvg: 'Export SVG',
  exportPng: 'Export PNG',
  copyLink: 'Copy link',
  linkCopied: 'Link copied: it opens this exact view.',
  copyFailed: 'The browser refused the clipboard; copy the address from the address bar.',
  exportFailed: 'Export failed: ',

  explainTitle: 'How this cell is computed',
  explainHint: 'Hover a cell, or Tab into the heatmap and move with the arrow keys.',
  ex: {
    looks: ['', ' looks at ', ''],
    dot: '(a) dot product',
    scale: '(b) divide by √d_k',
    scaleHead: '(b) divide by √d_head',
    exp: '(c) exponentiate',
    sum: '(d) sum of exp over the row',
    weight: '(e) weight = exp ÷ row sum',
    core: 'C core',
    terms: (k) => ` (${k} terms, middle ones left out)`,
    masked: 'Causal mask: a token cannot look at tokens after it. Before the softmax this score is replaced by −∞, e^(−∞) = 0, so the weight is exactly 0 and it adds nothing to the row sum.',
    maskedPart: ' (masked cells excluded)',
    stable: (m) => `The scores are large: to avoid overflow, the row maximum m = ${m} is subtracted before exponentiating (so does the C core); the ratios do not change.`,
    summary: (dot, scaled, w) => `dot product ${dot}, scaled ${scaled}, weight ${w}`,
    summaryMasked: 'masked, weight 0',
  },

  reproTitle: 'Reproduce these numbers in PyTorch',
  reproText: 'This is the episode\'s section-6 code with <code>torch.manual_seed(…)</code> in front, filled in with this page\'s settings: the number of tokens, ' + DK + ', the mask and X. ' +
    'The page reproduces PyTorch\'s random generator bit for bit in JavaScript (Mersenne Twister and nn.Linear\'s initialisation), so X and the three W are exactly PyTorch\'s; ' +
    'the C core does the rest and agrees with PyTorch\'s float32 results to the last digit or two (about 10<sup>−7</sup>: the sums run in a different order).',
  copyCode: 'Copy code',
  codeCopied: 'Copied',

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

  mhaKicker: 'Coming next · episode 06',
  mhaTitle: 'Multi-head attention: several heads at once',
  mhaText: 'The episode ends on a problem: one set of W<sub>Q</sub>, W<sub>K</sub>, W<sub>V</sub> can learn only <b>one</b> way of paying attention. Multi-head attention splits the d_model = 8 dimensions into parts: ' +
    'each head uses only its own <b>d_head = d_model ÷ heads</b> columns of W<sub>Q</sub>, W<sub>K</sub> and W<sub>V</sub> (the paper\'s d_k of one head), and runs the four steps above in that narrower subspace, ' +
    'scaled by √d_head and with <b>a softmax of its own</b>: every head has its own heatmap, and each of its rows sums to 1. ' +
    'The heads\' outputs are then <b>concatenated</b> column by column back to (n, d_model) and multiplied by an output matrix <b>W<sub>O</sub></b>, which mixes what the heads found. The total width is unchanged and so, roughly, is the work: the same 8 dimensions are shared among several heads.',
  mhaHeadsLabel: 'Heads',
  mhaError: 'The multi-head attention cannot be computed with this X (the episode-05 part above is not affected). The C core\'s check says:',
  mhaSetup: (n, heads, dHead, seed, causal, dk) => `${heads} head${heads === 1 ? '' : 's'}, each with d_head = 8 ÷ ${heads} = ${dHead}. ` +
    `The ${n} token${n === 1 ? '' : 's'}, seed ${seed}${causal ? ', the causal mask' : ''} and X follow the settings at the top of the page; ` +
    (dk === 8 ? 'W<sub>Q</sub>, W<sub>K</sub>, W<sub>V</sub> are the three 8 × 8 matrices above.'
      : `the d_k = ${dk} chosen above only affects the episode-05 part: here W<sub>Q</sub>, W<sub>K</sub>, W<sub>V</sub> are 8 × 8 (with d_k = 8 they are the three above).`),
  mhaHead: (k, dHead) => `head ${k} · d_head = ${dHead}`,
  mhaHeadCols: (a, b) => (a === b ? `uses column ${a} of W<sub>Q</sub>, W<sub>K</sub>, W<sub>V</sub>` : `uses columns ${a}–${b} of W<sub>Q</sub>, W<sub>K</sub>, W<sub>V</sub>`),
  mhaGroup: (k, short) => (short ? `h${k}` : `head ${k}`),
  mhaExplainHint: 'Hover a cell of any head, or Tab into a heatmap and move with the arrow keys. Each head\'s dot product has only d_head terms, and it is divided by √d_head.',
  mhaOne: 'With 1 head, d_head = 8: this heatmap is the one at the top of the page (with d_k = 8), and multi-head attention is episode 05\'s self-attention followed by W<sub>O</sub>.',
  mhaConcatTitle: 'Concatenate, then multiply by W<sub>O</sub>',
  mhaConcatText: 'Each head outputs an (n, d_head) matrix: its own weights times its own columns of V. Side by side, in order, the heads\' outputs make an (n, d_model) matrix again: each band of the concat table below is one head\'s output. ' +
    'Row j of W<sub>O</sub> multiplies column j of the concat, so its rows fall into the same bands.',
  mhaConcatName: 'concat',
  mhaOutputText: 'Output = concat · W<sub>O</sub>, of shape (n, 8) · (8, 8) = (n, 8): as wide as the input X, ready for the next layer. W<sub>O</sub> is initialised at random and learned like the other three; with it, every output dimension can use the results of every head.',
  mhaCodeTitle: 'Reproduce the multi-head attention in PyTorch',
  mhaCodeText: 'The four matrices are drawn from the seed in this order: first X and the three <code>nn.Linear(8, 8, bias=False)</code> of the episode\'s code (d_k = 8), then one more <code>nn.Linear(8, 8, bias=False)</code> for W<sub>O</sub>. ' +
    'The code uses plain tensor operations and splits the heads with <code>.view</code> and <code>.transpose</code>; it prints the numbers on this page (checked on PyTorch 1.13, and against PyTorch\'s own <code>F.multi_head_attention_forward</code>).',

  footer: 'attnmap · every number on this page is computed by c_src/attention.c compiled to WebAssembly · works offline and straight from disk',
  fatal: 'The WebAssembly core failed to load: ',
  xBad: {
    nan: (j) => ['Row ', `, dimension ${j + 1}: not a finite number (NaN and infinities are not allowed).`],
    range: (j, v) => ['Row ', `, dimension ${j + 1}: ${v} is outside the float32 range (about ±3.4×10^38).`],
    overflow: (j, v) => ['Row ', `, dimension ${j + 1}: ${v}. X is so large that the scores Q·Kᵀ overflow float32.`],
    other: (code) => ['', `The C core refused this X (${code}).`],
  },
  xTyped: 'This value was not used; the table keeps the last X:',
  xLink: 'The X in the link was not used; the page uses the random X instead:',
  xDropped: 'Your edited X cannot be computed with these settings; the page uses the random X instead:',
  coreSaid: 'The C core says: ',
  linkNote: 'Some settings in the link could not be used and were ignored; the rest apply:',
  linkNoteClose: 'Dismiss',
  linkNoteCloseLabel: 'Dismiss this note',
  linkIgnored: {
    t: {
      tooMany: (n) => [`${n} tokens (at most 16)`, ''],
      empty: () => ['the tokens (empty)', ''],
      tooLong: () => ['the token “', '” (at most 24 characters)'],
      badChar: () => ['the tokens (control characters)', ''],
      space: () => ['the token “', '” (a token cannot contain spaces)'],
    },
    seed: ['the seed “', '” (a whole number from 0 to 4294967295)'],
    dk: ['d_k “', '” (one of 2, 4, 8, 16, 32, 64)'],
    causal: ['the mask “', '” (0 or 1)'],
    heads: ['the heads “', '” (1, 2, 4 or 8)'],
    lang: ['the language “', '” (zh or en)'],
    x: {
      long: () => ['X (too long)', ''],
      shape: (rows, count) => [`X (${rows} rows of 8 numbers expected, the link has ${count} row${count === 1 ? '' : 's'})`, ''],
      value: () => ['X (a value that is not a number, or outside the float32 range)', ''],
    },
    unknown: ['the unknown field “', '”'],
    sep: '; ',
    end: '.',
  },
  exportDark: 'Export in dark',
  mapScrolls: 'Wider than the screen: scroll sideways to see the whole map →',
  tableScrolls: 'Wider than the screen: scroll sideways to see the whole table →',
  mapValuesHidden: 'Cells too small for numbers: hover a cell, or Tab in and use the arrow keys.',
  matrixShape: (name, r, c) => `${name} (${r} × ${c})`,
};

// ------------------------------------------------------------------------------------------------
// issue 14: words and positions (web/page/page-pe.js), step ④ as a picture and the formula bar
// (page-step4.js), the heatmap's colour scale and temperature (page-scale.js). Plain text where a
// token is spliced in: the page inserts those parts with textContent.

zh.teach = {
  words: {
    title: '词的身份和位置：Embedding + 位置编码（EP03–04）',
    text: '文章的代码用 <code>X = torch.randn(n, 8)</code> 代替真正的输入：它只看词的个数，不看是哪个词。换成第三、四期的做法：' +
      '<b>X = E[词] + PE[位置]</b>。E 是按词查的表（这里没有训练，每个词的 8 个数由种子和这个词本身决定，同一个词不管站在哪里都是同一行）；' +
      'PE 是论文里的正弦位置编码，PE[pos, 2i] = sin(pos / 10000<sup>2i/8</sup>)，PE[pos, 2i+1] = cos(pos / 10000<sup>2i/8</sup>)。' +
      '选好之后，页面上每一步、上面的热力图和下面的 Python 代码都跟着变。',
    inputLabel: 'X 从哪来',
    inputs: { randn: '文章：torch.randn', embed: 'Embedding + 位置编码' },
    peLabel: '加上位置编码 PE',
    caption: (sentence) => `「${sentence}」的注意力权重`,
    // issue 24: the aligned view and the difference map (page-pe.js)
    alignedTitle: (b, a) => `「${b}」按「${a}」的顺序重排`,
    alignedCaption: (b, a) => `「${b}」的权重，行和列换成「${a}」的词序：同一个格子是同一对词。`,
    diffTitle: (a, b) => `差：|${a} − ${b}（重排）|`,
    diffCaption: (max, row, col) => `差值图（颜色从 0 到最大差）：最大差 ${max}，在「${row}」→「${col}」。`,
    diffZero: '差值图：每一格都是 0——重排之后两句话的权重完全相同，模型分不出词序。',
    verdictRandn: ['torch.randn 不看词：', 'B', ' 拿到的 X 和 ', 'A', ' 一模一样，两张热力图也完全相同——模型根本分不出这两句话。选「Embedding + 位置编码」试试。'],
    verdictNoPe: (perm, exact, causal) => (causal && !exact
      ? ['没有位置编码，但开着因果遮蔽：遮蔽本身就知道谁在前谁在后，所以 ', 'B', ` 按 ${perm} 重排后也不等于 `, 'A', '。关掉遮蔽再看。']
      : ['没有位置编码时，', 'B', ' 就是 ', 'A', ` 的行和列按 ${perm} 重新排列：每一格都完全相等。自注意力只知道有哪些词，不知道它们的顺序——「猫吃鱼」和「鱼吃猫」对它来说是同一件事。`]),
    verdictPe: (perm, gap) => ['加上位置编码之后，', 'B', ' 不再是 ', 'A', ` 的重排：按 ${perm} 重排后，最大相差 ${gap}。同一个词站在不同的位置，X 的那一行就不同，看别人的方式也跟着变。`],
    eName: 'E[词]',   // the E table's name, as the texts write it (issue 24)
    xStatus: (n, pe) => `X = E[词]${pe ? ' + PE[位置]' : '（没有位置编码）'}，${n} 行；同一个词的 E 行完全相同。`,
  },
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
  view: {
    colourLabel: '色标',
    scales: { unit: '0–1', data: '数据范围', log: '对数' },
    // issue 24: which scale is on (page-scale.js colourNote)
    scaleOn: (name, lo, hi, key) => `现在的色标：${name}` + (key === 'unit' ? '（0 最暗，1 最亮）' : `（这张图的权重 ${lo} – ${hi}）`) + '。',
    scaleWhy: (key, hi, limit) => (key === 'data'
      ? `这是这张图的默认：它最大的权重只有 ${hi}（不超过 ${limit}），用 0–1 的话几乎所有格子都是同一种深紫色。`
      : `这是这张图的默认：最大的权重 ${hi} 在 0–1 上看得清楚；权重都不超过 ${limit} 的图（长句子）默认用数据范围。`),
    scaleChosen: '这是你选的色标（写在链接里）。',
    tempLabel: '温度',
    tempNote: (t, dk) => (t === 1
      ? `T = 1 就是文章的公式 softmax(QKᵀ/√${dk})。这里的温度缩放的是注意力分数（softmax 之前除以 T），不是生成文字时采样用的温度。T 越小，每一行越接近只看一个词；T 越大，越接近平均。`
      : `这张热力图是 softmax(QKᵀ / (${t}·√${dk}))：温度缩放的是注意力分数，不是采样。它只改变这张图和「这一格是怎么算出来的」，下面的表格和代码仍是 T = 1。`),
    entropyHead: (max, n) => `每一行的熵（单位：比特，−Σ w·log₂w）：0 表示只看一个词，最大 log₂${n} = ${max} 表示完全平均`,
    entropyHeadCausal: (n) => `每一行的熵（单位：比特，−Σ w·log₂w）：0 表示只看一个词。因果遮蔽下，第 k 行只能看到 k 个词（第 1 行 1 个，第 ${n} 行 ${n} 个），最大是 log₂k，表示在这 k 个词上完全平均；每一行的条按它自己的最大值画满。`,
    bits: '比特',
  },
  heroTitle: (seed, dk, causal, t) => `注意力权重 softmax(QKᵀ/(${t}·√${dk})) · 种子 ${seed}${causal ? ' · 因果遮蔽' : ''}`,
  explainTemp: (t) => `(b) 除以 ${t}·√d_k（温度 T = ${t}）`,
};

en.teach = {
  words: {
    title: 'Which word, and where: Embedding + positional encoding (episodes 03–04)',
    text: 'The episode\'s code stands in for the input with <code>X = torch.randn(n, 8)</code>: it depends on how many tokens there are, not on which. Switch to what episodes 03 and 04 built: ' +
      '<b>X = E[token] + PE[position]</b>. E is a table looked up by the token (untrained here: each token\'s 8 numbers follow from the seed and the token itself, so the same word is the same row wherever it stands); ' +
      'PE is the paper\'s sinusoidal encoding, PE[pos, 2i] = sin(pos / 10000<sup>2i/8</sup>), PE[pos, 2i+1] = cos(pos / 10000<sup>2i/8</sup>). ' +
      'Every step on the page, the heatmap at the top and the Python code follow the choice.',
    inputLabel: 'Where X comes from',
    inputs: { randn: 'Episode: torch.randn', embed: 'Embedding + positions' },
    peLabel: 'Add the positional encoding PE',
    caption: (sentence) => `Attention weights of “${sentence}”`,
    // issue 24: the aligned view and the difference map (page-pe.js)
    alignedTitle: (b, a) => `“${b}” in the order of “${a}”`,
    alignedCaption: (b, a) => `The weights of “${b}” with rows and columns in the word order of “${a}”: the same cell is the same pair of words.`,
    diffTitle: (a, b) => `Difference: |${a} − ${b} (aligned)|`,
    diffCaption: (max, row, col) => `The difference map (colours from 0 to the largest difference): the largest is ${max}, at ${row} → ${col}.`,
    diffZero: 'The difference map: every cell is 0. Aligned, the two sentences have exactly the same weights: the model cannot tell the word order.',
    verdictRandn: ['torch.randn ignores the words: ', 'B', ' gets exactly the X of ', 'A', ', and the two heatmaps are identical: the model cannot tell the sentences apart. Try “Embedding + positions”.'],
    verdictNoPe: (perm, exact, causal) => (causal && !exact
      ? ['No positional encoding, but the causal mask is on: the mask itself knows who comes first, so ', 'B', ` reordered by ${perm} is not `, 'A', '. Switch the mask off and look again.']
      : ['Without positional encoding, ', 'B', ' is ', 'A', ` with its rows and columns reordered ${perm}: every cell is exactly equal. Self-attention knows which words there are, not their order: “cat eats fish” and “fish eats cat” are the same to it.`]),
    verdictPe: (perm, gap) => ['With positional encoding, ', 'B', ' is no longer a reordering of ', 'A', `: reordered by ${perm}, the weights differ by up to ${gap}. The same word at another position has another row of X, and looks at the others differently.`],
    eName: 'E[token]',
    xStatus: (n, pe) => `X = E[token]${pe ? ' + PE[position]' : ' (no positional encoding)'}, ${n} rows; the same word has the same row of E.`,
  },
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
  view: {
    colourLabel: 'Colour scale',
    scales: { unit: '0–1', data: 'data range', log: 'log' },
    // issue 24: which scale is on (page-scale.js colourNote)
    scaleOn: (name, lo, hi, key) => `Colour scale on: ${name}` + (key === 'unit' ? ' (0 darkest, 1 brightest).' : ` (this map's weights, ${lo} – ${hi}).`),
    scaleWhy: (key, hi, limit) => (key === 'data'
      ? ` This map's default: its largest weight is only ${hi} (at most ${limit}); on 0–1 nearly every cell would be the same dark purple.`
      : ` This map's default: its largest weight, ${hi}, reads well on 0–1; maps whose weights are all ${limit} or less (long sentences) default to the data range.`),
    scaleChosen: ' You chose this scale (it is kept in the link).',
    tempLabel: 'Temperature',
    tempNote: (t, dk) => (t === 1
      ? `T = 1 is the episode's formula softmax(QKᵀ/√${dk}). This temperature scales the attention scores (divided by T before the softmax), not the sampling of generated text. A smaller T pushes each row towards a single token; a larger T towards an even spread.`
      : `This heatmap is softmax(QKᵀ / (${t}·√${dk})): the temperature scales the attention scores, not sampling. It changes only this picture and “How this cell is computed”; the tables and the code below keep T = 1.`),
    entropyHead: (max, n) => `Entropy of each row in bits (−Σ w·log₂w): 0 means a single token, the most, log₂${n} = ${max}, an even spread`,
    entropyHeadCausal: (n) => `Entropy of each row in bits (−Σ w·log₂w): 0 means a single token. Under the causal mask row k sees only k tokens (row 1 one, row ${n} all ${n}), so its most is log₂k, an even spread over those k; each row's bar is full at its own most.`,
    bits: 'bits',
  },
  heroTitle: (seed, dk, causal, t) => `Attention weights softmax(QKᵀ/(${t}·√${dk})) · seed ${seed}${causal ? ' · causal' : ''}`,
  explainTemp: (t) => `(b) divide by ${t}·√d_k (temperature T = ${t})`,
};

// ------------------------------------------------------------------------------------------------
// issue 16: a trained model (web/page/page-trained.js) and a checkpoint the reader loads
// (web/page/page-checkpoint.js). Captions are arrays: 'ROW' and 'KEY' are where the row's token
// and the token it looks at go, as text.
// Layers, heads and kv groups (l, h, g) come in as indices from 0, as the code counts; the texts
// print them from 1, as people count (issue 24); caption's pos is already from 1.
const WHERE_ZH = { self: '（它自己）', first: '（句子的第一个字）', previous: '（它前面那个字）', other: '' };
const WHERE_EN = { self: ' (itself)', first: ' (the first character)', previous: ' (the character before it)', other: '' };

zh.models = {
  trained: {
    title: '随机权重，还是训练过的模型？',
    text: '上面所有的热力图都用文章的随机权重（X 来自 <code>torch.randn</code>，W<sub>Q</sub>、W<sub>K</sub>、W<sub>V</sub> 是 <code>nn.Linear</code> 默认的均匀分布初始化）：它们的图案是随机数的图案，不是模型学到的东西。' +
      '切换到「训练过的玩具模型」，一句话（按字读：猫 吃 鱼 → 猫吃鱼）交给一个真的训练过的小模型，看它每一层、每一个头的注意力：先是一句它的头要真正做选择的话，一键换成页面上的句子。',
    modeLabel: '权重',
    modes: { random: '文章的随机权重', trained: '训练过的玩具模型' },
    rowLabel: '说明哪一行：',
    loading: '正在加载玩具模型（约 200 KB，只在第一次切换时加载）……',
    loadFailed: (m) => `玩具模型加载失败：${m}`,
    randomStatus: (seed) => `文章的随机权重，种子 ${seed}：和页面最上面的热力图相同。`,
    trainedStatus: (L, H) => `玩具模型：${L} 层 × 每层 ${H} 个头，共 ${L * H} 张热力图；每行是一个字在看谁，因果遮蔽（只看自己和前面的字）。`,
    headTitle: (l, h) => `层 ${l + 1} · 头 ${h + 1}`,
    strongestTag: '↑ 说明里的那个头',
    // issue 24: the toy's sentence, the enlarged head, its active cell
    sentenceLabel: '句子',
    sentences: { example: (t) => t, page: (t) => `页面的句子：${t}` },
    thumbLabel: (l, h) => `放大层 ${l + 1} · 头 ${h + 1}`,
    cellLine: (row, col, v, shown) => (v === null ? `「${row}」→「${col}」：被因果遮蔽，权重 0。` : `「${row}」→「${col}」：${v}`) +
      (shown ? '' : '（格子太小，数字不画在格子里：把鼠标放在格子上，或用 Tab 进入、方向键移动，在这里读数。）'),
    unknown: (chars, known) => `玩具模型不认识这些字：${chars}。它只在一个很小的语法上训练过，只认识这些字：${known}。换一句试试，比如「猫 吃 鱼」；上面的随机权重部分不受影响。`,
    empty: '这句话里没有字。',
    tooLong: (n, max) => `这句话有 ${n} 个字，玩具模型最多读 ${max} 个。`,
    caption: (pos, l, h, w, where, agree, total) => ['「', 'ROW', `」这一行（第 ${pos} 个字）：${total} 个头里，权重最集中的是层 ${l + 1} 的头 ${h + 1}，它把 ${w} 的注意力给了「`, 'KEY',
      `」${WHERE_ZH[where]}。` + (agree > 1 ? `共有 ${agree} 个头把最多的权重给了「` : '其他头最多的权重都给了别的字，不是「'), 'KEY',
      '」。这是这一句、这一行的测量：它说明这些头在这里看向哪儿，不说明模型为什么这样看；换一句话，结果可能不同。'],
    nearlyEven: (u) => `不过差别很小：这一行平均分的话，每个字是 ${u}。`,
    captionFirst: ['第一个字只能看它自己（因果遮蔽），每个头给它的权重都是 1：这一行什么也说明不了。换一行看看。'],
    note: '玩具模型在「猫吃鱼」这类句子上训练（<a href="web/models/toy-zh/README.html">模型说明</a>）：在它的语法里，动词后面的宾语由主语决定（猫吃鱼、狗吃肉、猫喝奶），' +
      '所以在动词这个位置猜下一个字，需要看回主语。一个头从「吃」看向「猫」和这一点相符，但热力图本身证明不了模型用了它。',
  },
  ckpt: {
    kicker: '进阶 · 真实模型',
    title: '加载一个真实的模型：每一层、每一个头',
    text: '选择一个模型文件夹里的文件（GPT-2，Qwen2.5、Qwen3、Llama 3、SmolLM2 这样的 LLaMA 系列，或 bert-base-chinese 这样的 BERT 编码器）：<code>config.json</code>、<code>model.safetensors</code>（或 <code>model.safetensors.index.json</code> 和它的分片），以及 <code>tokenizer.json</code>，或 <code>vocab.json</code> + <code>merges.txt</code>（GPT-2），或 <code>vocab.txt</code>（中文 GPT-2、BERT）。' +
      '文件只在你的浏览器里读取和计算，不会上传到任何地方。去哪里下载这些模型、各要多少内存，见 <a href="docs/MODELS.html">docs/MODELS.md</a>。',
    filesLabel: '模型文件',
    dropHint: '也可以把文件（或整个文件夹）拖到这里。',
    reading: (name, read, total) => `正在读取 ${name}：${read} / ${total}`,
    starting: (size) => `已读取 ${size}，正在把权重放进 WebAssembly 内存……`,
    loaded: (name, c, tok, ignored, threads = 1) => `已加载 ${name}${c.encoder ? '（编码器，双向注意力）' : ''}：${c.n_layer} 层 × ${c.n_head} 个头，d_model = ${c.n_embd}，词表 ${c.vocab_size}${threads > 1 ? `，在 ${threads} 个线程上运行` : ''}，` +
      (tok === 'bpe' ? 'GPT-2 的 BPE 分词器' : tok === 'wordpiece' ? 'BERT 的 vocab.txt 分词器' : tok === 'tokenizer.json' ? 'tokenizer.json 分词器' : '没有分词器文件：下面输入 token id') +
      (ignored.length ? `。没有用到：${ignored.join('、')}` : '') + '。',
    textLabel: '文本（经过模型的分词器）',
    idsLabel: 'token id（这个模型没有分词器文件），用空格或逗号隔开，例如 3 7 5',
    idsOnly: (v) => `这个模型没有分词器文件，请输入 token id：0 到 ${v - 1} 的整数，用空格或逗号隔开。`,
    noTokens: '没有得到任何 token。',
    // an encoder (BERT, issue 25): a pair of sentences, [CLS]/[SEP] hidden on request, fill-mask
    pairLabel: '第二句（可选）：BERT 把两句读成 [CLS] 第一句 [SEP] 第二句 [SEP]',
    hideSpecialLabel: '隐藏 [CLS] 和 [SEP]',
    optionsNoteEncoder: (log, floor, hide, hidden) => [
      log ? `对数色标：小图从 ${floor} 到 1 按 log10 着色（更小的数用最深的颜色），大图从最小的正数到最大的数。` : '',
      hide ? (hidden ? '隐藏 [CLS] 和 [SEP]：BERT 的很多头把注意力放在这两个特殊 token 上。这里去掉它们的行和列，每一行剩下的权重再除以它们的和（重新归一化），显示剩下的注意力怎样分配。' : '除了 [CLS] 和 [SEP] 没有别的 token，所以都显示。') : '',
    ].filter(Boolean).join(' '),
    bigHiddenSpecial: '去掉了 [CLS] 和 [SEP]：每一行剩下的权重重新归一化。',
    bigNoteEncoder: (l, h, n) => `层 ${l + 1} 的头 ${h + 1}，${n} 个 token。每行是一个 token 在看谁，加起来等于 1。这是编码器：没有因果遮蔽，每个 token 都看得到前后所有的 token。`,
    fillLead: '填空（模型的掩码语言模型头）：每个 [MASK] 最可能的 5 个 token 和概率',
    fillAt: (i) => `第 ${i + 1} 个 token：`,
    fillHint: '在文本里写上 [MASK]，模型会猜那里最可能是什么，例如「猫吃[MASK]」。',
    fillNoHead: '这个检查点没有掩码语言模型头（cls.predictions，它是 BertModel 而不是 BertForMaskedLM），所以不能填空；注意力照样可以看。',
    idOutside: (id, v) => `token id ${id} 超出了词表（0 到 ${v - 1}）。`,
    cut: (n, max) => `共有 ${n} 个 token，网格只画前 ${max} 个。`,
    logLabel: '对数色标',
    hideLabel: '隐藏第一个 token',
    optionsNote: (log, floor, hide, n) => [
      log ? `对数色标：小图从 ${floor} 到 1 按 log10 着色（更小的数用最深的颜色），大图从最小的正数到最大的数。` : '',
      hide ? (n > 1 ? '隐藏第一个 token：训练过的模型常把大部分注意力放在第一个 token 上。这里去掉它的行和列，每一行剩下的权重再除以它们的和（重新归一化），显示剩下的注意力怎样分配。' : '只有一个 token，没有什么可隐藏的。') : '',
    ].filter(Boolean).join(' '),
    maxLabel: '最多生成',
    generate: '逐个生成',
    stop: '停止',
    genLead: '生成（贪心，KV 缓存）：',
    genStopped: (k) => `已停止，生成了 ${k} 个 token。`,
    genDone: (k) => `完成，生成了 ${k} 个 token。最后一个 token 还没有被模型读过，所以它还没有自己的一行。`,
    genFull: (max) => `网格最多 ${max} 个 token（或模型的 n_positions），已经没有空间再生成。`,
    gridHint: '每一行是一层，每一列是一个头。点击一张小图（或用 Tab 选中后按 Enter）放大，看它的 token 和数值。',
    layerShort: (l) => `L${l + 1}`,
    headShort: (h) => `H${h + 1}`,
    kvShort: (g) => `kv${g + 1}`,
    gqaHint: (H, G) => `这个模型用分组查询注意力（GQA）：每层 ${H} 个查询头分成 ${G} 组，每组 ${H / G} 个头共用一个键/值头（列头下的 kv 编号；相邻的组底色不同）。`,
    thumbLabel: (l, h) => `层 ${l + 1} 头 ${h + 1}：放大`,
    bigTitle: (l, h, hide) => `层 ${l + 1} · 头 ${h + 1}${hide ? ' · 去掉第一个 token，重新归一化' : ''}`,
    bigHidden: '去掉了第一个 token：每一行剩下的权重重新归一化。',
    bigNote: (l, h, n) => `层 ${l + 1} 的头 ${h + 1}，${n} 个 token。每行是一个 token 在看谁，加起来等于 1；右上方是因果遮蔽。`,
    errors: {
      noConfig: () => '缺少 config.json：请把模型文件夹里的 config.json 一起选上。',
      noWeights: () => '缺少 model.safetensors：请把权重文件一起选上。',
      binOnly: (names) => `这里只有 PyTorch 的权重（${names}），没有 model.safetensors。docs/MODELS.md 里有几行把它转换成 safetensors 的 Python。`,
      noMerges: () => '有 vocab.json 但缺少 merges.txt：GPT-2 的分词器需要两个文件。',
      noVocab: () => '有 merges.txt 但缺少 vocab.json：GPT-2 的分词器需要两个文件。',
      // issue 24 item 13: a plain cause first (causes, below), the loader's own words after it in a <details>
      memory: () => '内存不够：浏览器没能分配放下这个模型所需的内存。关掉一些标签页再试，或者换一个小一些的模型（distilgpt2）。',
      tooLarge: () => '这个模型太大，放不进 WebAssembly 的 4 GB 内存。',
      invalid: (cause) => `这不是一个能用的检查点：${cause}。`,
      refused: () => '模型拒绝了这个输入。',
      readFailed: () => '文件读取失败。',
      other: () => '出错了。',
    },
    // why a load failed, in plain words: page-load-errors.js picks one from the loader's error
    causes: {
      truncated: '文件不完整（可能下载被截断）',
      notSafetensors: '权重文件不是 safetensors 格式，或者不完整',
      damaged: '权重文件已损坏，不符合 safetensors 格式',
      shards: '分片和它们的索引 model.safetensors.index.json 对不上（缺了分片，或者来自不同的下载）',
      mismatch: '权重和 config.json 对不上（可能来自两个不同的模型）',
      dtype: '权重的数据类型 attnmap 读不了',
      nonFinite: '权重里有 NaN 或无穷大',
      config: 'config.json 读不了，或者它描述的模型 attnmap 不支持',
      tokenizer: '分词器文件有问题',
      unknown: '文件的内容不是 attnmap 能读的格式',
    },
    detail: '详细信息（英文，原样）',
  },
};

en.models = {
  trained: {
    title: 'Random weights, or a trained model?',
    text: 'Every heatmap above uses the article\'s random numbers (X from <code>torch.randn</code>, W<sub>Q</sub>, W<sub>K</sub>, W<sub>V</sub> from <code>nn.Linear</code>\'s default uniform initialisation): their patterns are the patterns of random numbers, not something a model learned. ' +
      'Switch to “trained toy model” and a sentence, read character by character (猫 吃 鱼 → 猫吃鱼), goes through a small model that was really trained: every layer and every head of it. It starts on a sentence where its heads really choose; one click gives it the page\'s sentence.',
    modeLabel: 'Weights',
    modes: { random: 'Article: random', trained: 'Trained toy model' },
    rowLabel: 'Caption for row:',
    loading: 'Loading the toy model (about 200 KB, only on the first switch)…',
    loadFailed: (m) => `The toy model did not load: ${m}`,
    randomStatus: (seed) => `The article's random weights, seed ${seed}: the same as the heatmap at the top of the page.`,
    trainedStatus: (L, H) => `The toy model: ${L} layers × ${H} heads each, ${L * H} heatmaps; each row is a character looking at the others, with the causal mask (itself and what comes before).`,
    headTitle: (l, h) => `layer ${l + 1} · head ${h + 1}`,
    strongestTag: '↑ the head in the caption',
    // issue 24: the toy's sentence, the enlarged head, its active cell
    sentenceLabel: 'Sentence',
    sentences: { example: (t) => t, page: (t) => `The page's sentence: ${t}` },
    thumbLabel: (l, h) => `Enlarge layer ${l + 1} · head ${h + 1}`,
    cellLine: (row, col, v, shown) => (v === null ? `${row} → ${col}: hidden by the causal mask, weight 0.` : `${row} → ${col}: ${v}`) +
      (shown ? '' : ' (the cells are too small for their numbers: hover a cell, or Tab into the map and use the arrow keys, and read it here.)'),
    unknown: (chars, known) => `The toy model does not know these characters: ${chars}. It was trained on a tiny grammar and knows only these: ${known}. Try another sentence, such as “猫 吃 鱼”; the random-weights parts above are not affected.`,
    empty: 'The sentence has no characters.',
    tooLong: (n, max) => `The sentence has ${n} characters; the toy model reads at most ${max}.`,
    caption: (pos, l, h, w, where, agree, total) => ['The row of ', 'ROW', ` (character ${pos}): of the ${total} heads, the most concentrated is layer ${l + 1}, head ${h + 1}, which gives ${w} of its attention to `, 'KEY',
      `${WHERE_EN[where]}. ` + (agree > 1 ? `${agree} heads give their largest weight to ` : 'The other heads give their largest weight to something other than '), 'KEY',
      '. This is a measurement of this row of this sentence: it says where these heads look here, not why the model looks there; another sentence may differ.'],
    nearlyEven: (u) => ` The difference is small, though: an even spread over this row gives ${u} to each.`,
    captionFirst: ['The first character can only look at itself (the causal mask): every head gives it weight 1, so this row tells nothing. Pick another row.'],
    note: 'The toy model was trained on sentences like 猫吃鱼 (<a href="web/models/toy-zh/README.html">model card</a>): in its grammar the object after the verb depends on the subject (猫吃鱼 “cat eats fish”, 狗吃肉 “dog eats meat”, 猫喝奶 “cat drinks milk”), ' +
      'so guessing the next character at the verb needs a look back at the subject. A head looking from 吃 to 猫 fits that, but the heatmap alone does not prove that the model uses it.',
  },
  ckpt: {
    kicker: 'Going further · a real model',
    title: 'Load a real model: every layer and every head',
    text: 'Pick the files of a model folder (GPT-2, the LLaMA family: Qwen2.5, Qwen3, Llama 3, SmolLM2, or a BERT encoder such as bert-base-chinese): <code>config.json</code>, <code>model.safetensors</code> (or <code>model.safetensors.index.json</code> and its shards), and <code>tokenizer.json</code>, or <code>vocab.json</code> + <code>merges.txt</code> (GPT-2), or <code>vocab.txt</code> (Chinese GPT-2, BERT). ' +
      'They are read and run in your browser only and are not uploaded anywhere. Where to download these models and how much memory each takes: <a href="docs/MODELS.html">docs/MODELS.md</a>.',
    filesLabel: 'Model files',
    dropHint: 'Or drop the files (or the whole folder) here.',
    reading: (name, read, total) => `Reading ${name}: ${read} of ${total}`,
    starting: (size) => `Read ${size}; putting the weights into WebAssembly memory…`,
    loaded: (name, c, tok, ignored, threads = 1) => `Loaded ${name}${c.encoder ? ' (an encoder: bidirectional attention)' : ''}: ${c.n_layer} layers × ${c.n_head} heads, d_model = ${c.n_embd}, vocabulary ${c.vocab_size}${threads > 1 ? `, running on ${threads} threads` : ''}, ` +
      (tok === 'bpe' ? 'GPT-2\'s BPE tokenizer' : tok === 'wordpiece' ? 'a BERT vocab.txt tokenizer' : tok === 'tokenizer.json' ? 'its tokenizer.json' : 'no tokenizer files: type token ids below') +
      (ignored.length ? `. Not used: ${ignored.join(', ')}` : '') + '.',
    textLabel: 'Text (through the model\'s tokenizer)',
    idsLabel: 'Token ids (this model has no tokenizer files), separated by spaces or commas, e.g. 3 7 5',
    idsOnly: (v) => `This model has no tokenizer files: type token ids, integers from 0 to ${v - 1}, separated by spaces or commas.`,
    noTokens: 'That gives no tokens.',
    pairLabel: 'Second sentence (optional): BERT reads the two as [CLS] first [SEP] second [SEP]',
    hideSpecialLabel: 'Hide [CLS] and [SEP]',
    optionsNoteEncoder: (log, floor, hide, hidden) => [
      log ? `Log colour scale: the small maps are coloured by log10 from ${floor} to 1 (smaller values take the darkest colour), the big one from its smallest positive value to its largest.` : '',
      hide ? (hidden ? 'Hide [CLS] and [SEP]: many of BERT\'s heads park their attention on these two special tokens. Their rows and columns are left out and each row\'s remaining weights are divided by their sum (renormalised), to show how the rest is shared out.' : 'There are no tokens besides [CLS] and [SEP]: all are shown.') : '',
    ].filter(Boolean).join(' '),
    bigHiddenSpecial: '[CLS] and [SEP] are left out: each row\'s remaining weights are renormalised.',
    bigNoteEncoder: (l, h, n) => `Layer ${l + 1}, head ${h + 1}, ${n} tokens. Each row is a token looking at the others and adds up to 1. This is an encoder: there is no causal mask, every token sees every token before and after it.`,
    fillLead: 'Fill the gap (the model\'s masked-LM head): the 5 likeliest tokens for each [MASK], with their probabilities',
    fillAt: (i) => `token ${i + 1}: `,
    fillHint: 'Write [MASK] in the text and the model guesses what is likeliest there, e.g. “the cat ate the [MASK].”',
    fillNoHead: 'This checkpoint has no masked-LM head (cls.predictions: it is a BertModel, not a BertForMaskedLM), so it cannot fill gaps; its attention can still be seen.',
    idOutside: (id, v) => `Token id ${id} is outside the vocabulary (0 to ${v - 1}).`,
    cut: (n, max) => `${n} tokens; the grid draws the first ${max}.`,
    logLabel: 'Log colour scale',
    hideLabel: 'Hide the first token',
    optionsNote: (log, floor, hide, n) => [
      log ? `Log colour scale: the small maps are coloured by log10 from ${floor} to 1 (smaller values take the darkest colour), the big one from its smallest positive value to its largest.` : '',
      hide ? (n > 1 ? 'Hide the first token: trained models often park most of their attention on the first token. Its row and column are left out and each row\'s remaining weights are divided by their sum (renormalised), to show how the rest is shared out.' : 'There is only one token: nothing to hide.') : '',
    ].filter(Boolean).join(' '),
    maxLabel: 'Generate at most',
    generate: 'Generate token by token',
    stop: 'Stop',
    genLead: 'Generated (greedy, KV cache): ',
    genStopped: (k) => `Stopped after ${k} tokens.`,
    genDone: (k) => `Done: ${k} tokens. The last one has not been read by the model yet, so it has no row of its own.`,
    genFull: (max) => `The grid holds at most ${max} tokens (or the model's n_positions): no room left to generate.`,
    gridHint: 'Each row is a layer, each column a head. Click a small map (or Tab to it and press Enter) to enlarge it with its tokens and numbers.',
    layerShort: (l) => `L${l + 1}`,
    headShort: (h) => `H${h + 1}`,
    kvShort: (g) => `kv${g + 1}`,
    gqaHint: (H, G) => `This model uses grouped-query attention (GQA): the ${H} query heads of each layer form ${G} groups of ${H / G}, each group sharing one key/value head (the kv number under each column; neighbouring groups are shaded apart).`,
    thumbLabel: (l, h) => `Layer ${l + 1} head ${h + 1}: enlarge`,
    bigTitle: (l, h, hide) => `layer ${l + 1} · head ${h + 1}${hide ? ' · first token left out, renormalised' : ''}`,
    bigHidden: 'The first token is left out: each row\'s remaining weights are renormalised.',
    bigNote: (l, h, n) => `Layer ${l + 1}, head ${h + 1}, ${n} tokens. Each row is a token looking at the others and adds up to 1; the causal mask covers the upper right.`,
    errors: {
      noConfig: () => 'config.json is missing: pick the model folder\'s config.json too.',
      noWeights: () => 'model.safetensors is missing: pick the weights file too.',
      binOnly: (names) => `There are only PyTorch weights here (${names}), no model.safetensors. docs/MODELS.md has a few lines of Python that convert them.`,
      noMerges: () => 'vocab.json without merges.txt: GPT-2\'s tokenizer needs both.',
      noVocab: () => 'merges.txt without vocab.json: GPT-2\'s tokenizer needs both.',
      memory: () => 'Out of memory: the browser could not set aside the memory this model needs. Close some tabs and try again, or take a smaller model (distilgpt2).',
      tooLarge: () => 'This model is too large for WebAssembly\'s 4 GB of memory.',
      invalid: (cause) => `This is not a usable checkpoint: ${cause}.`,
      refused: () => 'The model refused this input.',
      readFailed: () => 'A file could not be read.',
      other: () => 'Something went wrong.',
    },
    causes: {
      truncated: 'the file is incomplete (the download may have been cut short)',
      notSafetensors: 'the weights file is not in the safetensors format, or is incomplete',
      damaged: 'the weights file is damaged: it breaks the safetensors format',
      shards: 'the shards and their index, model.safetensors.index.json, do not match (a shard is missing, or they come from different downloads)',
      mismatch: 'the weights do not match config.json (they may come from two different models)',
      dtype: 'the weights use a number type attnmap cannot read',
      nonFinite: 'the weights hold NaN or infinity',
      config: 'config.json cannot be read, or it describes a model attnmap does not run',
      tokenizer: 'the tokenizer files are broken',
      unknown: 'its contents are not in a format attnmap reads',
    },
    detail: 'Details (as the loader gave them)',
  },
};

// issue 23: "load from Hugging Face" (web/page/page-hub.js)
zh.models.hub = {
  label: '或者从 Hugging Face 加载（输入模型 id）',
  check: '查看大小',
  go: '下载并加载',
  cancel: '取消',
  noId: '请输入模型 id，例如 Qwen/Qwen2.5-0.5B。',
  checking: (id) => `正在向 Hugging Face 查询 ${id} 的文件……`,
  ask: (id, size, n) => `${id}：要下载 ${n} 个文件，共 ${size}。下载后保存在浏览器里，下次不用联网。`,
  progress: (file, read, total) => `正在下载 ${file}：${read} / ${total}`,
  cancelled: '已取消下载。',
  failed: (m) => `没能从 Hugging Face 加载：${m}`,
  cachedTitle: '已保存在这个浏览器里的模型（加载时不用联网）：',
  delete: '删除',
  deleteLabel: (repo) => `从浏览器里删除 ${repo}`,
};
en.models.hub = {
  label: 'Or load from Hugging Face (a model id)',
  check: 'Check size',
  go: 'Download and load',
  cancel: 'Cancel',
  noId: 'Type a model id, such as Qwen/Qwen2.5-0.5B.',
  checking: (id) => `Asking Hugging Face for ${id}'s files…`,
  ask: (id, size, n) => `${id}: ${n} files to download, ${size} in all. They stay in this browser: the next visit needs no network.`,
  progress: (file, read, total) => `Downloading ${file}: ${read} of ${total}`,
  cancelled: 'Download cancelled.',
  failed: (m) => `Could not load from Hugging Face: ${m}`,
  cachedTitle: 'Models kept in this browser (they load without the network):',
  delete: 'Delete',
  deleteLabel: (repo) => `Delete ${repo} from this browser`,
};
