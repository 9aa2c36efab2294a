"""BibTeX and BibLaTeX (Zotero, JabRef, Mendeley exports), parsed by bibtexparser: LaTeX accents and braces decoded
(pylatexenc), names as "First Last", `booktitle`/`journal` as the venue, `doi`, `eprint` with `archivePrefix = {arXiv}`."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Iterator

from kg.core.errors import InputError
from kg.extract.formats.fields import Notice, Paper, canonical, record, unread_notice

# bibtexparser logs each block it cannot parse; kg reports them itself, one line each.
logging.getLogger("bibtexparser").addHandler(logging.NullHandler())
logging.getLogger("bibtexparser").propagate = False


def _parse(text: str) -> Any:  # -> bibtexparser.Library
    import bibtexparser
    from bibtexparser import middlewares as m

    return bibtexparser.parse_string(text, append_middleware=[
        m.LatexDecodingMiddleware(keep_math_mode=False), m.SeparateCoAuthors(), m.SplitNameParts(), m.MergeNameParts("first"),
    ])


def _fields(entry: Any) -> tuple[dict[str, Any], frozenset[str], list[str]]:
    """An entry under kg's field names, those only guessed ("venue": arXiv), and the fields that look like kg's but are not read."""
    raw = {f.key.lower(): f.value for f in entry.fields}
    fields, unread = canonical({k: v for k, v in raw.items() if k not in ("journal", "series", "eprint", "date")})
    fields["id"] = entry.key
    fields["venue"] = raw.get("booktitle") or raw.get("journal") or raw.get("journaltitle") or raw.get("series") or fields.get("venue")
    fields["year"] = raw.get("year") or raw.get("date")
    eprint = raw.get("eprint")
    if isinstance(eprint, str) and (str(raw.get("archiveprefix", "")).lower() == "arxiv" or "arxiv" in str(raw.get("journal", "")).lower()):
        fields["arxiv"] = eprint
    elif "arxiv" not in fields and isinstance(raw.get("journal"), str) and raw["journal"].lower().startswith("arxiv"):
        fields["arxiv"] = raw["journal"]  # "arXiv preprint arXiv:2401.01234"
    weak: frozenset[str] = frozenset()
    if not fields.get("venue") and fields.get("arxiv"):
        fields["venue"], weak = "arXiv", frozenset({"venue"})  # a preprint: --venue names where it appeared
    return fields, weak, [n for n in unread if n not in ("journaltitle", "archiveprefix", "primaryclass")]


def read(path: Path, text: str) -> Iterator[Paper | InputError | Notice]:
    """The entries of a .bib file in file order; a block that does not parse is an error naming its line."""
    from bibtexparser.model import DuplicateBlockKeyBlock

    library = _parse(text)
    blocks = sorted([*library.entries, *library.failed_blocks], key=lambda b: b.start_line or 0)
    if not blocks:
        yield InputError(f"{path}: no BibTeX entries (an entry starts '@article{{key,' or '@inproceedings{{key,')")
        return
    unread: set[str] = set()
    for block in blocks:
        line = (block.start_line or 0) + 1
        if isinstance(block, DuplicateBlockKeyBlock):
            block = block.ignore_error_block  # read: kg.extract.ingest reports the duplicate id and keeps the first
        elif not hasattr(block, "fields"):
            error = getattr(block, "error", None)
            reason = (getattr(error, "abort_reason", None) or str(error or "")).strip().splitlines() or ["a malformed entry"]
            yield InputError(f"{path}:{line}: malformed BibTeX ({reason[-1].strip().rstrip('.')}); fix the entry or pass --skip-bad")
            continue
        fields, weak, skipped = _fields(block)
        unread.update(skipped)
        yield record(fields, f"{path}:{line} ({block.key})", weak)
    notice = unread_notice(str(path), unread)
    if notice is not None:
        yield notice


def embedded(text: str) -> dict[str, Any]:
    """Venue, year, DOI and arXiv id from one BibTeX entry held in a record's field (paper-list downloads); {} if none."""
    try:
        entries = _parse(text).entries
    except Exception:  # a broken snippet in an otherwise good record: the record is read without it
        return {}
    if not entries:
        return {}
    fields, _, _ = _fields(entries[0])
    return {k: v for k, v in fields.items() if k in ("venue", "year", "doi", "arxiv") and v}
