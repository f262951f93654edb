#!/usr/bin/env bash
# Questions over a fleet of real, different repositories (issue 32): each
# evaluation set asked of one home of thirteen repositories without naming
# the question's repository (`ken eval --across-repos`), with the
# per-repository figure of the same run beside it (`named`).
#
# The home: the four commits_dev repositories (flask, ripgrep, cobra,
# express), the nine SWE-bench Lite repositories whose mirrors can be had
# (sympy, sphinx, astropy, pylint, xarray, pytest, requests, seaborn,
# flask) and hono. Every repository is first indexed at its head; each set's
# run moves its question repositories to the commits they name (SWE-bench
# Lite: one per issue, oldest first), so every question has at least nine
# other repositories as distractors. Each set runs on its own copy of the
# home. Lexical mode (the embedding of thirteen repositories takes hours on
# two cores).
#
# usage: scripts/bench-across.sh [SET...]   (commits symbols docs swe;
# default: all; needs the mirrors: the library's `fetch` of each
# repository, see ../shared/eval/README.md; KEN, MIRRORS, OUT, PARAMS="k=v ...")
set -euo pipefail
KEN=${KEN:-${CARGO_TARGET_DIR:-$HOME/.cache/ken-target}/release/ken}
M=${MIRRORS:-/work/.mirror}
EVAL=${EVAL_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/shared/eval}
OUT=${OUT:-/tmp/ken-across-bench}
SETS=("$@"); [ ${#SETS[@]} -gt 0 ] || SETS=(commits symbols docs swe)
REPOS=(pallets/flask BurntSushi/ripgrep spf13/cobra expressjs/express psf/requests
       mwaskom/seaborn honojs/hono pytest-dev/pytest pydata/xarray pylint-dev/pylint
       sphinx-doc/sphinx astropy/astropy sympy/sympy)
mkdir -p "$OUT"
args=()
for spec in "${REPOS[@]}"; do
  dir="$M/${spec/\//+}/repo"
  [ -d "$dir" ] || { echo "missing mirror $dir (fetch github:$spec)" >&2; exit 1; }
  args+=(--repo "$spec=$dir")
done
params=(); for p in ${PARAMS:-}; do params+=(--param "$p"); done

# every repository at its head, once
base="$OUT/home-heads"
if [ ! -d "$base" ]; then
  for spec in "${REPOS[@]}"; do
    "$KEN" --home "$base" --embedder off index "$M/${spec/\//+}/repo" --name "$spec" --no-embed -q
  done
fi

for set in "${SETS[@]}"; do
  case $set in
    commits) file="$EVAL/commits_dev.jsonl" ;;
    symbols) file="$EVAL/symbols_dev.jsonl" ;;
    docs) file="$EVAL/docs_dev.jsonl" ;;
    swe) file="$OUT/swebench_fetchable.jsonl"
         grep -E '"repo": ?"(sympy/sympy|pytest-dev/pytest|sphinx-doc/sphinx|astropy/astropy|psf/requests|pylint-dev/pylint|pydata/xarray|mwaskom/seaborn|pallets/flask)"' \
           "$EVAL/swebench_lite.jsonl" > "$file" ;;
    *) echo "unknown set $set (commits symbols docs swe)" >&2; exit 2 ;;
  esac
  home="$OUT/home-$set"
  rm -rf "$home"; cp -a "$base" "$home"
  "$KEN" --home "$home" --embedder off eval "$file" --mode lexical --across-repos "${args[@]}" \
    "${params[@]}" --per-query "$OUT/$set.per-query.jsonl" > "$OUT/$set.json" 2> "$OUT/$set.log"
  python3 - "$OUT/$set.json" "$set" <<'PY'
import json, sys
v = json.load(open(sys.argv[1])); o = v["overall"]; n = v["named"]
print(f"{sys.argv[2]:8s} questions {o['queries']:3d}  across MRR@10 {o['mrr@10']:.3f}  named {n['overall']['mrr@10']:.3f}"
      f"  ratio {n['mrr@10_ratio']:.3f}  right_repo@1 {o['right_repo@1']:.3f}  Acc@1 {o['recall@1']:.3f} / named {n['overall']['recall@1']:.3f}"
      f"  Acc@5 {o['acc@5']:.3f} / {n['overall']['acc@5']:.3f}  p50/p95 {o['p50_ms']:.0f}/{o['p95_ms']:.0f} ms")
PY
done
