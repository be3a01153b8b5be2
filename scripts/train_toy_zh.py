#!/usr/bin/python3
"""Train web/models/toy-zh/: a toy GPT-2-layout model on generated Chinese subject-verb-object sentences.

Run from the repository root with the system Python that has torch 1.13 (Debian's
python3-torch), not a pyenv python:

    /usr/bin/python3 scripts/train_toy_zh.py

It writes
  * web/models/toy-zh/config.json        GPT2Config keys, as tests/golden/gpt2/make_golden.py writes them
  * web/models/toy-zh/model.safetensors  float32 weights, Hugging Face GPT-2 names (wte.weight, h.0.ln_1.weight, ...)
  * web/models/toy-zh/vocab.txt          one token per line, id = line number ([PAD], [UNK], then characters)
  * web/models/toy-zh/README.md          the model card, with the numbers measured by this run
  * tests/golden/toy-zh.json             float64 reference outputs of the saved weights

The data: sentences from a small grammar in which the object is a function of (subject, verb)
(猫吃鱼, 狗吃肉, 猫喝奶, 鸟吃虫, ...), with framing words (小猫, 那只狗, 我看见, 在, 也) that move
the subject away from the verb. Predicting the object at the verb needs the subject, and the
subject is only reachable through attention. Some framings of some (subject, verb) pairs are held
out and never trained on; the object accuracy on them is the held-out accuracy.

The model is the architecture of make_golden.py's reference forward (imported from there for the
golden outputs): LayerNorm, Conv1D weights (in, out), causal heads scaled by 1/sqrt(d_head),
gelu_new (tanh), learned wpe, tied wte, ln_f. No BOS: a text's characters are its ids, from
position 0. Deterministic: fixed seeds, 2 threads, deterministic algorithms.
"""

import hashlib
import importlib.util
import json
import math
import os
import random
import sys
import time

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "web", "models", "toy-zh")
GOLDEN = os.path.join(ROOT, "tests", "golden", "toy-zh.json")
COMMAND = "/usr/bin/python3 scripts/train_toy_zh.py"
GENERATOR = "scripts/train_toy_zh.py"

spec = importlib.util.spec_from_file_location("make_golden", os.path.join(ROOT, "tests", "golden", "gpt2", "make_golden.py"))
mg = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mg)

SEED = 20240516
# ---------------------------------------------------------------- model shape and training
CFG = dict(name="toy-zh", L=2, H=4, C=32, P=32, dtype="F32", prefix=False, eps=1e-5)
STEPS = 1200
BATCH = 32
LR = 3e-3
WEIGHT_DECAY = 0.01
N_TRAIN_SEQ = 40000

# ---------------------------------------------------------------- the grammar
SUBJECTS = ["猫", "狗", "鸟", "鱼", "牛", "羊", "人"]
VERBS = ["吃", "喝", "追", "看"]
# (subject, verb) -> [(object, probability)]; the first object is the most likely one
OBJECTS = {
    ("猫", "吃"): [("鱼", 0.8), ("肉", 0.2)], ("猫", "喝"): [("奶", 1.0)],
    ("猫", "追"): [("鼠", 1.0)], ("猫", "看"): [("鸟", 1.0)],
    ("狗", "吃"): [("肉", 0.8), ("骨", 0.2)], ("狗", "喝"): [("水", 1.0)],
    ("狗", "追"): [("猫", 1.0)], ("狗", "看"): [("门", 1.0)],
    ("鸟", "吃"): [("虫", 0.8), ("米", 0.2)], ("鸟", "喝"): [("露", 1.0)],
    ("鸟", "追"): [("虫", 1.0)], ("鸟", "看"): [("天", 1.0)],
    ("鱼", "吃"): [("虾", 1.0)], ("鱼", "喝"): [("水", 1.0)],
    ("鱼", "追"): [("虾", 1.0)], ("鱼", "看"): [("船", 1.0)],
    ("牛", "吃"): [("草", 1.0)], ("牛", "喝"): [("水", 1.0)],
    ("牛", "追"): [("狗", 1.0)], ("牛", "看"): [("山", 1.0)],
    ("羊", "吃"): [("草", 0.7), ("叶", 0.3)], ("羊", "喝"): [("水", 1.0)],
    ("羊", "追"): [("羊", 1.0)], ("羊", "看"): [("山", 1.0)],
    ("人", "吃"): [("饭", 0.7), ("面", 0.3)], ("人", "喝"): [("茶", 0.7), ("水", 0.3)],
    ("人", "追"): [("车", 1.0)], ("人", "看"): [("书", 1.0)],
}
PREFIXES = ["", "我看见"]                       # P(我看见) = 0.3
DETS_ANIMAL = ["", "小", "那只", "这只"]
DETS_PERSON = ["", "那个", "这个"]
ADVS = ["", "在", "也"]
END = "。"
HELD_OUT_FRACTION = 0.15
# held out whatever the draw: the golden file's held-out sentence
FORCED_HELD_OUT = [("", "小", "", "牛", "吃")]
# the golden file's training sentences must stay in training
FORCED_TRAIN = [("", "", "", s, v) for s in SUBJECTS for v in VERBS]

