"""A graph's Web Annotations folded per (paper, concept) link: best score, count, first mention, evidence spans.

What kg.graph.facts keeps of the annotations: the best score, the number of annotations, the first mention and (read
with evidence) every span.

A reader hands `Links.fold` maps of the annotation triples (one flat map per predicate, keyed by a hash of the node's
IRI; last value wins) and the targets' selectors. Any graph can be folded at once, all its annotations in one set of
maps. A graph kg wrote gives each annotation's triples together (kg.pipeline.triples._annotation), so `Groups` folds
them a thousand annotations at a time and holds only the hashes of the nodes already folded (decision 0073: the page's
read of a 21k-paper graph peaked at 312 MB where it held 430 MB). A triple about a node already folded raises
`OutOfOrder`; the reader then reads the graph again with one set of maps, so both give the same figures.

`Annotated` is one annotation as a build writes it: its triples, and the terms the query index keeps of it, so that the
index of a build takes its mention rows from the terms instead of joining them back from the triples (decision 0074).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from kg.graph.vocabulary import DCTERMS, KG, OA

Mention = tuple[int, str, str]  # start, exact, and the property it quotes ("" for the abstract)
Span = tuple[str, int, int, str]  # an evidence span: its field ("title" or "abstract"), start, end, exact
# The annotation predicates read into maps (with evidence, OA + "end" too); oa:hasSelector is read beside them.
PREDICATES = (OA + "hasBody", OA + "hasTarget", OA + "hasSource", KG + "score", OA + "start", OA + "exact", KG + "onProperty")


@dataclass(frozen=True, slots=True)
class Annotated:
    """One oa:Annotation of a paper's span as kg.pipeline.triples writes it: its `triples`, in their order, and the
    terms they hold: the concept (body), the paper (source), the score, the target node, the span's start and end
    literals, the quoted text, and the property quoted (`on`: dcterms:title; None for the abstract)."""

    triples: tuple[Any, ...]
    body: Any
    source: Any
    score: Any
    target: Any
    start: Any
    end: Any
    exact: Any
    on: Any = None


class OutOfOrder(Exception):
    """An annotation's triple where a graph kg wrote would not have it: fold the graph's annotations at once instead."""


@dataclass(frozen=True)
class Evidence:
    """A (paper, concept) link's evidence: its kg:score as written (the first annotation's), and every span quoted."""

    score: str
    spans: tuple[Span, ...]


class Links:
    """Per (paper, concept), from the annotations folded so far: the best score, the number of annotations, the first
    mention, and with `evidence` every span (sorted). A mention of the abstract comes before one of the title
    (kg:onProperty), which is the evidence only of a concept that the title alone names."""

    def __init__(self, evidence: bool) -> None:
        self.evidence = evidence
        self.scores: dict[tuple[str, str], float] = {}
        self.mentions: Counter[tuple[str, str]] = Counter()
        self.first: dict[tuple[str, str], Mention] = {}
        self.quoted: dict[tuple[str, str], tuple[str, list[Span]]] = {}

    @staticmethod
    def maps(evidence: bool) -> dict[str, dict[int, Any]]:
        """Empty maps, one a predicate, to read annotation triples into."""
        return {p: {} for p in (*PREDICATES, OA + "end")} if evidence else {p: {} for p in PREDICATES}

    def fold(self, ann: dict[str, dict[int, Any]], selectors: dict[int, list[int]]) -> None:
        """Add the annotations of `ann` (and the targets' `selectors`), in the order their oa:hasBody was read."""
        end_of = ann.get(OA + "end") if self.evidence else None
        body, target_of, score_of = ann[OA + "hasBody"], ann[OA + "hasTarget"], ann[KG + "score"]
        source, start_of, exact_of, on_of = ann[OA + "hasSource"], ann[OA + "start"], ann[OA + "exact"], ann[KG + "onProperty"]
        scores, mentions, first, quoted = self.scores, self.mentions, self.first, self.quoted
        for a, concept in body.items():
            target = target_of.get(a)
            if target not in source:
                continue
            key = (source[target], concept)
            mentions[key] += 1
            if a in score_of:
                scores[key] = max(scores.get(key, float("-inf")), float(score_of[a]))
            sels = selectors.get(target, ())
            if end_of is not None:
                link = quoted.setdefault(key, (score_of.get(a, ""), []))
                start = next((start_of[q] for q in sels if q in start_of), None)
                end = next((end_of[q] for q in sels if q in end_of), None)
                if start is not None and end is not None:
                    where = "title" if on_of.get(target, "") == DCTERMS + "title" else "abstract"
                    link[1].append((where, int(start), int(end), next((exact_of[q] for q in sels if q in exact_of), "")))
            starts = [int(start_of[q]) for q in sels if q in start_of]
            if starts:
                exacts = [exact_of[q] for q in sels if q in exact_of]
                mention = (starts[0], exacts[0] if exacts else "", on_of.get(target, ""))
                old = first.get(key)
                if old is None or (mention[2], mention[0], mention[1]) < (old[2], old[0], old[1]):
                    first[key] = mention

    def result(self) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], int], dict[tuple[str, str], Mention],
                              dict[tuple[str, str], Evidence]]:
        evidence = {key: Evidence(score, tuple(sorted(spans))) for key, (score, spans) in self.quoted.items()}
        return self.scores, dict(self.mentions), self.first, evidence


class Groups:
    """A graph's annotations read as kg writes them, one after another: the reader fills `ann` and `selectors` (the maps
    of `Links.maps`) and calls `close` when an annotation begins once they hold `size` annotations; those are then
    checked to hold every triple of their nodes, and folded into `links`."""

    size = 1000  # annotations folded at once: the maps stay small, the fold's own cost is paid once for them

    def __init__(self, links: Links, ann: dict[str, dict[int, Any]], selectors: dict[int, list[int]]) -> None:
        self.links, self.ann, self.selectors = links, ann, selectors
        self.done: set[int] = set()  # the nodes of the annotations folded: annotations, targets, selectors

    def close(self) -> None:
        """Fold the annotations read since the last call (the reader calls this once more after the last triple)."""
        ann, selectors = self.ann, self.selectors
        body = ann[OA + "hasBody"]
        if not body:  # nothing read yet, or a triple before any annotation began
            if any(ann.values()) or selectors:
                raise OutOfOrder("an annotation's triple before its oa:hasBody")
            return
        nodes = set(body)
        nodes.update(ann[OA + "hasTarget"].values(), *selectors.values())
        if not nodes.isdisjoint(self.done) or not nodes.issuperset(selectors) or not nodes.issuperset(set().union(*ann.values())):
            raise OutOfOrder("an annotation's triples are not together")
        self.links.fold(ann, selectors)
        self.done |= nodes
        for values in ann.values():
            values.clear()
        selectors.clear()
