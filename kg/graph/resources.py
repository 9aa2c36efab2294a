"""Where the shipped data files live: inside the wheel, or at the repository root."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent
# Data folders that live beside the code that reads them; the rest are at the package's top.
_HOMES = {"models": "extract", "patterns": "extract", "sample": "extract", "templates": "views"}


def data_path(name: str) -> Path:
    """Return the folder `name` (ontology, queries, sample) of the installed package.

    A wheel carries `ontology/` and `queries/` inside `kg/`; a source checkout
    (editable install, tests) keeps them at the repository root.
    """
    if name in _HOMES:
        return _PACKAGE / _HOMES[name] / name
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"kg data folder {name!r} is missing from the installation")


def internal_query(name: str) -> str:
    """The text of an internal query, `queries/_NAME.rq` (a lookup kg runs itself, not listed to users)."""
    return (data_path("queries") / f"_{name}.rq").read_text(encoding="utf-8")
