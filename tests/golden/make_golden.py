#!/usr/bin/python3
"""Generate tests/golden/attention.json: golden data for attnmap from PyTorch.

Run from the repository root with the system Python that has torch 1.13
(Debian's python3-torch), not a pyenv python:

    /usr/bin/python3 tests/golden/make_golden.py

The output is deterministic: every random case draws from its own
torch.Generator seeded from the case name, and the episode-snippet cases use
torch.manual_seed(seed) exactly as the episode does.

Conventions (also written into the JSON "note" and tests/golden/README.md):
  * Inputs are float32 values, stored as the exact doubles they represent.
  * Expected values are computed by torch in float64 from those float32 inputs.
  * mask[i][j] == True means query i may attend to key j (PyTorch SDPA polarity).
  * causal is top-left aligned: query i sees keys j <= i, also when n != m.
  * scale None means 1/sqrt(d_k). scaled = scores * scale, before masking.
  * Disallowed positions get -inf before softmax. A row with no allowed key is
    defined as weights 0 and output 0 (torch's softmax would give NaN).
"""

import json
import math
import os
import sys
import zlib

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_PATH = os.path.join(HERE, "attention.json")
GENERATOR = "tests/golden/make_golden.py"
NOTE = ("inputs are float32 values; expected values computed by torch in float64 "
        "from those float32 inputs; fully masked rows are defined as zeros (torch gives NaN)")


# ---------------------------------------------------------------- helpers

def as_list(t):
    """float32-exact values as Python floats (doubles); bools stay bools."""
    if t.dtype == torch.bool:
        return t.tolist()
    return t.float().double().tolist()


def f64_list(t):
    return t.double().tolist()


def gen_for(name):
    """A generator seeded from the case name, so adding a case never shifts others."""
    return torch.Generator().manual_seed(zlib.crc32(name.encode("utf-8")))


def randn(g, *shape, std=1.0):
    return (torch.randn(*shape, generator=g, dtype=torch.float32) * std).float()


def allowed_matrix(n, m, mask, causal):
    allowed = torch.ones(n, m, dtype=torch.bool)
    if mask is not None:
        allowed &= mask
    if causal:
        # top-left aligned: tril keeps j <= i for rectangular shapes too
        allowed &= torch.ones(n, m, dtype=torch.bool).tril()
    return allowed


def attention(q, k, v, mask=None, causal=False, scale=None, dtype=torch.float64):
    """Scaled dot-product attention written with plain torch ops (torch 1.13 has no SDPA).

    q (n, d_k), k (m, d_k), v (m, d_v); mask (n, m) bool, True = may attend.
    Returns dict with scores, scaled, weights, output in `dtype`.
    """
    q, k, v = q.to(dtype), k.to(dtype), v.to(dtype)
    n, d_k = q.shape
    m = k.shape[0]
    s = 1.0 / math.sqrt(d_k) if scale is None else float(scale)
    scores = q @ k.T                                   # (n, m)
    scaled = scores * s                                # (n, m), before masking
    allowed = allowed_matrix(n, m, mask, causal)
    logits = scaled.masked_fill(~allowed, float("-inf"))
    weights = F.softmax(logits, dim=-1)                # NaN on rows with no allowed key
    empty = ~allowed.any(dim=-1)
    weights[empty] = 0.0                               # documented definition
    weights = weights.masked_fill(~allowed, 0.0)       # already exact 0; make it explicit
    output = weights @ v                               # (n, d_v)
    output[empty] = 0.0
    return {"scores": scores, "scaled": scaled, "weights": weights, "output": output,
            "allowed": allowed}


def check_invariants(name, res):
    w, allowed = res["weights"], res["allowed"]
    for key in ("scores", "scaled", "weights", "output"):
        assert torch.isfinite(res[key]).all(), f"{name}: non-finite {key}"
    assert (w[~allowed] == 0).all(), f"{name}: masked weight not exactly 0"
    nonempty = allowed.any(dim=-1)
    sums = w.sum(dim=-1)
    assert torch.allclose(sums[nonempty], torch.ones_like(sums[nonempty]), atol=1e-12), \
        f"{name}: row sums {sums}"
    assert (w[~nonempty] == 0).all() and (res["output"][~nonempty] == 0).all()


def sdpa_case(name, q, k, v, mask=None, causal=False, scale=None, with_f32=False):
    q, k, v = q.float(), k.float(), v.float()
    res = attention(q, k, v, mask, causal, scale)
    check_invariants(name, res)
    case = {
        "name": name, "kind": "sdpa",
        "q": as_list(q), "k": as_list(k), "v": as_list(v),
        "mask": None if mask is None else as_list(mask),
        "causal": bool(causal), "scale": None if scale is None else float(scale),
        "expected": {"weights": f64_list(res["weights"]), "output": f64_list(res["output"])},
    }
    if with_f32:
        r32 = attention(q, k, v, mask, causal, scale, dtype=torch.float32)
        case["expected_f32"] = {"weights": as_list(r32["weights"]),
                                "output": as_list(r32["output"])}
    return case, res


