"""The expert rule: score a paper → subjects mapping against what an expert reader says each paper is about.

An expert line lists the topics a paper is about (`about`: the most specific concept that fits, its broader
concepts implied) and the scheme concepts its text names that it is not about (`not_about`, each with a kind).
Every label is looked up among the concepts' labels by topic_key (case-insensitive, hyphens as spaces, a final
plural "s" ignored). A subject is right when it is an about concept, lies below one through skos:broader, or lies
above one (a broader area); an umbrella concept (kg:Umbrella) only when it is itself an about concept.
Precision = right subjects / all subjects. Recall = about topics found / all about topics, where a topic is found
when a subject is a concept its label names or lies below one; a label that names no concept is a topic not
found. Both are micro-averaged over (paper, concept) pairs. Misses are explained by their cause (see CAUSES).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from kg.core.errors import InputError
from kg.extract.keywords import Hierarchy, json_lines, topic_key

KINDS = ("tool-baseline-dataset", "passing-mention", "sense")  # why a named concept is not_about
NOT_LISTED = "not listed"  # a wrong subject that the expert did not list as not_about

# Why an about topic was missed, checked in this order:
NO_CONCEPT = "no concept in the scheme"  # its label names no concept
UNDER_THRESHOLD = "matched under the threshold"  # the concept or one below it is mentioned, none is a subject
ROLLED_UP = "rolled up elsewhere"  # nothing at or below it mentioned, but a subject lies above it
NEVER_MATCHED = "never matched"  # nothing at or below it mentioned, no subject above it
CAUSES = (NO_CONCEPT, NEVER_MATCHED, UNDER_THRESHOLD, ROLLED_UP)  # in the order reports give them


@dataclass(frozen=True)
class Topic:
    """An `about` entry: a topic the paper is about, in the scheme's words when `in_scheme`."""

    label: str
    in_scheme: bool = True  # as the expert saw the scheme; the rule looks the label up instead
    named: bool = True  # the title or abstract names it
    quote: str = ""


@dataclass(frozen=True)
class NotAbout:
    """A `not_about` entry: a concept the text names that the paper is not about, and why (one of KINDS)."""

    label: str
    kind: str
    quote: str = ""


@dataclass(frozen=True)
class ExpertPaper:
    """One line of an expert file."""

    id: str
    about: tuple[Topic, ...]
    not_about: tuple[NotAbout, ...] = ()


def read_expert(path: str | Path) -> list[ExpertPaper]:
    """Read an expert file: one JSON object a line with `id`, `about` and `not_about`; errors name file and line."""
    out = []
    for number, entry in json_lines(path, "expert"):
        where = f"{path}:{number}"
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not _entries(entry.get("about")) or not _entries(entry.get("not_about", [])):
            raise InputError(f"{where}: an expert line needs 'id' (text), 'about' and 'not_about' (lists of objects with a 'label')")
        not_about = []
        for item in entry.get("not_about", []):
            if item.get("kind") not in KINDS:
                raise InputError(f"{where}: not_about kind {item.get('kind')!r} of {item['label']!r} is not one of {', '.join(KINDS)}")
            not_about.append(NotAbout(item["label"], item["kind"], str(item.get("quote") or "")))
        about = tuple(Topic(t["label"], bool(t.get("in_scheme", True)), bool(t.get("named", True)), str(t.get("quote") or "")) for t in entry["about"])
        out.append(ExpertPaper(entry["id"], about, tuple(not_about)))
    if not out:
        raise InputError(f"{path}: no expert lines; expected JSONL with 'id', 'about' and 'not_about'")
    return out


def _entries(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, dict) and isinstance(v.get("label"), str) for v in value)


@dataclass(frozen=True)
class TopicScore:
    """An about topic of a paper: the concepts its label names, and why it was missed (None: found)."""

    label: str
    concepts: frozenset[str]
    cause: str | None

    @property
    def found(self) -> bool:
        return self.cause is None


@dataclass(frozen=True)
class SubjectScore:
    """A subject of a paper: right or wrong, and the not_about kind of its concept (None: not listed there)."""

    concept: str
    right: bool
    kind: str | None
    generic: bool = False  # right only as the broader area of an about concept (an umbrella over the topic)


@dataclass(frozen=True)
class ExpertScored:
    """One paper of the expert file under the rule."""

    id: str
    topics: tuple[TopicScore, ...]
    subjects: tuple[SubjectScore, ...]
    in_graph: bool = True  # False: the predictions do not know the paper (scored as having no subject)


