"""RIS (EndNote, Zotero, Mendeley, Web of Science, Scopus exports), parsed by rispy: `TI`, `AB`, `AU` ("Last, First"),
`PY`, `T2`/`JO`/`BT` as the venue, `DO`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

from kg.core.errors import InputError
from kg.extract.formats.fields import Notice, Paper, record
from kg.extract.formats.seed import lines

_TAG = re.compile(r"^([A-Z][A-Z0-9])  - ?(.*)$")


def _starts(text: str) -> list[int]:
    """The line number of each record's `TY  -` line, in order."""
    return [n for n, line in enumerate(lines(text), start=1) if line.lstrip("\ufeff").startswith("TY  -")]


def read(path: Path, text: str) -> Iterator[Paper | InputError | Notice]:
    """The references of a .ris file in order; a file rispy cannot read is one error naming the file."""
    import rispy

    starts = _starts(text)
    bad = next(((n, line) for n, line in enumerate(lines(text), start=1) if line.strip() and not _TAG.match(line.lstrip("\ufeff"))
                and not line.startswith((" ", "\t"))), None)
    if not starts:
        yield InputError(f"{path}:1: no RIS references (a reference starts with a 'TY  - ' line and ends with 'ER  - ')")
        return
    try:
        entries = rispy.loads(text, skip_unknown_tags=True)
    except Exception as exc:  # rispy raises IOError and ValueError on a file it cannot read
        where = f"{path}:{bad[0]}" if bad else str(path)
        yield InputError(f"{where}: malformed RIS ({exc}); each line must be 'XX  - value', each reference end with 'ER  - '")
        return
    if len(entries) != len(starts):
        yield InputError(f"{path}: malformed RIS ({len(starts)} 'TY  - ' lines but {len(entries)} references end with 'ER  - ')")
        return
    for entry, line in zip(entries, starts):
        fields = _fields(entry)
        yield record(fields, f"{path}:{line}" + (f" ({fields['id']})" if fields.get("id") else ""))


def _fields(entry: dict[str, Any]) -> dict[str, Any]:
    def first(*keys: str) -> Any:
        return next((entry[k] for k in keys if entry.get(k)), None)

    urls = entry.get("urls") or []
    return {
        "id": entry.get("id"),
        "title": first("title", "primary_title", "translated_title"),
        "abstract": first("abstract", "notes_abstract"),
        "authors": first("authors", "first_authors") or [],
        "venue": first("secondary_title", "journal_name", "alternate_title3", "alternate_title1", "alternate_title2", "tertiary_title"),
        "year": first("year", "publication_year", "date"),
        "doi": entry.get("doi"),
        "arxiv": next((u for u in urls if "arxiv.org/" in u), None),
        "url": next((u for u in urls if "doi.org/" in u), None),
    }
