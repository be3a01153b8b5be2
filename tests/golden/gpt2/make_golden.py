#!/usr/bin/python3
"""Generate tests/golden/gpt2/<case>/: small GPT-2-layout checkpoints and their reference outputs.

Run from the repository root with the system Python that has torch 1.13
(Debian's python3-torch), not a pyenv python:

    /usr/bin/python3 tests/golden/gpt2/make_golden.py

For every case it writes a folder with
  * config.json        - Hugging Face GPT2Config keys (json.dumps(indent=2, sort_keys=True) + "\\n",
                         as save_pretrained writes it)
  * model.safetensors  - the weights in Hugging Face's GPT-2 layout and names, written by hand
                         exactly as safetensors' save_file writes them (see write_safetensors)
  * expected.json      - reference logits, attention weights and greedy generation

The reference forward pass is written with plain torch ops (no transformers) and computed in
float64 from the weights as stored (for F16 / BF16 cases: after rounding to that dtype, which is
what a loader sees). The script checks itself: every safetensors file is read back by an
independent little reader, and the hand-written math (LayerNorm, softmax, gelu_new) is checked
against torch.nn.functional.layer_norm / torch.softmax / F.gelu(approximate="tanh").

Deterministic: every random draw comes from a torch.Generator seeded with the CRC-32 of
"<case>/<purpose>", so adding a case or a purpose changes nothing else. Running it twice gives
the same bytes.
"""

import json
import math
import os
import struct
import sys
import zlib

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
GENERATOR = "tests/golden/gpt2/make_golden.py"
NEW_TOKENS = 8
PROMPT_LEN = 4
MIN_MARGIN = 1e-3      # greedy steps must win by at least this much (float64 logits)

CASES = [
    dict(name="tiny-f32", L=1, H=1, C=8, V=24, P=16, dtype="F32", prefix=False, eps=1e-5),
    dict(name="two-layer-f16-prefix", L=2, H=2, C=12, V=40, P=24, dtype="F16", prefix=True, eps=1e-5),
    dict(name="odd-heads-bf16", L=4, H=3, C=15, V=50, P=32, dtype="BF16", prefix=False, eps=1e-6),
    dict(name="wide-f32", L=3, H=4, C=32, V=64, P=64, dtype="F32", prefix=False, eps=1e-5),
]

TORCH_DTYPE = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "U8": torch.uint8}
HF_DTYPE_NAME = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}
ITEM_SIZE = {"F32": 4, "F16": 2, "BF16": 2, "U8": 1}
# safetensors' Dtype enum order (safetensors/src/tensor.rs: "increasing alignment order")
DTYPE_ORDER = ["BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16",
               "I32", "U32", "F32", "F64", "I64", "U64"]


def gen(case, purpose):
    g = torch.Generator()
    g.manual_seed(zlib.crc32(f"{case}/{purpose}".encode()))
    return g


# ---------------------------------------------------------------- weights

def make_weights(c):
    """HF GPT-2 state dict (names without prefix) as float32, then rounded to the case dtype."""
    L, C, V, P = c["L"], c["C"], c["V"], c["P"]
    g = gen(c["name"], "weights")
    rn = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float32)
    w = {}
    w["wte.weight"] = rn(V, C) * 0.5
    w["wpe.weight"] = rn(P, C) * 0.3
    for i in range(L):
        p = f"h.{i}."
        w[p + "ln_1.weight"] = 1 + 0.2 * rn(C)
        w[p + "ln_1.bias"] = 0.1 * rn(C)
        w[p + "attn.c_attn.weight"] = rn(C, 3 * C) * (1.5 / math.sqrt(C))   # Conv1D: (in, out)
        w[p + "attn.c_attn.bias"] = 0.1 * rn(3 * C)
        w[p + "attn.c_proj.weight"] = rn(C, C) * (1.0 / math.sqrt(C))
        w[p + "attn.c_proj.bias"] = 0.05 * rn(C)
        w[p + "ln_2.weight"] = 1 + 0.2 * rn(C)
        w[p + "ln_2.bias"] = 0.1 * rn(C)
        w[p + "mlp.c_fc.weight"] = rn(C, 4 * C) * (1.5 / math.sqrt(C))
        w[p + "mlp.c_fc.bias"] = 0.1 * rn(4 * C)
        w[p + "mlp.c_proj.weight"] = rn(4 * C, C) * (1.0 / math.sqrt(4 * C))
        w[p + "mlp.c_proj.bias"] = 0.05 * rn(C)
    w["ln_f.weight"] = 1 + 0.2 * rn(C)
    w["ln_f.bias"] = 0.1 * rn(C)
    dt = TORCH_DTYPE[c["dtype"]]
    return {k: v.to(dt).contiguous() for k, v in w.items()}


