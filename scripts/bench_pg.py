#!/usr/bin/env python3
"""The PostgreSQL store against the embedded one, and PostgreSQL's shared
queue: workers, a worker killed mid-job, and two servers on one database.

    python3 scripts/bench_pg.py --ken target/release/ken \\
        --repo pallets/flask=/work/.mirror/pallets+flask/repo \\
        --repo spf13/cobra=/work/.mirror/spf13+cobra/repo \\
        --repo BurntSushi/ripgrep=... --repo expressjs/express=... \\
        --repo psf/requests=... --repo sympy/sympy=... \\
        [--embedder off|local] [--quick] [--out benches/results/pg.md]

(--quick with two small repositories, e.g. flask and cobra, is a one-minute
trial of every section.)

In one run, on one throwaway PostgreSQL server (scripts/postgres.sh, or
--pg-url to use one of yours; every measurement gets its own database):

1. Indexing: each repository indexed with `ken index --json`, once into a
   fresh embedded home and once into PostgreSQL (`--store URL`), at its
   base_sha from ../shared/eval/commits_dev.manifest.json, else at --rev.
   Search: `ken eval` (in-process, --mode lexical unless --embedder local) on
   the commits_dev queries of each repository that has some, and sequential
   GET /api/v1/search to a warm `ken serve` per store, with the commit
   subjects as queries (commits_dev's, else the repository's own `git log`).
   All repositories share one database; an index that fails or passes
   --index-timeout there is reported (with what PostgreSQL was running) and
   tried again alone in a fresh database.
2. Workers: the same index jobs (POST /api/v1/repos/NAME/index with a
   file:// source, queued by a `ken serve --no-jobs` that is stopped before
   the workers start) run by 1 and by 3 `ken worker` processes; wall time
   from the workers' start until every job is done. The clones are made
   beforehand (plain `git clone`), so a job's time is fetching + indexing.
3. A worker SIGKILLed mid-job (KEN_JOB_STALE_SECS=--stale-secs): the time
   from the kill until a second worker has finished the job, then duplicate
   and orphan rows (SQL) against a clean index of the same commit.
4. 64 connections (wrk, two processes of 32) searching one database through
   one server and through two (different ports, same --store), and the
   embedded store through one server as a baseline.

The machine is shared and small: every comparison is between numbers taken
in the same run. Every process the script starts is stopped at the end,
also on errors and Ctrl-C.
"""

import argparse
import concurrent.futures
import http.client
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVAL = os.path.join(ROOT, "..", "shared", "eval")
PG_BIN_DEFAULTS = [
    os.path.join(os.environ.get("KEN_PG_HOME", ""), "pgserver/pginstall/bin"),
    "/var/cache/ken-pg/pgserver/pginstall/bin",
    os.path.expanduser("~/.cache/ken-pg/pgserver/pginstall/bin"),
]

PROCS = []  # every long-running process we started (Popen, own process group)


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def pct(values, p):
    v = sorted(values)
    if not v:
        return float("nan")
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def dir_name(name):
    """As ken names a repository's directory (and its PostgreSQL key)."""
    out = ""
    for c in name:
        if c.isascii() and (c.isalnum() or c in ".-_"):
            out += c
        elif c == "/":
            out += "__"
        else:
            out += "-"
    if not out or out.startswith("."):
        out = "r" + out
    return out


# ---------------------------------------------------------------- processes

def spawn(cmd, logfile, env):
    """Start a long-running process in its own process group, output to a file."""
    f = open(logfile, "ab")
    p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    f.close()
    p.logfile = logfile
    PROCS.append(p)
    return p


def stop(p, sig=signal.SIGTERM, timeout=30):
    if p.poll() is None:
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
    if p in PROCS:
        PROCS.remove(p)


def stop_all():
    for p in list(PROCS):
        stop(p, timeout=10)


def tail(path, n=2000):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError:
        return ""


# ---------------------------------------------------------------- PostgreSQL

