// page-format.js - numbers as the page prints them, and the PyTorch snippet that reproduces
// the page. Pure functions: no DOM, testable in Node.
import { D_MODEL, shortestFloat32 } from './page-state.js';

/** Fixed decimals, never "-0.0000". */
export function fixed(x, d = 4) {
  const s = x.toFixed(d);
  return /^-0\.?0*$/.test(s) ? s.slice(1) : s;
}

/** Up to d decimals without trailing zeros, keeping one: 0.37, 0.0, 2.0, -1.1258. As the article writes them. */
export function short(x, d = 4) {
  const s = fixed(x, d);
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '.0') : s;
}

/** A factor in a product: negative numbers in parentheses, "(-0.1234)". */
export const factor = (x, d = 4) => { const s = short(x, d); return s.startsWith('-') ? `(${s})` : s; };

/** Python source for a float32 value (shortest round trip). */
const py = (v) => { const s = shortestFloat32(v); return /[.e]/.test(s) ? s : `${s}.0`; };

const TEXT = {
  zh: {
    seed: '与本页相同的随机种子',
    sentence: '分词',
    randn: '经过 Embedding + Positional Encoding 之后的输入',
    edited: '你在页面上改过的 X（上一行的 randn 仍要保留：它推进了随机数，后面的 W 才一致）',
    single: '单头注意力，先不拆分维度',
    step1: '第一步：算相似度', step2: '第二步：缩放', step3: '第三步：归一化成权重', step4: '第四步：加权求和',
    causal: '因果遮蔽：每个词只看自己和前面的词',
    rows: '，每一行加起来等于 1',
    printW: '注意力权重矩阵：\\n', printO: '输出：\\n',
    layout: '本页表格里的 W_Q 就是 W_q.weight.T（nn.Linear 算的是 X @ weight.T）',
  },
  en: {
    seed: 'the same random seed as the page',
    sentence: 'tokens',
    randn: 'the input after Embedding + Positional Encoding',
    edited: 'the X you edited on the page (keep the randn line above: it advances the generator, so the W below match)',
    single: 'single head: no split of the width yet',
    step1: 'step 1: similarity', step2: 'step 2: scale', step3: 'step 3: normalise into weights', step4: 'step 4: weighted sum',
    causal: 'causal mask: each token sees only itself and earlier tokens',
    rows: ', each row sums to 1',
    printW: 'attention weights:\\n', printO: 'output:\\n',
    layout: "the page's W_Q is W_q.weight.T (nn.Linear computes X @ weight.T)",
  },
};

/**
 * The EP05 section-6 snippet with torch.manual_seed(seed) in front, for the page's state.
 * Tokens go in as a JSON string list inside a comment: JSON escapes every control character,
 * so a token cannot end the comment line.
 */
export function pythonSnippet({ tokens, seed, dk, causal, x }, lang = 'zh') {
  const t = TEXT[lang] ?? TEXT.zh;
  const n = tokens.length;
  const L = [];
  L.push('import torch', 'import torch.nn.functional as F', '');
  L.push(`torch.manual_seed(${seed})  # ${t.seed}`, '');
  L.push(`# ${t.sentence}: ${JSON.stringify(tokens)}, d_model = ${D_MODEL}`);
  L.push(`# X: ${t.randn}, (${n}, ${D_MODEL})`);
  L.push(`X = torch.randn(${n}, ${D_MODEL})`);
  if (x) {
    L.push(`# ${t.edited}`);
    L.push('X = torch.tensor([');
    for (const row of x) L.push(`    [${row.map(py).join(', ')}],`);
    L.push('])');
  }
  L.push('');
  L.push(`d_model = ${D_MODEL}`, `d_k = ${dk}  # ${t.single}`, '');
  L.push('W_q = torch.nn.Linear(d_model, d_k, bias=False)');
  L.push('W_k = torch.nn.Linear(d_model, d_k, bias=False)');
  L.push('W_v = torch.nn.Linear(d_model, d_k, bias=False)');
  L.push(`# ${t.layout}`, '');
  L.push(`Q = W_q(X)   # (${n}, ${dk})`, `K = W_k(X)   # (${n}, ${dk})`, `V = W_v(X)   # (${n}, ${dk})`, '');
  L.push(`# ${t.step1}`, `scores = Q @ K.T                      # (${n}, ${n})`, '');
  L.push(`# ${t.step2}`, 'scores = scores / (d_k ** 0.5)', '');
  if (causal) {
    L.push(`# ${t.causal}`);
    L.push(`mask = torch.ones(${n}, ${n}, dtype=torch.bool).triu(1)`);
    L.push("scores = scores.masked_fill(mask, float('-inf'))", '');
  }
  L.push(`# ${t.step3}`, `attn_weights = F.softmax(scores, dim=-1)   # (${n}, ${n})${t.rows}`, '');
  L.push(`# ${t.step4}`, `output = attn_weights @ V             # (${n}, ${dk})`, '');
  L.push('torch.set_printoptions(precision=4)');
  L.push(`print("${t.printW}", attn_weights)`);
  L.push(`print("${t.printO}", output)`);
  return L.join('\n') + '\n';
}

/** The snippet for the √d_k demonstration. */
export function scalingSnippet(seed, dks, n, lang = 'zh') {
  const zh = lang !== 'en';
  return [
    'import torch',
    'import torch.nn.functional as F',
    '',
    'torch.set_printoptions(precision=4)',
    `for d_k in [${dks.join(', ')}]:`,
    `    torch.manual_seed(${seed})`,
    `    q = torch.randn(${n}, d_k)   # ${zh ? `${n} 个查询，每一维都是独立的标准正态分布` : `${n} queries, every entry independent standard normal`}`,
    `    k = torch.randn(${n}, d_k)   # ${zh ? `${n} 个键` : `${n} keys`}`,
    '    scores = q @ k.T',
    `    print(d_k, ${zh ? '"标准差"' : '"std"'}, round(scores.std().item(), 4))`,
    `    print(${zh ? '"  ÷√d_k："' : '"  scaled:  "'}, F.softmax(scores / d_k ** 0.5, dim=-1)[0])`,
    `    print(${zh ? '"  不缩放："' : '"  unscaled:"'}, F.softmax(scores, dim=-1)[0])`,
    '',
  ].join('\n');
}
