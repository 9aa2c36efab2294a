"""Fit the link scorer on papers with author keywords: `kg train --keywords FILE`.

Each (paper, concept) candidate the phrase extractor finds becomes a row of kg.extract.features;
its label is whether the concept is among the paper's gold concepts under the keyword rule (named
by a keyword, or above one through skos:broader). A logistic regression (scikit-learn) is fitted on
standardised rows, cross-validated by paper, and the threshold that maximises the rule's roll-up F1
on the out-of-fold probabilities becomes the model's default `--threshold`. Every paper is also
read without its title, so the model scores untitled papers (seed lists) on the same scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from kg.core.defaults import TRAIN_FOLDS
from kg.extract.features import FEATURES, choose, judged
from kg.extract.ingest import Paper
from kg.extract.keywords import Hierarchy, KeywordEvaluation, KeywordPaper, score_keywords, topic_key
from kg.extract.matcher import PhraseExtractor
from kg.extract.scheme import Scheme
from kg.extract.scorer import Scorer

FOLDS = TRAIN_FOLDS
C = 1.0  # inverse regularisation strength of the logistic regression
THRESHOLDS = tuple(round(0.05 + 0.01 * i, 2) for i in range(66))  # 0.05 … 0.70


@dataclass(frozen=True)
class Table:
    """Candidate rows of a training file: paper index, concept, features and label of each row. The papers are
    the file's records (a KeywordPaper, a kg.extract.expert.ExpertPaper: anything with an `id`)."""

    papers: tuple[Any, ...]
    paper: tuple[int, ...]
    concept: tuple[str, ...]
    rows: tuple[tuple[float, ...], ...]
    label: tuple[int, ...]
    titled: tuple[bool, ...]  # the row comes from a reading with the title (False: title left out)


@dataclass(frozen=True)
class Trained:
    """A fitted model with its cross-validated figures on the file it was fitted on."""

    scorer: Scorer
    cross_validated: KeywordEvaluation
    untitled: KeywordEvaluation  # the same, papers read without their titles
    threshold_f1: tuple[tuple[float, float], ...]  # (threshold, out-of-fold roll-up F1)


def hierarchy_of(scheme: Scheme) -> Hierarchy:
    """The scheme as the keyword rule sees it."""
    return Hierarchy(
        {iri: frozenset(topic_key(label) for label in c.labels) for iri, c in scheme.concepts.items()},
        {iri: frozenset(c.broader) for iri, c in scheme.concepts.items()},
    )


def table(entries: Sequence[KeywordPaper], scheme: Scheme) -> Table:
    """Candidate rows of every paper whose keywords name a concept, read with and without its title."""
    hierarchy = hierarchy_of(scheme)
    named_by = hierarchy.named_by()
    extractor = PhraseExtractor(scheme)
    kept = [e for e in entries if any(named_by.get(topic_key(k)) for k in e.keywords)]
    gold = [hierarchy.closure(c for k in e.keywords for c in named_by.get(topic_key(k), ())) for e in kept]
    paper, concept, rows, label, titled = [], [], [], [], []
    for with_title in (True, False):
        papers = [Paper(e.id, e.abstract, e.title if with_title else None) for e in kept]
        for i, (concepts, feature_rows) in enumerate(extractor.candidates(extractor.read(papers))):
            for c, row in zip(concepts, feature_rows):
                paper.append(i)
                concept.append(c)
                rows.append(tuple(row))
                label.append(int(c in gold[i]))
                titled.append(with_title)
    return Table(tuple(kept), tuple(paper), tuple(concept), tuple(rows), tuple(label), tuple(titled))


def check_trainable(papers: int, labels: Sequence[int], folds: int, source: str) -> None:
    """Refuse, before any fit, a file too small to cross-validate or whose candidates are all right or all wrong."""
    from kg.core.errors import UsageError

    if papers < folds:
        raise UsageError(f"{source}: {papers} usable papers for {folds} folds; kg train needs at least as many papers as folds (--folds)")
    if len(set(labels)) < 2:
        kind = "right" if labels and labels[0] else "wrong"
        raise UsageError(f"{source}: every candidate of its papers is {kind}; kg train needs papers with both right and wrong candidates")


