#!/usr/bin/env python3
"""Offline replica of the fusion learner (crates/ken-engine/src/tune.rs), to
study how it learns without rebuilding: it reads what
`cargo run --release -p ken-engine --example tune_dump` wrote (per
repository, the history questions with every candidate file's ranks, and an
evaluation set's questions asked of the index as it stands), learns as
tune.rs does, and scores the evaluation questions with what was learned
(questions with code keep the defaults, as `RankParams::for_question`
does). With the learner as shipped it reproduces `ken eval`'s file MRR@10
per repository.

    tune_dump HOME MODEL_DIR|off ../shared/eval/commits_dev.jsonl 150 > d.jsonl
    scripts/tune_sim.py d.jsonl [--lexical] [--variant V] [--history N]

Variants (each the shipped learner with one change):
  shipped        two interleaved folds choose the shrinkage, MRR@10 objective
  mrr-all        the objective counts a gold file at any rank (1/rank)
  ndcg           the objective is 1/log2(rank+1) at any rank
  bagged         the fit is the mean of 8 fits to bootstrap samples
  folds4         four interleaved folds instead of two
  newest         the newest third of history is held out (time split)
  halves         newer half against older half, both ways
--history N keeps only the newest N history questions of each repository.
--bound prints, per repository, how far any fusion of the dumped lists can
go: the constants as learned; the dense list alone; the lexical lists alone;
each question answered by whichever of the learned ranking and the dense
list ranks its gold file higher (an oracle choosing per question); constants
fit to the evaluation questions themselves (an oracle no learner may be);
and the share of questions with a gold file among the candidates at all.
--dense-scale 1,2,4 prints, per repository, the evaluation questions'
MRR@10 with the dense list's weight (as learned, or the default) times
each factor: what trusting the dense side more would do (questions with
code keep the defaults, as search does).
"""
import argparse
import collections
import json
import math
import random

import numpy as np

DEFAULTS = dict(k=60.0, w_file=2.0, w_file_dense=1.5, w_bm25_file=1.0, w_dense_file=0.5,
                w_symbol=0.5, w_ppr=0.0, w_mention=1.0, k_mention=5.0, prose_prior=0.8,
                test_prior=0.7, w_churn=0.0, w_fixes=0.0, w_recent=0.0, w_anchor=0.0)
