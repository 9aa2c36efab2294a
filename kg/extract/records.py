"""The records that extraction hands to the RDF stage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from kg.extract.ingest import Paper


@dataclass(frozen=True)
class Mention:
    """A span of the stored abstract that names a concept: abstract[start:end] == exact."""

    concept: str
    start: int
    end: int
    exact: str
    weight: float = 1.0  # how much this mention says the paper is about the concept (0.25 in passing)


@dataclass(frozen=True)
class Link:
    """A concept found in a paper: its salience score, whether the paper is about it, and the evidence."""

    concept: str
    score: float
    subject: bool
    mentions: tuple[Mention, ...]
    dataset: bool = False  # a data set or benchmark the paper evaluates on (kg:evaluatesOn)
    title_mentions: tuple[Mention, ...] = ()  # spans of the paper's title (offsets into the title, not the abstract)
    described: bool = False  # no mention names it: the paper describes it (kg.extract.definitions); the evidence is a sentence


@dataclass(frozen=True)
class Method:
    """A method the paper itself proposes ("we propose QORA"), with the span that names it."""

    name: str
    start: int
    end: int
    exact: str


@dataclass(frozen=True)
class Extraction:
    """Everything extraction found in one paper."""

    paper_id: str
    links: tuple[Link, ...]
    label: str  # a short name for papers without a title
    methods: tuple[Method, ...] = ()


Extractor = Callable[[Sequence[Paper]], list[Extraction]]