@dataclass(frozen=True)
class ExpertEvaluation:
    """The rule's micro figures over the papers of an expert file, with per-paper detail."""

    papers: tuple[ExpertScored, ...]

    @property
    def subjects(self) -> int:
        return sum(len(p.subjects) for p in self.papers)

    @property
    def right(self) -> int:
        return sum(s.right for p in self.papers for s in p.subjects)

    @property
    def topics(self) -> int:
        return sum(len(p.topics) for p in self.papers)

    @property
    def in_scheme(self) -> int:
        """About topics whose label names a concept."""
        return sum(bool(t.concepts) for p in self.papers for t in p.topics)

    @property
    def found(self) -> int:
        return sum(t.found for p in self.papers for t in p.topics)

    @property
    def precision(self) -> float:
        return self.right / self.subjects if self.subjects else 0.0

    @property
    def recall(self) -> float:
        return self.found / self.topics if self.topics else 0.0

    @property
    def recall_in_scheme(self) -> float:
        """Recall over the topics whose label names a concept (a found topic always does)."""
        return self.found / self.in_scheme if self.in_scheme else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def unmatched(self) -> int:
        """Papers of the file that the predictions do not know."""
        return sum(not p.in_graph for p in self.papers)

    @property
    def empty(self) -> int:
        """Papers with no about topic (their subjects are all wrong)."""
        return sum(not p.topics for p in self.papers)

    @property
    def subjects_a_paper(self) -> float:
        """Subjects a paper, over the papers the predictions know."""
        known = len(self.papers) - self.unmatched
        return self.subjects / known if known else 0.0

    @property
    def topics_a_paper(self) -> float:
        """About topics a paper, over every paper of the file."""
        return self.topics / len(self.papers) if self.papers else 0.0

    @property
    def generic_share(self) -> float:
        """Subjects right only because they lie above an about concept (an umbrella over the topic), over all subjects."""
        return sum(s.generic for p in self.papers for s in p.subjects) / max(1, self.subjects)

    def not_about_hits(self) -> Counter[str]:
        """Subjects whose concept the expert listed as not_about, by kind (right ones included)."""
        return Counter(s.kind for p in self.papers for s in p.subjects if s.kind is not None)

    def wrong_by_kind(self) -> Counter[str]:
        """Wrong subjects by their not_about kind, NOT_LISTED when the expert did not list them."""
        return Counter(s.kind or NOT_LISTED for p in self.papers for s in p.subjects if not s.right)

    def misses_by_cause(self) -> Counter[str]:
        return Counter(t.cause for p in self.papers for t in p.topics if t.cause is not None)


def score_expert(
    entries: Iterable[ExpertPaper],
    predicted: Mapping[str, Iterable[str]],
    hierarchy: Hierarchy,
    umbrellas: Iterable[str] = (),
    mentioned: Mapping[str, Iterable[str]] | None = None,
) -> ExpertEvaluation:
    """Score predicted subjects (paper id → concept IRIs) against expert topic lists under the rule.

    `mentioned` (paper id → the concepts its text names, subjects or not) tells a topic matched under the
    threshold from one never matched; without it every miss with a concept is "never matched" or "rolled up".
    """
    named_by = hierarchy.named_by()
    umbrella = frozenset(umbrellas)
    mentioned = mentioned or {}
    return ExpertEvaluation(tuple(
        _paper(e, frozenset(predicted.get(e.id, ())), frozenset(mentioned.get(e.id, ())), e.id in predicted, hierarchy, named_by, umbrella)
        for e in entries
    ))


def _paper(
    e: ExpertPaper, subjects: frozenset[str], mentioned: frozenset[str], in_graph: bool,
    hierarchy: Hierarchy, named_by: Mapping[str, frozenset[str]], umbrella: frozenset[str],
) -> ExpertScored:
    by_key: dict[str, tuple[str, frozenset[str]]] = {}  # one topic a label key, spelled as first written
    for t in e.about:
        by_key.setdefault(topic_key(t.label), (t.label, named_by.get(topic_key(t.label), frozenset())))
    about = frozenset().union(*(concepts for _, concepts in by_key.values()))
    up_about = hierarchy.closure(about)  # the about concepts and every broader area
    kinds: dict[str, str] = {}
    for n in e.not_about:
        for concept in named_by.get(topic_key(n.label), ()):
            kinds.setdefault(concept, n.kind)
    up_subjects, up_mentioned = hierarchy.closure(subjects), hierarchy.closure(mentioned)
    topics = []
    for label, concepts in by_key.values():
        if not concepts:
            cause: str | None = NO_CONCEPT
        elif concepts & up_subjects:
            cause = None  # a subject is one of the concepts or lies below one
        elif concepts & up_mentioned:
            cause = UNDER_THRESHOLD
        elif subjects & hierarchy.closure(concepts):
            cause = ROLLED_UP
        else:
            cause = NEVER_MATCHED
        topics.append(TopicScore(label, concepts, cause))
    scores = []
    for s in sorted(subjects):
        # right: an about concept; else, unless an umbrella, above one (a broader area) or below one
        at_or_below = s in about or bool(hierarchy.closure((s,)) & about)
        right = s in about or (s not in umbrella and (s in up_about or at_or_below))
        scores.append(SubjectScore(s, right, kinds.get(s), right and not at_or_below))
    return ExpertScored(e.id, tuple(topics), tuple(scores), in_graph)
