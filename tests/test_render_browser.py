"""Rendered pages opened in headless Chromium with the network cut off: drawn, hovered, searched, settled."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import kg
from kg.cli import cli

from .conftest import HOSTILE_TITLE, synthetic_triples

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync"]
FIXTURES = Path(__file__).parent / "fixtures"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="headless Chromium is not installed at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for the module (Debian's; Playwright never downloads a browser here)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


class Opened:
    """A page opened from file:// with every other request refused and recorded, and every error kept."""

    def __init__(self, browser, path: Path, settle_timeout: float = 30) -> None:
        self.context = browser.new_context(viewport={"width": 1200, "height": 800})
        self.requests: list[str] = []
        self.refused: list[str] = []
        self.errors: list[str] = []

        def route(r) -> None:
            self.requests.append(r.request.url)
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                self.refused.append(r.request.url)
                r.abort()

        self.context.route("**/*", route)
        self.page = self.context.new_page()
        self.page.on("request", lambda req: self.requests.append(req.url))
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        started = time.perf_counter()
        self.page.goto(path.as_uri())
        self.page.wait_for_function("window.kgLayout && window.kgLayout.stabilized", timeout=settle_timeout * 1000)
        self.seconds = time.perf_counter() - started

    def __enter__(self) -> Opened:
        return self

    def __exit__(self, *exc) -> None:
        self.context.close()

    def ids(self, kind: str | None = None) -> set[str]:
        return set(self.page.evaluate(
            "kind => network.body.data.nodes.get().filter(n => !kind || n.kind === kind).map(n => n.id)", kind))


def graph_counts(ttl: Path) -> tuple[set[str], set[str]]:
    """The graph's papers and the concepts they are about, by SPARQL."""
    from .test_render import sparql

    papers = {r[0] for r in sparql(ttl, "SELECT ?p WHERE { ?p a fabio:ResearchPaper }")}
    concepts = {r[0] for r in sparql(ttl, "SELECT DISTINCT ?c WHERE { ?p dcterms:subject ?c }")}
    return papers, concepts


def test_sample_and_cli_pages_load_offline_with_every_node(browser, sample_ttl: Path, tmp_path: Path) -> None:
    built = CliRunner().invoke(cli, ["build", "-o", str(tmp_path / "icml2024.ttl")])  # the bundled sample's page
    assert built.exit_code == 0, built.output
    pages = [(tmp_path / "icml2024.html", tmp_path / "icml2024.ttl")]
    got = CliRunner().invoke(cli, ["render", str(sample_ttl), "-o", str(tmp_path / "cli.html")])
    assert got.exit_code == 0, got.output
    pages.append((tmp_path / "cli.html", sample_ttl))
    for html_path, ttl in pages:
        with Opened(browser, html_path) as opened:
            assert set(opened.requests) == {html_path.as_uri()} and opened.refused == []
            assert opened.errors == []
            papers, concepts = graph_counts(ttl)
            assert opened.ids("paper") == papers and opened.ids("concept") == concepts
            drawn = opened.page.evaluate("Object.keys(network.getPositions()).length")
            assert drawn == len(papers) + len(concepts)
            assert opened.page.evaluate("network.physics.physicsEnabled") is False


def hover_every_node(page) -> list[str]:
    """Move the mouse onto each drawn node and return the tooltip text shown for it."""
    box = page.locator("#kg-network canvas").bounding_box()
    points = page.evaluate("""() => { const pos = network.getPositions();
        return Object.keys(pos).map(id => [id, network.canvasToDOM(pos[id])]); }""")
    shown = []
    for node_id, point in points:
        page.mouse.move(5, 5)  # leave the last node, so the next hover starts a new tooltip
        page.mouse.move(box["x"] + point["x"], box["y"] + point["y"])
        page.wait_for_function(
            """id => { const t = document.querySelector("div.vis-tooltip");
                const n = network.body.data.nodes.get(id);
                return t && t.style.visibility !== "hidden" && t.textContent.includes(n.title.querySelector("b").textContent); }""",
            arg=node_id, timeout=5000)
        shown.append(page.evaluate('document.querySelector("div.vis-tooltip").textContent'))
    return shown


