#!/usr/bin/python3
"""Build a GPT-2-small-shaped model with random seeded weights for the model benchmark.

    /usr/bin/python3 bench/model/make_onnx.py OUT_DIR [--seed 0] [--dtype F32|F16|BF16]
                                              [--opset 17] [--n-layer 12 ...]

Writes into OUT_DIR (created if missing; nothing here is committed):
  * model.safetensors - Hugging Face GPT-2 layout and names (wte.weight, wpe.weight,
                        h.{i}.ln_1.weight, h.{i}.attn.c_attn.weight (C, 3C) ..., ln_f.bias), no
                        prefix, written as safetensors' save_file writes it
  * config.json       - Hugging Face GPT2Config keys
  * model.onnx        - the same weights (as float32; for F16 / BF16 the rounded values),
                        torch.onnx.export of the reference module below: input "input_ids" int64
                        (1, n) with n dynamic, output "logits" float32 (1, n, vocab_size)

Needs only torch (Debian's python3-torch 1.13 for /usr/bin/python3); torch.onnx.export writes
the protobuf itself and does not need the onnx Python package.

The module is the same math as tests/golden/gpt2/make_golden.py's reference (which is checked
there against hand-written LayerNorm / softmax / gelu_new): pre-LayerNorm blocks, Conv1D weights
(x @ W + b), causal softmax(q kᵀ / √d_head), gelu_new, ln_f, logits = h @ wteᵀ (tied).
Weights use the golden script's scales (projections std ~1.5/√C, LayerNorm weights 1 ± 0.2,
small biases), so attention is far from uniform.
"""

import argparse
import json
import math
import os
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

TORCH_DTYPE = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
HF_DTYPE_NAME = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}
DTYPE_ORDER = ["BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16",
               "I32", "U32", "F32", "F64", "I64", "U64"]


class Block(nn.Module):
    def __init__(self, C, H, eps):
        super().__init__()
        self.H, self.C, self.d = H, C, C // H   # python ints: constants in the traced graph
        self.ln_1 = nn.LayerNorm(C, eps=eps)
        self.ln_2 = nn.LayerNorm(C, eps=eps)
        self.attn = nn.Module()
        self.attn.c_attn = Conv1D(C, 3 * C)
        self.attn.c_proj = Conv1D(C, C)
        self.mlp = nn.Module()
        self.mlp.c_fc = Conv1D(C, 4 * C)
        self.mlp.c_proj = Conv1D(4 * C, C)

    def forward(self, h, allowed):
        B, n = h.shape[0], h.shape[1]                                   # dynamic in the export
        H, C, d = self.H, self.C, self.d
        qkv = self.attn.c_attn(self.ln_1(h))
        q, k, v = qkv.split(C, dim=2)
        heads = lambda t: t.view(B, n, H, d).transpose(1, 2)            # (B, H, n, d)
        q, k, v = heads(q), heads(k), heads(v)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(d)
        s = s.masked_fill(~allowed, float("-inf"))
        y = torch.softmax(s, dim=-1) @ v
        y = y.transpose(1, 2).reshape(B, n, C)
        h = h + self.attn.c_proj(y)
        return h + self.mlp.c_proj(F.gelu(self.mlp.c_fc(self.ln_2(h)), approximate="tanh"))


class Conv1D(nn.Module):
    """HF's Conv1D: weight (in, out), y = x @ W + b."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.empty(n_out))

    def forward(self, x):
        return x @ self.weight + self.bias


class GPT2(nn.Module):
    """state_dict() names are HF's GPT2Model names: wte.weight, h.0.attn.c_attn.weight, ..."""

    def __init__(self, L, H, C, V, P, eps):
        super().__init__()
        self.wte = nn.Embedding(V, C)
        self.wpe = nn.Embedding(P, C)
        self.h = nn.ModuleList(Block(C, H, eps) for _ in range(L))
        self.ln_f = nn.LayerNorm(C, eps=eps)
        self.register_buffer("causal", torch.ones(P, P, dtype=torch.bool).tril(), persistent=False)

    def forward(self, input_ids):
        n = input_ids.shape[1]
        pos = torch.arange(n, dtype=torch.long, device=input_ids.device)
        h = self.wte(input_ids) + self.wpe(pos)
        allowed = self.causal[:n, :n]
        for block in self.h:
            h = block(h, allowed)
        return self.ln_f(h) @ self.wte.weight.t()


def init_weights(model, seed, C):
    g = torch.Generator()
    g.manual_seed(seed)
    rn = lambda t, std: t.copy_(torch.randn(t.shape, generator=g) * std)
    with torch.no_grad():
        rn(model.wte.weight, 0.5)
        rn(model.wpe.weight, 0.3)
        for b in model.h:
            for ln in (b.ln_1, b.ln_2):
                ln.weight.copy_(1 + 0.2 * torch.randn(C, generator=g))
                rn(ln.bias, 0.1)
            rn(b.attn.c_attn.weight, 1.5 / math.sqrt(C)); rn(b.attn.c_attn.bias, 0.1)
            rn(b.attn.c_proj.weight, 1.0 / math.sqrt(C)); rn(b.attn.c_proj.bias, 0.05)
            rn(b.mlp.c_fc.weight, 1.5 / math.sqrt(C)); rn(b.mlp.c_fc.bias, 0.1)
            rn(b.mlp.c_proj.weight, 1.0 / math.sqrt(4 * C)); rn(b.mlp.c_proj.bias, 0.05)
        model.ln_f.weight.copy_(1 + 0.2 * torch.randn(C, generator=g))
        rn(model.ln_f.bias, 0.1)


