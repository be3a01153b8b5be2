#!/usr/bin/python3
"""Golden data for the page's episode-06 section (multi-head attention), web/page-mha.js.

    /usr/bin/python3 tests/golden/make_page_mha.py      # writes tests/golden/page-mha.json

It does not re-type the PyTorch code: for each case it asks web/page/page-mha.js (through node) for the
snippet the page shows, mhaSnippet(state, lang), in Chinese and in English, and runs that very text
with exec(). The snippet is plain torch:

    torch.manual_seed(seed)
    X = torch.randn(n, 8)                                  # as in episode 05
    W_q, W_k, W_v = three nn.Linear(8, 8, bias=False)      # as in episode 05 with d_k = 8
    W_o = nn.Linear(8, 8, bias=False)                      # one more: the output projection
    Q = W_q(X).view(n, num_heads, d_head).transpose(0, 1)  # likewise K, V
    attn_weights = F.softmax(Q @ K.transpose(-2, -1) / d_head ** 0.5, dim=-1)
    concat = (attn_weights @ V).transpose(0, 1).reshape(n, d_model)
    output = W_o(concat)

The script then checks the snippet's numbers against PyTorch's own F.multi_head_attention_forward
(in_proj_weight = [W_q; W_k; W_v], out_proj = W_o), and stores:

- the snippets (both languages) and what the Chinese one prints: tests/page-mha.test.js checks that
  the page still shows exactly this code;
- the inputs in the episode's layout (x (n, 8); wq, wk, wv, wo = weight.T, (8, 8));
- expected: the same computation in float64 from those float32 inputs, and expected_f32: the
  snippet's own float32 tensors. weights (heads, n, n), heads (heads, n, d_head), concat and
  output (n, 8).

Needs node on PATH (for the snippets) and PyTorch 1.13 (apt-get install -y python3-torch). The
random draws follow torch's AVX2 kernels (see make_torch_rng.py): run it on such a machine. The
output is deterministic: the same bytes on every run.
"""
import contextlib
import io
import json
import os
import re
import subprocess
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, 'page-mha.json')

CAT = ['猫', '吃', '鱼']
# The page's state for each case (web/page/page-state.js). x: an X edited on the page, or None.
CASES = [
    ('seed0-heads1', dict(tokens=CAT, seed=0, heads=1, causal=False, x=None)),
    ('seed0-heads2', dict(tokens=CAT, seed=0, heads=2, causal=False, x=None)),
    ('seed0-heads4', dict(tokens=CAT, seed=0, heads=4, causal=False, x=None)),
    ('seed0-heads8', dict(tokens=CAT, seed=0, heads=8, causal=False, x=None)),
    ('seed0-heads2-causal', dict(tokens=CAT, seed=0, heads=2, causal=True, x=None)),
    ('seed42-5tokens-heads4', dict(tokens=['我', '爱', '吃', '小', '鱼'], seed=42, heads=4, causal=False, x=None)),
    ('seed7-edited-x-heads2-causal', dict(tokens=['the', 'cat', 'ate', 'fish'], seed=7, heads=2, causal=True,
                                          x=[[1.5, -0.25, 0.0, 2.0, -1.0, 0.5, 0.125, -2.5],
                                             [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8],
                                             [-1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0],
                                             [3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.0]])),
    # X = E[token] + PE (web/page/page-pe.js, the page's 'embed' mode): the W are drawn right after the seed
    ('seed42-embed-pe-heads2-causal', dict(tokens=['猫', '吃', '鱼', '猫'], seed=42, heads=2, causal=True, x=None, input='embed', pe=True)),
    ('seed0-embed-nope-heads4', dict(tokens=['鱼', '吃', '猫'], seed=0, heads=4, causal=False, x=None, input='embed', pe=False)),
]


def cpu_capability():
    m = re.search(r'CPU capability usage: (\S+)', torch.__config__.show())
    return m.group(1) if m else 'unknown'


def snippets(states):
    """mhaSnippet(state, lang) from web/page/page-mha.js, for every state, in zh and en."""
    js = ("import { mhaSnippet } from './web/page/page-mha.js';\n"
          "const states = JSON.parse(process.argv[1]);\n"
          "process.stdout.write(JSON.stringify(states.map((s) => ({ zh: mhaSnippet(s, 'zh'), en: mhaSnippet(s, 'en') }))));\n")
    r = subprocess.run(['node', '--input-type=module', '-e', js, json.dumps(states)],
                       cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def run(code):
    """exec() the snippet; returns its variables and what it printed."""
    env = {'__name__': '__snippet__'}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, '<mhaSnippet>', 'exec'), env)  # noqa: S102 - our own generated code
    return env, out.getvalue()


