#!/usr/bin/env bash
# Install the outside tools the test suite drives against Kenning, in a
# virtualenv of their own (nothing system-wide):
#   - the official MCP Python SDK (PyPI `mcp`), a real MCP client;
#   - Schemathesis, property-based tests from the OpenAPI document;
#   - NumPy, the reference forward pass of a tiny cross-encoder
#     (scripts/tiny_cross_encoder.py).
#
#   scripts/install-test-tools.sh [DIR]    (DIR defaults to $HOME/.cache/ken-py)
#
# Idempotent: a venv that already has the pinned versions is left alone.
# Prints the venv's python on its last line (tests read $KEN_TEST_PYTHON).
set -euo pipefail

DIR="${1:-$HOME/.cache/ken-py}"
MCP="mcp==2.3.0"
SCHEMATHESIS="schemathesis==4.32.5"
NUMPY="numpy==2.4.6"

have() {
    "$DIR/bin/python" - "$@" <<'PY' 2>/dev/null
import importlib.metadata as m, sys
for spec in sys.argv[1:]:
    name, version = spec.split("==")
    if m.version(name) != version:
        sys.exit(1)
PY
}

if [ -x "$DIR/bin/python" ] && have "$MCP" "$SCHEMATHESIS" "$NUMPY" && [ -x "$DIR/bin/st" ]; then
    echo "test tools already installed in $DIR" >&2
else
    python3 -m venv "$DIR"
    "$DIR/bin/python" -m pip install --quiet --disable-pip-version-check "$MCP" "$SCHEMATHESIS" "$NUMPY"
    echo "installed $MCP, $SCHEMATHESIS and $NUMPY into $DIR" >&2
fi
echo "$DIR/bin/python"
