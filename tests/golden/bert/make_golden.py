#!/usr/bin/python3
"""Generate tests/golden/bert/<case>/: small BERT checkpoints (BertForMaskedLM, BertModel) in Hugging
Face's layout, and their reference outputs.

Run from the repository root with the system Python that has torch 1.13 (Debian's python3-torch):

    /usr/bin/python3 tests/golden/bert/make_golden.py

For every case it writes a folder with
  * config.json        - the keys save_pretrained writes for model_type "bert"
  * model.safetensors  - random weights in HF's names (written by tests/golden/llama/make_golden.py's
                         write_safetensors, read back by its independent reader)
  * vocab.txt          - a small WordPiece vocabulary: the special tokens, then CJK characters
  * expected.json      - per sequence: ids, token types, attention mask, the masked-LM logits (or the
                         last hidden states when there is no head) and every layer's and head's
                         attention; the fill-mask answer for one text

The reference forward pass is plain torch ops in float64 from the weights as stored (F16 / BF16 cases:
after rounding). No transformers: written from the formulas below, each checked against Hugging
Face's models/bert/modeling_bert.py (the authority for every point marked [HF]):

  e = word_embeddings[ids] + token_type_embeddings[types];  e = e + position_embeddings[0 .. n)
        [HF BertEmbeddings.forward: inputs_embeds + token_type_embeddings, then += position_embeddings
         for position_embedding_type "absolute"]
  h = LayerNorm(e; embeddings.LayerNorm, layer_norm_eps)      biased variance
  per layer (post-LN):
    q = h Wq^T + bq, k = h Wk^T + bk, v = h Wv^T + bv          nn.Linear (out, in)
    w_i = softmax(q_i k_i^T / sqrt(d) + mask) over ALL keys (no causal mask); a key whose attention_mask
          is 0 gets finfo.min added, so weight 0 from every query  [HF BertSelfAttention /
          eager_attention_forward; get_extended_attention_mask: (1 - mask) * finfo(dtype).min]
    h = LayerNorm(h + concat_i(w_i v_i) Wo^T + bo; attention.output.LayerNorm)   [HF BertSelfOutput]
    h = LayerNorm(h + gelu(h Wi^T + bi) Wo2^T + bo2; output.LayerNorm)          [HF BertIntermediate,
          BertOutput; hidden_act "gelu" = the exact erf form, GELUActivation]
  masked-LM head [HF BertLMPredictionHead, BertPredictionHeadTransform]:
    t = LayerNorm(gelu(h Wt^T + bt); cls.predictions.transform.LayerNorm)
    logits = t word_embeddings^T + cls.predictions.bias        (the decoder is tied to the word table)

The script checks itself: the hand-written pass equals one built from library ops (F.layer_norm, F.gelu,
F.linear, torch.softmax with masked_fill) to 1e-12, and a float32 run gives the distances recorded in
f32_max_abs_diff. Deterministic: every draw comes from a torch.Generator seeded with the CRC-32 of
"<case>/<purpose>".
"""

import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "llama"))
import make_golden as lg  # noqa: E402  write_safetensors, read_safetensors, gen, num, nested, emit, Raw

GENERATOR = "tests/golden/bert/make_golden.py"
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
CHARS = "猫吃鱼狗追我看见小在的了是一只有"
PAD, UNK, CLS, SEP, MASK = range(5)
FILL_TEXT = "猫吃[MASK]"
FILL_TOP_K = 5

