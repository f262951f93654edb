#!/usr/bin/env python3
"""Warm search latency for whole questions (issue texts, full commit
messages), one build against another on the same home, and whether their
answers are the same.

For each build in turn (alternating, ROUNDS times), starts `ken serve`
(embeddings off) on HOME, asks every question of SET whose repository the
home holds, whole, through GET /api/v1/search (lexical, 10 results), named
to its repository (`repo=`) or, with --across, without one; prints p50/p95
per build and round. Then compares the builds' answers question by question
(the ranked paths of the last round) and prints how many differ.

The store is the one the home uses: set KEN_STORE=postgres://… for
PostgreSQL. Every build then reads the same database, unless --store
gives each build its own (one --store per --ken, in order: a build that
migrates the schema reads a copy, `CREATE DATABASE b TEMPLATE a`).

usage: scripts/bench-long-questions.py HOME SET --ken BIN [--ken BIN …]
           [--store URL …] [--across] [--max N] [--rounds R] [--min-chars C]
"""
import argparse
import json
import os
import statistics
import subprocess
import time
import urllib.parse
import urllib.request

from ken_serve import serve

ap = argparse.ArgumentParser()
ap.add_argument("home")
ap.add_argument("set")
ap.add_argument("--ken", action="append", required=True)
ap.add_argument("--store", action="append", default=[])
ap.add_argument("--across", action="store_true")
ap.add_argument("--max", type=int, default=1000)
ap.add_argument("--rounds", type=int, default=2)
ap.add_argument("--min-chars", type=int, default=0)
ap.add_argument("--port", default="7981")
args = ap.parse_args()
if args.store and len(args.store) != len(args.ken):
    ap.error("one --store per --ken")


def env_of(i):
    env = dict(os.environ)
    if args.store:
        env["KEN_STORE"] = args.store[i]
    return env


first = args.ken[0]
listed = subprocess.run(
    [first, "--home", args.home, "--json", "status"], check=True, capture_output=True, env=env_of(0)
).stdout
held = {r["name"] for r in json.loads(listed)["repos"]}
questions = []
with open(args.set) as f:
    for line in f:
        q = json.loads(line)
        if q["repo"] in held and len(q["query"]) >= args.min_chars:
            questions.append((q["id"], q["repo"], q["query"]))
questions = questions[: args.max]
print(f"{len(questions)} questions, {sum(len(q[2]) for q in questions) // max(len(questions), 1)} characters on average")

def ask(base, token, q, repo):
    params = {"q": q, "n": 10, "mode": "lexical"}
    if not args.across:
        params["repo"] = repo
    body = urllib.parse.urlencode(params)
    req = urllib.request.Request(base + "/api/v1/search?" + body, headers={"Authorization": f"Bearer {token}"})
    t = time.perf_counter()
    with urllib.request.urlopen(req, timeout=300) as r:
        out = json.loads(r.read())
    ms = (time.perf_counter() - t) * 1000
    hits = out.get("results", out.get("hits", []))
    return ms, [(h.get("repo"), h.get("path"), h.get("start_line")) for h in hits]


answers = {}
for rnd in range(1, args.rounds + 1):
    for i, ken in enumerate(args.ken):
        with serve(ken, args.home, args.port, env_of(i)) as (server, base, token):
            ask(base, token, questions[0][2], questions[0][1])  # the server's first question opens what it needs
            times, got = [], {}
            for qid, repo, q in questions:
                ms, hits = ask(base, token, q, repo)
                times.append(ms)
                got[qid] = hits
            answers[ken] = got
            times.sort()
            p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
            print(
                f"round {rnd} {ken}: p50 {statistics.median(times):.0f} ms, p95 {p95:.0f} ms, "
                f"max {times[-1]:.0f} ms, mean {statistics.mean(times):.0f} ms",
                flush=True,
            )

ref = answers[args.ken[0]]
for ken in args.ken[1:]:
    paths = lambda hits: [(r, p) for r, p, _ in hits]
    differ = [qid for qid in ref if paths(ref[qid]) != paths(answers[ken][qid])]
    print(f"{ken} against {args.ken[0]}: {len(differ)} of {len(ref)} answers differ (ranked paths)")
    for qid in differ[:10]:
        print(f"  {qid}: {paths(ref[qid])[:3]} vs {paths(answers[ken][qid])[:3]}")