def test_script_in_titles_and_abstracts_never_runs(browser, hostile_ttl: Path, tmp_path: Path) -> None:
    views = {"papers": {}, "query": {"query": FIXTURES / "papers-by-venue.rq"}}
    for name, options in views.items():
        out = kg.render(hostile_ttl, tmp_path / f"{name}.html", **options)
        with Opened(browser, Path(out)) as opened:
            shown = hover_every_node(opened.page)
            assert len(shown) == out.nodes >= 4
            assert opened.page.evaluate("window.__pwned") is None
            assert opened.page.evaluate("document.querySelectorAll('img, svg, iframe').length") == 0
            assert opened.page.evaluate("document.scripts.length") == 3, "only the page's own three scripts exist"
            assert any(HOSTILE_TITLE in text for text in shown), "the title is shown, as text"
            assert opened.errors == [] and opened.refused == []


def test_two_thousand_papers_render_and_settle(browser, tmp_path: Path) -> None:
    out = kg.render(synthetic_triples(2000), tmp_path / "big.html", view="papers", max_nodes=0)
    with Opened(browser, Path(out), settle_timeout=45) as opened:
        assert opened.page.evaluate("network.body.data.nodes.length") == out.nodes > 2000
        assert opened.page.evaluate("window.kgLayout.iterationsDone && !network.physics.physicsEnabled")
        before = opened.page.evaluate("network.getPositions()")
        opened.page.wait_for_timeout(400)
        assert opened.page.evaluate("network.getPositions()") == before, "nothing moves once settled"
        assert opened.seconds < 45 and opened.errors == []  # ~8 s on an idle 2-core machine
        print(f"2,000 papers: {out.nodes} nodes, {out.edges} edges settled in {opened.seconds:.1f} s")


def test_search_box_finds_and_focuses_a_node(browser, sample_ttl: Path, tmp_path: Path) -> None:
    out = kg.render(sample_ttl, tmp_path / "s.html")
    rl = "https://w3id.org/kg/concept/reinforcement-learning"
    with Opened(browser, Path(out)) as opened:
        page = opened.page
        page.keyboard.press("/")
        assert page.evaluate("document.activeElement.id") == "kg-search"
        page.keyboard.type("Reinforcement learning")
        page.keyboard.press("Enter")
        assert page.evaluate("network.getSelectedNodes()") == [rl]
        # The view glides onto the node (a 300 ms animation, slower on a busy machine).
        page.wait_for_function("""id => { const c = network.getViewPosition(), n = network.getPositions([id])[id];
            return Math.abs(c.x - n.x) < 2 && Math.abs(c.y - n.y) < 2; }""", arg=rl, timeout=5000)
        matches = page.text_content("#kg-search-status")
        assert matches.startswith("1 of ")
        page.keyboard.press("Enter")  # the next match: "offline reinforcement learning" also contains the text
        assert page.evaluate("network.getSelectedNodes()") != [rl] and page.text_content("#kg-search-status").startswith("2 of ")
        page.fill("#kg-search", "no node is called this")
        page.keyboard.press("Enter")
        assert page.text_content("#kg-search-status") == "no match"


