"""What the server benchmarks share: the build to run, the commits_dev
questions as typed into a search box, and a `ken serve` started on a home
with a read token (imported by bench-fleet-serve.py and compare-homes.py)."""
import contextlib
import json
import os
import subprocess
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


def ken_binary():
    """KEN, else the release build in the cargo target directory."""
    target = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/ken-target"))
    return os.environ.get("KEN", os.path.join(target, "release/ken"))


def first_lines(n=None):
    """The first line of each commits_dev question (the first n)."""
    out = []
    with open(os.path.join(HERE, "../../shared/eval/commits_dev.jsonl")) as f:
        for line in f:
            out.append(json.loads(line)["query"].strip().splitlines()[0])
    return out if n is None else out[:n]


@contextlib.contextmanager
def serve(ken, home, port, env=None):
    """`ken serve` on `home` (embeddings off, no jobs) until it answers;
    yields (server process, base URL, read token), stopped on leaving.
    `env`: the environment of both (default: this process's)."""
    made = subprocess.run(
        [ken, "--home", home, "--json", "token", "create", "--scope", "read", "--repo", "*", "--label", "bench"],
        check=True,
        capture_output=True,
        env=env,
    )
    token = json.loads(made.stdout)["token"]
    server = subprocess.Popen(
        [ken, "--home", home, "--embedder", "off", "serve", "--addr", f"127.0.0.1:{port}", "--no-jobs"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(base + "/healthz", timeout=1)
                break
            except Exception:
                time.sleep(0.5)
        yield server, base, token
    finally:
        server.terminate()
        server.wait()
