"""Stage 4b: draw a graph as one self-contained HTML page (vis-network from pyvis, inlined) that works offline.

The page loads nothing from the network and writes no side folders: pyvis's own page template links
Bootstrap and vis-network from CDNs even in its `in_line` mode, so kg fills its own small template
(`kg/views/templates/graph.html`) with the vis-network copy that pyvis bundles. Every text taken from the
graph travels as escaped JSON data and reaches the page only through `textContent`, never as HTML.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

from kg.core import progress
from kg.core.defaults import MAP_CONCEPTS, MAP_THRESHOLD, QUERY_TIMEOUT, RENDER_HOPS, RENDER_HOPS_CONCEPTS, RENDER_MAX_NODES
from kg.core.errors import QueryError, UsageError
from kg.graph import names
from kg.graph.atomic import atomic_write
from kg.graph.handle import refuse_overwrite
from kg.graph.index_facts import read_shown
from kg.graph.names import FactsNames
from kg.graph.resources import data_path
from kg.views.conceptmap import concept_map
from kg.views.paper_links import paper_links_view
from kg.views.scene import VIEWS, Scene, View, concepts_view, limit, neighbourhood, papers_view, result_view, size
from kg.views.search_index import search_index

# Tableau 10 without its grey (papers are grey), then the distinct tones of Tableau 20 and a few dark ones:
# the bundled scheme declares 24 top concepts.
PALETTE = ("#4E79A7", "#F28E2B", "#E15759", "#76B7B2", "#59A14F", "#EDC948", "#B07AA1", "#FF9DA7", "#9C755F",
           "#A0CBE8", "#FFBE7D", "#8CD17D", "#B6992D", "#499894", "#D37295", "#D4A6C8", "#D7B5A6", "#17BECF",
           "#6A3D9A", "#1F3A93", "#8C2D04", "#00A087", "#79706E", "#FF9D9A")
PAPER_COLOUR = "#9aa3ae"
OTHER_COLOURS = ("#37474F", "#8D6E63", "#7E57C2", "#00897B", "#C0CA33", "#6D4C41")  # kinds in query views
VIS_VERSION = "vis-9.1.2"


@dataclass(frozen=True)
class Rendered:
    """A rendered page: its HTML, where it was written (if anywhere), and what it shows; shown inline in Jupyter."""

    html: str
    path: Path | None
    nodes: int
    edges: int
    total: int
    note: str
    seconds: float

    def _repr_html_(self) -> str:
        # srcdoc keeps the page's scripts in their own sandboxed document inside the notebook.
        return (f'<iframe srcdoc="{html.escape(self.html, quote=True)}" sandbox="allow-scripts" '
                'style="width:100%;height:640px;border:1px solid #ddd"></iframe>')

    def __fspath__(self) -> str:
        if self.path is None:
            raise TypeError("this rendering was not written to a file; pass out= to render()")
        return str(self.path)

    def __str__(self) -> str:
        return str(self.path) if self.path is not None else f"<kg page: {self.nodes} nodes>"


@progress.stepped("drawing {graph}")
def render(
    graph: Any,
    out: str | Path | None = None,
    *,
    view: str | None = None,
    concept: str | None = None,
    hops: int | None = None,
    query: str | Path | None = None,
    params: Mapping[str, Any] | None = None,
    max_nodes: int | None = None,
    title: str | None = None,
    timeout: float | None = QUERY_TIMEOUT,
) -> Rendered:
    """Draw a graph (a file, a `Built`, an rdflib Graph or pyoxigraph triples) as HTML; write it to `out` if given.

    view: "papers" (default) or "concepts"; concept + hops: the neighbourhood of one concept;
    query: a CONSTRUCT (named query or .rq file, with `params`) whose result is drawn; max_nodes: keep the most connected (0 = all,
    default 500, with a note on the page saying what was left out); timeout: seconds the query may run (None or 0: no limit).
    """
    started = time.perf_counter()
    if query is not None and view is not None:
        raise UsageError("--query draws the CONSTRUCT result; it cannot be combined with --view")
    if view is not None and view not in VIEWS:
        raise UsageError(f"unknown view {view!r} (available: {', '.join(VIEWS)})")
    if params and query is None:
        raise UsageError("--param sets parameters of --query; pass --query NAME too")
    if hops is not None and concept is None:
        raise UsageError("--hops needs --concept LABEL: the concept whose neighbourhood to draw")
    if out is not None:
        refuse_overwrite(out, [p for p in (graph, query) if isinstance(p, (str, Path))])
    if view == "map" and concept is not None:
        raise UsageError("--concept draws a neighbourhood in the papers or concepts view, not on the map")
    chosen = build_view(graph, view=view, concept=concept, hops=hops, query=query, params=params,
                        max_nodes=max_nodes, title=title, timeout=timeout)
    progress.stage("writing the page")
    page = to_html(chosen)
    path = None
    if out is not None:
        with atomic_write(out, "w") as stream:
            stream.write(page)
        path = Path(out)
    return Rendered(page, path, len(chosen.nodes), len(chosen.edges), chosen.total, chosen.note,
                    time.perf_counter() - started)


def build_view(
    graph: Any,
    *,
    view: str | None = None,
    concept: str | None = None,
    hops: int | None = None,
    query: str | Path | None = None,
    params: Mapping[str, Any] | None = None,
    max_nodes: int | None = None,
    title: str | None = None,
    timeout: float | None = QUERY_TIMEOUT,
) -> View:
    """The View that `render` draws, before it becomes HTML.

    view None: the papers view, or the concept map when the papers view would have more than
    MAP_THRESHOLD nodes (a large graph), unless a concept or query is asked for.
    max_nodes None: RENDER_MAX_NODES nodes, or MAP_CONCEPTS concepts on the map.
    """
    triples, name = _triples(graph)
    facts = read_shown(triples)  # a graph file with a fresh query index: from the index, the parse's facts (decision 0075)
    progress.stage("laying out the view")
    index = Scene(facts)
    if view is None and query is None and concept is None:
        drawn = len(index.papers) + len(index.paper_count)
        view = "map" if drawn > MAP_THRESHOLD else "papers"
    if query is None:  # the search box finds every paper and concept of the graph, drawn or not
        return with_search(_chosen_view(index, name, view, concept, hops, max_nodes, title), index)
    # a graph file's CONSTRUCT runs where `kg query` runs it (its SPARQL store); triples in memory, in a store of their own
    constructed = run_construct(Path(graph) if isinstance(graph, (str, Path)) else triples, query, params, timeout)
    return _chosen_view(index, name, view, concept, hops, max_nodes, title, (constructed, f"{Path(query).name} on {name}"))


def with_search(view: View, index: Scene) -> View:
    """The view with the search index of the whole graph in its page data."""
    return View(view.title, view.nodes, view.edges, view.note, view.focus, view.total, {**view.extra, "search": search_index(index)})


def _chosen_view(index: Scene, name: str, view: str | None, concept: str | None, hops: int | None, max_nodes: int | None,
                 title: str | None, constructed: tuple[list, str] | None = None) -> View:
    """The view asked for; `constructed`: the triples of a CONSTRUCT query to draw, and their title."""
    if view == "map":
        return concept_map(index, title or f"Concept map of {name}", MAP_CONCEPTS if max_nodes is None else max_nodes)
    view = view or "papers"
    max_nodes = RENDER_MAX_NODES if max_nodes is None else max_nodes
    if constructed is not None:
        chosen = result_view(index, constructed[0], title or constructed[1])
    elif view == "concepts":
        chosen = concepts_view(index, title or f"Concepts of {name}")
    elif concept is None and 0 < max_nodes < len(index.papers) + len(index.paper_count):
        # Cut to its most connected nodes, the papers-and-concepts view would keep concepts only: no edge.
        return paper_links_view(index, title or f"Papers of {name}", max_nodes)
    else:
        chosen = papers_view(index, title or f"Papers and concepts of {name}")
    if concept is not None:
        focus = names.concept(concept, FactsNames(index.facts), "--concept")
        if focus not in {n.id for n in chosen.nodes}:
            raise UsageError(f"concept {concept!r} has no node in this view (no paper is about it)")
        steps = hops if hops is not None else (RENDER_HOPS_CONCEPTS if view == "concepts" else RENDER_HOPS)
        chosen = neighbourhood(chosen, focus, steps)
        if title is None:
            chosen = View(f"{index.label(focus)}: {steps} hop{'s' if steps != 1 else ''} in {name}", chosen.nodes,
                          chosen.edges, chosen.note, chosen.focus, chosen.total)
    return limit(chosen, max_nodes)


def run_construct(source: list | Path, query: str | Path, params: Mapping[str, Any] | None = None,
                  timeout: float | None = QUERY_TIMEOUT) -> list:
    """Run a CONSTRUCT (or DESCRIBE) query, named or a .rq file, on the graph (a graph file, or triples); the resulting triples.

    On a graph file the query runs as `kg query` runs it (kg.sparql.run.query: the graph's persisted store); on triples
    in a store of their own. Either way within `timeout` seconds (None or 0: no limit), as `kg query`.
    """
    import pyoxigraph as ox

    from kg.sparql.run import query as run_query
    from kg.sparql.run import resolve, run_store

    named = resolve(query)  # kg's query loader: catalog names, .rq files, the same error messages as `kg query`
    if isinstance(source, Path):
        result = run_query(named, params, graph=source, timeout=timeout)
    else:
        store = ox.Store()
        store.bulk_extend(ox.Quad(t.subject, t.predicate, t.object) for t in source)
        result = run_store(store, named, params, timeout=timeout, wait=True)
    if result.kind != "graph":
        kind = "an ASK" if result.kind == "ask" else "a SELECT"
        raise QueryError(f"query {named.name!r} is {kind} query; render --query draws the graph of a CONSTRUCT query")
    return list(result.triples)


def to_html(view: View) -> str:
    """The self-contained HTML page of a view."""
    template = (data_path("templates") / "graph.html").read_text(encoding="utf-8")
    parts = {
        "TITLE": html.escape(view.title),
        "VIS_CSS": _vis_asset("vis-network.css"),
        "VIS_JS": _vis_asset("vis-network.min.js"),
        "DATA": script_json(page_data(view)),
    }
    # One pass, so text inserted for one placeholder is never scanned for another.
    return re.sub(r"\{\{([A-Z_]+)\}\}", lambda m: parts[m.group(1)], template)


def page_data(view: View) -> dict[str, Any]:
    """What the page script needs: styled vis nodes and edges, the legend, options and the note."""
    colours = _colours(view)
    biggest = max((n.weight for n in view.nodes if n.kind == "concept"), default=1.0)
    degree: dict[str, int] = {}
    for e in view.edges:
        degree[e.source] = degree.get(e.source, 0) + 1
        degree[e.target] = degree.get(e.target, 0) + 1
    hub = max(degree.values(), default=1)
    big = len(view.nodes) > 800
    positions = view.extra.get("map", {}).get("positions", {})
    nodes = []
    for n in view.nodes:
        concept = n.kind == "concept"
        # Concepts grow with their papers; other resources of a query view with their links.
        radius = size(n.weight, biggest) if concept else 7 if n.kind == "paper" else size(degree.get(n.id, 0), hub) * 0.7
        short = n.label if len(n.label) <= 48 else n.label[:45].rstrip() + "…"
        nodes.append({
            "id": n.id, "label": short, "full": n.label, "kind": n.kind, "area": n.area, "info": n.info,
            "size": radius, "color": colours[n.area] if n.area in colours else OTHER_COLOURS[0],
            # Big concepts get big labels, so the hubs stay named when a large view is zoomed out to fit.
            "font": {"size": round((16 if positions else 12) + 0.35 * radius) if n.kind != "paper" else 11, "strokeWidth": 3 if concept else 2},
            "borderWidth": 4 if n.id == view.focus else 1,
            "shape": "dot" if concept or n.kind == "paper" else "diamond",
        })
        if n.id in positions:
            nodes[-1]["x"], nodes[-1]["y"] = positions[n.id]
    heaviest = max((e.weight for e in view.edges), default=1.0)
    edges = [{"from": e.source, "to": e.target, "width": round(1 + 5 * (e.weight / heaviest) ** 0.5, 2) if heaviest > 1 else 1,
              "label": e.label} for e in view.edges]
    counts: dict[tuple[str, str], int] = {}
    for n in view.nodes:
        group = (n.area, "concept" if n.kind == "concept" else n.kind)
        counts[group] = counts.get(group, 0) + 1
    # Legend rows [name, colour, nodes, kind]: concept areas first, then other kinds, papers last.
    legend = [[a, colours.get(a, OTHER_COLOURS[0]), k, kind]
              for (a, kind), k in sorted(counts.items(), key=lambda x: (x[0][1] != "concept", x[0][1] == "paper", x[0][0]))]
    data: dict[str, Any] = {
        "title": view.title, "note": view.note, "nodes": nodes, "edges": edges, "legend": legend,
        "focus": view.focus, "total": view.total, "options": vis_options(len(nodes), big),
    }
    if "search" in view.extra:
        data["search"] = {**view.extra["search"], "colours": {c[2]: area_colour(c[2]) for c in view.extra["search"]["concepts"]}}
    if "map" in view.extra:
        extra = {k: v for k, v in view.extra["map"].items() if k != "positions"}
        extra["colours"] = {c[0]: colours.get(c[0], OTHER_COLOURS[0]) for c in extra["clusters"]}
        data["map"] = extra
        data["options"]["physics"] = {"enabled": False}  # laid out in Python: the page opens at once, the same every time
    return data


def vis_options(count: int, big: bool) -> dict[str, Any]:
    """vis-network options that settle and then stop (MEASURED.md: 1,000 nodes in ~3 s, not 90 s)."""
    return {
        "layout": {"improvedLayout": False, "randomSeed": 7},
        "physics": {
            "solver": "forceAtlas2Based",
            "forceAtlas2Based": {"gravitationalConstant": -80, "centralGravity": 0.012, "springLength": 90,
                                 "springConstant": 0.06, "damping": 0.5, "avoidOverlap": 0.3},
            "stabilization": {"enabled": True, "iterations": 150 if count <= 1000 else 100, "updateInterval": 10, "fit": True},
            "minVelocity": 2,
        },
        "edges": {"smooth": False, "color": {"color": "#cbd2da", "highlight": "#1f2937", "hover": "#4b5563"},
                  "font": {"size": 9, "color": "#6b7280", "strokeWidth": 2}},
        "nodes": {"shape": "dot", "font": {"face": "system-ui, -apple-system, Segoe UI, sans-serif", "color": "#111827"}},
        "interaction": {"hover": True, "tooltipDelay": 100, "hideEdgesOnDrag": big, "hideEdgesOnZoom": big},
    }


def script_json(data: Any) -> str:
    """JSON that is safe inside a <script> element: no '<', '>', '&' or line separators left raw."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def area_colour(area: str) -> str:
    """An area's colour, the same in every view of every graph: the bundled areas' from
    kg/extract/patterns/area-colours.tsv, any other area's from the palette by a hash of its label."""
    known = _area_colours()
    if area in known:
        return known[area]
    return PALETTE[int(hashlib.sha256(area.encode("utf-8")).hexdigest()[:8], 16) % len(PALETTE)]


@lru_cache(maxsize=1)
def _area_colours() -> dict[str, str]:
    lines = (data_path("patterns") / "area-colours.tsv").read_text(encoding="utf-8").splitlines()
    return {area: colour for colour, area in (line.split("\t", 1) for line in lines if line and not line.startswith("# "))}


def _colours(view: View) -> dict[str, str]:
    """Concept areas keep their own colour (area_colour); papers are grey; other kinds take muted tones."""
    # A paper may carry an area too (the papers view of a large graph colours each paper by its concepts' area).
    colours = {a: area_colour(a) for a in sorted({n.area for n in view.nodes if n.kind == "concept" or (n.kind == "paper" and n.area != "paper")})}
    kinds = sorted({n.area for n in view.nodes if n.kind not in ("concept", "paper")} - set(colours))
    colours.update({k: OTHER_COLOURS[i % len(OTHER_COLOURS)] for i, k in enumerate(kinds)})
    colours["paper"] = PAPER_COLOUR
    return colours


def _vis_asset(name: str) -> str:
    """A vis-network file bundled with pyvis, made safe to sit inside <script>/<style>."""
    text = (_pyvis_folder() / "templates" / "lib" / VIS_VERSION / name).read_text(encoding="utf-8")
    # Only these sequences can end or confuse a raw-text element; a blanket "</" rewrite would break
    # the regex literal /</ inside vis-network (there are none of these today: this is a guard).
    return re.sub(r"</(script|style)|<!--", lambda m: m.group(0).replace("<", "\\x3c"), text, flags=re.IGNORECASE)


def _pyvis_folder() -> Path:
    """Where pyvis is installed, found without importing it (its import pulls in IPython and jinja: ~1 s)."""
    from importlib.util import find_spec

    spec = find_spec("pyvis")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError("pyvis is not installed; kg needs its bundled vis-network files: pip install pyvis")
    return Path(next(iter(spec.submodule_search_locations)))


def _triples(graph: Any) -> tuple[Any, str]:
    """pyoxigraph triples and a display name from any graph a user may hold."""
    from kg.pipeline.build import Built

    if isinstance(graph, (str, Path)):
        # The path itself: the Scene streams the file's triples (kg.graph.facts.read_facts), a CONSTRUCT runs in its
        # store. A list of them held 1.2 GB at 21k papers.
        return Path(graph), Path(graph).name
    if isinstance(graph, Built):
        return list(graph.triples()), ", ".join(graph.inputs) or "the built graph"
    if hasattr(graph, "serialize") and hasattr(graph, "triples"):  # an rdflib Graph, e.g. from kg.load()
        import pyoxigraph as ox

        data = graph.serialize(format="nt", encoding="utf-8")
        return list(ox.parse(data, format=ox.RdfFormat.N_TRIPLES)), "the graph"
    if isinstance(graph, Iterable):
        return list(graph), "the graph"
    raise UsageError(f"cannot render a {type(graph).__name__}: pass a graph file path, a kg.Built or an rdflib Graph")
