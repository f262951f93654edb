#!/usr/bin/env bash
# Questions over many repositories (issue 32): the commits_dev and
# symbols_dev questions asked of one home without naming their repository
# (`ken eval --across-repos`), routed (the default) against the path before
# routing (every repository searched, hits sorted by their own scores;
# `--param route=0`), in the same run, on the same home.
#
# The home holds the four dev repositories at their eval commits, three
# distractors at their heads (requests, pytest, seaborn), and VARIANTS
# copies of each distractor at older commits, spread evenly over its
# first-parent history, each indexed under its own name: a fleet where many
# repositories share most of their vocabulary, as forks and old branches do.
# Variants are made only of repositories without questions, so "the right
# repository" stays well defined.
#
# usage: scripts/bench-fleet.sh [VARIANTS]   (default 30; ROUTES="1" for the
# routed runs only; needs the mirrors:
# the library's `fetch` of each repository, see ../shared/eval/README.md)
set -euo pipefail
VARIANTS=${1:-30}
KEN=${KEN:-${CARGO_TARGET_DIR:-$HOME/.cache/ken-target}/release/ken}
M=${MIRRORS:-/work/.mirror}
HOME_DIR=${FLEET_HOME:-/tmp/ken-fleet-bench}
EVAL=${EVAL_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/shared/eval}
OUT=${OUT:-/tmp/ken-fleet-bench-out}
mkdir -p "$OUT"
k() { "$KEN" --home "$HOME_DIR" --embedder off "$@"; }

for spec in psf/requests pytest-dev/pytest mwaskom/seaborn; do
  dir="$M/${spec/\//+}/repo"
  [ -d "$dir" ] || { echo "missing mirror $dir (fetch github:$spec)" >&2; exit 1; }
  total=$(git --git-dir "$dir" rev-list --first-parent --count HEAD)
  step=$(( total / (VARIANTS + 1) ))
  for i in $(seq 1 "$VARIANTS"); do
    sha=$(git --git-dir "$dir" rev-list --first-parent HEAD | sed -n "$(( i * step ))p")
    name="variants/${spec#*/}-$i"
    k index "$dir" --rev "$sha" --name "$name" --json >/dev/null 2>&1 || echo "index $name failed" >&2
  done
done
repos=()
for spec in pallets/flask BurntSushi/ripgrep spf13/cobra expressjs/express psf/requests pytest-dev/pytest mwaskom/seaborn; do
  repos+=(--repo "$spec=$M/${spec/\//+}/repo")
done
n=$(ls "$HOME_DIR/repos" | wc -l)
echo "repositories in the home: $n"
for route in ${ROUTES:-1 0}; do
  for set in commits_dev symbols_dev; do
    k eval "$EVAL/$set.jsonl" --mode lexical --across-repos "${repos[@]}" --param route=$route \
      >"$OUT/$set.route$route.json" 2>"$OUT/$set.route$route.log"
    python3 - "$OUT/$set.route$route.json" "$set" "$route" "$n" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["overall"]
print(f"| {sys.argv[2]} | {sys.argv[4]} | {'routed' if sys.argv[3] == '1' else 'every repository'} | "
      f"{r['mrr@10']:.3f} | {r['recall@1']:.3f} | {r.get('right_repo@1', 0):.3f} | "
      f"{r.get('symbol_hit@1', 0) or 0:.3f} | {r['p50_ms']:.0f} | {r['p95_ms']:.0f} |")
PY
  done
done
