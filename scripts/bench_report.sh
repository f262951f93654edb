#!/bin/bash
# Benchmark `ken report` against a plain `git log --numstat` of the same period.
#
#   scripts/bench_report.sh [NAME=OWNER+REPO ...]
#
# Default repositories: flask=pallets+flask ripgrep=BurntSushi+ripgrep
# sympy=sympy+sympy, each at its mirror's HEAD (/work/.mirror/OWNER+REPO/repo).
#
# For each repository: index it from scratch (`--embedder off`; history and
# blame are part of indexing) under /usr/bin/time, check the index is
# complete (a report whose notes say there is no blame/history yet makes the
# script re-run `ken index`, up to 5 times), then for each period in
# PERIODS (ages count back from the indexed commit) run RUNS times, in turn:
#   ken --home H report NAME --since S --format json --out TMP
#   git -C MIRROR log --numstat --since=@<the report's since_ts> SHA >/dev/null
# (`all`: no --since), recording wall time, peak RSS, the period's commits
# (summary.commits) and secret findings. A run past TIMEOUT seconds is
# stopped and recorded as such.
#
# Results: a Markdown section written between markers in OUT (the rest of
# OUT is kept), with the table and the raw numbers (one TSV row per run, also
# left in RAW). FROM_RAW=FILE skips the measurements and only writes the
# section from a RAW file of an earlier run.
#
# Environment (defaults):
#   KEN=target/release/ken      the binary (copy it elsewhere first if a build may replace it)
#   KEN_HOME_BENCH=/tmp/ken-bench-report   the home (wiped unless KEEP_HOME=1)
#   MIRRORS=/work/.mirror  PERIODS="1m 1y all"  RUNS=3  TIMEOUT=600
#   OUT=benches/results/report.md  RAW=/tmp/ken-bench-report.tsv
set -euo pipefail

