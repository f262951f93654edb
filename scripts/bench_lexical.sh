#!/usr/bin/env bash
# The lexical stage of `ken index` (read, parse, chunk, both tantivy
# indexes, SQLite) of one folder outside git, so that no history or blame
# runs, for two builds alternating on the same machine.
# Usage: scripts/bench_lexical.sh BEFORE_BIN AFTER_BIN FOLDER [RUNS]
# e.g.   git -C /work/.mirror/sympy+sympy/repo archive HEAD | tar -x -C /tmp/sy-src
#        scripts/bench_lexical.sh /tmp/ken-before /tmp/ken-after /tmp/sy-src 4
# Prints per run: build, index seconds, graph seconds, lexical seconds
# (the rest) and lexical MB/s of indexed source; then the medians.
set -euo pipefail
before=$1 after=$2 src=$3 runs=${4:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq "$runs"); do
  for tag in before after; do
    bin=$before; [ "$tag" = after ] && bin=$after
    rm -rf "$tmp/home"
    "$bin" --home "$tmp/home" --embedder off index "$src" --name bench --json 2>/dev/null |
      python3 -c "
import json, sys
d = json.load(sys.stdin)
g = d['graph']['seconds']; t = d['elapsed_ms'] / 1000
print('$tag', round(t, 2), round(g, 2), round(t - g, 2), round(d['bytes'] / 1e6 / (t - g), 2))"
  done
done | tee "$tmp/runs"
python3 - "$tmp/runs" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for tag in ("before", "after"):
    r = [list(map(float, x[1:])) for x in rows if x[0] == tag]
    med = [statistics.median(c) for c in zip(*r)]
    print(f"median {tag}: index {med[0]:.2f} s, graph {med[1]:.2f} s, lexical {med[2]:.2f} s ({med[3]:.2f} MB/s)")
PY