WEIGHTS = [0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0]
PRIOR_GRID = [0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
HISTORY_GRID = [0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5]
PRIORS = [0.0, 10.0, 25.0, 50.0, 100.0]
LISTS = 7  # tune.rs's six lists, and a seventh for signals tried offline


def knobs(dense, extra=()):
    k = [("w_file_dense" if dense else "w_file", WEIGHTS), ("w_bm25_file", WEIGHTS),
         ("w_symbol", WEIGHTS), ("prose_prior", PRIOR_GRID), ("test_prior", PRIOR_GRID)]
    if dense:
        k.insert(2, ("w_dense_file", WEIGHTS))
    k += [("w_churn", HISTORY_GRID), ("w_fixes", HISTORY_GRID), ("w_recent", HISTORY_GRID)]
    return k + [(name, WEIGHTS) for name in extra]


class Example:
    """One question and its candidate files, as fusion.rs scores them."""

    def __init__(self, d):
        rows = d["rows"]
        self.q = d
        self.paths = [r["path"] for r in rows]
        self.ranks = np.zeros((len(rows), LISTS))
        for i, r in enumerate(rows):
            for j, v in enumerate(r["ranks"]):
                self.ranks[i, j] = v or 0
        col = lambda key: np.array([r[key] for r in rows], dtype=bool)
        self.prose, self.test, self.framed = col("prose"), col("test"), col("framed")
        self.unpinned = np.array([r["pinned"] is None for r in rows], dtype=bool)
        self.added = np.zeros(len(rows), dtype=bool)  # candidates of an offline list only
        self.pinned = [i for _, i in sorted((r["pinned"], i) for i, r in enumerate(rows)
                                            if r["pinned"] is not None)]
        hist = lambda key: np.log(1 + np.log1p(np.array([r[key] for r in rows], dtype=np.float64)))
        self.changes, self.fixes, self.recent = hist("changes"), hist("fixes"), hist("recent")
        gold = set(d["gold"])
        self.gold = {i for i, p in enumerate(self.paths) if p in gold}
        self.code = d.get("code", False)
        self.page = None

    def add_list(self, slot, ranked):
        """Give each file of `ranked` (path -> 1-based rank) a rank in list
        `slot`; files not yet candidates join with that rank alone."""
        at = {p: i for i, p in enumerate(self.paths)}
        new = [p for p in ranked if p not in at]
        if new:
            n = len(new)
            self.ranks = np.vstack([self.ranks, np.zeros((n, LISTS))])
            for name in ("prose", "test", "framed"):
                setattr(self, name, np.concatenate([getattr(self, name), np.zeros(n, dtype=bool)]))
            self.unpinned = np.concatenate([self.unpinned, np.ones(n, dtype=bool)])
            self.added = np.concatenate([self.added, np.ones(n, dtype=bool)])
            for name in ("changes", "fixes", "recent"):
                setattr(self, name, np.concatenate([getattr(self, name), np.zeros(n)]))
            gold = set(self.q["gold"])
            for p in new:
                at[p] = len(self.paths)
                if p in gold:
                    self.gold.add(len(self.paths))
                self.paths.append(p)
        for p, r in ranked.items():
            self.ranks[at[p], slot] = r

    def rank(self, p, dense, cut=10):
        """1-based rank of the first gold file within `cut`, or None."""
        if not self.gold:
            return None
        k = p["k"]
        weights = [p["w_file_dense"] if dense else p["w_file"], p["w_bm25_file"], p["w_dense_file"],
                   p["w_symbol"], p["w_ppr"], p["w_mention"], p["w_anchor"]]
        score = np.zeros(len(self.paths))
        for j, w in enumerate(weights):
            if w <= 0:
                continue
            r = self.ranks[:, j]
            if j == 5:
                v = np.where(self.framed, w / (k + 1) * (p["k_mention"] + 1) / (p["k_mention"] + r),
                             w / (k + r))
            else:
                v = w / (k + r)
            score += np.where(r > 0, v, 0)
        score = np.where(self.prose, score * p["prose_prior"], score)
        score = np.where(self.test, score * p["test_prior"], score)
        score = score * np.exp(p["w_churn"] * self.changes + p["w_fixes"] * self.fixes
                               + p["w_recent"] * self.recent)
        score = score.astype(np.float32)  # fusion.rs scores in f32; ties go by path
        # a file only the offline list found is no candidate while it weighs nothing
        rest = sorted((i for i in range(len(self.paths))
                       if self.unpinned[i] and not (self.added[i] and score[i] <= 0)),
                      key=lambda i: (-score[i], self.paths[i]))
        for pos, i in enumerate((self.pinned + rest)[:cut]):
            if i in self.gold:
                return pos + 1
        return None

    def rr(self, p, dense):
        r = self.rank(p, dense)
        return 1.0 / r if r else 0.0


OBJECTIVE = "mrr10"


def mrr(data, p, dense):
    return sum(e.rr(p, dense) for e in data) / len(data) if data else 0.0


def objective(data, p, dense):
    if OBJECTIVE == "mrr10":
        return mrr(data, p, dense)
    total = 0.0
    for e in data:
        r = e.rank(p, dense, cut=10 ** 6)
        if r:
            total += 1.0 / r if OBJECTIVE == "mrr-all" else 1.0 / math.log2(r + 1)
    return total / len(data)


def coordinate_ascent(data, base, kn, dense):
    cur, best = dict(base), objective(data, base, dense)
    for _ in range(3):
        moved = False
        for name, grid in kn:
            for v in grid:
                trial = dict(cur, **{name: v})
                m = objective(data, trial, dense)
                if m > best + 1e-9:
                    best, cur, moved = m, trial, True
        if not moved:
            break
    return cur


def bagged(data, base, kn, dense, samples=8, seed=7):
    rng = random.Random(seed)
    fits = [coordinate_ascent([data[rng.randrange(len(data))] for _ in data], base, kn, dense)
            for _ in range(samples)]
    return dict(base, **{name: float(np.mean([f[name] for f in fits])) for name, _ in kn})


def shrink(fit, base, data, prior, kn):
    n = sum(1 for e in data if e.gold)
    t = n / (n + prior) if n + prior > 0 else 1.0
    return dict(base, **{name: round(base[name] + t * (fit[name] - base[name]), 4) for name, _ in kn})


def splits(exs, variant):
    """(train, test) pairs; history comes newest first."""
    if variant == "newest":
        cut = len(exs) // 3
        return [(exs[cut:], exs[:cut])]
    if variant == "halves":
        h = len(exs) // 2
        return [(exs[h:], exs[:h]), (exs[:h], exs[h:])]
    folds = 4 if variant == "folds4" else 2
    parts = [exs[i::folds] for i in range(folds)]
    return [([e for j, p in enumerate(parts) if j != i for e in p], parts[i]) for i in range(folds)]


def tune(exs, dense, base=DEFAULTS, variant="shipped", extra=(), min_questions=20):
    """What tune.rs learns from `exs`: the adopted constants, or None."""
    if sum(1 for e in exs if e.gold) < min_questions:
        return None
    kn = knobs(dense, extra)
    fit = bagged if variant == "bagged" else coordinate_ascent
    held_default, held = 0.0, [0.0] * len(PRIORS)
    for train, test in splits(exs, variant):
        f = fit(train, base, kn, dense)
        held_default += mrr(test, base, dense) * len(test)
        for j, prior in enumerate(PRIORS):
            held[j] += mrr(test, shrink(f, base, train, prior, kn), dense) * len(test)
    j = 0  # tune.rs's best_prior: among equals, the strongest shrinkage
    for i, h in enumerate(held):
        if h >= held[j] - 1e-9:
            j = i
    learned = shrink(fit(exs, base, kn, dense), base, exs, PRIORS[j], kn)
    return learned if held[j] >= held_default else None


def load(path):
    by = collections.defaultdict(lambda: {"history": [], "eval": []})
    for line in open(path):
        d = json.loads(line)
        by[d["repo"]][d["kind"]].append(Example(d))
    return by


def answer(exs, learned, dense):
    return sum(e.rr(DEFAULTS if (learned is None or e.code) else learned, dense) for e in exs)


def bound(by, dense):
    """Upper bounds of fusion over the dumped lists, per repository and overall."""
    dense_only = dict(DEFAULTS, w_file=0.0, w_file_dense=0.0, w_bm25_file=0.0, w_symbol=0.0,
                      w_dense_file=1.0)
    lexical_only = dict(DEFAULTS, w_dense_file=0.0)
    cols = ["learned", "dense list", "lexical lists", "oracle per question", "fit to the questions",
            "gold among candidates"]
    rows, every = [], [[] for _ in cols]
    for repo, d in sorted(by.items()):
        ev = d["eval"]
        learned = tune(d["history"], dense)
        fitted = coordinate_ascent(ev, DEFAULTS, knobs(dense), dense)
        per = [[e.rr(DEFAULTS if (learned is None or e.code) else learned, dense) for e in ev],
               [e.rr(dense_only, dense) if dense else 0.0 for e in ev],
               [e.rr(lexical_only, dense) for e in ev]]
        per.append([max(a, b) for a, b in zip(per[0], per[1])])
        per.append([e.rr(fitted, dense) for e in ev])
        per.append([1.0 if e.gold else 0.0 for e in ev])
        for j, v in enumerate(per):
            every[j] += v
        rows.append((f"{repo} ({len(ev)})", per))
    rows.append((f"all ({len(every[0])})", every))
    print("| MRR@10 | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for name, per in rows:
        print(f"| {name} | " + " | ".join(f"{sum(v) / max(len(v), 1):.3f}" for v in per) + " |")


def dense_scale(by, factors):
    """MRR@10 of each repository's evaluation questions with the dense weight scaled."""
    print("| repository | constants | " + " | ".join(f"×{f:g}" for f in factors) + " |")
    print("|---" * (len(factors) + 2) + "|")
    for repo, d in sorted(by.items()):
        if not d["eval"]:
            continue
        learned = tune(d["history"], True)
        base = learned or DEFAULTS
        row = [answer(d["eval"], dict(base, w_dense_file=base["w_dense_file"] * f), True)
               / len(d["eval"]) for f in factors]
        print(f"| {repo} ({len(d['eval'])}) | {'learned' if learned else 'defaults'} | "
              + " | ".join(f"{v:.3f}" for v in row) + " |")


def main():
    global OBJECTIVE
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dump")
    ap.add_argument("--lexical", action="store_true", help="the dump was made without embeddings")
    ap.add_argument("--variant", default="shipped",
                    choices=["shipped", "mrr-all", "ndcg", "bagged", "folds4", "newest", "halves"])
    ap.add_argument("--history", type=int, default=None)
    ap.add_argument("--bound", action="store_true", help="how far any fusion of these lists can go")
    ap.add_argument("--dense-scale", default=None, help="factors for the dense list's weight, e.g. 1,2,4")
    a = ap.parse_args()
    if a.dense_scale:
        return dense_scale(load(a.dump), [float(x) for x in a.dense_scale.split(",")])
    if a.bound:
        return bound(load(a.dump), not a.lexical)
    if a.variant in ("mrr-all", "ndcg"):
        OBJECTIVE = a.variant
    dense = not a.lexical
    total, n, per = 0.0, 0, []
    for repo, d in sorted(load(a.dump).items()):
        history = d["history"][: a.history] if a.history else d["history"]
        learned = tune(history, dense, variant=a.variant)
        s = answer(d["eval"], learned, dense)
        total, n = total + s, n + len(d["eval"])
        per.append(f"{repo}={s / len(d['eval']):.3f}{'' if learned else ' (defaults)'} "
                   f"[{len(history)} history questions]")
    print(f"{a.variant}: MRR@10 {total / n:.3f}  " + "  ".join(per))


if __name__ == "__main__":
    main()
