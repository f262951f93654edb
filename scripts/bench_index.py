#!/usr/bin/env python3
"""Indexing and search benchmarks for BENCHMARKS.md.

Usage: scripts/bench_index.py [--mirror /work/.mirror] [--large sympy/sympy] [--out BENCHMARKS.md]

For each repository (the four dev repositories at their eval base commit,
and one large repository at HEAD): a full index (no embeddings) timed with
/usr/bin/time (wall, peak RSS), the index size against the source size, and
an incremental re-index after a one-file commit as a ratio of the full
index time. Search latency over the dev queries, in-process (`ken eval`)
and per CLI call, next to `rg` run on the same queries' words over the same
files, measured in the same run.
"""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tempfile, time

DEV = {
    "pallets/flask": "542cf30e48881e9e206ec03c507335e5806d127d",
    "BurntSushi/ripgrep": "cddb5f57f8fa3413a6210bdd3a8f687b7dac69b2",
    "spf13/cobra": "b6357260812dd09c49dc7d55042f0c795b419f6b",
    "expressjs/express": "450c468d0469ea79c878084c623cd18642d7ad7d",
}
CODE_EXT = (".py", ".rs", ".go", ".js", ".ts", ".java", ".c", ".h", ".cpp", ".rb", ".php")
STOP = set("a an and are as at be by for from has have in is it of on or the this to was were with not fix add use when".split())


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def timed(cmd):
    """Run under /usr/bin/time -v: (seconds, peak RSS MiB, stdout)."""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"failed: {cmd}\n{p.stderr[-2000:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) / 1024
    return wall, rss, p.stdout


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def one_file_commit(gitdir, head):
    """A recent first-parent commit (before `head`) that changed exactly one code file."""
    shas = sh(["git", "--git-dir", gitdir, "rev-list", "--first-parent", "--no-merges", "-n", "400", head]).split()
    for c in shas[1:]:
        files = sh(["git", "--git-dir", gitdir, "diff-tree", "--no-commit-id", "--name-only", "-r", c]).split()
        if len(files) == 1 and files[0].endswith(CODE_EXT):
            return c, files[0]
    return None, None


def bench_repo(ken, name, gitdir, sha):
    home = tempfile.mkdtemp(prefix="ken-bench-")
    try:
        commit, changed = one_file_commit(gitdir, sha)
        base = sh(["git", "--git-dir", gitdir, "rev-parse", commit + "^"]).strip() if commit else sha
        wall, rss, out = timed([ken, "--home", home, "--embedder", "off", "index", "--json", gitdir, "--rev", base, "--name", name])
        rep = json.loads(out)
        idx = du(os.path.join(home, "repos", name.replace("/", "__")))
        row = {
            "repo": name, "commit": base[:10], "files": rep["files"], "mb": rep["bytes"] / 1e6,
            "chunks": rep["chunks"], "wall": wall, "rss": rss, "index_mb": idx / 1e6,
            "graph_s": (rep.get("graph") or {}).get("seconds", 0.0),
            "people_s": (rep.get("people") or {}).get("seconds", 0.0),
            "commits": (rep.get("people") or {}).get("commits_added", 0),
        }
        if commit:
            t0 = time.perf_counter()
            out = sh([ken, "--home", home, "--embedder", "off", "index", "--json", gitdir, "--rev", commit, "--name", name])
            row["incr_wall"] = time.perf_counter() - t0
            row["incr_processed"] = json.loads(out)["processed"]
            row["incr_file"] = changed
            t0 = time.perf_counter()
            sh([ken, "--home", home, "--embedder", "off", "index", "--json", gitdir, "--rev", commit, "--name", name])
            row["noop_wall"] = time.perf_counter() - t0
        return row
    finally:
        shutil.rmtree(home, ignore_errors=True)


def query_words(q):
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", q.split("\n")[0])
    out = []
    for w in words:
        if w.lower() not in STOP and w not in out:
            out.append(w)
    return out[:8]


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round((len(xs) - 1) * p))]