# L layers, H heads, C hidden, I intermediate, V vocab, P positions, Y type_vocab_size.
# names: "mlm" BertForMaskedLM (bert. + cls.), "pretraining" the same plus pooler and NSP head (as
# bert-base-chinese's file), "model" BertModel (no prefix, no head). ln: LayerNorm as weight/bias or
# the older gamma/beta. extras: tensors a file may also hold.
CASES = [
    dict(name="bert-mlm-f32", L=1, H=2, C=16, I=32, V=40, P=24, Y=2, dtype="F32", eps=1e-12,
         names="mlm", ln="weight", extras=("position_ids", "decoder")),
    dict(name="bert-pair-bf16", L=2, H=4, C=32, I=48, V=48, P=32, Y=2, dtype="BF16", eps=1e-12,
         names="pretraining", ln="gamma", extras=()),
    dict(name="bert-encoder-f16", L=3, H=2, C=24, I=40, V=44, P=20, Y=2, dtype="F16", eps=1e-5,
         names="model", ln="weight", extras=("position_ids",)),
]

TORCH_DTYPE = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def vocab(c):
    words = SPECIALS + list(CHARS)
    words += [f"##{ch}" for ch in CHARS]
    words += [f"[unused{i}]" for i in range(c["V"] - len(words))]
    assert len(words) == c["V"] and len(set(words)) == len(words)
    return words


def ln_names(c, p):
    return (p + "LayerNorm.gamma", p + "LayerNorm.beta") if c["ln"] == "gamma" else (p + "LayerNorm.weight", p + "LayerNorm.bias")


def make_weights(c):
    """HF state dict (names as the case's class saves them) in float32, rounded to the case dtype,
    and the canonical names of the same tensors (the names the reference reads)."""
    L, C, I, V, P, Y = c["L"], c["C"], c["I"], c["V"], c["P"], c["Y"]
    g = lg.gen(c["name"], "weights")
    rn = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float32)
    pre = "" if c["names"] == "model" else "bert."
    w, canon = {}, {}

    def put(name, key, t):
        w[name] = t
        canon[key] = name

    put(pre + "embeddings.word_embeddings.weight", "word", rn(V, C) * 0.7)
    put(pre + "embeddings.position_embeddings.weight", "pos", rn(P, C) * 0.5)
    put(pre + "embeddings.token_type_embeddings.weight", "type", rn(Y, C) * 0.5)
    lw, lb = ln_names(c, pre + "embeddings.")
    put(lw, "emb_ln_w", 1 + 0.2 * rn(C))
    put(lb, "emb_ln_b", 0.1 * rn(C))
    for i in range(L):
        p = f"{pre}encoder.layer.{i}."
        for m, std, bstd in (("query", 1.6, 0.2), ("key", 1.6, 0.2), ("value", 1.0, 0.1)):
            put(p + f"attention.self.{m}.weight", f"{i}.{m}.w", rn(C, C) * std / math.sqrt(C))
            put(p + f"attention.self.{m}.bias", f"{i}.{m}.b", rn(C) * bstd)
        put(p + "attention.output.dense.weight", f"{i}.o.w", rn(C, C) / math.sqrt(C))
        put(p + "attention.output.dense.bias", f"{i}.o.b", rn(C) * 0.05)
        lw, lb = ln_names(c, p + "attention.output.")
        put(lw, f"{i}.ln1.w", 1 + 0.2 * rn(C))
        put(lb, f"{i}.ln1.b", 0.1 * rn(C))
        put(p + "intermediate.dense.weight", f"{i}.i.w", rn(I, C) * 1.5 / math.sqrt(C))
        put(p + "intermediate.dense.bias", f"{i}.i.b", rn(I) * 0.1)
        put(p + "output.dense.weight", f"{i}.o2.w", rn(C, I) / math.sqrt(I))
        put(p + "output.dense.bias", f"{i}.o2.b", rn(C) * 0.05)
        lw, lb = ln_names(c, p + "output.")
        put(lw, f"{i}.ln2.w", 1 + 0.2 * rn(C))
        put(lb, f"{i}.ln2.b", 0.1 * rn(C))
    if c["names"] == "pretraining":
        w["bert.pooler.dense.weight"] = rn(C, C) / math.sqrt(C)
        w["bert.pooler.dense.bias"] = rn(C) * 0.1
    if c["names"] != "model":
        put("cls.predictions.transform.dense.weight", "head.w", rn(C, C) * 1.5 / math.sqrt(C))
        put("cls.predictions.transform.dense.bias", "head.b", rn(C) * 0.1)
        lw, lb = ln_names(c, "cls.predictions.transform.")
        put(lw, "head_ln.w", 1 + 0.2 * rn(C))
        put(lb, "head_ln.b", 0.1 * rn(C))
        put("cls.predictions.bias", "decoder.b", rn(V) * 0.3)
    if c["names"] == "pretraining":
        w["cls.seq_relationship.weight"] = rn(2, C) / math.sqrt(C)
        w["cls.seq_relationship.bias"] = rn(2) * 0.1
    dt = TORCH_DTYPE[c["dtype"]]
    w = {k: v.to(dt).contiguous() for k, v in w.items()}
    if "decoder" in c["extras"]:   # older files keep the tied copies (equal to what they are tied to)
        w["cls.predictions.decoder.weight"] = w[canon["word"]].clone()
        w["cls.predictions.decoder.bias"] = w[canon["decoder.b"]].clone()
    return w, canon