def self_case(name, x, wq, wk, wv, mask=None, causal=False, scale=None, expected_f32=None):
    x, wq, wk, wv = x.float(), wq.float(), wk.float(), wv.float()
    x64 = x.double()
    q, k, v = x64 @ wq.double(), x64 @ wk.double(), x64 @ wv.double()
    res = attention(q, k, v, mask, causal, scale)
    check_invariants(name, res)
    case = {
        "name": name, "kind": "self",
        "x": as_list(x), "wq": as_list(wq), "wk": as_list(wk), "wv": as_list(wv),
        "mask": None if mask is None else as_list(mask),
        "causal": bool(causal), "scale": None if scale is None else float(scale),
        "expected": {
            "q": f64_list(q), "k": f64_list(k), "v": f64_list(v),
            "scores": f64_list(res["scores"]), "scaled": f64_list(res["scaled"]),
            "weights": f64_list(res["weights"]), "output": f64_list(res["output"]),
        },
    }
    if expected_f32 is not None:
        case["expected_f32"] = expected_f32
    return case, res


def linear_weights_T(g, d_in, d_out):
    """nn.Linear(d_in, d_out, bias=False).weight.T drawn from generator g.

    Same distribution as nn.Linear's default init (kaiming_uniform(a=sqrt(5)),
    i.e. U(-1/sqrt(d_in), 1/sqrt(d_in))), in the episode's layout (d_in, d_out).
    """
    bound = 1.0 / math.sqrt(d_in)
    w = (torch.rand(d_out, d_in, generator=g) * 2.0 - 1.0) * bound
    return w.float().T.contiguous()


# ---------------------------------------------------------------- cases

cases = []
summary = []


def add(case_res, shape_note):
    case, _ = case_res
    cases.append(case)
    summary.append((case["name"], case["kind"], shape_note))


def shape(t):
    return "x".join(str(s) for s in t.shape)


# 1. The episode's section-6 snippet, run literally (float32), per seed.
episode_diffs = {}
for seed in (0, 42, 2024):
    torch.manual_seed(seed)
    X = torch.randn(3, 8)
    d_model = 8
    d_k = 8
    W_q = torch.nn.Linear(d_model, d_k, bias=False)
    W_k = torch.nn.Linear(d_model, d_k, bias=False)
    W_v = torch.nn.Linear(d_model, d_k, bias=False)
    with torch.no_grad():
        Q = W_q(X)
        K = W_k(X)
        V = W_v(X)
        scores = Q @ K.T
        scores = scores / (d_k ** 0.5)
        attn_weights = F.softmax(scores, dim=-1)
        output = attn_weights @ V
    name = f"episode-snippet-seed-{seed}"
    f32 = {"weights": as_list(attn_weights), "output": as_list(output)}
    case, res = self_case(name, X, W_q.weight.detach().T, W_k.weight.detach().T,
                          W_v.weight.detach().T, expected_f32=f32)
    episode_diffs[name] = (
        (attn_weights.double() - res["weights"]).abs().max().item(),
        (output.double() - res["output"]).abs().max().item(),
    )
    cases.append(case)
    summary.append((name, "self", "x 3x8, w 8x8 -> q/k/v 3x8, weights 3x3"))

# 2. Section 5 hand calculation (猫吃鱼, d_k = 4). v = identity(3), so output == weights.
q5 = torch.tensor([[1.0, 0.2, 0.1, 0.0],    # 猫
                   [0.3, 0.8, 0.2, 0.1],    # 吃
                   [0.1, 0.1, 0.9, 0.3]])   # 鱼
k5 = torch.tensor([[0.9, 0.1, 0.0, 0.2],
                   [0.2, 0.7, 0.3, 0.0],
                   [0.0, 0.2, 1.0, 0.1]])
v5 = torch.eye(3)
case, res = sdpa_case("section5-hand", q5, k5, v5)
row = [round(x, 4) for x in res["weights"][1].tolist()]
assert row == [0.3157, 0.3686, 0.3157], row
cases.append(case)
summary.append(("section5-hand", "sdpa", "q 3x4, k 3x4, v 3x3 (identity)"))