def bench_search(ken, mirror, eval_dir):
    """CLI search latency vs rg, per query of commits_dev, on the base commits."""
    home = tempfile.mkdtemp(prefix="ken-bench-")
    trees = tempfile.mkdtemp(prefix="ken-trees-")
    ken_ms, rg_ms = [], []
    try:
        queries = [json.loads(l) for l in open(os.path.join(eval_dir, "commits_dev.jsonl"))]
        for name, sha in DEV.items():
            gitdir = os.path.join(mirror, name.replace("/", "+"), "repo")
            sh([ken, "--home", home, "--embedder", "off", "index", "--quiet", gitdir, "--rev", sha, "--name", name])
            tree = os.path.join(trees, name.replace("/", "+"))
            os.makedirs(tree)
            subprocess.run(f"git --git-dir {gitdir} archive {sha} | tar -x -C {tree}", shell=True, check=True)
            for q in [q for q in queries if q["repo"] == name]:
                t0 = time.perf_counter()
                sh([ken, "--home", home, "--embedder", "off", "search", "--json", "--files", "--repo", name, q["query"]])
                ken_ms.append((time.perf_counter() - t0) * 1000)
                words = query_words(q["query"])
                if not words:
                    continue
                cmd = ["rg", "-l", "-i", "-F"] + sum((["-e", w] for w in words), []) + [tree]
                t0 = time.perf_counter()
                subprocess.run(cmd, capture_output=True)
                rg_ms.append((time.perf_counter() - t0) * 1000)
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(trees, ignore_errors=True)
    return ken_ms, rg_ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default="/work/.mirror")
    ap.add_argument("--large", default="sympy/sympy")
    ap.add_argument("--eval-dir", default=os.path.join(os.path.dirname(__file__), "../../shared/eval"))
    ap.add_argument("--ken", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/ken-target")), "debug/ken"))
    args = ap.parse_args()
    rows = []
    for name, sha in DEV.items():
        rows.append(bench_repo(args.ken, name, os.path.join(args.mirror, name.replace("/", "+"), "repo"), sha))
        print(rows[-1], file=sys.stderr)
    if args.large:
        gitdir = os.path.join(args.mirror, args.large.replace("/", "+"), "repo")
        rows.append(bench_repo(args.ken, args.large, gitdir, "HEAD"))
        print(rows[-1], file=sys.stderr)
    ken_ms, rg_ms = bench_search(args.ken, args.mirror, args.eval_dir)
    lines = []
    lines.append("| repository | commit | files | source MB | chunks | full index s | of which graph s | of which history+blame s (commits) | MB/s | files/s | peak RSS MiB | index MB | index/source | one-file commit s | incr/full | same commit s |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        inc = r.get("incr_wall")
        lines.append(
            f"| {r['repo']} | {r['commit']} | {r['files']} | {r['mb']:.1f} | {r['chunks']} | {r['wall']:.2f} | {r['graph_s']:.2f} | {r['people_s']:.2f} ({r['commits']}) | {r['mb']/r['wall']:.1f} | "
            f"{r['files']/r['wall']:.0f} | {r['rss']:.0f} | {r['index_mb']:.1f} | {r['index_mb']/max(r['mb'],1e-9):.2f} | "
            + (f"{inc:.2f} ({r['incr_processed']} file) | {inc/r['wall']:.2f} | {r['noop_wall']:.2f} |" if inc else "- | - | - |")
        )
    lines.append("")
    lines.append(f"Search, one `ken search --files` process per query over the {len(ken_ms)} commits_dev queries "
                 f"(process start, index open, search): p50 {pct(ken_ms,0.5):.1f} ms, p95 {pct(ken_ms,0.95):.1f} ms. "
                 f"`rg -l -i -F -e WORD...` with the same queries' words over the same files, same run: "
                 f"p50 {pct(rg_ms,0.5):.1f} ms, p95 {pct(rg_ms,0.95):.1f} ms (ratio of p50s {pct(ken_ms,0.5)/pct(rg_ms,0.5):.2f}).")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
