#!/usr/bin/env python3
"""Offline measurement of a signal not built yet: documentation sections as
anchor text for the code they cross-reference.

For each question, BM25 over the repository's documentation sections
(heading and text, read from git at the question's base commit; with
--exclude-own-page, never a section of the page the question came from,
`doc_path`), then each of the best 20 sections votes for the files it
cross-references (the files `doc_questions` resolved, from
`cargo run --release -p ken-engine --example doc_questions -- HOME REPO`).
That file list is measured alone and fused by RRF (k 60) with the files
`ken eval --per-query` ranked, at several weights.

  scripts/docs_link_sim.py --set ../shared/eval/docs_dev.jsonl \
      --per-query pq.jsonl --sections pallets/flask=flask.jsonl \
      --git pallets/flask=/path/to/flask.git [--exclude-own-page]
"""
import argparse, collections, json, math, re, subprocess

STOP = set("a an the of to in for and or is are be with on by as at from it this that how "
           "what when do does use using your you can not".split())


def toks(s):
    return [w for w in re.findall(r"[a-z0-9]+", s.lower().replace("_", " "))
            if w not in STOP and len(w) > 1]


def norm(s):
    return " ".join(re.findall(r"\w+", s.lower()))


def is_rule(l):
    t = l.rstrip()
    return len(t) >= 3 and t[0] in "=-~^\"'*+#_:.`" and len(set(t)) == 1


def rst_sections(text):
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        l, t = lines[i], lines[i].strip()
        if (i + 1 < len(lines) and t and not l.startswith((" ", "\t")) and not t.startswith("..")
                and not is_rule(l) and is_rule(lines[i + 1]) and len(lines[i + 1].rstrip()) >= len(t)):
            if out and out[-1][1] and is_rule(out[-1][1][-1]):
                out[-1][1].pop()
            out.append((t, []))
            i += 2
            continue
        if out:
            out[-1][1].append(l)
        i += 1
    return out


def md_sections(text):
    out, fenced = [], False
    for l in text.split("\n"):
        if l.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        m = re.match(r"^(#{1,6}) (.*)", l)
        if not fenced and m:
            out.append((m.group(2).strip("# ").strip(), []))
        elif out:
            out[-1][1].append(l)
    return out


def section_docs(git, base, sections):
    texts = {}
    for page in sorted({s["page"] for s in sections}):
        txt = subprocess.run(["git", "--git-dir", git, "show", f"{base}:{page}"],
                             capture_output=True, text=True).stdout
        split = rst_sections if page.endswith(".rst") else md_sections
        for h, body in split(txt):
            key = (page, norm(re.sub(r":\w+:`|`|\*", "", h)))
            texts.setdefault(key, h + "\n" + "\n".join(body))
    return [(s["page"], toks(texts.get((s["page"], norm(s["heading"])), s["query"])), s["gold"])
            for s in sections]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", required=True)
    ap.add_argument("--per-query", required=True)
    ap.add_argument("--sections", action="append", default=[])
    ap.add_argument("--git", action="append", default=[])
    ap.add_argument("--exclude-own-page", action="store_true")
    a = ap.parse_args()
    sections = {k: [json.loads(l) for l in open(v)] for k, v in (x.split("=", 1) for x in a.sections)}
    gits = dict(x.split("=", 1) for x in a.git)
    ranked = {}
    for l in open(a.per_query):
        p = json.loads(l)
        ranked[p["id"]] = p
    qs = [json.loads(l) for l in open(a.set)]
    qs = [q for q in qs if q["repo"] in sections and q["id"] in ranked]
    res = collections.defaultdict(list)
    cache = {}
    weights = (0.25, 0.5, 1.0, 2.0)
    for q in qs:
        key = (q["repo"], q["base_sha"])
        if key not in cache:
            docs = section_docs(gits[q["repo"]], q["base_sha"], sections[q["repo"]])
            n = len(docs)
            avg = sum(len(d[1]) for d in docs) / max(n, 1)
            df = collections.Counter(w for d in docs for w in set(d[1]))
            cache[key] = (docs, n, avg, df)
        docs, n, avg, df = cache[key]
        qt = set(toks(q["query"]))
        scored = []
        for page, tk, gold in docs:
            if a.exclude_own_page and page == q.get("doc_path"):
                continue
            tf, length = collections.Counter(tk), len(tk)
            s = sum(math.log(1 + (n - df[w] + .5) / (df[w] + .5)) * tf[w] * 2.2
                    / (tf[w] + 1.2 * (.25 + .75 * length / avg)) for w in qt if tf[w])
            if s > 0:
                scored.append((s, gold))
        scored.sort(key=lambda x: -x[0])
        link = {}
        for r, (_, gold) in enumerate(scored[:20]):
            for g in gold:
                link.setdefault(g, r + 1)
        files = ranked[q["id"]]["files"]
        gold = set(q["gold_files"])

        def rr(order):
            return next((1 / (i + 1) for i, f in enumerate(order[:10]) if f in gold), 0.0)

        res["ranked (ken eval)"].append(rr(files))
        res["sections' links alone"].append(rr(sorted(link, key=link.get)))
        for w in weights:
            sc = collections.defaultdict(float)
            for i, f in enumerate(files):
                sc[f] += 1 / (60 + i + 1)
            for f, r in link.items():
                sc[f] += w / (60 + r)
            res[f"fused, weight {w}"].append(rr(sorted(sc, key=lambda f: -sc[f])))
    for k, v in res.items():
        print(f"{k:24s} MRR@10 {sum(v) / len(v):.3f}  (n={len(v)})")


if __name__ == "__main__":
    main()