class Pg:
    def __init__(self, opts, workdir):
        self.opts = opts
        self.dir = os.path.join(workdir, "pg")
        self.ours = not opts.pg_url
        self.created = []
        bindir = opts.pg_bin or next((d for d in PG_BIN_DEFAULTS if os.path.exists(os.path.join(d, "psql"))), None)
        self.psql_bin = os.path.join(bindir, "psql") if bindir else shutil.which("psql")
        self.bindir = bindir
        if self.ours:
            log("starting PostgreSQL (scripts/postgres.sh)")
            os.makedirs(self.dir, exist_ok=True)
            out = sh(["bash", os.path.join(ROOT, "scripts", "postgres.sh"), "start", self.dir])
            self.base = out.strip().splitlines()[-1]
        else:
            self.base = opts.pg_url
        self.tag = f"kbench{os.getpid()}"

    def url(self, db):
        u = urllib.parse.urlsplit(self.base)
        return urllib.parse.urlunsplit((u.scheme, u.netloc, "/" + db, u.query, u.fragment))

    def psql(self, db, sql):
        """Rows of tab-separated values."""
        out = sh([self.psql_bin, "-X", "-qAt", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d", self.url(db), "-c", sql])
        return [line.split("\t") for line in out.splitlines() if line]

    def create(self, label):
        db = f"{self.tag}_{label}"
        self.psql("postgres", f"DROP DATABASE IF EXISTS {db}")
        self.psql("postgres", f"CREATE DATABASE {db}")
        self.created.append(db)
        return db

    def activity(self, db):
        """What the database's other sessions are doing: (seconds, state, query)."""
        return self.psql(db, "SELECT round(extract(epoch FROM now() - query_start))::int, state, "
                             "left(regexp_replace(query, '\\s+', ' ', 'g'), 300) FROM pg_stat_activity "
                             f"WHERE datname = '{db}' AND pid <> pg_backend_pid() AND state <> 'idle' "
                             "ORDER BY query_start")

    def cancel(self, db):
        self.psql("postgres", f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{db}'")

    def version(self):
        return self.psql("postgres", "SHOW server_version")[0][0]

    def close(self):
        if self.ours:
            log("stopping PostgreSQL")
            subprocess.run(["bash", os.path.join(ROOT, "scripts", "postgres.sh"), "stop", self.dir],
                           capture_output=True)
        else:
            for db in self.created:
                subprocess.run([self.psql_bin, "-X", "-q", "-d", self.url("postgres"), "-c",
                                f"DROP DATABASE IF EXISTS {db} WITH (FORCE)"], capture_output=True)


# ---------------------------------------------------------------- ken

class Ken:
    def __init__(self, opts, workdir):
        self.opts = opts
        self.workdir = workdir
        self.env = dict(os.environ, KEN_ALLOW_PRIVATE_URLS="1")
        for k in ("KEN_STORE", "KEN_HOME", "KEN_EMBEDDER", "KEN_JOB_STALE_SECS"):
            self.env.pop(k, None)

    def argv(self, home, store, args):
        cmd = [self.opts.ken, "--home", home]
        if store:
            cmd += ["--store", store]
        return cmd + ["--embedder", self.opts.embedder] + list(args)

    def run(self, home, store, args, env=None, timeout=None):
        try:
            p = subprocess.run(self.argv(home, store, args), capture_output=True, text=True, env=env or self.env,
                               timeout=timeout)
        except subprocess.TimeoutExpired:  # run() has killed it
            raise TimeoutError(f"ken {' '.join(args)} did not finish in {timeout:.0f} s") from None
        if p.returncode != 0:
            raise RuntimeError(f"ken {' '.join(args)} failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
        return p.stdout

    def json(self, home, store, args, env=None, timeout=None):
        return json.loads(self.run(home, store, ["--json", *args], env, timeout))

    def token(self, home, store, scope):
        return self.json(home, store, ["token", "create", "--repo", "*", "--scope", scope])["token"]

    def serve(self, home, store, label, env=None):
        """A warm `ken serve --no-jobs` on a free port: (process, host:port)."""
        logfile = os.path.join(self.workdir, f"serve-{label}.log")
        p = spawn(self.argv(home, store, ["--json", "serve", "--no-jobs", "--addr", "127.0.0.1:0"]),
                  logfile, env or self.env)
        deadline = time.time() + 60
        while time.time() < deadline:
            m = re.search(r'"listening"\s*:\s*"([^"]+)"', tail(logfile, 100000))
            if m:
                return p, m.group(1)
            if p.poll() is not None:
                raise RuntimeError(f"ken serve exited ({p.returncode}): {tail(logfile)}")
            time.sleep(0.1)
        raise RuntimeError(f"ken serve did not start: {tail(logfile)}")

    def worker(self, home, store, label, env=None):
        return spawn(self.argv(home, store, ["worker"]), os.path.join(self.workdir, f"worker-{label}.log"),
                     env or self.env)

    def jobs(self, home, store, env=None):
        out = self.json(home, store, ["jobs", "list", "-n", "1000"], env)["jobs"]
        for j in out:
            for k in ("progress", "result"):
                if isinstance(j.get(k), str):
                    try:
                        j[k] = json.loads(j[k])
                    except ValueError:
                        pass
        return {j["id"]: j for j in out}


class Http:
    """One keep-alive connection to a server."""

    def __init__(self, addr, token):
        self.addr, self.token = addr, token
        self.conn = None

    def request(self, method, path, body=None):
        headers = {"Authorization": f"Bearer {self.token}"}
        if body is not None:
            body = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        for attempt in (0, 1):
            if self.conn is None:
                host, port = self.addr.rsplit(":", 1)
                self.conn = http.client.HTTPConnection(host, int(port), timeout=120)
            try:
                t0 = time.perf_counter()
                self.conn.request(method, path, body=body, headers=headers)
                r = self.conn.getresponse()
                data = r.read()
                return r.status, data, (time.perf_counter() - t0) * 1000
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise

    def close(self):
        if self.conn:
            self.conn.close()


def search_path(query, repo, mode):
    return "/api/v1/search?" + urllib.parse.urlencode({"q": query, "repo": repo, "n": 10, "mode": mode})


# ---------------------------------------------------------------- inputs

def manifest():
    with open(os.path.join(EVAL, "commits_dev.manifest.json")) as f:
        return {r["repo"]: r for r in json.load(f)["repos"]}


def eval_queries():
    out = {}
    with open(os.path.join(EVAL, "commits_dev.jsonl")) as f:
        for line in f:
            q = json.loads(line)
            out.setdefault(q["repo"], []).append(q)
    return out


def http_queries(name, gitdir, sha, evalq, n):
    """Commit subjects: commits_dev's for the repository, else its own history's."""
    seen, out = set(), []
    if evalq.get(name):
        subjects = [(q.get("query_subject") or q["query"]).split("\n")[0] for q in evalq[name]]
    else:
        subjects = sh(["git", "--git-dir", gitdir, "log", "--no-merges", "--format=%s", "-n", "2000", sha]).splitlines()
        subjects = [s for s in subjects if len(s.split()) >= 3 and not re.match(r"(?i)(merge|revert|bump|release|version)\b", s)]
    for s in subjects:
        s = s.strip()
        if s and s not in seen:
            seen.add(s)
            out.append(s)
        if len(out) >= n:
            break
    return out


def preclone(home, name, gitdir):
    """The clone a job of a file:// source makes, made beforehand (hard links)."""
    dest = os.path.join(home, "clones", dir_name(name))
    if not os.path.exists(os.path.join(dest, ".git")):
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        sh(["git", "clone", "--quiet", "--no-checkout", gitdir, dest])
        sh(["git", "-C", dest, "remote", "set-url", "origin", "file://" + gitdir])


def queue_jobs(ken, home, store, items, label):
    """Queue index jobs through a `ken serve --no-jobs`, then stop it: job ids."""
    token = ken.token(home, store, "index")
    server, addr = ken.serve(home, store, f"queue-{label}")
    ids = {}
    try:
        c = Http(addr, token)
        for name, gitdir, sha in items:
            status, data, _ = c.request("POST", f"/api/v1/repos/{urllib.parse.quote(name, safe='')}/index",
                                        {"source": "file://" + gitdir, "rev": sha})
            if status != 202:
                raise RuntimeError(f"queueing {name}: HTTP {status} {data[:500]!r}")
            ids[json.loads(data)["job"]] = name
        c.close()
    finally:
        stop(server)
    return ids


# ---------------------------------------------------------------- 1. index + search

def index_once(opts, ken, pg, home, db, name, gitdir, sha):
    """One `ken index --json` (into db, or the embedded home): its numbers, or its error."""
    url = pg.url(db) if db else None
    t0 = time.perf_counter()
    try:
        rep = ken.json(home, url, ["index", gitdir, "--rev", sha, "--name", name], timeout=opts.index_timeout)
    except TimeoutError as e:
        msg = str(e)
        if db:
            busy = pg.activity(db)
            msg += "; PostgreSQL was then running: " + ("; ".join(
                f"[{st}, {sec} s] {q}" for sec, st, q in busy) or "nothing")
            pg.cancel(db)  # the killed client's query would run on
        return {"error": msg, "wall": time.perf_counter() - t0}
    except RuntimeError as e:
        return {"error": str(e), "wall": time.perf_counter() - t0}
    wall = time.perf_counter() - t0
    return {
        "wall": wall, "files": rep["files"], "chunks": rep["chunks"], "elapsed_ms": rep.get("elapsed_ms"),
        "people_s": (rep.get("people") or {}).get("seconds", 0.0),
        "graph_s": (rep.get("graph") or {}).get("seconds", 0.0),
        "embedded": (rep.get("embed") or {}).get("embedded"),
    }


def section_index(opts, ken, pg, repos, workdir, evalq):
    res = {"rows": [], "home": os.path.join(workdir, "embedded-home"), "pg_home": os.path.join(workdir, "pg-home")}
    res["db"] = pg.create("index")
    res["url"] = pg.url(res["db"])
    for name, (gitdir, sha) in repos.items():
        row = {"repo": name, "commit": sha}
        for store, db in (("embedded", None), ("postgres", res["db"])):
            row[store] = r = index_once(opts, ken, pg, res["home"] if db is None else res["pg_home"], db,
                                        name, gitdir, sha)
            if "error" in r:
                log(f"FAILED to index {name} into {store} after {r['wall']:.0f}s: {r['error']}")
                if db and opts.retry_alone:
                    # again, alone in a fresh database: is it the shared database?
                    alone = pg.create("alone_" + re.sub(r"\W", "_", name).lower())
                    row["postgres_alone"] = index_once(opts, ken, pg, os.path.join(workdir, "alone-home"), alone,
                                                       name, gitdir, sha)
                    row["postgres_alone"]["db"] = alone
                    a = row["postgres_alone"]
                    log(f"  alone in a fresh database: " + (f"FAILED: {a['error']}" if "error" in a else
                                                            f"{a['chunks']} chunks in {a['wall']:.1f}s"))
                continue
            log(f"indexed {name} into {store}: {r['files']} files, {r['chunks']} chunks in {r['wall']:.1f}s")
        res["rows"].append(row)
    # the later sections use the repositories that both stores indexed (into the shared database)
    res["ok"] = [r["repo"] for r in res["rows"] if "error" not in r["embedded"] and "error" not in r["postgres"]]
    res["failed"] = [r for r in res["rows"] if r["repo"] not in res["ok"]]
    return res


def section_search(opts, ken, pg, idx, repos, evalq, workdir):
    res = {"eval": {}, "http": {}, "queries": {}}
    repos = {n: repos[n] for n in idx["ok"]}
    # ken eval: in-process, the eval queries of the repositories that have some
    with_q = [n for n in repos if evalq.get(n)]
    if with_q and "eval" not in opts.skip:
        qfile = os.path.join(workdir, "eval-queries.jsonl")
        with open(qfile, "w") as f:
            for n in with_q:
                for q in evalq[n][: opts.max_queries or None]:
                    f.write(json.dumps(q) + "\n")
        args = ["eval", qfile, "--mode", opts.mode]
        for n in with_q:
            args += ["--repo", f"{n}={repos[n][0]}"]
        # PostgreSQL twice: as `ken index` left the database (autovacuum may not
        # have analyzed the new rows yet), then after a manual ANALYZE
        runs = (("embedded", idx["home"], None), ("postgres-fresh", idx["pg_home"], idx["url"]),
                ("postgres", idx["pg_home"], idx["url"]))
        for store, home, url in runs:
            if store == "postgres":
                t0 = time.perf_counter()
                pg.psql(idx["db"], "ANALYZE")
                res["analyze_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            out = ken.json(home, url, args)
            res["eval"][store] = {"wall": time.perf_counter() - t0, "out": out}
            log(f"ken eval on {store}: {out['overall']['queries']} queries, p50 {out['overall']['p50_ms']} ms, "
                f"{time.perf_counter() - t0:.1f}s in all")
    # HTTP: sequential searches to a warm server per store
    qs = {n: http_queries(n, g, s, evalq, opts.http_queries) for n, (g, s) in repos.items()}
    res["queries"] = qs
    for store, home, url in (("embedded", idx["home"], None), ("postgres", idx["pg_home"], idx["url"])):
        token = ken.token(home, url, "read")
        server, addr = ken.serve(home, url, f"search-{store}")
        try:
            c = Http(addr, token)
            for n, q in qs.items():  # warm: every repository once
                c.request("GET", search_path(q[0], n, opts.mode))
            lat, errors = {}, 0
            for n, q in qs.items():
                for text in q:
                    status, _, ms = c.request("GET", search_path(text, n, opts.mode))
                    if status != 200:
                        errors += 1
                    lat.setdefault(n, []).append(ms)
            c.close()
            res["http"][store] = {"lat": lat, "errors": errors}
            allms = [x for v in lat.values() for x in v]
            log(f"HTTP search on {store}: {len(allms)} requests, p50 {pct(allms, 50):.1f} ms")
        finally:
            stop(server)
    return res


# ---------------------------------------------------------------- 2. workers

def section_workers(opts, ken, pg, repos, names, workdir, idx):
    out = []
    items = [(n, repos[n][0], repos[n][1]) for n in names]
    for nworkers in opts.workers:
        db = pg.create(f"workers{nworkers}")
        url = pg.url(db)
        home = os.path.join(workdir, f"workers{nworkers}-home")
        if opts.preclone:
            for n, g, _ in items:
                preclone(home, n, g)
        ids = queue_jobs(ken, home, url, items, f"workers{nworkers}")
        log(f"{nworkers} worker(s): {len(ids)} jobs queued, starting the workers")
        t0 = time.perf_counter()
        procs = [ken.worker(home, url, f"{nworkers}-{i}") for i in range(nworkers)]
        polls = 0
        try:
            while True:
                time.sleep(opts.poll)
                jobs = ken.jobs(home, url)
                polls += 1
                mine = [jobs[i] for i in ids if i in jobs]
                if len(mine) == len(ids) and all(j["state"] in ("done", "failed") for j in mine):
                    wall = time.perf_counter() - t0
                    break
                if time.perf_counter() - t0 > opts.job_timeout:
                    raise RuntimeError(f"workers: jobs not done after {opts.job_timeout}s: "
                                       + ", ".join(f"{j['repo']} {j['state']}" for j in mine))
                dead = [p for p in procs if p.poll() is not None]
                if dead:
                    raise RuntimeError(f"a worker exited ({dead[0].returncode}): {tail(dead[0].logfile)}")
        finally:
            for p in procs:
                stop(p)
        row = {"workers": nworkers, "wall": wall, "jobs": [], "db": db}
        clean = {r["repo"]: r["postgres"]["chunks"] for r in idx["rows"] if r["repo"] in idx["ok"]} if idx else {}
        for i, n in ids.items():
            j = jobs[i]
            r = j.get("result") or {}
            row["jobs"].append({
                "repo": n, "state": j["state"], "error": j.get("error"), "attempts": j.get("attempts"),
                "elapsed_s": (r.get("elapsed_ms") or 0) / 1000, "files": r.get("files"), "chunks": r.get("chunks"),
                "started": j.get("started_at"), "finished": j.get("finished_at"),
                "same_chunks_as_cli": (r.get("chunks") == clean[n]) if n in clean else None,
            })
        log(f"{nworkers} worker(s): all {len(ids)} jobs ended in {wall:.1f}s")
        out.append(row)
    return out


# ---------------------------------------------------------------- 3. kill -9

COUNTS = {
    "files": "SELECT count(*) FROM files WHERE repo = {r}",
    "chunks": "SELECT count(*) FROM chunks WHERE repo = {r}",
    "symbols": "SELECT count(*) FROM symbols WHERE repo = {r}",
    "lex_files": "SELECT count(*) FROM lex_files WHERE repo = {r}",
    "lex_terms": "SELECT count(*) FROM lex_terms WHERE repo = {r}",
    "lex_lens": "SELECT count(*) FROM lex_lens WHERE repo = {r}",
    "blobs": "SELECT count(*) FROM blobs WHERE repo = {r}",
    "facts": "SELECT count(*) FROM facts WHERE repo = {r}",
    "edges": "SELECT count(*) FROM edges WHERE repo = {r}",
    "commits": "SELECT count(*) FROM commits WHERE repo = {r}",
    "commit_files": "SELECT count(*) FROM commit_files WHERE repo = {r}",
    "blame": "SELECT count(*) FROM blame WHERE repo = {r}",
}
ANOMALIES = {
    "duplicate files (repo, path)":
        "SELECT count(*) - count(DISTINCT path) FROM files WHERE repo = {r}",
    "duplicate chunks (path, lines, bytes, kind, qualname)":
        "SELECT coalesce(sum(c - 1), 0) FROM (SELECT count(*) c FROM chunks WHERE repo = {r} "
        "GROUP BY path, start_line, end_line, start_byte, end_byte, kind, coalesce(qualname, '')) t",
    "chunks whose path is not in files":
        "SELECT count(*) FROM chunks c WHERE repo = {r} AND NOT EXISTS "
        "(SELECT 1 FROM files f WHERE f.repo = {r} AND f.path = c.path)",
    "duplicate symbols (path, qualname, kind, lines)":
        "SELECT coalesce(sum(c - 1), 0) FROM (SELECT count(*) c FROM symbols WHERE repo = {r} "
        "GROUP BY path, qualname, kind, start_line, end_line) t",
    "symbols whose chunk is gone":
        "SELECT count(*) FROM symbols s WHERE repo = {r} AND NOT EXISTS "
        "(SELECT 1 FROM chunks c WHERE c.repo = {r} AND c.id = s.chunk_id)",
    "duplicate lex_files (path)":
        "SELECT count(*) - count(DISTINCT path) FROM lex_files WHERE repo = {r}",
    "BM25 chunk documents whose chunk is gone":
        "SELECT count(DISTINCT doc) FROM lex_terms t WHERE repo = {r} AND NOT files AND NOT EXISTS "
        "(SELECT 1 FROM chunks c WHERE c.repo = {r} AND c.id = t.doc)",
    "BM25 file documents whose file row is gone":
        "SELECT count(DISTINCT doc) FROM lex_terms t WHERE repo = {r} AND files AND NOT EXISTS "
        "(SELECT 1 FROM lex_files l WHERE l.repo = {r} AND l.doc = t.doc)",
    "duplicate blame ranges":
        "SELECT coalesce(sum(c - 1), 0) FROM (SELECT count(*) c FROM blame WHERE repo = {r} "
        "GROUP BY path, start_line, end_line, sha) t",
    "duplicate commit_files rows":
        "SELECT coalesce(sum(c - 1), 0) FROM (SELECT count(*) c FROM commit_files WHERE repo = {r} "
        "GROUP BY sha, path, status) t",
}


def db_report(pg, db, name):
    rid = pg.psql(db, f"SELECT id FROM repos WHERE key = '{dir_name(name)}'")
    if not rid:
        raise RuntimeError(f"no repository {dir_name(name)} in {db}")
    r = rid[0][0]
    out = {}
    for group in (COUNTS, ANOMALIES):
        keys = list(group)
        sql = "SELECT " + ", ".join(f"({group[k].format(r=r)})" for k in keys)
        out.update(zip(keys, map(int, pg.psql(db, sql)[0])))
    return out


def section_kill(opts, ken, pg, repos, name, workdir, idx):
    gitdir, sha = repos[name]
    env = dict(ken.env, KEN_JOB_STALE_SECS=str(opts.stale_secs))
    db = pg.create("kill")
    url = pg.url(db)
    home = os.path.join(workdir, "kill-home")
    preclone(home, name, gitdir)
    (job,) = queue_jobs(ken, home, url, [(name, gitdir, sha)], "kill")
    res = {"repo": name, "commit": sha, "stale_secs": opts.stale_secs, "events": []}
    first = ken.worker(home, url, "kill-1", env)
    second = None
    t_start = time.perf_counter()
    try:
        # wait until the job runs and has made progress
        while True:
            time.sleep(0.3)
            j = ken.jobs(home, url, env)[job]
            pr = j.get("progress") or {}
            ran = time.perf_counter() - t_start
            if j["state"] in ("done", "failed"):
                res["skipped"] = (f"the job ended ({j['state']}) before the kill: use a larger repository "
                                  "(--kill-repo), a lower --kill-at or --kill-after")
                return res
            if first.poll() is not None:
                raise RuntimeError(f"the first worker exited: {tail(first.logfile)}")
            if j["state"] == "running" and (
                    (opts.kill_after and ran >= opts.kill_after)
                    or (not opts.kill_after and pr.get("phase") == "files" and pr.get("total")
                        and pr.get("done", 0) >= opts.kill_at * pr["total"])):
                break
            if ran > opts.job_timeout:
                raise RuntimeError(f"the job made no progress in {opts.job_timeout}s: {j}")
        os.killpg(first.pid, signal.SIGKILL)
        t_kill = time.perf_counter()
        first.wait()
        PROCS.remove(first)
        res["at_kill"] = {"progress": pr, "running_s": t_kill - t_start, "attempts": j.get("attempts"),
                          "started_at": j.get("started_at")}
        log(f"SIGKILLed the worker {t_kill - t_start:.1f}s after its start, progress {pr}")
        second = ken.worker(home, url, "kill-2", env)
        state, started = j["state"], j.get("started_at")
        while True:
            time.sleep(opts.poll)
            j = ken.jobs(home, url, env)[job]
            now = time.perf_counter() - t_kill
            if j["state"] != state or j.get("started_at") != started:
                res["events"].append((round(now, 1), j["state"], j.get("attempts"), j.get("progress")))
                state, started = j["state"], j.get("started_at")
            if j["state"] in ("done", "failed"):
                res["recovery_s"] = now
                break
            if second.poll() is not None:
                raise RuntimeError(f"the second worker exited: {tail(second.logfile)}")
            if now > opts.job_timeout:
                raise RuntimeError(f"the job did not finish {opts.job_timeout}s after the kill: {j}")
    finally:
        for p in (first, second):
            if p is not None:
                stop(p)
    res["final"] = {k: j.get(k) for k in ("state", "attempts", "error")}
    res["result"] = j.get("result") or {}
    log(f"job {j['state']} {res['recovery_s']:.1f}s after the kill (attempts {j.get('attempts')})")
    # a clean index of the same commit: section 1's database, else a fresh one
    row = next((r for r in idx["rows"] if r["repo"] == name), None) if idx else None
    if row and "error" not in row["postgres"]:
        clean_db = idx["db"]
        res["clean_wall"] = round(row["postgres"]["wall"], 1)
    elif row and row.get("postgres_alone") and "error" not in row["postgres_alone"]:
        clean_db = row["postgres_alone"]["db"]
        res["clean_wall"] = round(row["postgres_alone"]["wall"], 1)
    else:
        clean_db = pg.create("clean")
        t0 = time.perf_counter()
        ken.run(os.path.join(workdir, "clean-home"), pg.url(clean_db), ["index", gitdir, "--rev", sha, "--name", name])
        res["clean_wall"] = round(time.perf_counter() - t0, 1)
    res["killed"] = db_report(pg, db, name)
    res["clean"] = db_report(pg, clean_db, name)
    return res


# ---------------------------------------------------------------- 4. concurrent searches

WRK_LUA = """
local reqs = {
%s
}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", reqs[(i %% #reqs) + 1])
end
done = function(summary, latency, requests)
  local q = {}
  for k = 1, 999 do q[#q + 1] = string.format("%%.1f", latency:percentile(k / 10)) end
  local e = summary.errors
  io.write(string.format(
    'KBENCH {"requests":%%d,"duration_us":%%d,"connect":%%d,"read":%%d,"write":%%d,"status":%%d,"timeout":%%d,"q":[%%s]}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout, table.concat(q, ",")))
end
"""


def wrk_many(targets, paths, opts, workdir):
    """Run one wrk per (addr, token, connections) at once; merged stats."""
    script = os.path.join(workdir, "search.lua")
    with open(script, "w") as f:
        f.write(WRK_LUA % ",\n".join(json.dumps(p) for p in paths))
    procs = []
    for k, (addr, token, conns) in enumerate(targets):
        cmd = ["wrk", "-t", "1", "-c", str(conns), "-d", f"{opts.duration}s", "--timeout", "10s",
               "-s", script, "-H", f"Authorization: Bearer {token}", f"http://{addr}"]
        procs.append(spawn(cmd, os.path.join(workdir, f"wrk-{k}.log"), os.environ.copy()))
    parts = []
    for p in procs:
        p.wait()
        PROCS.remove(p)
        m = re.search(r"KBENCH (\{.*\})", tail(p.logfile, 1 << 20))
        if not m:
            raise RuntimeError(f"wrk failed: {tail(p.logfile)}")
        parts.append(json.loads(m.group(1)))
        os.unlink(p.logfile)
    samples = []  # (latency_us, weight): each wrk's quantiles, weighted by its requests
    for d in parts:
        w = d["requests"] / len(d["q"])
        samples += [(float(v), w) for v in d["q"]]
    samples.sort()
    total_w = sum(w for _, w in samples)

    def q(p):
        acc = 0
        for v, w in samples:
            acc += w
            if acc >= p / 100 * total_w:
                return v / 1000
        return samples[-1][0] / 1000 if samples else float("nan")

    secs = max(d["duration_us"] for d in parts) / 1e6
    req = sum(d["requests"] for d in parts)
    return {
        "requests": req, "rps": sum(d["requests"] / (d["duration_us"] / 1e6) for d in parts),
        "p50": q(50), "p95": q(95), "p99": q(99), "secs": secs,
        "non2xx": sum(d["status"] for d in parts),
        "socket_errors": sum(d["connect"] + d["read"] + d["write"] + d["timeout"] for d in parts),
        "per_target": [d["requests"] for d in parts],
    }


def threads_many(targets, paths, opts):
    """Without wrk: a thread per connection, each looping until the deadline."""
    lat, errors, counts = [], [0], [0] * len(targets)
    deadline = time.time() + opts.duration

    def loop(k, addr, token, seed):
        c, i, mine = Http(addr, token), seed, []
        while time.time() < deadline:
            i += 1
            try:
                status, _, ms = c.request("GET", paths[i % len(paths)])
                mine.append(ms)
                if status != 200:
                    errors[0] += 1
            except OSError:
                errors[0] += 1
        c.close()
        return k, mine

    jobs = [(k, addr, token, s * 7) for k, (addr, token, conns) in enumerate(targets) for s in range(conns)]
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(len(jobs)) as ex:
        for k, mine in ex.map(lambda a: loop(*a), jobs):
            lat += mine
            counts[k] += len(mine)
    secs = time.perf_counter() - t0
    return {"requests": len(lat), "rps": len(lat) / secs, "p50": pct(lat, 50), "p95": pct(lat, 95),
            "p99": pct(lat, 99), "secs": secs, "non2xx": errors[0], "socket_errors": 0, "per_target": counts}


def section_concurrency(opts, ken, idx, queries, workdir):
    paths = [search_path(q, n, opts.mode) for n, qs in queries.items() for q in qs]
    # interleave the repositories
    paths = [p for group in zip(*[[search_path(q, n, opts.mode) for q in qs] for n, qs in queries.items()])
             for p in group] or paths
    have_wrk = shutil.which("wrk") is not None and not opts.no_wrk
    load = (lambda targets: wrk_many(targets, paths, opts, workdir)) if have_wrk else \
        (lambda targets: threads_many(targets, paths, opts))
    half = opts.connections // 2
    rows = []
    pg_token = ken.token(idx["pg_home"], idx["url"], "read")
    emb_token = ken.token(idx["home"], None, "read")
    servers = []
    try:
        a = ken.serve(idx["pg_home"], idx["url"], "pg-a")
        b = ken.serve(idx["pg_home"], idx["url"], "pg-b")
        servers += [a[0], b[0]]
        for addr in (a[1], b[1]):
            c = Http(addr, pg_token)
            for p in paths[: len(queries)]:
                c.request("GET", p)
            c.close()
        log(f"load: PostgreSQL, one server, {opts.connections} connections, {opts.duration}s")
        rows.append(("PostgreSQL, one server (baseline)", load([(a[1], pg_token, half), (a[1], pg_token, opts.connections - half)])))
        rows[-1][1]["rss"] = [rss(a[0].pid)]
        log(f"load: PostgreSQL, two servers, {opts.connections} connections, {opts.duration}s")
        rows.append(("PostgreSQL, two servers on one database", load([(a[1], pg_token, half), (b[1], pg_token, opts.connections - half)])))
        rows[-1][1]["rss"] = [rss(a[0].pid), rss(b[0].pid)]
        for p in servers:
            stop(p)
        servers = []
        e = ken.serve(idx["home"], None, "emb")
        servers.append(e[0])
        c = Http(e[1], emb_token)
        for p in paths[: len(queries)]:
            c.request("GET", p)
        c.close()
        log(f"load: embedded store, one server, {opts.connections} connections, {opts.duration}s")
        rows.append(("embedded store, one server (baseline)", load([(e[1], emb_token, half), (e[1], emb_token, opts.connections - half)])))
        rows[-1][1]["rss"] = [rss(e[0].pid)]
    finally:
        for p in servers:
            stop(p)
    return {"rows": rows, "tool": "wrk (two processes, one thread each)" if have_wrk else "Python threads",
            "paths": len(paths)}


def rss(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) // 1024
    except (OSError, AttributeError):
        return None


# ---------------------------------------------------------------- report

def machine():
    def out(cmd):
        try:
            return sh(cmd).strip()
        except (OSError, subprocess.CalledProcessError) as e:
            return f"({e})"
    return {"nproc": out(["nproc"]), "free": out(["free", "-g"]), "uname": out(["uname", "-r"])}


def fmt(v, d=1):
    return "—" if v is None else f"{v:.{d}f}"


def report(opts, argv, info, idx, search, workers, kill, conc, started, pg_version):
    L = ["# PostgreSQL store benchmark", ""]
    L += ["Command:", "", "```", "python3 " + " ".join(shlex_quote(a) for a in argv), "```", ""]
    L += [f"Machine: {info['nproc']} CPUs, kernel {info['uname']}, PostgreSQL {pg_version} "
          f"(scripts/postgres.sh: fsync=off, synchronous_commit=off), `ken --version`: {info['ken']}, "
          f"embedder `{opts.embedder}`, search mode `{opts.mode}`. Load average at the start {info['load0']}, "
          f"at the end {loadavg()}; the run took {(time.time() - started) / 60:.1f} min. "
          "The machine is shared: compare numbers of the same run only.", "", "```", info["free"], "```", ""]

    L += ["## 1. Indexing, embedded store vs PostgreSQL", "",
          "Full index of each repository (`ken index --json`, fresh home / fresh database, repositories one after "
          "the other, embedded first). Wall = the whole process; history+blame = `people.seconds` of the report "
          "(part of the wall).", "",
          "| repository | commit | files | chunks | embedded s | PostgreSQL s | PG / embedded | files/s emb | files/s PG "
          "| chunks/s emb | chunks/s PG | history+blame s emb / PG |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    te = tp = 0
    for r in idx["rows"]:
        e, p = r["embedded"], r["postgres"]
        if r["repo"] not in idx["ok"]:
            L.append(f"| {r['repo']} | {r['commit'][:10]} | {e.get('files', '—')} | {e.get('chunks', '—')} | "
                     + " | ".join("**failed**" if "error" in x else f"{x['wall']:.1f}" for x in (e, p))
                     + " | | | | | | |")
            continue
        te += e["wall"]
        tp += p["wall"]
        same = "" if (e["files"], e["chunks"]) == (p["files"], p["chunks"]) else \
            f" (PG: {p['files']} files, {p['chunks']} chunks)"
        L.append(f"| {r['repo']} | {r['commit'][:10]} | {e['files']} | {e['chunks']}{same} | {e['wall']:.1f} | "
                 f"{p['wall']:.1f} | {p['wall'] / e['wall']:.2f} | {e['files'] / e['wall']:.0f} | "
                 f"{p['files'] / p['wall']:.0f} | {e['chunks'] / e['wall']:.0f} | {p['chunks'] / p['wall']:.0f} | "
                 f"{e['people_s']:.1f} / {p['people_s']:.1f} |")
    ok = [r for r in idx["rows"] if r["repo"] in idx["ok"]]
    L.append(f"| **all indexed by both** | | {sum(r['embedded']['files'] for r in ok)} | "
             f"{sum(r['embedded']['chunks'] for r in ok)} | {te:.1f} | {tp:.1f} | {tp / te:.2f} | | | | | |")
    L.append("")
    for r in idx["failed"]:
        for store in ("embedded", "postgres"):
            if "error" in r[store]:
                L += [f"**{r['repo']} failed to index into the {store} store"
                      + (" (the database shared by all the repositories)" if store == "postgres" else "")
                      + f"** after {r[store]['wall']:.1f} s (left out of sections 1b, 2 and 4):", "",
                      "```", r[store]["error"], "```", ""]
        a = r.get("postgres_alone")
        if a:
            if "error" in a:
                L += ["Again, alone in a fresh database: failed too after " f"{a['wall']:.1f} s:", "",
                      "```", a["error"], "```", ""]
            else:
                e = r["embedded"]
                L += [f"Again, alone in a fresh database: {a['files']} files, {a['chunks']} chunks in "
                      f"**{a['wall']:.1f} s** ({a['files'] / a['wall']:.0f} files/s, {a['chunks'] / a['wall']:.0f} "
                      f"chunks/s, history+blame {a['people_s']:.1f} s)"
                      + (f"; embedded: {e['wall']:.1f} s, PG / embedded {a['wall'] / e['wall']:.2f}."
                         if "error" not in e else "."), ""]

    if search:
        L += ["## 1b. Search latency, embedded store vs PostgreSQL", ""]
        if search["eval"]:
            ev_e, ev_p = search["eval"]["embedded"], search["eval"]["postgres"]
            L += [f"`ken eval --mode {opts.mode}` on the commits_dev queries"
                  + (f" (first {opts.max_queries} per repository)" if opts.max_queries else "")
                  + ": p50/p95 are ken's own timing of the file-level search of each query, in-process (no process "
                  "start); `eval wall` is the whole `ken eval` process (it also runs a chunk-level search per query "
                  "for the symbol metrics). MRR@10 shows that both stores rank alike.", "",
                  "| repository | queries | embedded p50 / p95 ms | PostgreSQL p50 / p95 ms | MRR@10 emb / PG "
                  "| symbol hit@1 emb / PG |", "|---|---|---|---|---|---|"]
            for n in ev_e["out"]["repos"]:
                a, b = ev_e["out"]["repos"][n], ev_p["out"]["repos"].get(n, {})
                L.append(f"| {n} | {a['queries']} | {a['p50_ms']:.1f} / {a['p95_ms']:.1f} | "
                         f"{b.get('p50_ms', 0):.1f} / {b.get('p95_ms', 0):.1f} | {a['mrr@10']:.3f} / "
                         f"{b.get('mrr@10', 0):.3f} | {a.get('symbol_hit@1', 0):.3f} / {b.get('symbol_hit@1', 0):.3f} |")
            a, b = ev_e["out"]["overall"], ev_p["out"]["overall"]
            L.append(f"| **all** | {a['queries']} | {a['p50_ms']:.1f} / {a['p95_ms']:.1f} | {b['p50_ms']:.1f} / "
                     f"{b['p95_ms']:.1f} | {a['mrr@10']:.3f} / {b['mrr@10']:.3f} | "
                     f"{a.get('symbol_hit@1', 0):.3f} / {b.get('symbol_hit@1', 0):.3f} |")
            fr = search["eval"]["postgres-fresh"]
            L += ["", f"The PostgreSQL columns are measured after a manual `ANALYZE` ({search['analyze_s']:.1f} s). "
                  f"Run right after indexing, before it (as `ken index` leaves the database), the same eval gave "
                  f"p50 {fr['out']['overall']['p50_ms']:.1f} ms, p95 {fr['out']['overall']['p95_ms']:.1f} ms. "
                  f"`ken eval` wall (the whole process): embedded {ev_e['wall']:.1f} s; PostgreSQL "
                  f"{fr['wall']:.1f} s right after indexing, {ev_p['wall']:.1f} s after ANALYZE.", ""]
        h_e, h_p = search["http"]["embedded"], search["http"]["postgres"]
        L += ["GET /api/v1/search (n=10, chunks, mode " + opts.mode + ") one request at a time to a warm "
              "`ken serve --no-jobs` per store (one keep-alive connection; time = request to last byte). Queries: "
              "commit subjects (commits_dev's `query_subject`, or for repositories without eval queries the "
              "subjects of their own non-merge history before the commit)."
              + (" PostgreSQL after the ANALYZE above." if search["eval"] else ""), "",
              "| repository | queries | embedded p50 / p95 ms | PostgreSQL p50 / p95 ms | PG / embedded (p50) |",
              "|---|---|---|---|---|"]
        for n in h_e["lat"]:
            a, b = h_e["lat"][n], h_p["lat"][n]
            L.append(f"| {n} | {len(a)} | {pct(a, 50):.1f} / {pct(a, 95):.1f} | {pct(b, 50):.1f} / "
                     f"{pct(b, 95):.1f} | {pct(b, 50) / pct(a, 50):.1f}x |")
        a = [x for v in h_e["lat"].values() for x in v]
        b = [x for v in h_p["lat"].values() for x in v]
        L.append(f"| **all** | {len(a)} | {pct(a, 50):.1f} / {pct(a, 95):.1f} | {pct(b, 50):.1f} / {pct(b, 95):.1f} "
                 f"| {pct(b, 50) / pct(a, 50):.1f}x |")
        L += ["", f"Non-200 answers: embedded {h_e['errors']}, PostgreSQL {h_p['errors']}.", ""]

    if workers:
        names = [j["repo"] for j in workers[0]["jobs"]]
        L += ["## 2. Workers sharing the PostgreSQL queue", "",
              f"{len(names)} index jobs ({', '.join(names)}), queued through POST /api/v1/repos/NAME/index "
              "(file:// source, with KEN_ALLOW_PRIVATE_URLS=1) by a `ken serve --no-jobs` stopped before the workers "
              f"start; a fresh database per row; clones made beforehand ({'yes' if opts.preclone else 'no'}). "
              f"Wall = from starting the workers to every job done (polled with `ken jobs list` every {opts.poll} s). "
              "Sum of jobs = the jobs' own `elapsed_ms`.", "",
              "| workers | jobs done | wall s | sum of jobs s | sum / wall | speed-up vs first row | per job s |",
              "|---|---|---|---|---|---|---|"]
        base = workers[0]["wall"]
        for w in workers:
            done = sum(j["state"] == "done" for j in w["jobs"])
            s = sum(j["elapsed_s"] for j in w["jobs"])
            per = ", ".join(f"{j['repo'].split('/')[-1]} {j['elapsed_s']:.1f}" for j in w["jobs"])
            L.append(f"| {w['workers']} | {done}/{len(w['jobs'])} | {w['wall']:.1f} | {s:.1f} | {s / w['wall']:.2f} | "
                     f"{base / w['wall']:.2f}x | {per} |")
        bad = [(w["workers"], j) for w in workers for j in w["jobs"] if j["state"] != "done" or j["attempts"] != 1
               or j["same_chunks_as_cli"] is False]
        L.append("")
        if bad:
            for n, j in bad:
                L.append(f"- {n} worker(s), {j['repo']}: state {j['state']}, attempts {j['attempts']}, "
                         f"error {j['error']!r}, chunks {j['chunks']} (same as the CLI index: {j['same_chunks_as_cli']})")
        else:
            L.append("Every job done at the first attempt, with the same number of chunks as the CLI index of section 1.")
        L.append("")

    if kill:
        L += ["## 3. A worker killed with SIGKILL mid-job", ""]
        if kill.get("skipped"):
            L += [f"Skipped: {kill['skipped']}.", ""]
        else:
            ak = kill["at_kill"]
            r = kill["result"]
            L += [f"One job indexing {kill['repo']} at {kill['commit'][:10]} (a fresh database, clone made beforehand), "
                  f"`KEN_JOB_STALE_SECS={kill['stale_secs']}` for both workers. The first worker was SIGKILLed "
                  f"{ak['running_s']:.1f} s after its start, at progress {json.dumps(ak['progress'])}; a second "
                  "worker was started at once.", "",
                  f"- **time from the kill to the job done: {kill['recovery_s']:.1f} s** "
                  f"(the job's final state {kill['final']['state']}, attempts {kill['final']['attempts']}, "
                  f"error {kill['final']['error']!r})",
                  f"- the second run's report: {r.get('files')} files, processed {r.get('processed')}, "
                  f"added {r.get('added')}, {r.get('chunks')} chunks, {fmt((r.get('elapsed_ms') or 0) / 1000)} s",
                  f"- for comparison, a clean index of the same commit by the CLI into PostgreSQL took {kill['clean_wall']} s "
                  "(its tables are the clean side below)",
                  "- state changes after the kill (s after the kill, state, attempts, progress): "
                  + "; ".join(f"{t} {s} {a} {json.dumps(p)}" for t, s, a, p in kill["events"]), "",
                  "| rows | after kill + recovery | clean index | difference |", "|---|---|---|---|"]
            for k in COUNTS:
                a, b = kill["killed"][k], kill["clean"][k]
                L.append(f"| {k} | {a} | {b} | {'**' + str(a - b) + '**' if a != b else 0} |")
            L += ["", "| anomaly | after kill + recovery | clean index |", "|---|---|---|"]
            for k in ANOMALIES:
                a, b = kill["killed"][k], kill["clean"][k]
                L.append(f"| {k} | {'**' + str(a) + '**' if a else 0} | {b} |")
            L.append("")

    if conc:
        L += ["## 4. Concurrent searches: two servers on one database", "",
              f"{opts.connections} connections for {opts.duration} s per row ({conc['tool']}, half of the connections "
              f"each; 10 s timeout), GET /api/v1/search over {conc['paths']} queries of all the repositories "
              f"(cycled), n=10, mode {opts.mode}. Each server is `ken serve --no-jobs` on its own port; the two "
              "PostgreSQL servers share one --store URL. Percentiles merge the two load generators' latency "
              "distributions (weighted by their request counts).", "",
              "| setup | requests | req/s | p50 ms | p95 ms | p99 ms | non-2xx | socket errors | requests per server "
              "| server RSS MiB |", "|---|---|---|---|---|---|---|---|---|---|"]
        for label, s in conc["rows"]:
            L.append(f"| {label} | {s['requests']} | {s['rps']:.0f} | {s['p50']:.1f} | {s['p95']:.1f} | "
                     f"{s['p99']:.1f} | {s['non2xx']} | {s['socket_errors']} | "
                     f"{' + '.join(map(str, s['per_target'])) if 'two' in label else s['requests']} | "
                     f"{', '.join(map(str, s.get('rss', []))) or '—'} |")
        L.append("")
    return "\n".join(L) + "\n"


def shlex_quote(a):
    import shlex
    return shlex.quote(a)


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ken", required=True, help="the ken binary")
    ap.add_argument("--repo", action="append", required=True, help="NAME=GITDIR (repeatable)")
    ap.add_argument("--rev", default="HEAD", help="commit for repositories not in commits_dev.manifest.json")
    ap.add_argument("--embedder", default="off", choices=["off", "local", "static", "http"])
    ap.add_argument("--mode", help="search mode (default: lexical with --embedder off, else hybrid)")
    ap.add_argument("--pg-url", help="a PostgreSQL server to use (postgres://user@host:port/db; "
                    "databases are created and dropped on it) instead of starting one")
    ap.add_argument("--pg-bin", help="where psql is (default: the scripts/postgres.sh install)")
    ap.add_argument("--max-queries", type=int, default=0, help="ken eval: first N queries per repository (0: all)")
    ap.add_argument("--http-queries", type=int, default=40, help="HTTP search queries per repository")
    ap.add_argument("--workers", default="1,3", help="worker counts to compare (comma-separated)")
    ap.add_argument("--worker-repos", help="repositories for the worker jobs (comma-separated names; "
                    "default: every --repo with at most --worker-max-files files)")
    ap.add_argument("--worker-max-files", type=int, default=1000)
    ap.add_argument("--no-preclone", dest="preclone", action="store_false",
                    help="let the jobs clone (the clone's time is then in the job's)")
    ap.add_argument("--kill-repo", help="repository of the kill test (default: the one with the most files)")
    ap.add_argument("--kill-at", type=float, default=0.5, help="kill when this share of the files is done")
    ap.add_argument("--kill-after", type=float, default=0, help="or: kill this many seconds after the worker starts")
    ap.add_argument("--stale-secs", type=int, default=10, help="KEN_JOB_STALE_SECS for the kill test")
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--duration", type=int, default=30, help="seconds of load per row (section 4)")
    ap.add_argument("--no-wrk", action="store_true", help="use Python threads even if wrk is installed")
    ap.add_argument("--poll", type=float, default=0.5, help="seconds between job polls")
    ap.add_argument("--job-timeout", type=float, default=900, help="most seconds a job wait may take")
    ap.add_argument("--index-timeout", type=float, default=300,
                    help="most seconds one `ken index` of section 1 may take (then it is killed, and what "
                         "PostgreSQL was running is reported)")
    ap.add_argument("--no-retry-alone", dest="retry_alone", action="store_false",
                    help="do not index a repository that failed in the shared database again in a fresh one")
    ap.add_argument("--skip", default="", help="comma-separated: eval,search,workers,kill,concurrency")
    ap.add_argument("--quick", action="store_true",
                    help="short settings for a trial: 10 queries per repository, 5 s of load per row, kill at 30%%")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs, homes)")
    ap.add_argument("--out", help="write the Markdown report here")
    opts = ap.parse_args()
    opts.ken = os.path.abspath(opts.ken)
    opts.skip = set(filter(None, opts.skip.split(",")))
    opts.workers = [int(x) for x in opts.workers.split(",") if x]
    opts.mode = opts.mode or ("lexical" if opts.embedder == "off" else "hybrid")
    if opts.quick:
        opts.max_queries = opts.max_queries or 10
        opts.http_queries = min(opts.http_queries, 10)
        opts.duration = min(opts.duration, 5)
        opts.kill_at = min(opts.kill_at, 0.3)
    started = time.time()

    man = manifest()
    evalq = eval_queries()
    repos = {}
    for spec in opts.repo:
        name, gitdir = spec.split("=", 1)
        gitdir = os.path.abspath(gitdir)
        rev = man[name]["base_sha"] if name in man else opts.rev
        repos[name] = (gitdir, sh(["git", "--git-dir", gitdir, "rev-parse", rev + "^{commit}"]).strip())

    info = machine()
    info["ken"] = sh([opts.ken, "--version"]).strip()
    info["load0"] = loadavg()
    workdir = tempfile.mkdtemp(prefix="kbench-pg-")
    os.chmod(workdir, 0o755)  # the server's user must reach the data directory under it
    log(f"work directory {workdir}")

    def on_signal(sig, _frame):
        raise KeyboardInterrupt(f"signal {sig}")
    signal.signal(signal.SIGTERM, on_signal)

    pg = None
    ken = Ken(opts, workdir)
    idx = search = workers = kill = conc = None
    try:
        pg = Pg(opts, workdir)
        pg_version = pg.version()
        idx = section_index(opts, ken, pg, repos, workdir, evalq)
        if "search" not in opts.skip:
            search = section_search(opts, ken, pg, idx, repos, evalq, workdir)
        files = {r["repo"]: r["embedded"].get("files", 0) for r in idx["rows"]}
        errors = {}

        def attempt(section, f):
            """A section that fails is reported as failed; the others still run."""
            try:
                return f()
            except (RuntimeError, TimeoutError, subprocess.CalledProcessError, OSError, KeyError, ValueError) as e:
                detail = e.stderr if isinstance(e, subprocess.CalledProcessError) else ""
                errors[section] = f"{type(e).__name__}: {e} {detail}".strip()
                log(f"section {section} FAILED: {errors[section]}")
                stop_all()
                return None
        if "workers" not in opts.skip:
            names = opts.worker_repos.split(",") if opts.worker_repos else \
                [n for n in idx["ok"] if files[n] <= opts.worker_max_files]
            workers = attempt("2. workers", lambda: section_workers(opts, ken, pg, repos, names, workdir, idx))
        if "kill" not in opts.skip:
            kill_repo = opts.kill_repo or max(files, key=files.get)
            kill = attempt("3. kill", lambda: section_kill(opts, ken, pg, repos, kill_repo, workdir, idx))
        if "concurrency" not in opts.skip:
            qs = search["queries"] if search else \
                {n: http_queries(n, *repos[n], evalq, opts.http_queries) for n in idx["ok"]}
            conc = attempt("4. concurrency", lambda: section_concurrency(opts, ken, idx, qs, workdir))
        text = report(opts, sys.argv, info, idx, search, workers, kill, conc, started, pg_version)
        for section, e in errors.items():
            text += f"\n**Section {section} failed:**\n\n```\n{e}\n```\n"
        print(text)
        if opts.out:
            with open(opts.out, "w") as f:
                f.write(text)
            log(f"wrote {opts.out}")
    finally:
        stop_all()
        if pg:
            pg.close()
        if opts.keep:
            log(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
