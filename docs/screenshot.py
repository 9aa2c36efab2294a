"""Regenerate docs/screenshot.png: the bundled sample's page in headless Chromium, one paper's tooltip open.

Run from the repository root: .venv/bin/python docs/screenshot.py  (needs /usr/bin/chromium and playwright).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

import kg

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync"]


def main(out: Path) -> None:
    """Build the sample, render it, hover the paper with the most concepts, and save a PNG."""
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1700000000")
    with tempfile.TemporaryDirectory() as tmp:
        page_path = Path(kg.render(kg.write(kg.build(), Path(tmp) / "icml2024.ttl"), Path(tmp) / "icml2024.html"))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 760})
            page.goto(page_path.as_uri())
            page.wait_for_function("window.kgLayout && window.kgLayout.stabilized")
            point = page.evaluate("""() => {
                const papers = network.body.data.nodes.get().filter(n => n.kind === "paper");
                papers.sort((a, b) => network.getConnectedNodes(b.id).length - network.getConnectedNodes(a.id).length);
                const id = papers[0].id;
                return network.canvasToDOM(network.getPositions([id])[id]); }""")
            box = page.locator("#kg-network canvas").bounding_box()
            page.mouse.move(box["x"] + point["x"], box["y"] + point["y"])
            page.wait_for_selector("div.vis-tooltip", state="visible")
            page.wait_for_timeout(300)
            page.screenshot(path=str(out))
            browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "screenshot.png")
