"""OpenAlex works (the API's `results`, a snapshot's JSON lines): the abstract as an inverted index, `authorships`, `primary_location`."""

from __future__ import annotations

from typing import Any, Mapping


def looks(record: Mapping[str, Any]) -> bool:
    """True for an OpenAlex work."""
    work_id = record.get("id")
    return "abstract_inverted_index" in record or "authorships" in record or (isinstance(work_id, str) and work_id.startswith("https://openalex.org/W"))


def abstract(index: Any) -> str | None:
    """The text of an inverted-index abstract ({"word": [positions]}): each word at its positions, joined by spaces."""
    if not isinstance(index, dict):
        return None
    at: dict[int, str] = {}
    for word, positions in index.items():
        if isinstance(positions, list):
            for position in positions:
                if isinstance(position, int) and not isinstance(position, bool):
                    at[position] = word
    return " ".join(at[p] for p in sorted(at)) or None


def fields(record: Mapping[str, Any]) -> dict[str, Any]:
    """The work under kg's field names (kg.extract.formats.fields.record reads them)."""
    work_id = record.get("id")
    location = record.get("primary_location") or {}
    source = location.get("source") or {} if isinstance(location, dict) else {}
    venue = source.get("display_name") if isinstance(source, dict) else None
    if venue is None and isinstance(record.get("host_venue"), dict):  # the API before 2023
        venue = record["host_venue"].get("display_name")
    ids: dict = record["ids"] if isinstance(record.get("ids"), dict) else {}
    urls = [loc.get("landing_page_url") for loc in record.get("locations") or [] if isinstance(loc, dict)]
    arxiv = next((u for u in urls if isinstance(u, str) and "arxiv.org/" in u), None)
    return {
        "id": work_id.rsplit("/", 1)[-1] if isinstance(work_id, str) else work_id,
        "title": record.get("title") or record.get("display_name"),
        "abstract": abstract(record.get("abstract_inverted_index")) or record.get("abstract"),
        "authors": record.get("authorships") or [],
        "venue": venue,
        "year": record.get("publication_year"),
        "doi": record.get("doi") or ids.get("doi"),
        "arxiv": arxiv,
    }


READ = frozenset({"id", "title", "display_name", "abstract_inverted_index", "abstract", "authorships", "primary_location", "host_venue",
                  "publication_year", "doi", "ids", "locations"})
