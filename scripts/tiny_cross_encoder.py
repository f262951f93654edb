#!/usr/bin/env python3
"""A tiny, randomly initialised cross-encoder and its scores computed in NumPy.

    tiny_cross_encoder.py OUT_DIR [--layout bert|roberta] [--labels 1|2] [--seed N]

Writes a model directory the way Hugging Face saves a sequence-classification
model (config.json, tokenizer.json, model.safetensors) and cases.json: query /
document pairs, the token ids and type ids a BERT tokenizer gives them, and
the score of each pair from an independent NumPy forward pass (float64): the
logit of a one-label head, the log-odds of label 1 for two labels.
Kenning's in-process cross-encoder (crates/ken-embed/src/local/cross.rs) must
reproduce these; crates/ken-embed/tests/cross_encoder.rs checks it.

Only NumPy is needed (scripts/install-test-tools.sh installs it).
"""

import argparse
import json
import math
import re
import struct
from pathlib import Path

import numpy as np

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = (
    "how is the session token refreshed when it expires invoice discount total "
    "def return class self user config parse load file path error retry request "
    "cache database query search index commit blame author test a of in to for"
).split()
PUNCT = list("_.,:()[]=-'\"/")
VOCAB = SPECIAL + WORDS + PUNCT

HIDDEN, HEADS, LAYERS, INTER, MAX_POS = 32, 4, 2, 64, 64
MAX_TOKENS = 24  # pairs are cut to this many tokens (a long document is)

CASES = [
    (
        "how is the session token refreshed",
        [
            "def refresh(self): return self.token",
            "class Invoice: total = discount",
            "the session token is refreshed when it expires",
            "unknownword another_unknown parse(config)",
            # longer than MAX_TOKENS with the query: the document is cut
            "search index commit blame author test cache database query load file "
            "path error retry request user config parse a of in to for the session",
        ],
    ),
    ("parse_config error", ["def parse_config(path): load(path)", "retry request"]),
]


def tokenize(text):
    """BertNormalizer (lowercase) + BertPreTokenizer + whole-word WordPiece:
    the vocabulary has no '##' pieces, so a word not in it is [UNK]."""
    ids = []
    for word in re.findall(r"[A-Za-z0-9]+|[^A-Za-z0-9\s]", text.lower()):
        ids.append(VOCAB.index(word) if word in VOCAB else VOCAB.index("[UNK]"))
    return ids


def pair(query, doc):
    """[CLS] q [SEP] d [SEP], the longest of q and d cut first (HF LongestFirst)."""
    a, b = tokenize(query), tokenize(doc)
    while len(a) + len(b) + 3 > MAX_TOKENS:
        if len(b) >= len(a):
            b.pop()
        else:
            a.pop()
    cls, sep = VOCAB.index("[CLS]"), VOCAB.index("[SEP]")
    ids = [cls] + a + [sep] + b + [sep]
    types = [0] * (len(a) + 2) + [1] * (len(b) + 1)
    return ids, types


def tokenizer_json():
    special = {
        s: {"id": s, "ids": [VOCAB.index(s)], "tokens": [s]} for s in ("[CLS]", "[SEP]")
    }
    tok = lambda s, t: {"SpecialToken": {"id": s, "type_id": t}}  # noqa: E731
    seq = lambda s, t: {"Sequence": {"id": s, "type_id": t}}  # noqa: E731
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": i,
                "content": s,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for i, s in enumerate(SPECIAL)
        ],
        "normalizer": {
            "type": "BertNormalizer",
            "clean_text": True,
            "handle_chinese_chars": True,
            "strip_accents": None,
            "lowercase": True,
        },
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [tok("[CLS]", 0), seq("A", 0), tok("[SEP]", 0)],
            "pair": [tok("[CLS]", 0), seq("A", 0), tok("[SEP]", 0), seq("B", 1), tok("[SEP]", 1)],
            "special_tokens": special,
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {
            "type": "WordPiece",
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
            "vocab": {w: i for i, w in enumerate(VOCAB)},
        },
    }