def fit(rows: Sequence[Sequence[float]], labels: Sequence[int], threshold: float = 0.5, trained_on: str = "") -> Scorer:
    """A logistic regression on standardised rows, as a Scorer."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    x = np.asarray(rows, dtype=np.float64)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=C, max_iter=2000)
    model.fit((x - mean) / scale, np.asarray(labels))
    return Scorer(FEATURES, tuple(mean.tolist()), tuple(scale.tolist()), tuple(model.coef_[0].tolist()), float(model.intercept_[0]), threshold, trained_on)


def cross_validated(data: Table, fold_of: Sequence[int]) -> list[float]:
    """Each row's probability from a model fitted on the other folds (`fold_of`: the fold of each paper)."""
    out = [0.0] * len(data.rows)
    for k in sorted(set(fold_of)):
        train_rows = [i for i, p in enumerate(data.paper) if fold_of[p] != k]
        test_rows = [i for i, p in enumerate(data.paper) if fold_of[p] == k]
        model = fit([data.rows[i] for i in train_rows], [data.label[i] for i in train_rows])
        for i, p in zip(test_rows, model.probabilities([data.rows[i] for i in test_rows])):
            out[i] = p
    return out


def train(entries: Sequence[KeywordPaper], scheme: Scheme, folds: int = FOLDS, trained_on: str = "") -> Trained:
    """Cross-validate by paper, choose the threshold, and fit the final model on every row."""
    data = table(entries, scheme)
    n = len(data.papers)
    check_trainable(n, data.label, folds, trained_on or "keyword file")
    out_of_fold = cross_validated(data, [i * folds // n for i in range(n)])  # contiguous folds in file order
    hierarchy = hierarchy_of(scheme)
    curve = tuple((t, evaluate(data, out_of_fold, t, hierarchy, titled=True).figures().f1) for t in THRESHOLDS)
    best = max(curve, key=lambda tf: (tf[1], -abs(tf[0] - 0.5)))[0]
    final = fit(data.rows, data.label, best, trained_on)
    return Trained(final, evaluate(data, out_of_fold, best, hierarchy, True), evaluate(data, out_of_fold, best, hierarchy, False), curve)


def evaluate(data: Table, probabilities: Sequence[float], threshold: float, hierarchy: Hierarchy, titled: bool) -> KeywordEvaluation:
    """The keyword rule's figures for the subjects that `threshold` makes of the given probabilities."""
    rows_of: dict[int, list[int]] = {}
    for i, paper in enumerate(data.paper):
        if data.titled[i] == titled:
            rows_of.setdefault(paper, []).append(i)
    predicted: dict[str, set[str]] = {e.id: set() for e in data.papers}
    for paper, rows in rows_of.items():
        chosen = choose([judged(probabilities[i], data.rows[i]) for i in rows], threshold)
        predicted[data.papers[paper].id].update(data.concept[i] for i, c in zip(rows, chosen) if c)
    return score_keywords(data.papers, predicted, hierarchy)


def write(scorer: Scorer, path: Path) -> None:
    """Write a model file atomically."""
    from kg.graph.atomic import atomic_write

    with atomic_write(path) as stream:
        stream.write(scorer.to_json().encode("utf-8"))


def train_file(keywords: str | Path, output: str | Path, folds: int = FOLDS, scheme: Scheme | None = None) -> Trained:
    """`kg train`: fit on a keyword file with the bundled scheme and write the model to `output`."""
    from importlib.util import find_spec

    from kg.core.errors import UsageError
    from kg.extract.keywords import read_keywords
    from kg.extract.scheme import load

    if find_spec("sklearn") is None:
        raise UsageError('kg train needs scikit-learn: pip install "kg[train]"')
    path = Path(keywords)
    trained = train(read_keywords(path), scheme or load(), folds, trained_on=path.name)
    write(trained.scorer, Path(output))
    return trained
