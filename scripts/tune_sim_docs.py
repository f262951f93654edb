#!/usr/bin/env python3
"""Offline study of documentation questions (docs_dev) with the learner's
replica (scripts/tune_sim.py): what the constants learned from commits give,
what a fit to the documentation's own sections gives (each evaluated page
left out of the fit), and the sections as anchor text (scripts/
docs_link_sim.py's list: BM25 over the other pages' sections, each of the
best 20 voting for the files it cross-references) added to the fusion as a
seventh list, at fixed weights and with its weight learned on the sections.

    tune_dump H MODEL ../shared/eval/docs_dev.jsonl 150 > docs.jsonl
    doc_questions H pallets/flask > sec-flask.jsonl   (and pytest)
    # the sections as a query set ({"id": "PAGE#i", "repo", "query", "gold_files"}):
    tune_dump H MODEL sections.jsonl 0 > sec.jsonl
    scripts/tune_sim_docs.py docs.jsonl sec.jsonl --sections pallets/flask=sec-flask.jsonl \
        --sections pytest-dev/pytest=sec-pytest.jsonl --git pallets/flask=GITDIR --git …
"""
import argparse
import collections
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tune_sim  # noqa: E402
from docs_link_sim import section_docs, toks  # noqa: E402
from tune_sim import DEFAULTS, WEIGHTS, load, mrr, tune  # noqa: E402

ANCHOR = 6


class Anchors:
    def __init__(self, docs):
        self.docs = docs
        self.n = len(docs)
        self.avg = sum(len(d[1]) for d in docs) / max(self.n, 1)
        self.df = collections.Counter(w for d in docs for w in set(d[1]))

    def files(self, query, leave_out=None, top=20):
        qt = set(toks(query))
        scored = []
        for page, tk, gold in self.docs:
            if page == leave_out:
                continue
            tf, length = collections.Counter(tk), len(tk)
            s = sum(math.log(1 + (self.n - self.df[w] + .5) / (self.df[w] + .5)) * tf[w] * 2.2
                    / (tf[w] + 1.2 * (.25 + .75 * length / self.avg)) for w in qt if tf[w])
            if s > 0:
                scored.append((s, gold))
        scored.sort(key=lambda x: -x[0])
        ranked = {}
        for _, gold in scored[:top]:
            for g in gold:
                ranked.setdefault(g, len(ranked) + 1)
        return ranked


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dump")
    ap.add_argument("sections_dump")
    ap.add_argument("--set", default=os.path.join(os.path.dirname(__file__), "../../shared/eval/docs_dev.jsonl"))
    ap.add_argument("--sections", action="append", default=[])
    ap.add_argument("--git", action="append", default=[])
    a = ap.parse_args()
    qs = [json.loads(line) for line in open(a.set)]
    page_of = {q["id"]: q["doc_path"] for q in qs}
    base_of = {q["repo"]: q["base_sha"] for q in qs}
    gits = dict(x.split("=", 1) for x in a.git)
    anchors = {}
    for spec in a.sections:
        repo, path = spec.split("=", 1)
        secs = [json.loads(line) for line in open(path)]
        anchors[repo] = Anchors(section_docs(gits[repo], base_of[repo], secs))
    by = load(a.dump)
    sections = collections.defaultdict(list)
    for line in open(a.sections_dump):
        d = json.loads(line)
        e = tune_sim.Example(d)
        e.page = d["id"].split("#")[0]
        e.add_list(ANCHOR, anchors[d["repo"]].files(d["query"], leave_out=e.page))
        sections[d["repo"]].append(e)
    totals, n = collections.Counter(), 0
    for repo, d in sorted(by.items()):
        for e in d["eval"]:
            e.add_list(ANCHOR, anchors[repo].files(e.q["query"], leave_out=page_of[e.q["id"]]))
        for e in d["history"]:
            e.add_list(ANCHOR, anchors[repo].files(e.q["query"]))
        commits = tune(d["history"], True, extra=("w_anchor",)) or DEFAULTS
        pages = collections.defaultdict(list)
        for e in d["eval"]:
            pages[page_of[e.q["id"]]].append(e)
        got = collections.Counter()
        for page, es in pages.items():
            train = [s for s in sections[repo] if s.page != page and s.gold]
            own = tune(train, True) or DEFAULTS
            best = max(WEIGHTS, key=lambda w: (mrr(train, dict(commits, w_anchor=w), True), -w))
            rows = {
                "commits' constants (as shipped)": dict(commits, w_anchor=0.0),
                "sections' own fit, page left out": own,
                "commits' + anchors at 0.25": dict(commits, w_anchor=0.25),
                "commits' + anchors at 0.5": dict(commits, w_anchor=0.5),
                "commits' + anchors at 1.0": dict(commits, w_anchor=1.0),
                "commits' + anchor weight fit to the sections": dict(commits, w_anchor=best),
            }
            for label, p in rows.items():
                got[label] += sum(e.rr(p, True) for e in es)
        print(f"{repo}: the commit learner's anchor weight {commits.get('w_anchor', 0.0)}")
        for label, s in got.items():
            print(f"  {label:48s} {s / len(d['eval']):.3f}")
            totals[label] += s
        n += len(d["eval"])
    for label, s in totals.items():
        print(f"overall {label:40s} {s / n:.3f}")


if __name__ == "__main__":
    main()
