"""Ways to choose among today's candidates, against the shipped choice, cross-validated on expert topic lists.

Usage: python bench/choice_variants.py [EXPERT.jsonl PAPERS.jsonl] [--repeats N]

Each variant gets the same out-of-fold probabilities (5 folds by paper, N random splits) and its threshold where
out-of-fold precision first reaches PRECISION_FLOOR, as `kg train --expert` chooses it; it prints the mean
precision, recall, generic share and subjects a paper:

- `shipped`: the logistic scorer's probability at one threshold (kg.extract.features.choose);
- `child for umbrella, add`: a candidate the threshold leaves out is a subject too when a concept above it is one
  and its probability is within GAP of the threshold (the specific level where the text supports it);
- `child for umbrella, swap`: the same, and the umbrella above it is no longer a subject;
- `specific model`: a second logistic model fitted on the topics found (a candidate that is an expert's topic or
  lies below one, not a broader area) beside the first; a subject when either passes its own threshold;
- `boosted trees`: scikit-learn's histogram gradient boosting on the same rows in place of the logistic model.

It also prints how often the concept the concepts' definitions describe best *below a candidate* (the specific
level of an umbrella the paper names) is an expert's topic: the ceiling of a described candidate per umbrella.
See docs/decisions/0072.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from kg.extract import definitions, ingest, scheme
from kg.extract import features as F
from kg.extract.expert import read_expert
from kg.extract.keywords import topic_key
from kg.extract.matcher import PhraseExtractor
from kg.extract.training.expert import PRECISION_FLOOR, THRESHOLDS, Judge, table
from kg.extract.training.scorer import Table, cross_validated

GOLD = Path(__file__).resolve().parent.parent.parent / "shared" / "gold"
GAPS = (0.05, 0.1, 0.2)
Subjects = dict[str, set[str]]


def boosted(data: Table, fold_of: list[int]) -> list[float]:
    """Out-of-fold probabilities of gradient-boosted trees on the scorer's rows."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    x, y = np.asarray(data.rows), np.asarray(data.label)
    fold = np.asarray(fold_of)[np.asarray(data.paper)]
    out = np.zeros(len(y))
    for k in sorted(set(fold_of)):
        model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, max_leaf_nodes=15, min_samples_leaf=40, l2_regularization=1.0)
        model.fit(x[fold != k], y[fold != k])
        out[fold == k] = model.predict_proba(x[fold == k])[:, 1]
    return out.tolist()


class Choices:
    """The titled rows of each paper and the scheme's ancestors, to turn probabilities into subjects."""

    def __init__(self, data: Table, loaded: scheme.Scheme) -> None:
        self.data = data
        self.ancestors = {iri: loaded.ancestors(iri) for iri in loaded.concepts}
        self.rows_of: dict[int, list[int]] = {}
        for i, p in enumerate(data.paper):
            if data.titled[i]:
                self.rows_of.setdefault(p, []).append(i)

    def subjects(self, first: list[float], threshold: float, second: list[float] | None = None, second_threshold: float = 9.0,
                 gap: float | None = None, swap: bool = False) -> Subjects:
        d = self.data
        out: Subjects = {e.id: set() for e in d.papers}
        for p, rows in self.rows_of.items():
            # Either model past its own threshold: one probability, shifted so that 0.5 is the cut for both.
            best = [max(first[i] - threshold, (second[i] - second_threshold) if second else -9.0) + 0.5 for i in rows]
            judged = [(b, F.eligible(d.rows[i]), d.rows[i][F._DESCRIBED] == 0.0) for b, i in zip(best, rows)]
            chosen = {d.concept[i] for i, c in zip(rows, F.choose(judged, 0.5)) if c}
            if gap is not None:
                add, drop = set(), set()
                for i, (b, ok, _) in zip(rows, judged):
                    c = d.concept[i]
                    above = self.ancestors.get(c, set()) & chosen
                    if c not in chosen and ok and b >= 0.5 - gap and above:
                        add.add(c)
                        drop |= above if swap else set()
                chosen = (chosen | add) - (drop - add)
            out[d.papers[p].id] = chosen
        return out


def at_floor(judge: Judge, data: Table, pick) -> tuple[float, ...]:
    """(P, R, generic share, subjects a paper) at the lowest threshold whose precision reaches the floor."""
    for t in THRESHOLDS:
        s = judge.score(data.papers, pick(t))
        if s.precision >= PRECISION_FLOOR:
            return s.precision, s.recall, s.generic_share, s.subjects_a_paper
    return (0.0, 0.0, 0.0, 0.0)


def specific_labels(data: Table, judge: Judge) -> Table:
    """The rows labelled 1 only where the candidate is an expert's topic or lies below one (not a broader area)."""
    candidates: Subjects = {}
    for i in range(len(data.rows)):
        candidates.setdefault(data.papers[data.paper[i]].id, set()).add(data.concept[i])
    scored = judge.score(data.papers, candidates)
    specific = {(p.id, s.concept) for p in scored.papers for s in p.subjects if s.right and not s.generic}
    return replace(data, label=tuple(int((data.papers[data.paper[i]].id, data.concept[i]) in specific) for i in range(len(data.rows))))


