"""The endpoint's own page in headless Chromium: its query form still works (the cross-site POST check
must not refuse a same-origin form), and a form on another origin is refused."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from .conftest import ROOT
from .test_render_browser import ARGS, CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="headless Chromium is not installed at /usr/bin/chromium"),
]

spec = importlib.util.spec_from_file_location("kg_bench_load_browser", ROOT / "bench" / "load.py")
load = importlib.util.module_from_spec(spec)
assert spec.loader is not None
sys.modules[spec.name] = load
spec.loader.exec_module(load)


def test_the_home_page_form_runs_and_a_foreign_form_is_refused(mini_ttl: Path, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    proc, url = load.start_server(mini_ttl, workers=1)
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            page = browser.new_page()
            page.goto(url + "/")
            with page.expect_navigation():
                page.click("form[action='/sparql'] button")
            assert page.locator("table").count() == 1 and "reinforcement learning" in page.content().lower()
            # The same form, served from another origin (a file page), posting to the endpoint.
            foreign = tmp_path / "foreign.html"
            foreign.write_text(f"<form action='{url}/sparql' method='post'><input name='query' value='ASK {{}}'>"
                               "<input name='format' value='json'><button>go</button></form>")
            page.goto(foreign.as_uri())
            with page.expect_navigation():
                page.click("button")
            assert "refused" in page.content() and "boolean" not in page.content()
            browser.close()
    finally:
        load.stop_server(proc)
