#!/usr/bin/python3
"""Generate tests/golden/mha.json: multi-head attention golden data from PyTorch.

Run from the repository root with the system Python that has torch 1.13
(Debian's python3-torch), not a pyenv python:

    /usr/bin/python3 tests/golden/make_mha.py

Every case but the grouped-query ones is computed by torch.nn.MultiheadAttention(E, heads,
batch_first=True), converted to float64, with need_weights=True and
average_attn_weights=False. The weights passed to attnmap are taken from the module exactly
as the README says (wq = in_proj_weight[:E].T, ..., wo = out_proj.weight.T), and every case
is also recomputed with plain torch ops in float64 (the reference below); the script asserts
that the two agree. torch 1.13 has no enable_gqa, so the grouped-query cases come from the
plain-ops reference, checked against nn.MultiheadAttention run with each kv head repeated
h / g times (which is what enable_gqa does).

Conventions (also in tests/golden/README.md):
  * Inputs are float32 values, written as the shortest decimal that rounds to them
    (parse it, round to float32: the script asserts this gives the value back).
  * Expected values are float64, computed from those float32 inputs.
  * mask[i][j] == True means query i may attend to key j (SDPA polarity); the module got
    attn_mask = ~mask (nn.MultiheadAttention: True = masked out).
  * causal is top-left aligned: query i sees keys j <= i; the module got
    attn_mask = torch.ones(n, m).triu(1).bool().
  * A query that may attend to no key gets weights 0 and head outputs 0, so its output row
    is bo (zeros without bias). nn.MultiheadAttention gives NaN there; the script asserts it.

Deterministic: every case seeds torch.manual_seed with the CRC-32 of its name (the module's
own init draws from the global generator), except the 猫吃鱼 case, which uses
torch.manual_seed(0) as the episodes do.
"""

import json
import math
import os
import zlib

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_PATH = os.path.join(HERE, "mha.json")
GENERATOR = "tests/golden/make_mha.py"
NOTE = ("inputs are float32 values written as the shortest decimal that rounds to them; "
        "expected values computed in float64 by torch.nn.MultiheadAttention (need_weights=True, "
        "average_attn_weights=False) and by plain torch ops; mask true = may attend; "
        "a fully masked query has weights 0, head outputs 0 and output bo (torch gives NaN)")


# ---------------------------------------------------------------- JSON text

class Raw(str):
    """Text written into the JSON as it is (a float32 in its shortest decimal)."""


def f32_text(x):
    f = np.float32(x)
    assert np.isfinite(f)
    s = str(f)
    assert np.float32(float(s)) == f, (x, s)   # what JSON.parse then Math.fround / strtof give
    return Raw(s)


def f32_rows(t):
    """A float32 tensor as nested lists of Raw texts."""
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
        return "null"
    if isinstance(o, bool):
        return "true" if o else "false"
    if isinstance(o, int):
        return str(o)
    if isinstance(o, float):
        assert math.isfinite(o), o
        return repr(o)
    if isinstance(o, str):
        return json.dumps(o, ensure_ascii=False)
    if isinstance(o, (list, tuple)):
        return "[" + ",".join(emit(v) for v in o) + "]"
    if isinstance(o, dict):
        return "{" + ",".join(json.dumps(k) + ":" + emit(v) for k, v in o.items()) + "}"
    raise TypeError(type(o))


# ---------------------------------------------------------------- reference

def allowed_matrix(n, m, mask, causal):
    allowed = torch.ones(n, m, dtype=torch.bool)
    if mask is not None:
        allowed &= mask
    if causal:
        allowed &= torch.ones(n, m, dtype=torch.bool).tril()   # top-left: j <= i
    return allowed


def reference(p, x, kv, heads, kv_heads, allowed):
    """Multi-head (grouped-query) attention with plain float64 torch ops, attnmap's definition."""
    d = lambda t: None if t is None else t.double()
    x, kv = x.double(), kv.double()
    E = x.shape[1]
    dh = E // heads
    group = heads // kv_heads
    Q = x @ d(p["wq"])
    K = kv @ d(p["wk"])
    V = kv @ d(p["wv"])
    if p["bq"] is not None:
        Q, K, V = Q + d(p["bq"]), K + d(p["bk"]), V + d(p["bv"])
    empty = ~allowed.any(dim=-1)
    weights, outs = [], []
    for h in range(heads):
        g = h // group
        q = Q[:, h * dh:(h + 1) * dh]
        k = K[:, g * dh:(g + 1) * dh]
        v = V[:, g * dh:(g + 1) * dh]
        logits = (q @ k.T) / math.sqrt(dh)
        w = F.softmax(logits.masked_fill(~allowed, float("-inf")), dim=-1)
        w[empty] = 0.0
        o = w @ v
        o[empty] = 0.0
        weights.append(w)
        outs.append(o)
    concat = torch.cat(outs, dim=1)
    out = concat @ d(p["wo"])
    if p["bo"] is not None:
        out = out + d(p["bo"])
    return {"output": out, "weights": torch.stack(weights), "concat": concat}


