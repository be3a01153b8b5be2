// page-pe-strings.js - the words of the Embedding + positional-encoding section
// (web/page/page-pe.js), in Chinese (default) and English: T.teach.words once page-strings.js has
// merged them. Plain text where a token is spliced in: the section inserts those parts with
// textContent.

export const zh = { teach: { words: {
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
  diffZero: '差值图：每一格都是 0（只差 float32 舍入误差的格子算作 0）——重排之后两句话的权重相同，模型分不出词序。',
  // issue 39 P10: the verdicts give the difference map's numbers (gap: its largest, 4 decimals)
  verdictRandn: (gap) => ['torch.randn 不看词：', 'B', ' 拿到的 X 和 ', 'A', ' 一行一行完全一样，所以两张热力图按位置逐格相同——模型根本分不出这两句话。' +
    (gap ? `按词对齐（差值图）却最多差 ${gap}：在这里，一个词的权重跟着它的位置走，不跟着词走。` : '') + '选「Embedding + 位置编码」试试。'],
  verdictNoPe: (perm, exact, causal, gap) => (exact
    ? ['没有位置编码时，', 'B', ' 就是 ', 'A', ` 的行和列按 ${perm} 重新排列：每一格都相等（最多差 float32 的舍入误差）。自注意力只知道有哪些词，不知道它们的顺序——「猫吃鱼」和「鱼吃猫」对它来说是同一件事。`]
    : causal
      ? ['没有位置编码，但开着因果遮蔽：遮蔽本身就知道谁在前谁在后，所以 ', 'B', ` 按 ${perm} 重排后也不等于 `, 'A', `，最多差 ${gap}。关掉遮蔽再看。`]
      : ['没有位置编码，', 'B', ` 按 ${perm} 重排后和 `, 'A', ` 却最多差 ${gap}，比 float32 的舍入误差大。`]),
  // causes: with the causal mask on, each cause's own largest difference, the other switched off: { pe, mask }
  verdictPe: (perm, gap, causes) => (causes
    ? ['加上位置编码、又开着因果遮蔽：', 'B', ` 按 ${perm} 重排后和 `, 'A', ` 最多相差 ${gap}。两个原因都有份：只有位置编码（关掉遮蔽）时最多差 ${causes.pe}，只有遮蔽（去掉位置编码）时最多差 ${causes.mask}。` +
      '遮蔽和位置编码一样知道谁在前谁在后；关掉遮蔽，看位置编码自己的那一份。']
    : ['加上位置编码之后，', 'B', ' 不再是 ', 'A', ` 的重排：按 ${perm} 重排后，最大相差 ${gap}。同一个词站在不同的位置，X 的那一行就不同，看别人的方式也跟着变。`]),
  eName: 'E[词]',   // the E table's name, as the texts write it (issue 24)
  xStatus: (n, pe) => `X = E[词]${pe ? ' + PE[位置]' : '（没有位置编码）'}，${n} 行；同一个词的 E 行完全相同。`,
} } };

export const en = { teach: { words: {
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
  diffZero: 'The difference map: every cell is 0 (a gap at float32 rounding counts as 0). Aligned, the two sentences have the same weights: the model cannot tell the word order.',
  // issue 39 P10: the verdicts give the difference map's numbers (gap: its largest, 4 decimals)
  verdictRandn: (gap) => ['torch.randn ignores the words: ', 'B', ' gets the X of ', 'A', ' row for row, so the two heatmaps hold the same numbers position by position: the model cannot tell the sentences apart. ' +
    (gap ? `Aligned word by word (the difference map) they differ by up to ${gap}: here a word's weights follow its position, not the word. ` : '') + 'Try “Embedding + positions”.'],
  verdictNoPe: (perm, exact, causal, gap) => (exact
    ? ['Without positional encoding, ', 'B', ' is ', 'A', ` with its rows and columns reordered ${perm}: every cell is equal (to float32 rounding). Self-attention knows which words there are, not their order: “cat eats fish” and “fish eats cat” are the same to it.`]
    : causal
      ? ['No positional encoding, but the causal mask is on: the mask itself knows who comes first, so ', 'B', ` reordered by ${perm} is not `, 'A', `: they differ by up to ${gap}. Switch the mask off and look again.`]
      : ['No positional encoding, yet ', 'B', ` reordered by ${perm} differs from `, 'A', ` by up to ${gap}, more than float32 rounding.`]),
  // causes: with the causal mask on, each cause's own largest difference, the other switched off: { pe, mask }
  verdictPe: (perm, gap, causes) => (causes
    ? ['With positional encoding and the causal mask, ', 'B', ` reordered by ${perm} differs from `, 'A', ` by up to ${gap}, and both play a part: with PE alone (the mask off) the gap is ${causes.pe}, with the mask alone (no PE) ${causes.mask}. ` +
      'The mask knows who comes first as PE does: switch it off to see what PE does on its own.']
    : ['With positional encoding, ', 'B', ' is no longer a reordering of ', 'A', `: reordered by ${perm}, the weights differ by up to ${gap}. The same word at another position has another row of X, and looks at the others differently.`]),
  eName: 'E[token]',
  xStatus: (n, pe) => `X = E[token]${pe ? ' + PE[position]' : ' (no positional encoding)'}, ${n} rows; the same word has the same row of E.`,
} } };
