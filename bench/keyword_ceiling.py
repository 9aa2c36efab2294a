"""How far can deciding among the concepts an abstract names go on author keywords? Cross-validated figures.

    python bench/keyword_ceiling.py [KEYWORDS.jsonl]        (needs scikit-learn: pip install "kg[train]")

Every figure is the keyword rule's roll-up micro P/R/F1 (kg.extract.keywords) on the file, 5 contiguous folds by
paper as `kg train` makes them, each row at the cut that maximises its F1 (so the rows are upper bounds
for their models). Papers are read with their titles. In one run:

  shipped      the shipped model family: a logistic regression on the candidate features (kg.extract.features),
               readers' exclusions applied, subjects rolled up;
  trees        gradient-boosted trees on the same rows, instead of the linear model;
  closure      a second stage that decides on every concept of the closure of a paper's candidates (the
               rolled-up set itself), from the first stage's out-of-fold probabilities of the concept and of
               the candidates below it, its own candidate features, and its place in the scheme;
  + habits     the same, also given each concept's identity (its share of positives in the training folds,
               overall and per venue-year, nested so no paper's own label is seen) and the venue-year: what a
               model can learn of this file's keyword habits. These habits do not carry to other venues, so
               this row is a ceiling for what the file rewards, not a model kg could ship;
  oracle       choosing perfectly among the candidates (then rolled up), and within the closure.
"""

from __future__ import annotations

import collections
import math
import sys
from pathlib import Path

import numpy as np

from kg.extract.features import FEATURES, ConceptFacts, eligible
from kg.extract.keywords import KeywordPaper, read_keywords, score_keywords, topic_key
from kg.extract.scheme import load
from kg.extract.training.scorer import FOLDS, Table, fit, hierarchy_of, table

DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared" / "gold" / "keywords-dev.jsonl"
CUTS = tuple(round(0.1 + 0.025 * i, 3) for i in range(21))


def best(papers: tuple[KeywordPaper, ...], decided: list[tuple[int, str, float]], hierarchy, cuts=CUTS) -> tuple[float, float, float, float]:
    """(cut, P, R, F1) at the cut that maximises F1, for (paper, concept, probability) decisions."""
    out = (0.0, 0.0, 0.0, -1.0)
    for cut in cuts:
        predicted: dict[str, set[str]] = {e.id: set() for e in papers}
        for p, c, q in decided:
            if q >= cut:
                predicted[papers[p].id].add(c)
        f = score_keywords(papers, predicted, hierarchy).figures()
        if f.f1 > out[3]:
            out = (cut, f.precision, f.recall, f.f1)
    return out


def out_of_fold(x: np.ndarray, y: np.ndarray, fold: np.ndarray, make) -> np.ndarray:
    """Each row's probability from a model fitted on the other folds."""
    oof = np.zeros(len(y))
    for k in range(FOLDS):
        test = fold == k
        oof[test] = make(k, x[~test], y[~test], x[test])
    return oof


def trees(x: np.ndarray, y: np.ndarray, xt: np.ndarray) -> np.ndarray:
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(max_iter=300, learning_rate=0.05, max_leaf_nodes=15, min_samples_leaf=40, random_state=0)
    return model.fit(x, y).predict_proba(xt)[:, 1]


def closure_rows(data: Table, first: np.ndarray, facts: ConceptFacts, gold: list[frozenset[str]]):
    """One row per (paper, concept in the closure of its candidates): features, label, paper, concept."""
    by_paper: dict[int, dict[str, int]] = collections.defaultdict(dict)
    for i, (p, c, titled) in enumerate(zip(data.paper, data.concept, data.titled)):
        if titled:
            by_paper[p][c] = i
    rows, labels, papers, concepts = [], [], [], []
    for p, cand in by_paper.items():
        closure = set(cand).union(*(facts.ancestors.get(c, frozenset()) for c in cand))
        for a in sorted(closure):
            own = cand.get(a)
            below = [first[i] for c, i in cand.items() if c == a or a in facts.ancestors.get(c, ())]
            strictly = [first[i] for c, i in cand.items() if c != a and a in facts.ancestors.get(c, ())]
            row = [first[own] if own is not None else -1.0, max(below), 1 - math.prod(1 - v for v in below), len(below),
                   max(strictly, default=0.0), len(strictly), facts.depth.get(a, 0), math.log1p(facts.narrower.get(a, 0)),
                   len(cand), float(a in facts.datasets), float(a in facts.tools)]
            row += list(data.rows[own]) if own is not None else [-1.0] * len(FEATURES)
            rows.append(row)
            labels.append(int(a in gold[p]))
            papers.append(p)
            concepts.append(a)
    return np.asarray(rows), np.asarray(labels), np.asarray(papers), concepts


