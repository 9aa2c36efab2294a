"""Benchmarks and data sets a paper contributes, and their kind (kg/extract/patterns/benchmark-kinds.tsv).

"We introduce PrivQA, a multimodal benchmark", "we present a newly created dataset", a title "LST-Bench: A Benchmark
for long sequence time-series forecasting": the paper's contribution is a benchmark, and readers list it as one of
its topics at the level of its kind (language model benchmark, medical dataset). The kind is the one whose field
the paper names nearest to the word "benchmark" (its sentence first, then its title, then anywhere).
"""

from __future__ import annotations

from dataclasses import dataclass

from kg.core.errors import SchemeError
from kg.extract.contributions import OBJECT_WORDS, STOP, WINDOW
from kg.extract.scheme import Scheme
from kg.graph.names import topic_key
from kg.graph.resources import data_path

RESOURCE = "RESOURCE"  # the cue label of the nouns (kg/extract/patterns/cues.jsonl)
NEAR = 150  # characters either side of the noun in which a field's mention says the kind
# After the noun, what lets it head its phrase ("a benchmark for …", "a dataset called …"); "dataset distillation" is a method.
_AFTER = OBJECT_WORDS | {"and", "called", "named", "dubbed", "consisting", "comprising", "containing"}
# A title's noun after one of these in its clause is what the paper uses ("… via Imitation Learning on OSHA Dataset").
_BEFORE = OBJECT_WORDS - {"for", "that", "which", "where", "than"} | {"across", "under"}


@dataclass(frozen=True)
class Kinds:
    """The kinds of the scheme's benchmark-kinds table: for each concept, the kinds whose field holds it."""

    of: dict[str, tuple[str, ...]]  # concept → the kinds whose field holds it, narrowest field first
    default: str | None  # the kind of a benchmark whose field the paper does not name

    def kind(self, at: int, abstract: list[tuple[str, int, int]], title: list[tuple[str, int, int]]) -> str | None:
        """The kind of a contributed benchmark named at character `at` of the abstract (-1: in the title), from the
        paper's mentions (concept, start, end): the nearest one with a kind, in the abstract within NEAR characters,
        then in the title, then anywhere in the abstract."""
        near = sorted((abs(s - at), c) for c, s, _ in abstract if at >= 0 and abs(s - at) <= NEAR)
        for concept in [c for _, c in near] + [c for c, _, _ in title] + [c for c, _, _ in abstract]:
            if concept in self.of:
                return self.of[concept][0]
        return self.default


def kinds(scheme: Scheme) -> Kinds:
    """The benchmark-kinds table resolved against `scheme` (lines whose kind it lacks are skipped)."""
    by_label = {topic_key(c.label): iri for iri, c in scheme.concepts.items()}
    below: dict[str, set[str]] = {}
    for iri in scheme.concepts:
        for above in scheme.ancestors(iri) | {iri}:
            below.setdefault(above, set()).add(iri)
    of: dict[str, list[tuple[int, str]]] = {}
    default = None
    path = data_path("patterns") / "benchmark-kinds.tsv"
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        kind_label, sep, fields = line.partition("\t")
        if not sep:
            raise SchemeError(f"{path}:{number}: expected a kind, a tab and its fields separated by '; '")
        kind = by_label.get(topic_key(kind_label))
        if kind is None:
            continue
        if not fields.strip():
            default = kind
        for field in filter(None, (by_label.get(topic_key(f)) for f in fields.split(";"))):
            depth = len(scheme.ancestors(field))
            for concept in below.get(field, ()):
                of.setdefault(concept, []).append((-depth, kind))
    return Kinds({c: tuple(k for _, k in sorted(ks)) for c, ks in of.items()}, default)


def contributed(doc, cues: list[tuple[str, int, int]], title: bool = False) -> list[int]:
    """Tokens of the benchmark nouns a doc says the paper contributes: in an abstract, the noun a PROPOSE cue
    introduces within WINDOW tokens ("we introduce X, a benchmark"); in a title, a noun not after "on", "in",
    "with", … of its clause ("X: A Benchmark for Y"). The noun must head its phrase."""
    nouns = sorted(s for label, s, _ in cues if label == RESOURCE and _heads(doc, s))
    if title:
        return [i for i in nouns if not any(t.lower_ in _BEFORE for t in doc[_clause_start(doc, i) : i])]
    found = []
    for label, _, end in cues:
        if label != "PROPOSE":
            continue
        for i in range(end, min(end + WINDOW, len(doc))):
            if doc[i].text in STOP or doc[i].lower_ in OBJECT_WORDS:
                break
            if i in nouns:
                found.append(i)
                break
    return found


def _heads(doc, i: int) -> bool:
    after = doc[i + 1] if i + 1 < len(doc) else None
    return after is None or not after.is_alpha or after.lower_ in _AFTER


def _clause_start(doc, i: int) -> int:
    while i > 0 and doc[i - 1].text not in STOP | {"?", "!"}:
        i -= 1
    return i
