"""How long `kg render` takes, in Python and until the page has settled in headless Chromium.

Usage: .venv/bin/python bench/render_timing.py [N ...]   (default 1000 2000; first N abstracts of the shared corpus)
"""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

import kg

CORPUS = Path(os.environ.get("KG_CORPUS", "/work/shared/corpora/ml-abstracts.jsonl"))
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync"]


def main(sizes: list[int]) -> None:
    """Print one line per size and cap: nodes, edges, Python seconds, browser seconds to settle."""
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for n in sizes:
            source = Path(tmp) / f"first-{n}.jsonl"
            with CORPUS.open(encoding="utf-8") as f:
                source.write_text("".join(itertools.islice(f, n)), encoding="utf-8")
            ttl = kg.write(kg.build([source]), Path(tmp) / f"first-{n}.ttl")
            for cap in (None, 0):
                out = kg.render(ttl, Path(tmp) / f"first-{n}-{cap}.html", max_nodes=cap)
                page = browser.new_page(viewport={"width": 1200, "height": 800})
                started = time.perf_counter()
                page.goto(Path(out).as_uri())
                page.wait_for_function("window.kgLayout && window.kgLayout.stabilized", timeout=120_000)
                settled = time.perf_counter() - started
                page.close()
                label = "default cap" if cap is None else "all nodes"
                print(f"{n:>6} papers, {label:<11}: {out.nodes:>6} nodes {out.edges:>6} edges  "
                      f"python {out.seconds:5.2f} s  browser settled {settled:5.2f} s", flush=True)
        browser.close()


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 2000])
