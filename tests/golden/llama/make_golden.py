#!/usr/bin/python3
"""Generate tests/golden/llama/<case>/: small LLaMA-family checkpoints (Llama, Qwen2, Qwen3) and
their reference outputs.

Run from the repository root with the system Python that has torch 1.13 (Debian's python3-torch),
not a pyenv python:

    /usr/bin/python3 tests/golden/llama/make_golden.py

For every case it writes a folder with
  * config.json  - the keys save_pretrained writes for that model_type and vintage
                   (json.dumps(indent=2, sort_keys=True) + "\\n", only non-default keys, as
                   PretrainedConfig.to_diff_dict keeps them; see hf_config)
  * model.safetensors, or model-0000i-of-0000n.safetensors + model.safetensors.index.json
                 - the weights in Hugging Face's names, written by hand exactly as safetensors'
                   serialize writes them, split as huggingface_hub's split_torch_state_dict_into_shards
                   splits them (see write_safetensors, split_into_shards)
  * expected.json - RoPE inverse frequencies, reference logits, attention weights, greedy generation

The reference forward pass is plain torch ops in float64 from the weights as stored (for F16 / BF16
cases: after rounding, which is what a loader sees). No transformers: the maths was written from
the formulas below and checked against Hugging Face's code, read in the huggingface/transformers
repository (HF is the authority for every point marked [HF]):

  h = embed_tokens[ids]                                   (nn.Embedding; padding_idx has no effect on forward)
  per layer l:
    x  = RMSNorm(h; input_layernorm)
         RMSNorm(x; w) = x / sqrt(mean(x^2) + rms_norm_eps) * w
         [HF LlamaRMSNorm / Qwen2RMSNorm / Qwen3RMSNorm.forward: the normalisation is done in float32,
          cast back to the input dtype, then multiplied by the weight; no bias, no (1 + w)]
    q = x Wq^T (+ bq), k = x Wk^T (+ bk), v = x Wv^T (+ bv)     nn.Linear weight is (out, in)
         [HF modeling_llama.py LlamaAttention.__init__: attention_bias gives q, k, v AND o_proj a bias;
          modeling_qwen2.py Qwen2Attention.__init__: q, k, v bias=True always, o_proj bias=False, no
          config key; modeling_qwen3.py Qwen3Attention.__init__: attention_bias for q, k, v and o]
    Qwen3 only: q, k viewed as (n, heads, head_dim) get RMSNorm over head_dim with q_norm / k_norm
         (weights (head_dim), eps = rms_norm_eps, shared by all heads), BEFORE RoPE
         [HF Qwen3Attention.forward: q_norm(q_proj(x).view(..., head_dim)), then apply_rotary_pos_emb]
    RoPE (rotate-half, GPT-NeoX layout), on every head of q and k:
         inv_freq[i] = rope_theta ** (-2i / head_dim), i = 0 .. head_dim/2 - 1
         angle = position * inv_freq, duplicated over both halves: emb = cat(angle, angle)
         q' = q * cos(emb) + rotate_half(q) * sin(emb), rotate_half(x) = cat(-x2, x1)
         [HF *RotaryEmbedding.forward, rotate_half, apply_rotary_pos_emb; compute_default_rope_parameters.
          HF computes inv_freq, angles and cos/sin in float32 and then casts cos/sin to the
          activation dtype; attention_scaling is 1.0 for "default" and "llama3"]
    rope_type "llama3" [HF modeling_rope_utils.py _compute_llama3_parameters]:
         wavelen = 2*pi / inv_freq; low_wl = original_max_position_embeddings / low_freq_factor;
         high_wl = original_max_position_embeddings / high_freq_factor
         wavelen < high_wl            -> inv_freq unchanged          (high frequencies)
         wavelen > low_wl             -> inv_freq / factor           (low frequencies)
         high_wl <= wavelen <= low_wl -> (1 - s) * inv_freq / factor + s * inv_freq,
                                         s = (original_max_position_embeddings / wavelen - low_freq_factor)
                                             / (high_freq_factor - low_freq_factor)   (both ends inclusive)
    GQA: query head i uses kv head i // (num_attention_heads / num_key_value_heads)
         [HF repeat_kv: (kv, n_rep) -> kv * n_rep, so kv head j serves query heads j*n_rep .. j*n_rep+n_rep-1]
    w_i = softmax(q'_i k'_j^T * head_dim**-0.5, causal); y = concat_i(w_i v_j)   (H * head_dim wide)
         [HF eager_attention_forward: scaling = head_dim**-0.5 with head_dim = config.head_dim when present,
          else hidden_size // num_attention_heads; softmax in float32; the causal mask is added as
          finfo.min, which gives exactly 0 here]
    h = h + y Wo^T (+ bo)
    x2 = RMSNorm(h; post_attention_layernorm)
    h = h + down(silu(gate(x2)) * up(x2))      [HF LlamaMLP: mlp_bias gives gate, up and down a bias;
                                                Qwen2MLP / Qwen3MLP: never a bias]
  logits = RMSNorm(h; norm) lm_head^T, or embed_tokens^T when tie_word_embeddings
         [HF PreTrainedModel.save_pretrained drops the tied "lm_head.weight" from the file: of the names
          sharing one storage, those matching _tied_weights_keys are deleted except the last in sorted order,
          so "model.embed_tokens.weight" stays]

The script checks itself: every safetensors file (and the shard index) is read back by an independent
reader and compared bit for bit; the inverse frequencies are recomputed in plain Python floats; the
hand-written math is checked (to 1e-12) against the same pass built from library ops (RMSNorm via
F.layer_norm on [x, -x], torch.softmax, F.silu, F.linear, RoPE as a complex multiplication, GQA by
repeat_interleave and one batched matmul) for every sequence of every case; and a float32 run in Hugging
Face's formulation (float32 inv_freq, rsqrt RMSNorm) gives the distances recorded in f32_max_abs_diff
and must pick the same greedy tokens.

Deterministic: every random draw comes from a torch.Generator seeded with the CRC-32 of
"<case>/<purpose>", so adding a case or a purpose changes nothing else. Running it twice gives the
same bytes.
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
GENERATOR = "tests/golden/llama/make_golden.py"
NEW_TOKENS = 8
PROMPT_LEN = 4
MIN_MARGIN = 1e-3      # greedy steps must win by at least this much (float64 logits)

# H = num_attention_heads, KV = num_key_value_heads, D = head_dim, C = hidden_size,
# I = intermediate_size, V = vocab_size, P = max_position_embeddings.
# qk: std multiplier of q_proj / k_proj (times 1/sqrt(C)); qkn: mean of q_norm / k_norm weights.
CASES = [
    dict(name="llama-f32", model_type="llama", vintage="llama-4.38", L=2, H=4, KV=4, D=8, C=32, I=48,
         V=48, P=64, dtype="F32", eps=1e-5, theta=10000.0, scaling=None, tied=False,
         attention_bias=False, mlp_bias=False, lengths=(1, 16, 40), qk=1.4),
    dict(name="qwen2-bf16", model_type="qwen2", vintage="qwen2-4.43", L=2, H=4, KV=2, D=8, C=32, I=64,
         V=64, P=64, dtype="BF16", eps=1e-6, theta=1000000.0, scaling=None, tied=True,
         lengths=(1, 16, 40), qk=1.4),
    dict(name="qwen3-f16-headdim", model_type="qwen3", vintage="qwen3-4.51", L=3, H=4, KV=1, D=16, C=24,
         I=64, V=80, P=64, dtype="F16", eps=1e-6, theta=1000000.0, scaling=None, tied=True,
         attention_bias=False, lengths=(1, 16, 40), qk=1.0, qkn=1.6),
    dict(name="llama3-rope-bf16", model_type="llama", vintage="llama-5", L=2, H=2, KV=1, D=16, C=32, I=48,
         V=64, P=64, dtype="BF16", eps=1e-5, theta=500000.0,
         scaling={"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                  "original_max_position_embeddings": 40, "rope_type": "llama3"},
         tied=False, attention_bias=False, mlp_bias=False, lengths=(1, 24, 48), qk=1.2),
    dict(name="qwen2-sharded-f32", model_type="qwen2", vintage="qwen2-4.51", L=3, H=4, KV=2, D=6, C=24, I=40,
         V=48, P=64, dtype="F32", eps=1e-6, theta=10000.0, scaling=None, tied=False,
         lengths=(1, 16, 40), qk=1.4, shards=3, max_shard_size=24000, sliding_window=4096),
    dict(name="llama-bias-f32", model_type="llama", vintage="llama-4.51", L=2, H=4, KV=2, D=8, C=32, I=48,
         V=48, P=64, dtype="F32", eps=1e-5, theta=10000.0, scaling=None, tied=True,
         attention_bias=True, mlp_bias=True, lengths=(1, 16, 40), qk=1.4),
]

TORCH_DTYPE = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
HF_DTYPE_NAME = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}
ITEM_SIZE = {"F32": 4, "F16": 2, "BF16": 2}
# safetensors' Dtype enum order (safetensors/src/tensor.rs: "increasing alignment order")
DTYPE_ORDER = ["BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16",
               "I32", "U32", "F32", "F64", "I64", "U64"]


def gen(case, purpose):
    g = torch.Generator()
    g.manual_seed(zlib.crc32(f"{case}/{purpose}".encode()))
    return g


# ---------------------------------------------------------------- family rules

def biased(c):
    """Which projections carry a bias, per HF's modules (see the docstring)."""
    mt = c["model_type"]
    if mt == "qwen2":
        attn = ("q_proj", "k_proj", "v_proj")
    elif c["attention_bias"]:
        attn = ("q_proj", "k_proj", "v_proj", "o_proj")
    else:
        attn = ()
    mlp = ("gate_proj", "up_proj", "down_proj") if mt == "llama" and c["mlp_bias"] else ()
    return attn, mlp


