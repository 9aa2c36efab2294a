"""Property tests: any Unicode record becomes RDF that parses back isomorphic, with valid IRIs and exact spans.

Records go through the real ingest (a JSONL file) so that what reaches the RDF stage is what a
user's input would give; extraction is synthetic (spans drawn by hypothesis) for the format round
trips, and the real phrase extractor (built once) for the span property.
"""

from __future__ import annotations

import functools
import io
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg.extract import Extraction, Link, Mention, PhraseExtractor, ingest, scheme
from kg.graph import files
from kg.graph.vocabulary import DCTERMS, DEFAULT_BASE
from kg.pipeline.triples import triples as make_triples

from .conftest import FIXTURES

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
# Strings that break naive serializers: quotes, escapes, markup, line breaks, controls, dots, astral planes.
NASTY = ['"', "'", '"""', "\\", "\\u0041", "<", ">", "&amp;", "\n", "\r\n", "\x00", "\x1b", "\x7f", "\x85", "\u2028",
         "\ufeff", "\ufffe", "\uffff", "@en", "#", "%", "%zz", "?", "/", " ", ".", "..", "é", "𝒳", "🙂", "\u0301", "]]>"]
TEXT = st.lists(st.one_of(st.text(st.characters(exclude_categories=("Cs",)), max_size=12), st.sampled_from(NASTY)), max_size=6).map("".join)
IDS = st.one_of(TEXT, st.sampled_from(["A B", "a-b", "a b", "..", ".", "x"]), st.integers(), st.none())
RECORD = st.fixed_dictionaries(
    {"id": IDS, "abstract": TEXT.filter(lambda t: bool(ingest.fold(t))), "title": TEXT},
    optional={"authors": st.lists(TEXT, max_size=3), "venue": TEXT, "year": st.integers(1, 9999)},
)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], report_multiple_bugs=False)


@functools.cache
def tiny_scheme() -> scheme.Scheme:
    return scheme.load([FIXTURES / "tiny-scheme.ttl"])


@functools.cache
def extractor() -> PhraseExtractor:
    """The real phrase extractor over the tiny scheme, built once for all examples."""
    return PhraseExtractor(tiny_scheme())


