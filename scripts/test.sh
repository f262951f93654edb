#!/usr/bin/env bash
# Runs every test of the workspace: formatting, lints, unit and integration tests.
# Installs what the tests need first (today: nothing beyond the Rust toolchain and git).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/ken-target}
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}

command -v git >/dev/null || { echo "git is required by the tests" >&2; exit 1; }

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