def qk_norm(c):
    return c["model_type"] == "qwen3"


# ---------------------------------------------------------------- weights

def make_weights(c):
    """HF state dict, in module registration order (what model.state_dict() yields, tied lm_head
    already dropped), drawn in float32 and rounded to the case dtype."""
    L, H, KV, D, C, I, V = c["L"], c["H"], c["KV"], c["D"], c["C"], c["I"], c["V"]
    attn_b, mlp_b = biased(c)
    g = gen(c["name"], "weights")
    rn = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float32)
    w = {"model.embed_tokens.weight": rn(V, C) * 0.5}
    for i in range(L):
        p = f"model.layers.{i}."
        a = p + "self_attn."
        shapes = {"q_proj": (H * D, C), "k_proj": (KV * D, C), "v_proj": (KV * D, C), "o_proj": (C, H * D)}
        std = {"q_proj": c["qk"] / math.sqrt(C), "k_proj": c["qk"] / math.sqrt(C),
               "v_proj": 1 / math.sqrt(C), "o_proj": 1 / math.sqrt(H * D)}
        bstd = {"q_proj": 0.2, "k_proj": 0.2, "v_proj": 0.1, "o_proj": 0.05}
        for m in ("q_proj", "k_proj", "v_proj", "o_proj"):
            w[a + m + ".weight"] = rn(*shapes[m]) * std[m]
            if m in attn_b:
                w[a + m + ".bias"] = rn(shapes[m][0]) * bstd[m]
        if qk_norm(c):
            w[a + "q_norm.weight"] = c["qkn"] + 0.3 * rn(D)
            w[a + "k_norm.weight"] = c["qkn"] + 0.3 * rn(D)
        shapes = {"gate_proj": (I, C), "up_proj": (I, C), "down_proj": (C, I)}
        std = {"gate_proj": 1.5 / math.sqrt(C), "up_proj": 1.5 / math.sqrt(C), "down_proj": 1 / math.sqrt(I)}
        for m in ("gate_proj", "up_proj", "down_proj"):
            w[p + "mlp." + m + ".weight"] = rn(*shapes[m]) * std[m]
            if m in mlp_b:
                w[p + "mlp." + m + ".bias"] = rn(shapes[m][0]) * (0.1 if m != "down_proj" else 0.05)
        w[p + "input_layernorm.weight"] = 1 + 0.2 * rn(C)
        w[p + "post_attention_layernorm.weight"] = 1 + 0.2 * rn(C)
    w["model.norm.weight"] = 1 + 0.2 * rn(C)
    if not c["tied"]:
        w["lm_head.weight"] = rn(V, C) * 0.5
    dt = TORCH_DTYPE[c["dtype"]]
    return {k: v.to(dt).contiguous() for k, v in w.items()}


