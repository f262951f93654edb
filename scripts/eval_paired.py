#!/usr/bin/env python3
"""Two `ken eval --per-query` files compared question by question.

    scripts/eval_paired.py A.jsonl B.jsonl [--resamples 10000] [--seed 7]

For each repository and overall: the questions both files answered, the
MRR@10 of each, the mean difference B − A with its 95% interval from a
paired bootstrap (the questions resampled with replacement, each keeping
both of its answers), and how many questions B ranks better and worse.
A difference whose interval holds 0 is one these questions cannot tell
from noise. Questions are matched by `id`; a question only one file
answered is counted and left out.
"""
import argparse
import collections
import json
import random


def load(path):
    out = {}
    for line in open(path):
        line = line.strip()
        if line:
            q = json.loads(line)
            out[q["id"]] = q
    return out


def interval(diffs, resamples, rng):
    n = len(diffs)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    return means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    a, b = load(args.a), load(args.b)
    both = [i for i in a if i in b]
    only = len(set(a) ^ set(b))
    groups = collections.defaultdict(list)
    for i in both:
        groups[a[i]["repo"]].append(i)
    groups = dict(sorted(groups.items()))
    groups["all"] = both
    rng = random.Random(args.seed)
    print("| questions | n | A MRR@10 | B MRR@10 | B − A | 95% interval | B better / worse |")
    print("|---|---:|---:|---:|---:|---|---|")
    for name, ids in groups.items():
        ra = [a[i].get("rr", 0.0) or 0.0 for i in ids]
        rb = [b[i].get("rr", 0.0) or 0.0 for i in ids]
        diffs = [y - x for x, y in zip(ra, rb)]
        lo, hi = interval(diffs, args.resamples, rng)
        n = len(ids)
        up = sum(1 for d in diffs if d > 1e-12)
        down = sum(1 for d in diffs if d < -1e-12)
        print(f"| {name} | {n} | {sum(ra) / n:.3f} | {sum(rb) / n:.3f} | {sum(diffs) / n:+.3f} "
              f"| [{lo:+.3f}, {hi:+.3f}] | {up} / {down} |")
    if only:
        print(f"\n{only} question(s) answered in only one file were left out.")


if __name__ == "__main__":
    main()
