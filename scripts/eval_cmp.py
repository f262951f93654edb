#!/usr/bin/env python3
"""Compare two folders written by scripts/eval_same.sh, query by query.

    python3 scripts/eval_cmp.py BEFORE AFTER

Prints, per set, how many queries differ in anything but their timing
(file lists, ranks, symbol ranks, context hits) and the headline figures
of both; exits 1 when any query differs.
"""
import json
import sys

TIMING = {"ms", "took_ms", "latency_ms"}
KEYS = ["mrr@10", "recall@5", "symbol_mrr@10", "context_recall", "p50_ms", "p95_ms"]


def main(a, b):
    differ = 0
    for name in ["commits", "symbols", "docs", "swe"]:
        try:
            qa = [json.loads(l) for l in open(f"{a}/{name}.pq")]
            qb = [json.loads(l) for l in open(f"{b}/{name}.pq")]
        except OSError as e:
            print(f"{name}: missing ({e})")
            continue
        strip = lambda q: {k: v for k, v in q.items() if k not in TIMING}
        n = sum(1 for x, y in zip(qa, qb) if strip(x) != strip(y)) + abs(len(qa) - len(qb))
        differ += n
        oa = json.load(open(f"{a}/{name}.json"))
        ob = json.load(open(f"{b}/{name}.json"))
        oa, ob = oa.get("overall", oa), ob.get("overall", ob)
        figs = " ".join(f"{k} {oa.get(k)}/{ob.get(k)}" for k in KEYS)
        print(f"{name}: {len(qa)} queries, {n} differ; {figs}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
