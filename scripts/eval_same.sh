#!/bin/bash
# Run one `ken` binary over the four evaluation sets this machine has the
# repositories of, lexical, writing JSON reports and per-query files to
# OUT; scripts/eval_cmp.py then compares two OUT folders query by query.
# For a refactoring that must not change answers: run the build before and
# the build after, each in a home of its own started alike (both fresh, or
# both copied from one), and expect no query to differ.
#
#   scripts/eval_same.sh BIN HOME OUT
#
# Sets: commits_dev (at each question's parent), symbols_dev, docs_dev,
# and the SWE-bench Lite questions of the mirrored repositories (flask,
# pytest, seaborn, requests; at each parent). Mirrors at
# $MIRRORS/OWNER+NAME/repo (default /work/.mirror, the `fetch` tool's).
set -eu
BIN=$1; H=$2; O=$3
M=${MIRRORS:-/work/.mirror}
E=${EVAL:-$(dirname "$0")/../../shared/eval}
mkdir -p "$O"
repo() { echo "--repo $1=$M/${1/\//+}/repo"; }
R4="$(repo pallets/flask) $(repo BurntSushi/ripgrep) $(repo spf13/cobra) $(repo expressjs/express)"
run() { # NAME SET ARGS...
  local name=$1 set=$2; shift 2
  "$BIN" --home "$H" --embedder off eval "$set" "$@" --mode lexical \
    --per-query "$O/$name.pq" --json > "$O/$name.json" 2> "$O/$name.err"
}
# shellcheck disable=SC2086
run commits "$E/commits_dev.jsonl" $R4 --at-parent
# shellcheck disable=SC2086
run symbols "$E/symbols_dev.jsonl" $R4
# shellcheck disable=SC2086
run docs "$E/docs_dev.jsonl" $(repo pallets/flask) $(repo pytest-dev/pytest)
grep -E '"(pallets/flask|pytest-dev/pytest|mwaskom/seaborn|psf/requests)"' \
  "$E/swebench_lite.jsonl" > "$O/swe4.jsonl"
# shellcheck disable=SC2086
run swe "$O/swe4.jsonl" $(repo pallets/flask) $(repo pytest-dev/pytest) \
  $(repo mwaskom/seaborn) $(repo psf/requests) --at-parent
echo "reports in $O"
