"""CSL-JSON items (Zotero's "CSL JSON" export, citeproc): `container-title`, `issued.date-parts`, `DOI`, authors as {given, family}."""

from __future__ import annotations

from typing import Any, Mapping

# Keys only CSL items have; one of them (with a CSL `type`) marks a record as CSL-JSON.
_MARKS = ("container-title", "issued", "event-title", "collection-title", "citation-key")


def looks(record: Mapping[str, Any]) -> bool:
    """True for a CSL-JSON item."""
    authors = record.get("author")
    named = isinstance(authors, list) and any(isinstance(a, dict) and ("family" in a or "literal" in a) for a in authors)
    return isinstance(record.get("type"), str) and (named or any(k in record for k in _MARKS))


def fields(record: Mapping[str, Any]) -> dict[str, Any]:
    """The item under kg's field names (kg.extract.formats.fields.record reads them)."""
    out: dict[str, Any] = {
        "id": record.get("citation-key") or record.get("id"),
        "title": record.get("title"),
        "abstract": record.get("abstract"),
        "authors": record.get("author") or record.get("editor") or [],
        "venue": record.get("container-title") or record.get("event-title") or record.get("collection-title"),
        "year": record.get("issued"),
        "doi": record.get("DOI") or record.get("doi"),
        "url": record.get("URL"),
    }
    number = record.get("number")
    if isinstance(number, str) and number.lower().startswith("arxiv:"):
        out["arxiv"] = number
    if isinstance(out["venue"], list):
        out["venue"] = out["venue"][0] if out["venue"] else None
    return out


READ = frozenset({"citation-key", "id", "title", "abstract", "author", "editor", "container-title", "event-title", "collection-title",
                  "issued", "DOI", "doi", "URL", "number"})