# 3. Random sdpa cases.
def rand_sdpa(name, n, m, d_k, d_v, mask=None, causal=False, scale=None, std=1.0,
              with_f32=False):
    g = gen_for(name)
    q = randn(g, n, d_k, std=std)
    k = randn(g, m, d_k, std=std)
    v = randn(g, m, d_v)
    case, res = sdpa_case(name, q, k, v, mask, causal, scale, with_f32)
    cases.append(case)
    extra = []
    if mask is not None:
        extra.append("mask")
    if causal:
        extra.append("causal")
    if scale is not None:
        extra.append(f"scale={scale}")
    summary.append((name, "sdpa", f"n={n} m={m} d_k={d_k} d_v={d_v}"
                    + (" " + ",".join(extra) if extra else "")))
    return res


def rand_mask(name, n, m, p=0.7):
    g = gen_for(name + "/mask")
    return torch.rand(n, m, generator=g) < p


# odd widths, d_v != d_k
rand_sdpa("dk1-dv2", 4, 5, 1, 2)
rand_sdpa("dk3-dv5", 5, 5, 3, 5)
rand_sdpa("dk5-dv3", 6, 4, 5, 3)
rand_sdpa("dk7-dv4", 3, 7, 7, 4)
rand_sdpa("dk13-dv6", 7, 9, 13, 6)
# single query / single key
rand_sdpa("n1-m6", 1, 6, 5, 3)
rand_sdpa("n1-m1", 1, 1, 3, 2)
rand_sdpa("n4-m1", 4, 1, 3, 5)
# rectangular
rand_sdpa("n-lt-m", 3, 8, 4, 6)
rand_sdpa("n-gt-m", 8, 3, 6, 4)
# causal
rand_sdpa("causal-square", 6, 6, 5, 7, causal=True)
rand_sdpa("causal-n-lt-m", 4, 7, 3, 5, causal=True)
rand_sdpa("causal-n-gt-m", 7, 4, 3, 5, causal=True)
# boolean masks
m_rand = rand_mask("mask-random", 5, 6)
assert m_rand.any(dim=-1).all(), "mask-random should have no empty row"
rand_sdpa("mask-random", 5, 6, 4, 3, mask=m_rand)
m_full = rand_mask("mask-fully-masked-row", 5, 6)
m_full[2, :] = False
m_full[[0, 1, 3, 4], 0] = True   # make sure only row 2 is empty
rand_sdpa("mask-fully-masked-row", 5, 6, 4, 3, mask=m_full)
m_all = torch.zeros(3, 4, dtype=torch.bool)
rand_sdpa("mask-all-masked", 3, 4, 3, 2, mask=m_all)
# mask + causal
m_mc = rand_mask("mask-and-causal", 6, 6)
m_mc[:, 0] = True  # keep every row non-empty
rand_sdpa("mask-and-causal", 6, 6, 5, 4, mask=m_mc, causal=True)
m_me = torch.ones(5, 7, dtype=torch.bool)
m_me[0, 0] = False   # row 0: causal allows only key 0, the mask forbids it -> empty row
m_me[3, 1] = False
m_me[4, 4] = False
rand_sdpa("mask-and-causal-emptied-row", 5, 7, 3, 4, mask=m_me, causal=True)
# custom scale
rand_sdpa("scale-0.1", 4, 5, 7, 3, scale=0.1)
rand_sdpa("scale-1.0", 4, 5, 7, 3, scale=1.0)
rand_sdpa("scale-0-uniform", 4, 5, 7, 3, scale=0.0)
rand_sdpa("scale-0-uniform-masked", 4, 5, 7, 3, scale=0.0,
          mask=rand_mask("scale-0-uniform-masked", 4, 5) | torch.eye(4, 5, dtype=torch.bool))

# large magnitudes, softmax saturates: |logits| ~ 1e4 with large differences
r = rand_sdpa("large-saturating", 5, 6, 5, 4, std=100.0, with_f32=True)
large_sat_max = r["scaled"].abs().max().item()


# large magnitudes, close together: logits = +-1e4 + O(1).
# In the "exact" variants every component is a multiple of 1/8, so every partial
# dot product is a multiple of 1/64 below 2^18 and the logits are exact in float32
# whatever the summation order: a float32 kernel that subtracts the row max must
# match float64 to ~1e-7, while one that exponentiates raw logits gets inf/NaN or 0/0.
# The "f32-rounding" variant uses ordinary random components: float32 cannot even
# represent its logits (ulp(2e4) = 2^-9), so any float32 kernel is off by ~1e-3
# in the logits and ~5e-4 in the weights; its expected_f32 shows torch's own float32.
def offset_case(name, offset_sign, exact):
    g = gen_for(name)
    n, m, d_k, d_v = 4, 5, 4, 3
    if exact:
        q = torch.randint(-12, 13, (n, d_k), generator=g).float() / 8.0
        k = torch.randint(-12, 13, (m, d_k), generator=g).float() / 8.0
    else:
        q = randn(g, n, d_k)
        k = randn(g, m, d_k)
    q[:, 0] = 100.0                  # q0 * k0 = +-2e4, * 1/sqrt(4) = +-1e4
    k[:, 0] = 200.0 * offset_sign
    v = randn(g, m, d_v)
    case, res = sdpa_case(name, q, k, v, with_f32=True)
    if exact:
        s32 = q.float() @ k.float().T
        assert torch.equal(s32.double(), res["scores"]), name + ": logits not float32-exact"
    cases.append(case)
    summary.append((name, "sdpa", f"n={n} m={m} d_k={d_k} d_v={d_v}, "
                    f"logits ~ {offset_sign * 1e4:+.0e} + O(1)"
                    + (", float32-exact logits" if exact else ", logits not float32-exact")))
    return res


