"""Fit the link scorer on expert topic lists: `kg train --expert FILE --papers FILE`.

An expert list names everything a paper is about (the most specific concept that fits). Each
(paper, concept) candidate of the phrase extractor is a row of kg.extract.features, labelled 1 when
the expert rule counts it right: an `about` concept, one below it, or (an umbrella concept aside)
one above it. A logistic regression is cross-validated by paper; the default threshold is the
lowest whose out-of-fold precision under the expert rule reaches PRECISION_FLOOR, so the model
finds as many of the experts' topics as it can at a precision readers accept.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from kg.extract.expert import ExpertEvaluation, ExpertPaper, read_expert, score_expert
from kg.extract.features import choose, judged
from kg.extract.ingest import Paper
from kg.extract.keywords import Hierarchy
from kg.extract.matcher import PhraseExtractor
from kg.extract.scheme import KG, Scheme
from kg.extract.scorer import Scorer
from kg.extract.training.scorer import FOLDS, Table, check_trainable, cross_validated, fit, hierarchy_of, write

PRECISION_FLOOR = 0.80
THRESHOLDS = tuple(round(0.05 + 0.01 * i, 2) for i in range(86))  # 0.05 … 0.90


@dataclass(frozen=True)
class ExpertTrained:
    """A fitted model and its cross-validated figures under the expert rule."""

    scorer: Scorer
    cross_validated: ExpertEvaluation
    curve: tuple[tuple[float, float, float], ...]  # (threshold, out-of-fold precision, recall)


@dataclass(frozen=True)
class Judge:
    """The expert rule over one scheme: its hierarchy and umbrella concepts (kg.extract.expert.score_expert)."""

    hierarchy: Hierarchy
    umbrellas: frozenset[str]

    @classmethod
    def of_scheme(cls, scheme: Scheme) -> Judge:
        return cls(hierarchy_of(scheme), frozenset(i for i, c in scheme.concepts.items() if KG + "Umbrella" in c.kinds))

    def score(self, experts: Sequence[ExpertPaper], subjects: dict[str, set[str]]) -> ExpertEvaluation:
        return score_expert(experts, subjects, self.hierarchy, self.umbrellas)


def table(experts: Sequence[ExpertPaper], texts: dict[str, Paper], judge: Judge, extractor: PhraseExtractor) -> Table:
    """Candidate rows of every expert paper whose text is known, labelled by the expert rule (every candidate
    judged as if it were a subject: right or not). Every paper is also read without its title, so the model
    scores untitled papers (seed lists) on the same scale, as kg.extract.training.scorer does."""
    kept = tuple(e for e in experts if e.id in texts)
    paper, concept, rows, label, titled = [], [], [], [], []
    for with_title in (True, False):
        papers = [texts[e.id] if with_title else replace(texts[e.id], title=None) for e in kept]
        candidates = extractor.candidates(extractor.read(papers))
        judged = judge.score(kept, {e.id: set(concepts) for e, (concepts, _) in zip(kept, candidates)})
        for i, ((concepts, feature_rows), scored) in enumerate(zip(candidates, judged.papers)):
            right = {s.concept for s in scored.subjects if s.right}
            for c, row in zip(concepts, feature_rows):
                paper.append(i)
                concept.append(c)
                rows.append(tuple(row))
                label.append(int(c in right))
                titled.append(with_title)
    return Table(kept, tuple(paper), tuple(concept), tuple(rows), tuple(label), tuple(titled))


def subjects(data: Table, probabilities: Sequence[float], threshold: float, titled: bool = True) -> dict[str, set[str]]:
    """Each paper's subjects under `threshold`, chosen as a build chooses them (kg.extract.features.choose), from
    the reading with its title (`titled`) or without."""
    rows_of: dict[int, list[int]] = {}
    for i, p in enumerate(data.paper):
        if data.titled[i] == titled:
            rows_of.setdefault(p, []).append(i)
    out: dict[str, set[str]] = {e.id: set() for e in data.papers}
    for p, rows in rows_of.items():
        chosen = choose([judged(probabilities[i], data.rows[i]) for i in rows], threshold)
        out[data.papers[p].id] = {data.concept[i] for i, c in zip(rows, chosen) if c}
    return out


def train(experts: Sequence[ExpertPaper], texts: dict[str, Paper], scheme: Scheme, folds: int = FOLDS, trained_on: str = "") -> ExpertTrained:
    """Cross-validate by paper, choose the threshold, fit the final model on every row."""
    judge = Judge.of_scheme(scheme)
    data = table(experts, texts, judge, PhraseExtractor(scheme))
    n = len(data.papers)
    check_trainable(n, data.label, folds, trained_on or "expert file")
    out_of_fold = cross_validated(data, [i % folds for i in range(n)])
    scores = {t: judge.score(data.papers, subjects(data, out_of_fold, t)) for t in THRESHOLDS}
    curve = tuple((t, s.precision, s.recall) for t, s in scores.items())
    passing = [t for t, s in scores.items() if s.precision >= PRECISION_FLOOR]
    best = min(passing) if passing else max(scores, key=lambda t: scores[t].precision)
    final = fit(data.rows, data.label, best, trained_on)
    return ExpertTrained(final, scores[best], curve)


def train_file(expert: str | Path, papers: str | Path, output: str | Path, folds: int = FOLDS, scheme: Scheme | None = None) -> ExpertTrained:
    """`kg train --expert FILE --papers FILE`: fit on expert lists with the bundled scheme and write the model."""
    from importlib.util import find_spec

    from kg.core.errors import UsageError
    from kg.extract.ingest import read as read_papers
    from kg.extract.scheme import load

    if find_spec("sklearn") is None:
        raise UsageError('kg train needs scikit-learn: pip install "kg[train]"')
    experts = read_expert(expert)
    wanted = {e.id for e in experts}
    texts = {p.id: p for p in read_papers([Path(papers)]).papers if p.id in wanted}
    if not texts:
        raise UsageError(f"{papers}: none of its papers has an id of {expert}; give the file with those papers' titles and abstracts")
    trained = train(experts, texts, scheme or load(), folds, trained_on=Path(expert).name)
    write(trained.scorer, Path(output))
    return trained