def read_with_scores(extractor: PhraseExtractor, papers) -> tuple[list, list[tuple[set[str], np.ndarray]]]:
    """The extractor's reading of each paper, with the concepts the matcher found in it and the BM25 of every concept's
    definition against it (kg.extract.definitions, in `extractor.definitions.iris` order), kept as the reading scores
    them."""
    captured: list[tuple[set[str], np.ndarray]] = []
    original = definitions.DefinitionIndex._choose

    def keep(self, q, words, title, scores, *rest):  # type: ignore[no-untyped-def]
        captured.append((set(q.found), scores.copy()))
        return original(self, q, words, title, scores, *rest)

    definitions.DefinitionIndex._choose = keep  # type: ignore[method-assign]
    try:
        return extractor.read(papers), captured
    finally:
        definitions.DefinitionIndex._choose = original  # type: ignore[method-assign]


def described_below(extractor: PhraseExtractor, loaded: scheme.Scheme, experts, papers, judge: Judge) -> Counter:
    """Per paper, the concept below one of its candidates that the definitions describe best (not a candidate
    itself): how often it is an expert's topic, lies below one, or reaches a topic kg misses."""
    read, captured = read_with_scores(extractor, papers)
    iris = extractor.definitions.iris
    index = {c: i for i, c in enumerate(iris)}
    below: dict[str, set[str]] = {}
    for iri in loaded.concepts:
        for a in loaded.ancestors(iri):
            below.setdefault(a, set()).add(iri)
    named_by = judge.hierarchy.named_by()
    topics_of = {e.id: {c for t in e.about for c in named_by.get(topic_key(t.label), ())} for e in experts}
    counts: Counter = Counter()
    for paper, r, (found, scores) in zip(papers, read, captured):
        topics = topics_of[paper.id]
        pool = set().union(*(below.get(f, set()) for f in found)) - found - ({r.described.concept} if r.described else set())
        ranked = sorted((c for c in pool if c in index and scores[index[c]] > 0), key=lambda c: (-scores[index[c]], c))  # ties by IRI: the same top in every run
        if ranked:
            top = ranked[0]
            counts["new candidates"] += 1
            counts["an expert's topic"] += top in topics
            counts["below a topic"] += bool(loaded.ancestors(top) & topics) and top not in topics
        for t in topics:
            if not any(t == f or t in loaded.ancestors(f) for f in found):
                counts["topics kg's candidates miss"] += 1
                counts["of them below a candidate"] += t in pool
                counts["of them reached by the top one"] += t in ranked[:1]
    return counts


def pickers(choices: Choices, first: list[float], second: list[float], trees: list[float]) -> dict[str, Callable[[float], Subjects]]:
    """Each variant as threshold -> subjects, over one split's out-of-fold probabilities."""
    out: dict[str, Callable[[float], Subjects]] = {"shipped": lambda t: choices.subjects(first, t), "boosted trees": lambda t: choices.subjects(trees, t)}
    for gap in GAPS:
        out[f"child for umbrella, add (gap {gap})"] = lambda t, g=gap: choices.subjects(first, t, gap=g)
        out[f"child for umbrella, swap (gap {gap})"] = lambda t, g=gap: choices.subjects(first, t, gap=g, swap=True)
    for cut in (0.4, 0.5, 0.6):
        out[f"specific model (its threshold {cut})"] = lambda t, c=cut: choices.subjects(first, t, second, c)
    return out


def main(argv: list[str]) -> None:
    repeats = int(argv[argv.index("--repeats") + 1]) if "--repeats" in argv else 3
    files = [a for a in argv if not a.startswith("--") and not a.isdigit()]
    expert_file, papers_file = (Path(files[0]), Path(files[1])) if len(files) == 2 else (GOLD / "expert-dev.jsonl", GOLD / "keywords-dev.jsonl")
    experts = read_expert(expert_file)
    wanted = {e.id for e in experts}
    texts = {p.id: p for p in ingest.read([papers_file]).papers if p.id in wanted}
    loaded = scheme.load()
    judge = Judge.of_scheme(loaded)
    extractor = PhraseExtractor(loaded)
    data = table(experts, texts, judge, extractor)
    specific = specific_labels(data, judge)
    choices = Choices(data, loaded)
    results: dict[str, list[tuple[float, ...]]] = {}
    for seed in range(repeats):
        order = list(range(len(data.papers)))
        random.Random(seed).shuffle(order)
        fold_of = {p: k % 5 for k, p in enumerate(order)}
        folds = [fold_of[p] for p in range(len(data.papers))]
        first, second, trees = cross_validated(data, folds), cross_validated(specific, folds), boosted(data, folds)
        variants = pickers(choices, first, second, trees)
        for name, pick in variants.items():
            results.setdefault(name, []).append(at_floor(judge, data, pick))
    print(f"{len(data.papers)} papers, {len(data.rows)} candidate rows, {repeats} fold splits; at out-of-fold P >= {PRECISION_FLOOR}:")
    print(f"{'variant':42} {'P':>6} {'R':>6} {'generic':>8} {'subjects':>9}")
    for name, runs in results.items():
        p, r, g, s = (sum(x[i] for x in runs) / len(runs) for i in range(4))
        print(f"{name:42} {p:6.3f} {r:6.3f} {g:8.3f} {s:9.2f}")
    counts = described_below(extractor, loaded, [e for e in experts if e.id in texts], [texts[e.id] for e in experts if e.id in texts], judge)
    print("the concept described best below a candidate, one a paper:", dict(counts))


if __name__ == "__main__":
    main(sys.argv[1:])
