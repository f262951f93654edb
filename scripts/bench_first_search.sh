#!/usr/bin/env bash
# Time to first search: start `ken index` on a repository from scratch and
# poll `ken search` until it returns results, then `ken status` until
# history and blame are complete, then wait for the run to end.
#
#   scripts/bench_first_search.sh MIRROR NAME "QUERY" [KEN]
#
# Prints one line: seconds to the first search results, to complete blame,
# and to the end of the run (wall clock, from the start of `ken index`).
set -euo pipefail
mirror=$1 name=$2 query=$3 ken=${4:-target/release/ken}
home=$(mktemp -d /tmp/ken-first-search.XXXXXX)
trap 'rm -rf "$home"' EXIT
now() { date +%s.%N; }
t0=$(now)
"$ken" --home "$home" --embedder off index "$mirror" --name "$name" --quiet >/dev/null 2>&1 &
pid=$!
first="" blamed=""
while kill -0 "$pid" 2>/dev/null; do
  if [ -z "$first" ]; then
    n=$("$ken" --home "$home" search "$query" --json 2>/dev/null \
      | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["results"]))' 2>/dev/null || echo 0)
    [ "${n:-0}" -gt 0 ] && first=$(echo "$(now) - $t0" | bc)
  elif [ -z "$blamed" ]; then
    done=$("$ken" --home "$home" status "$name" --json 2>/dev/null | python3 -c '
import json,sys
p=json.load(sys.stdin)["repos"][0]["people"]
print(int(p["commits"] > 0 and p["files_blamed"] == p["files"]))' 2>/dev/null || echo 0)
    [ "$done" = 1 ] && blamed=$(echo "$(now) - $t0" | bc)
  fi
  sleep 0.2
done
wait "$pid"
end=$(echo "$(now) - $t0" | bc)
printf '%s first-results %.1f s · blame complete %s · run ended %.1f s\n' \
  "$name" "${first:-nan}" "${blamed:+$(printf '%.1f s' "$blamed")}" "$end"
