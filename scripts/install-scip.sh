#!/usr/bin/env bash
# Install scip-python (Sourcegraph's SCIP indexer for Python, built on
# pyright) from npm, for the tests that read a SCIP index built in the
# test (`ken index --scip`). Nothing system-wide: a folder of its own.
#
#   scripts/install-scip.sh [DIR]    (DIR defaults to $HOME/.cache/ken-scip)
#
# Idempotent: a folder that already has the pinned version is left alone.
# Prints the scip-python executable on its last line (tests read
# $KEN_TEST_SCIP_PYTHON).
set -euo pipefail

DIR="${1:-$HOME/.cache/ken-scip}"
VERSION="0.6.6"
BIN="$DIR/node_modules/.bin/scip-python"

command -v npm >/dev/null || { echo "npm is required to install scip-python (apt-get install nodejs npm)" >&2; exit 1; }
installed() {
    [ -x "$BIN" ] && node -e "process.exit(require('$DIR/node_modules/@sourcegraph/scip-python/package.json').version === '$VERSION' ? 0 : 1)" 2>/dev/null
}
if installed; then
    echo "scip-python $VERSION already installed in $DIR" >&2
else
    mkdir -p "$DIR"
    npm install --silent --no-audit --no-fund --prefix "$DIR" "@sourcegraph/scip-python@$VERSION" >&2
    echo "installed scip-python $VERSION into $DIR" >&2
fi
echo "$BIN"
