#!/usr/bin/env python3
"""A warm `ken serve` over a home of many repositories (issue 32).

Starts `ken serve` (release build, embeddings off) on HOME, asks the first
N commits_dev questions (their first line, as typed into a search box)
through GET /api/v1/search without naming a repository, one after another,
PASSES times; prints p50/p95 per pass, then the server's resident memory
and open files (from /proc) and the number of repositories in the home.

usage: scripts/bench-fleet-serve.py HOME [N=120] [PASSES=2]
       (KEN=path/to/ken, PORT=7979, DUMP=FILE: the first pass's answers as
       JSON lines, to compare two builds' results)
"""
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request

from ken_serve import first_lines, ken_binary, serve

home = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 120
passes = int(sys.argv[3]) if len(sys.argv) > 3 else 2
ken = ken_binary()
port = os.environ.get("PORT", "7979")
questions = first_lines(n)

dump = open(os.environ["DUMP"], "w") if os.environ.get("DUMP") else None

with serve(ken, home, port) as (server, base, token):
    for p in range(1, passes + 1):
        times = []
        for q in questions:
            url = base + "/api/v1/search?" + urllib.parse.urlencode({"q": q, "n": 10, "mode": "lexical"})
            t = time.perf_counter()
            req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
            with urllib.request.urlopen(req, timeout=120) as r:
                body = r.read()
            times.append((time.perf_counter() - t) * 1000)
            if dump and p == 1:
                dump.write(json.dumps({"q": q, "answer": json.loads(body)}) + "\n")
        times.sort()
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        print(f"pass {p}: {len(times)} questions, p50 {statistics.median(times):.0f} ms, p95 {p95:.0f} ms")
    rss = 0
    with open(f"/proc/{server.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) // 1024
    fds = len(os.listdir(f"/proc/{server.pid}/fd"))
    # the home's repositories: its folders, or the database's (KEN_STORE)
    listed = subprocess.run([ken, "--home", home, "--json", "status"], capture_output=True, check=True)
    repos = len(json.loads(listed.stdout)["repos"])
    print(f"repositories {repos}, RSS {rss} MB, open files {fds}")