def hf_config(c):
    cfg = {
        "architectures": [{"mlm": "BertForMaskedLM", "pretraining": "BertForPreTraining", "model": "BertModel"}[c["names"]]],
        "attention_probs_dropout_prob": 0.1, "classifier_dropout": None, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1, "hidden_size": c["C"], "initializer_range": 0.02,
        "intermediate_size": c["I"], "layer_norm_eps": c["eps"], "max_position_embeddings": c["P"],
        "model_type": "bert", "num_attention_heads": c["H"], "num_hidden_layers": c["L"], "pad_token_id": 0,
        "position_embedding_type": "absolute", "transformers_version": "4.46.3", "type_vocab_size": c["Y"],
        "use_cache": True, "vocab_size": c["V"],
    }
    if c["dtype"] != "F32":
        cfg["torch_dtype"] = {"F16": "float16", "BF16": "bfloat16"}[c["dtype"]]
    return cfg


# ---------------------------------------------------------------- the forward pass

def ln_hand(x, w, b, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w + b


def gelu_hand(x):
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


def linear_hand(x, w, b):
    return x @ w.T + b


def attend_hand(q, k, v, keep, H):
    n, C = q.shape
    d = C // H
    q, k, v = (t.reshape(n, H, d).transpose(0, 1) for t in (q, k, v))
    s = q @ k.transpose(1, 2) / math.sqrt(d)
    s = torch.where(keep[None, None, :], s, torch.tensor(float("-inf"), dtype=s.dtype))
    w = torch.exp(s - s.max(-1, keepdim=True).values)
    w = w / w.sum(-1, keepdim=True)
    return (w @ v).transpose(0, 1).reshape(n, C), w


HAND = dict(ln=ln_hand, gelu=gelu_hand, linear=linear_hand, attend=attend_hand)


def attend_lib(q, k, v, keep, H):
    n, C = q.shape
    d = C // H
    q, k, v = (t.view(n, H, d).permute(1, 0, 2) for t in (q, k, v))
    bias = (1.0 - keep.to(q.dtype)) * torch.finfo(q.dtype).min   # HF's extended attention mask
    w = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d) + bias, dim=-1)
    return torch.matmul(w, v).permute(1, 0, 2).reshape(n, C), w


LIB = dict(ln=lambda x, w, b, eps: F.layer_norm(x, (x.shape[-1],), w, b, eps), gelu=F.gelu,
           linear=F.linear, attend=attend_lib)


