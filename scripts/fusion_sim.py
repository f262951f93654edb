#!/usr/bin/env python3
"""Offline comparison of file-level fusion rules on the raw lists dumped by
`cargo run -p ken-engine --example signal_dump` (whole-file BM25, chunk BM25,
dense, exact symbols, priors). Reproduces `ken eval`'s file MRR@10 and
recall@10 closely (not exactly: candidate loading is simplified).

    scripts/fusion_sim.py signals.jsonl
"""
import json, sys, math
from collections import defaultdict

K = 60.0


def load(path):
    return [json.loads(l) for l in open(path)]


def metrics(qs, rank_fn):
    out = defaultdict(lambda: [0.0, 0.0, 0])
    for q in qs:
        files = rank_fn(q)[:10]
        gold = q["gold_files"]
        rr = next((1.0 / (i + 1) for i, f in enumerate(files) if f in gold), 0.0)
        rec = sum(1 for g in gold if g in files) / len(gold) if gold else 0.0
        for key in (q["repo"], "overall"):
            m = out[key]
            m[0] += rr; m[1] += rec; m[2] += 1
    return {k: (v[0] / v[2], v[1] / v[2]) for k, v in out.items()}


def rrf_lists(q, weights, k=K, depth=None):
    score = defaultdict(float)
    for name, w in weights.items():
        if w <= 0:
            continue
        lst = q[name] if depth is None else q[name][:depth]
        for i, (path, _) in enumerate(lst):
            score[path] += w / (k + i + 1)
    return score


def finish(q, score, pin=True):
    prior = q["prior"]
    ranked = sorted(score, key=lambda p: -score[p] * prior.get(p, 1.0))
    if pin and q["exact"]:
        pinned = [p for p, _ in q["exact"][:5]]
        pinned.sort(key=lambda p: -score[p] * prior.get(p, 1.0))
        ranked = pinned + [p for p in ranked if p not in pinned]
    return ranked


def current(w_dense=0.5):
    return lambda q: finish(q, rrf_lists(q, {"file_bm25": 2.0, "chunk_bm25": 1.0, "dense": w_dense, "exact": 0.5}))


def show(name, res, ref=None):
    repos = ["pallets/flask", "BurntSushi/ripgrep", "spf13/cobra", "expressjs/express", "overall"]
    cells = []
    for r in repos:
        m, rc = res[r]
        cells.append(f"{m:.3f}/{rc:.3f}")
    print(f"{name:40s} " + "  ".join(cells))


if __name__ == "__main__":
    qs = load(sys.argv[1])
    show("lexical", metrics(qs, current(0.0)))
    show("dense", metrics(qs, lambda q: finish(q, rrf_lists(q, {"dense": 1.0}), pin=False)))
    show("hybrid (current)", metrics(qs, current(0.5)))
