#!/usr/bin/env bash
# Runs `ken eval` on the dev sets of ../shared/eval against the four dev
# repositories (fetched as bare git dirs; see ../shared/eval/README.md).
# Usage: scripts/eval-dev.sh [MIRROR_DIR] [extra ken eval flags...]
# MIRROR_DIR holds owner+name/repo git dirs (default /work/.mirror).
set -euo pipefail
cd "$(dirname "$0")/.."
mirror=${1:-/work/.mirror}; shift || true
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/ken-target}
cargo build -q -p ken
ken="$CARGO_TARGET_DIR/debug/ken"
home=${KEN_EVAL_HOME:-/tmp/ken-eval-home}
repos=()
for r in pallets/flask BurntSushi/ripgrep spf13/cobra expressjs/express; do
  repos+=(--repo "$r=$mirror/${r/\//+}/repo")
done
for set in commits_dev symbols_dev; do
  echo "== $set" >&2
  "$ken" --home "$home" eval "../shared/eval/$set.jsonl" "${repos[@]}" "$@"
done