# ---------------------------------------------------------------- safetensors

def dtype_name(t):
    for k, v in TORCH_DTYPE.items():
        if t.dtype == v:
            return k
    raise TypeError(t.dtype)


def raw_bytes(t):
    t = t.contiguous()
    arr = t.view(torch.int16).numpy() if t.dtype == torch.bfloat16 else t.numpy()
    return arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()


def write_safetensors(path, tensors):
    """As safetensors' serialize_to_file: tensors sorted by dtype (descending enum order) then name;
    header = compact JSON with __metadata__ {"format": "pt"} first (transformers' save_pretrained
    passes that metadata), padded with spaces to a multiple of 8."""
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


def split_into_shards(state_dict, max_shard_size):
    """huggingface_hub serialization/_base.py split_state_dict_into_shards_factory, for tensors that
    share no storage: walk the state dict in order, start a new shard when the next tensor would tip
    the current one over max_shard_size (a tensor bigger than the limit gets a shard of its own);
    total_size = the sum of all tensor byte sizes. Returns ([{name: tensor}], total_size)."""
    shards, current, current_size, total = [], {}, 0, 0
    for name, t in state_dict.items():
        size = t.numel() * t.element_size()
        if size > max_shard_size:
            total += size
            shards.append({name: t})
            continue
        if current_size + size > max_shard_size:
            shards.append(current)
            current, current_size = {}, 0
        current[name] = t
        current_size += size
        total += size
    if current:
        shards.append(current)
    return shards, total


