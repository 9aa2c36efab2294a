"""The author-keyword rule: score a paper → concepts mapping against the keywords authors chose.

A keyword names a concept when it equals one of the concept's labels (case-insensitive, hyphens
as spaces, a final plural "s" ignored). A paper's gold concepts are the concepts its keywords name
plus every concept above them through skos:broader; its predicted concepts are its subjects plus
every concept above them. Papers none of whose keywords names a concept are left out. Recall
counts gold concepts; precision counts only predicted concepts that are gold concepts of at least
JUDGED_MIN papers (the vocabulary authors actually use). The direct figures are the same without
either roll-up. Coverage is the share of keywords used by at least JUDGED_MIN papers that name a
concept.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from kg.core.errors import InputError
from kg.graph.facts import closure
from kg.graph.names import topic_key as topic_key  # the comparison form of a keyword: kg.graph.names keeps the one definition

JUDGED_MIN = 3


@dataclass(frozen=True)
class KeywordPaper:
    """One line of a keyword file: a paper and the keywords its authors chose."""

    id: str
    keywords: tuple[str, ...]
    title: str = ""
    abstract: str = ""
    group: str = ""  # venue and year ("ICLR 2017") when the line has them: figures are also given per group


@dataclass(frozen=True)
class Hierarchy:
    """What the rule needs of a concept scheme: each concept's label keys and its broader concepts."""

    labels: Mapping[str, frozenset[str]]  # concept IRI → topic keys of its prefLabel and altLabels
    broader: Mapping[str, frozenset[str]]

    def named_by(self) -> dict[str, frozenset[str]]:
        """Topic key → the concepts that key names."""
        out: dict[str, set[str]] = {}
        for concept, keys in self.labels.items():
            for key in keys:
                out.setdefault(key, set()).add(concept)
        return {k: frozenset(v) for k, v in out.items()}

    def closure(self, concepts: Iterable[str]) -> frozenset[str]:
        """The concepts and every concept above them (skos:broader*, kg.graph.facts.closure)."""
        up = self._up
        return frozenset().union(*(up(c) for c in concepts))

    @cached_property
    def _up(self) -> Callable[[str], frozenset[str]]:
        return closure(self.broader)


@dataclass(frozen=True)
class Scored:
    """One paper under the rule: gold and predicted concepts, rolled up and direct."""

    id: str
    gold: frozenset[str]  # named concepts, rolled up
    predicted: frozenset[str]  # subjects, rolled up
    gold_direct: frozenset[str]
    predicted_direct: frozenset[str]
    group: str = ""


@dataclass(frozen=True)
class Figures:
    """Micro precision, recall and F1 over (paper, concept) pairs."""

    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def line(self, name: str) -> str:
        return f"{name:<8} precision {self.precision:.3f}  recall {self.recall:.3f}  F1 {self.f1:.3f}  ({self.tp} found, {self.fn} missed, {self.fp} extra)"


@dataclass(frozen=True)
class KeywordEvaluation:
    """The rule's figures for a set of papers, with per-paper detail."""

    papers: tuple[Scored, ...]
    judged: frozenset[str]  # rolled-up gold concepts of at least JUDGED_MIN papers
    judged_direct: frozenset[str]
    coverage: float  # share of frequent keywords that name a concept
    left_out: int  # papers none of whose keywords names a concept
    unmatched: int  # scored papers the predictions do not know

    def figures(self, direct: bool = False, group: str | None = None) -> Figures:
        """Micro figures with roll-up (the rule's headline) or without it; of one group's papers when given."""
        judged = self.judged_direct if direct else self.judged
        tp = fp = fn = 0
        for p in self.papers:
            if group is not None and p.group != group:
                continue
            gold, got = (p.gold_direct, p.predicted_direct) if direct else (p.gold, p.predicted)
            tp += len(gold & got)
            fn += len(gold - got)
            fp += len((got - gold) & judged)
        return Figures(tp, fp, fn)

    def groups(self) -> list[str]:
        """The groups (venue and year) of the scored papers, sorted."""
        return sorted({p.group for p in self.papers})

    def extras(self, paper: Scored, direct: bool = False) -> frozenset[str]:
        """A paper's predicted concepts that count against precision."""
        if direct:
            return (paper.predicted_direct - paper.gold_direct) & self.judged_direct
        return (paper.predicted - paper.gold) & self.judged


def json_lines(path: str | Path, kind: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) of each non-blank line of a JSONL `kind` file ("keyword", "gold"); errors name file and line."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(f"{path}: no such {kind} file") from None
    except (UnicodeDecodeError, IsADirectoryError) as exc:
        raise InputError(f"{path}: not a UTF-8 JSONL {kind} file ({exc.__class__.__name__})") from None
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{number}: malformed JSON ({exc.msg})") from None
            except RecursionError:
                raise InputError(f"{path}:{number}: malformed JSON (nested too deeply)") from None
            except ValueError as exc:  # e.g. a number of more than 4,300 digits (Python's int conversion limit)
                raise InputError(f"{path}:{number}: unreadable JSON ({exc})") from None


def read_keywords(path: str | Path) -> list[KeywordPaper]:
    """Read a keyword file: one JSON object a line with `id` and `keywords` (a list of strings)."""
    out = []
    for number, entry in json_lines(path, "keyword"):
        keywords = entry.get("keywords") if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
            raise InputError(f"{path}:{number}: a keyword line needs 'id' (text) and 'keywords' (a list of strings)")
        group = " ".join(str(entry[k]) for k in ("venue", "year") if entry.get(k) not in (None, ""))
        out.append(KeywordPaper(entry["id"], tuple(keywords), str(entry.get("title") or ""), str(entry.get("abstract") or ""), group))
    if not out:
        raise InputError(f"{path}: no keyword lines; expected JSONL with 'id' and 'keywords'")
    return out


def score_keywords(entries: Iterable[KeywordPaper], predicted: Mapping[str, Iterable[str]], hierarchy: Hierarchy) -> KeywordEvaluation:
    """Score predicted subjects (paper id → concept IRIs) against author keywords under the rule."""
    named_by = hierarchy.named_by()
    entries = list(entries)
    named = {e.id: frozenset(c for k in e.keywords for c in named_by.get(topic_key(k), ())) for e in entries}
    kept = [e for e in entries if named[e.id]]
    scored = []
    for e in kept:
        direct = frozenset(c for c in predicted.get(e.id, ()))
        scored.append(Scored(e.id, hierarchy.closure(named[e.id]), hierarchy.closure(direct), named[e.id], direct, e.group))
    judged = _judged(p.gold for p in scored)
    judged_direct = _judged(p.gold_direct for p in scored)
    # Coverage: keywords that at least JUDGED_MIN papers use, and of those the ones that name a concept.
    uses = Counter(key for e in entries for key in {topic_key(k) for k in e.keywords})
    frequent = [k for k, n in uses.items() if n >= JUDGED_MIN]
    coverage = sum(1 for k in frequent if k in named_by) / len(frequent) if frequent else 0.0
    unmatched = sum(1 for e in kept if e.id not in predicted)
    return KeywordEvaluation(tuple(scored), judged, judged_direct, coverage, len(entries) - len(kept), unmatched)


def _judged(golds: Iterable[frozenset[str]]) -> frozenset[str]:
    counts = Counter(c for gold in golds for c in gold)
    return frozenset(c for c, n in counts.items() if n >= JUDGED_MIN)