def checkpoint_tensors(c, w):
    """The tensors as the file holds them: names, prefix and HF's extra buffers."""
    if not c["prefix"]:
        return dict(w)
    t = {"transformer." + k: v for k, v in w.items()}
    P = c["P"]
    for i in range(c["L"]):
        # transformers 4.x before the bool non-persistent buffers: uint8 tril mask and a
        # float masked_bias (-1e4), which model.half() turns into F16
        t[f"transformer.h.{i}.attn.bias"] = torch.tril(torch.ones(P, P, dtype=torch.uint8)).view(1, 1, P, P)
        t[f"transformer.h.{i}.attn.masked_bias"] = torch.tensor(-1e4).to(TORCH_DTYPE[c["dtype"]])
    t["lm_head.weight"] = w["wte.weight"].clone()
    return t


# ---------------------------------------------------------------- safetensors

def dtype_name(t):
    for k, v in TORCH_DTYPE.items():
        if t.dtype == v:
            return k
    raise TypeError(t.dtype)


def raw_bytes(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        arr = t.view(torch.int16).numpy()
    else:
        arr = t.numpy()
    return arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()


def write_safetensors(path, tensors):
    """As safetensors' serialize_to_file: tensors sorted by dtype (descending enum order) then
    name; header = compact JSON with __metadata__ first, padded with spaces to a multiple of 8."""
    items = sorted(tensors.items(), key=lambda kv: (-DTYPE_ORDER.index(dtype_name(kv[1])), kv[0]))
    header = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name, t in items:
        b = raw_bytes(t)
        header[name] = {"dtype": dtype_name(t), "shape": list(t.shape), "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    hb = json.dumps(header, separators=(",", ":")).encode()
    hb += b" " * ((8 - len(hb) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hb)))
        f.write(hb)
        for b in blobs:
            f.write(b)
    return [name for name, _ in items]


def read_safetensors(path):
    """An independent reader (no torch): returns {name: (dtype, shape, float64 or uint8 ndarray)}."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    assert n % 8 == 0 and data[8] == ord("{"), path
    header = json.loads(data[8:8 + n].decode("utf-8"))
    assert list(header)[0] == "__metadata__" and header["__metadata__"] == {"format": "pt"}
    body = data[8 + n:]
    out, pos = {}, 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        s, e = info["data_offsets"]
        assert s == pos, (name, s, pos)
        count = int(np.prod(info["shape"])) if info["shape"] else 1
        assert e - s == count * ITEM_SIZE[info["dtype"]], name
        raw = body[s:e]
        if info["dtype"] == "F32":
            arr = np.frombuffer(raw, dtype="<f4").astype(np.float64)
        elif info["dtype"] == "F16":
            arr = np.frombuffer(raw, dtype="<f2").astype(np.float64)
        elif info["dtype"] == "BF16":
            arr = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        else:
            arr = np.frombuffer(raw, dtype="u1").copy()
        out[name] = (info["dtype"], info["shape"], arr.reshape(info["shape"]))
        pos = e
    assert pos == len(body), path
    return out


# ---------------------------------------------------------------- reference forward pass

def ln_hand(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)       # biased, as LayerNorm
    return (x - mu) / torch.sqrt(var + eps) * w + b


def softmax_hand(s, allowed):
    s = s.masked_fill(~allowed, float("-inf"))
    e = torch.exp(s - s.max(-1, keepdim=True).values)
    return e / e.sum(-1, keepdim=True)


def gelu_new_hand(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def ln_torch(x, w, b, eps):
    return F.layer_norm(x, (x.shape[-1],), w, b, eps)


def softmax_torch(s, allowed):
    return torch.softmax(s.masked_fill(~allowed, float("-inf")), dim=-1)


def gelu_torch(x):
    return F.gelu(x, approximate="tanh")


HAND = (ln_hand, softmax_hand, gelu_new_hand)
TORCH_OPS = (ln_torch, softmax_torch, gelu_torch)


def forward(c, w, ids, dtype=torch.float64, ops=HAND):
    """Logits (n, V) and attention weights (L, H, n, n)."""
    ln, softmax, gelu = ops
    W = lambda k: w[k].to(dtype)
    L, H, C = c["L"], c["H"], c["C"]
    d = C // H
    n = len(ids)
    idx = torch.tensor(ids, dtype=torch.long)
    allowed = torch.ones(n, n, dtype=torch.bool).tril()
    h = W("wte.weight")[idx] + W("wpe.weight")[:n]
    att = []
    for i in range(L):
        p = f"h.{i}."
        a = ln(h, W(p + "ln_1.weight"), W(p + "ln_1.bias"), c["eps"])
        qkv = a @ W(p + "attn.c_attn.weight") + W(p + "attn.c_attn.bias")
        q, k, v = qkv[:, :C], qkv[:, C:2 * C], qkv[:, 2 * C:]
        ys, ws = [], []
        for j in range(H):
            sl = slice(j * d, (j + 1) * d)
            s = (q[:, sl] @ k[:, sl].T) / math.sqrt(d)
            wt = softmax(s, allowed)
            ws.append(wt)
            ys.append(wt @ v[:, sl])
        att.append(torch.stack(ws))
        h = h + torch.cat(ys, dim=1) @ W(p + "attn.c_proj.weight") + W(p + "attn.c_proj.bias")
        m = ln(h, W(p + "ln_2.weight"), W(p + "ln_2.bias"), c["eps"])
        h = h + gelu(m @ W(p + "mlp.c_fc.weight") + W(p + "mlp.c_fc.bias")) @ W(p + "mlp.c_proj.weight") \
            + W(p + "mlp.c_proj.bias")
    h = ln(h, W("ln_f.weight"), W("ln_f.bias"), c["eps"])
    return h @ W("wte.weight").T, torch.stack(att)


def greedy(c, w, prompt, dtype=torch.float64):
    ids, margins = list(prompt), []
    for _ in range(NEW_TOKENS):
        logits, _ = forward(c, w, ids, dtype)
        top = torch.topk(logits[-1], 2)
        margins.append(float(top.values[0] - top.values[1]))
        ids.append(int(top.indices[0]))
    return ids[len(prompt):], margins


# ---------------------------------------------------------------- JSON text

class Raw(str):
    pass


def num(x):
    x = float(x)
    assert math.isfinite(x)
    if x == 0:
        return Raw("0")
    s = "%.9g" % x
    return Raw(s)


def nested(t):
    if t.dim() == 0:
        return num(t)
    return [nested(r) for r in t]


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
        return repr(o)
    if isinstance(o, str):
        return json.dumps(o)
    if isinstance(o, (list, tuple)):
        return "[" + ",".join(emit(v) for v in o) + "]"
    if isinstance(o, dict):
        return "{" + ",".join(json.dumps(k) + ":" + emit(v) for k, v in o.items()) + "}"
    raise TypeError(type(o))


def hf_config(c):
    return {
        "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
        "bos_token_id": c["V"] - 1, "embd_pdrop": 0.1, "eos_token_id": c["V"] - 1,
        "initializer_range": 0.02, "layer_norm_epsilon": c["eps"], "model_type": "gpt2",
        "n_ctx": c["P"], "n_embd": c["C"], "n_head": c["H"], "n_inner": None, "n_layer": c["L"],
        "n_positions": c["P"], "reorder_and_upcast_attn": False, "resid_pdrop": 0.1,
        "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True,
        "torch_dtype": HF_DTYPE_NAME[c["dtype"]], "use_cache": True, "vocab_size": c["V"],
    }


# ---------------------------------------------------------------- cases

def make_case(c):
    name = c["name"]
    folder = os.path.join(HERE, name)
    os.makedirs(folder, exist_ok=True)
    w = make_weights(c)
    tensors = checkpoint_tensors(c, w)

    # safetensors, read back independently and compared bit for bit (as float64 / uint8)
    st_path = os.path.join(folder, "model.safetensors")
    order = write_safetensors(st_path, tensors)
    back = read_safetensors(st_path)
    assert list(back) == order, name
    for k, t in tensors.items():
        dt, shape, arr = back[k]
        assert dt == dtype_name(t) and shape == list(t.shape), k
        ref = t.numpy() if t.dtype == torch.uint8 else t.double().numpy()
        assert np.array_equal(arr, ref), k
    if c["prefix"]:
        assert back["transformer.h.0.attn.masked_bias"][2] == -1e4
        assert np.array_equal(back["lm_head.weight"][2], back["transformer.wte.weight"][2])
    # the reference reads its weights from the file as the loader will
    pre = "transformer." if c["prefix"] else ""
    w64 = {k: torch.from_numpy(back[pre + k][2].copy()) for k in w}

    with open(os.path.join(folder, "config.json"), "w") as f:
        f.write(json.dumps(hf_config(c), indent=2, sort_keys=True) + "\n")

    # token ids: lengths 1, P/2, P
    g = gen(name, "ids")
    seqs = [torch.randint(0, c["V"], (n,), generator=g).tolist() for n in (1, c["P"] // 2, c["P"])]

    out_seqs, stats = [], {"logits": 0.0, "attention": 0.0, "logits_rel": 0.0}
    for ids in seqs:
        logits, att = forward(c, w64, ids)
        # the HF-style ops give the same numbers
        lt, at = forward(c, w64, ids, ops=TORCH_OPS)
        assert torch.allclose(lt, logits, rtol=1e-12, atol=1e-12), name
        assert torch.allclose(at, att, rtol=1e-12, atol=1e-13), name
        # torch float32 (F.layer_norm, softmax, gelu tanh) on the same stored weights
        l32, a32 = forward(c, w64, ids, dtype=torch.float32, ops=TORCH_OPS)
        stats["logits"] = max(stats["logits"], float((l32.double() - logits).abs().max()))
        stats["logits_rel"] = max(stats["logits_rel"], float(((l32.double() - logits).abs()
                                                             / logits.abs().max()).max()))
        stats["attention"] = max(stats["attention"], float((a32.double() - att).abs().max()))
        out_seqs.append({"ids": ids, "logits": nested(logits), "attention": nested(att)})

    # greedy generation: prompt = the first 4 ids of the longest sequence; if a step's winner
    # is too close to call, the next draw of "greedy-prompt" is used instead (deterministic)
    prompt = seqs[-1][:PROMPT_LEN]
    gp = gen(name, "greedy-prompt")
    while True:
        new, margins = greedy(c, w64, prompt)
        if min(margins) >= MIN_MARGIN:
            break
        prompt = torch.randint(0, c["V"], (PROMPT_LEN,), generator=gp).tolist()
    new32, _ = greedy(c, w64, prompt, dtype=torch.float32)
    assert new32 == new, (name, new, new32)

    doc = {
        "version": 1, "torch": torch.__version__, "generator": GENERATOR, "case": name,
        "dtype": c["dtype"], "prefix": c["prefix"],
        "config": {"n_layer": c["L"], "n_head": c["H"], "n_embd": c["C"], "vocab_size": c["V"],
                   "n_positions": c["P"], "layer_norm_epsilon": c["eps"]},
        "note": ("float64 reference from the weights as stored in model.safetensors; numbers are "
                 "rounded to 9 significant digits; logits (n x vocab_size) for every position; "
                 "attention (n_layer x n_head x n x n) = softmax weights, 0 above the diagonal"),
        "f32_max_abs_diff": {"logits": Raw("%.3g" % stats["logits"]),
                             "attention": Raw("%.3g" % stats["attention"])},
        "sequences": out_seqs,
        "greedy": {"prompt": prompt, "new_tokens": new,
                   "margins": [Raw("%.6g" % m) for m in margins]},
    }
    parts = [json.dumps(k) + ":" + emit(v) for k, v in doc.items() if k != "sequences"]
    seq_text = ",\n".join(emit(s) for s in out_seqs)
    text = "{" + ",\n".join(parts[:-1]) + ',\n"sequences":[\n' + seq_text + "],\n" + parts[-1] + "}\n"
    json.loads(text)
    with open(os.path.join(folder, "expected.json"), "w") as f:
        f.write(text)
    sizes = {fn: os.path.getsize(os.path.join(folder, fn)) for fn in sorted(os.listdir(folder))}
    return stats, sizes, min(margins), prompt != seqs[-1][:PROMPT_LEN]


def hand_vs_hf_check():
    """tiny-f32's logits, recomputed with F.layer_norm / torch.softmax / F.gelu(tanh), also on
    random activations: the hand-written math is the same function."""
    g = gen("check", "ops")
    x = torch.randn(5, 7, generator=g, dtype=torch.float64) * 3
    w, b = torch.randn(7, generator=g, dtype=torch.float64), torch.randn(7, generator=g, dtype=torch.float64)
    assert torch.allclose(ln_hand(x, w, b, 1e-5), ln_torch(x, w, b, 1e-5), rtol=1e-13, atol=1e-13)
    allowed = torch.ones(5, 7, dtype=torch.bool).tril()
    assert torch.allclose(softmax_hand(x, allowed), softmax_torch(x, allowed), rtol=1e-13, atol=1e-15)
    assert torch.allclose(gelu_new_hand(x), gelu_torch(x), rtol=1e-13, atol=1e-13)


def main():
    hand_vs_hf_check()
    print(f"torch {torch.__version__}")
    total = 0
    print("case                    f32 vs f64: max|dlogits|  (rel to max|logit|)  max|dattention|"
          "   min greedy margin")
    for c in CASES:
        stats, sizes, margin, redrawn = make_case(c)
        total += sum(sizes.values())
        print(f"  {c['name']:22s} {stats['logits']:.3e}  ({stats['logits_rel']:.2e})  "
              f"{stats['attention']:.3e}   {margin:.4g}{' (prompt redrawn)' if redrawn else ''}")
        print("      " + ", ".join(f"{k} {v}" for k, v in sizes.items()))
    print(f"total {total} bytes")


if __name__ == "__main__":
    sys.exit(main())