def read_safetensors(path):
    """An independent reader (no torch): {name: (dtype, shape, float64 ndarray)} in file order."""
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
        else:  # BF16: the top 16 bits of a float32
            arr = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        out[name] = (info["dtype"], info["shape"], arr.reshape(info["shape"]))
        pos = e
    assert pos == len(body), path
    return out


def write_checkpoint(c, folder, w):
    """model.safetensors, or shards + index as save_pretrained(max_shard_size=...) writes them.
    Returns the file names."""
    if "shards" not in c:
        write_safetensors(os.path.join(folder, "model.safetensors"), w)
        return ["model.safetensors"]
    shards, total = split_into_shards(w, c["max_shard_size"])
    assert len(shards) == c["shards"], (c["name"], [len(s) for s in shards])
    n = len(shards)
    names, weight_map = [], {}
    for i, shard in enumerate(shards):
        fn = f"model-{i + 1:05d}-of-{n:05d}.safetensors"
        write_safetensors(os.path.join(folder, fn), shard)
        names.append(fn)
        weight_map.update({k: fn for k in shard})
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        f.write(json.dumps(index, indent=2, sort_keys=True) + "\n")
    return names + ["model.safetensors.index.json"]


def read_checkpoint(folder, files):
    """Read every weights file back (through the index when sharded): {name: float64 ndarray}."""
    if "model.safetensors.index.json" not in files:
        return {k: v for k, v in read_safetensors(os.path.join(folder, "model.safetensors")).items()}
    with open(os.path.join(folder, "model.safetensors.index.json")) as f:
        index = json.load(f)
    assert list(index) == ["metadata", "weight_map"] and list(index["metadata"]) == ["total_size"]
    out, total = {}, 0
    for fn in sorted(set(index["weight_map"].values())):
        part = read_safetensors(os.path.join(folder, fn))
        for k, v in part.items():
            assert k not in out and index["weight_map"][k] == fn, k
            out[k] = v
            total += v[2].size * ITEM_SIZE[v[0]]
    assert set(out) == set(index["weight_map"]) and total == index["metadata"]["total_size"]
    return out


# ---------------------------------------------------------------- RoPE

def inv_freq_torch(c, dtype):
    """inverse frequencies as HF computes them (compute_default_rope_parameters and
    _compute_llama3_parameters), in `dtype` (HF: float32; the reference: float64)."""
    D, base = c["D"], c["theta"]
    inv = 1.0 / (base ** (torch.arange(0, D, 2, dtype=torch.int64).to(dtype) / D))
    s = c["scaling"]
    if s is None:
        return inv
    assert s["rope_type"] == "llama3"
    factor, lo, hi = s["factor"], s["low_freq_factor"], s["high_freq_factor"]
    old = s["original_max_position_embeddings"]
    low_wl, high_wl = old / lo, old / hi
    wavelen = 2 * math.pi / inv
    scaled = torch.where(wavelen > low_wl, inv / factor, inv)
    smooth = (old / wavelen - lo) / (hi - lo)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < high_wl) & ~(wavelen > low_wl)
    return torch.where(medium, smoothed, scaled)