def forward(c, w, canon, ids, types, mask, dtype=torch.float64, ops=HAND):
    t = lambda key: w[canon[key]].to(dtype)
    ids_t, types_t = torch.tensor(ids), torch.tensor(types)
    keep = torch.tensor(mask) != 0
    n = len(ids)
    e = t("word")[ids_t] + t("type")[types_t]
    e = e + t("pos")[:n]
    h = ops["ln"](e, t("emb_ln_w"), t("emb_ln_b"), c["eps"])
    atts = []
    for i in range(c["L"]):
        q = ops["linear"](h, t(f"{i}.query.w"), t(f"{i}.query.b"))
        k = ops["linear"](h, t(f"{i}.key.w"), t(f"{i}.key.b"))
        v = ops["linear"](h, t(f"{i}.value.w"), t(f"{i}.value.b"))
        y, a = ops["attend"](q, k, v, keep, c["H"])
        atts.append(a)
        h = ops["ln"](h + ops["linear"](y, t(f"{i}.o.w"), t(f"{i}.o.b")), t(f"{i}.ln1.w"), t(f"{i}.ln1.b"), c["eps"])
        m = ops["gelu"](ops["linear"](h, t(f"{i}.i.w"), t(f"{i}.i.b")))
        h = ops["ln"](h + ops["linear"](m, t(f"{i}.o2.w"), t(f"{i}.o2.b")), t(f"{i}.ln2.w"), t(f"{i}.ln2.b"), c["eps"])
    logits = None
    if "head.w" in canon:
        x = ops["gelu"](ops["linear"](h, t("head.w"), t("head.b")))
        x = ops["ln"](x, t("head_ln.w"), t("head_ln.b"), c["eps"])
        logits = ops["linear"](x, t("word"), t("decoder.b"))
    return h, logits, torch.stack(atts)


# ---------------------------------------------------------------- cases

def sequences(c, words):
    """A single text, a pair, and the pair padded to n + 3 with an attention mask."""
    g = lg.gen(c["name"], "ids")
    body = lambda n: (torch.randint(5, len(CHARS) + 5, (n,), generator=g)).tolist()
    a, b = body(5), body(4)
    single = [CLS] + a + [SEP]
    pair = [CLS] + a + [SEP] + b + [SEP]
    pair_types = [0] * (len(a) + 2) + [1] * (len(b) + 1)
    out = [
        dict(ids=single, types=[0] * len(single), mask=[1] * len(single)),
        dict(ids=pair, types=pair_types, mask=[1] * len(pair)),
        dict(ids=pair + [PAD] * 3, types=pair_types + [0] * 3, mask=[1] * len(pair) + [0] * 3),
    ]
    assert all(len(s["ids"]) <= c["P"] for s in out)
    return out


def fill_mask(c, w, canon, words):
    """猫吃[MASK] as BertTokenizer encodes it, and the top tokens at the mask by float64 softmax."""
    ids = [CLS, words.index("猫"), words.index("吃"), MASK, SEP]
    _, logits, _ = forward(c, w, canon, ids, [0] * len(ids), [1] * len(ids))
    p = torch.softmax(logits[3], -1)
    top = torch.topk(p, FILL_TOP_K)
    probs = top.values.tolist()
    assert all(probs[i] - probs[i + 1] > 1e-6 for i in range(len(probs) - 1)), "ties in the top tokens"
    return {"text": FILL_TEXT, "ids": ids, "top": [{"id": int(i), "token": words[int(i)], "p": lg.num(v)}
                                                   for i, v in zip(top.indices.tolist(), probs)]}


