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
import sys
import urllib.parse
import urllib.request

from ken_serve import first_lines, ken_binary, serve

ken = ken_binary()
port = int(os.environ.get("PORT", "7990"))
questions = first_lines()


def answers(home, port):
    out = []
    with serve(ken, home, port) as (_, base, token):
        for q in questions:
            url = base + "/api/v1/search?" + urllib.parse.urlencode({"q": q, "n": 10, "mode": "lexical"})
            req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
            got = json.load(urllib.request.urlopen(req))
            out.append([(h["repo"], h["path"]) for h in got.get("results", got.get("hits", []))])
    return out


a, b = answers(sys.argv[1], port), answers(sys.argv[2], port + 1)
lists = sum(1 for x, y in zip(a, b) if x != y)
first = sum(1 for x, y in zip(a, b) if x[:1] != y[:1])
print(f"{len(questions)} questions; ranked lists differ: {lists}; first hit differs: {first}")
