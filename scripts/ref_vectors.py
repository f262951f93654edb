#!/usr/bin/env python3
"""Reference embeddings for ken-embed's tests, from an independent implementation.

A float64 NumPy re-implementation of BERT + mean pooling + L2 normalisation,
reading `model.safetensors` directly and tokenising with the `tokenizers`
package (the same tokenizer.json, truncated to the model's 256 tokens, no
padding). It shares no code with the Rust crate, so agreement between the two
checks the crate's tokenisation, forward pass and pooling.

Usage (the venv is throwaway, never committed):
    python3 -m venv /tmp/ken-ref && /tmp/ken-ref/bin/pip install numpy safetensors tokenizers
    /tmp/ken-ref/bin/python scripts/ref_vectors.py [MODEL_DIR] [OUT_JSON]
MODEL_DIR defaults to $KEN_TEST_MODEL_DIR or ~/.cache/ken-models/all-MiniLM-L6-v2;
OUT_JSON to crates/ken-embed/tests/data/reference_vectors.json.
"""

import hashlib
import json
import math
import os
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

LONG_TEXT = " ".join(
    [
        "def retry(fn, attempts=3, backoff=0.5):",
        "    '''Call fn until it succeeds, sleeping backoff * 2**i between tries.'''",
        "    for i in range(attempts):",
        "        try:",
        "            return fn()",
        "        except TransientError as exc:",
        "            log.warning('attempt %d failed: %s', i, exc)",
        "            time.sleep(backoff * 2 ** i)",
        "    raise RetryExhausted(attempts)",
    ]
    * 8
)

TEXTS = [
    "This is an example sentence",
    "Each sentence is converted",
    "fn parse_config(path: &Path) -> Result<Config, Error> {\n    let text = std::fs::read_to_string(path)?;\n    toml::from_str(&text).map_err(Error::from)\n}",
    "@app.route('/login', methods=['POST'])\ndef login():\n    user = User.query.filter_by(email=request.form['email']).first()\n    return redirect(url_for('index'))",
    "Größenänderung des Puffers schlägt fehl — 缓冲区大小调整失败 (naïve café) 🚀",
    LONG_TEXT,
    "",
]


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


_erf = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def main():
    model_dir = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
        "KEN_TEST_MODEL_DIR", os.path.expanduser("~/.cache/ken-models/all-MiniLM-L6-v2")
    )
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        here, "..", "crates", "ken-embed", "tests", "data", "reference_vectors.json"
    )
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    st_path = os.path.join(model_dir, "model.safetensors")
    sha = hashlib.sha256(open(st_path, "rb").read()).hexdigest()
    w = {k: v.astype(np.float64) for k, v in load_file(st_path).items() if v.dtype != np.int64}
    max_len = min(256, cfg["max_position_embeddings"])
    sbert = os.path.join(model_dir, "sentence_bert_config.json")
    if os.path.exists(sbert):
        max_len = min(json.load(open(sbert)).get("max_seq_length", max_len), cfg["max_position_embeddings"])

    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=max_len)

    heads = cfg["num_attention_heads"]
    hidden = cfg["hidden_size"]
    hd = hidden // heads
    eps = cfg["layer_norm_eps"]

    def lin(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    results = []
    for text in TEXTS:
        enc = tok.encode(text)
        ids = np.array(enc.ids)
        n = len(ids)
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        for layer in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{layer}."
            q = lin(x, p + "attention.self.query").reshape(n, heads, hd).transpose(1, 0, 2)
            k = lin(x, p + "attention.self.key").reshape(n, heads, hd).transpose(1, 0, 2)
            v = lin(x, p + "attention.self.value").reshape(n, heads, hd).transpose(1, 0, 2)
            s = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            ctx = (s @ v).transpose(1, 0, 2).reshape(n, hidden)
            a = lin(ctx, p + "attention.output.dense")
            x = layer_norm(x + a, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], eps)
            h = gelu(lin(x, p + "intermediate.dense"))
            o = lin(h, p + "output.dense")
            x = layer_norm(x + o, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
        v = x.mean(0)
        v /= np.linalg.norm(v)
        results.append({"text": text, "n_tokens": n, "vector": [round(float(f), 7) for f in v]})
        print(f"{n:4d} tokens  {v[:5].round(4)}  {text[:40]!r}")

    doc = {
        "generator": "scripts/ref_vectors.py (float64 NumPy BERT, mean pooling, L2)",
        "model": os.path.basename(os.path.normpath(model_dir)),
        "safetensors_sha256": sha,
        "max_tokens": max_len,
        "vectors": results,
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote", os.path.normpath(out))


if __name__ == "__main__":
    main()