offset_case("large-offset-pos", +1, exact=True)
offset_case("large-offset-neg", -1, exact=True)
offset_case("large-offset-pos-f32-rounding", +1, exact=False)

# width 64, 33 tokens
rand_sdpa("d64-n33", 33, 33, 64, 64)
rand_sdpa("d64-n33-causal", 33, 33, 64, 64, causal=True)


# 4. Self-attention cases: X (n, d_model), W (d_model, d_k | d_v).
def rand_self(name, n, d_model, d_k, d_v, mask=None, causal=False, scale=None):
    g = gen_for(name)
    x = randn(g, n, d_model)
    wq = linear_weights_T(g, d_model, d_k)
    wk = linear_weights_T(g, d_model, d_k)
    wv = linear_weights_T(g, d_model, d_v)
    case, res = self_case(name, x, wq, wk, wv, mask, causal, scale)
    cases.append(case)
    extra = []
    if mask is not None:
        extra.append("mask")
    if causal:
        extra.append("causal")
    summary.append((name, "self", f"n={n} d_model={d_model} d_k={d_k} d_v={d_v}"
                    + (" " + ",".join(extra) if extra else "")))


rand_self("self-n1", 1, 8, 8, 8)
rand_self("self-causal", 5, 8, 8, 8, causal=True)
m_self = rand_mask("self-mask", 5, 5)
m_self |= torch.eye(5, dtype=torch.bool)
rand_self("self-mask", 5, 8, 8, 8, mask=m_self)
rand_self("self-dk-ne-dv", 4, 6, 3, 5)
rand_self("self-16-tokens", 16, 8, 8, 8)

# ---------------------------------------------------------------- write

names = [c["name"] for c in cases]
assert len(names) == len(set(names)), "duplicate case names"

header = {"version": 1, "torch": torch.__version__, "generator": GENERATOR, "note": NOTE}
head = json.dumps(header, ensure_ascii=False, allow_nan=False)
lines = [json.dumps(c, ensure_ascii=False, allow_nan=False) for c in cases]
text = head[:-1] + ', "cases": [\n' + ",\n".join(lines) + "\n]}\n"
json.loads(text)  # round-trip check
with open(OUT_PATH, "w", encoding="utf-8") as f:
    f.write(text)

# ---------------------------------------------------------------- report

print(f"torch {torch.__version__}, wrote {OUT_PATH} ({len(text)} bytes, {len(cases)} cases)")
for name, kind, note in summary:
    print(f"  {kind:4s}  {name:30s} {note}")
print("section5-hand row 吃:", [round(x, 6) for x in
                               attention(q5.float(), k5.float(), v5)["weights"][1].tolist()])
for name, (dw, do) in episode_diffs.items():
    print(f"{name}: max |f32 - f64| weights {dw:.3e}, output {do:.3e}")
print(f"large-saturating: max |scaled| = {large_sat_max:.4g}")
print("torch float32 vs float64 expected (max abs diff, weights / output):")
for c in cases:
    if c["kind"] == "sdpa":
        q, k, v = (torch.tensor(c[key], dtype=torch.float32) for key in ("q", "k", "v"))
    else:
        x = torch.tensor(c["x"], dtype=torch.float32)
        q, k, v = (x @ torch.tensor(c[key], dtype=torch.float32) for key in ("wq", "wk", "wv"))
    mask = None if c["mask"] is None else torch.tensor(c["mask"], dtype=torch.bool)
    r32 = attention(q, k, v, mask, c["causal"], c["scale"], dtype=torch.float32)
    dw = (r32["weights"].double() - torch.tensor(c["expected"]["weights"])).abs().max().item()
    do = (r32["output"].double() - torch.tensor(c["expected"]["output"])).abs().max().item()
    print(f"  {c['name']:30s} {dw:.2e} / {do:.2e}")
sys.exit(0)