def inv_freq_python(c):
    """The same in plain Python floats, band by band, as an independent check. Returns (values, bands)."""
    D, base = c["D"], c["theta"]
    out, bands = [], []
    for i in range(D // 2):
        f = 1.0 / base ** (2 * i / D)
        s = c["scaling"]
        if s is None:
            out.append(f)
            bands.append("default")
            continue
        wl = 2 * math.pi / f
        old = s["original_max_position_embeddings"]
        if wl < old / s["high_freq_factor"]:
            out.append(f)
            bands.append("high")
        elif wl > old / s["low_freq_factor"]:
            out.append(f / s["factor"])
            bands.append("low")
        else:
            t = (old / wl - s["low_freq_factor"]) / (s["high_freq_factor"] - s["low_freq_factor"])
            out.append((1 - t) * f / s["factor"] + t * f)
            bands.append("medium")
    return out, bands


def rope_tables(inv, n):
    """cos, sin (n, D): angle = position * inv_freq, duplicated over both halves."""
    pos = torch.arange(n, dtype=inv.dtype)
    ang = torch.outer(pos, inv)
    emb = torch.cat((ang, ang), dim=-1)
    return emb.cos(), emb.sin()


# ---------------------------------------------------------------- ops: hand, library, HF float32

def rmsnorm_hand(x, w, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w


def rmsnorm_lib(x, w, eps):
    # [x, -x] has mean 0 and biased variance mean(x^2): LayerNorm of it is RMSNorm of x
    d = x.shape[-1]
    return F.layer_norm(torch.cat((x, -x), dim=-1), (2 * d,), eps=eps)[..., :d] * w


def rmsnorm_hf(x, w, eps):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def silu_hand(x):
    return x / (1 + torch.exp(-x))


def linear_hand(x, w, b):
    y = x @ w.T
    return y if b is None else y + b


def rope_hand(x, cos, sin):
    """x (n, heads, D); rotate_half(x) = cat(-x2, x1)."""
    half = x.shape[-1] // 2
    rot = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos[:, None, :] + rot * sin[:, None, :]


def rope_lib(x, cos, sin):
    """The same rotation as a complex product: (x1 + i x2) * e^(i angle) -> (real, imag)."""
    half = x.shape[-1] // 2
    z = torch.complex(x[..., :half], x[..., half:])
    e = torch.complex(cos[:, None, :half], sin[:, None, :half])
    r = z * e
    return torch.cat((r.real, r.imag), dim=-1)


def attend_hand(q, k, v, D):
    """q (n, H, D), k, v (n, KV, D) -> y (n, H*D), weights (H, n, n); a loop over query heads."""
    n, H, KV = q.shape[0], q.shape[1], k.shape[1]
    group = H // KV
    allowed = torch.ones(n, n, dtype=torch.bool).tril()
    ys, ws = [], []
    for i in range(H):
        j = i // group
        s = (q[:, i] @ k[:, j].T) / math.sqrt(D)
        s = s.masked_fill(~allowed, float("-inf"))
        e = torch.exp(s - s.max(-1, keepdim=True).values)
        wt = e / e.sum(-1, keepdim=True)
        ws.append(wt)
        ys.append(wt @ v[:, j])
    return torch.cat(ys, dim=1), torch.stack(ws)


def attend_lib(q, k, v, D):
    """HF's layout: repeat_kv (repeat_interleave over heads), one batched matmul, scaling = D**-0.5,
    additive finfo.min causal mask, torch.softmax."""
    n, H, KV = q.shape[0], q.shape[1], k.shape[1]
    qh = q.transpose(0, 1)
    kh = k.transpose(0, 1).repeat_interleave(H // KV, dim=0)
    vh = v.transpose(0, 1).repeat_interleave(H // KV, dim=0)
    s = torch.matmul(qh, kh.transpose(1, 2)) * D ** -0.5
    mask = torch.full((n, n), torch.finfo(s.dtype).min, dtype=s.dtype).triu(1)
    wt = torch.softmax(s + mask, dim=-1)
    y = torch.matmul(wt, vh).transpose(0, 1).reshape(n, H * D)
    return y, wt


HAND = dict(rmsnorm=rmsnorm_hand, silu=silu_hand, linear=linear_hand, rope=rope_hand, attend=attend_hand)
LIB = dict(rmsnorm=rmsnorm_lib, silu=F.silu, linear=F.linear, rope=rope_lib, attend=attend_lib)
HF32 = dict(rmsnorm=rmsnorm_hf, silu=F.silu, linear=F.linear, rope=rope_hand, attend=attend_lib)


# ---------------------------------------------------------------- reference forward pass

def forward(c, w, ids, dtype=torch.float64, ops=HAND):
    """Logits (n, V) and attention weights (L, H, n, n). w: {name: float64 tensor} as read from the file."""
    W = lambda k: w[k].to(dtype) if k in w else None
    L, H, KV, D = c["L"], c["H"], c["KV"], c["D"]
    eps = c["eps"]
    n = len(ids)
    cos, sin = rope_tables(inv_freq_torch(c, dtype), n)   # float32 run: HF's float32 inv_freq
    h = W("model.embed_tokens.weight")[torch.tensor(ids, dtype=torch.long)]
    att = []
    for i in range(L):
        p = f"model.layers.{i}."
        a = p + "self_attn."
        x = ops["rmsnorm"](h, W(p + "input_layernorm.weight"), eps)
        proj = lambda m, inp: ops["linear"](inp, W(m + ".weight"), W(m + ".bias"))
        q = proj(a + "q_proj", x).view(n, H, D)
        k = proj(a + "k_proj", x).view(n, KV, D)
        v = proj(a + "v_proj", x).view(n, KV, D)
        if qk_norm(c):
            q = ops["rmsnorm"](q, W(a + "q_norm.weight"), eps)
            k = ops["rmsnorm"](k, W(a + "k_norm.weight"), eps)
        q, k = ops["rope"](q, cos, sin), ops["rope"](k, cos, sin)
        y, wt = ops["attend"](q, k, v, D)
        att.append(wt)
        h = h + proj(a + "o_proj", y)
        x2 = ops["rmsnorm"](h, W(p + "post_attention_layernorm.weight"), eps)
        m = p + "mlp."
        h = h + proj(m + "down_proj", ops["silu"](proj(m + "gate_proj", x2)) * proj(m + "up_proj", x2))
    h = ops["rmsnorm"](h, W("model.norm.weight"), eps)
    head = W("model.embed_tokens.weight") if c["tied"] else W("lm_head.weight")
    return h @ head.T, torch.stack(att)


def greedy(c, w, prompt, dtype=torch.float64, ops=HAND):
    ids, margins = list(prompt), []
    for _ in range(NEW_TOKENS):
        logits, _ = forward(c, w, ids, dtype, ops)
        top = torch.topk(logits[-1], 2)
        margins.append(float(top.values[0] - top.values[1]))
        ids.append(int(top.indices[0]))
    return ids[len(prompt):], margins


# ---------------------------------------------------------------- config.json

def hf_config(c):
    """The keys save_pretrained writes (to_diff_dict: every model-specific attribute, plus base
    attributes that differ from the defaults), for the vintage named in c["vintage"]:
      llama-4.38  Llama-2-era LlamaConfig: no head_dim, no mlp_bias, rope_theta + rope_scaling null
      llama-4.51  LlamaConfig with head_dim and mlp_bias (as Llama 3.2's files)
      llama-5     the rope_parameters vintage: one rope_parameters object (rope_type, rope_theta and
                  the scaling keys) instead of rope_theta / rope_scaling, "dtype" instead of
                  "torch_dtype", pad_token_id written (a LlamaConfig field there)
      qwen2-4.43  Qwen2Config before rope_scaling existed (as Qwen2.5's files): no rope_scaling key,
                  no head_dim, no attention_bias, sliding_window kept even though unused
      qwen2-4.51  with rope_scaling null; sliding_window kept as given (4096, Qwen2Config's default)
                  with use_sliding_window false (4.49 stopped nulling it, see README: some HF
                  versions then applied it anyway; here it is longer than any sequence)
      qwen3-4.51  Qwen3Config (as Qwen3's files): head_dim, attention_bias, sliding_window null"""
    vintage = c["vintage"]
    family = vintage.split("-")[0]
    arch = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM"}[family]
    assert family == c["model_type"]
    cfg = {
        "architectures": [arch], "attention_dropout": 0.0, "bos_token_id": c["V"] - 2,
        "eos_token_id": c["V"] - 1, "hidden_act": "silu", "hidden_size": c["C"], "initializer_range": 0.02,
        "intermediate_size": c["I"], "max_position_embeddings": c["P"], "model_type": c["model_type"],
        "num_attention_heads": c["H"], "num_hidden_layers": c["L"], "num_key_value_heads": c["KV"],
        "rms_norm_eps": c["eps"], "tie_word_embeddings": c["tied"], "use_cache": True, "vocab_size": c["V"],
    }
    if vintage == "llama-5":
        rp = {"rope_theta": c["theta"], "rope_type": "default"}
        rp.update(c["scaling"] or {})
        cfg.update({"attention_bias": c["attention_bias"], "dtype": HF_DTYPE_NAME[c["dtype"]],
                    "head_dim": c["D"], "mlp_bias": c["mlp_bias"], "pad_token_id": None, "pretraining_tp": 1,
                    "rope_parameters": rp, "transformers_version": "5.0.0"})
        return cfg
    cfg.update({"rope_theta": c["theta"], "torch_dtype": HF_DTYPE_NAME[c["dtype"]]})
    if family == "llama":
        assert c["C"] == c["H"] * c["D"] or vintage != "llama-4.38"
        cfg.update({"attention_bias": c["attention_bias"], "pretraining_tp": 1, "rope_scaling": c["scaling"]})
        if vintage == "llama-4.38":
            cfg["transformers_version"] = "4.38.2"
        else:
            cfg.update({"head_dim": c["D"], "mlp_bias": c["mlp_bias"], "transformers_version": "4.51.3"})
    elif family == "qwen2":
        assert c["C"] == c["H"] * c["D"]
        cfg.update({"max_window_layers": c["L"], "sliding_window": c.get("sliding_window", c["P"]),
                    "use_sliding_window": False})
        if vintage == "qwen2-4.43":
            cfg["transformers_version"] = "4.43.1"
        else:
            cfg.update({"rope_scaling": c["scaling"], "transformers_version": "4.51.3"})
    else:
        cfg.update({"attention_bias": c["attention_bias"], "head_dim": c["D"], "max_window_layers": c["L"],
                    "rope_scaling": c["scaling"], "sliding_window": None, "transformers_version": "4.51.3",
                    "use_sliding_window": False})
    return cfg


# ---------------------------------------------------------------- JSON text

class Raw(str):
    pass


def num(x):
    x = float(x)
    assert math.isfinite(x)
    return Raw("0") if x == 0 else Raw("%.9g" % x)


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


# ---------------------------------------------------------------- cases

def summary(c):
    attn_b, mlp_b = biased(c)
    return {"layers": c["L"], "heads": c["H"], "kvHeads": c["KV"], "headDim": c["D"], "hidden": c["C"],
            "intermediate": c["I"], "vocab": c["V"], "positions": c["P"], "eps": c["eps"], "tied": c["tied"],
            "ropeTheta": c["theta"], "ropeScaling": c["scaling"], "biases": list(attn_b) + list(mlp_b),
            "qkNorm": qk_norm(c)}


def check_inv_freq(c):
    inv64 = inv_freq_torch(c, torch.float64)
    py, bands = inv_freq_python(c)
    assert torch.allclose(inv64, torch.tensor(py, dtype=torch.float64), rtol=1e-14, atol=0), c["name"]
    inv32 = inv_freq_torch(c, torch.float32)
    rel = float(((inv32.double() - inv64) / inv64).abs().max())
    return inv64, bands, rel


def attention_spread(att, n):
    """Mean over rows with >= 8 keys of the row's largest weight (the last sequence)."""
    rows = att[..., 7:n, :]
    return float(rows.max(-1).values.mean()), float(rows.max(-1).values.min()), float(rows.max(-1).values.max())


def make_case(c):
    name = c["name"]
    folder = os.path.join(HERE, name)
    os.makedirs(folder, exist_ok=True)
    for fn in os.listdir(folder):
        os.remove(os.path.join(folder, fn))
    w = make_weights(c)

    # weights written, read back independently, compared bit for bit (as float64)
    files = write_checkpoint(c, folder, w)
    back = read_checkpoint(folder, files)
    assert set(back) == set(w), (name, set(back) ^ set(w))
    for k, t in w.items():
        dt, shape, arr = back[k]
        assert dt == dtype_name(t) and shape == list(t.shape), k
        assert np.array_equal(arr, t.double().numpy()), k
    assert ("lm_head.weight" in back) != c["tied"]
    w64 = {k: torch.from_numpy(v[2].copy()) for k, v in back.items()}

    with open(os.path.join(folder, "config.json"), "w") as f:
        f.write(json.dumps(hf_config(c), indent=2, sort_keys=True) + "\n")

    inv64, bands, inv_rel = check_inv_freq(c)

    g = gen(name, "ids")
    seqs = [torch.randint(0, c["V"], (n,), generator=g).tolist() for n in c["lengths"]]

    out_seqs, stats = [], {"logits": 0.0, "attention": 0.0, "logits_rel": 0.0}
    for ids in seqs:
        logits, att = forward(c, w64, ids)
        lt, at = forward(c, w64, ids, ops=LIB)
        assert torch.allclose(lt, logits, rtol=1e-12, atol=1e-12), name
        assert torch.allclose(at, att, rtol=1e-12, atol=1e-13), name
        assert float((att.sum(-1) - 1).abs().max()) < 1e-13 and bool((att.triu(1) == 0).all())
        l32, a32 = forward(c, w64, ids, dtype=torch.float32, ops=HF32)
        d = (l32.double() - logits).abs()
        stats["logits"] = max(stats["logits"], float(d.max()))
        stats["logits_rel"] = max(stats["logits_rel"], float(d.max() / logits.abs().max()))
        stats["attention"] = max(stats["attention"], float((a32.double() - att).abs().max()))
        out_seqs.append({"ids": ids, "logits": nested(logits), "attention": nested(att)})
    spread = attention_spread(att, len(seqs[-1]))

    # greedy generation: prompt = the first 4 ids of the longest sequence; if a step's winner is too
    # close to call, the next draw of "greedy-prompt" is used instead (deterministic)
    prompt = seqs[-1][:PROMPT_LEN]
    gp = gen(name, "greedy-prompt")
    while True:
        new, margins = greedy(c, w64, prompt)
        if min(margins) >= MIN_MARGIN:
            break
        prompt = torch.randint(0, c["V"], (PROMPT_LEN,), generator=gp).tolist()
    new32, _ = greedy(c, w64, prompt, dtype=torch.float32, ops=HF32)
    assert new32 == new, (name, new, new32)

    doc = {
        "version": 1, "torch": torch.__version__, "generator": GENERATOR, "case": name,
        "dtype": c["dtype"], "model_type": c["model_type"], "config": summary(c),
        "note": ("float64 reference from the weights as stored; numbers are rounded to 9 significant "
                 "digits; inv_freq (head_dim/2) = RoPE inverse frequencies after any scaling; logits "
                 "(n x vocab) for every position; attention (layers x query heads x n x n) = softmax "
                 "weights, 0 above the diagonal; query head i reads kv head i // (heads / kvHeads)"),
        "f32_max_abs_diff": {"logits": Raw("%.3g" % stats["logits"]),
                             "attention": Raw("%.3g" % stats["attention"])},
        "inv_freq": [num(x) for x in inv64],
        "sequences": out_seqs,
        "greedy": {"prompt": prompt, "new_tokens": new, "margins": [Raw("%.6g" % m) for m in margins]},
    }
    parts = [json.dumps(k) + ":" + emit(v) for k, v in doc.items() if k != "sequences"]
    seq_text = ",\n".join(emit(s) for s in out_seqs)
    text = "{" + ",\n".join(parts[:-1]) + ',\n"sequences":[\n' + seq_text + "],\n" + parts[-1] + "}\n"
    json.loads(text)
    with open(os.path.join(folder, "expected.json"), "w") as f:
        f.write(text)
    sizes = {fn: os.path.getsize(os.path.join(folder, fn)) for fn in sorted(os.listdir(folder))}
    info = dict(stats=stats, sizes=sizes, margin=min(margins), redrawn=prompt != seqs[-1][:PROMPT_LEN],
                spread=spread, bands=bands, inv_rel=inv_rel)
    return info


def ops_check():
    """The hand-written pieces equal the library-built ones on random float64 data too."""
    g = gen("check", "ops")
    r = lambda *s: torch.randn(*s, generator=g, dtype=torch.float64)
    x, w = r(5, 3, 8) * 3, r(8)
    assert torch.allclose(rmsnorm_hand(x, w, 1e-6), rmsnorm_lib(x, w, 1e-6), rtol=1e-13, atol=1e-13)
    assert torch.allclose(rmsnorm_hand(x, w, 1e-6), rmsnorm_hf(x, w, 1e-6), rtol=1e-13, atol=1e-13)
    assert torch.allclose(silu_hand(x), F.silu(x), rtol=1e-13, atol=1e-15)
    cos, sin = rope_tables(r(4).abs(), 5)
    assert torch.allclose(rope_hand(x, cos, sin), rope_lib(x, cos, sin), rtol=1e-13, atol=1e-13)
    q, k, v = r(5, 4, 8), r(5, 2, 8), r(5, 2, 8)
    y1, w1 = attend_hand(q, k, v, 8)
    y2, w2 = attend_lib(q, k, v, 8)
    assert torch.allclose(y1, y2, rtol=1e-13, atol=1e-13) and torch.allclose(w1, w2, rtol=1e-13, atol=1e-15)
    # GQA: query head 3 of 4 with 2 kv heads reads kv head 1
    assert torch.allclose(w1[3], torch.softmax((q[:, 3] @ k[:, 1].T / math.sqrt(8)).masked_fill(
        ~torch.ones(5, 5, dtype=torch.bool).tril(), float("-inf")), -1), rtol=1e-13, atol=1e-15)


def main():
    ops_check()
    print(f"torch {torch.__version__}")
    total = 0
    print("case                 f32 vs f64: max|dlogits| (rel)   max|dattn|   min margin   "
          "attention row max: mean [min, max]")
    for c in CASES:
        r = make_case(c)
        total += sum(r["sizes"].values())
        s = r["stats"]
        print(f"  {c['name']:19s} {s['logits']:.2e} ({s['logits_rel']:.1e})   {s['attention']:.2e}   "
              f"{r['margin']:.4g}{' (redrawn)' if r['redrawn'] else ''}   "
              f"{r['spread'][0]:.2f} [{r['spread'][1]:.2f}, {r['spread'][2]:.2f}]")
        print(f"      rope bands {','.join(r['bands'])}; float32 inv_freq max rel diff {r['inv_rel']:.1e}")
        print("      " + ", ".join(f"{k} {v}" for k, v in r["sizes"].items()))
    print(f"total {total} bytes")


if __name__ == "__main__":
    sys.exit(main())
