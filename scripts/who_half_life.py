#!/usr/bin/env python3
"""How fast ownership fades in a repository, read from its own history.

    scripts/who_half_life.py NAME=GIT_DIR@REV [NAME=GIT_DIR@REV ...] [--last 150]

For each of the newest `--last` commits at or before REV (first parent,
no merges), the people who touched its files before it are scored by
those commits, each counting 0.5^(age / half-life); the commit's author
is a hit when among the three best. Prints the hit rate per half-life:
the half-life a repository's own past would choose for `ken who`
(BENCHMARKS §56). Only commits older than each question count, so
nothing is learned from the future.
"""
import argparse
import collections
import subprocess

HALF_LIVES = [30, 90, 180, 365, 730, 1460]


def history(git_dir, rev):
    out = subprocess.run(
        ["git", "-C", git_dir, "log", "--first-parent", "--no-merges", "--name-only",
         "--format=@@%H%x09%at%x09%ae", rev],
        capture_output=True, text=True, check=True).stdout
    commits = []
    for block in out.split("@@")[1:]:
        lines = block.strip("\n").split("\n")
        _, t, email = lines[0].split("\t")
        commits.append((int(t), email.lower(), [l for l in lines[1:] if l.strip()]))
    return commits[::-1]  # oldest first


def hit_rates(commits, last):
    touched = collections.defaultdict(list)  # path -> [(time, author)]
    hits = {h: [] for h in HALF_LIVES}
    first = len(commits) - last
    for i, (t, author, files) in enumerate(commits):
        if i >= first and files:
            for h in HALF_LIVES:
                score = collections.Counter()
                for f in files:
                    for when, who in touched.get(f, []):
                        score[who] += 0.5 ** ((t - when) / 86400 / h)
                if score:
                    top = [who for who, _ in score.most_common(3)]
                    hits[h].append(1.0 if author in top else 0.0)
        for f in files:
            touched[f].append((t, author))
    return {h: (sum(v) / len(v) if v else 0.0, len(v)) for h, v in hits.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("repos", nargs="+", help="NAME=GIT_DIR@REV")
    ap.add_argument("--last", type=int, default=150)
    a = ap.parse_args()
    print("| repository | questions | " + " | ".join(f"{h} days" for h in HALF_LIVES) + " |")
    print("|---" * (len(HALF_LIVES) + 2) + "|")
    for spec in a.repos:
        name, rest = spec.split("=", 1)
        git_dir, rev = rest.rsplit("@", 1)
        rates = hit_rates(history(git_dir, rev), a.last)
        n = next(iter(rates.values()))[1]
        print(f"| {name} | {n} | " + " | ".join(f"{r:.3f}" for r, _ in rates.values()) + " |")


if __name__ == "__main__":
    main()
