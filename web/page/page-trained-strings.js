// page-trained-strings.js - the words of the trained toy model's section (web/page/page-trained.js),
// in Chinese (default) and English: T.models.trained once page-strings.js has merged them.
// Captions are arrays: 'ROW' and 'KEY' are where the row's token and the token it looks at go,
// as text. Layers and heads (l, h) come in as indices from 0, as the code counts; the texts print
// them from 1, as people count (issue 24); caption's pos is already from 1.

const WHERE_ZH = { self: '（它自己）', first: '（句子的第一个字）', previous: '（它前面那个字）', other: '' };
const WHERE_EN = { self: ' (itself)', first: ' (the first character)', previous: ' (the character before it)', other: '' };

export const zh = { models: { trained: {
  title: '随机权重，还是训练过的模型？',
  text: '上面所有的热力图都用文章的随机权重（X 来自 <code>torch.randn</code>，W<sub>Q</sub>、W<sub>K</sub>、W<sub>V</sub> 是 <code>nn.Linear</code> 默认的均匀分布初始化）：它们的图案是随机数的图案，不是模型学到的东西。' +
    '切换到「训练过的玩具模型」，一句话（按字读：猫 吃 鱼 → 猫吃鱼）交给一个真的训练过的小模型，看它每一层、每一个头的注意力：先是一句它的头要真正做选择的话，一键换成页面上的句子。',
  modeLabel: '权重',
  modes: { random: '文章的随机权重', trained: '训练过的玩具模型' },
  rowLabel: '说明哪一行：',
  loading: '正在加载玩具模型（约 200 KB，只在第一次切换时加载）……',
  loadFailed: (m) => `玩具模型加载失败：${m}`,
  // t: the temperature the map at the top is drawn at (issue 39 P2); this section keeps T = 1
  randomStatus: (seed, t) => `文章的随机权重，种子 ${seed}：` + (t === 1 ? '和页面最上面的热力图相同。'
    : `和页面最上面的热力图在 T = 1 时相同。那张图现在画的是 T = ${t}；这一张和表格、代码一样仍是 T = 1。`),
  trainedStatus: (L, H) => `玩具模型：${L} 层 × 每层 ${H} 个头，共 ${L * H} 张热力图；每行是一个字在看谁，因果遮蔽（只看自己和前面的字）。`,
  headTitle: (l, h) => `层 ${l + 1} · 头 ${h + 1}`,
  strongestTag: '↑ 说明里的那个头',
  // issue 24: the toy's sentence, the enlarged head, its active cell
  sentenceLabel: '句子',
  sentences: { example: (t) => t, page: (t) => `页面的句子：${t}` },
  thumbLabel: (l, h) => `放大层 ${l + 1} · 头 ${h + 1}`,
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
} } };

export const en = { models: { trained: {
  title: 'Random weights, or a trained model?',
  text: 'Every heatmap above uses the article\'s random numbers (X from <code>torch.randn</code>, W<sub>Q</sub>, W<sub>K</sub>, W<sub>V</sub> from <code>nn.Linear</code>\'s default uniform initialisation): their patterns are the patterns of random numbers, not something a model learned. ' +
    'Switch to “trained toy model” and a sentence, read character by character (猫 吃 鱼 → 猫吃鱼), goes through a small model that was really trained: every layer and every head of it. It starts on a sentence where its heads really choose; one click gives it the page\'s sentence.',
  modeLabel: 'Weights',
  modes: { random: 'Article: random', trained: 'Trained toy model' },
  rowLabel: 'Caption for row:',
  loading: 'Loading the toy model (about 200 KB, only on the first switch)…',
  loadFailed: (m) => `The toy model did not load: ${m}`,
  // t: the temperature the map at the top is drawn at (issue 39 P2); this section keeps T = 1
  randomStatus: (seed, t) => `The article's random weights, seed ${seed}: ` + (t === 1 ? 'the same as the heatmap at the top of the page.'
    : `the heatmap at the top of the page at T = 1. That one is drawn at T = ${t} now; this one, like the tables and the code, keeps T = 1.`),
  trainedStatus: (L, H) => `The toy model: ${L} layers × ${H} heads each, ${L * H} heatmaps; each row is a character looking at the others, with the causal mask (itself and what comes before).`,
  headTitle: (l, h) => `layer ${l + 1} · head ${h + 1}`,
  strongestTag: '↑ the head in the caption',
  // issue 24: the toy's sentence, the enlarged head, its active cell
  sentenceLabel: 'Sentence',
  sentences: { example: (t) => t, page: (t) => `The page's sentence: ${t}` },
  thumbLabel: (l, h) => `Enlarge layer ${l + 1} · head ${h + 1}`,
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
} } };
