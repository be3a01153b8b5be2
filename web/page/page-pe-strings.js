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
  diffZero: '差值图：每一格都是 0——重排之后两句话的权重完全相同，模型分不出词序。',
  verdictRandn: ['torch.randn 不看词：', 'B', ' 拿到的 X 和 ', 'A', ' 一模一样，两张热力图也完全相同——模型根本分不出这两句话。选「Embedding + 位置编码」试试。'],
  verdictNoPe: (perm, exact, causal) => (causal && !exact
    ? ['没有位置编码，但开着因果遮蔽：遮蔽本身就知道谁在前谁在后，所以 ', 'B', ` 按 ${perm} 重排后也不等于 `, 'A', '。关掉遮蔽再看。']
    : ['没有位置编码时，', 'B', ' 就是 ', 'A', ` 的行和列按 ${perm} 重新排列：每一格都完全相等。自注意力只知道有哪些词，不知道它们的顺序——「猫吃鱼」和「鱼吃猫」对它来说是同一件事。`]),
  verdictPe: (perm, gap) => ['加上位置编码之后，', 'B', ' 不再是 ', 'A', ` 的重排：按 ${perm} 重排后，最大相差 ${gap}。同一个词站在不同的位置，X 的那一行就不同，看别人的方式也跟着变。`],
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
  diffZero: 'The difference map: every cell is 0. Aligned, the two sentences have exactly the same weights: the model cannot tell the word order.',
  verdictRandn: ['torch.randn ignores the words: ', 'B', ' gets exactly the X of ', 'A', ', and the two heatmaps are identical: the model cannot tell the sentences apart. Try “Embedding + positions”.'],
  verdictNoPe: (perm, exact, causal) => (causal && !exact
    ? ['No positional encoding, but the causal mask is on: the mask itself knows who comes first, so ', 'B', ` reordered by ${perm} is not `, 'A', '. Switch the mask off and look again.']
    : ['Without positional encoding, ', 'B', ' is ', 'A', ` with its rows and columns reordered ${perm}: every cell is exactly equal. Self-attention knows which words there are, not their order: “cat eats fish” and “fish eats cat” are the same to it.`]),
  verdictPe: (perm, gap) => ['With positional encoding, ', 'B', ' is no longer a reordering of ', 'A', `: reordered by ${perm}, the weights differ by up to ${gap}. The same word at another position has another row of X, and looks at the others differently.`],
  eName: 'E[token]',
  xStatus: (n, pe) => `X = E[token]${pe ? ' + PE[position]' : ' (no positional encoding)'}, ${n} rows; the same word has the same row of E.`,
} } };
