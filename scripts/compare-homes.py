#!/usr/bin/env python3
"""Do two homes answer alike? (issue 32: a collection rebuilt against one
built run by run.)

Starts `ken serve` (embeddings off) on each home in turn, asks the first
line of every commits_dev question without naming a repository (lexical,
10 results), and prints how many ranked (repository, path) lists differ,
and how many differ in their first hit.

usage: scripts/compare-homes.py HOME_A HOME_B   (KEN=path/to/ken, PORT=7990: it and the next)
"""
import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request

ken = os.environ.get(
    "KEN",
    os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/ken-target")), "release/ken"),
)
port = int(os.environ.get("PORT", "7990"))
here = os.path.dirname(os.path.abspath(__file__))
questions = []
with open(os.path.join(here, "../../shared/eval/commits_dev.jsonl")) as f:
    for line in f:
        questions.append(json.loads(line)["query"].strip().splitlines()[0])


def answers(home, port):
    made = subprocess.run(
        [ken, "--home", home, "--json", "token", "create", "--scope", "read", "--repo", "*", "--label", "compare"],
        check=True,
        capture_output=True,
    )
    token = json.loads(made.stdout)["token"]
    server = subprocess.Popen(
        [ken, "--home", home, "--embedder", "off", "serve", "--addr", f"127.0.0.1:{port}", "--no-jobs"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(base + "/healthz", timeout=1)
                break
            except Exception:
                time.sleep(0.5)
        out = []
        for q in questions:
            url = base + "/api/v1/search?" + urllib.parse.urlencode({"q": q, "n": 10, "mode": "lexical"})
            req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
            got = json.load(urllib.request.urlopen(req))
            out.append([(h["repo"], h["path"]) for h in got.get("results", got.get("hits", []))])
        return out
    finally:
        server.terminate()
        server.wait()


a, b = answers(sys.argv[1], port), answers(sys.argv[2], port + 1)
lists = sum(1 for x, y in zip(a, b) if x != y)
first = sum(1 for x, y in zip(a, b) if x[:1] != y[:1])
print(f"{len(questions)} questions; ranked lists differ: {lists}; first hit differs: {first}")
