#!/usr/bin/python3
"""Golden data for RoPE, the core's attn_rope / attn.rope (c_src/rope.c, web/core/ops.js), its
inverse frequencies with Llama 3's scaling (attn_rope_frequencies, which the LLaMA family's model
runs), and for the page's RoPE section (web/page/page-rope.js).

    /usr/bin/python3 tests/golden/make_rope.py      # writes tests/golden/rope.json

RoPE here is written out from the maths, in the layout of Hugging Face's LLaMA (rotate-half,
apply_rotary_pos_emb), not copied from it:

    inv_freq[i] = 1 / base^(2i/d)                       i = 0 .. d/2 - 1   (θ_i)
    angle[p, i] = p · inv_freq[i]                       p = offset .. offset + n - 1
    cos, sin    = cos(angle), sin(angle), each repeated twice along the last axis: (n, d)
    rotate_half(x) = cat(-x[..., d/2:], x[..., :d/2])
    rope(x)     = x · cos + rotate_half(x) · sin

so pair i is (x[i], x[i + d/2]) and turns by the angle p·θ_i. Per case:
  x (n, heads·d), float32 inputs written as their shortest decimals;
  theta: θ_i = base^(-2i/d) in float64, rounded once to float32 (the core's attn_rope_theta, and
         web/model/families/llama.js's inverseFrequencies for checkpoints without inv_freq);
  theta_hf_f32: inv_freq as Hugging Face's LLaMA computes it in float32, 1 / base^(2i/d), rounded
         twice (the power, then the quotient): within two float32 roundings of theta;
  expected: float64 maths from the float32 x and theta (the core's convention, and c_src/llama.c's:
         θ as a float32 table, the angle and its cos/sin in double);
  expected_hf_f32: the whole computation in float32 with theta_hf_f32, as LLaMA runs in PyTorch
         (the angle rounded to float32 before cos/sin: that costs accuracy at large positions, so
         the test holds the core to it only where it is itself within the tolerance of expected).

Cases: d in {4, 8, 64} x base in {10000, 1e6} x offset in {0, 1, 7} (n = 5, one head; d = 8 also
with 2 heads), a large offset (100000), and the page's own cases: X = E[token] (page-pe.js's
embedding, no additive PE), Q = X·W_q, K = X·W_k after torch.manual_seed(seed), as the RoPE section
computes them for 猫吃鱼 and 鱼吃猫 (seeds 0 and 42, d_k 8 and 4); for these also the attention
maps softmax(q·kᵀ/√d) at positions 0..n-1 and 1..n (equal: the scores depend on j - i only) and
without RoPE.

Frequencies ("frequencies"): θ_i for head widths and bases of real checkpoints, without scaling and
with rope_type "llama3" (Llama 3.1's and 3.2's numbers, and original_max_position_embeddings 40,
which puts most pairs in the blended band), from transformers' _compute_llama3_parameters as
llama/make_golden.py writes it (inv_freq_torch):
  theta: the scaling in float64 from float64 θ, rounded once to float32 (attn_rope_frequencies'
         convention); theta_hf_f32: the same in float32 throughout, as transformers computes it;
  bands: how many pairs are kept (high), divided by factor (low) and blended (medium);
  hf_f32_rel_error: the largest relative gap of theta_hf_f32 from the float64 values.

Needs PyTorch 1.13 (apt-get install -y python3-torch). The random draws follow torch's AVX2 kernels
(see make_torch_rng.py). Deterministic output.
"""
import json
import math
import os
import sys
import zlib

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'llama'))
from make_golden import inv_freq_torch  # noqa: E402  (the LLaMA goldens' transformers RoPE, one copy)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, 'rope.json')
D_MODEL = 8


class Raw(str):
    """Text written into the JSON as it is (a float32 in its shortest decimal)."""


def f32_text(x):
    f = np.float32(x)
    assert np.isfinite(f)
    s = str(f)
    assert np.float32(float(s)) == f, (x, s)
    return Raw(s)


def f32_rows(t):
    arr = t.detach().float().numpy()
    if arr.ndim == 1:
        return [f32_text(v) for v in arr]
    return [[f32_text(v) for v in row] for row in arr]


def f64_rows(t):
    return t.detach().double().tolist()


def emit(o):
    if isinstance(o, Raw):
        return str(o)
    if o is None:
        return 'null'
    if isinstance(o, bool):
        return 'true' if o else 'false'
    if isinstance(o, int):
        return str(o)
    if isinstance(o, float):
        assert math.isfinite(o), o
        return repr(o)
    if isinstance(o, str):
        return json.dumps(o, ensure_ascii=False)
    if isinstance(o, (list, tuple)):
        return '[' + ','.join(emit(v) for v in o) + ']'
    if isinstance(o, dict):
        return '{' + ','.join(json.dumps(k) + ':' + emit(v) for k, v in o.items()) + '}'
    raise TypeError(type(o))


