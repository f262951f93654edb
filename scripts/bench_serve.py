#!/usr/bin/env python3
"""Load on `ken serve`: wrk against /api/v1/search and MCP search_code on the
dev repositories while a push webhook re-indexes one of them.

    python3 scripts/bench_serve.py --ken target/release/ken --home /tmp/ken-bench \
        --repo pallets/flask=/work/.mirror/pallets+flask/repo \
        --repo BurntSushi/ripgrep=... --repo spf13/cobra=... --repo expressjs/express=... \
        [--duration 60] [--connections 64] [--out benches/results/serve.md]

Each repository is indexed (embeddings on) at its base_sha from
../shared/eval/commits_dev.manifest.json; the queries are the commit
subjects of ../shared/eval/commits_dev.jsonl. In the same run it measures,
as baselines: /healthz under the same load (the HTTP stack alone), and the
same searches one at a time through the CLI (one process per query) and
through the warm server. Needs wrk (Debian package).
"""

import argparse
import hashlib
import hmac
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVAL = os.path.join(ROOT, "..", "shared", "eval")
SECRET = "bench-secret"


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def ken(args, opts, **kw):
    return run([opts.ken, "--home", opts.home, *args], **kw)


def manifest():
    with open(os.path.join(EVAL, "commits_dev.manifest.json")) as f:
        return {r["repo"]: r for r in json.load(f)["repos"]}


def queries(repos, per_repo):
    out = []
    seen = set()
    with open(os.path.join(EVAL, "commits_dev.jsonl")) as f:
        for line in f:
            q = json.loads(line)
            if q["repo"] not in repos:
                continue
            text = (q.get("query_subject") or q["query"]).strip()
            if (q["repo"], text) in seen:
                continue
            seen.add((q["repo"], text))
            if sum(1 for r, _ in out if r == q["repo"]) < per_repo:
                out.append((q["repo"], text))
    return out


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        s = f.read()
    get = lambda k: int(re.search(rf"{k}:\s+(\d+)", s).group(1)) // 1024
    return get("VmRSS"), get("VmHWM")


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def lua(requests):
    """A wrk script that cycles through (method, path, body) requests."""
    items = ",\n".join(
        "{%s, %s, %s}" % (json.dumps(m), json.dumps(p), json.dumps(b) if b else "nil")
        for m, p, b in requests
    )
    return """
local reqs = {
%s
}
local i = 0
request = function()
  i = i + 1
  local r = reqs[(i %% #reqs) + 1]
  return wrk.format(r[1], r[2], nil, r[3])
end
""" % items


def wrk(base, token, requests, opts, extra_headers=()):
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(lua(requests))
        script = f.name
    cmd = [
        "wrk", "-t", "2", "-c", str(opts.connections), "-d", f"{opts.duration}s",
        "--timeout", "10s", "--latency", "-s", script,
        "-H", f"Authorization: Bearer {token}",
    ]
    for h in extra_headers:
        cmd += ["-H", h]
    out = run(cmd + [base]).stdout
    os.unlink(script)
    return parse_wrk(out), out


def parse_wrk(text):
    def ms(v):
        n, unit = re.match(r"([\d.]+)(\w+)", v).groups()
        return float(n) * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[unit]

    d = {}
    for p in ("50", "75", "90", "99"):
        m = re.search(rf"\s{p}%\s+(\S+)", text)
        d[f"p{p}"] = ms(m.group(1)) if m else None
    m = re.search(r"(\d+) requests in", text)
    d["requests"] = int(m.group(1)) if m else 0
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    d["rps"] = float(m.group(1)) if m else 0
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    d["non2xx"] = int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    d["socket_errors"] = sum(map(int, m.groups())) if m else 0
    return d


def http(base, path, token=None, body=None, headers=None):
    req = urllib.request.Request(base + path, data=body, headers=dict(headers or {}))
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=60) as r:
        data = r.read()
        status = r.status
    return status, data, (time.perf_counter() - t0) * 1000