GOLDEN_TEXTS = [
    ("猫吃鱼", "training sentence"),
    ("狗吃肉", "training sentence"),
    ("猫喝奶", "training sentence"),
    ("鸟吃虫", "training sentence"),
    ("小牛吃草", "held out: the framing 小 + 牛 + 吃 never occurs in training"),
    ("我看见那只猫在吃鱼。", "long framing: 吃 is 4 positions after 猫"),
    ("狗追猫。猫吃鱼。", "repeated characters: 猫 twice, 。 twice; 吃's subject is the second 猫"),
]
GENERATE_PROMPTS = ["猫吃", "狗喝", "那只鸟在吃", "狗吃肉。羊"]
NEW_TOKENS = 4


def dets(subject):
    return DETS_PERSON if subject == "人" else DETS_ANIMAL


def all_templates():
    return [(p, d, a, s, v) for p in PREFIXES for s in SUBJECTS for d in dets(s) for a in ADVS for v in VERBS]


def render(t, obj):
    p, d, a, s, v = t
    return p + d + s + a + v + obj + END


def split_templates():
    rng = random.Random(SEED + 1)
    held = set()
    for t in all_templates():
        if rng.random() < HELD_OUT_FRACTION:
            held.add(t)
    held |= set(FORCED_HELD_OUT)
    held -= set(FORCED_TRAIN)
    return held


def sample_template(rng):
    p = PREFIXES[1] if rng.random() < 0.3 else PREFIXES[0]
    s = rng.choice(SUBJECTS)
    return (p, rng.choice(dets(s)), rng.choice(ADVS), s, rng.choice(VERBS))


def sample_object(rng, s, v):
    r, acc = rng.random(), 0.0
    for o, pr in OBJECTS[(s, v)]:
        acc += pr
        if r < acc:
            return o
    return OBJECTS[(s, v)][-1][0]


def make_vocab():
    chars = []
    for text in PREFIXES + DETS_ANIMAL + DETS_PERSON + ADVS + SUBJECTS + VERBS + [END] + \
            [o for opts in OBJECTS.values() for o, _ in opts]:
        for ch in text:
            if ch not in chars:
                chars.append(ch)
    return ["[PAD]", "[UNK]"] + chars


def make_sequence(rng, held, allow_held=False):
    """1 to 3 sentences in a row, at most P characters. Returns (text, [(subject pos, verb pos, template)])."""
    n = rng.choice([1, 1, 2, 3])
    text, marks = "", []
    for _ in range(n):
        while True:
            t = sample_template(rng)
            if allow_held or t not in held:
                break
        sent = render(t, sample_object(rng, t[3], t[4]))
        if len(text) + len(sent) > CFG["P"]:
            break
        p, d, a, s, v = t
        sp = len(text) + len(p) + len(d)
        marks.append((sp, sp + 1 + len(a), t))
        text += sent
    return text, marks