def write_safetensors(path, tensors):
    """As safetensors' save_file: sorted by dtype (descending enum order) then name; compact JSON
    header with __metadata__ first, padded with spaces to a multiple of 8; little-endian data."""
    name_of = {v: k for k, v in TORCH_DTYPE.items()}
    items = sorted(tensors.items(), key=lambda kv: (-DTYPE_ORDER.index(name_of[kv[1].dtype]), kv[0]))
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, t in items:
        nbytes = t.numel() * t.element_size()
        header[name] = {"dtype": name_of[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    hb = json.dumps(header, separators=(",", ":")).encode()
    hb += b" " * ((8 - len(hb) % 8) % 8)
    assert sys.byteorder == "little"
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hb)))
        f.write(hb)
        for _, t in items:
            t = t.contiguous()
            if t.dtype == torch.bfloat16:
                t = t.view(torch.int16)
            f.write(t.numpy().tobytes())
    return header


def check_safetensors(path, tensors):
    """Read the header back and one tensor (wte.weight) and compare."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        info = header["wte.weight"]
        f.seek(8 + n + info["data_offsets"][0])
        raw = f.read(info["data_offsets"][1] - info["data_offsets"][0])
    t = tensors["wte.weight"].contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    assert raw == t.numpy().tobytes()
    assert sum(e - s for s, e in (v["data_offsets"] for k, v in header.items() if k != "__metadata__")) \
        == os.path.getsize(path) - 8 - n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dtype", choices=list(TORCH_DTYPE), default="F32")
    ap.add_argument("--opset", type=int, default=17, help="ONNX opset (17: LayerNormalization op)")
    ap.add_argument("--n-layer", type=int, default=12)
    ap.add_argument("--n-head", type=int, default=12)
    ap.add_argument("--n-embd", type=int, default=768)
    ap.add_argument("--vocab-size", type=int, default=50257)
    ap.add_argument("--n-positions", type=int, default=1024)
    ap.add_argument("--eps", type=float, default=1e-5)
    ap.add_argument("--no-onnx", action="store_true")
    a = ap.parse_args()
    L, H, C, V, P = a.n_layer, a.n_head, a.n_embd, a.vocab_size, a.n_positions
    assert C % H == 0
    os.makedirs(a.out_dir, exist_ok=True)
    times = {}

    t0 = time.perf_counter()
    torch.manual_seed(a.seed)
    model = GPT2(L, H, C, V, P, a.eps).eval()
    init_weights(model, a.seed, C)
    sd = {k: v.detach().to(TORCH_DTYPE[a.dtype]).contiguous() for k, v in model.state_dict().items()}
    with torch.no_grad():   # the module runs on exactly what the file holds
        for k, p in model.state_dict().items():
            p.copy_(sd[k].float())
    times["init"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    st = os.path.join(a.out_dir, "model.safetensors")
    write_safetensors(st, sd)
    check_safetensors(st, sd)
    config = {
        "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
        "bos_token_id": V - 1, "embd_pdrop": 0.1, "eos_token_id": V - 1, "initializer_range": 0.02,
        "layer_norm_epsilon": a.eps, "model_type": "gpt2", "n_ctx": P, "n_embd": C, "n_head": H,
        "n_inner": None, "n_layer": L, "n_positions": P, "reorder_and_upcast_attn": False,
        "resid_pdrop": 0.1, "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True,
        "torch_dtype": HF_DTYPE_NAME[a.dtype], "use_cache": True, "vocab_size": V,
    }
    with open(os.path.join(a.out_dir, "config.json"), "w") as f:
        f.write(json.dumps(config, indent=2, sort_keys=True) + "\n")
    times["safetensors"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    ids = torch.randint(0, V, (1, 8), generator=torch.Generator().manual_seed(a.seed))
    with torch.no_grad():
        logits = model(ids)
    assert logits.shape == (1, 8, V) and torch.isfinite(logits).all()
    times["forward n=8"] = time.perf_counter() - t0

    if not a.no_onnx:
        t0 = time.perf_counter()
        onnx_path = os.path.join(a.out_dir, "model.onnx")
        with torch.no_grad():
            # no constant folding: it would fold wteᵀ into a second vocab x n_embd initializer
            torch.onnx.export(model, (ids,), onnx_path, input_names=["input_ids"],
                              output_names=["logits"],
                              dynamic_axes={"input_ids": {1: "n"}, "logits": {1: "n"}},
                              opset_version=a.opset, do_constant_folding=False)
        times["onnx export"] = time.perf_counter() - t0

    print(f"torch {torch.__version__}; L={L} H={H} C={C} V={V} P={P} {a.dtype} seed {a.seed}; "
          f"{sum(p.numel() for p in model.parameters())} parameters")
    for fn in sorted(os.listdir(a.out_dir)):
        print(f"  {fn:20s} {os.path.getsize(os.path.join(a.out_dir, fn)):>12d} bytes")
    print("  " + ", ".join(f"{k} {v:.2f} s" for k, v in times.items()))


if __name__ == "__main__":
    main()
