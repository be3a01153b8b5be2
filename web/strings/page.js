// strings/page.js - the words of the page (index.html, web/page/) that several sections share, in
// Chinese (default) and English.
//
// Strings are trusted constants, and may hold markup (<code>, <sub>, <b>): the page puts them in
// with innerHTML. Functions take numbers only. Tokens are user input and never pass through the
// strings: the page inserts them with textContent.
//
// These are the words several sections share (the hero, the controls, the explanation of a cell,
// the link and X notes). Each section's own words sit beside its code, in
// web/page/page-<section>-strings.js; web/page/page-strings.js merges them with these into the
// page's strings, one object per language (T).
import { DK } from './page-math.js';

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
  // issue 39 P7: a map whose cells take no focus (page-pe.js, page-rope.js)
  mapValuesHover: '格子太小，不显示数值：把鼠标移到格子上查看。',
  // the line under an enlarged map (the trained toy's, a checkpoint's, issue 39 P6) that says its
  // active cell: row, col its tokens; v its weight, null under the mask; shown: numbers drawn in the cells
  cellLine: (row, col, v, shown) => (v === null ? `「${row}」→「${col}」：被因果遮蔽，权重 0。` : `「${row}」→「${col}」：${v}`) +
    (shown ? '' : '（格子太小，数字不画在格子里：把鼠标放在格子上，或用 Tab 进入、方向键移动，在这里读数。）'),
  matrixShape: (name, r, c) => `${name}（${r} × ${c}）`,
  tableCorner: '行 \\ 列',              // a table's top-left header, read aloud only (page-dom.js)
  teach: {
    heroTitle: (seed, dk, causal, t) => `注意力权重 softmax(QKᵀ/(${t}·√${dk})) · 种子 ${seed}${causal ? ' · 因果遮蔽' : ''}`,
    explainTemp: (t) => `(b) 除以 ${t}·√d_k（温度 T = ${t}）`,
  },
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
  // issue 39 P7: a map whose cells take no focus (page-pe.js, page-rope.js)
  mapValuesHover: 'Cells too small for numbers: hover a cell to read it.',
  // the line under an enlarged map (the trained toy's, a checkpoint's, issue 39 P6) that says its
  // active cell: row, col its tokens; v its weight, null under the mask; shown: numbers drawn in the cells
  cellLine: (row, col, v, shown) => (v === null ? `${row} → ${col}: hidden by the causal mask, weight 0.` : `${row} → ${col}: ${v}`) +
    (shown ? '' : ' (the cells are too small for their numbers: hover a cell, or Tab into the map and use the arrow keys, and read it here.)'),
  matrixShape: (name, r, c) => `${name} (${r} × ${c})`,
  tableCorner: 'row \\ column',
  teach: {
    heroTitle: (seed, dk, causal, t) => `Attention weights softmax(QKᵀ/(${t}·√${dk})) · seed ${seed}${causal ? ' · causal' : ''}`,
    explainTemp: (t) => `(b) divide by ${t}·√d_k (temperature T = ${t})`,
  },
};
