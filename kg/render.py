"""Stage 4b: draw a built graph as a self-contained, offline pyvis HTML page."""

from __future__ import annotations

import re
from pathlib import Path

from .atomic import atomic_write
from .rdf import DCTERMS, RDFS, SKOS, read_triples


def _graph_data(triples: list) -> tuple[list[dict], list[dict]]:
    """Papers and the concepts they are about, as vis-network nodes and edges."""
    labels: dict[str, str] = {}
    prefs: dict[str, str] = {}
    subjects: list[tuple[str, str]] = []
    for t in triples:
        p = t.predicate.value
        if p == RDFS + "label":
            labels[t.subject.value] = t.object.value
        elif p == SKOS + "prefLabel":
            prefs[t.subject.value] = t.object.value
        elif p == DCTERMS + "subject":
            subjects.append((t.subject.value, t.object.value))
    papers = sorted({s for s, _ in subjects})
    concepts = sorted({o for _, o in subjects})
    nodes = [{"id": p, "label": labels.get(p, p), "title": labels.get(p, p), "shape": "dot", "size": 8, "group": "paper"} for p in papers]
    nodes += [{"id": c, "label": prefs.get(c, c), "title": prefs.get(c, c), "shape": "dot", "size": 16, "group": "concept"} for c in concepts]
    edges = [{"from": s, "to": o} for s, o in sorted(subjects)]
    return nodes, edges


def render_html(graph_path: str | Path) -> str:
    """The HTML text of the papers-and-concepts view of a graph file."""
    from pyvis.network import Network

    nodes, edges = _graph_data(read_triples(graph_path))
    net = Network(height="800px", width="100%", directed=False, cdn_resources="remote")
    net.nodes, net.edges = nodes, edges
    net.node_ids = [n["id"] for n in nodes]
    net.set_options('{"layout": {"improvedLayout": false}, "physics": {"solver": "forceAtlas2Based", "stabilization": {"iterations": 150}}}')
    return _inline_assets(net.generate_html())


def _inline_assets(page: str) -> str:
    """Replace every network-loaded script and stylesheet with pyvis's bundled copy inline."""
    import pyvis

    lib = Path(pyvis.__file__).parent / "templates" / "lib" / "vis-9.1.2"
    js = (lib / "vis-network.min.js").read_text(encoding="utf-8").replace("</script", "<\\/script")
    css = (lib / "vis-network.css").read_text(encoding="utf-8")
    page = re.sub(r'<script[^>]*\bsrc="[^"]*"[^>]*>\s*</script>', "", page)
    page = re.sub(r'<link[^>]*\bhref="[^"]*"[^>]*/?>', "", page)
    return page.replace("<head>", f"<head>\n<style>{css}</style>\n<script>{js}</script>", 1)


def render(graph_path: str | Path, out: str | Path) -> Path:
    """Write the HTML view of a graph file to `out` (atomically) and return its path."""
    page = render_html(graph_path)
    with atomic_write(out, "w") as stream:
        stream.write(page)
    return Path(out)