def module_params(mha):
    """attnmap's arguments from an nn.MultiheadAttention, as the README says (float32)."""
    E = mha.embed_dim
    W = mha.in_proj_weight.detach()
    b = mha.in_proj_bias
    p = {"wq": W[:E].T, "wk": W[E:2 * E].T, "wv": W[2 * E:].T, "wo": mha.out_proj.weight.detach().T,
         "bq": None, "bk": None, "bv": None, "bo": None}
    if b is not None:
        b = b.detach()
        p.update(bq=b[:E], bk=b[E:2 * E], bv=b[2 * E:], bo=mha.out_proj.bias.detach())
    return {k: None if v is None else v.float().contiguous() for k, v in p.items()}


def run_module(mha, x, kv, allowed, dtype=torch.float64):
    """nn.MultiheadAttention on one batch; returns output (n, E) and weights (heads, n, m)."""
    mha = mha.to(dtype)
    with torch.no_grad():
        out, w = mha(x.to(dtype)[None], kv.to(dtype)[None], kv.to(dtype)[None],
                     need_weights=True, attn_mask=~allowed, average_attn_weights=False)
    return out[0], w[0]


def check_against_module(name, ref, out, w, allowed):
    empty = ~allowed.any(dim=-1)
    ok = ~empty
    assert torch.allclose(out[ok], ref["output"][ok], rtol=1e-12, atol=1e-13), name
    assert torch.allclose(w[:, ok], ref["weights"][:, ok], rtol=1e-12, atol=1e-13), name
    if empty.any():
        assert torch.isnan(out[empty]).all() and torch.isnan(w[:, empty]).all(), \
            f"{name}: torch no longer gives NaN on fully masked rows"


# ---------------------------------------------------------------- cases

cases = []
summary = []


def seed_for(name):
    return zlib.crc32(name.encode("utf-8"))


def make_case(name, n, E, heads, m=None, kv_heads=None, bias=True, random_bias=True,
              causal=False, mask=None, quantize=None, seed=None, tokens=None, with_f32=False):
    """A case from nn.MultiheadAttention(E, heads); kv_heads < heads makes it grouped-query."""
    kv_heads = heads if kv_heads is None else kv_heads
    torch.manual_seed(seed_for(name) if seed is None else seed)
    x = torch.randn(n, E)
    kv = None if m is None else torch.randn(m, E)
    mha = torch.nn.MultiheadAttention(E, heads, bias=bias, batch_first=True)
    with torch.no_grad():
        if bias and random_bias:   # nn.MultiheadAttention starts its biases at zero
            mha.in_proj_bias.copy_(torch.randn(3 * E) * 0.5)
            mha.out_proj.bias.copy_(torch.randn(E) * 0.5)
        if quantize:   # fewer digits in the JSON: parameters rounded to `quantize` decimals
            for prm in mha.parameters():
                prm.copy_((prm * 10 ** quantize).round() / 10 ** quantize)
    p = module_params(mha)
    if quantize:
        x = (x * 100).round() / 100
    x = x.float()
    kv_in = x if kv is None else kv.float()
    m_ = kv_in.shape[0]
    allowed = allowed_matrix(n, m_, mask, causal)
    dh = E // heads
    group = heads // kv_heads
    if kv_heads != heads:
        # grouped-query: keep kv_heads of the module's heads for K and V
        keep = torch.cat([torch.arange(g * group * dh, (g * group + 1) * dh) for g in range(kv_heads)])
        for key in ("wk", "wv"):
            p[key] = p[key][:, keep].contiguous()
        for key in ("bk", "bv"):
            if p[key] is not None:
                p[key] = p[key][keep].contiguous()
    ref = reference(p, x, kv_in, heads, kv_heads, allowed)

    # nn.MultiheadAttention with the same parameters (for GQA: each kv head repeated)
    check = torch.nn.MultiheadAttention(E, heads, bias=bias, batch_first=True)
    with torch.no_grad():
        rep = lambda t, dim: t if t is None or kv_heads == heads else \
            torch.cat([blk for blk in t.split(dh, dim=dim) for _ in range(group)], dim=dim)
        check.in_proj_weight.copy_(torch.cat([p["wq"].T, rep(p["wk"], 1).T, rep(p["wv"], 1).T]))
        check.out_proj.weight.copy_(p["wo"].T)
        if bias:
            check.in_proj_bias.copy_(torch.cat([p["bq"], rep(p["bk"], 0), rep(p["bv"], 0)]))
            check.out_proj.bias.copy_(p["bo"])
    out64, w64 = run_module(check, x, kv_in, allowed)
    check_against_module(name, ref, out64, w64, allowed)
    if kv_heads == heads:   # and the documented conversion round-trips the original module
        out_orig, _ = run_module(mha, x, kv_in, allowed)
        assert torch.equal(out_orig.nan_to_num(), out64.nan_to_num()), name

    case = {"name": name}
    if tokens:
        case["tokens"] = tokens
    case.update({
        "heads": heads, "kv_heads": kv_heads, "causal": bool(causal),
        "mask": None if mask is None else mask.tolist(),
        "x": f32_rows(x), "kv": None if kv is None else f32_rows(kv_in),
    })
    for key in ("wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo"):
        case[key] = None if p[key] is None else f32_rows(p[key])
    case["expected"] = {"output": f64_rows(ref["output"]), "weights": f64_rows(ref["weights"]),
                        "concat": f64_rows(ref["concat"])}
    if with_f32:   # torch's own float32 result (the module as created, in float32)
        out32, w32 = run_module(check, x, kv_in, allowed, dtype=torch.float32)
        case["expected_f32"] = {"output": [[float(v) for v in r] for r in out32.tolist()],
                                "weights": w32.tolist()}
    cases.append(case)
    extra = [s for s, on in (("bias", bias), ("causal", causal), ("mask", mask is not None),
                             (f"kv m={m}", m is not None)) if on]
    summary.append((name, f"n={n} E={E} heads={heads}x{dh}"
                    + (f" kv_heads={kv_heads}" if kv_heads != heads else "")
                    + (" " + ",".join(extra) if extra else "")))


