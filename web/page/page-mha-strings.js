// page-mha-strings.js - the words of the multi-head section (web/page/page-mha.js, episode 06),
// in Chinese (default) and English: T.mhaKicker … T.mhaCodeText once page-strings.js has merged
// them. Trusted constants (they may hold markup, set with innerHTML); functions take
// numbers only.

export const zh = {
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
  // t: the temperature the map at the top is drawn at (issue 39 P2); this section keeps T = 1
  mhaOne: (t) => '只有 1 个头时 d_head = 8：' + (t === 1 ? '这张热力图和页面最上面的那张相同（d_k = 8 时），'
    : `这张热力图是页面最上面那张在 d_k = 8、T = 1 时的样子（那张现在画的是 T = ${t}；这一节和表格、代码一样仍是 T = 1），`) +
    '多头注意力就是第五期的自注意力，最后多乘一个 W<sub>O</sub>。',
  mhaConcatTitle: '拼接，再乘 W<sub>O</sub>',
  mhaConcatText: '每个头输出一个 (n, d_head) 的矩阵：它自己的权重乘它自己那几列的 V。把各个头的输出按顺序左右拼起来，就回到了 (n, d_model)——下面“拼接”表里每一段就是一个头的输出。' +
    'W<sub>O</sub> 的第 j 行乘的正是拼接的第 j 列，所以它的行也按头分段。',
  mhaConcatName: '拼接',
  mhaOutputText: '输出 = 拼接 · W<sub>O</sub>，形状 (n, 8) · (8, 8) = (n, 8)，和输入 X 一样宽，可以接着送进下一层。W<sub>O</sub> 和另外三个矩阵一样随机初始化、靠训练学习；有了它，每个输出维度都能用上所有头的结果。',
  mhaCodeTitle: '用 PyTorch 复现多头注意力',
  mhaCodeText: '四个矩阵按下面的顺序从种子抽取：先是第五期代码里的 X 和三个 <code>nn.Linear(8, 8, bias=False)</code>（d_k = 8），再多抽一个 <code>nn.Linear(8, 8, bias=False)</code> 作为 W<sub>O</sub>。' +
    '代码只用最基本的张量运算，用 <code>.view</code> 和 <code>.transpose</code> 拆出各个头；它打印的数和本页相同（在 PyTorch 1.13 上验证过，也和 PyTorch 自带的 <code>F.multi_head_attention_forward</code> 一致）。',
};

export const en = {
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
  // t: the temperature the map at the top is drawn at (issue 39 P2); this section keeps T = 1
  mhaOne: (t) => 'With 1 head, d_head = 8: ' + (t === 1 ? 'this heatmap is the one at the top of the page (with d_k = 8)'
    : `this heatmap is the one at the top of the page with d_k = 8 and T = 1 (that one is drawn at T = ${t} now; this section, like the tables and the code, keeps T = 1)`) +
    ', and multi-head attention is episode 05\'s self-attention followed by W<sub>O</sub>.',
  mhaConcatTitle: 'Concatenate, then multiply by W<sub>O</sub>',
  mhaConcatText: 'Each head outputs an (n, d_head) matrix: its own weights times its own columns of V. Side by side, in order, the heads\' outputs make an (n, d_model) matrix again: each band of the concat table below is one head\'s output. ' +
    'Row j of W<sub>O</sub> multiplies column j of the concat, so its rows fall into the same bands.',
  mhaConcatName: 'concat',
  mhaOutputText: 'Output = concat · W<sub>O</sub>, of shape (n, 8) · (8, 8) = (n, 8): as wide as the input X, ready for the next layer. W<sub>O</sub> is initialised at random and learned like the other three; with it, every output dimension can use the results of every head.',
  mhaCodeTitle: 'Reproduce the multi-head attention in PyTorch',
  mhaCodeText: 'The four matrices are drawn from the seed in this order: first X and the three <code>nn.Linear(8, 8, bias=False)</code> of the episode\'s code (d_k = 8), then one more <code>nn.Linear(8, 8, bias=False)</code> for W<sub>O</sub>. ' +
    'The code uses plain tensor operations and splits the heads with <code>.view</code> and <code>.transpose</code>; it prints the numbers on this page (checked on PyTorch 1.13, and against PyTorch\'s own <code>F.multi_head_attention_forward</code>).',
};
