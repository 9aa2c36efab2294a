"""The text index of the persisted store: `search` narrowed by it returns exactly the full scan's rows."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kg
from kg import textindex
from kg.query import NamedQuery, resolve, run_store
from kg.store import TEXT_INDEX, ensure_store, fresh_folder, open_store

# Titles and abstracts that trip lowercasing and tokenizing: Unicode that changes length when
# lowercased (İ), final sigma, ß, quotes, a character Python 3.11's str.lower leaves alone but
# pyoxigraph's LCASE lowercases (U+1C89, Unicode 16), markup, a NUL, an empty title.
PAPERS = [
    ("Reinforcement Learning from Human Feedback", "We align LLMs with human FEEDBACK; \"quoted\" words and it's fine."),
    ("ÉCOLE Normale", "Straße und Maß: İstanbul İİ ΟΔΥΣΣΕΥΣ ΣΑΣ. Tje \u1c89\u1c89\u1c89 letters."),
    (None, "An abstract without a title: graph neural networks on molecules."),
    ("", "An empty title before Graph Neural Networks."),
    ("<b>Bold</b> & \"quoted\" title", 'Ends with "a quote" and a back\\slash and a \x00 nul.'),
    ("Diffusion models", "Score-based DIFFUSION; diffusion-models. (Parentheses) [brackets] {braces} AND OR NOT NEAR"),
    ("Large Language Models", "In-context learning with large language models at scale."),
    ("ΣΊΣΥΦΟΣ", "Greek capitals ending in sigma: ΑΓΑΠΗΣ ΚΑΙ ΣΟΦΙΑΣ."),
]
PHRASES = [
    "human feedback", "HUMAN FEEDBACK", "Human", "feedback;", "\"quoted\"", '"', "it's", "straße", "STRASSE", "maß",
    "i̇stanbul", "İstanbul", "İİ", "İ", "ß", "é", "école", "ΟΔΥΣΣΕΥΣ", "οδυσσευς", "σας", "ς", "σ", "\u1c8a\u1c8a\u1c8a", "tje \u1c89",
    "\u1c89\u1c89\u1c89", "graph neural", "GRAPH NEURAL NETWORKS", "networks on", "feedback we", "feedback  we",
    "models score", "diffusion models", "models", "<b>", "& \"", "back\\slash", "\x00", "a \x00 nul", "nul.", "\x00 nul", "and or not",
    "{braces}", "(parentheses)", "ab", "a", "", " ", "   ", "xyzzy", "title: graph", "before graph", " an empty",
    "σοφιας", "αγαπης και", "σίσυφος", "ΣΊΣΥΦΟΣ GREEK",
]


def _graph(folder: Path, papers: list[tuple[str | None, str]], extra: str = "") -> Path:
    """A Turtle file of papers (identifier, label, year, title when not None, abstract)."""
    import pyoxigraph as ox

    from kg.vocabulary import DCTERMS, FABIO, RDF, RDFS

    N, L = ox.NamedNode, ox.Literal
    triples = []
    for i, (title, abstract) in enumerate(papers):
        p = N(f"https://w3id.org/kg/paper/p{i}")
        triples += [ox.Triple(p, N(RDF + "type"), N(FABIO + "ResearchPaper")), ox.Triple(p, N(DCTERMS + "identifier"), L(f"p{i}")),
                    ox.Triple(p, N(RDFS + "label"), L(title or f"paper {i}")), ox.Triple(p, N(DCTERMS + "abstract"), L(abstract)),
                    ox.Triple(p, N(FABIO + "hasPublicationYear"), L(str(2000 + i % 3), datatype=N("http://www.w3.org/2001/XMLSchema#gYear")))]
        if title is not None:
            triples.append(ox.Triple(p, N(DCTERMS + "title"), L(title)))
    path = folder / "g.ttl"
    path.write_bytes(ox.serialize(triples, format=ox.RdfFormat.TURTLE) + extra.encode())
    return path


def text_index(graph: Path) -> Path | None:
    """The text index of the graph's fresh persisted store, if it has one."""
    folder = fresh_folder(graph)
    return folder / TEXT_INDEX if folder is not None and (folder / TEXT_INDEX).is_file() else None


def _scan(graph: Path, words: str) -> kg.Results:
    """search.rq over every paper (no index)."""
    return run_store(open_store(graph), resolve("search"), {"words": words})


def _mismatches(graph: Path, phrases: list[str]) -> list[str]:
    """The phrases whose search narrowed by the graph's text index differs from the full scan."""
    store, q, index = open_store(graph), resolve("search"), text_index(graph)
    assert index is not None
    return [w for w in phrases if run_store(store, q, {"words": w}, folder=index.parent).rows != run_store(store, q, {"words": w}).rows]


@pytest.fixture(scope="module")
def tricky(tmp_path_factory: pytest.TempPathFactory) -> Path:
    graph = _graph(tmp_path_factory.mktemp("tricky"), PAPERS)
    ensure_store(graph)
    return graph