def rand_mask(name, n, m, p=0.7):
    g = torch.Generator().manual_seed(seed_for(name + "/mask"))
    return torch.rand(n, m, generator=g) < p


# 猫吃鱼 as episodes 05 and 06 set it up: torch.manual_seed(0), X = torch.randn(3, 8), then
# nn.MultiheadAttention(8, 2) with its default init (zero biases).
make_case("cat-eat-fish-2-heads", 3, 8, 2, seed=0, random_bias=False, tokens=["猫", "吃", "鱼"],
          with_f32=True)
make_case("cat-eat-fish-2-heads-bias", 3, 8, 2, tokens=["猫", "吃", "鱼"])
make_case("one-head", 4, 8, 1)
make_case("causal", 5, 8, 2, causal=True)
make_case("no-bias", 4, 12, 3, bias=False)
make_case("odd-width-15-3x5", 5, 15, 3)
make_case("heads-equal-d-model", 3, 4, 4)
make_case("cross-attention", 4, 12, 4, m=6)
make_case("cross-causal-n-gt-m", 6, 8, 2, m=4, causal=True)
mr = rand_mask("mask-random", 5, 5)
mr |= torch.eye(5, dtype=torch.bool)
make_case("mask-random", 5, 8, 2, mask=mr)
mf = rand_mask("mask-fully-masked-row", 5, 6)
mf[:, 0] = True
mf[2, :] = False
make_case("mask-fully-masked-row", 5, 8, 2, m=6, mask=mf)
mc = rand_mask("mask-and-causal", 6, 6)
mc[:, 0] = True
mc[3, 0] = False   # row 3 keeps keys 1..3 through the mask
make_case("mask-and-causal", 6, 8, 2, causal=True, mask=mc)
make_case("head-width-64", 6, 128, 2, quantize=3)
make_case("gqa-4-heads-2-kv", 5, 16, 4, kv_heads=2)
make_case("gqa-mqa-3-heads-1-kv-causal", 4, 12, 3, kv_heads=1, causal=True)
mg = rand_mask("gqa-cross-mask", 3, 5)
mg[:, 4] = True
make_case("gqa-cross-mask", 3, 16, 4, kv_heads=2, m=5, mask=mg)
make_case("gqa-8-heads-2-kv-no-bias", 4, 16, 8, kv_heads=2, bias=False)

# ---------------------------------------------------------------- write

names = [c["name"] for c in cases]
assert len(names) == len(set(names)), "duplicate case names"
header = {"version": 1, "torch": torch.__version__, "generator": GENERATOR, "note": NOTE}
text = emit(header)[:-1] + ',"cases":[\n' + ",\n".join(emit(c) for c in cases) + "\n]}\n"
json.loads(text)
with open(OUT_PATH, "w", encoding="utf-8") as f:
    f.write(text)

print(f"torch {torch.__version__}, wrote {OUT_PATH} ({len(text.encode('utf-8'))} bytes, {len(cases)} cases)")
for name, note in summary:
    print(f"  {name:32s} {note}")
c0 = cases[0]
d = np.abs(np.array(c0["expected_f32"]["output"]) - np.array(c0["expected"]["output"])).max()
print(f"cat-eat-fish-2-heads: torch float32 vs float64 output, max |diff| {d:.2e}")
