"""Pages of a large graph: nodes, edges, file size and time per view; settling, labels and search in headless Chromium.

Usage: .venv/bin/python bench/render_search.py GRAPH.ttl [VIEW[:MAX_NODES] ...] [--find TEXT ...]
  VIEW is default, map, papers or concepts (default: default papers map:0); each --find TEXT is searched on every page
  (default: "diffusion model", "mixture of experts").
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

import kg
from kg.graph.files import read_triples

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync"]


def main(argv: list[str]) -> None:
    graph, rest = Path(argv[0]), argv[1:]
    finds = [rest[i + 1] for i, a in enumerate(rest) if a == "--find"] or ["diffusion model", "mixture of experts"]
    specs = [a for i, a in enumerate(rest) if a != "--find" and (i == 0 or rest[i - 1] != "--find")] or ["default", "papers", "map:0"]
    started = time.perf_counter()
    triples = read_triples(graph)
    print(f"{graph.name}: {len(triples):,} triples read in {time.perf_counter() - started:.1f} s", flush=True)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for spec in specs:
            view, _, cap = spec.partition(":")
            out = kg.render(triples, Path(tmp) / f"{view}-{cap}.html", view=None if view == "default" else view,
                            max_nodes=int(cap) if cap else None)
            size = os.path.getsize(out.path or "")
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
            opened = time.perf_counter()
            page.goto(Path(out).as_uri())
            page.wait_for_function("window.kgLayout && window.kgLayout.stabilized", timeout=300_000)
            settled = time.perf_counter() - opened
            labels = page.evaluate("window.kgLabels ? window.kgLabels.nodes : null")
            entries = page.evaluate("window.kgSearch ? window.kgSearch.entries : null")
            print(f"{spec:<10} {out.nodes:>6,} nodes {out.edges:>6,} edges (of {out.total:,} nodes)  {size / 1e6:5.2f} MB  "
                  f"python {out.seconds:5.1f} s  browser settled {settled:5.1f} s  labels at fit {labels}  "
                  f"search entries {entries}", flush=True)
            for text in finds:
                page.fill("#kg-search", text)
                began = time.perf_counter()
                page.keyboard.press("Enter")
                status = page.text_content("#kg-search-status")
                print(f"           find {text!r}: {status} ({time.perf_counter() - began:.2f} s)", flush=True)
            page.close()
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1:])
