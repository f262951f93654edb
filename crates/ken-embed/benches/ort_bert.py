#!/usr/bin/env python3
"""Reference throughput: the same BERT in ONNX Runtime (CPU), on the same inputs.

Builds a standard ONNX graph of the model straight from model.safetensors
(no PyTorch needed: Gather, MatMul, LayerNormalization, Softmax, Erf...; ORT's
optimiser fuses it into its BERT kernels: Attention/SkipLayerNorm/BiasGelu),
checks it against tests/data/reference_vectors.json, then times it on the
256-token windows the Rust bench wrote (`windows-256.json`).

    python3 -m venv /tmp/ken-ref && /tmp/ken-ref/bin/pip install numpy safetensors tokenizers onnx onnxruntime
    /tmp/ken-ref/bin/python crates/ken-embed/benches/ort_bert.py MODEL_DIR WINDOWS_JSON [REPS]
"""

import json
import math
import os
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file
from tokenizers import Tokenizer


def build(model_dir):
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    w = {k: v for k, v in load_file(os.path.join(model_dir, "model.safetensors")).items() if v.dtype != np.int64}
    H, NH, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    D, eps = H // NH, cfg["layer_norm_eps"]
    inits, nodes = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(op, ins, outs=None, **kw):
        outs = outs or [f"{op}_{len(nodes)}"]
        nodes.append(helper.make_node(op, ins, outs, **kw))
        return outs[0]

    def linear(x, name):
        y = node("MatMul", [x, const(name + ".wT", w[name + ".weight"].T.copy())])
        return node("Add", [y, const(name + ".b", w[name + ".bias"])])

    def ln(x, name):
        return node("LayerNormalization", [x, const(name + ".g", w[name + ".weight"]), const(name + ".beta", w[name + ".bias"])], axis=-1, epsilon=eps)

    shape = node("Shape", ["input_ids"])
    seq = node("Gather", [shape, const("one", np.array(1, np.int64))], axis=0)
    pos_ids = node("Range", [const("zero", np.array(0, np.int64)), seq, const("step", np.array(1, np.int64))])
    x = node("Gather", [const("word", w["embeddings.word_embeddings.weight"]), "input_ids"])
    x = node("Add", [x, node("Gather", [const("pos", w["embeddings.position_embeddings.weight"]), pos_ids])])
    x = node("Add", [x, const("type0", w["embeddings.token_type_embeddings.weight"][0])])
    x = ln(x, "embeddings.LayerNorm")
    maskf = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    bias = node("Mul", [node("Sub", [const("onef", np.array(1.0, np.float32)), maskf]), const("neg", np.array(-10000.0, np.float32))])
    bias = node("Unsqueeze", [bias, const("ax12", np.array([1, 2], np.int64))])
    split = const("split_shape", np.array([0, 0, NH, D], np.int64))
    merge = const("merge_shape", np.array([0, 0, H], np.int64))
    scale = const("scale", np.array(1.0 / math.sqrt(D), np.float32))
    for i in range(L):
        p = f"encoder.layer.{i}."
        q = node("Transpose", [node("Reshape", [linear(x, p + "attention.self.query"), split])], perm=[0, 2, 1, 3])
        k = node("Transpose", [node("Reshape", [linear(x, p + "attention.self.key"), split])], perm=[0, 2, 3, 1])
        v = node("Transpose", [node("Reshape", [linear(x, p + "attention.self.value"), split])], perm=[0, 2, 1, 3])
        s = node("Add", [node("Mul", [node("MatMul", [q, k]), scale]), bias])
        ctx = node("MatMul", [node("Softmax", [s], axis=-1), v])
        ctx = node("Reshape", [node("Transpose", [ctx], perm=[0, 2, 1, 3]), merge])
        x = ln(node("Add", [x, linear(ctx, p + "attention.output.dense")]), p + "attention.output.LayerNorm")
        h = linear(x, p + "intermediate.dense")
        e = node("Erf", [node("Div", [h, const(f"sqrt2_{i}", np.array(math.sqrt(2.0), np.float32))])])
        h = node("Mul", [node("Mul", [h, node("Add", [e, const(f"one_{i}", np.array(1.0, np.float32))])]), const(f"half_{i}", np.array(0.5, np.float32))])
        x = ln(node("Add", [x, linear(h, p + "output.dense")]), p + "output.LayerNorm")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    graph = helper.make_graph(
        nodes, "bert",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["B", "S"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["B", "S"])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["B", "S", H])],
        inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def embed(sess, seqs):
    n = max(len(s) for s in seqs)
    ids = np.zeros((len(seqs), n), np.int64)
    mask = np.zeros((len(seqs), n), np.int64)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = s
        mask[i, : len(s)] = 1
    out = sess.run(None, {"input_ids": ids, "attention_mask": mask})[0]
    m = mask[:, :, None].astype(np.float32)
    v = (out * m).sum(1) / m.sum(1)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def main():
    model_dir, windows = sys.argv[1], sys.argv[2]
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = os.cpu_count()
    sess = ort.InferenceSession(build(model_dir).SerializeToString(), so, providers=["CPUExecutionProvider"])
    print(f"onnxruntime {ort.__version__}, {os.cpu_count()} threads")

    here = os.path.dirname(os.path.abspath(__file__))
    ref = json.load(open(os.path.join(here, "..", "tests", "data", "reference_vectors.json")))
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=ref["max_tokens"])
    worst = min(float(np.dot(embed(sess, [tok.encode(r["text"]).ids])[0], r["vector"])) for r in ref["vectors"])
    print(f"agreement with reference_vectors.json: min cosine {worst:.6f}")

    seqs = json.load(open(windows))
    flop = 6 * (2 * (4 * 384 * 384 + 2 * 384 * 1536) * 256 + 4 * 256 * 256 * 384)
    print("| batch | chunks | best s | chunks/s | tokens/s | GFLOP/s |")
    print("|---|---|---|---|---|---|")
    for bs in (1, 8, 32):
        embed(sess, seqs[:bs])
        best = float("inf")
        for _ in range(reps):
            t = time.perf_counter()
            for i in range(0, len(seqs), bs):
                embed(sess, seqs[i : i + bs])
            best = min(best, time.perf_counter() - t)
        cps = len(seqs) / best
        print(f"| {bs} | {len(seqs)} | {best:.2f} | {cps:.2f} | {cps * 256:.0f} | {cps * flop / 1e9:.1f} |")

    a = np.random.rand(2048, 2048).astype(np.float32)
    a @ a
    best = min((lambda t: (a @ a, time.perf_counter() - t)[1])(time.perf_counter()) for _ in range(5))
    print(f"NumPy f32 2048^3 matmul: {2 * 2048**3 / best / 1e9:.1f} GFLOP/s")


if __name__ == "__main__":
    main()