# ---------------------------------------------------------------- RoPE, from the maths

def inv_freq(d, base, dtype):
    """θ_i = 1 / base^(2i/d), as LLaMA's rotary embedding builds its inv_freq buffer."""
    return 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).to(dtype) / d))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def cos_sin(theta, positions):
    """cos and sin of positions x θ, (n, d): each pair's angle twice, for x[i] and x[i + d/2]."""
    angle = positions[:, None].to(theta.dtype) * theta[None, :]
    emb = torch.cat((angle, angle), dim=-1)
    return emb.cos(), emb.sin()


def apply_rope(x, heads, d, theta, offset):
    """x (n, heads·d) -> (n, heads·d); row r at position offset + r; computed in theta's dtype."""
    n = x.shape[0]
    xs = x.to(theta.dtype).reshape(n, heads, d)
    cos, sin = cos_sin(theta, torch.arange(offset, offset + n))
    cos, sin = cos[:, None, :], sin[:, None, :]          # the same angle for every head
    return (xs * cos + rotate_half(xs) * sin).reshape(n, heads * d)


def check_pairs(x, y, heads, d, theta, offset):
    """The same rotation written pair by pair, in float64 (asserts that rotate-half is what we mean)."""
    n, half = x.shape[0], d // 2
    for r in range(n):
        for h in range(heads):
            for i in range(half):
                a, b = float(x[r, h * d + i]), float(x[r, h * d + i + half])
                ang = (offset + r) * float(theta[i])
                c, s = math.cos(ang), math.sin(ang)
                assert abs(float(y[r, h * d + i]) - (a * c - b * s)) < 1e-12
                assert abs(float(y[r, h * d + i + half]) - (b * c + a * s)) < 1e-12


def rope_case(name, x, heads, d, base, offset):
    theta64 = inv_freq(d, base, torch.float64)
    theta32 = theta64.float()                                              # rounded once
    theta_hf = inv_freq(d, base, torch.float32)                            # rounded twice
    assert ((theta_hf.double() - theta32.double()).abs() <= 2.4e-7 * theta32.double()).all()
    expected = apply_rope(x, heads, d, theta32.double(), offset)          # float32 θ, float64 maths
    check_pairs(x.double(), expected, heads, d, theta32.double(), offset)
    hf32 = apply_rope(x, heads, d, theta_hf, offset)                       # all float32, as LLaMA runs
    exact = apply_rope(x, heads, d, theta64, offset)
    return {
        'name': name, 'heads': heads, 'd': d, 'base': float(base), 'offset': offset,
        'x': f32_rows(x), 'theta': f32_rows(theta32), 'theta_hf_f32': f32_rows(theta_hf),
        'expected': f64_rows(expected), 'expected_hf_f32': f32_rows(hf32),
        # how far the float32 path and the float64 θ are from `expected` (the test prints them)
        'hf_f32_error': float((hf32.double() - expected).abs().max()),
        'theta_f64_error': float((exact - expected).abs().max()),
    }


# ---------------------------------------------------------------- the frequencies, with llama3 scaling

