// page-format.js - numbers as the page prints them, and the PyTorch snippet that reproduces
// the page. Pure functions: no DOM, testable in Node.
import { fixed as decimals } from '../heatmap/text.js';
import * as SNIPPET from '../strings/snippets.js';
import { D_MODEL, shortestFloat32 } from './page-state.js';
import { embedLines } from './page-pe.js';

/**
 * A value as the page prints it (tables, inputs, the explanation): d decimals, never "-0.0000";
 * beyond 1e6, and non-zero but below 10^-d (which d decimals would print as 0), in scientific
 * notation with d - 1 decimals, as JavaScript and Python read it back: 1.124e16, -3.052e-5.
 */
export function fixed(x, d) {
  const a = Math.abs(x);
  if (Number.isFinite(x) && x !== 0 && (a >= 1e6 || a < 10 ** -d)) return x.toExponential(Math.max(1, d - 1)).replace('e+', 'e');
  return decimals(x, d);
}

/** Decimals without trailing zeros (keeping one): 0.37, 0.0, 2.0, -1.1258, 1.1e16. As the article writes them. */
const trim = (s) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '.0') : s);

/** Up to d decimals without trailing zeros, keeping one: 0.37, 0.0, 2.0, -1.1258. As the article writes them. */
export function short(x, d = 4) {
  const [m, e] = fixed(x, d).split('e');
  return e === undefined ? trim(m) : `${trim(m)}e${e}`;
}

/**
 * Numbers of one line of arithmetic, in one notation: short()'s, or, when one of them needs
 * scientific notation, all of them in it with 3 decimals (0 as 0.0), so that a line never reads
 * 0.0002 ÷ 2 = 8.939e-5 but 1.788e-4 ÷ 2 = 8.939e-5.
 */
export function alike(...xs) {
  if (!xs.some((x) => short(x).includes('e'))) return xs.map((x) => short(x));
  return xs.map((x) => (x === 0 ? '0.0' : x.toExponential(3).replace('e+', 'e')));
}

/** A number in the explanation's arithmetic (exp and sums): 4 decimals, or 3.355×10^-4 where that would hide it. */
export function num(x) {
  if (Number.isFinite(x) && x !== 0 && (Math.abs(x) < 1e-3 || Math.abs(x) >= 1e6)) {
    const [m, e] = x.toExponential(3).split('e');
    return `${m}×10^${Number(e)}`;
  }
  return decimals(x, 4);
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
export function pythonSnippet({ tokens, seed, dk, causal, x, input, pe }, lang = 'zh') {
  const s = SNIPPET[lang] ?? SNIPPET.zh, t = s.ep05;
  const n = tokens.length;
  const L = snippetHead(s, seed, tokens);
  if (input === 'embed') {
    // X = E[token] + PE(position), web/page/page-pe.js
    L.push(...embedLines(s, { tokens, seed, pe }), ...editedX(s.pe, x), '', `d_k = ${dk}  # ${t.single}`, '');
  } else {
    L.push(`# X: ${t.randn}, (${n}, ${D_MODEL})`);
    L.push(`X = torch.randn(${n}, ${D_MODEL})`, ...editedX(s, x), '');
    L.push(`d_model = ${D_MODEL}`, `d_k = ${dk}  # ${t.single}`, '');
  }
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

/**
 * The snippet for the √d_k demonstration: `samples` draws per d_k after one manual_seed, as the
 * page draws them; it prints the first draw's first row (the bars) and the averages.
 */
export function scalingSnippet(seed, dks, n, lang = 'zh', samples = 1) {
  const t = (lang === 'en' ? SNIPPET.en : SNIPPET.zh).scaling;
  return [
    'import torch',
    'import torch.nn.functional as F',
    '',
    'torch.set_printoptions(precision=4)',
    `for d_k in [${dks.join(', ')}]:`,
    `    torch.manual_seed(${seed})`,
    '    scores = []',
    `    for _ in range(${samples}):`,
    `        q = torch.randn(${n}, d_k)   # ${t.queries(n)}`,
    `        k = torch.randn(${n}, d_k)   # ${t.keys(n)}`,
    '        scores.append(q @ k.T)',
    `    scores = torch.stack(scores)     # (${samples}, ${n}, ${n})`,
    `    print(d_k, ${t.std}, round(scores.std().item(), 4))`,
    '    for name, s in [(' + t.scaled + ', scores / d_k ** 0.5), (' + t.unscaled + ', scores)]:',
    '        w = F.softmax(s, dim=-1)',
    '        print(name, w[0, 0], round(w.amax(-1).mean().item(), 4))',
    '',
  ].join('\n');
}
