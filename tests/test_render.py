"""Render stage: views checked against SPARQL on the same graph, offline and escaped HTML, the CLI."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from kg.cli import cli
from kg.core.defaults import MAP_CONCEPTS
from kg.core.defaults import RENDER_MAX_NODES as DEFAULT_MAX_NODES
from kg.core.errors import QueryError, UsageError
from kg.views.render import area_colour, build_view, render, script_json
from kg.views.scene import Edge, Node, View, limit

from .conftest import HOSTILE_ABSTRACT, HOSTILE_TITLE, synthetic_triples

FIXTURES = Path(__file__).parent / "fixtures"
PREFIXES = """PREFIX dcterms: <http://purl.org/dc/terms/> PREFIX fabio: <http://purl.org/spar/fabio/>
PREFIX oa: <http://www.w3.org/ns/oa#> PREFIX kg: <https://w3id.org/kg/ontology#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> """


def sparql(ttl: Path, query: str) -> list[tuple]:
    """Rows of a SELECT run with pyoxigraph on a graph file."""
    import pyoxigraph as ox

    store = ox.Store()
    with ttl.open("rb") as f:
        store.load(f, format=ox.RdfFormat.TURTLE)
    return [tuple(None if v is None else v.value for v in row) for row in store.query(PREFIXES + query)]


def page_data(page: str) -> dict:
    """The JSON the page script draws from."""
    found = re.search(r'<script type="application/json" id="kg-data">(.*?)</script>', page, re.S)
    assert found, "the page carries its data in a JSON script element"
    return json.loads(found.group(1))


