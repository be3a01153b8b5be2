#!/usr/bin/python3
"""Golden data for web/rng/torch-rng.js: what the episode's snippet draws after torch.manual_seed(s).

    /usr/bin/python3 tests/golden/make_torch_rng.py      # writes tests/golden/torch-rng.json

Each case runs, on the default CPU generator:

    torch.manual_seed(seed)
    X = torch.randn(n, d_model)
    W_q = torch.nn.Linear(d_model, d_k, bias=False)
    W_k = torch.nn.Linear(d_model, d_k, bias=False)
    W_v = torch.nn.Linear(d_model, d_v, bias=False)

and stores X (n, d_model) and the weights in the episode's layout (weight.T: (d_model, d_k)),
the same layout as tests/golden/attention.json. "sequences" are free-form call sequences on one
generator (randn calls below and above 16 elements, Linear layers, the cached Box-Muller value).
Values come from tensor.tolist(): doubles exactly equal to the float32 values.

Which code path torch takes depends on the CPU: randn with >= 16 elements uses the AVX2 kernel
(Cephes float polynomials), and uniform_ is compiled with fused multiply-adds, only when torch runs
with CPU capability AVX2 (also on AVX-512 machines: normal_ is not dispatched to AVX-512). Run this
on such a machine; the script refuses otherwise. The output is deterministic: the same bytes on
every run.
"""
import json
import os
import re
import sys

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'torch-rng.json')


def cpu_capability():
    m = re.search(r'CPU capability usage: (\S+)', torch.__config__.show())
    return m.group(1) if m else 'unknown'


def episode(seed, n, d_model, d_k, d_v):
    torch.manual_seed(seed)
    X = torch.randn(n, d_model)
    W_q = torch.nn.Linear(d_model, d_k, bias=False)
    W_k = torch.nn.Linear(d_model, d_k, bias=False)
    W_v = torch.nn.Linear(d_model, d_v, bias=False)
    return {
        'seed': seed, 'n': n, 'd_model': d_model, 'd_k': d_k, 'd_v': d_v,
        'x': X.tolist(),
        'wq': W_q.weight.detach().T.tolist(),
        'wk': W_k.weight.detach().T.tolist(),
        'wv': W_v.weight.detach().T.tolist(),
    }


def sequence(seed, ops):
    """ops: ["randn", rows, cols] -> torch.randn(rows, cols);
    ["linear", in, out] -> nn.Linear(in, out, bias=False).weight, torch's (out, in) layout."""
    torch.manual_seed(seed)
    results = []
    for op in ops:
        if op[0] == 'randn':
            results.append(torch.randn(op[1], op[2]).tolist())
        elif op[0] == 'linear':
            results.append(torch.nn.Linear(op[1], op[2], bias=False).weight.detach().tolist())
        else:
            raise ValueError(op)
    return {'seed': seed, 'ops': ops, 'results': results}


def main():
    cap = cpu_capability()
    if cap not in ('AVX2', 'AVX512'):
        sys.exit(f'CPU capability is {cap}; torch-rng.js follows the AVX2 kernels. Run on an AVX2 machine.')

    cases = []
    # every n from 1 to 16 at d_model 8: n = 1 (8 values) takes the float64 Box-Muller path,
    # n >= 2 the vectorised one (n odd: not a multiple of 16, the last 16 are redrawn)
    for seed in (0, 42):
        for n in range(1, 17):
            cases.append(episode(seed, n, 8, 8, 8))
    # the episode's 猫吃鱼 shape for other seeds; seeds only count modulo 2**32
    for seed in (1, 7, 2024, 123456789, 2**32 - 1, 2**32, 2**32 + 5, 2**53 - 1,
                 2**63 - 1, 2**63, 2**64 - 1):
        cases.append(episode(seed, 3, 8, 8, 8))
    # other widths: d_model 4 (n <= 3: float64 path), 16, 64
    for seed, n, d in ((0, 1, 4), (0, 3, 4), (42, 4, 4), (42, 5, 4), (2024, 16, 4),
                       (0, 1, 16), (0, 3, 16), (42, 16, 16),
                       (0, 3, 64), (42, 16, 64)):
        cases.append(episode(seed, n, d, d, d))
    # d_k != d_v, odd widths (n * d_model = 15: an odd count on the float64 path)
    for seed, n, d, dk, dv in ((0, 3, 8, 4, 6), (42, 3, 8, 2, 8), (2024, 5, 6, 3, 5),
                               (7, 3, 5, 5, 2), (1, 1, 6, 6, 3), (123456789, 16, 64, 16, 8)):
        cases.append(episode(seed, n, d, dk, dv))

    sequences = [
        # the cached sin value of the float64 path survives the vectorised path and Linear
        sequence(5, [['randn', 1, 3], ['randn', 4, 4], ['linear', 3, 2], ['randn', 1, 1],
                     ['randn', 2, 5], ['randn', 1, 1], ['randn', 17, 1], ['randn', 0, 3],
                     ['randn', 1, 15]]),
        # crossing the 624-word MT19937 state many times
        sequence(99, [['randn', 40, 37], ['linear', 100, 7], ['randn', 3, 5], ['linear', 1, 1],
                      ['randn', 5, 3]]),
    ]

    doc = {
        'version': 1,
        'torch': torch.__version__,
        'cpu_capability': cap,
        'generator': 'tests/golden/make_torch_rng.py',
        'note': 'x (n, d_model); wq, wk (d_model, d_k); wv (d_model, d_v) = nn.Linear(...).weight.T, '
                'after torch.manual_seed(seed) and in the order X, W_q, W_k, W_v. '
                'sequences: results of each op in order (linear: weight in torch layout (out, in)).',
        'cases': cases,
        'sequences': sequences,
    }
    text = json.dumps(doc, separators=(',', ':'))
    # one case per line keeps diffs readable
    text = text.replace('{"seed"', '\n{"seed"')
    with open(OUT, 'w', encoding='utf-8') as f:
        f.write(text + '\n')
    n_values = sum(len(c['x']) * c['d_model'] + c['d_model'] * (2 * c['d_k'] + c['d_v']) for c in cases)
    print(f'wrote {OUT}: {len(cases)} cases, {len(sequences)} sequences, {n_values} case values, '
          f'{len(text)} bytes (torch {torch.__version__}, {cap})')


if __name__ == '__main__':
    main()