def frequency_case(name, d, base, scaling):
    """θ as transformers computes it (tests/golden/llama/make_golden.py's inv_freq_torch: the default
    frequencies, then _compute_llama3_parameters), in float64 and in float32."""
    c = {'D': d, 'theta': base, 'scaling': scaling and {**scaling, 'rope_type': 'llama3'}}
    theta64, theta_hf = inv_freq_torch(c, torch.float64), inv_freq_torch(c, torch.float32)
    bands = {'high': d // 2, 'low': 0, 'medium': 0}
    if scaling:
        wavelen = 2 * math.pi / inv_freq(d, base, torch.float64)
        old = scaling['original_max_position_embeddings']
        high, low = wavelen < old / scaling['high_freq_factor'], wavelen > old / scaling['low_freq_factor']
        bands = {'high': int(high.sum()), 'low': int(low.sum()), 'medium': int((~high & ~low).sum())}
    # float32's relative error (the blend's old/wavelen − low cancels in the medium band)
    error = float(((theta_hf.double() - theta64).abs() / theta64).max())
    return {'name': name, 'd': d, 'base': float(base), 'scaling': scaling, 'bands': bands,
            'theta': f32_rows(theta64.float()), 'theta_hf_f32': f32_rows(theta_hf), 'hf_f32_rel_error': error}


def frequency_cases():
    def l3(factor, original):
        return {'factor': factor, 'low_freq_factor': 1.0, 'high_freq_factor': 4.0,
                'original_max_position_embeddings': original}
    return [frequency_case(*c) for c in [
        ('llama2-d128', 128, 10000.0, None),
        ('qwen2-d64', 64, 1e6, None),
        ('llama3.1-d128', 128, 500000.0, l3(8.0, 8192)),
        ('llama3.2-d64', 64, 500000.0, l3(32.0, 8192)),
        ('llama3.2-d128', 128, 500000.0, l3(32.0, 8192)),
        ('llama3-d16-original40', 16, 500000.0, l3(8.0, 40)),
        ('llama3-d32-original100', 32, 10000.0, {'factor': 4.0, 'low_freq_factor': 0.5, 'high_freq_factor': 3.0,
                                                 'original_max_position_embeddings': 100})]]


# ---------------------------------------------------------------- the page's q and k

def fnv1a(text):
    h = 0x811c9dc5
    for b in text.encode():
        h = ((h ^ b) * 0x01000193) % 2 ** 32
    return h


def page_qk(tokens, seed, dk):
    """X = E[token] (page-pe.js's embedding, no PE), Q = X·W_q, K = X·W_k: the RoPE section's q, k."""
    E = torch.stack([torch.randn(D_MODEL, generator=torch.Generator().manual_seed(fnv1a(f'{seed} {t}'))) for t in tokens])
    torch.manual_seed(seed)
    W_q = torch.nn.Linear(D_MODEL, dk, bias=False)
    W_k = torch.nn.Linear(D_MODEL, dk, bias=False)
    with torch.no_grad():
        return E, W_q(E), W_k(E)


def attention_map(q, k):
    d = q.shape[1]
    return torch.softmax(q @ k.T / math.sqrt(d), dim=-1)


def page_case(tokens, seed, dk, base=10000.0):
    E, q, k = page_qk(tokens, seed, dk)
    theta32 = inv_freq(dk, base, torch.float64).float().double()
    q64, k64 = q.double(), k.double()
    maps = {}
    for offset in (0, 1):
        maps[offset] = attention_map(apply_rope(q, 1, dk, theta32, offset), apply_rope(k, 1, dk, theta32, offset))
    shift = float((maps[0] - maps[1]).abs().max())
    assert shift < 1e-12, shift
    return {
        'name': f'page-{"".join(tokens)}-seed{seed}-dk{dk}', 'tokens': tokens, 'seed': seed, 'dk': dk, 'base': base,
        'e': f32_rows(E), 'q': f32_rows(q), 'k': f32_rows(k),
        'q_rope': f64_rows(apply_rope(q, 1, dk, theta32, 0)), 'k_rope': f64_rows(apply_rope(k, 1, dk, theta32, 0)),
        'q_rope_shifted': f64_rows(apply_rope(q, 1, dk, theta32, 1)),
        'weights': f64_rows(maps[0]), 'weights_shifted': f64_rows(maps[1]),
        'weights_no_rope': f64_rows(attention_map(q64, k64)),
    }


def main():
    torch.set_grad_enabled(False)
    cases = []
    for d in (4, 8, 64):
        for base in (10000.0, 1e6):
            for offset in (0, 1, 7):
                name = f'd{d}-base{base:g}-offset{offset}'
                torch.manual_seed(zlib.crc32(name.encode()))
                cases.append(rope_case(name, torch.randn(5, d), 1, d, base, offset))
    for name, n, heads, d, base, offset in [('d8-heads2-offset3', 4, 2, 8, 10000.0, 3),
                                            ('d16-base500000-offset100000', 3, 1, 16, 500000.0, 100000),
                                            ('d2-base10000-offset0', 6, 1, 2, 10000.0, 0)]:
        torch.manual_seed(zlib.crc32(name.encode()))
        cases.append(rope_case(name, torch.randn(n, heads * d) * 3, heads, d, base, offset))
    page = [page_case(t, s, dk) for t in (['猫', '吃', '鱼'], ['鱼', '吃', '猫']) for s, dk in ((0, 8), (42, 8), (0, 4))]
    frequencies = frequency_cases()
    data = {'version': 2, 'torch': torch.__version__, 'cases': cases, 'page': page, 'frequencies': frequencies}
    with open(OUT, 'w', encoding='utf-8') as f:
        f.write(emit(data) + '\n')
    print(f'wrote {OUT}: {len(cases)} cases, {len(page)} page cases, {len(frequencies)} frequency cases; '
          f'largest float32-vs-float64 gap {max(c["hf_f32_error"] for c in cases):.3g}')


if __name__ == '__main__':
    main()
