"""docs/python-api.md as a doctest: each signature it gives is the function's own, and its code blocks run, in
order, against the sample graph (as graphs/icml2024.ttl) and small real inputs under the names the page uses."""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import json
import re
import shutil
from pathlib import Path

import pytest

import kg

from .conftest import FIXTURES

PAGE = Path(__file__).parent.parent / "docs" / "python-api.md"
SIGNATURE = re.compile(r"^- `kg\.(\w+)\((.*)\)(?: -> \w+)?`:", re.M)


def _arguments(text: str) -> list[str]:
    """The comma-separated parts of a signature as the page writes it (no part holds a comma of its own)."""
    return [part.strip() for part in text.split(",") if part.strip()]


@pytest.mark.parametrize("name, args", SIGNATURE.findall(PAGE.read_text(encoding="utf-8")), ids=lambda v: str(v)[:20])
def test_each_signature_on_the_page_is_the_functions_own(name: str, args: str) -> None:
    params = inspect.signature(getattr(kg, name)).parameters
    listed = []
    for part in _arguments(args):
        if part in ("*", "…"):
            continue
        if part.startswith("**"):
            assert params[part[2:]].kind is inspect.Parameter.VAR_KEYWORD, part
            listed.append(part[2:])
            continue
        key, eq, default = part.partition("=")
        assert key in params, f"kg.{name} has no parameter {key!r}"
        if eq:
            assert params[key].default == ast.literal_eval(default), f"kg.{name}: {key} defaults to {params[key].default!r}, not {default}"
        listed.append(key)
    if "…" not in args:
        assert listed == list(params), f"kg.{name}{inspect.signature(getattr(kg, name))}: the page lists {listed}"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


def test_the_code_blocks_run_against_the_sample_graph(sample_ttl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kg.core import progress

    (tmp_path / "graphs").mkdir()
    shutil.copy(sample_ttl, tmp_path / "graphs" / "icml2024.ttl")
    shutil.copy(FIXTURES / "tiny.jsonl", tmp_path / "papers.jsonl")
    shutil.copy(FIXTURES / "tiny.csv", tmp_path / "icml.csv")
    shutil.copy(FIXTURES / "tiny.json", tmp_path / "neurips.json")
    new = {"id": "p9", "title": "Reward models for RLHF", "abstract": "We train reward models for reinforcement learning "
           "from human feedback with large language models.", "venue": "ICML", "year": 2024}
    (tmp_path / "new.jsonl").write_text(json.dumps(new) + "\n", encoding="utf-8")
    (tmp_path / "broken.jsonl").write_text(json.dumps(new) + "\n{\"id\": \"p10\", \"abstract\": \n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    blocks = _blocks()
    assert len(blocks) >= 6
    namespace: dict = {}
    out = io.StringIO()
    try:
        for block in blocks:
            with contextlib.redirect_stdout(out):
                exec(compile(block, str(PAGE), "exec"), namespace)  # the page's own examples
    finally:
        progress.enable(False)
    assert (tmp_path / "graphs" / "mine.html").exists() and (tmp_path / "graphs" / "both.ttl").exists()
    said = out.getvalue()
    claimed = re.search(r"print\(exc\)\s+# (.*)", blocks[-1])
    assert claimed and claimed.group(1).strip() in said, said
