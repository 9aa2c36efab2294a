"""Stage 1: read paper lists (seed text, JSON, JSONL, CSV, BibTeX, RIS, CSL-JSON, OpenAlex, arXiv Atom) into `Paper` records.

Every problem with an input becomes an InputError whose message starts with `file:line` (or `file: record N` for
JSON lists); readers (kg.extract.formats, one module per format) yield them in place of papers so that
`skip_bad` can leave bad records (or whole bad files) out and report them. What holds across files is done
here: the same id twice, the same paper under two ids (kg.extract.dedup), and --venue/--year for records without.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Iterator

from kg.core.defaults import MAX_ABSTRACT as MAX_ABSTRACT
from kg.core.defaults import MAX_FIELD as MAX_FIELD
from kg.core.defaults import MAX_ID as MAX_ID
from kg.core.errors import InputError
from kg.extract import dedup
from kg.extract.formats import parse as parse_any
from kg.extract.formats import reader
from kg.extract.formats.fields import Notice
from kg.extract.formats.fields import Paper as Paper
from kg.extract.formats.fields import content_id as content_id
from kg.extract.formats.fields import fold as fold

_BOMS = {b"\xff\xfe": "UTF-16", b"\xfe\xff": "UTF-16"}


@dataclass(frozen=True)
class Ingested:
    """The papers of all inputs, in input order, with what was skipped or merged, and advice (fields not read, no venue)."""

    papers: tuple[Paper, ...]
    problems: tuple[str, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())


def read(
    paths: Iterable[str | Path], *, skip_bad: bool = False, venue: str | None = None, year: int | None = None, keep_duplicates: bool = False,
) -> Ingested:
    """Read every input into one list of papers; duplicate ids are kept once and reported.

    With `skip_bad`, bad records and unreadable files are left out and reported in `problems`; without it the first
    one raises InputError. No papers at all is an error. `venue` and `year` are given to papers without one (or with
    one only guessed, such as arXiv's); records of one paper under other ids are kept once unless `keep_duplicates`.
    """
    papers: list[Paper] = []
    problems: list[str] = []
    notes: list[str] = []
    seen: dict[str, Paper] = {}
    skipped = 0
    for path in paths:
        lacking = 0
        for item in _read_one(Path(path)):
            if isinstance(item, Notice):
                notes.append(item.text)
                continue
            if isinstance(item, InputError):
                if not skip_bad:
                    raise item
                skipped += 1
                problems.append(f"skipped {item}")
                continue
            item = given(item, venue, year)
            lacking += item.venue is None or item.year is None
            first = seen.get(item.id)
            if first is not None:
                problems.append(repeated(item.where, item.id, item.id == content_id(item.abstract), first.where))
                continue
            seen[item.id] = item
            papers.append(item)
        if lacking:
            notes.append(f"{path}: {lacking:,} paper{' has' if lacking == 1 else 's have'} no venue or no year; pass --venue NAME --year YYYY to give them one")
    if not papers:
        raise InputError(
            f"no papers to build: all {skipped} records or files were bad, the first: {problems[0].removeprefix('skipped ')}"
            if skipped
            else "no papers to build: the inputs hold no records"
        )
    if not keep_duplicates:
        merged = dedup.merge(papers)
        papers = list(merged.papers)
        problems.extend(dedup.summarised(list(merged.problems), "copies kept once"))
    return Ingested(tuple(papers), tuple(problems), tuple(notes))


def repeated(where: str, pid: str, derived: bool, first: str) -> str:
    """The problem line of the record at `where` whose id `pid` (`derived`: a hash of its abstract) the record at `first`
    has: the first is kept (here and in the cluster build's first pass)."""
    what = "the same abstract as" if derived else f"duplicate id {pid!r}, first at"
    return f"{where}: {what} {first}; kept the first"


def given(paper: Paper, venue: str | None, year: int | None) -> Paper:
    """The paper with --venue and --year where it has none (or only one the format guessed)."""
    new_venue = venue if venue is not None and (paper.venue is None or "venue" in paper.weak) else paper.venue
    new_year = year if year is not None and (paper.year is None or "year" in paper.weak) else paper.year
    if new_venue == paper.venue and new_year == paper.year:
        return paper
    return replace(paper, venue=new_venue, year=new_year)


def _read_one(path: Path) -> Iterator[Paper | InputError | Notice]:
    """The papers of one file; a problem with the whole file is yielded as one InputError."""
    if path.is_dir():
        yield InputError(f"{path}: is a directory; pass the files inside it (e.g. {path}/*.jsonl)")
        return
    read_format = reader(path)
    if isinstance(read_format, InputError):
        yield read_format
        return
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        yield InputError(f"{path}: no such file")
        return
    except OSError as exc:
        yield InputError(f"{path}: cannot read ({exc.strerror})")
        return
    if not raw.strip():
        yield InputError(f"{path}: the file is empty")
        return
    text = _decode(path, raw)
    if isinstance(text, InputError):
        yield text
        return
    yield from read_format(path, text)


def _decode(path: Path, raw: bytes) -> str | InputError:
    """The file as text (UTF-8, with or without a byte-order mark), or where it is not UTF-8."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        looks = next((f" (it looks like {name})" for bom, name in _BOMS.items() if raw.startswith(bom)), "")
        return InputError(f"{path}:{line}: not UTF-8 text{looks} (byte 0x{raw[exc.start]:02x} at column {column}); re-save the file as UTF-8")


def parse(name: str, text: str, first_line: int = 1) -> Iterator[Paper | InputError]:
    """The records of one input's text, as `read` reads them (the format from the name's suffix; warnings left out).

    For JSONL, `text` may be a run of whole lines from the middle of the file that starts at
    line `first_line` (how a cluster build reads a partition); other formats must be whole files.
    """
    for item in parse_any(name, text, first_line):
        if not isinstance(item, Notice):
            yield item
