#!/usr/bin/env python3
"""Index size by component, and indexing time by stage, for BENCHMARKS.md.

Usage:
  scripts/bench_size.py --ken BIN [--ken BIN2 ...] [--embedder off|local|static]
                        [--models HOME/models] [--home-root DIR] NAME=GIT_DIR[@REV] ...

Each binary indexes each repository into a fresh home (`--home
HOME-ROOT/<binary n>/<name>`), alternating binaries per repository so that
both see the same machine load. For each run: wall seconds and peak RSS
(/usr/bin/time), the stage timings `ken index --json` reports, the source
bytes the index counts (`ken status --json`), and the index directory's size
by component: every SQLite table and index (the `dbstat` virtual table),
the lexical index (tantivy), vectors and the rest, in MB (10^6 bytes).
With --incremental, each repository is indexed at the parent of a recent
commit that changed one code file, then moved to that commit (timed).
Prints one Markdown table per repository and a JSON line per run (stderr).
"""
import argparse, json, os, re, shutil, sqlite3, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_index import du  # noqa: E402


def sqlite_parts(db):
    """Bytes per table (its indexes folded into the table they index)."""
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    owner = {}
    for name, tbl in c.execute("SELECT name, tbl_name FROM sqlite_master"):
        owner[name] = tbl
    parts = {}
    for name, size in c.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
        t = owner.get(name, name)
        # FTS5 shadow tables (commit_text_data, ...) count as their table
        m = re.match(r"(.*)_(data|idx|content|docsize|config)$", t)
        if m and m.group(1) in owner:
            t = m.group(1)
        parts[t] = parts.get(t, 0) + size
    c.close()
    return parts


def components(repo_dir):
    out = {}
    for entry in os.listdir(repo_dir):
        p = os.path.join(repo_dir, entry)
        size = du(p) if os.path.isdir(p) else os.path.getsize(p)
        if entry == "index.sqlite":
            for t, b in sqlite_parts(p).items():
                out[f"sqlite:{t}"] = b
            rest = size - sum(v for k, v in out.items() if k.startswith("sqlite:"))
            if rest:
                out["sqlite:(free)"] = rest
        else:
            out[entry] = size
    return out


CODE_EXT = (".py", ".rs", ".go", ".js", ".ts", ".java", ".c", ".h", ".cpp", ".rb", ".php")


def one_file_commit(git, head):
    """A recent first-parent commit before `head` that changed one code file."""
    out = subprocess.run(["git", "--git-dir", git, "rev-list", "--first-parent", "--no-merges",
                          "-n", "400", head], capture_output=True, text=True, check=True).stdout
    for c in out.split()[1:]:
        files = subprocess.run(["git", "--git-dir", git, "diff-tree", "--no-commit-id",
                                "--name-only", "-r", c], capture_output=True, text=True,
                               check=True).stdout.split()
        if len(files) == 1 and files[0].endswith(CODE_EXT):
            return c, files[0]
    return None, None


def run(ken, home, name, spec, embedder, models, incremental):
    git, _, rev = spec.partition("@")
    one = None
    if incremental:
        commit, path = one_file_commit(git, rev or "HEAD")
        if commit:
            one = (commit, path)
            rev = commit + "^"
    shutil.rmtree(home, ignore_errors=True)
    if models:
        # the static table (`ken model distill`) lives under the home
        os.makedirs(home)
        os.symlink(os.path.abspath(models), os.path.join(home, "models"))
    cmd = ["/usr/bin/time", "-v", ken, "--home", home, "--embedder", embedder,
           "index", git, "--name", name, "--json"]
    if rev:
        cmd[cmd.index("--json"):cmd.index("--json")] = ["--rev", rev]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stderr[-3000:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) / 1024
    try:
        report = json.loads(p.stdout)
    except ValueError:
        report = {}
    st = json.loads(subprocess.run([ken, "--home", home, "status", name, "--json"],
                                   capture_output=True, text=True, check=True).stdout)
    repo_dirs = [os.path.join(root, d) for root, dirs, files in os.walk(home)
                 for d in dirs if os.path.exists(os.path.join(root, d, "index.sqlite"))]
    comps = components(repo_dirs[0]) if repo_dirs else {}
    out = {"ken": ken, "name": name, "wall_s": round(wall, 2), "rss_mib": round(rss),
           "report": report, "status": st, "components": comps}
    if one:
        # the index moved one commit on, which changed one file
        t0 = time.perf_counter()
        p = subprocess.run([ken, "--home", home, "--embedder", embedder, "index", git,
                            "--name", name, "--rev", one[0], "--json"],
                           capture_output=True, text=True, check=True)
        out["incremental"] = {"wall_s": round(time.perf_counter() - t0, 2), "file": one[1],
                              "commit": one[0], "report": json.loads(p.stdout)}
    return out


def source_bytes(st):
    """The indexed source bytes `ken status --json` reports."""
    repos = st.get("repos") or [{}]
    return (repos[0].get("stats") or {}).get("bytes", 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ken", action="append", required=True)
    ap.add_argument("--embedder", default="off")
    ap.add_argument("--home-root", default="/tmp/ken-size")
    ap.add_argument("--models", help="a home's models/ folder to use (for --embedder static)")
    ap.add_argument("--incremental", action="store_true",
                    help="index the parent of a recent one-file commit, then time moving to it")
    ap.add_argument("--runs", type=int, default=1, help="runs per binary (alternating)")
    ap.add_argument("repos", nargs="+")
    a = ap.parse_args()
    for spec in a.repos:
        name, _, where = spec.partition("=")
        runs = []
        for rep in range(a.runs):
            for i, ken in enumerate(a.ken):
                r = run(ken, os.path.join(a.home_root, str(i), name), name, where, a.embedder,
                        a.models, a.incremental)
                print(json.dumps(r), file=sys.stderr)
                if rep == 0:
                    runs.append(r)
                else:
                    runs[i].setdefault("more", []).append(r)
        src = source_bytes(runs[0]["status"])
        keys = sorted({k for r in runs for k in r["components"]},
                      key=lambda k: -max(r["components"].get(k, 0) for r in runs))
        mb = lambda b: f"{b / 1e6:.1f}"
        print(f"\n### {name} ({mb(src)} MB of indexed source, --embedder {a.embedder})\n")
        print("| component | " + " | ".join(f"build {i}" for i in range(len(runs))) + " |")
        print("|---|" + "---:|" * len(runs))
        for k in keys:
            print(f"| {k} | " + " | ".join(mb(r["components"].get(k, 0)) for r in runs) + " |")
        totals = [sum(r["components"].values()) for r in runs]
        print("| **total** | " + " | ".join(f"**{mb(t)}**" for t in totals) + " |")
        print("| × source | " + " | ".join(f"{t / max(src, 1):.2f}" for t in totals) + " |")
        walls = lambda r: [r["wall_s"]] + [m["wall_s"] for m in r.get("more", [])]
        print("| wall s | " + " | ".join(", ".join(map(str, walls(r))) for r in runs) + " |")
        if all("incremental" in r for r in runs):
            inc = lambda r: [r["incremental"]["wall_s"]] + [m["incremental"]["wall_s"]
                                                             for m in r.get("more", [])]
            print(f"| one-file commit s ({runs[0]['incremental']['file']}) | "
                  + " | ".join(", ".join(map(str, inc(r))) for r in runs) + " |")
        print("| peak RSS MiB | " + " | ".join(str(r["rss_mib"]) for r in runs) + " |")


if __name__ == "__main__":
    main()
