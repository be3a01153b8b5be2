#!/usr/bin/python3
"""Golden data for the page's second input mode, X = E[token] + PE(position) (web/page/page-pe.js).

    /usr/bin/python3 tests/golden/page_pe.py      # writes tests/golden/page-pe.json

It does not re-type the PyTorch code: for each case it asks web/page/page-format.js (through node)
for the snippet the page shows, pythonSnippet(state, lang), in Chinese and in English, and runs that
very text with exec(). In 'embed' mode the snippet makes X as

    E[token] = torch.randn(8, generator=torch.Generator().manual_seed(fnv1a(f"{seed} {token}")))
    PE[pos, 2i] = sin(pos / 10000^(2i/8)), PE[pos, 2i+1] = cos(...)   (float64, stored in float32)
    X = E + PE            (or X = E with the switch off)

and then runs the episode's code (W_q, W_k, W_v = nn.Linear after torch.manual_seed(seed)). The
cases cover PE on and off, 猫吃鱼 and 鱼吃猫, a repeated word, 16 Latin tokens, seeds 0 and 42,
one d_k = 4 and one causal case, and one case in the article's mode (input 'randn').

Stored per case: the state, the snippets (tests/browser/page-teach.test.js checks that the page
still shows exactly this code), what the zh snippet prints, x, e, pe (n, 8), wq, wk, wv
(8, d_k) = weight.T, and the snippet's own float32 scores (QK^T), weights and output; expected:
the same computation in float64 from the float32 inputs.

Needs node on PATH and PyTorch 1.13 (apt-get install -y python3-torch). The random draws follow
torch's AVX2 kernels (see make_torch_rng.py): run it on such a machine. Deterministic output.
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
OUT = os.path.join(HERE, 'page-pe.json')

CAT = ['猫', '吃', '鱼']
FISH = ['鱼', '吃', '猫']
LATIN = 'the cat saw the fish and the fish saw the cat eat it then ran off'.split()
assert len(LATIN) == 16


def state(tokens, seed=0, pe=True, dk=8, causal=False, input='embed'):
    return dict(tokens=tokens, seed=seed, dk=dk, causal=causal, x=None, input=input, pe=pe)


CASES = [
    ('cat-pe-seed0', state(CAT)),
    ('cat-nope-seed0', state(CAT, pe=False)),
    ('fish-pe-seed0', state(FISH)),
    ('fish-nope-seed0', state(FISH, pe=False)),
    ('cat-pe-seed42', state(CAT, seed=42)),
    ('fish-nope-seed42', state(FISH, seed=42, pe=False)),
    ('repeat-pe-seed42', state(['猫', '吃', '猫'], seed=42)),
    ('repeat-nope-seed42', state(['猫', '吃', '猫'], seed=42, pe=False)),
    ('latin16-pe-seed42', state(LATIN, seed=42)),
    ('latin16-nope-seed0', state(LATIN, pe=False)),
    ('cat-pe-seed0-dk4-causal', state(CAT, dk=4, causal=True)),
    ('cat-randn-seed0', state(CAT, input='randn')),
]


def cpu_capability():
    m = re.search(r'CPU capability usage: (\S+)', torch.__config__.show())
    return m.group(1) if m else 'unknown'


def snippets(states):
    """pythonSnippet(state, lang) from web/page/page-format.js, for every state, in zh and en."""
    js = ("import { pythonSnippet } from './web/page/page-format.js';\n"
          "const states = JSON.parse(process.argv[1]);\n"
          "process.stdout.write(JSON.stringify(states.map((s) => ({ zh: pythonSnippet(s, 'zh'), en: pythonSnippet(s, 'en') }))));\n")
    r = subprocess.run(['node', '--input-type=module', '-e', js, json.dumps(states)],
                       cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def run(code):
    """exec() the snippet; returns its variables and what it printed."""
    env = {'__name__': '__snippet__'}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, '<pythonSnippet>', 'exec'), env)  # noqa: S102 - our own generated code
    return env, out.getvalue()


def attention64(X, Wq, Wk, Wv, causal):
    """The episode's computation in float64 (weights in torch's (out, in) layout)."""
    X, Wq, Wk, Wv = (t.double() for t in (X, Wq, Wk, Wv))
    Q, K, V = X @ Wq.T, X @ Wk.T, X @ Wv.T
    s = Q @ K.T / Q.shape[1] ** 0.5
    if causal:
        s = s.masked_fill(torch.ones(len(X), len(X), dtype=torch.bool).triu(1), float('-inf'))
    w = F.softmax(s, dim=-1)
    return {'scores': Q @ K.T, 'weights': w, 'output': w @ V}


def main():
    cap = cpu_capability()
    if cap not in ('AVX2', 'AVX512'):
        sys.exit(f'CPU capability is {cap}; torch-rng.js follows the AVX2 kernels. Run on an AVX2 machine.')
    texts = snippets([s for _, s in CASES])
    cases = []
    for (name, st), text in zip(CASES, texts):
        env, printed = run(text['zh'])
        env_en, _ = run(text['en'])
        for key in ('X', 'attn_weights', 'output'):
            assert torch.equal(env[key], env_en[key]), f'{name}: zh and en snippets differ in {key}'
        X = env['X']
        assert X.dtype == torch.float32
        W = {k: env[k].weight.detach() for k in ('W_q', 'W_k', 'W_v')}
        f32 = {'scores': (env['Q'] @ env['K'].T).detach(), 'weights': env['attn_weights'].detach(),
               'output': env['output'].detach()}
        e64 = attention64(X, W['W_q'], W['W_k'], W['W_v'], st['causal'])
        for k in e64:
            torch.testing.assert_close(e64[k].float(), f32[k])
        embed = st['input'] == 'embed'
        if embed:
            # the same word, the same row of E wherever it stands
            for i, a in enumerate(st['tokens']):
                for j, b in enumerate(st['tokens']):
                    if a == b:
                        assert torch.equal(env['E'][i], env['E'][j]), f'{name}: E rows {i}, {j}'
        cases.append({
            'name': name,
            'state': st,
            'snippet': text,
            'printed': printed,
            'n': len(X), 'd_k': W['W_q'].shape[0],
            'x': X.tolist(),
            'e': env['E'].tolist() if embed else None,
            'pe': env['PE'].tolist() if embed and st['pe'] else None,
            'wq': W['W_q'].T.tolist(), 'wk': W['W_k'].T.tolist(), 'wv': W['W_v'].T.tolist(),
            'expected': {k: v.tolist() for k, v in e64.items()},
            'expected_f32': {k: v.tolist() for k, v in f32.items()},
        })

    # without PE, 鱼吃猫 is 猫吃鱼 with rows and columns reversed, exactly; with PE it is not
    by = {c['name']: c for c in cases}
    flip = lambda m: [row[::-1] for row in m[::-1]]  # noqa: E731
    assert flip(by['cat-nope-seed0']['expected_f32']['weights']) == by['fish-nope-seed0']['expected_f32']['weights']
    assert flip(by['cat-pe-seed0']['expected_f32']['weights']) != by['fish-pe-seed0']['expected_f32']['weights']

    doc = {
        'version': 1,
        'torch': torch.__version__,
        'cpu_capability': cap,
        'generator': 'tests/golden/page_pe.py',
        'note': 'state: the page state (web/page/page-state.js); snippet: pythonSnippet(state, lang) from '
                'web/page/page-format.js, run as is; printed: what the zh snippet prints. x, e, pe (n, 8); '
                'wq, wk, wv (8, d_k) = nn.Linear.weight.T. expected: float64 from the float32 inputs; '
                'expected_f32: the snippet\'s own tensors. scores = QK^T (n, n), weights (n, n), output (n, d_k).',
        'cases': cases,
    }
    text = json.dumps(doc, ensure_ascii=False, separators=(',', ':'))
    text = text.replace('{"name"', '\n{"name"')
    with open(OUT, 'w', encoding='utf-8') as f:
        f.write(text + '\n')
    print(f'wrote {OUT}: {len(cases)} cases, {len(text)} bytes (torch {torch.__version__}, {cap})')
    print('--- 猫吃鱼, PE on, seed 0 (zh) prints ---')
    print(by['cat-pe-seed0']['printed'])


if __name__ == '__main__':
    main()