# ---------------------------------------------------------------- the model (training form)

def init_weights(V, g):
    L, C, P = CFG["L"], CFG["C"], CFG["P"]
    rn = lambda *shape, std: torch.randn(*shape, generator=g) * std
    w = {"wte.weight": rn(V, C, std=0.02), "wpe.weight": rn(P, C, std=0.01)}
    for i in range(L):
        p = f"h.{i}."
        w[p + "ln_1.weight"] = torch.ones(C)
        w[p + "ln_1.bias"] = torch.zeros(C)
        w[p + "attn.c_attn.weight"] = rn(C, 3 * C, std=0.02)
        w[p + "attn.c_attn.bias"] = torch.zeros(3 * C)
        w[p + "attn.c_proj.weight"] = rn(C, C, std=0.02 / math.sqrt(2 * L))
        w[p + "attn.c_proj.bias"] = torch.zeros(C)
        w[p + "ln_2.weight"] = torch.ones(C)
        w[p + "ln_2.bias"] = torch.zeros(C)
        w[p + "mlp.c_fc.weight"] = rn(C, 4 * C, std=0.02)
        w[p + "mlp.c_fc.bias"] = torch.zeros(4 * C)
        w[p + "mlp.c_proj.weight"] = rn(4 * C, C, std=0.02 / math.sqrt(2 * L))
        w[p + "mlp.c_proj.bias"] = torch.zeros(C)
    w["ln_f.weight"] = torch.ones(C)
    w["ln_f.bias"] = torch.zeros(C)
    return {k: v.requires_grad_(True) for k, v in w.items()}


