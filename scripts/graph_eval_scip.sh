#!/usr/bin/env bash
# The call-graph evaluation of ../shared/eval/graph again, with the SCIP
# index it built read into Kenning's graph (`ken index --scip`): run
# run.sh first (it builds $EVAL/scip/NAME.scip, the checkout and the
# spans), then this; results go to $EVAL/results/NAME_scip and NAME_scip_all
# beside run.sh's NAME and NAME_all (resolution by name alone).
# usage: MIRROR=... KEN_BIN=... EVAL=... bash scripts/graph_eval_scip.sh flask hono
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
GRAPH="${GRAPH_EVAL:-$HERE/../../shared/eval/graph}"
EVAL="${EVAL:-${TMPDIR:-/tmp}/graph-eval}"
KEN_BIN="${KEN_BIN:?set KEN_BIN to the ken binary}"
N="${N:-100}"; IMPACT="${IMPACT:-30}"; SEED="${SEED:-7}"
home="$EVAL/home-scip"
export KEN_BIN KEN_EVAL_HOME="$home" KEN_EMBEDDER=off
declare -A REPO_DIR=([flask]=pallets+flask [express]=expressjs+express [hono]=honojs+hono)
declare -A LANG_=([flask]=python [express]=js [hono]=js)
for name in "${@:-flask hono}"; do
  git_dir="${MIRROR:?set MIRROR}/${REPO_DIR[$name]}/repo"
  sha=$(git --git-dir="$git_dir" rev-parse HEAD)
  scip="$EVAL/scip/$name.scip"
  [ -f "$scip" ] || { echo "no $scip: run $GRAPH/run.sh $name first" >&2; exit 1; }
  t0=$(date +%s.%N)
  "$KEN_BIN" --home "$home" index "$git_dir" --rev "$sha" --name "$name" --no-embed --threads 1 --scip "$scip"
  echo "$name: index with SCIP $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s" >&2
  extra=()
  [ "${LANG_[$name]}" = js ] && extra=(--spans "$EVAL/scip/${name}_spans.json")
  rm -rf "$EVAL/results/${name}_scip" "$EVAL/results/${name}_scip_all"
  python3 "$GRAPH/graph_eval.py" --name "$name" --lang "${LANG_[$name]}" --src "$EVAL/src/$name" \
    --scip-json "$EVAL/scip/$name.json" "${extra[@]}" --out "$EVAL/results/${name}_scip" \
    --n "$N" --seed "$SEED" --impact "$IMPACT" --depth 3
  python3 "$GRAPH/graph_eval.py" --name "$name" --lang "${LANG_[$name]}" --src "$EVAL/src/$name" \
    --scip-json "$EVAL/scip/$name.json" "${extra[@]}" --out "$EVAL/results/${name}_scip_all" \
    --n 1000000 --seed "$SEED" > /dev/null
done