def ingested(records: list[dict[str, Any]]) -> tuple[ingest.Paper, ...]:
    """The papers that the real ingest makes of `records` written as a JSONL file."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "p.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        return ingest.read([path]).papers


def serialized(triples: list, fmt: str) -> bytes:
    buffer = io.BytesIO()
    files.write(triples, buffer, fmt)
    return buffer.getvalue()


def to_rdflib(triples: list) -> Any:
    """The same triples as an rdflib.Graph, built term by term (not by parsing)."""
    import pyoxigraph as ox
    from rdflib import Graph, Literal, URIRef

    def term(t: Any) -> Any:
        if isinstance(t, ox.NamedNode):
            return URIRef(t.value)
        if t.language:
            return Literal(t.value, lang=t.language)
        return Literal(t.value, datatype=None if t.datatype.value == XSD_STRING else URIRef(t.datatype.value))

    graph = Graph()
    for t in triples:
        graph.add((term(t.subject), term(t.predicate), term(t.object)))
    return graph


# An absolute IRI as kg mints it: https, ASCII only, nothing RFC 3987 forbids, %-escapes well formed,
# no dot-segments (which resolution would remove).
IRI = re.compile(r"^https://[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]*(%[0-9A-F]{2}[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]*)*$")


def assert_valid_iri(value: str) -> None:
    from rdflib.term import _is_valid_uri

    assert IRI.match(value), value
    assert _is_valid_uri(value), value
    assert not re.search(r"/\.\.?(/|$)", value), value


def mentions_for(data: st.DataObject, abstract: str, concepts: list[str]) -> tuple[Link, ...]:
    """Links with mentions at spans drawn anywhere in the abstract."""
    links = []
    for concept in data.draw(st.lists(st.sampled_from(concepts), unique=True, max_size=3)):
        spans = data.draw(st.lists(st.tuples(st.integers(0, len(abstract)), st.integers(0, len(abstract))), min_size=1, max_size=3))
        mentions = tuple(Mention(concept, min(s, e), max(s, e), abstract[min(s, e) : max(s, e)]) for s, e in spans)
        score = data.draw(st.floats(0, 1))
        links.append(Link(concept, score, score >= 0.5, mentions))
    return tuple(links)


@SETTINGS
@given(records=st.lists(RECORD, min_size=1, max_size=3), data=st.data())
def test_any_records_round_trip_in_every_format_with_valid_iris(records: list[dict[str, Any]], data: st.DataObject) -> None:
    import pyoxigraph as ox
    from rdflib import Graph
    from rdflib.compare import isomorphic

    papers = ingested(records)
    concepts = sorted(tiny_scheme().concepts)
    extractions = [Extraction(p.id, mentions_for(data, p.abstract, concepts), p.abstract[:20]) for p in papers]
    # (the scheme's statements come as quads in the default graph: compare them as triples)
    triples = [getattr(t, "triple", t) for t in make_triples(papers, extractions, tiny_scheme(), inputs=["p.jsonl"])]
    expected = to_rdflib(triples)
    for fmt, parser in [("ttl", "turtle"), ("nt", "nt"), ("jsonld", "json-ld"), ("xml", "xml")]:
        data_ = serialized(triples, fmt)
        # pyoxigraph parses every format back to the very same set of triples (no blank nodes) ...
        fmt_ = getattr(ox.RdfFormat, files.FORMATS[fmt][0])
        assert {getattr(q, "triple", q) for q in ox.parse(data_, format=fmt_)} == set(triples), fmt
        # ... and so does an independent parser (rdflib; expat for RDF/XML, which enforces XML 1.0).
        assert isomorphic(Graph().parse(data=data_, format=parser), expected), fmt
    for t in triples:
        for term in (t.subject, t.predicate, t.object):
            if isinstance(term, ox.NamedNode) and term.value.startswith(DEFAULT_BASE):
                assert_valid_iri(term.value)  # minted by kg from text
    # Distinct ids never share a paper IRI.
    paper_iris = {t.subject.value for t in triples if t.predicate.value == DCTERMS + "identifier"}
    assert len(paper_iris) == len(papers)


@SETTINGS
@given(records=st.lists(RECORD, min_size=1, max_size=3))
def test_stored_strings_are_folded_and_xml_safe(records: list[dict[str, Any]]) -> None:
    for paper in ingested(records):
        for text in (paper.id, paper.abstract, paper.title or "x", paper.venue or "x", *paper.authors):
            assert text and text == text.strip() and "  " not in text
            assert not re.search("[\x00-\x1f\x7f-\x9f\ufffe\uffff]", text)


LABELS = ["reinforcement learning", "Reinforcement Learning", "RL", "offline RL", "large language models", "LLMs",
          "Diffusion Models", "diffusion model", "machine learning"]


@settings(max_examples=40, deadline=None)
@given(parts=st.lists(st.one_of(TEXT, st.sampled_from(LABELS)), min_size=1, max_size=8))
def test_real_extraction_spans_are_exact_and_survive_turtle(parts: list[str]) -> None:
    import pyoxigraph as ox

    text = " ".join(parts)
    if not ingest.fold(text):
        return
    papers = ingested([{"id": "p", "abstract": text}])
    (extraction,) = extractor()(papers)
    abstract = papers[0].abstract
    mentions = [m for link in extraction.links for m in link.mentions]
    for m in mentions:
        assert 0 <= m.start < m.end <= len(abstract)
        assert abstract[m.start : m.end] == m.exact
    # The same holds for the selectors read back from the written Turtle.
    triples = list(make_triples(papers, [extraction], tiny_scheme()))
    store = ox.Store()
    store.load(serialized(triples, "ttl"), format=ox.RdfFormat.TURTLE)
    rows = list(store.query(
        "PREFIX oa: <http://www.w3.org/ns/oa#> PREFIX dcterms: <http://purl.org/dc/terms/> "
        "SELECT ?abstract ?start ?end ?exact WHERE { ?t oa:hasSource ?p ; oa:hasSelector ?pos, ?q . "
        "?p dcterms:abstract ?abstract . ?pos oa:start ?start ; oa:end ?end . ?q oa:exact ?exact }"
    ))
    assert len(rows) == len(mentions)
    for row in rows:
        start, end = int(row["start"].value), int(row["end"].value)
        assert row["abstract"].value[start:end] == row["exact"].value


@pytest.mark.parametrize("label", ["reinforcement learning", "RL"])
def test_span_property_test_can_fail(label: str) -> None:
    """The extractor really finds mentions here, so the span test above checks something."""
    papers = ingested([{"id": "p", "abstract": f"🙂 𝒳\x00 We study {label}."}])
    (extraction,) = extractor()(papers)
    (mention,) = [m for link in extraction.links if not link.described for m in link.mentions]  # a described concept quotes its sentence
    assert papers[0].abstract[mention.start : mention.end] == mention.exact == label
