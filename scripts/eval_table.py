#!/usr/bin/env python3
"""The retrieval table of BENCHMARKS.md: `ken eval` on commits_dev and
symbols_dev for every signal on its own and fused, plus the in-run whole-file
BM25 baseline, per dev repository and overall.

    scripts/eval_table.py [--ken BIN] [--home DIR] [--mirror DIR] [--static]

--static adds dense-only with the distilled static table (run
`ken --home DIR model distill` first). Extra `--param KEY=V` are passed on.
"""
import argparse, json, os, subprocess, sys

REPOS = ["pallets/flask", "BurntSushi/ripgrep", "spf13/cobra", "expressjs/express"]


def run(ken, home, mirror, set_file, mode, embedder, params):
    cmd = [ken, "--home", home, "--embedder", embedder, "eval", set_file, "--mode", mode, "--json", "-q"]
    for r in REPOS:
        cmd += ["--repo", f"{r}={os.path.join(mirror, r.replace('/', '+'), 'repo')}"]
    for p in params:
        cmd += ["--param", p]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--ken", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/ken-target")), "debug/ken"))
    ap.add_argument("--home", default="/tmp/ken-eval-home")
    ap.add_argument("--mirror", default="/work/.mirror")
    ap.add_argument("--eval-dir", default=os.path.join(here, "../../shared/eval"))
    ap.add_argument("--static", action="store_true")
    ap.add_argument("--param", action="append", default=[])
    a = ap.parse_args()
    rows = [("whole-file BM25 baseline", "baseline", "off"), ("lexical", "lexical", "off"),
            ("dense only (full model)", "semantic", "local")]
    if a.static:
        rows.append(("dense only (static)", "semantic", "static"))
    rows.append(("hybrid (full model)", "hybrid", "local"))
    if a.static:
        rows.append(("hybrid (static)", "hybrid", "static"))
    res = {}
    for label, mode, emb in rows:
        for s in ["commits_dev", "symbols_dev"]:
            res[(label, s)] = run(a.ken, a.home, a.mirror, os.path.join(a.eval_dir, s + ".jsonl"), mode, emb, a.param)
            print(f"done {label} {s}", file=sys.stderr)
    cols = REPOS + ["overall"]
    def get(d, r, k):
        v = d["overall"] if r == "overall" else d["repos"].get(r, {})
        return v.get(k)
    print("File MRR@10 / recall@10 on commits_dev:\n")
    print("| signal | " + " | ".join(cols) + " | p50 / p95 ms |")
    print("|---|" + "---|" * (len(cols) + 1))
    for label, _, _ in rows:
        d = res[(label, "commits_dev")]
        cells = [f"{get(d, r, 'mrr@10'):.3f} / {get(d, r, 'recall@10'):.3f}" for r in cols]
        print(f"| {label} | " + " | ".join(cells) + f" | {d['overall']['p50_ms']:.1f} / {d['overall']['p95_ms']:.1f} |")
    print("\nSymbol hit@1 on symbols_dev (and file MRR@10):\n")
    print("| signal | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    for label, _, _ in rows:
        d = res[(label, "symbols_dev")]
        cells = []
        for r in cols:
            h = get(d, r, "symbol_hit@1")
            cells.append(("-" if h is None else f"{h:.3f}") + f" ({get(d, r, 'mrr@10'):.3f})")
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
