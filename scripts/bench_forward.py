#!/usr/bin/env python3
"""Moving an index forward: index a repository at REV~N (first parent),
then time `ken index --rev REV`, for each binary, runs alternating.

Usage:
  scripts/bench_forward.py --ken BIN [--ken BIN2 ...] [--back N[,N...]] [--runs R]
                           [--home-root DIR] NAME=GIT_DIR[@REV] ...

Prints one Markdown row per (repository, N, binary): the wall seconds of
the move and of its people step (history + blame), the files blamed, and
how many lines of the stored blame name another commit than the first
binary's in the same run (decoded from `blame_files`; files whose ranges
are split differently but name the same commit on every line count as
equal). `--embedder off` throughout. Needs python3-zstandard.
"""
import argparse, json, os, shutil, sqlite3, subprocess, sys, time

import zstandard


def rev_parse(git, rev):
    return subprocess.run(["git", "--git-dir", git, "rev-parse", rev], capture_output=True,
                          text=True, check=True).stdout.strip()


def index(ken, home, git, name, rev):
    t0 = time.perf_counter()
    p = subprocess.run([ken, "--home", home, "--embedder", "off", "index", git, "--name", name,
                        "--rev", rev, "--json"], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"failed: {ken} index {git} --rev {rev}\n{p.stderr[-2000:]}")
    return wall, json.loads(p.stdout)


def varint(b, i):
    out, shift = 0, 0
    while True:
        c = b[i]
        i += 1
        out |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return out, i


def unzigzag(z):
    return (z >> 1) ^ -(z & 1)


def blame_lines(home):
    """{path: [sha of each line]} from the embedded store's packed blame
    (ken-store embedded/blame.rs `pack`: tag 1 raw or 2 zstd; the commit
    count, zigzag deltas of `history` rows, then per range zigzag(gap),
    zigzag(last - start), commit index). Files kept as JSON are skipped."""
    db = next(os.path.join(r, "index.sqlite") for r, _, f in os.walk(home) if "index.sqlite" in f)
    conn = sqlite3.connect(db)
    sha = dict(conn.execute("SELECT rowid, sha FROM history"))
    out = {}
    for path, data in conn.execute("SELECT path, data FROM blame_files"):
        data = bytes(data)
        if data[0] not in (1, 2):
            continue
        body = data[1:]
        if data[0] == 2:
            body = zstandard.ZstdDecompressor().decompress(body, max_output_size=1 << 28)
        n, i = varint(body, 0)
        rows, prev = [], 0
        for _ in range(n):
            z, i = varint(body, i)
            prev += unzigzag(z)
            rows.append(sha.get(prev, "?"))
        per, end = [], 0
        while i < len(body):
            gap, i = varint(body, i)
            span, i = varint(body, i)
            c, i = varint(body, i)
            start = end + 1 + unzigzag(gap)
            end = start + unzigzag(span)
            per.extend([rows[c]] * (end - start + 1))
        out[path] = per
    return out


def differing(a, b):
    n = 0
    for path in set(a) | set(b):
        x, y = a.get(path, []), b.get(path, [])
        n += sum(1 for u, v in zip(x, y) if u != v) + abs(len(x) - len(y))
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ken", action="append", required=True)
    ap.add_argument("--back", default="1,100")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--home-root", default="/tmp/ken-forward")
    ap.add_argument("repos", nargs="+")
    a = ap.parse_args()
    print("| repo | commits moved | binary | move s | people s | files blamed | lines not as the first binary's |")
    print("|---|---:|---|---|---|---:|---|")
    for spec in a.repos:
        name, _, rest = spec.partition("=")
        git, _, rev = rest.partition("@")
        rev = rev or "HEAD"
        target = rev_parse(git, rev)
        for back in [int(b) for b in a.back.split(",")]:
            start = rev_parse(git, f"{target}~{back}")
            rows = {k: [] for k in a.ken}
            for run in range(a.runs):
                first = None
                for i, ken in enumerate(a.ken):
                    home = os.path.join(a.home_root, str(i), name)
                    shutil.rmtree(home, ignore_errors=True)
                    index(ken, home, git, name, start)
                    wall, rep = index(ken, home, git, name, target)
                    people = rep.get("people") or {}
                    lines = blame_lines(home)
                    first = first if first is not None else lines
                    rows[ken].append((wall, people.get("seconds", 0.0),
                                      people.get("files_blamed", 0), differing(first, lines)))
                    print(json.dumps({"ken": ken, "repo": name, "back": back, "run": run,
                                      "wall_s": round(wall, 2), "people": people}),
                          file=sys.stderr)
            for ken in a.ken:
                r = rows[ken]
                print(f"| {name} | {back} | {ken} | "
                      + ", ".join(f"{x[0]:.2f}" for x in r) + " | "
                      + ", ".join(f"{x[1]:.2f}" for x in r) + f" | {r[0][2]} | "
                      + ", ".join(str(x[3]) for x in r) + " |")


if __name__ == "__main__":
    main()