def make_case(c):
    folder = os.path.join(HERE, c["name"])
    os.makedirs(folder, exist_ok=True)
    for fn in os.listdir(folder):
        os.remove(os.path.join(folder, fn))
    w, canon = make_weights(c)
    if "position_ids" in c["extras"]:   # a buffer older transformers saved (int64)
        w[("" if c["names"] == "model" else "bert.") + "embeddings.position_ids"] = torch.arange(c["P"])[None]
    lg.TORCH_DTYPE.setdefault("I64", torch.int64)
    lg.ITEM_SIZE.setdefault("I64", 8)
    lg.write_safetensors(os.path.join(folder, "model.safetensors"), w)
    back = read_back(os.path.join(folder, "model.safetensors"))
    assert set(back) == set(w)
    for k, t in w.items():
        assert np.array_equal(back[k], t.double().numpy()), k
    w64 = {k: torch.from_numpy(v.copy()) for k, v in back.items()}
    words = vocab(c)
    with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(words) + "\n")
    with open(os.path.join(folder, "config.json"), "w") as f:
        f.write(json.dumps(hf_config(c), indent=2, sort_keys=True) + "\n")

    stats, seqs = {"out": 0.0, "attention": 0.0}, []
    for s in sequences(c, words):
        h, logits, att = forward(c, w64, canon, s["ids"], s["types"], s["mask"])
        h2, l2, a2 = forward(c, w64, canon, s["ids"], s["types"], s["mask"], ops=LIB)
        out, out2 = (logits, l2) if logits is not None else (h, h2)
        assert torch.allclose(out, out2, rtol=1e-12, atol=1e-12) and torch.allclose(att, a2, rtol=1e-12, atol=1e-13)
        assert float((att.sum(-1) - 1).abs().max()) < 1e-13
        assert bool((att[..., torch.tensor(s["mask"]) == 0] == 0).all()), "a dropped key has weight 0"
        h32, l32, a32 = forward(c, w64, canon, s["ids"], s["types"], s["mask"], dtype=torch.float32, ops=LIB)
        o32 = l32 if logits is not None else h32
        stats["out"] = max(stats["out"], float((o32.double() - out).abs().max()))
        stats["attention"] = max(stats["attention"], float((a32.double() - att).abs().max()))
        key = "logits" if logits is not None else "hidden"
        seqs.append({**s, key: lg.nested(out), "attention": lg.nested(att)})
    doc = {
        "version": 1, "torch": torch.__version__, "generator": GENERATOR, "case": c["name"], "dtype": c["dtype"],
        "config": {"layers": c["L"], "heads": c["H"], "hidden": c["C"], "intermediate": c["I"], "vocab": c["V"],
                   "positions": c["P"], "types": c["Y"], "eps": c["eps"], "head": c["names"] != "model",
                   "names": c["names"], "ln": c["ln"]},
        "note": ("float64 reference from the weights as stored, 9 significant digits; logits (n x vocab) through "
                 "the masked-LM head, or hidden (n x hidden) without one; attention (layers x heads x n x n), "
                 "bidirectional, 0 in the columns of keys whose mask is 0"),
        "f32_max_abs_diff": {"out": lg.Raw("%.3g" % stats["out"]), "attention": lg.Raw("%.3g" % stats["attention"])},
        "fill_mask": fill_mask(c, w64, canon, words) if c["names"] != "model" else None,
        "sequences": seqs,
    }
    text = "{" + ",\n".join(json.dumps(k) + ":" + lg.emit(v) for k, v in doc.items()) + "}\n"
    json.loads(text)
    with open(os.path.join(folder, "expected.json"), "w") as f:
        f.write(text)
    return stats, {fn: os.path.getsize(os.path.join(folder, fn)) for fn in sorted(os.listdir(folder))}


def read_back(path):
    """llama's independent reader, plus the int64 buffer: {name: float64 ndarray}."""
    import struct
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    body, out = data[8 + n:], {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        s, e = info["data_offsets"]
        raw = body[s:e]
        if info["dtype"] == "I64":
            arr = np.frombuffer(raw, dtype="<i8").astype(np.float64)
        elif info["dtype"] == "F32":
            arr = np.frombuffer(raw, dtype="<f4").astype(np.float64)
        elif info["dtype"] == "F16":
            arr = np.frombuffer(raw, dtype="<f2").astype(np.float64)
        else:
            arr = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        out[name] = arr.reshape(info["shape"])
    return out


def main():
    print(f"torch {torch.__version__}")
    print("case                 f32 vs f64: max|d out|   max|d attention|")
    for c in CASES:
        stats, sizes = make_case(c)
        print(f"  {c['name']:19s} {stats['out']:.2e}   {stats['attention']:.2e}")
        print("      " + ", ".join(f"{k} {v}" for k, v in sizes.items()))


if __name__ == "__main__":
    sys.exit(main())
