#!/bin/bash
# Evaluate one `ken` binary on the dev sets (lexical and hybrid) and on the
# fetchable SWE-bench Lite instances (lexical, one run per repository so a
# binary that aborts on one repository still reports the others), writing
# JSON reports to OUT/TAG-*.json; scripts/eval_merge.py turns two tags into
# one before/after table.
#
#   scripts/eval_before_after.sh BIN TAG OUT [dev|swe|all]
#
# STORE=postgres://… puts the indexes in that PostgreSQL database instead
# of the home (`--store`; the dev sets and SWE-bench each get a database
# of their own: STORE with _dev / _swe appended, created when missing);
# SWE_REPOS="owner/name …" limits SWE-bench to those repositories.
#
# Mirrors are expected at /work/.mirror/OWNER+NAME/repo (the `fetch` tool's
# layout; override with MIRRORS=dir); the model at
# ~/.cache/ken-models/all-MiniLM-L6-v2 (scripts/install-model.sh).
set -u
BIN=$1; TAG=$2; OUT=$3; WHAT=${4:-all}
EVAL=${EVAL:-$(dirname "$0")/../../shared/eval}
MIRRORS=${MIRRORS:-/work/.mirror}
MODEL=${MODEL:-$HOME/.cache/ken-models/all-MiniLM-L6-v2}
mkdir -p "$OUT"
log() { echo "$*" >> "$OUT/$TAG.log"; }
# the --store arguments of one phase (a database per phase, made on demand)
store() {
  [ -z "${STORE:-}" ] && return
  local url="${STORE}_$1" db
  db=${url##*/}
  "${PSQL:-psql}" "${STORE%/*}/postgres" -qtc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 \
    || "${PSQL:-psql}" "${STORE%/*}/postgres" -qc "CREATE DATABASE $db" >/dev/null
  echo "--store $url"
}

if [ "$WHAT" != swe ]; then
  REPOS=()
  for r in pallets/flask BurntSushi/ripgrep spf13/cobra expressjs/express; do
    REPOS+=(--repo "$r=$MIRRORS/${r/\//+}/repo")
  done
  H=$OUT/home-$TAG-dev
  ST=$(store dev)
  for mode in lexical hybrid; do
    emb=off; [ $mode = hybrid ] && emb=local
    for set in commits_dev symbols_dev; do
      start=$(date +%s)
      KEN_EMBED_MODEL_DIR=$MODEL "$BIN" --home "$H" $ST --embedder $emb eval "$EVAL/$set.jsonl" "${REPOS[@]}" \
        --mode $mode --json > "$OUT/$TAG-$set-$mode.json" 2> "$OUT/$TAG-$set-$mode.err"
      log "$set $mode rc=$? $(( $(date +%s) - start ))s"
    done
  done
fi

if [ "$WHAT" != dev ]; then
  ST=$(store swe)
  for r in ${SWE_REPOS:-pallets/flask psf/requests pylint-dev/pylint mwaskom/seaborn pydata/xarray \
           astropy/astropy sphinx-doc/sphinx pytest-dev/pytest sympy/sympy}; do
    slug=${r/\//+}
    grep "\"repo\": \"$r\"" "$EVAL/swebench_lite.jsonl" > "$OUT/swe-$slug.jsonl"
    start=$(date +%s)
    "$BIN" --home "$OUT/home-$TAG-swe" $ST --embedder off eval "$OUT/swe-$slug.jsonl" \
      --repo "$r=$MIRRORS/$slug/repo" --mode lexical --json \
      > "$OUT/$TAG-swe-$slug.json" 2> "$OUT/$TAG-swe-$slug.err"
    log "swe $r rc=$? $(( $(date +%s) - start ))s"
  done
fi