class Attributes(HTMLParser):
    """Every tag and attribute of a page (script and style bodies are raw text, so they are skipped)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag, dict(attrs)))


def test_page_is_self_contained_and_writes_no_side_folder(sample_ttl: Path, tmp_path: Path, monkeypatch) -> None:
    import pyvis

    cwd, out = tmp_path / "cwd", tmp_path / "out"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    page = render(sample_ttl, out / "sample.html").html
    parser = Attributes()
    parser.feed(page)
    loads = [(t, k, v) for t, a in parser.tags for k, v in a.items() if k in ("src", "href", "srcset", "action", "data", "poster")]
    assert loads == [], "nothing may load from a URL, local or remote"
    assert not [t for t, _ in parser.tags if t in ("link", "iframe", "img")]
    vis_js = (Path(pyvis.__file__).parent / "templates/lib/vis-9.1.2/vis-network.min.js").read_text(encoding="utf-8")
    assert vis_js[:2000] in page and vis_js[-2000:] in page, "pyvis's bundled vis-network is inlined whole"
    assert list(cwd.iterdir()) == [] and [p.name for p in out.iterdir()] == ["sample.html"]


def test_papers_view_holds_every_paper_and_subject(sample_ttl: Path) -> None:
    data = page_data(render(sample_ttl).html)
    papers = {r[0] for r in sparql(sample_ttl, "SELECT ?p WHERE { ?p a fabio:ResearchPaper }")}
    links = set(sparql(sample_ttl, "SELECT ?p ?c WHERE { ?p dcterms:subject ?c }"))
    assert {n["id"] for n in data["nodes"] if n["kind"] == "paper"} == papers
    assert {n["id"] for n in data["nodes"] if n["kind"] == "concept"} == {c for _, c in links}
    assert {(e["from"], e["to"]) for e in data["edges"]} == links
    titles = dict(sparql(sample_ttl, "SELECT ?p ?l WHERE { ?p rdfs:label ?l }"))
    assert all(n["full"] == titles[n["id"]] for n in data["nodes"] if n["kind"] == "paper"), "papers named by their label"


def test_tooltips_carry_scores_and_evidence_from_the_annotations(sample_ttl: Path) -> None:
    data = page_data(render(sample_ttl).html)
    rows = sparql(sample_ttl, """SELECT ?p ?label (MAX(?s) AS ?score) WHERE {
        ?p dcterms:subject ?c . ?c skos:prefLabel ?label .
        ?a oa:hasBody ?c ; kg:score ?s ; oa:hasTarget/oa:hasSource ?p } GROUP BY ?p ?label""")
    scores = {(p, label): float(s) for p, label, s in rows}
    quotes = set(sparql(sample_ttl, "SELECT ?p ?q WHERE { ?a oa:hasTarget ?t . ?t oa:hasSource ?p ; oa:hasSelector/oa:exact ?q }"))
    abstracts = dict(sparql(sample_ttl, "SELECT ?p ?a WHERE { ?p dcterms:abstract ?a }"))
    checked = 0
    for n in data["nodes"]:
        if n["kind"] != "paper" or not n["info"]["concepts"]:
            continue
        checked += 1
        assert {(n["id"], label): s for label, s in n["info"]["concepts"]} == {k: v for k, v in scores.items() if k[0] == n["id"]}
        before, exact, after = n["info"]["evidence"]
        assert (n["id"], exact) in quotes
        assert (before + exact + after).strip("…") in abstracts[n["id"]]
        assert n["info"]["venue"] == "ICML" and n["info"]["year"] == "2024"
    assert checked >= 10


def test_concepts_are_coloured_by_their_nearest_top_concept(sample_ttl: Path) -> None:
    data = page_data(render(sample_ttl).html)
    label_of = dict(sparql(sample_ttl, "SELECT ?c ?l WHERE { ?c a skos:Concept ; skos:prefLabel ?l }"))
    tops = {r[0] for r in sparql(sample_ttl, "SELECT ?t WHERE { { ?t skos:topConceptOf ?s } UNION { ?s skos:hasTopConcept ?t } }")}
    assert tops, "the bundled scheme declares its top concepts"
    above = set(sparql(sample_ttl, "SELECT ?c ?a WHERE { ?c skos:broader+ ?a }"))
    colour_of_area: dict[str, str] = {}
    for n in (n for n in data["nodes"] if n["kind"] == "concept"):
        (area,) = [t for t in tops if label_of[t] == n["area"]]
        # The area is the concept itself or an ancestor, and no other top concept sits between them.
        assert area == n["id"] or (n["id"], area) in above
        assert not [t for t in tops - {area} if (n["id"], t) in above and (t, area) in above]
        assert n["id"] not in tops or area == n["id"]
        assert colour_of_area.setdefault(n["area"], n["color"]) == n["color"]
    assert len(set(colour_of_area.values())) == len(colour_of_area), "one colour per area"
    assert {row[0] for row in data["legend"]} == {n["area"] for n in data["nodes"]}
    sizes = {n["full"]: n["size"] for n in data["nodes"] if n["kind"] == "concept"}
    counts = dict(sparql(sample_ttl, "SELECT ?l (COUNT(?p) AS ?n) WHERE { ?p dcterms:subject ?c . ?c skos:prefLabel ?l } GROUP BY ?l"))
    ordered = sorted(sizes, key=lambda label: int(counts[label]))
    assert [sizes[label] for label in ordered] == sorted(sizes.values()), "bigger concepts have more papers"


def test_concepts_view_weights_edges_by_shared_papers(sample_ttl: Path) -> None:
    view = build_view(sample_ttl, view="concepts")
    rows = sparql(sample_ttl, """SELECT ?a ?b (COUNT(DISTINCT ?p) AS ?n) WHERE {
        ?p dcterms:subject ?a, ?b . FILTER(STR(?a) < STR(?b)) } GROUP BY ?a ?b""")
    assert {(e.source, e.target): e.weight for e in view.edges} == {(a, b): float(n) for a, b, n in rows}
    assert {n.kind for n in view.nodes} == {"concept"}


def test_concept_neighbourhood_by_hops(sample_ttl: Path) -> None:
    rl = "https://w3id.org/kg/concept/reinforcement-learning"
    papers = {r[0] for r in sparql(sample_ttl, f"SELECT ?p WHERE {{ ?p dcterms:subject <{rl}> }}")}
    one = build_view(sample_ttl, concept="RL", hops=1)
    assert {n.id for n in one.nodes} == papers | {rl} and one.focus == rl
    two = build_view(sample_ttl, concept="Reinforcement Learning")
    around = {r[0] for r in sparql(sample_ttl, f"SELECT ?c WHERE {{ ?p dcterms:subject <{rl}>, ?c }}")}
    assert {n.id for n in two.nodes} == papers | around
    with pytest.raises(UsageError, match="did you mean: reinforcement learning"):
        build_view(sample_ttl, concept="reinforcment lerning")


def test_max_nodes_keeps_the_most_connected_and_says_what_was_left_out() -> None:
    hub = Node("hub", "hub", "concept")
    leaves = [Node(f"p{i}", f"paper {i}", "paper") for i in range(6)]
    lonely = Node("lonely", "lonely", "concept")
    edges = tuple(Edge(p.id, "hub") for p in leaves) + (Edge("p0", "c2"),)
    view = View("t", (hub, *leaves, lonely, Node("c2", "second", "concept")), edges)
    cut = limit(view, 4)
    kept = {"hub", "p0", "p1", "p2"}
    assert {n.id for n in cut.nodes} == kept, "degree first, then label"
    assert "Showing the 4 most connected of 9 nodes" in cut.note
    assert "2 concepts (second, lonely) and 3 papers, with at most 1 link each" in cut.note
    assert {(e.source, e.target) for e in cut.edges} == {(p, "hub") for p in ("p0", "p1", "p2")}
    assert limit(view, 0) == view and limit(view, 9) == view
    with pytest.raises(UsageError):
        limit(view, -1)


def test_a_large_graph_defaults_to_a_readable_view() -> None:
    triples = synthetic_triples(900)
    concepts = {t.object.value for t in triples if t.predicate.value.endswith("/subject")}
    rendered = render(triples)  # 900 papers: the concept map, not 500 unlinked dots
    data = page_data(rendered.html)
    assert "map" in data and rendered.total == len(concepts) and rendered.nodes <= MAP_CONCEPTS
    ends = {e["from"] for e in data["edges"]} | {e["to"] for e in data["edges"]}
    assert rendered.edges > rendered.nodes and ends == {n["id"] for n in data["nodes"]}, "every drawn concept has a link"
    papers = render(triples, view="papers")  # the papers view stays capped, saying what it left out
    assert papers.total == 900 + len(concepts) and papers.nodes <= DEFAULT_MAX_NODES
    data = page_data(papers.html)
    assert f"of {papers.total:,} nodes" in data["note"] and "--max-nodes" in data["note"]
    assert len(data["nodes"]) == papers.nodes
    assert render(triples, view="papers", max_nodes=0).nodes == papers.total
    assert render(triples, max_nodes=0).nodes == len(concepts)


def test_a_capped_papers_view_links_papers_that_share_specific_concepts(tmp_path: Path) -> None:
    """Cut to its most connected nodes, the papers view kept 500 concepts and no paper: 0 edges."""
    import pyoxigraph as ox

    triples = synthetic_triples(2000)
    ttl = tmp_path / "big.ttl"
    ttl.write_bytes(ox.serialize(triples, format=ox.RdfFormat.TURTLE))
    rendered = render(ttl, view="papers")
    data = page_data(rendered.html)
    papers = {r[0] for r in sparql(ttl, "SELECT ?p WHERE { ?p a fabio:ResearchPaper }")}
    drawn = {n["id"] for n in data["nodes"]}
    assert 100 < rendered.nodes <= DEFAULT_MAX_NODES and drawn <= papers
    assert rendered.edges >= rendered.nodes, "every drawn paper is linked to another"
    ends = {e["from"] for e in data["edges"]} | {e["to"] for e in data["edges"]}
    assert ends == drawn
    subjects: dict[str, set[str]] = {}
    for p, c in sparql(ttl, "SELECT ?p ?c WHERE { ?p dcterms:subject ?c }"):
        subjects.setdefault(p, set()).add(c)
    for e in data["edges"]:
        shared = subjects[e["from"]] & subjects[e["to"]]
        named = e["label"].removeprefix("shared: ").split(" and ")[0].split(", ")
        assert shared and {"https://w3id.org/kg/concept/c-" + n.removeprefix("concept ") for n in named} <= shared
    assert f"of {rendered.total:,} nodes" in data["note"] and "--max-nodes 0" in data["note"]
    for n in data["nodes"]:  # coloured by the area of one of its concepts (concept c-i is under "area i % 8")
        assert n["area"] in {f"area {int(c.rsplit('-', 1)[1]) % 8}" for c in subjects[n["id"]]} and n["color"] == area_colour(n["area"])
    assert len({n["area"] for n in data["nodes"]}) > 1 and {row[0] for row in data["legend"]} == {n["area"] for n in data["nodes"]}
    assert render(ttl, view="papers", max_nodes=0).nodes == rendered.total, "--max-nodes 0 still draws every paper and concept"


def test_query_draws_a_construct_result(sample_ttl: Path) -> None:
    view = build_view(sample_ttl, query=FIXTURES / "papers-by-venue.rq")
    papers = {r[0] for r in sparql(sample_ttl, "SELECT ?p WHERE { ?p a fabio:ResearchPaper ; dcterms:isPartOf ?v }")}
    venues = {r[0] for r in sparql(sample_ttl, "SELECT ?v WHERE { ?p dcterms:isPartOf ?v }")}
    assert {n.id for n in view.nodes if n.kind == "paper"} == papers
    assert {n.id for n in view.nodes if n.kind == "ConferenceProceedings"} == venues
    assert {(e.source, e.target, e.label) for e in view.edges} >= {(p, v, "isPartOf") for p in papers for v in venues}
    venue = next(n for n in view.nodes if n.id in venues)
    assert venue.label == "ICML"


def test_query_by_name_with_parameters(sample_ttl: Path, tmp_path: Path) -> None:
    paper, key = min(sparql(sample_ttl, "SELECT ?p ?id WHERE { ?p a fabio:ResearchPaper ; dcterms:identifier ?id }"))
    concepts = {r[0] for r in sparql(sample_ttl, f"SELECT ?c WHERE {{ <{paper}> dcterms:subject ?c }}")}
    out = tmp_path / "one.html"
    got = CliRunner().invoke(cli, ["render", str(sample_ttl), "-o", str(out), "--query", "paper-graph", "--param", f"paper={key}"])
    assert got.exit_code == 0, got.output
    data = page_data(out.read_text(encoding="utf-8"))
    assert {n["id"] for n in data["nodes"] if n["kind"] == "paper"} == {paper}
    assert {n["id"] for n in data["nodes"] if n["kind"] == "concept"} == concepts
    got = CliRunner().invoke(cli, ["render", str(sample_ttl), "-o", str(out), "--param", "paper=x"])
    assert got.exit_code == 1 and "--param sets parameters of --query" in got.output


def test_query_errors_name_the_file(sample_ttl: Path, tmp_path: Path) -> None:
    select = tmp_path / "select.rq"
    select.write_text("SELECT * WHERE { ?s ?p ?o } LIMIT 1", encoding="utf-8")
    broken = tmp_path / "broken.rq"
    broken.write_text("CONSTRUCT { ?s ?p } WHERE {", encoding="utf-8")
    with pytest.raises(QueryError, match=r"query 'select' is a SELECT query; render --query draws the graph of a CONSTRUCT"):
        render(sample_ttl, query=select)
    with pytest.raises(QueryError, match=r"query 'broken': SPARQL syntax error at line 1"):
        render(sample_ttl, query=broken)
    with pytest.raises(QueryError, match=r"missing\.rq: no such query file"):
        render(sample_ttl, query=tmp_path / "missing.rq")
    with pytest.raises(UsageError, match="cannot be combined with --view"):
        render(sample_ttl, query=select, view="papers")


def test_hostile_text_stays_text(hostile_ttl: Path) -> None:
    for page in (render(hostile_ttl).html, render(hostile_ttl, query=FIXTURES / "papers-by-venue.rq").html):
        assert "<img" not in page and "<svg" not in page and "window.__pwned" in page
        assert "</script><script>window.__pwned" not in page and page.count("</script>") == 3
        data = page_data(page)
        texts = json.dumps(data, ensure_ascii=False)
        assert json.dumps(HOSTILE_TITLE, ensure_ascii=False)[1:-1] in texts, "the title survives, escaped, not dropped"
    data = page_data(render(hostile_ttl).html)
    evil = next(n for n in data["nodes"] if n["id"].endswith("/evil-1"))
    assert evil["full"] == HOSTILE_TITLE and evil["info"]["venue"] == "<svg onload=window.__pwned=3>"
    assert HOSTILE_ABSTRACT.split(" </script>")[0][:20] in "".join(evil["info"]["evidence"])


@given(st.text())
def test_script_json_cannot_close_the_script(text: str) -> None:
    encoded = script_json({"t": text})
    assert not set("<>&\u2028\u2029") & set(encoded)
    assert json.loads(encoded) == {"t": text}


def test_same_graph_same_page(sample_ttl: Path) -> None:
    assert render(sample_ttl).html == render(sample_ttl).html


def test_python_inputs_and_jupyter_display(sample_built, sample_ttl: Path) -> None:
    import rdflib

    from_built = render(sample_built)
    assert from_built.path is None
    ids = {n["id"] for n in page_data(from_built.html)["nodes"]}
    assert ids == {n["id"] for n in page_data(render(rdflib.Graph().parse(sample_ttl)).html)["nodes"]} == {
        n["id"] for n in page_data(render(sample_ttl).html)["nodes"]}
    shown = from_built._repr_html_()
    found = re.fullmatch(r'<iframe srcdoc="([^"]*)" sandbox="allow-scripts" style="[^"]*"></iframe>', shown)
    assert found and html.unescape(found.group(1)) == from_built.html


def test_a_failed_render_leaves_the_old_page(sample_ttl: Path, tmp_path: Path) -> None:
    out = tmp_path / "old.html"
    out.write_text("old page", encoding="utf-8")
    with pytest.raises(UsageError):
        render(sample_ttl, out, concept="no such concept")
    assert out.read_text(encoding="utf-8") == "old page" and [p.name for p in tmp_path.iterdir()] == ["old.html"]


def test_cli_render_options(sample_ttl: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "c.html"
    got = runner.invoke(cli, ["render", str(sample_ttl), "-o", str(out), "--view", "concepts"])
    assert got.exit_code == 0 and got.output.startswith(f"wrote {out} (") and out.exists()
    assert {n["kind"] for n in page_data(out.read_text(encoding="utf-8"))["nodes"]} == {"concept"}
    got = runner.invoke(cli, ["render", str(sample_ttl), "-o", str(out), "--max-nodes", "5"])
    assert got.exit_code == 0 and "note: Showing 5 papers of" in got.output  # a capped papers view links papers
    got = runner.invoke(cli, ["render", str(sample_ttl), "--view", "authors"])
    assert got.exit_code == 2 and "'authors' is not one of 'papers', 'concepts'" in got.output
    got = runner.invoke(cli, ["render", str(sample_ttl), "--hops", "1"])
    assert got.exit_code == 1 and got.output == "Error: --hops needs --concept LABEL: the concept whose neighbourhood to draw\n"
    got = runner.invoke(cli, ["render", str(tmp_path / "nope.ttl")])
    assert got.exit_code == 1 and "nope.ttl: no such graph file" in got.output
    got = runner.invoke(cli, ["render", str(sample_ttl), "-o", str(out), "--concept", "LLM", "--hops", "1",
                              "--query", str(FIXTURES / "papers-by-venue.rq")])
    assert got.exit_code == 1 and "no node in this view" in got.output


def test_cli_build_writes_a_capped_page(tmp_path: Path) -> None:
    got = CliRunner().invoke(cli, ["build", "-o", str(tmp_path / "g.ttl")])
    assert got.exit_code == 0, got.output
    assert f"wrote {tmp_path / 'g.html'}" in got.output
    data = page_data((tmp_path / "g.html").read_text(encoding="utf-8"))
    assert 0 < len(data["nodes"]) <= DEFAULT_MAX_NODES


def test_a_concept_page_is_written_beside_the_whole_graphs_page_not_over_it(sample_ttl: Path, tmp_path: Path) -> None:
    import shutil

    graph = tmp_path / "icml2024.ttl"
    shutil.copy(sample_ttl, graph)
    whole = tmp_path / "icml2024.html"
    assert CliRunner().invoke(cli, ["render", str(graph)]).exit_code == 0
    before = whole.read_bytes()
    got = CliRunner().invoke(cli, ["render", str(graph), "--concept", "reinforcement learning", "--hops", "2"])
    part = tmp_path / "icml2024-reinforcement-learning.html"
    assert got.exit_code == 0 and got.output.startswith(f"wrote {part} ("), got.output
    assert whole.read_bytes() == before and page_data(part.read_text(encoding="utf-8"))["nodes"]
    got = CliRunner().invoke(cli, ["render", str(graph), "--query", str(FIXTURES / "papers-by-venue.rq")])
    assert got.exit_code == 0 and (tmp_path / "icml2024-papers-by-venue.html").exists() and whole.read_bytes() == before
