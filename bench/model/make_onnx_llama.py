#!/usr/bin/python3
"""A LLaMA-family checkpoint's weights as an ONNX model, for bench/llama.js (onnxruntime-web's side).

    /usr/bin/python3 bench/model/make_onnx_llama.py CHECKPOINT_DIR OUT_DIR [--opset 17]
                                                    [--reference-n 32]

Reads CHECKPOINT_DIR/config.json and CHECKPOINT_DIR/model.safetensors (Hugging Face's names;
F32, F16 or BF16, parsed by hand: transformers and safetensors are not installable here) and
writes into OUT_DIR (created; nothing here is committed):
  * model.onnx       - torch.onnx.export of the module below, every weight as float32 (a BF16 or
                       F16 value widened exactly): input "input_ids" int64 (1, n) with n dynamic,
                       output "logits" float32 (1, n, vocab_size)
  * model.onnx.data  - the initializers' bytes (ONNX external data: each initializer in model.onnx
                       names this file, an offset and a length). onnxruntime-web cannot create a
                       session from the 1.98 GB model.onnx that holds them inline (std::bad_alloc:
                       the protobuf and the tensors parsed from it are both in its 4 GB wasm
                       heap); given them as InferenceSession.create's externalData it can
  * reference.f32    - the module's own float32 logits (n, vocab_size) in torch for the ids
                       (i * 7919 + 13) % vocab_size, i < --reference-n (bench/llama.js's ids),
                       little-endian: a third opinion when attnmap and ORT are compared

Needs only torch (Debian's python3-torch 1.13 for /usr/bin/python3) and numpy.

The maths is tests/golden/llama/make_golden.py's reference forward pass (checked there against
Hugging Face's modelling code and against the same pass built from library ops), in float32 and
for one sequence:

  h = embed_tokens[ids]
  per layer:  x = RMSNorm(h; input_layernorm),  RMSNorm(x; w) = x / sqrt(mean(x^2) + eps) * w
              q, k, v = x Wq^T (+ bq), x Wk^T (+ bk), x Wv^T (+ bv)        (n, heads, head_dim)
              Qwen3 (q_norm / k_norm in the file): RMSNorm over head_dim, before RoPE
              RoPE rotate-half: inv_freq[i] = rope_theta^(-2i / head_dim) (float32, as HF),
                 emb = cat(pos * inv_freq, pos * inv_freq), q' = q cos(emb) + rotate_half(q) sin(emb),
                 rotate_half(x) = cat(-x2, x1)
              GQA: query head i reads kv head i // (heads / kv_heads)
              y = softmax(q' k'^T / sqrt(head_dim), causal) v;  h = h + y Wo^T (+ bo)
              x2 = RMSNorm(h; post_attention_layernorm);  h = h + down(silu(gate(x2)) * up(x2))
  logits = RMSNorm(h; norm) embed_tokens^T (tied) or lm_head^T

A bias is applied wherever the file has one (Qwen2: q, k, v). The projection matrices are stored
in the graph as (in, out), the transpose of the file's nn.Linear (out, in), so that the graph is a
plain MatMul with no Transpose of a weight for onnxruntime to fold into a second copy; the tied
embedding is one initializer, read by the Gather and (transposed) by the last MatMul.
Refused: rope scaling, another hidden_act, sliding windows (the benchmark's shapes have none).
"""

import argparse
import io
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn

DATA_FILE = "model.onnx.data"
ALIGN = 64                 # each initializer's offset in the data file
SMALL = 1024               # initializers of fewer bytes stay in model.onnx (onnx's size_threshold)
DTYPES = {"F32": ("<f4", 4), "F16": ("<f2", 2), "BF16": ("<u2", 2)}