def mha64(X, Wq, Wk, Wv, Wo, heads, causal):
    """The same computation in float64 (weights in torch's (out, in) layout)."""
    X, Wq, Wk, Wv, Wo = (t.double() for t in (X, Wq, Wk, Wv, Wo))
    n, dm = X.shape
    dh = dm // heads
    split = lambda t: t.view(n, heads, dh).transpose(0, 1)  # noqa: E731
    Q, K, V = split(X @ Wq.T), split(X @ Wk.T), split(X @ Wv.T)
    s = Q @ K.transpose(-2, -1) / dh ** 0.5
    if causal:
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float('-inf'))
    w = F.softmax(s, dim=-1)
    h = w @ V
    concat = h.transpose(0, 1).reshape(n, dm)
    return {'weights': w, 'heads': h, 'concat': concat, 'output': concat @ Wo.T}


def main():
    cap = cpu_capability()
    if cap not in ('AVX2', 'AVX512'):
        sys.exit(f'CPU capability is {cap}; torch-rng.js follows the AVX2 kernels. Run on an AVX2 machine.')
    texts = snippets([s for _, s in CASES])
    cases = []
    for (name, state), text in zip(CASES, texts):
        env, printed = run(text['zh'])
        env_en, printed_en = run(text['en'])
        for key in ('attn_weights', 'heads', 'concat', 'output'):
            assert torch.equal(env[key], env_en[key]), f'{name}: zh and en snippets differ in {key}'
        X, heads, causal = env['X'], env['num_heads'], state['causal']
        W = {k: env[k].weight.detach() for k in ('W_q', 'W_k', 'W_v', 'W_o')}
        f32 = {'weights': env['attn_weights'], 'heads': env['heads'], 'concat': env['concat'],
               'output': env['output'].detach()}
        f32 = {k: v.detach() for k, v in f32.items()}

        # PyTorch's own multi-head attention agrees with the hand-split snippet
        x3 = X.unsqueeze(1)                                    # (L, N = 1, E)
        mask = torch.ones(len(X), len(X), dtype=torch.bool).triu(1) if causal else None
        ref_out, ref_w = F.multi_head_attention_forward(
            x3, x3, x3, X.shape[1], heads,
            torch.cat([W['W_q'], W['W_k'], W['W_v']]), None, None, None, False, 0.0,
            W['W_o'], None, training=False, need_weights=True, attn_mask=mask,
            average_attn_weights=False)
        torch.testing.assert_close(ref_out.squeeze(1), f32['output'])
        torch.testing.assert_close(ref_w.squeeze(0), f32['weights'])

        e64 = mha64(X, W['W_q'], W['W_k'], W['W_v'], W['W_o'], heads, causal)
        for k in e64:
            torch.testing.assert_close(e64[k].float(), f32[k])
        cases.append({
            'name': name,
            'state': state,
            'snippet': text,
            'printed': printed,
            'n': len(X), 'd_model': X.shape[1], 'heads': heads, 'd_head': X.shape[1] // heads,
            'x': X.tolist(),
            'wq': W['W_q'].T.tolist(), 'wk': W['W_k'].T.tolist(),
            'wv': W['W_v'].T.tolist(), 'wo': W['W_o'].T.tolist(),
            'expected': {k: v.tolist() for k, v in e64.items()},
            'expected_f32': {k: v.tolist() for k, v in f32.items()},
        })

    doc = {
        'version': 1,
        'torch': torch.__version__,
        'cpu_capability': cap,
        'generator': 'tests/golden/make_page_mha.py',
        'note': 'state: the page state (web/page/page-state.js); snippet: mhaSnippet(state, lang) from web/page/page-mha.js, '
                'run as is; printed: what the zh snippet prints. x (n, d_model); wq, wk, wv, wo (d_model, d_model) '
                '= nn.Linear.weight.T, drawn after torch.manual_seed(seed) in the order X, W_q, W_k, W_v, W_o. '
                'expected: float64 from the float32 inputs; expected_f32: the snippet\'s own tensors. '
                'weights (heads, n, n), heads (heads, n, d_head), concat and output (n, d_model).',
        'cases': cases,
    }
    text = json.dumps(doc, ensure_ascii=False, separators=(',', ':'))
    text = text.replace('{"name"', '\n{"name"')
    with open(OUT, 'w', encoding='utf-8') as f:
        f.write(text + '\n')
    print(f'wrote {OUT}: {len(cases)} cases, {len(text)} bytes (torch {torch.__version__}, {cap})')
    two = next(c for c in cases if c['name'] == 'seed0-heads2')
    print('--- seed 0, 2 heads, as the page shows it (zh) ---')
    print(two['snippet']['zh'])
    print('--- it prints ---')
    print(two['printed'])


if __name__ == '__main__':
    main()
