// page-rope-strings.js - the words of the page's RoPE section (web/page/page-rope.js), in Chinese
// and English. Strings set with innerHTML (text, pairsText, shiftText, orderText, pairsCaption)
// are trusted: they never hold the reader's tokens, which the section inserts as text.
// The page counts from 1 in text and tables, from 0 in code and formulas (issue 39 P4): a word is
// the sentence's word i + 1, and its position in RoPE's formula is p = i; the pairs table's row 1
// is pair i = 0 of the formula.

export const zh = {
  kicker: '延伸：今天的模型怎样编码位置',
  title: 'RoPE：把位置转进 q 和 k',
  text: '第 04 集把位置编码 PE <em>加</em>在 X 上。LLaMA、Qwen2、Qwen3 这些模型（也就是这个页面的运行时能加载的模型）用的是另一种办法：RoPE（旋转位置编码）。' +
    'X 里只有词本身，算出 q 和 k 之后，再按每个词的<strong>位置</strong>把 q 和 k <strong>旋转</strong>一下：' +
    '把 d 个数分成 d/2 对，第 i 对是 (x[i], x[i + d/2])，在位置 p 上转过角度 p·θ<sub>i</sub>，其中 θ<sub>i</sub> = base<sup>−2i/d</sup>。' +
    '前面的对转得快，后面的对转得慢。v 不转。这样 q<sub>i</sub>·k<sub>j</sub> 只和两个词的<strong>相对距离</strong> j − i 有关。' +
    '下面每个数都由 C 核心算出（attn.rope，再用 attn.attention 求注意力），与 PyTorch 按 Hugging Face LLaMA 的 rotate_half 写法算的结果对照过。',
  setup: (base, seed, dk, pairs) => `X = E[词]（第 04 集的词向量，不加 PE），Q = X·W_Q，K = X·W_K，种子 ${seed}，d_k = ${dk}（${pairs} 对），base = ${base}（LLaMA 2 的 rope_theta；Qwen2 用 1000000）。注意力不加因果遮罩。`,
  pairsTitle: '一个词的 q，一对一对地转',
  pairsText: (i) => `下表是 <span class="tok"></span>（句子的第 ${i + 1} 个词，公式里的位置 p = ${i}）的 q：每一行是一对数，转之前、θ<sub>i</sub>、角度 ${i}·θ<sub>i</sub>（弧度），转之后；第 1 行是公式里的第 i = 0 对。每一对的长度不变，只有方向变了。`,
  pairsCaption: (i, dk) => `q 的 ${dk / 2} 对（第 ${i + 1} 个词，p = ${i}）`,
  pairCols: ['q[i]', 'q[i+d/2]', 'θᵢ', 'p·θᵢ', 'q′[i]', 'q′[i+d/2]'],
  shiftTitle: '整句挪一位，注意力图不变',
  shiftText: '把整句话从位置 p = 0…n−1 挪到 p = 1…n：每个 q 和 k 都多转了一步 θ<sub>i</sub>，可是任意两个词之间的距离没变，所以 q<sub>i</sub>·k<sub>j</sub> 不变，注意力图也不变。',
  positions: (a, b) => `位置 p = ${a}…${b}`,
  shiftCaptions: ['原来的位置', '整句往后挪一位'],
  shiftVerdict: (gap) => `两张图逐格比较，最大差 ${gap}：只是 float32 的舍入误差，两张图相同。`,
  orderTitle: '猫吃鱼和鱼吃猫：同样的词，不同的位置',
  orderText: '不加位置信息时，自注意力只认词不认位置：把句子倒过来，每一行只是换了顺序，「吃」看「猫」和看「鱼」的权重一点不变。加了 RoPE，词还是那些词，位置变了，q·k 就变了。',
  orderCaption: (s) => `${s}（加 RoPE）`,
  orderVerdict: ['ROW', ' 这一行：在 ', 'A', ' / ', 'B', ' 里看每个词的权重（灰字是不加 RoPE 时，两种语序一样）：'],
  without: (v) => `（不加 RoPE：${v}）`,
  orderGap: (gap, plain) => `加 RoPE 后两种语序最多差 ${gap}；不加 RoPE 时差 ${plain}。`,
};

export const en = {
  kicker: 'Further: how today\'s models encode position',
  title: 'RoPE: turning position into q and k',
  text: 'Episode 04 <em>added</em> a positional encoding PE to X. LLaMA, Qwen2 and Qwen3 (models this page\'s runtime loads) do it differently, with RoPE, rotary position embedding. ' +
    'X holds only the words; once q and k are computed, each is <strong>rotated</strong> by its token\'s <strong>position</strong>: ' +
    'the d numbers form d/2 pairs, pair i being (x[i], x[i + d/2]), and at position p pair i turns by the angle p·θ<sub>i</sub>, with θ<sub>i</sub> = base<sup>−2i/d</sup>. ' +
    'The first pairs turn fast, the last ones slowly. v is not rotated. Then q<sub>i</sub>·k<sub>j</sub> depends only on the <strong>distance</strong> j − i between the two tokens. ' +
    'Every number below comes from the C core (attn.rope, then attn.attention), checked against PyTorch running Hugging Face LLaMA\'s rotate_half layout.',
  setup: (base, seed, dk, pairs) => `X = E[token] (episode 04's embeddings, no PE), Q = X·W_Q, K = X·W_K, seed ${seed}, d_k = ${dk} (${pairs} pairs), base = ${base} (LLaMA 2's rope_theta; Qwen2 uses 1000000). No causal mask.`,
  pairsTitle: 'One token\'s q, turned pair by pair',
  pairsText: (i) => `The table shows the q of <span class="tok"></span> (token ${i + 1} of the sentence, at position p = ${i} in the formula): one pair per row, before, θ<sub>i</sub>, the angle ${i}·θ<sub>i</sub> (radians), and after; row 1 is the formula's pair i = 0. Each pair keeps its length; only its direction changes.`,
  pairsCaption: (i, dk) => `the ${dk / 2} pairs of q (token ${i + 1}, p = ${i})`,
  pairCols: ['q[i]', 'q[i+d/2]', 'θᵢ', 'p·θᵢ', 'q′[i]', 'q′[i+d/2]'],
  shiftTitle: 'Move the whole sentence one place: the same map',
  shiftText: 'Move the sentence from positions p = 0…n−1 to p = 1…n: every q and k turns one more step θ<sub>i</sub>, but the distance between any two tokens stays the same, so q<sub>i</sub>·k<sub>j</sub> stays the same, and so does the attention map.',
  positions: (a, b) => `positions p = ${a}…${b}`,
  shiftCaptions: ['where the words stand', 'the whole sentence one place later'],
  shiftVerdict: (gap) => `Cell by cell, the two maps differ by at most ${gap}: float32 rounding, nothing more. They are the same map.`,
  orderTitle: '猫吃鱼 and 鱼吃猫: the same words at other positions',
  orderText: 'Without position information, self-attention sees the words and not their places: reverse the sentence and each row is only reordered: the weight 吃 gives 猫, and the one it gives 鱼, stay exactly what they were. With RoPE the words are the same, their positions are not, and so q·k changes.',
  orderCaption: (s) => `${s} (with RoPE)`,
  orderVerdict: ['The row of ', 'ROW', ': its weight on each word in ', 'A', ' / ', 'B', ' (in grey: without RoPE, the same in both orders):'],
  without: (v) => `(without RoPE: ${v})`,
  orderGap: (gap, plain) => `With RoPE the two orders differ by up to ${gap}; without RoPE by ${plain}.`,
};