def batched_forward(w, idx, head_mask=None, want_att=False):
    """idx (B, T) -> logits (B, T, V) [and attention (L, B, H, T, T)]: make_golden.py's forward, batched."""
    L, H, C, eps = CFG["L"], CFG["H"], CFG["C"], CFG["eps"]
    B, T = idx.shape
    d = C // H
    allowed = torch.ones(T, T, dtype=torch.bool).tril()
    h = F.embedding(idx, w["wte.weight"]) + w["wpe.weight"][:T]   # F.embedding: a fast deterministic backward
    atts = []
    for i in range(L):
        p = f"h.{i}."
        a = F.layer_norm(h, (C,), w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        qkv = a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        q, k, v = (t.view(B, T, H, d).transpose(1, 2) for t in qkv.split(C, dim=2))
        s = (q @ k.transpose(-1, -2)) / math.sqrt(d)
        att = torch.softmax(s.masked_fill(~allowed, float("-inf")), dim=-1)
        if want_att:
            atts.append(att)
        y = att @ v                                          # (B, H, T, d)
        if head_mask is not None:
            y = y * head_mask[i].view(1, H, 1, 1)
        y = y.transpose(1, 2).reshape(B, T, C)
        h = h + y @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        m = F.layer_norm(h, (C,), w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        h = h + F.gelu(m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"], approximate="tanh") \
            @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    h = F.layer_norm(h, (C,), w["ln_f.weight"], w["ln_f.bias"], eps)
    logits = h @ w["wte.weight"].T
    return (logits, torch.stack(atts)) if want_att else logits


def to_tensor(texts, stoi):
    T = max(len(t) for t in texts)
    x = torch.zeros(len(texts), T, dtype=torch.long)      # [PAD] = 0
    for i, t in enumerate(texts):
        x[i, :len(t)] = torch.tensor([stoi[c] for c in t])
    return x


# ---------------------------------------------------------------- evaluation

def eval_objects(w, items, stoi, head_mask=None):
    """items: [(text, [(subject pos, verb pos, template)])]. Object accuracy at each verb (the argmax
    after the verb is the most likely object of (subject, verb)), and the mean object cross-entropy."""
    x = to_tensor([t for t, _ in items], stoi)
    with torch.no_grad():
        logp = F.log_softmax(batched_forward(w, x, head_mask), dim=-1)
    right = total = 0
    nll = 0.0
    for b, (text, marks) in enumerate(items):
        for sp, vp, t in marks:
            want = stoi[OBJECTS[(t[3], t[4])][0][0]]
            right += int(logp[b, vp].argmax()) == want
            nll -= float(logp[b, vp, stoi[text[vp + 1]]])
            total += 1
    return right / total, nll / total, total


def head_stats(w, items, stoi, verb=None):
    """Per layer and head: mean attention weight of the verb's row on the subject, and how often the
    subject is that row's largest weight."""
    x = to_tensor([t for t, _ in items], stoi)
    with torch.no_grad():
        _, att = batched_forward(w, x, want_att=True)       # (L, B, H, T, T)
    L, H = CFG["L"], CFG["H"]
    mean = torch.zeros(L, H, dtype=torch.float64)
    top = torch.zeros(L, H, dtype=torch.float64)
    n = 0
    for b, (text, marks) in enumerate(items):
        for sp, vp, t in marks:
            if verb is not None and t[4] != verb:
                continue
            row = att[:, b, :, vp, :vp + 1].double()             # (L, H, vp+1)
            mean += row[:, :, sp]
            top += (row.argmax(-1) == sp).double()
            n += 1
    return mean / n, top / n, n


def entropy_floor(items):
    """The object cross-entropy a perfect model gets (the grammar's own randomness)."""
    ent, n = 0.0, 0
    for _, marks in items:
        for _, _, t in marks:
            ent -= sum(p * math.log(p) for _, p in OBJECTS[(t[3], t[4])])
            n += 1
    return ent / n


# ---------------------------------------------------------------- main

def main():
    t0 = time.time()
    torch.set_num_threads(2)
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    vocab = make_vocab()
    stoi = {c: i for i, c in enumerate(vocab)}
    V = len(vocab)
    CFG["V"] = V
    held = split_templates()
    templates = all_templates()
    rng = random.Random(SEED)
    train = [make_sequence(rng, held) for _ in range(N_TRAIN_SEQ)]
    train_x = to_tensor([t for t, _ in train], stoi)
    corpus_chars = sum(len(t) for t, _ in train)
    # held-out set: every held-out template once, alone, with its most likely object, and again
    # after a training sentence (so it is not at position 0)
    erng = random.Random(SEED + 2)
    held_items = []
    for t in sorted(held):
        sent = render(t, OBJECTS[(t[3], t[4])][0][0])
        p, d, a, s, v = t
        sp = len(p) + len(d)
        held_items.append((sent, [(sp, sp + 1 + len(a), t)]))
        ctx, _ = make_sequence(erng, held)
        while len(ctx) + len(sent) > CFG["P"]:
            ctx, _ = make_sequence(erng, held)
        held_items.append((ctx + sent, [(len(ctx) + sp, len(ctx) + sp + 1 + len(a), t)]))
    train_eval = [make_sequence(erng, held) for _ in range(2000)]
    print(f"torch {torch.__version__}; vocabulary {V} tokens; {len(templates)} sentence templates, "
          f"{len(held)} held out; {N_TRAIN_SEQ} training sequences ({corpus_chars} characters)")
    print("examples: " + " | ".join(t for t, _ in train[:6]))

    g = torch.Generator()
    g.manual_seed(SEED)
    w = init_weights(V, g)
    n_params = sum(v.numel() for v in w.values())
    decay = [v for k, v in w.items() if k.endswith(".weight") and v.dim() == 2]
    no_decay = [v for k, v in w.items() if not (k.endswith(".weight") and v.dim() == 2)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY},
                             {"params": no_decay, "weight_decay": 0.0}], lr=LR, betas=(0.9, 0.98))
    warm = 100
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / STEPS))))
    bg = torch.Generator()
    bg.manual_seed(SEED + 3)
    log_every = 400
    running = 0.0
    for step in range(1, STEPS + 1):
        idx = torch.randint(0, N_TRAIN_SEQ, (BATCH,), generator=bg)
        x = train_x[idx]
        x = x[:, :int((x != 0).sum(1).max())]             # drop the all-[PAD] tail columns
        logits = batched_forward(w, x[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, V), x[:, 1:].reshape(-1), ignore_index=0)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(w.values()), 1.0)
        opt.step()
        sched.step()
        running += float(loss)
        if step % log_every == 0:
            print(f"  step {step:5d}  train loss {running / log_every:.4f}  ({time.time() - t0:.0f} s)")
            final_loss = running / log_every
            running = 0.0
    train_time = time.time() - t0
    w = {k: v.detach().contiguous() for k, v in w.items()}

    # full-corpus loss of the final weights (per next character, pads ignored)
    with torch.no_grad():
        tot, cnt = 0.0, 0
        for i in range(0, N_TRAIN_SEQ, 2000):
            x = train_x[i:i + 2000]
            lg = batched_forward(w, x[:, :-1])
            tgt = x[:, 1:]
            tot += float(F.cross_entropy(lg.reshape(-1, V), tgt.reshape(-1), ignore_index=0, reduction="sum"))
            cnt += int((tgt != 0).sum())
    corpus_loss = tot / cnt

    acc_tr, nll_tr, n_tr = eval_objects(w, train_eval, stoi)
    acc_ho, nll_ho, n_ho = eval_objects(w, held_items, stoi)
    floor_ho = entropy_floor(held_items)
    # which head looks from the verb to the subject
    att_items = train_eval + held_items
    mean_all, top_all, n_all = head_stats(w, att_items, stoi)
    mean_chi, top_chi, n_chi = head_stats(w, att_items, stoi, verb="吃")
    L, H = CFG["L"], CFG["H"]
    best = max(((l, h) for l in range(L) for h in range(H)), key=lambda lh: float(mean_chi[lh]))
    # ablation: held-out accuracy with each head's output zeroed
    ablation = {}
    for l in range(L):
        for h in range(H):
            m = torch.ones(L, H)
            m[l, h] = 0
            ablation[(l, h)] = eval_objects(w, held_items, stoi, head_mask=m)[0]
    print(f"training: {train_time:.1f} s; train loss over the last {log_every} steps {final_loss:.4f}; "
          f"loss over the corpus {corpus_loss:.4f}")
    print(f"object accuracy: training sentences {acc_tr:.4f} ({n_tr}), held out {acc_ho:.4f} ({n_ho}); "
          f"held-out object loss {nll_ho:.4f} (grammar's floor {floor_ho:.4f})")
    print("verb row -> subject: mean weight / subject is the row's max (all verbs | 吃 only)")
    for l in range(L):
        for h in range(H):
            print(f"  layer {l} head {h}: {float(mean_all[l, h]):.3f} / {float(top_all[l, h]):.3f}  |  "
                  f"{float(mean_chi[l, h]):.3f} / {float(top_chi[l, h]):.3f}   held-out acc without it "
                  f"{ablation[(l, h)]:.3f}")

    # ---------------------------------------------------------------- save
    os.makedirs(OUT, exist_ok=True)
    tensors = {k: v.to(torch.float32).contiguous() for k, v in w.items()}
    st_path = os.path.join(OUT, "model.safetensors")
    mg.write_safetensors(st_path, tensors)
    back = mg.read_safetensors(st_path)
    for k, t in tensors.items():
        assert back[k][0] == "F32" and back[k][1] == list(t.shape)
        assert torch.equal(torch.from_numpy(back[k][2].copy()), t.double()), k
    w64 = {k: torch.from_numpy(back[k][2].copy()) for k in tensors}
    config = mg.hf_config(CFG)
    config["bos_token_id"] = config["eos_token_id"] = stoi[END]
    with open(os.path.join(OUT, "config.json"), "w") as f:
        f.write(json.dumps(config, indent=2, sort_keys=True) + "\n")
    with open(os.path.join(OUT, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in vocab))

    # ---------------------------------------------------------------- golden
    c = dict(CFG)
    seqs, worst = [], {"logits": 0.0, "attention": 0.0}
    for text, why in GOLDEN_TEXTS:
        ids = [stoi[ch] for ch in text]
        logits, att = mg.forward(c, w64, ids)
        lt, at = mg.forward(c, w64, ids, ops=mg.TORCH_OPS)
        assert torch.allclose(lt, logits, rtol=1e-12, atol=1e-12) and torch.allclose(at, att, rtol=1e-12, atol=1e-13)
        l32, a32 = mg.forward(c, w64, ids, dtype=torch.float32, ops=mg.TORCH_OPS)
        worst["logits"] = max(worst["logits"], float((l32.double() - logits).abs().max()))
        worst["attention"] = max(worst["attention"], float((a32.double() - att).abs().max()))
        # the training-form (batched) forward gives the same numbers
        with torch.no_grad():
            lb, ab = batched_forward(w64, torch.tensor([ids]), want_att=True)
        assert torch.allclose(lb[0], logits, atol=1e-10) and torch.allclose(ab[:, 0], att, atol=1e-12)
        top = torch.topk(logits, 2, dim=-1)
        seqs.append({"text": text, "why": why, "ids": ids, "tokens": list(text),
                     "next": top.indices[:, 0].tolist(), "next_tokens": [vocab[i] for i in top.indices[:, 0].tolist()],
                     "margins": [mg.Raw("%.6g" % float(m)) for m in top.values[:, 0] - top.values[:, 1]],
                     "logits": mg.nested(logits), "attention": mg.nested(att)})
    gens = []
    for prompt in GENERATE_PROMPTS:
        ids = [stoi[ch] for ch in prompt]
        new, margins = [], []
        for _ in range(NEW_TOKENS):
            logits, _ = mg.forward(c, w64, ids + new)
            top = torch.topk(logits[-1], 2)
            margins.append(float(top.values[0] - top.values[1]))
            new.append(int(top.indices[0]))
        assert min(margins) >= 1e-3, (prompt, margins)
        gens.append({"prompt": prompt, "prompt_ids": ids, "new_tokens": new,
                     "new_text": "".join(vocab[i] for i in new), "margins": [mg.Raw("%.6g" % m) for m in margins]})
    doc = {
        "version": 1, "torch": torch.__version__, "generator": GENERATOR, "model": "web/models/toy-zh",
        "config": {"n_layer": L, "n_head": H, "n_embd": CFG["C"], "vocab_size": V,
                   "n_positions": CFG["P"], "layer_norm_epsilon": CFG["eps"]},
        "note": ("float64 reference (tests/golden/gpt2/make_golden.py: forward) from the float32 weights as stored in "
                 "web/models/toy-zh/model.safetensors; ids = each character's line in vocab.txt (no BOS, no [CLS]); "
                 "next[i] = argmax of logits[i], margins[i] = top-1 minus top-2 logit; attention "
                 "(n_layer x n_head x n x n), 0 above the diagonal; numbers to 9 significant digits"),
        "f32_max_abs_diff": {"logits": mg.Raw("%.3g" % worst["logits"]), "attention": mg.Raw("%.3g" % worst["attention"])},
        "sequences": seqs,
        "generate": gens,
    }
    parts = [json.dumps(k, ensure_ascii=False) + ":" + emit(v) for k, v in doc.items() if k not in ("sequences", "generate")]
    text = ("{" + ",\n".join(parts) + ',\n"sequences":[\n' + ",\n".join(emit(s) for s in seqs) + '],\n"generate":[\n'
            + ",\n".join(emit(s) for s in gens) + "]}\n")
    json.loads(text)
    with open(GOLDEN, "w", encoding="utf-8") as f:
        f.write(text)

    # ---------------------------------------------------------------- model card
    sizes = {fn: os.path.getsize(os.path.join(OUT, fn)) for fn in ("config.json", "model.safetensors", "vocab.txt")}
    sha = hashlib.sha256(open(st_path, "rb").read()).hexdigest()
    stats = dict(V=V, n_params=n_params, train_time=train_time, final_loss=final_loss, corpus_loss=corpus_loss,
                 acc_tr=acc_tr, n_tr=n_tr, acc_ho=acc_ho, n_ho=n_ho, nll_ho=nll_ho, floor_ho=floor_ho,
                 mean_all=mean_all, top_all=top_all, n_all=n_all, mean_chi=mean_chi, top_chi=top_chi, n_chi=n_chi,
                 best=best, ablation=ablation, sizes=sizes, sha=sha, held=held, templates=templates,
                 corpus_chars=corpus_chars, gens=gens, seqs=seqs, worst=worst, vocab=vocab)
    with open(os.path.join(OUT, "README.md"), "w", encoding="utf-8") as f:
        f.write(model_card(stats))
    print(f"wrote {OUT}: " + ", ".join(f"{k} {v} B" for k, v in sizes.items()) + f"; {GOLDEN} {os.path.getsize(GOLDEN)} B")
    print(f"float32 vs float64 on the golden sentences: logits {worst['logits']:.2e}, attention {worst['attention']:.2e}")
    print(f"total {time.time() - t0:.1f} s")


