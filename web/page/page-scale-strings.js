// page-scale-strings.js - the words of the main heatmap's view (web/page/page-scale.js: its colour
// scale, temperature and row entropy), in Chinese (default) and English: T.teach.view once
// page-strings.js has merged them.

export const zh = { teach: { view: {
  colourLabel: '色标',
  scales: { unit: '0–1', data: '数据范围', log: '对数' },
  // issue 24: which scale is on (page-scale.js colourNote)
  scaleOn: (name, lo, hi, key) => `现在的色标：${name}` + (key === 'unit' ? '（0 最暗，1 最亮）' : `（这张图的权重 ${lo} – ${hi}）`) + '。',
  scaleWhy: (key, hi, limit) => (key === 'data'
    ? `这是这张图的默认：它最大的权重只有 ${hi}（不超过 ${limit}），用 0–1 的话几乎所有格子都是同一种深紫色。`
    : `这是这张图的默认：最大的权重 ${hi} 在 0–1 上看得清楚；权重都不超过 ${limit} 的图（长句子）默认用数据范围。`),
  scaleChosen: '这是你选的色标（写在链接里）。',
  // issue 39 P7: the scale of the maps of weights further down (page-scale.js sharedScale), said under them
  mapsScale: (name, lo, hi, key, chosen) => '这几张权重图共用一个色标：' + (key === 'unit' ? '0（最暗）到 1（最亮）' : `${name}，${lo}（最暗）到 ${hi}（最亮）`) +
    (chosen ? '，和最上面那张图一样是你选的。' : key === 'unit' ? '。' : '：权重都很小，用 0–1 的话几乎所有格子都是同一种深紫色（规则和最上面那张图相同）。'),
  tempLabel: '温度',
  tempNote: (t, dk) => (t === 1
    ? `T = 1 就是文章的公式 softmax(QKᵀ/√${dk})。这里的温度缩放的是注意力分数（softmax 之前除以 T），不是生成文字时采样用的温度。T 越小，每一行越接近只看一个词；T 越大，越接近平均。`
    : `这张热力图是 softmax(QKᵀ / (${t}·√${dk}))：温度缩放的是注意力分数，不是采样。它只改变这张图和「这一格是怎么算出来的」，下面的表格和代码仍是 T = 1。`),
  // issue 39 P2: after the note under the map that the Python code prints the same numbers, at T ≠ 1
  codeAtTemp: (t) => `（那是 T = 1 的数：这张图现在画的是 T = ${t}，代码和下面的表格一样仍是 T = 1。）`,
  entropyHead: (max, n) => `每一行的熵（单位：比特，−Σ w·log₂w）：0 表示只看一个词，最大 log₂${n} = ${max} 表示完全平均`,
  entropyHeadCausal: (n) => `每一行的熵（单位：比特，−Σ w·log₂w）：0 表示只看一个词。因果遮蔽下，第 k 行只能看到 k 个词（第 1 行 1 个，第 ${n} 行 ${n} 个），最大是 log₂k，表示在这 k 个词上完全平均；每一行的条按它自己的最大值画满。`,
  bits: '比特',
} } };

export const en = { teach: { view: {
  colourLabel: 'Colour scale',
  scales: { unit: '0–1', data: 'data range', log: 'log' },
  // issue 24: which scale is on (page-scale.js colourNote)
  scaleOn: (name, lo, hi, key) => `Colour scale on: ${name}` + (key === 'unit' ? ' (0 darkest, 1 brightest).' : ` (this map's weights, ${lo} – ${hi}).`),
  scaleWhy: (key, hi, limit) => (key === 'data'
    ? ` This map's default: its largest weight is only ${hi} (at most ${limit}); on 0–1 nearly every cell would be the same dark purple.`
    : ` This map's default: its largest weight, ${hi}, reads well on 0–1; maps whose weights are all ${limit} or less (long sentences) default to the data range.`),
  scaleChosen: ' You chose this scale (it is kept in the link).',
  // issue 39 P7: the scale of the maps of weights further down (page-scale.js sharedScale), said under them
  mapsScale: (name, lo, hi, key, chosen) => 'These maps of weights share one colour scale: ' + (key === 'unit' ? '0 (darkest) to 1 (brightest)' : `${name}, ${lo} (darkest) to ${hi} (brightest)`) +
    (chosen ? ', the one you chose for the map at the top.' : key === 'unit' ? '.' : ': the weights are all small, and on 0–1 nearly every cell would be the same dark purple (the rule of the map at the top).'),
  tempLabel: 'Temperature',
  tempNote: (t, dk) => (t === 1
    ? `T = 1 is the episode's formula softmax(QKᵀ/√${dk}). This temperature scales the attention scores (divided by T before the softmax), not the sampling of generated text. A smaller T pushes each row towards a single token; a larger T towards an even spread.`
    : `This heatmap is softmax(QKᵀ / (${t}·√${dk})): the temperature scales the attention scores, not sampling. It changes only this picture and “How this cell is computed”; the tables and the code below keep T = 1.`),
  // issue 39 P2: after the note under the map that the Python code prints the same numbers, at T ≠ 1
  codeAtTemp: (t) => ` (Those are the numbers at T = 1: this map is drawn at T = ${t} now; the code, like the tables below, keeps T = 1.)`,
  entropyHead: (max, n) => `Entropy of each row in bits (−Σ w·log₂w): 0 means a single token, the most, log₂${n} = ${max}, an even spread`,
  entropyHeadCausal: (n) => `Entropy of each row in bits (−Σ w·log₂w): 0 means a single token. Under the causal mask row k sees only k tokens (row 1 one, row ${n} all ${n}), so its most is log₂k, an even spread over those k; each row's bar is full at its own most.`,
  bits: 'bits',
} } };
