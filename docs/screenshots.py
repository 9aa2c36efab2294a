"""Regenerate the concept-map and serve-page screenshots in docs/ (headless Chromium, Debian's /usr/bin/chromium).

Run from the repository root on a graph you built:
    .venv/bin/python docs/screenshots.py map graphs/big.ttl docs/concept-map.png      # the default page, one concept clicked
    .venv/bin/python docs/screenshots.py serve graphs/big.ttl docs/serve.png          # kg serve's page after a query
"""

from __future__ import annotations

import sys
import tempfile
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

import kg

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync"]
QUERY = "SELECT ?paper ?method WHERE { ?paper kg:proposes ?m . ?m rdfs:label ?method } LIMIT 20"


def concept_map(graph: Path, out: Path) -> None:
    """Render the graph's default page, click its biggest concept, and save a PNG."""
    with tempfile.TemporaryDirectory() as tmp:
        page_path = Path(kg.render(graph, Path(tmp) / "page.html"))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 860})
            page.goto(page_path.as_uri())
            page.wait_for_function("window.kgLayout && window.kgLayout.stabilized")
            if page.evaluate("!!window.kgMap"):
                page.evaluate("kgMap.select(network.body.data.nodes.get().sort((a, b) => b.size - a.size)[0].id)")
            page.wait_for_timeout(400)
            page.screenshot(path=str(out))
            browser.close()


def serve_page(graph: Path, out: Path) -> None:
    """Run kg serve's app on a free port, type the README's query into the page, run it, and save a PNG."""
    app = kg.make_app(graph, workers=1, memory=False)
    from kg.endpoint.app import make_server

    server = make_server(app, "127.0.0.1", 0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 860})
            page.goto(f"http://127.0.0.1:{server.server_port}/")
            page.fill("textarea[name=query]", QUERY)
            page.click("text=run query")
            page.wait_for_selector("table")
            page.screenshot(path=str(out))
            browser.close()
    finally:
        server.shutdown()
        app.close()


if __name__ == "__main__":
    kind, graph, target = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    {"map": concept_map, "serve": serve_page}[kind](graph, target)