def habits(labels: np.ndarray, concepts: list[str], groups: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Each row's concept's smoothed share of positives among the `mask` rows, overall and in its group."""
    total: collections.Counter = collections.Counter()
    positive: collections.Counter = collections.Counter()
    for c, g, y in zip(np.asarray(concepts)[mask], groups[mask], labels[mask]):
        for key in (c, (c, g)):
            total[key] += 1
            positive[key] += y
    prior = labels[mask].mean()
    overall = np.array([(positive[c] + 10 * prior) / (total[c] + 10) for c in concepts])
    grouped = np.array([(positive[c, g] + 10 * o) / (total[c, g] + 10) for c, g, o in zip(concepts, groups, overall)])
    return np.column_stack([overall, grouped])


def main(path: Path) -> None:
    scheme = load()
    hierarchy = hierarchy_of(scheme)
    named_by = hierarchy.named_by()
    data = table(read_keywords(path), scheme)
    gold = [hierarchy.closure(c for k in e.keywords for c in named_by.get(topic_key(k), ())) for e in data.papers]
    n = len(data.papers)
    paper_fold = np.array([i * FOLDS // n for i in range(n)])
    x, y = np.asarray(data.rows), np.asarray(data.label)
    fold = paper_fold[np.asarray(data.paper)]
    titled = np.asarray(data.titled)
    allowed = np.array([eligible(r) for r in data.rows])
    print(f"{path.name}: {n} scored papers, {int(titled.sum())} candidates read with titles")

    def report(name: str, decided: list[tuple[int, str, float]]) -> None:
        cut, p, r, f = best(data.papers, decided, hierarchy)
        print(f"{name:<10} P {p:.3f}  R {r:.3f}  F1 {f:.3f}  (cut {cut})")

    def subjects(prob: np.ndarray) -> list[tuple[int, str, float]]:
        return [(data.paper[i], data.concept[i], prob[i] if allowed[i] else 0.0) for i in np.flatnonzero(titled)]

    first = out_of_fold(x, y, fold, lambda k, a, b, t: np.asarray(fit(a.tolist(), b.tolist()).probabilities(t.tolist())))
    report("shipped", subjects(first))
    report("trees", subjects(out_of_fold(x, y, fold, lambda k, a, b, t: trees(a, b, t))))

    facts = ConceptFacts.of(scheme)
    rows, labels, papers, concepts = closure_rows(data, np.where(allowed, first, 0.0), facts, gold)
    closure_fold = paper_fold[papers]
    report("closure", list(zip(papers, concepts, out_of_fold(rows, labels, closure_fold, lambda k, a, b, t: trees(a, b, t)))))

    groups = np.array([data.papers[p].group for p in papers])
    venue = np.unique(groups, return_inverse=True)[1]
    prob = np.zeros(len(labels))
    for k in range(FOLDS):
        test = closure_fold == k
        encoded = np.zeros((len(labels), 2))
        for j in range(FOLDS):  # a training row's habit features come from the folds other than its own and k
            if j != k:
                part = closure_fold == j
                encoded[part] = habits(labels, concepts, groups, (closure_fold != k) & (closure_fold != j))[part]
        encoded[test] = habits(labels, concepts, groups, ~test)[test]
        full = np.column_stack([rows, encoded, venue])
        prob[test] = trees(full[~test], labels[~test], full[test])
    report("+ habits", list(zip(papers, concepts, prob)))

    report("oracle", [(data.paper[i], data.concept[i], float(y[i])) for i in np.flatnonzero(titled)])
    report("oracle+up", [(p, c, float(v)) for p, c, v in zip(papers, concepts, labels)])


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)