def test_index_rows_equal_the_full_scan(tricky: Path) -> None:
    assert _mismatches(tricky, PHRASES) == []
    # through kg.query, which finds the index beside the graph
    assert [w for w in PHRASES[::3] if kg.query("search", {"words": w}, graph=tricky).rows != _scan(tricky, w).rows] == []
    assert len(kg.query("search", {"words": "İstanbul"}, graph=tricky)) == 1  # the tests have matches to lose


def test_candidates_are_a_superset_and_narrow(tricky: Path) -> None:
    store, index, q = open_store(tricky), text_index(tricky), resolve("search")
    narrowed = 0
    for words in PHRASES:
        found = textindex.candidates(store, index, words)
        true = {r["paper"] for r in run_store(store, q, {"words": words})}
        if found is None:
            assert len(words.lower()) < 3 or not words.strip(), words
            continue
        assert true <= {iri[1:-1] for iri in found}, words
        narrowed += len(found) < len(PAPERS)
    assert narrowed > len(PHRASES) // 2


def test_the_shipped_search_is_restricted(tricky: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The narrowing really happens (else the equality tests above would pass vacuously)."""
    seen = []
    monkeypatch.setattr(textindex, "restrict", lambda text, iris, real=textindex.restrict: seen.append(iris) or real(text, iris))
    assert len(kg.query("search", {"words": "graph neural"}, graph=tricky)) == 2
    assert seen == [["<https://w3id.org/kg/paper/p2>", "<https://w3id.org/kg/paper/p3>"]]
    seen.clear()
    own = resolve("search").text.replace("ORDER BY", "ORDER BY ?identifier")  # a user's own query named search
    kg.query(NamedQuery("search", own, "", resolve("search").params, ""), {"words": "graph neural"}, graph=tricky)
    assert seen == []
    assert textindex.restrict("SELECT * WHERE { ?paper ?p ?o }", ["<https://a>"]) is None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_phrase_gives_the_full_scan_rows(tricky: Path, data: st.DataObject) -> None:
    title, abstract = data.draw(st.sampled_from(PAPERS))
    text = f"{title or ''} {abstract}"
    start = data.draw(st.integers(0, len(text)))
    piece = text[start : start + data.draw(st.integers(0, 12))]
    cased = "".join(c.upper() if data.draw(st.booleans()) else c for c in piece)
    words = data.draw(st.one_of(st.just(cased), st.text(max_size=6), st.just(cased + data.draw(st.text(max_size=2)))))
    assert _mismatches(tricky, [words]) == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.tuples(st.none() | st.text(max_size=8), st.text(max_size=30)), min_size=1, max_size=4), data=st.data())
def test_candidates_hold_every_match_of_any_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, texts: list, data: st.DataObject) -> None:
    """Any Unicode (NUL, surrogate-free) in titles, abstracts and phrases: the candidates hold every match."""
    import pyoxigraph as ox

    from kg.vocabulary import DCTERMS, FABIO, RDF, RDFS

    monkeypatch.setattr(textindex, "MAX_SHARE", 1.0)
    store, N, L = ox.Store(), ox.NamedNode, ox.Literal
    for i, (title, abstract) in enumerate(texts):
        p = N(f"https://w3id.org/kg/paper/p{i}")
        store.extend([ox.Quad(p, N(RDF + "type"), N(FABIO + "ResearchPaper")), ox.Quad(p, N(DCTERMS + "identifier"), L(f"p{i}")),
                      ox.Quad(p, N(RDFS + "label"), L(f"p{i}")), ox.Quad(p, N(DCTERMS + "abstract"), L(abstract))]
                     + ([ox.Quad(p, N(DCTERMS + "title"), L(title))] if title is not None else []))
    title, abstract = data.draw(st.sampled_from(texts))
    text = f"{title or ''} {abstract}"
    start = data.draw(st.integers(0, len(text)))
    piece = "".join(c.upper() if data.draw(st.booleans()) else c for c in text[start : start + data.draw(st.integers(0, 10))])
    words = data.draw(st.just(piece) | st.text(max_size=5))
    index = tmp_path / str(len(list(tmp_path.iterdir()))) / TEXT_INDEX
    index.parent.mkdir()
    textindex.write(index, textindex.read_texts(store))
    found = textindex.candidates(store, index, words)
    matches = {r["paper"] for r in run_store(store, resolve("search"), {"words": words})}
    assert found is not None or len(next(iter(store.query(f'SELECT (LCASE({ox.Literal(words)}) AS ?l) WHERE {{}}')))[0].value) < 3
    assert found is None or matches <= {iri[1:-1] for iri in found}
    assert run_store(store, resolve("search"), {"words": words}, folder=index.parent).rows == run_store(store, resolve("search"), {"words": words}).rows


def test_the_boundary_between_title_and_abstract(tricky: Path) -> None:
    for title, abstract in PAPERS:
        words = f"{(title or '')[-4:]} {abstract[:4]}"
        assert {r["identifier"] for r in kg.query("search", {"words": words}, graph=tricky)}, words
    assert _mismatches(tricky, [f"{(t or '')[-4:]} {a[:4]}".upper() for t, a in PAPERS]) == []


def _unlowered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Index the texts as written: `_search-texts.rq` with STR( in place of LCASE(."""
    real = textindex.internal_query
    monkeypatch.setattr(textindex, "internal_query", lambda name: real(name).replace("LCASE(", "STR(") if name == "search-texts" else real(name))


def test_a_wrong_lowercasing_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: an index of the texts as written (not lowercased) loses matches."""
    _unlowered(monkeypatch)
    graph = _graph(tmp_path, PAPERS)
    ensure_store(graph)
    assert "human feedback" in _mismatches(graph, PHRASES)


def test_python_lowercasing_would_be_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Why the engine lowercases: Python's str.lower can lag behind pyoxigraph's Unicode."""
    import pyoxigraph as ox

    lowered = next(iter(ox.Store().query('SELECT (LCASE("\u1c89") AS ?l) WHERE {}')))[0].value
    if lowered == "\u1c89".lower():
        pytest.skip("this Python lowercases like the engine")
    real = textindex.read_texts
    _unlowered(monkeypatch)  # the texts as written,
    monkeypatch.setattr(textindex, "read_texts", lambda s: [(p, t.lower()) for p, t in real(s)])  # lowercased by Python
    graph = _graph(tmp_path, PAPERS)
    ensure_store(graph)
    assert "\u1c8a\u1c8a\u1c8a" in _mismatches(graph, PHRASES)


def test_the_bundled_sample(sample_ttl: Path, tmp_path: Path) -> None:
    graph = Path(shutil.copy(sample_ttl, tmp_path / "sample.ttl"))
    ensure_store(graph)
    assert text_index(graph) is not None
    labels = [r["label"] for r in kg.query("SELECT ?label WHERE { ?c <http://www.w3.org/2004/02/skos/core#prefLabel> ?label }", graph=graph)]
    phrases = ["human feedback", "Reinforcement Learning", "large language", "the", "ICML", "xyzzy", *labels[:40]]
    assert _mismatches(graph, phrases) == []
    assert sum(len(kg.query("search", {"words": w}, graph=graph)) for w in phrases) > 20


def test_missing_or_corrupt_index_falls_back_to_the_scan(tricky: Path, tmp_path: Path) -> None:
    graph = Path(shutil.copy(tricky, tmp_path / "g.ttl"))
    index = ensure_store(graph) / TEXT_INDEX
    expected = {w: _scan(graph, w).rows for w in ("graph neural", "human feedback")}
    assert all(expected.values())

    def answers() -> dict:
        return {w: kg.query("search", {"words": w}, graph=graph).rows for w in expected}

    index.write_bytes(b"not a database at all" * 100)
    assert answers() == expected
    index.unlink()
    assert text_index(graph) is None and answers() == expected
    # a database whose IRIs are not IRIs (query text) is not used either
    db = sqlite3.connect(index)
    db.executescript("CREATE TABLE paper(id INTEGER PRIMARY KEY, iri TEXT); CREATE TABLE meta(key TEXT PRIMARY KEY, value);"
                     "CREATE VIRTUAL TABLE fts USING fts5(body, tokenize='trigram case_sensitive 1', detail='none', content='');"
                     "INSERT INTO meta VALUES ('papers', 1000); INSERT INTO paper VALUES (1, 'x> } ?paper ?p ?o . { ?paper');"
                     "INSERT INTO fts(rowid, body) VALUES (1, 'graph neural human feedback');")
    db.commit()
    db.close()
    assert textindex.candidates(open_store(graph), index, "graph neural") is None
    assert answers() == expected


def test_too_many_candidates_scan(tricky: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, index = open_store(tricky), text_index(tricky)
    assert textindex.candidates(store, index, "models") is not None
    monkeypatch.setattr(textindex, "MAX_SHARE", 0.1)  # a cap of 0 papers
    assert textindex.candidates(store, index, "models") is None
    assert _mismatches(tricky, ["models", "graph neural"]) == []


def test_blank_node_papers_get_no_index(tmp_path: Path) -> None:
    extra = '\n[] a <http://purl.org/spar/fabio/ResearchPaper> ; <http://purl.org/dc/terms/abstract> "graph neural blank" ;\n' \
            '   <http://purl.org/dc/terms/identifier> "b" ; <http://www.w3.org/2000/01/rdf-schema#label> "blank" .\n'
    graph = _graph(tmp_path, PAPERS, extra)
    ensure_store(graph)
    assert text_index(graph) is None
    assert {r["identifier"] for r in kg.query("search", {"words": "graph neural"}, graph=graph)} == {"b", "p2", "p3"}