def test_search_finds_a_paper_and_a_concept_that_are_not_drawn(browser, tmp_path: Path) -> None:
    """A capped page still finds every paper and concept: a hit that is not drawn is added, linked and listed."""
    triples = synthetic_triples(2000, concepts=400)
    on: dict[str, set[str]] = {}
    about: dict[str, set[str]] = {}
    for t in triples:
        if t.predicate.value.endswith("/subject"):
            on.setdefault(t.object.value, set()).add(t.subject.value)
            about.setdefault(t.subject.value, set()).add(t.object.value)
    for view in (None, "papers"):  # the default page of 2,000 papers (the concept map) and the capped papers view
        out = kg.render(triples, tmp_path / f"{view}.html", view=view)
        with Opened(browser, Path(out)) as opened:
            page = opened.page
            drawn = opened.ids()
            concept = max((c for c in on if c not in drawn and len(on[c]) >= 2), key=lambda c: (len(on[c]), c))
            paper = max(p for p in about if p not in drawn)
            assert len(drawn) < 600 and concept and paper
            for iri, label in ((concept, "concept " + concept.rsplit("-", 1)[1]), (paper, "Synthetic paper " + paper.rsplit("/p", 1)[1])):
                page.fill("#kg-search", label)
                page.keyboard.press("Enter")
                assert page.text_content("#kg-search-status").startswith("1 of "), label
                assert "not drawn by default" in page.text_content("#kg-search-status")
                assert page.evaluate("network.getSelectedNodes()") == [iri]
                assert page.text_content("#kg-panel h2") == label
                listed = set(page.evaluate("[...document.querySelectorAll('#kg-panel li')].map(li => li.dataset.id)"))
                truth = on[iri] if iri == concept else about[iri]
                assert listed <= truth and len(listed) == min(len(truth), 60), "the panel lists its papers (60 best) or concepts"
                linked = set(page.evaluate("id => network.getConnectedNodes(id)", iri))
                assert linked and linked <= drawn | {concept}, "linked to drawn neighbours"
                assert linked & (on[iri] | set().union(*(about[p] for p in on[iri])) if iri == concept
                                 else about[iri] | set().union(*(on[c] for c in about[iri])))
            assert opened.errors == [] and opened.refused == []


LABEL_BOXES = """() => { const boxes = [], all = network.body.data.nodes;
    all.getIds().forEach(id => { const n = network.body.nodes[id], l = n && n.labelModule;  // labels vis-network draws itself
        if (l && !all.get(id).hidden && l.visible()) boxes.push([l.size.left, l.size.top, l.size.left + l.size.width, l.size.top + l.size.height, id]); });
    return boxes.concat(window.kgLabels ? window.kgLabels.boxes : []); }"""


def overlapping(boxes: list) -> list[tuple[str, str]]:
    return [(a[4], b[4]) for i, a in enumerate(boxes) for b in boxes[i + 1 :]
            if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]]


def test_labels_never_overlap_and_more_appear_when_zoomed_in(browser, tmp_path: Path) -> None:
    triples = synthetic_triples(2000, concepts=400)
    for view, cap in (("map", 0), ("papers", None)):  # all 400 concepts on the map; 500 papers of 2,400 nodes
        out = kg.render(triples, tmp_path / f"{view}.html", view=view, max_nodes=cap)
        with Opened(browser, Path(out)) as opened:
            page = opened.page
            page.evaluate("network.fit()")
            page.wait_for_timeout(200)
            fitted = page.evaluate(LABEL_BOXES)
            assert len(fitted) >= (5 if view == "map" else 0) and overlapping(fitted) == [], view  # 500 papers fitted: too small to name
            named = {b[4] for b in fitted}
            page.evaluate("""() => { const id = network.body.data.nodes.get().sort((a, b) => b.size - a.size)[0].id;
                network.moveTo({ position: network.getPositions([id])[id], scale: network.getScale() * 4 }); }""")
            page.wait_for_timeout(200)
            zoomed = page.evaluate(LABEL_BOXES)
            assert overlapping(zoomed) == [], view
            assert {b[4] for b in zoomed} - named, f"{view}: zooming in names nodes that were not named"
            assert opened.errors == []


def with_years(triples: list) -> list:
    """Synthetic papers given publication years 2019-2024, so the year filter has something to filter."""
    import pyoxigraph as ox

    from kg.graph.vocabulary import FABIO, XSD

    papers = sorted({t.subject.value for t in triples if t.predicate.value.endswith("/subject")})
    year = ox.NamedNode(FABIO + "hasPublicationYear")
    return triples + [ox.Triple(ox.NamedNode(p), year, ox.Literal(str(2019 + i % 6), datatype=ox.NamedNode(XSD + "gYear")))
                      for i, p in enumerate(papers)]