def push(base, name, sha, delivery):
    body = json.dumps({
        "ref": "refs/heads/main", "after": sha,
        "repository": {"full_name": name, "name": name.split("/")[-1], "default_branch": "main"},
    }).encode()
    sig = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    return http(base, "/hooks/github", body=body, headers={
        "content-type": "application/json", "x-github-event": "push",
        "x-github-delivery": delivery, "x-hub-signature-256": sig,
    })


def reindex_during_load(base, token, name, sha, delay, log):
    """Push `sha` after `delay` seconds; record the webhook's answer time and the job."""
    time.sleep(delay)
    status, data, took = push(base, name, sha, f"bench-{time.time()}")
    job = json.loads(data)["job"]
    log["webhook_status"], log["webhook_ms"] = status, took
    t0 = time.time()
    while True:
        _, data, _ = http(base, f"/api/v1/jobs/{job}", token)
        j = json.loads(data)
        if j["state"] in ("done", "failed"):
            log["job_state"], log["job_s"] = j["state"], time.time() - t0
            log["job_processed"] = (j.get("result") or {}).get("processed")
            embed = (j.get("result") or {}).get("embed") or {}
            log["job_embedded"] = embed.get("embedded")
            return
        time.sleep(0.5)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ken", required=True)
    ap.add_argument("--home", required=True)
    ap.add_argument("--repo", action="append", required=True, help="NAME=GITDIR")
    ap.add_argument("--duration", type=int, default=60)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--per-repo", type=int, default=25, help="queries per repository")
    ap.add_argument("--cli-queries", type=int, default=40)
    ap.add_argument("--push-offset", type=int, default=40,
                    help="push the commit this many after base_sha (new ones need embedding)")
    ap.add_argument("--out")
    opts = ap.parse_args()
    opts.ken = os.path.abspath(opts.ken)
    os.makedirs(opts.home, exist_ok=True)
    man = manifest()
    repos = dict(r.split("=", 1) for r in opts.repo)
    names = list(repos)
    push_repo = names[0]
    gitdir = repos[push_repo]
    base_sha = man[push_repo]["base_sha"]
    later = run(["git", "-C", gitdir, "rev-list", "--reverse", "--first-parent",
                 f"{base_sha}..{man[push_repo]['head_sha']}"]).stdout.split()
    # one pushed commit per loaded row, each a fresh re-index from base_sha
    k = opts.push_offset
    push_shas = [later[min(len(later), n) - 1] for n in (k, k + 1, k + 2)]
    changed = run(["git", "-C", gitdir, "diff", "--name-only", base_sha, push_shas[0]]).stdout.split()

    for name, path in repos.items():
        t0 = time.time()
        ken(["index", path, "--rev", man[name]["base_sha"], "--name", name, "-q"], opts)
        print(f"indexed {name} at {man[name]['base_sha'][:10]} in {time.time() - t0:.0f}s", file=sys.stderr)
    token = json.loads(ken(["--json", "token", "create", "--repo", "*", "--scope", "read"], opts).stdout)["token"]

    results = {}
    env = dict(os.environ, KEN_WEBHOOK_SECRET=SECRET)
    config = os.path.join(opts.home, "config.toml")
    qs = queries(set(names), opts.per_repo)
    search = [("GET", "/api/v1/search?" + urllib.parse.urlencode({"q": q, "repo": r, "n": 10}), None)
              for r, q in qs]
    mcp = []
    for i, (r, q) in enumerate(qs):
        mcp.append(("POST", "/mcp", json.dumps({
            "jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "search_code", "arguments": {"query": q, "repo": r, "n": 10},
                       "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                 "io.modelcontextprotocol/clientInfo": {"name": "wrk", "version": "1"},
                                 "io.modelcontextprotocol/clientCapabilities": {}}}})))
    mcp_headers = ("Content-Type: application/json", "Accept: application/json, text/event-stream",
                   "MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: search_code")
    rows = [
        ("GET /api/v1/search", search, (), True),
        ("MCP search_code", mcp, mcp_headers, True),
        ("GET /api/v1/search, query_cache = 0", search, (), False),
    ]
    for n, (label, reqs, headers, cache) in enumerate(rows):
        if cache:
            if os.path.exists(config):
                os.unlink(config)
        else:
            with open(config, "w") as f:
                f.write("query_cache = 0\n")
        if n == 0 or not cache:
            if n > 0:
                server.terminate()
                server.wait()
            server = subprocess.Popen(
                [opts.ken, "--home", opts.home, "--json", "serve", "--addr", "127.0.0.1:0"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
            addr = json.loads(server.stdout.readline())["listening"]
            base = f"http://{addr}"
            # warm every repository (and the model) once
            for _, path, _ in search[:: opts.per_repo]:
                http(base, path, token)
        if n == 0:
            mem_loaded = rss(server.pid)
            # baselines in the same run: one query at a time, CLI vs warm server
            cli, srv = [], []
            for r, q in qs[: opts.cli_queries]:
                t0 = time.perf_counter()
                ken(["search", "--json", q, "--repo", r, "-n", "10"], opts)
                cli.append((time.perf_counter() - t0) * 1000)
                _, _, took = http(base, "/api/v1/search?" + urllib.parse.urlencode({"q": q, "repo": r, "n": 10}), token)
                srv.append(took)
            health, _ = wrk(base, token, [("GET", "/healthz", None)], argparse.Namespace(
                connections=opts.connections, duration=min(10, opts.duration)))
            results["healthz (baseline: the HTTP stack alone)"] = (health, {})
        # back to the base commit, so that the push below re-indexes
        ken(["index", gitdir, "--rev", base_sha, "--name", push_repo, "-q"], opts)
        log = {}
        t = threading.Thread(target=reindex_during_load,
                             args=(base, token, push_repo, push_shas[n], 5, log))
        t.start()
        stats, raw = wrk(base, token, reqs, opts, headers)
        t.join()
        results[label] = (stats, log)
        if n == 1:
            mem_after = rss(server.pid)
    server.terminate()
    server.wait()
    if os.path.exists(config):
        os.unlink(config)

    lines = [
        f"Server load: {opts.connections} connections, {opts.duration} s per row (wrk, 2 threads), "
        f"{len(qs)} queries over {', '.join(names)} (commit subjects of commits_dev, cycled), hybrid search, "
        f"n=10. During each loaded row a signed push to {push_repo} moved it from "
        f"{base_sha[:10]} to a commit about {opts.push_offset} later ({len(changed)} files changed); the job ran in the server.",
        "",
        "| endpoint | requests | req/s | p50 ms | p90 ms | p99 ms | non-2xx | socket errors | webhook answer ms | re-index job |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, (s, log) in results.items():
        job = (f"{log['job_state']} in {log['job_s']:.1f} s ({log.get('job_processed')} files, "
               f"{log.get('job_embedded')} texts embedded)") if log else "—"
        hook = f"{log['webhook_ms']:.1f} ({log['webhook_status']})" if log else "—"
        lines.append(
            f"| {label} | {s['requests']} | {s['rps']:.0f} | {s['p50']:.1f} | {s['p90']:.1f} | "
            f"{s['p99']:.1f} | {s['non2xx']} | {s['socket_errors']} | {hook} | {job} |")
    lines += [
        "",
        f"One query at a time ({len(cli)} queries): CLI process per query p50 {statistics.median(cli):.0f} ms "
        f"(p90 {pct(cli, 90):.0f}) vs warm server p50 {statistics.median(srv):.1f} ms (p90 {pct(srv, 90):.1f}): "
        f"**{statistics.median(cli) / statistics.median(srv):.1f}x** faster warm.",
        f"Server memory (RSS) with the {len(names)} repositories and the model loaded: "
        f"{mem_loaded[0]} MiB; after the load: {mem_after[0]} MiB (peak {mem_after[1]} MiB).",
    ]
    text = "\n".join(lines)
    print(text)
    if opts.out:
        with open(opts.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    import urllib.parse  # noqa: E402
    main()