def emit(o):
    if isinstance(o, str) and not isinstance(o, mg.Raw):
        return json.dumps(o, ensure_ascii=False)
    if isinstance(o, (list, tuple)):
        return "[" + ",".join(emit(v) for v in o) + "]"
    if isinstance(o, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + emit(v) for k, v in o.items()) + "}"
    return mg.emit(o)


def model_card(s):
    L, H, C, P = CFG["L"], CFG["H"], CFG["C"], CFG["P"]
    bl, bh = s["best"]
    table = "\n".join(
        f"| {l} | {h} | {float(s['mean_all'][l, h]):.3f} | {float(s['top_all'][l, h]):.3f} | "
        f"{float(s['mean_chi'][l, h]):.3f} | {float(s['top_chi'][l, h]):.3f} | {s['ablation'][(l, h)]:.3f} |"
        for l in range(L) for h in range(H))
    objects = "\n".join(
        f"| {sub} | " + " | ".join(" / ".join(f"{o}" + (f" {p:.1f}" if p < 1 else "") for o, p in OBJECTS[(sub, v)])
                                     for v in VERBS) + " |" for sub in SUBJECTS)
    gens = "; ".join(f"{g['prompt']} → {g['new_text']}" for g in s["gens"])
    nexts = "; ".join(f"{q['text']}: " + " ".join(q["next_tokens"]) for q in s["seqs"][:5])
    return f"""# toy-zh: a toy GPT-2-layout model of 猫吃鱼 sentences

**This is a toy.** It has {s['n_params']:,} parameters and knows {s['V'] - 2} Chinese characters and
one grammar of three-word sentences. It is not a language model of Chinese; it exists so that the
attention heatmaps of `attnmap` have a trained model to show, small enough to ship with the package.

Retrain it (deterministic; every file here and `tests/golden/toy-zh.json` are rewritten):

```sh
{COMMAND}
```

Use Debian's `/usr/bin/python3` with `python3-torch` (PyTorch {torch.__version__}), not a pyenv python. On
2 CPU cores it trains in {s['train_time']:.0f} s.

## Files

| file | bytes | |
|---|---|---|
| `config.json` | {s['sizes']['config.json']} | Hugging Face `GPT2Config` keys (`bos_token_id` = `eos_token_id` = the id of 。) |
| `model.safetensors` | {s['sizes']['model.safetensors']:,} | float32, GPT-2 names without prefix (`wte.weight`, `h.0.attn.c_attn.weight`, ...); sha256 `{s['sha'][:16]}…` |
| `vocab.txt` | {s['sizes']['vocab.txt']} | one token per line, id = line number from 0: `[PAD]`, `[UNK]`, then the characters |

Text is tokenized as BERT's WordPiece does with this `vocab.txt`: each CJK character is one token,
and 。 is a token too. **No BOS or [CLS] is added**: a text's ids are its characters' ids, from
position 0, exactly as in training. A character outside the vocabulary becomes `[UNK]`, which the
model never saw.

## Model

GPT-2 layout, the forward pass of `tests/golden/gpt2/make_golden.py`: {L} layers, {H} heads,
n_embd {C} (d_head {C // H}), n_positions {P}, vocab_size {s['V']}, LayerNorm eps {CFG['eps']}, gelu_new,
learned position embeddings, output projection tied to `wte`. No dropout.

## Data: the grammar

A sentence is `[我看见] [determiner] SUBJECT [在|也] VERB OBJECT 。`; the determiner is one of
小 / 那只 / 这只 for animals and 那个 / 这个 for 人 (or none). The object depends on the subject and the
verb (probabilities where there is a choice):

| subject | {' | '.join(VERBS)} |
|---|{'---|' * len(VERBS)}
{objects}

So at the verb, the next character cannot be guessed from the verb alone (吃 → 鱼, 肉, 虫, 虾, 草, 饭,
...): the model has to find the subject, which sits 1 to 4 positions back, behind framing words,
possibly after earlier sentences. That is a job for attention.

Training sequences are 1 to 3 sentences in a row (at most {P} characters, padded with `[PAD]`,
which the loss ignores); subject, verb, framing and the sentence count are drawn uniformly
(我看见 with probability 0.3), the object from the table. {len(s['templates'])} sentence templates
(framing × subject × verb); {len(s['held'])} of them ({HELD_OUT_FRACTION:.0%} drawn with a fixed seed, plus
小牛吃…) are **held out**: never in training. The bare sentences (猫吃鱼, ...) are all in training.
{N_TRAIN_SEQ:,} sequences, {s['corpus_chars']:,} characters.

## Training

AdamW (lr {LR}, betas 0.9/0.98, weight decay {WEIGHT_DECAY} on matrices), 100 warm-up steps then cosine
decay, {STEPS} steps of {BATCH} sequences, gradient clipping at 1, next-character cross-entropy on
every position; seeds fixed (`{SEED}`), `torch.use_deterministic_algorithms(True)`, 2 threads.

- Loss of the final weights over the whole training corpus: {s['corpus_loss']:.4f} nats per character
  (most of what remains is the grammar's own randomness: which subject, verb and framing come next).
- **Object accuracy** (the argmax after the verb is the subject–verb pair's most likely object):
  training sentences {s['acc_tr']:.1%} of {s['n_tr']:,}; **held-out templates {s['acc_ho']:.1%}** of {s['n_ho']}
  (each held-out template alone and after a training sentence). Held-out object loss
  {s['nll_ho']:.4f} nats, against {s['floor_ho']:.4f} for a model that knows the grammar's probabilities.
- Greedy continuations: {gens}.
- Argmax after each character: {nexts}.

## Which head looks from the verb back to the subject

Measured over {s['n_all']:,} verbs ({s['n_chi']:,} of them 吃) in 2,000 fresh training-distribution sequences
and the held-out set: the mean attention weight of the verb's row on the subject's column, how
often the subject is that row's largest weight, and the held-out object accuracy with that head's
output zeroed (all heads on: {s['acc_ho']:.3f}).

| layer | head | all verbs: weight on subject | subject is max | 吃 only: weight | subject is max | held-out accuracy without the head |
|---|---|---|---|---|---|---|
{table}

**Layer {bl}, head {bh}** is the head whose row for 吃 puts the most weight on the subject: on average
{float(s['mean_chi'][bl, bh]):.3f} of the row, and the subject is the largest weight in {float(s['top_chi'][bl, bh]):.1%} of the 吃
rows. Look at it with

```sh
node bin/attnmap.js model web/models/toy-zh --text 我看见那只猫在吃鱼 --layer {bl} --head {bh}
```

Numbers from one run of the script; `tests/golden/toy-zh.json` holds the float64 logits and
attention of the saved weights for a few sentences, and `tests/unit/toy-model.test.js` checks the
runtime against them.
"""


if __name__ == "__main__":
    sys.exit(main())
