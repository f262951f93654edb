#!/usr/bin/env python3
"""One before/after table from the reports of scripts/eval_before_after.sh.

    scripts/eval_merge.py OUT BEFORE_TAG AFTER_TAG

SWE-bench Lite is run one repository at a time; a repository whose run
failed (no report) counts its queries as misses, as `ken eval` itself does
for a failed index step. Overall figures are query-weighted means.
"""
import glob
import json
import os
import sys

out, before, after = sys.argv[1:4]
swe_file = os.path.join(out, "swe-*.jsonl")


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def swe(tag):
    """(overall, per repo, failed repos) over every SWE-bench repository run."""
    total, per, failed = {}, {}, []
    n_all = 0
    for jsonl in sorted(glob.glob(swe_file)):
        slug = os.path.basename(jsonl)[4:-6]
        n = sum(1 for _ in open(jsonl))
        rep = load(os.path.join(out, f"{tag}-swe-{slug}.json"))
        if rep is None or "overall" not in rep:
            m = {"mrr@10": 0.0, "recall@1": 0.0, "recall@5": 0.0, "recall@10": 0.0}
            failed.append(slug)
        else:
            m = rep["overall"]
            failed += [f"{slug} ({len(rep.get('failed', []))} steps)"] if rep.get("failed") else []
        per[slug] = (n, m)
        n_all += n
        for k in ("mrr@10", "recall@1", "recall@5", "recall@10"):
            total[k] = total.get(k, 0.0) + n * m.get(k, 0.0)
    return {k: v / n_all for k, v in total.items()}, per, failed, n_all


def row(name, b, a, keys):
    cells = []
    for k in keys:
        bv, av = (b or {}).get(k), (a or {}).get(k)
        fmt = lambda v: "-" if v is None else f"{v:.3f}"
        delta = "" if bv is None or av is None else f" ({av - bv:+.3f})"
        cells.append(f"{fmt(bv)} → {fmt(av)}{delta}")
    return f"| {name} | " + " | ".join(cells) + " |"


keys = ["mrr@10", "recall@1", "recall@10"]
print("| set | MRR@10 | recall@1 | recall@10 |")
print("|---|---|---|---|")
for mode in ("lexical", "hybrid"):
    b = load(os.path.join(out, f"{before}-commits_dev-{mode}.json"))
    a = load(os.path.join(out, f"{after}-commits_dev-{mode}.json"))
    print(row(f"commits_dev, {mode} (248)", b and b["overall"], a and a["overall"], keys))
for mode in ("lexical", "hybrid"):
    b = load(os.path.join(out, f"{before}-symbols_dev-{mode}.json"))
    a = load(os.path.join(out, f"{after}-symbols_dev-{mode}.json"))
    print(row(f"symbols_dev, {mode}: symbol hit@1 / file MRR@10",
              b and b["overall"], a and a["overall"], ["symbol_hit@1", "mrr@10"]) + " |")
bo, bper, bfail, n = swe(before)
ao, aper, afail, _ = swe(after)
print(row(f"SWE-bench Lite fetchable, lexical ({n})", bo, ao, keys))
for slug in bper:
    print(row(f"  {slug} ({bper[slug][0]})", bper[slug][1], aper[slug][1], keys))
print()
print(f"failed before: {', '.join(bfail) or 'none'}; after: {', '.join(afail) or 'none'}")