def check_map(page, min_edges: int = 1) -> None:
    """The map's promises in a real browser: edges drawn, clusters labelled, a click lists the concept's papers."""
    shown = page.evaluate("window.kgMap.shown")
    assert shown["links"] >= min_edges and shown["concepts"] == page.evaluate("network.body.data.nodes.length")
    assert page.evaluate("Object.keys(network.body.edges).length") == page.evaluate("network.body.data.edges.length") >= min_edges
    labels = page.evaluate("window.kgMap.labels")
    areas = page.evaluate("""() => { const n = {}; network.body.data.nodes.get().forEach(x => n[x.area] = (n[x.area] || 0) + 1);
        return Object.keys(n).filter(a => n[a] > 1).sort(); }""")
    assert sorted(labels) == areas and labels, "every area with two or more concepts is labelled"
    # A real click on the biggest concept opens its papers.
    biggest = page.evaluate("network.body.data.nodes.get().sort((a, b) => b.size - a.size)[0].id")
    box = page.locator("#kg-network canvas").bounding_box()
    point = page.evaluate("id => network.canvasToDOM(network.getPositions([id])[id])", biggest)
    page.mouse.click(box["x"] + point["x"], box["y"] + point["y"])
    page.wait_for_selector("#kg-panel li")
    assert page.evaluate("document.querySelector('#kg-panel').dataset.concept") == biggest
    assert page.locator("#kg-panel li").count() > 0
    assert page.text_content("#kg-panel h2") == page.evaluate("id => network.body.data.nodes.get(id).full", biggest)


def test_the_concept_map_draws_labels_filters_and_drills_down(browser, tmp_path: Path) -> None:
    out = kg.render(with_years(synthetic_triples(2000)), tmp_path / "map.html")
    with Opened(browser, Path(out)) as opened:
        page = opened.page
        assert opened.errors == [] and opened.refused == []
        check_map(page, min_edges=out.nodes)
        before = page.locator("#kg-panel li").count()
        page.select_option("#kg-year-from", "2024")  # one year of six: fewer papers listed, fewer links
        assert 0 < page.locator("#kg-panel li").count() < before
        assert page.evaluate("window.kgMap.shown.links") < out.edges
        page.select_option("#kg-year-from", "2019")
        area = page.evaluate("network.body.data.nodes.get()[0].area")
        page.locator("#kg-legend div", has_text=area).first.click()  # hide one area
        hidden = page.evaluate("a => network.body.data.nodes.get().filter(n => n.area === a).every(n => n.hidden)", area)
        assert (hidden and area not in page.evaluate("window.kgMap.labels")) or page.evaluate("window.kgMap.labels") == []
        page.fill("#kg-min-links", "4")
        page.dispatch_event("#kg-min-links", "change")
        left = page.evaluate("""() => { const on = network.body.data.nodes.get().filter(n => !n.hidden).map(n => n.id);
            const links = {}; network.body.data.edges.get().filter(e => !e.hidden).forEach(e => { links[e.from] = (links[e.from] || 0) + 1; links[e.to] = (links[e.to] || 0) + 1; });
            return on.map(id => links[id] || 0); }""")
        assert left and min(left) >= 1


@pytest.mark.slow
def test_the_default_page_of_21k_real_papers_is_a_readable_map(browser, tmp_path: Path) -> None:
    corpus = Path(__file__).parent.parent.parent / "shared" / "corpora" / "ml-abstracts.jsonl"
    if not corpus.is_file():
        pytest.skip("../shared/corpora/ml-abstracts.jsonl is not here")
    got = CliRunner().invoke(cli, ["build", str(corpus), "-o", str(tmp_path / "ml.ttl")])
    assert got.exit_code == 0, got.output
    page_path = tmp_path / "ml.html"
    with Opened(browser, page_path, settle_timeout=60) as opened:
        assert opened.errors == [] and opened.refused == []
        check_map(opened.page, min_edges=100)
        assert len(opened.page.evaluate("window.kgMap.labels")) >= 8


