// strings/snippets.js - the comments and printed labels of the page's PyTorch snippets, in Chinese
// and English: episode 05 (web/page/page-format.js), the √d_k demonstration, and episode 06
// (web/page/page-mha.js). The snippets are plain text (textContent).

export const zh = {
  seed: '与本页相同的随机种子',
  sentence: '分词',
  edited: '你在页面上改过的 X（上一行的 randn 仍要保留：它推进了随机数，后面的 W 才一致）',
  printO: '输出：\\n',
  ep05: {
    randn: '经过 Embedding + Positional Encoding 之后的输入',
    single: '单头注意力，先不拆分维度',
    step1: '第一步：算相似度', step2: '第二步：缩放', step3: '第三步：归一化成权重', step4: '第四步：加权求和',
    causal: '因果遮蔽：每个词只看自己和前面的词',
    rows: '，每一行加起来等于 1',
    printW: '注意力权重矩阵：\\n',
    layout: '本页表格里的 W_Q 就是 W_q.weight.T（nn.Linear 算的是 X @ weight.T）',
  },
  scaling: {
    queries: (n) => `${n} 个查询，每一维都是独立的标准正态分布`,
    keys: (n) => `${n} 个键`,
    std: '"标准差"', scaled: '"  ÷√d_k："', unscaled: '"  不缩放："',
  },
  ep06: {
    randn: '和第五期一样，先抽 X',
    dHead: (w) => `每个头的宽度 d_head = d_model ÷ 头数 = ${w}`,
    same: '和第五期相同的三个投影（d_k = d_model = 8）……',
    wo: '……再多一个输出投影 W_o（第六期新增）',
    split: '投影之后拆成 num_heads 份：(n, d_model) -> (n, num_heads, d_head) -> (num_heads, n, d_head)',
    cols: '头 h 用的是第 h*d_head 到 (h+1)*d_head-1 列，也就是 W_q.weight.T 的这几列',
    four: '每个头各做一遍第五期的四步，缩放用 √d_head，softmax 按头分别做',
    causal: '因果遮蔽：每个词只看自己和前面的词（对每个头都一样）',
    weights: '每个头一张热力图',
    concat: '拼接：(num_heads, n, d_head) -> (n, num_heads, d_head) -> (n, d_model)',
    out: '乘 W_O：各个头的结果在这里混合',
    printW: '每个头的注意力权重：\\n',
  },
};

export const en = {
  seed: 'the same random seed as the page',
  sentence: 'tokens',
  edited: 'the X you edited on the page (keep the randn line above: it advances the generator, so the W below match)',
  printO: 'output:\\n',
  ep05: {
    randn: 'the input after Embedding + Positional Encoding',
    single: 'single head: no split of the width yet',
    step1: 'step 1: similarity', step2: 'step 2: scale', step3: 'step 3: normalise into weights', step4: 'step 4: weighted sum',
    causal: 'causal mask: each token sees only itself and earlier tokens',
    rows: ', each row sums to 1',
    printW: 'attention weights:\\n',
    layout: "the page's W_Q is W_q.weight.T (nn.Linear computes X @ weight.T)",
  },
  scaling: {
    queries: (n) => `${n} queries, every entry independent standard normal`,
    keys: (n) => `${n} keys`,
    std: '"std"', scaled: '"  scaled:  "', unscaled: '"  unscaled:"',
  },
  ep06: {
    randn: 'X first, as in episode 05',
    dHead: (w) => `width of each head: d_head = d_model / num_heads = ${w}`,
    same: 'the same three projections as episode 05 (d_k = d_model = 8) ...',
    wo: '... plus one output projection W_o (new in episode 06)',
    split: 'after the projection, split into num_heads parts: (n, d_model) -> (n, num_heads, d_head) -> (num_heads, n, d_head)',
    cols: 'head h uses columns h*d_head to (h+1)*d_head-1, i.e. those columns of W_q.weight.T',
    four: 'each head runs the four steps of episode 05, scaled by √d_head; softmax per head',
    causal: 'causal mask: each token sees only itself and earlier tokens (the same for every head)',
    weights: 'one heatmap per head',
    concat: 'concatenate: (num_heads, n, d_head) -> (n, num_heads, d_head) -> (n, d_model)',
    out: 'multiply by W_O: this is where the heads are mixed',
    printW: 'attention weights of each head:\\n',
  },
};

// issue 14: X = E[token] + PE(position) (web/page/page-pe.js, embedLines)
zh.pe = {
  embed: 'Embedding（EP03）：按词查表，同一个词不管站在哪里，永远是同一个向量',
  table: '这里没有训练好的词表：每个词的向量是 torch.randn(8)，生成器的种子是「种子 词」的 FNV-1a 哈希',
  fnv: 'FNV-1a（32 位）',
  same: '同一个词的行完全相同',
  pe: 'Positional Encoding（EP04）：正弦位置编码，用 float64 算，存进 float32',
  pos: '位置 0, 1, 2, …，形状 (n, 1)',
  off: '关掉了位置编码：X 只知道有哪些词，不知道它们的顺序',
  edited: '你在页面上改过的 X（上面的 E 和 PE 不影响 W：它们用的是各自的生成器）',
};

en.pe = {
  embed: 'Embedding (episode 03): a lookup by the word, so the same word is the same vector wherever it stands',
  table: 'no trained table here: each word\'s vector is torch.randn(8) from a generator seeded with the FNV-1a hash of "seed word"',
  fnv: 'FNV-1a (32 bit)',
  same: 'the same word gives the same row',
  pe: 'Positional Encoding (episode 04): the sinusoidal encoding, computed in float64, stored in float32',
  pos: 'positions 0, 1, 2, ..., shape (n, 1)',
  off: 'positional encoding switched off: X knows which words there are, not their order',
  edited: 'the X you edited on the page (E and PE above do not affect W: they use generators of their own)',
};
