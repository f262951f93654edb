#!/usr/bin/env python3
"""Time to first search: start `ken index REPO` (embedding on) in a fresh
home, poll `ken search` every 0.25 s until it answers with results, then
stop the run with SIGINT (BENCHMARKS.md §31).
Usage: scripts/bench-first-search.py REPO BIN... (alternating runs; RUNS=2)."""
import json, os, signal, subprocess, sys, tempfile, time
repo, bins = sys.argv[1], sys.argv[2:]
runs = int(os.environ.get("RUNS", "2"))
env = dict(os.environ, KEN_EMBEDDER="local")
rows = []
for r in range(runs):
    for b in bins:
        home = tempfile.mkdtemp(prefix="ken-fs-")
        t0 = time.monotonic()
        p = subprocess.Popen([b, "--home", home, "index", repo, "--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        first = None
        while p.poll() is None:
            time.sleep(0.25)
            s = subprocess.run([b, "--home", home, "search", "--json", "how are large files skipped"], capture_output=True, env=env)
            if s.returncode == 0:
                try:
                    v = json.loads(s.stdout)
                    if v.get("results") and "did not finish" not in json.dumps(v.get("notes", [])):
                        first = time.monotonic() - t0
                        break
                except ValueError:
                    pass
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate()
        try:
            rep = json.loads(out)
        except ValueError:
            rep = {}
        rows.append((os.path.basename(b), r, round(first, 1) if first else None, rep.get("searchable_ms")))
        print(rows[-1], flush=True)
        subprocess.run(["rm", "-rf", home])