@pytest.mark.slow
def test_a_slice_of_real_papers_links_papers_and_finds_what_is_not_drawn(browser, tmp_path: Path) -> None:
    """3,000 real abstracts: the papers view has edges, and the map finds a concept and a paper it does not draw."""
    from .test_render import sparql

    corpus = Path(__file__).parent.parent.parent / "shared" / "corpora" / "ml-abstracts.jsonl"
    if not corpus.is_file():
        pytest.skip("needs the shared corpus ../shared/corpora/ml-abstracts.jsonl for real papers")
    source = tmp_path / "slice.jsonl"
    with corpus.open(encoding="utf-8") as f:
        source.write_text("".join(itertools.islice(f, 3000)), encoding="utf-8")
    ttl = kg.write(kg.build([source]), tmp_path / "slice.ttl")
    papers = kg.render(ttl, tmp_path / "papers.html", view="papers")
    assert papers.total > papers.nodes > 100 and papers.edges >= papers.nodes
    out = kg.render(ttl, tmp_path / "map.html")
    counts = sparql(ttl, """SELECT ?c ?label (COUNT(?p) AS ?n) WHERE { ?p dcterms:subject ?c . ?c skos:prefLabel ?label }
        GROUP BY ?c ?label ORDER BY DESC(?n) ?c""")
    titles = sparql(ttl, """SELECT (SAMPLE(?p) AS ?paper) ?t WHERE { ?p a fabio:ResearchPaper ; dcterms:title ?t }
        GROUP BY ?t HAVING (COUNT(?p) = 1) ORDER BY ?t""")
    with Opened(browser, Path(out)) as opened:
        page = opened.page
        drawn = opened.ids()
        concept = next((c, label) for c, label, _ in counts if c not in drawn)
        paper = next((p, t) for p, t in titles if p not in drawn)
        for iri, label in (concept, paper):
            page.fill("#kg-search", label)
            page.keyboard.press("Enter")
            assert "not drawn by default" in page.text_content("#kg-search-status"), label
            (selected,) = page.evaluate("network.getSelectedNodes()")
            assert page.evaluate("id => network.body.data.nodes.get(id).full", selected) == label
            assert selected == iri or iri == concept[0], "a unique title finds its paper"  # a concept's label may be another's alt label
            assert page.text_content("#kg-panel h2") == label and page.locator("#kg-panel li").count() > 0
        assert opened.errors == [] and opened.refused == []


def with_venues(triples: list) -> list:
    """Synthetic papers at two venues, ICML and NeurIPS (every third paper), with a label each."""
    import pyoxigraph as ox

    from kg.graph.vocabulary import DCTERMS, RDFS

    papers = sorted({t.subject.value for t in triples if t.predicate.value.endswith("/subject")})
    venues = {name: ox.NamedNode(f"https://w3id.org/kg/venue/{name.lower()}") for name in ("ICML", "NeurIPS")}
    part_of = ox.NamedNode(DCTERMS + "isPartOf")
    out = triples + [ox.Triple(v, ox.NamedNode(RDFS + "label"), ox.Literal(name)) for name, v in venues.items()]
    return out + [ox.Triple(ox.NamedNode(p), part_of, venues["NeurIPS" if i % 3 == 0 else "ICML"]) for i, p in enumerate(papers)]


def test_the_concept_map_filters_by_venue(browser, tmp_path: Path) -> None:
    out = kg.render(with_venues(with_years(synthetic_triples(2000))), tmp_path / "venues.html")
    with Opened(browser, Path(out)) as opened:
        page = opened.page
        assert opened.errors == [] and opened.refused == []
        assert page.evaluate("Array.from(document.querySelectorAll('#kg-venue option')).map(o => o.textContent)") == ["all", "ICML", "NeurIPS"]
        check_map(page, min_edges=out.nodes)  # opens the biggest concept's papers
        every = page.evaluate("window.kgMap.shown.links")
        listed = page.locator("#kg-panel li").count()
        page.select_option("#kg-venue", label="NeurIPS")  # a third of the papers
        assert 0 < page.evaluate("window.kgMap.shown.links") < every
        venues = page.evaluate("""() => Array.from(document.querySelectorAll('#kg-panel li')).map(li => li.querySelector('.m').textContent)""")
        assert 0 < len(venues) < listed and all("NeurIPS" in v for v in venues)
        assert "at NeurIPS" in page.text_content("#kg-panel")
        page.select_option("#kg-venue", label="all")
        assert page.evaluate("window.kgMap.shown.links") == every
