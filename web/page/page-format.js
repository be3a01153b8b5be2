// page-format.js - numbers as the page prints them, and the PyTorch snippet that reproduces
// the page. Pure functions: no DOM, testable in Node.
import { fixed } from '../heatmap/text.js';
import * as SNIPPET from '../strings/snippets.js';
import { D_MODEL, shortestFloat32 } from './page-state.js';

export { fixed };

/** Up to d decimals without trailing zeros, keeping one: 0.37, 0.0, 2.0, -1.1258. As the article writes them. */
export function short(x, d = 4) {
  const s = fixed(x, d);
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '.0') : s;
}

/** A factor in a product: negative numbers in parentheses, "(-0.1234)". */
export const factor = (x, d = 4) => { const s = short(x, d); return s.startsWith('-') ? `(${s})` : s; };

/** Python source for a float32 value (shortest round trip). */
const py = (v) => { const s = shortestFloat32(v); return /[.e]/.test(s) ? s : `${s}.0`; };

/** The lines both snippets open with (s: strings/snippets.js): the imports, the seed, the tokens. */
export const snippetHead = (s, seed, tokens) => ['import torch', 'import torch.nn.functional as F', '',
  `torch.manual_seed(${seed})  # ${s.seed}`, '', `# ${s.sentence}: ${JSON.stringify(tokens)}, d_model = ${D_MODEL}`];

/** The reader's edited X as a tensor literal, after its comment; nothing for the random X. */
export const editedX = (s, x) => (x
  ? [`# ${s.edited}`, 'X = torch.tensor([', ...x.map((row) => `    [${row.map(py).join(', ')}],`), '])'] : []);

/**
 * The EP05 section-6 snippet with torch.manual_seed(seed) in front, for the page's state.
 * Tokens go in as a JSON string list inside a comment: JSON escapes every control character,
 * so a token cannot end the comment line.
 */
export function pythonSnippet({ tokens, seed, dk, causal, x }, lang = 'zh') {
  const s = SNIPPET[lang] ?? SNIPPET.zh, t = s.ep05;
  const n = tokens.length;
  const L = snippetHead(s, seed, tokens);
  L.push(`# X: ${t.randn}, (${n}, ${D_MODEL})`);
  L.push(`X = torch.randn(${n}, ${D_MODEL})`, ...editedX(s, x), '');
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
  L.push(`print("${s.printO}", output)`);
  return L.join('\n') + '\n';
}

/** The snippet for the √d_k demonstration. */
export function scalingSnippet(seed, dks, n, lang = 'zh') {
  const t = (lang === 'en' ? SNIPPET.en : SNIPPET.zh).scaling;
  return [
    'import torch',
    'import torch.nn.functional as F',
    '',
    'torch.set_printoptions(precision=4)',
    `for d_k in [${dks.join(', ')}]:`,
    `    torch.manual_seed(${seed})`,
    `    q = torch.randn(${n}, d_k)   # ${t.queries(n)}`,
    `    k = torch.randn(${n}, d_k)   # ${t.keys(n)}`,
    '    scores = q @ k.T',
    `    print(d_k, ${t.std}, round(scores.std().item(), 4))`,
    `    print(${t.scaled}, F.softmax(scores / d_k ** 0.5, dim=-1)[0])`,
    `    print(${t.unscaled}, F.softmax(scores, dim=-1)[0])`,
    '',
  ].join('\n');
}
