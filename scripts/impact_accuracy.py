#!/usr/bin/env python3
"""Accuracy of `ken callers` against a hand-checked reference (pallets/flask).

Usage:
  scripts/impact_accuracy.py [--bin ken] [--home DIR] [--mirror /work/.mirror]
                             [--reference benches/data/flask_callers_reference.json]
                             [--no-index] [--json OUT.json]
  scripts/impact_accuracy.py --list-calls TREE NAME...   # reference candidates

Indexes flask at the reference's commit (no embeddings) into --home (a fresh
temporary directory by default), runs `ken callers SYMBOL --repo flask --json`
for every function in the reference, and compares at the unit ken returns:
(path, caller symbol), where the caller symbol is the innermost enclosing
def/class, dotted (`Flask.run`, `test_x.index`), as in the reference.

Prints a per-function table (TP/FP/FN, precision, recall) and micro/macro
averages. Macro precision is averaged over the functions for which ken
returned at least one caller (precision is undefined otherwise); macro recall
over all functions. A TP is also checked at line level: "line-ok" counts the
TPs whose `via` line is one of the reference call lines for that caller.

The reference (how each call site was judged) is described in the data
file's `_meta`; it was built by listing every ast.Call of the name in all .py
files of the tree (`--list-calls`, one JSON line per call with its receiver
and enclosing def) and reading each one; `excluded_call_sites` in the data
file gives the reason for every call that was dropped.
"""
import argparse, ast, json, os, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-2000:]}")
    return p.stdout


def fmt(x):
    return "n/a" if x is None else f"{x:.2f}"


def list_calls(tree, names):
    """Every call `name(...)` / `x.name(...)` in the .py files under `tree`, with the
    innermost enclosing def/class (decorators and defaults belong to the enclosing scope)."""
    names = set(names)
    for d, _, fs in sorted(os.walk(tree)):
        for fn in sorted(fs):
            if not fn.endswith(".py"):
                continue
            path = os.path.join(d, fn)
            rel = os.path.relpath(path, tree)
            src = open(path).read()
            lines = src.splitlines()

            def walk(n, scope):
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    outer = list(n.decorator_list)
                    if isinstance(n, ast.ClassDef):
                        outer += n.bases + [k.value for k in n.keywords]
                    else:
                        outer += n.args.defaults + [x for x in n.args.kw_defaults if x]
                    for x in outer:
                        walk(x, scope)
                    for stmt in n.body:
                        walk(stmt, scope + [n.name])
                    return
                if isinstance(n, ast.Call):
                    f = n.func
                    nm = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                    if nm in names:
                        print(json.dumps(dict(
                            name=nm, file=rel, line=n.lineno, caller=".".join(scope) or "<module>",
                            recv=ast.unparse(f.value) if isinstance(f, ast.Attribute) else "",
                            text=lines[n.lineno - 1].strip())))
                for ch in ast.iter_child_nodes(n):
                    walk(ch, scope)

            walk(ast.parse(src), [])


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--list-calls":
        return list_calls(sys.argv[2], sys.argv[3:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=shutil.which("ken") or "/tmp/ken-impact-bin")
    ap.add_argument("--home", default=None, help="ken home (default: a fresh temp dir)")
    ap.add_argument("--mirror", default="/work/.mirror")
    ap.add_argument("--reference", default=os.path.join(ROOT, "benches/data/flask_callers_reference.json"))
    ap.add_argument("--no-index", action="store_true", help="use the index already in --home")
    ap.add_argument("--json", default=None, help="also write the per-function results here")
    a = ap.parse_args()

    ref = json.load(open(a.reference))
    meta, funcs = ref["_meta"], ref["functions"]
    home = a.home or tempfile.mkdtemp(prefix="ken-impact-")
    if not a.no_index:
        gitdir = os.path.join(a.mirror, meta["repo"].replace("/", "+"), "repo")
        run([a.bin, "--home", home, "--embedder", "off", "-q", "index", gitdir,
             "--rev", meta["commit"], "--name", "flask"])

    rows, out = [], {}
    TP = FP = FN = 0
    precs, recs = [], []
    for key, f in funcs.items():
        d = json.loads(run([a.bin, "--home", home, "callers", f["ken_symbol"], "--repo", "flask", "--json"]))
        cands = [(c["path"], c["symbol"]) for c in d.get("candidates", [])]
        want_def = (f["definition"]["file"], f["definition"]["qualname"])
        if cands != [want_def]:
            print(f"warning: {key}: ken resolved {f['ken_symbol']!r} to {cands}, expected {want_def}", file=sys.stderr)
        got = {}
        for r in d.get("results", []):
            got.setdefault((r["path"], r["symbol"]), set()).update(v["line"] for v in r.get("via", []))
        want = {}
        for c in f["callers"]:
            want.setdefault((c["file"], c["caller"]), set()).add(c["line"])
        tp = sorted(set(got) & set(want))
        fp = sorted(set(got) - set(want))
        fn = sorted(set(want) - set(got))
        line_ok = sum(1 for k in tp if got[k] & want[k])
        p = len(tp) / len(got) if got else None
        r = len(tp) / len(want) if want else None
        TP, FP, FN = TP + len(tp), FP + len(fp), FN + len(fn)
        if p is not None:
            precs.append(p)
        if r is not None:
            recs.append(r)
        rows.append((key, f["ken_symbol"], len(want), len(got), len(tp), len(fp), len(fn), line_ok, p, r))
        out[key] = dict(ken_symbol=f["ken_symbol"], candidates=cands, tp=tp, fp=fp, fn=fn,
                        line_ok=line_ok, precision=p, recall=r)

    print("| function | ken symbol | ref callers | ken callers | TP | FP | FN | line-ok | precision | recall |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for key, sym, nw, ng, tp, fp, fn, lok, p, r in rows:
        print(f"| {key} | `{sym}` | {nw} | {ng} | {tp} | {fp} | {fn} | {lok} | {fmt(p)} | {fmt(r)} |")
    mp = TP / (TP + FP) if TP + FP else None
    mr = TP / (TP + FN) if TP + FN else None
    f1 = 2 * mp * mr / (mp + mr) if mp and mr else None
    print()
    print(f"micro: TP={TP} FP={FP} FN={FN} precision={fmt(mp)} recall={fmt(mr)} F1={fmt(f1)}")
    print(f"macro: precision={fmt(sum(precs) / len(precs) if precs else None)} "
          f"(over {len(precs)} functions with >=1 ken caller) "
          f"recall={fmt(sum(recs) / len(recs) if recs else None)} (over {len(recs)} functions)")
    print(f"functions with no ken callers: {sum(1 for r in rows if r[3] == 0)} of {len(rows)}")
    if a.home is None:
        shutil.rmtree(home, ignore_errors=True)
    if a.json:
        json.dump(dict(commit=meta["commit"], micro=dict(tp=TP, fp=FP, fn=FN, precision=mp, recall=mr),
                       functions=out), open(a.json, "w"), indent=1, default=list)


if __name__ == "__main__":
    main()
