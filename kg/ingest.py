"""Stage 1: read paper lists (seed text, JSON, JSONL, CSV) into `Paper` records."""

from __future__ import annotations

import csv
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from .errors import InputError

# C0/C1 control characters (tab and newline included) and odd spaces become plain
# spaces, then runs of white space fold into one: the stored abstract is the
# input "with at most whitespace folded", and every offset points into it.
_SPACE = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u200b\ufeff]+")
_HEADER = re.compile(r"^\s*(?P<venue>.*?)\s*(?P<year>(?:19|20)\d\d)\b")
MAX_ABSTRACT = 200_000  # characters; longer texts are not abstracts


@dataclass(frozen=True)
class Paper:
    """One paper as read from an input file."""

    id: str
    abstract: str
    title: str | None = None
    authors: tuple[str, ...] = ()
    venue: str | None = None
    year: int | None = None
    where: str = ""  # "file:line" or "file:record N", for messages


@dataclass(frozen=True)
class Ingested:
    """The papers of all inputs, in input order, with what was skipped or merged."""

    papers: tuple[Paper, ...]
    problems: tuple[str, ...] = field(default=())


# The characters of _SPACE that str.split() does not already treat as white space.
_NOT_SPLIT = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u200b\ufeff]")


def fold(text: str) -> str:
    """Fold white space and control characters into single spaces."""
    if _NOT_SPLIT.search(text) is None:
        return " ".join(text.split())  # the same result, twice as fast (str.split uses str.isspace, like \s)
    return _SPACE.sub(" ", text).strip()


def content_id(abstract: str) -> str:
    """A stable id for a paper that has none: a hash of its folded abstract."""
    return hashlib.sha256(fold(abstract).encode("utf-8")).hexdigest()[:16]


def read(paths: Iterable[str | Path], *, skip_bad: bool = False) -> Ingested:
    """Read every input into one list of papers; duplicate ids are kept once."""
    papers: list[Paper] = []
    problems: list[str] = []
    seen: dict[str, str] = {}
    for path in paths:
        for item in _read_one(Path(path)):
            if isinstance(item, InputError):
                if not skip_bad:
                    raise item
                problems.append(f"skipped {item}")
                continue
            if item.id in seen:
                problems.append(f"{item.where}: duplicate id {item.id!r} (first at {seen[item.id]}); kept the first")
                continue
            seen[item.id] = item.where
            papers.append(item)
    return Ingested(tuple(papers), tuple(problems))


def _read_one(path: Path) -> Iterator[Paper | InputError]:
    reader = _READERS.get(path.suffix.lower())
    if reader is None:
        known = ", ".join(sorted(_READERS))
        raise InputError(f"{path}: unknown input format {path.suffix or '(no suffix)'!r} (known: {known})")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"{path}:{line}: not UTF-8 text (byte {exc.start}); re-save the file as UTF-8") from None
    if not text.strip():
        raise InputError(f"{path}: the file is empty")
    yield from reader(path, text)


def _read_seed_text(path: Path, text: str) -> Iterator[Paper | InputError]:
    """The seed format: a header naming venue and year, then blank-line-separated abstracts."""
    lines = text.splitlines()
    header = _HEADER.match(lines[0])
    if header is None:
        raise InputError(f"{path}:1: the first line must name the venue and year, e.g. 'ICML 2024'")
    venue = header["venue"].strip() or None
    year = int(header["year"])
    paragraph: list[str] = []
    start = 0
    for number, line in enumerate([*lines[1:], ""], start=2):
        if line.strip():
            if not paragraph:
                start = number
            paragraph.append(line)
            continue
        if paragraph:
            abstract = fold(" ".join(paragraph))
            where = f"{path}:{start}"
            if len(abstract) > MAX_ABSTRACT:
                yield InputError(f"{where}: abstract of {len(abstract):,} characters is longer than {MAX_ABSTRACT:,}")
            else:
                yield Paper(content_id(abstract), abstract, None, (), venue, year, where)
            paragraph = []


def _read_json(path: Path, text: str) -> Iterator[Paper | InputError]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg}, column {exc.colno})") from None
    if isinstance(data, dict) and isinstance(data.get("papers"), list):
        data = data["papers"]
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of paper records (or {{\"papers\": [...]}})")
    for number, record in enumerate(data, start=1):
        yield _record(record, f"{path}: record {number}")


def _read_jsonl(path: Path, text: str) -> Iterator[Paper | InputError]:
    # Split on newlines only: str.splitlines() also breaks at U+2028, U+0085 and other
    # separators that JSON allows raw inside strings (the ml-abstracts corpus has them).
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield InputError(f"{where}: malformed JSON ({exc.msg}, column {exc.colno})")
            continue
        yield _record(record, where)


def _read_csv(path: Path, text: str) -> Iterator[Paper | InputError]:
    rows = csv.reader(text.splitlines(), strict=True)
    try:
        header = [name.strip().lower() for name in next(rows)]
        if "abstract" not in header:
            raise InputError(f"{path}:1: the CSV header has no 'abstract' column (found: {', '.join(header)})")
        for row in rows:
            where = f"{path}:{rows.line_num}"
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                yield InputError(f"{where}: {len(row)} fields where the header has {len(header)}")
                continue
            yield _record(dict(zip(header, row)), where)
    except csv.Error as exc:
        raise InputError(f"{path}:{rows.line_num}: malformed CSV ({exc})") from None


def _record(record: Any, where: str) -> Paper | InputError:
    """Turn one JSON object or CSV row into a Paper, or say what is wrong with it."""
    if not isinstance(record, dict):
        return InputError(f"{where}: expected an object with 'abstract', got {type(record).__name__}")
    abstract = record.get("abstract")
    abstract = fold(abstract) if isinstance(abstract, str) else ""
    if not abstract:
        return InputError(f"{where}: the record has no abstract")
    if len(abstract) > MAX_ABSTRACT:
        return InputError(f"{where}: abstract of {len(abstract):,} characters is longer than {MAX_ABSTRACT:,}")
    raw_id = record.get("id")
    paper_id = fold(str(raw_id)) if raw_id not in (None, "") else content_id(abstract)
    title = record.get("title")
    title = (fold(title) or None) if isinstance(title, str) else None
    year = record.get("year")
    try:
        year = int(year) if year not in (None, "") else None
    except (TypeError, ValueError):
        return InputError(f"{where}: year {year!r} is not a number")
    venue = record.get("venue")
    venue = fold(str(venue)) if venue not in (None, "") else None
    return Paper(paper_id, abstract, title, _authors(record.get("authors")), venue, year, where)


def _authors(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split(";")
    if not isinstance(value, list):
        return ()
    return tuple(name for name in (fold(str(v)) for v in value) if name)


_READERS: dict[str, Callable[[Path, str], Iterator[Paper | InputError]]] = {
    ".txt": _read_seed_text,
    ".json": _read_json,
    ".jsonl": _read_jsonl,
    ".ndjson": _read_jsonl,
    ".csv": _read_csv,
}