def weights(layout, labels, rng):
    """Tensors named as transformers saves them; every one random."""
    pre = "bert." if layout == "bert" else "roberta."
    offset = 0 if layout == "bert" else 1  # roberta: positions from pad_token_id + 1
    types = 2 if layout == "bert" else 1
    r = lambda *shape: rng.normal(0.0, 0.2, shape)  # noqa: E731
    gain = lambda n: 1.0 + rng.normal(0.0, 0.1, (n,))  # noqa: E731
    t = {
        pre + "embeddings.word_embeddings.weight": r(len(VOCAB), HIDDEN),
        pre + "embeddings.position_embeddings.weight": r(MAX_POS + offset, HIDDEN),
        pre + "embeddings.token_type_embeddings.weight": r(types, HIDDEN),
        pre + "embeddings.LayerNorm.weight": gain(HIDDEN),
        pre + "embeddings.LayerNorm.bias": r(HIDDEN),
    }
    for l in range(LAYERS):
        p = f"{pre}encoder.layer.{l}."
        for name, (o, i) in {
            "attention.self.query": (HIDDEN, HIDDEN),
            "attention.self.key": (HIDDEN, HIDDEN),
            "attention.self.value": (HIDDEN, HIDDEN),
            "attention.output.dense": (HIDDEN, HIDDEN),
            "intermediate.dense": (INTER, HIDDEN),
            "output.dense": (HIDDEN, INTER),
        }.items():
            t[p + name + ".weight"] = r(o, i)
            t[p + name + ".bias"] = r(o)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            t[p + ln + ".weight"] = gain(HIDDEN)
            t[p + ln + ".bias"] = r(HIDDEN)
    if layout == "bert":
        head = (pre + "pooler.dense", "classifier")
    else:
        head = ("classifier.dense", "classifier.out_proj")
    t[head[0] + ".weight"] = r(HIDDEN, HIDDEN)
    t[head[0] + ".bias"] = r(HIDDEN)
    t[head[1] + ".weight"] = r(labels, HIDDEN) * 5.0
    t[head[1] + ".bias"] = r(labels)
    return {k: v.astype(np.float32) for k, v in t.items()}, pre, head, offset


def write_safetensors(path, tensors):
    header, blobs, at = {"__metadata__": {"format": "pt"}}, [], 0
    for name, a in tensors.items():
        data = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [at, at + len(data)]}
        blobs.append(data)
        at += len(data)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def layer_norm(x, g, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def gelu(x):
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def forward(t, pre, head, offset, ids, types, labels):
    """The model's score of one pair, in float64."""
    w = {k: v.astype(np.float64) for k, v in t.items()}
    lin = lambda x, n: x @ w[n + ".weight"].T + w[n + ".bias"]  # noqa: E731
    n = len(ids)
    types = np.minimum(np.array(types), w[pre + "embeddings.token_type_embeddings.weight"].shape[0] - 1)
    x = (
        w[pre + "embeddings.word_embeddings.weight"][ids]
        + w[pre + "embeddings.position_embeddings.weight"][np.arange(n) + offset]
        + w[pre + "embeddings.token_type_embeddings.weight"][types]
    )
    x = layer_norm(x, w[pre + "embeddings.LayerNorm.weight"], w[pre + "embeddings.LayerNorm.bias"])
    d = HIDDEN // HEADS
    for l in range(LAYERS):
        p = f"{pre}encoder.layer.{l}."
        q, k, v = (lin(x, p + "attention.self." + m) for m in ("query", "key", "value"))
        ctx = np.zeros_like(x)
        for hd in range(HEADS):
            s = slice(hd * d, (hd + 1) * d)
            scores = q[:, s] @ k[:, s].T / math.sqrt(d)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            ctx[:, s] = scores @ v[:, s]
        a = lin(ctx, p + "attention.output.dense")
        x = layer_norm(x + a, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        m = lin(gelu(lin(x, p + "intermediate.dense")), p + "output.dense")
        x = layer_norm(x + m, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    pooled = np.tanh(lin(x[0], head[0]))
    logits = lin(pooled, head[1])
    return float(logits[0] if labels == 1 else logits[1] - logits[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--layout", choices=["bert", "roberta"], default="bert")
    ap.add_argument("--labels", type=int, choices=[1, 2], default=1)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    t, pre, head, offset = weights(args.layout, args.labels, rng)
    write_safetensors(args.out / "model.safetensors", t)
    arch = "BertForSequenceClassification" if args.layout == "bert" else "RobertaForSequenceClassification"
    config = {
        "architectures": [arch],
        "model_type": args.layout,
        "vocab_size": len(VOCAB),
        "hidden_size": HIDDEN,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "intermediate_size": INTER,
        "hidden_act": "gelu",
        "max_position_embeddings": MAX_POS + offset,
        "type_vocab_size": 2 if args.layout == "bert" else 1,
        "layer_norm_eps": 1e-12,
        "pad_token_id": 0,
        "id2label": {str(i): f"LABEL_{i}" for i in range(args.labels)},
    }
    (args.out / "config.json").write_text(json.dumps(config, indent=1))
    (args.out / "tokenizer.json").write_text(json.dumps(tokenizer_json(), indent=1))
    cases = []
    for query, docs in CASES:
        pairs = [pair(query, d) for d in docs]
        cases.append(
            {
                "query": query,
                "documents": docs,
                "ids": [p[0] for p in pairs],
                "types": [p[1] for p in pairs],
                "scores": [forward(t, pre, head, offset, i, ty, args.labels) for i, ty in pairs],
            }
        )
    (args.out / "cases.json").write_text(json.dumps({"max_tokens": MAX_TOKENS, "cases": cases}, indent=1))


if __name__ == "__main__":
    main()
