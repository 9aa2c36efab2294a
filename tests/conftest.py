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


@pytest.fixture(scope="session")
def two_topics_ttl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two-topics corpus (tests/fixtures/two-topics/README.md), built with its own scheme only."""
    import kg

    folder = FIXTURES / "two-topics"
    # threshold 0: every matched concept is a subject, so the expectations do not hang on salience scoring.
    built = kg.build([folder / "papers.jsonl"], schemes=[folder / "scheme.ttl"], default_scheme=False, threshold=0.0)
    return kg.write(built, tmp_path_factory.mktemp("two-topics") / "two-topics.ttl")


@pytest.fixture(scope="session")
def sample_analyzed_ttl(sample_ttl: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample plus `kg analyze` results, so every named query has rows to return."""
    import kg

    out = tmp_path_factory.mktemp("sample-analyzed") / "icml2024.ttl"
    kg.analyze(sample_ttl, out)
    return out