cd "$(dirname "$0")/.."
KEN=${KEN:-target/release/ken}
KEN_HOME_BENCH=${KEN_HOME_BENCH:-/tmp/ken-bench-report}
MIRRORS=${MIRRORS:-/work/.mirror}
PERIODS=${PERIODS:-1m 1y all}
RUNS=${RUNS:-3}
TIMEOUT=${TIMEOUT:-600}
OUT=${OUT:-benches/results/report.md}
RAW=${RAW:-/tmp/ken-bench-report.tsv}
H=$KEN_HOME_BENCH
REPOS=("$@")
[ ${#REPOS[@]} -gt 0 ] || REPOS=(flask=pallets+flask ripgrep=BurntSushi+ripgrep sympy=sympy+sympy)

[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 1; }
if [ -n "${FROM_RAW:-}" ]; then RAW=$FROM_RAW; else
[ "${KEEP_HOME:-0}" = 1 ] || rm -rf "$H"
mkdir -p "$H" "$(dirname "$OUT")" "$(dirname "$RAW")"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

now() { date +%s.%N; }
# timed LOG CMD...: run CMD under `timeout` and /usr/bin/time; print "wall_s rss_kib rc"
timed() {
  local log=$1; shift
  local t0 t1 rc=0
  t0=$(now)
  # time outside timeout: a stopped run is killed, not orphaned, and its RSS still counted
  /usr/bin/time -f '%M' -o "$log.time" timeout -k 10 "$TIMEOUT" "$@" >"$log.out" 2>"$log.err" || rc=$?
  t1=$(now)
  local rss
  rss=$(tail -n 1 "$log.time" 2>/dev/null | grep -E '^[0-9]+$' || echo 0)
  printf '%.3f %s %s\n' "$(echo "$t1 - $t0" | bc -l)" "$rss" "$rc"
}
# jq-less JSON field access
jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$@"; }

{
  echo "# ken report benchmark: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# binary $KEN sha256 $(sha256sum "$KEN" | cut -c1-12) $($KEN --version); workspace $(git log -1 --format=%h)$(git diff --quiet HEAD -- crates || echo '+dirty')"
  echo "# machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/Mem:/{print $2}') GiB; load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  printf 'repo\tkind\tperiod\trun\twall_s\trss_kib\trc\tcommits\tsecrets\tsince_ts\tnotes\n'
} >"$RAW"

for spec in "${REPOS[@]}"; do
  name=${spec%%=*}; mirror=$MIRRORS/${spec#*=}/repo
  sha=$(git -C "$mirror" rev-parse HEAD)
  echo "== $name at ${sha:0:10}" >&2
  read -r wall rss rc < <(timed "$TMP/idx-$name" "$KEN" --home "$H" --embedder off -q index "$mirror" --name "$name")
  [ "$rc" = 0 ] || { echo "index of $name failed (rc $rc):" >&2; tail "$TMP/idx-$name.err" >&2; exit 1; }
  printf '%s\tindex\t-\t1\t%s\t%s\t%s\t\t\t\t%s\n' "$name" "$wall" "$rss" "$rc" "$(git -C "$mirror" rev-list --count "$sha") commits in history" >>"$RAW"
  echo "   index ${wall}s, ${rss} KiB" >&2
  "$KEN" --home "$H" status "$name" --json >"$TMP/status-$name.json"
  # complete? (history and blame): a report must not say they are missing
  for attempt in 1 2 3 4 5; do
    "$KEN" --home "$H" report "$name" --since all --format json --out "$TMP/check-$name.json" -q
    notes=$(jget "$TMP/check-$name.json" '"; ".join(map(str, d["notes"]))')
    if echo "$notes" | grep -qiE 'no (blame|history)|not yet'; then
      echo "   notes: $notes; re-indexing (attempt $attempt)" >&2
      printf '%s\tindex-again\t-\t%s\t\t\t\t\t\t\t%s\n' "$name" "$attempt" "$notes" >>"$RAW"
      sleep 5; "$KEN" --home "$H" --embedder off -q index "$mirror" --name "$name"
    else
      break
    fi
  done
  for period in $PERIODS; do
    since_ts=""
    for run in $(seq 1 "$RUNS"); do
      rm -f "$TMP/r.json"
      read -r wall rss rc < <(timed "$TMP/rep" "$KEN" --home "$H" report "$name" --since "$period" --format json --out "$TMP/r.json" -q)
      commits=""; secrets=""; notes=""
      if [ "$rc" = 0 ]; then
        commits=$(jget "$TMP/r.json" 'd["summary"]["commits"]')
        secrets=$(jget "$TMP/r.json" 'len(d["secrets"] or [])')
        notes=$(jget "$TMP/r.json" '"; ".join(map(str, d["notes"]))')
        [ "$period" = all ] || since_ts=$(jget "$TMP/r.json" 'd["period"]["since_ts"]')
      elif [ "$rc" = 124 ]; then notes="stopped after ${TIMEOUT}s"
      else notes="failed: $(tail -n 1 "$TMP/rep.err")"
      fi
      printf '%s\treport\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$period" "$run" "$wall" "$rss" "$rc" "$commits" "$secrets" "$since_ts" "$notes" >>"$RAW"
      echo "   report --since $period run $run: ${wall}s ${rss} KiB rc $rc commits $commits secrets $secrets" >&2
      if [ "$period" != all ] && [ -z "$since_ts" ]; then
        echo "   (no since_ts from the report: git baseline skipped)" >&2; continue
      fi
      since_arg=(); [ "$period" = all ] || since_arg=("--since=@$since_ts")
      read -r wall rss rc < <(timed "$TMP/git" git -C "$mirror" log --numstat "${since_arg[@]}" "$sha")
      gcommits=$(git -C "$mirror" rev-list --count "${since_arg[@]}" "$sha")
      printf '%s\tgit\t%s\t%s\t%s\t%s\t%s\t%s\t\t%s\t%s\n' "$name" "$period" "$run" "$wall" "$rss" "$rc" "$gcommits" "$since_ts" "git log --numstat ${since_arg[*]:-} $sha" >>"$RAW"
      echo "   git log --numstat run $run: ${wall}s ${rss} KiB ($gcommits commits)" >&2
    done
  done
done
echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$RAW"
fi

# the Markdown section, between markers in OUT
python3 - "$RAW" "$OUT" "$KEN" "$H" "$PERIODS" "$RUNS" <<'EOF'
import csv, statistics, sys
raw, out, ken, home, periods, runs = sys.argv[1:7]
head = [l[2:].rstrip() for l in open(raw) if l.startswith("# ")]
rows = list(csv.DictReader((l for l in open(raw) if not l.startswith("#")), delimiter="\t"))
LABEL = {"1m": "1 month", "1y": "1 year", "all": "all"}
def fl(r): return float(r["wall_s"])
def med(xs): return statistics.median(xs) if xs else None
def s(x): return "—" if x is None else (f"{x:.2f}" if x < 100 else f"{x:.0f}")
md = ["<!-- bench_report.sh: begin (generated; re-run the script to replace) -->", "",
      "```sh", " ".join(f"{k}={v}" for k, v in
      [("KEN", ken), ("KEN_HOME_BENCH", home), ("PERIODS", f'"{periods}"'), ("RUNS", runs)]) + " scripts/bench_report.sh", "```", ""]
md += [f"- {h}" for h in head] + [""]
md += ["Per run, in turn: `ken --home H report NAME --since S --format json --out TMP -q` and "
       "`git -C MIRROR log --numstat --since=@<since_ts of the report> SHA >/dev/null` (no `--since` for `all`). "
       "Times are wall seconds (min / median of the runs), RSS is the largest peak of the runs.", ""]
md += ["| repo | period | commits in period | report s (min / median) | git log --numstat s (min / median) | report/git (medians) | report peak RSS MiB | secrets | notes |",
       "|---|---|---|---|---|---|---|---|---|"]
names = list(dict.fromkeys(r["repo"] for r in rows))
for n in names:
    for p in periods.split():
        rep = [r for r in rows if r["repo"] == n and r["kind"] == "report" and r["period"] == p]
        git = [r for r in rows if r["repo"] == n and r["kind"] == "git" and r["period"] == p]
        ok = [r for r in rep if r["rc"] == "0"]
        gok = [r for r in git if r["rc"] == "0"]
        notes = sorted({r["notes"] for r in rep if r["notes"]})
        bad = len(rep) - len(ok)
        if bad: notes.insert(0, f"{bad} of {len(rep)} runs did not finish")
        if ok and git and git[0]["commits"] != ok[0]["commits"]:
            notes.append(f"git log counts {git[0]['commits']} commits")
        rm, gm = med([fl(r) for r in ok]), med([fl(r) for r in gok])
        ratio = f"{rm / gm:.1f}×" if rm and gm else "—"
        rt = f"{s(min(fl(r) for r in ok))} / {s(rm)}" if ok else "—"
        gt = f"{s(min(fl(r) for r in gok))} / {s(gm)}" if gok else "—"
        rss = f"{max(int(r['rss_kib']) for r in ok) / 1024:.0f}" if ok else "—"
        commits = ok[0]["commits"] if ok else (git[0]["commits"] + " (git)" if git else "—")
        secrets = ok[0]["secrets"] if ok else "—"
        md.append(f"| {n} | {LABEL.get(p, p)} | {commits} | {rt} | {gt} | {ratio} | {rss} | {secrets} | {'; '.join(notes)} |")
md += ["", "Index from scratch (`ken --home H --embedder off index MIRROR --name NAME`, history and blame included), one run:", "",
       "| repo | index s | peak RSS MiB | history | re-index needed |", "|---|---|---|---|---|"]
for n in names:
    for r in rows:
        if r["repo"] == n and r["kind"] == "index":
            again = sum(1 for x in rows if x["repo"] == n and x["kind"] == "index-again")
            md.append(f"| {n} | {s(fl(r))} | {int(r['rss_kib']) / 1024:.0f} | {r['notes']} | {again or 'no'} |")
md += ["", "<details><summary>Raw numbers (one row per run; wall s, peak RSS KiB, exit status)</summary>", "", "```tsv"]
md += [l.rstrip("\n") for l in open(raw)]
md += ["```", "", "</details>", "", "<!-- bench_report.sh: end -->"]
block = "\n".join(md) + "\n"
try:
    text = open(out).read()
except FileNotFoundError:
    text = ""
b, e = "<!-- bench_report.sh: begin", "<!-- bench_report.sh: end -->"
if b in text and e in text:
    i, j = text.index(b), text.index(e) + len(e)
    text = text[:i] + block.rstrip("\n") + text[j:]
else:
    text = (text or "# `ken report` benchmarks\n\n## Timings\n\n") + block
open(out, "w").write(text)
print(block)
EOF
