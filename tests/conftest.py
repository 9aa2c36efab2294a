"""Shared fixtures: small real inputs, the bundled scheme, built graphs."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).parent.parent


@pytest.fixture(autouse=True)
def _reproducible(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every build in the tests has the same build time."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")


@pytest.fixture(scope="session")
def sample_built():
    """The bundled ICML 2024 sample, built once per test session."""
    import kg

    return kg.build()


@pytest.fixture(scope="session")
def sample_ttl(sample_built, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample written as Turtle."""
    import kg

    return kg.write(sample_built, tmp_path_factory.mktemp("sample") / "icml2024.ttl")


@pytest.fixture(scope="session")
def mini_ttl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five papers on a six-concept scheme (offline RL and RLHF below RL), written as Turtle."""
    import os

    import kg

    os.environ.setdefault("SOURCE_DATE_EPOCH", "1700000000")
    built = kg.build([FIXTURES / "query" / "mini-papers.jsonl"], schemes=[FIXTURES / "query" / "mini-scheme.ttl"], default_scheme=False)
    return kg.write(built, tmp_path_factory.mktemp("mini") / "mini.ttl")