def read_safetensors(path):
    """{name: float32 torch tensor}: the header (8-byte little-endian length, JSON), then each
    tensor's bytes at data_offsets from the end of the header; BF16 is the top half of a float32."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        base = 8 + n
        out = {}
        for name, info in header.items():
            if name == "__metadata__":
                continue
            dt, width = DTYPES[info["dtype"]]
            s, e = info["data_offsets"]
            count = int(np.prod(info["shape"])) if info["shape"] else 1
            assert e - s == count * width, name
            f.seek(base + s)
            raw = np.frombuffer(f.read(e - s), dtype=dt)
            if info["dtype"] == "BF16":
                arr = (raw.astype(np.uint32) << 16).view(np.float32)
            else:
                arr = raw.astype(np.float32)
            out[name] = torch.from_numpy(arr.reshape(info["shape"]))
    return out


# ---------------------------------------------------------------- external data, by hand
# The onnx package is not installable here, and torch 1.13 writes external data only above 2 GB.
# Protobuf's wire format: each field is a varint tag (field number << 3 | wire type) and a value:
# 0 varint, 1 fixed 64 bits, 2 a varint length then that many bytes, 5 fixed 32 bits. ModelProto's
# field 7 is its GraphProto, GraphProto's field 5 its initializers (TensorProto); a TensorProto
# keeps its bytes in raw_data (9), or names them in external_data (13: StringStringEntryProto,
# key 1, value 2: "location", "offset", "length") with data_location (14) = 1 (EXTERNAL).

def varint(x):
    out = bytearray()
    while True:
        b, x = x & 0x7F, x >> 7
        out.append(b | (0x80 if x else 0))
        if not x:
            return bytes(out)


def read_varint(buf, i):
    x = shift = 0
    while True:
        b = buf[i]
        x |= (b & 0x7F) << shift
        i, shift = i + 1, shift + 7
        if b < 0x80:
            return x, i


def fields(buf):
    """(field number, wire type, the field's bytes as they are, its value: a memoryview for type 2)."""
    i = 0
    while i < len(buf):
        start = i
        tag, i = read_varint(buf, i)
        wt = tag & 7
        if wt == 0:
            _, i = read_varint(buf, i)
            value = None
        elif wt == 1:
            i += 8
            value = None
        elif wt == 5:
            i += 4
            value = None
        elif wt == 2:
            n, i = read_varint(buf, i)
            value, i = buf[i:i + n], i + n
        else:
            raise ValueError(f"protobuf wire type {wt} at byte {start}")
        yield tag >> 3, wt, buf[start:i], value


def message(field, body):
    return varint(field << 3 | 2) + varint(len(body)) + bytes(body)


def externalize(model, data, location):
    """model: ModelProto bytes. Every initializer's raw_data of SMALL bytes or more goes to `data`
    (ALIGN-aligned offsets); returns (the ModelProto without them, how many moved)."""
    moved, out = 0, bytearray()
    for f, wt, raw, value in fields(model):
        if f != 7:
            out += raw
            continue
        graph = bytearray()
        for g, gwt, graw, gvalue in fields(value):
            if g != 5:
                graph += graw
                continue
            tensor, blob = bytearray(), None
            for t, twt, traw, tvalue in fields(gvalue):
                if t == 9 and len(tvalue) >= SMALL:
                    blob = tvalue
                else:
                    tensor += traw
            if blob is not None:
                offset = data.tell()
                data.write(blob)
                data.write(b"\0" * (-data.tell() % ALIGN))
                for k, v in (("location", location), ("offset", str(offset)), ("length", str(len(blob)))):
                    tensor += message(13, message(1, k.encode()) + message(2, v.encode()))
                tensor += varint(14 << 3 | 0) + varint(1)
                moved += 1
            graph += message(5, tensor)
        out += message(7, graph)
    return bytes(out), moved


# ---------------------------------------------------------------- the model

def check_config(c):
    bad = []
    if c.get("hidden_act", "silu") != "silu":
        bad.append(f"hidden_act {c['hidden_act']}")
    if c.get("rope_scaling") or c.get("rope_parameters"):
        bad.append("rope scaling")
    if c.get("use_sliding_window"):
        bad.append("a sliding window")
    if bad:
        sys.exit(f"make_onnx_llama.py: this config needs maths the module does not do: {', '.join(bad)}")


class Layer(nn.Module):
    """One decoder layer; parameter names short (they name the external data files)."""

    def __init__(self, w, p):
        super().__init__()
        a, m = p + "self_attn.", p + "mlp."
        lin = {"q": a + "q_proj", "k": a + "k_proj", "v": a + "v_proj", "o": a + "o_proj",
               "gate": m + "gate_proj", "up": m + "up_proj", "down": m + "down_proj"}
        self.has_bias, self.qk_norm = {}, a + "q_norm.weight" in w
        for short, full in lin.items():
            # (out, in) in the file -> (in, out) here: x @ W_t is x W^T
            setattr(self, short + "_w", nn.Parameter(w.pop(full + ".weight").t().contiguous(), requires_grad=False))
            self.has_bias[short] = full + ".bias" in w
            if self.has_bias[short]:
                setattr(self, short + "_b", nn.Parameter(w.pop(full + ".bias"), requires_grad=False))
        self.ln1 = nn.Parameter(w.pop(p + "input_layernorm.weight"), requires_grad=False)
        self.ln2 = nn.Parameter(w.pop(p + "post_attention_layernorm.weight"), requires_grad=False)
        if self.qk_norm:
            self.q_norm = nn.Parameter(w.pop(a + "q_norm.weight"), requires_grad=False)
            self.k_norm = nn.Parameter(w.pop(a + "k_norm.weight"), requires_grad=False)

    def lin(self, x, short):
        y = x @ getattr(self, short + "_w")
        return y + getattr(self, short + "_b") if self.has_bias[short] else y


class LlamaFamily(nn.Module):
    def __init__(self, c, w):
        super().__init__()
        self.H, self.KV = c["num_attention_heads"], c["num_key_value_heads"]
        self.D = c.get("head_dim") or c["hidden_size"] // self.H
        self.eps = float(c["rms_norm_eps"])
        self.embed = nn.Parameter(w.pop("model.embed_tokens.weight"), requires_grad=False)
        self.layers = nn.ModuleList(Layer(w, f"model.layers.{i}.") for i in range(c["num_hidden_layers"]))
        self.norm = nn.Parameter(w.pop("model.norm.weight"), requires_grad=False)
        self.tied = "lm_head.weight" not in w
        if not self.tied:
            self.lm_head = nn.Parameter(w.pop("lm_head.weight"), requires_grad=False)
        assert not w, f"tensors the module does not use: {sorted(w)[:5]}"
        # HF's float32 inverse frequencies (compute_default_rope_parameters)
        D = self.D
        inv = 1.0 / (float(c["rope_theta"]) ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D))
        self.register_buffer("inv_freq", inv, persistent=False)

    def rmsnorm(self, x, w):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + self.eps) * w

    def forward(self, input_ids):
        H, KV, D = self.H, self.KV, self.D
        n = input_ids.shape[1]                                          # dynamic in the export
        pos = torch.arange(n, dtype=torch.int64)
        ang = pos.float()[:, None] * self.inv_freq[None, :]
        emb = torch.cat((ang, ang), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]         # (1, 1, n, D)
        allowed = pos[None, :] <= pos[:, None]                          # (n, n): key j <= query i
        rope = lambda t: t * cos + torch.cat((-t[..., D // 2:], t[..., :D // 2]), dim=-1) * sin
        h = self.embed[input_ids]                                       # (1, n, C)
        for layer in self.layers:
            x = self.rmsnorm(h, layer.ln1)
            q = layer.lin(x, "q").view(1, n, H, D)
            k = layer.lin(x, "k").view(1, n, KV, D)
            v = layer.lin(x, "v").view(1, n, KV, D).transpose(1, 2)     # (1, KV, n, D)
            if layer.qk_norm:
                q, k = self.rmsnorm(q, layer.q_norm), self.rmsnorm(k, layer.k_norm)
            q, k = rope(q.transpose(1, 2)), rope(k.transpose(1, 2))      # (1, H, n, D), (1, KV, n, D)
            # GQA: kv head j serves query heads j*rep .. j*rep + rep - 1 (HF's repeat_kv)
            rep = H // KV
            k = k[:, :, None].expand(1, KV, rep, n, D).reshape(1, H, n, D)
            v = v[:, :, None].expand(1, KV, rep, n, D).reshape(1, H, n, D)
            s = (q @ k.transpose(-1, -2)) / math.sqrt(D)
            s = s.masked_fill(~allowed, float("-inf"))
            y = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(1, n, H * D)
            h = h + layer.lin(y, "o")
            x2 = self.rmsnorm(h, layer.ln2)
            g = layer.lin(x2, "gate")
            h = h + layer.lin(g * torch.sigmoid(g) * layer.lin(x2, "up"), "down")
        h = self.rmsnorm(h, self.norm)
        return h @ (self.embed if self.tied else self.lm_head).t()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--reference-n", type=int, default=32)
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    times = {}
    torch.set_grad_enabled(False)

    t0 = time.perf_counter()
    with open(os.path.join(a.checkpoint_dir, "config.json")) as f:
        c = json.load(f)
    check_config(c)
    w = read_safetensors(os.path.join(a.checkpoint_dir, "model.safetensors"))
    model = LlamaFamily(c, w).eval()
    params = sum(p.numel() for p in model.parameters())
    times["read"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    V = c["vocab_size"]
    ids = torch.tensor([[(i * 7919 + 13) % V for i in range(a.reference_n)]], dtype=torch.int64)
    logits = model(ids)
    assert logits.shape == (1, a.reference_n, V) and torch.isfinite(logits).all()
    logits[0].contiguous().numpy().astype("<f4").tofile(os.path.join(a.out_dir, "reference.f32"))
    times[f"torch forward n={a.reference_n}"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    proto = io.BytesIO()
    # no constant folding: it would fold embedᵀ into a second vocab x hidden initializer
    torch.onnx.export(model, (ids[:, :8],), proto, input_names=["input_ids"], output_names=["logits"],
                      dynamic_axes={"input_ids": {1: "n"}, "logits": {1: "n"}},
                      opset_version=a.opset, do_constant_folding=False)
    times["onnx export"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    with open(os.path.join(a.out_dir, DATA_FILE), "wb") as data:
        small, moved = externalize(proto.getbuffer(), data, DATA_FILE)
    del proto
    onnx_path = os.path.join(a.out_dir, "model.onnx")
    with open(onnx_path, "wb") as f:
        f.write(small)
    times["external data"] = time.perf_counter() - t0

    print(f"torch {torch.__version__}; {c['model_type']}: {len(model.layers)} layers, hidden {c['hidden_size']}, "
          f"{model.H} heads, {model.KV} kv heads, head_dim {model.D}, vocab {V}; {params} parameters as float32; "
          f"max |logit| {float(logits.abs().max()):.4g} over {a.reference_n} tokens")
    print(f"  model.onnx {os.path.getsize(onnx_path)} bytes; {DATA_FILE} {os.path.getsize(os.path.join(a.out_dir, DATA_FILE))} bytes "
          f"({moved} initializers)")
    print("  " + ", ".join(f"{k} {v:.1f} s" for k, v in times.items()))


if __name__ == "__main__":
    main()
