"""The arXiv API's Atom feed (export.arxiv.org/api/query): entries with `summary`, `author/name`, `published`, `arxiv:doi`."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Iterator

from kg.core.errors import InputError
from kg.extract.formats.fields import Notice, Paper, arxiv_of, record

_A = "{http://www.w3.org/2005/Atom}"
_X = "{http://arxiv.org/schemas/atom}"


def read(path: Path, text: str) -> Iterator[Paper | InputError | Notice]:
    """The entries of an Atom feed, in order; a feed that is not well-formed XML is one error naming its line."""
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        yield InputError(f"{path}: an Atom feed with a DOCTYPE or entities is not read (the arXiv API sends none)")
        return
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        line, column = exc.position
        yield InputError(f"{path}:{line}: malformed XML ({str(exc).split(':')[0]}, column {column + 1})")
        return
    if root.tag != f"{_A}feed":
        yield InputError(f"{path}:1: not an Atom feed (the root element is <{root.tag.rsplit('}', 1)[-1]}>, not <feed>)")
        return
    entries = root.findall(f"{_A}entry")
    if not entries:
        yield InputError(f"{path}: the feed holds no entries")
        return
    for number, entry in enumerate(entries, start=1):
        arxiv_id = entry.findtext(f"{_A}id") or ""
        venue = (entry.findtext(f"{_X}journal_ref") or "").strip()
        fields = {
            "id": arxiv_of(arxiv_id) or arxiv_id.rsplit("/abs/", 1)[-1] or None,
            "title": entry.findtext(f"{_A}title"),
            "abstract": entry.findtext(f"{_A}summary"),
            "authors": [a.findtext(f"{_A}name") or "" for a in entry.findall(f"{_A}author")],
            "venue": venue or "arXiv",
            "year": entry.findtext(f"{_A}published"),
            "doi": entry.findtext(f"{_X}doi"),
            "arxiv": arxiv_id,
        }
        yield record(fields, f"{path}: entry {number}", weak=frozenset({"venue"}) if not venue else frozenset())
