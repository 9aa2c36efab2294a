"""Stage 1: read paper lists (seed text, JSON, JSONL, CSV) into `Paper` records.

Every problem with an input becomes an InputError whose message starts with
`file:line` (or `file: record N` for JSON lists); readers yield them in place of
papers so that `skip_bad` can leave bad records (or whole bad files) out and report them.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from kg.core.errors import InputError

# C0/C1 control characters (tab and newline included), odd spaces and the two
# noncharacters U+FFFE/U+FFFF become plain spaces, then runs of white space fold
# into one: the stored abstract is the input "with at most whitespace folded",
# every offset points into it, and every stored string is one that XML 1.0
# (RDF/XML) can carry as well as Turtle, N-Triples and JSON-LD.
_SPACE = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u200b\ufeff\ufffe\uffff]+")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_HEADER = re.compile(r"^\s*(?P<venue>.*?)\s*(?P<year>(?:19|20)\d\d)\b")
# Limits, in characters after folding. A long abstract is ~2,000 characters and a
# whole paper ~60,000; 200,000 leaves room for anything abstract-like, and builds
# in under a second (measured: 0.9 s; a 1 MB text takes 2.5 s and 25k annotations).
MAX_ABSTRACT = 200_000
MAX_ID = 256  # ids end up in every IRI of the paper's annotations
MAX_FIELD = 2_000  # titles, author names, venues
_BOMS = {b"\xff\xfe": "UTF-16", b"\xfe\xff": "UTF-16"}


@dataclass(frozen=True)
class Paper:
    """One paper as read from an input file."""

    id: str
    abstract: str
    title: str | None = None
    authors: tuple[str, ...] = ()
    venue: str | None = None
    year: int | None = None
    where: str = ""  # "file:line" or "file: record N", for messages


@dataclass(frozen=True)
class Ingested:
    """The papers of all inputs, in input order, with what was skipped or merged."""

    papers: tuple[Paper, ...]
    problems: tuple[str, ...] = field(default=())


# The characters of _SPACE that str.split() does not already treat as white space.
_NOT_SPLIT = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u200b\ufeff\ufffe\uffff]")


def fold(text: str) -> str:
    """Fold white space and control characters into single spaces."""
    if _NOT_SPLIT.search(text) is None:
        return " ".join(text.split())  # the same result, twice as fast (str.split uses str.isspace, like \s)
    return _SPACE.sub(" ", text).strip()


def content_id(abstract: str) -> str:
    """A stable id for a paper that has none: a hash of its folded abstract."""
    return hashlib.sha256(fold(abstract).encode("utf-8")).hexdigest()[:16]


def read(paths: Iterable[str | Path], *, skip_bad: bool = False) -> Ingested:
    """Read every input into one list of papers; duplicate ids are kept once and reported.

    With `skip_bad`, bad records and unreadable files are left out and reported in
    `problems`; without it the first one raises InputError. No papers at all is an error.
    """
    papers: list[Paper] = []
    problems: list[str] = []
    seen: dict[str, Paper] = {}
    skipped = 0
    for path in paths:
        for item in _read_one(Path(path)):
            if isinstance(item, InputError):
                if not skip_bad:
                    raise item
                skipped += 1
                problems.append(f"skipped {item}")
                continue
            first = seen.get(item.id)
            if first is not None:
                what = "the same abstract as" if item.id == content_id(item.abstract) else f"duplicate id {item.id!r}, first at"
                problems.append(f"{item.where}: {what} {first.where}; kept the first")
                continue
            seen[item.id] = item
            papers.append(item)
    if not papers:
        raise InputError(
            f"no papers to build: all {skipped} records or files were bad, the first: {problems[0].removeprefix('skipped ')}"
            if skipped
            else "no papers to build: the inputs hold no records"
        )
    return Ingested(tuple(papers), tuple(problems))


def _read_one(path: Path) -> Iterator[Paper | InputError]:
    """The papers of one file; a problem with the whole file is yielded as one InputError."""
    if path.is_dir():
        yield InputError(f"{path}: is a directory; pass the files inside it (e.g. {path}/*.jsonl)")
        return
    reader = _READERS.get(path.suffix.lower())
    if reader is None:
        known = ", ".join(sorted(_READERS))
        yield InputError(f"{path}: unknown input format {path.suffix or '(no suffix)'!r} (known: {known})")
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
    yield from reader(path, text)


def _decode(path: Path, raw: bytes) -> str | InputError:
    """The file as text (UTF-8, with or without a byte-order mark), or where it is not UTF-8."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        looks = next((f" (it looks like {name})" for bom, name in _BOMS.items() if raw.startswith(bom)), "")
        return InputError(f"{path}:{line}: not UTF-8 text{looks} (byte 0x{raw[exc.start]:02x} at column {column}); re-save the file as UTF-8")


def _lines(text: str) -> list[str]:
    """Lines split on \\n only: U+2028, form feeds etc. may sit inside JSON strings and CSV fields."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def _read_seed_text(path: Path, text: str) -> Iterator[Paper | InputError]:
    """The seed format: a header naming venue and year, then blank-line-separated abstracts."""
    lines = _lines(text)
    first = next(i for i, line in enumerate(lines) if line.strip())  # the file is not blank
    header = _HEADER.match(lines[first])
    if header is None:
        yield InputError(f"{path}:{first + 1}: the first line must name the venue and year, e.g. 'ICML 2024'")
        return
    venue = fold(header["venue"]) or None
    year = int(header["year"])
    paragraph: list[str] = []
    start = 0
    for number, line in enumerate([*lines[first + 1 :], ""], start=first + 2):
        if fold(line):
            if not paragraph:
                start = number
            paragraph.append(line)
            continue
        if paragraph:
            where = f"{path}:{start}"
            abstract = _text(" ".join(paragraph), where, "abstract", MAX_ABSTRACT)
            if isinstance(abstract, InputError):
                yield abstract
            else:
                yield Paper(content_id(abstract), abstract, None, (), venue, year, where)
            paragraph = []


def _read_json(path: Path, text: str) -> Iterator[Paper | InputError]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        yield InputError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg}, column {exc.colno})")
        return
    except RecursionError:
        yield InputError(f"{path}: malformed JSON (nested too deeply)")
        return
    except ValueError as exc:  # e.g. a number of more than 4,300 digits (Python's int conversion limit)
        yield InputError(f"{path}: unreadable JSON ({exc})")
        return
    if isinstance(data, dict) and isinstance(data.get("papers"), list):
        data = data["papers"]
    if not isinstance(data, list):
        yield InputError(f"{path}:1: expected a JSON list of paper records (or {{\"papers\": [...]}})")
        return
    if not data:
        yield InputError(f"{path}: the JSON list holds no paper records")
        return
    for number, record in enumerate(data, start=1):
        yield _record(record, f"{path}: record {number}")


def parse(name: str, text: str, first_line: int = 1) -> Iterator[Paper | InputError]:
    """The records of one input's text, as `read` reads them (the format from the name's suffix).

    For JSONL, `text` may be a run of whole lines from the middle of the file that starts at
    line `first_line` (how a cluster build reads a partition); other formats must be whole files.
    """
    reader = _READERS.get(Path(name).suffix.lower())
    if reader is None:
        yield InputError(f"{name}: unknown input format {Path(name).suffix or '(no suffix)'!r} (known: {', '.join(sorted(_READERS))})")
    elif reader is _read_jsonl:
        yield from _read_jsonl(Path(name), text, first_line)
    elif first_line != 1:
        raise ValueError(f"only JSONL input can be read from line {first_line}")  # a bug in the caller
    else:
        yield from reader(Path(name), text)


def _read_jsonl(path: Path, text: str, first_line: int = 1) -> Iterator[Paper | InputError]:
    for number, line in enumerate(_lines(text), start=first_line):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield InputError(f"{where}: malformed JSON ({exc.msg}, column {exc.colno})")
            continue
        except RecursionError:
            yield InputError(f"{where}: malformed JSON (nested too deeply)")
            continue
        except ValueError as exc:  # e.g. a number of more than 4,300 digits (Python's int conversion limit)
            yield InputError(f"{where}: unreadable JSON ({exc})")
            continue
        yield _record(record, where)


def _read_csv(path: Path, text: str) -> Iterator[Paper | InputError]:
    # newline="" keeps line breaks inside quoted fields, and only \r and \n end rows.
    # Abstracts may be longer than the csv module's default field limit (131,072):
    # let the MAX_ABSTRACT check give the clear message instead.
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 26))
    rows = csv.reader(io.StringIO(text, newline=""), strict=True)
    line = 1  # the line where the next row starts
    try:
        header = [fold(name).lower() for name in next(rows)]
        if "abstract" not in header:
            yield InputError(f"{path}:1: the CSV header has no 'abstract' column (found: {', '.join(header)})")
            return
        twice = sorted({name for name in header if name and header.count(name) > 1})
        if twice:
            yield InputError(f"{path}:1: the CSV header names the column {twice[0]!r} more than once; keep one")
            return
        line = rows.line_num + 1
        found = False
        for row in rows:
            where, line = f"{path}:{line}", rows.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            found = True
            if len(row) != len(header):
                yield InputError(f"{where}: {len(row)} fields where the header has {len(header)}")
                continue
            yield _record(dict(zip(header, row)), where)
        if not found:
            yield InputError(f"{path}: the CSV has a header but no rows")
    except csv.Error as exc:
        # The csv module cannot resynchronise after a broken quote: the rest of the file is lost.
        yield InputError(f"{path}:{line}: malformed CSV ({exc}); the rest of the file was not read")


def _text(value: str, where: str, name: str, limit: int) -> str | InputError:
    """A folded text field, or why it cannot be stored."""
    bad = _SURROGATE.search(value)
    if bad:
        return InputError(f"{where}: the {name} holds an unpaired surrogate ({bad.group()!r}), which no RDF syntax can encode")
    text = fold(value)
    if len(text) > limit:
        return InputError(f"{where}: {name} of {len(text):,} characters is longer than the limit of {limit:,}; is it a full text?")
    return text


def _record(record: Any, where: str) -> Paper | InputError:
    """Turn one JSON object or CSV row into a Paper, or say what is wrong with it."""
    if not isinstance(record, dict):
        return InputError(f"{where}: expected an object with 'abstract', got {type(record).__name__}")
    abstract = record.get("abstract")
    abstract = fold(abstract) if isinstance(abstract, str) else ""
    if not abstract:
        return InputError(f"{where}: the record has no abstract")
    abstract = _text(abstract, where, "abstract", MAX_ABSTRACT)
    if isinstance(abstract, InputError):
        return abstract
    raw_id = record.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int, type(None))):
        return InputError(f"{where}: id {raw_id!r} must be a string or a whole number")
    paper_id = _text(str(raw_id), where, "id", MAX_ID) if raw_id is not None else ""
    if isinstance(paper_id, InputError):
        return paper_id
    fields: dict[str, str | None] = {}
    for name in ("title", "venue"):
        value = record.get(name)
        text = _text(str(value), where, name, MAX_FIELD) if isinstance(value, (str, int)) and not isinstance(value, bool) else None
        if isinstance(text, InputError):
            return text
        fields[name] = text or None
    year = _year(record.get("year"), where)
    if isinstance(year, InputError):
        return year
    authors = _authors(record.get("authors"), where)
    if isinstance(authors, InputError):
        return authors
    return Paper(paper_id or content_id(abstract), abstract, fields["title"], authors, fields["venue"], year, where)


def _year(value: Any, where: str) -> int | InputError | None:
    """A publication year between 1 and 9999 (xsd:gYear with four digits), or None."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        year = int(value.strip()) if isinstance(value, str) else int(value) if isinstance(value, int) and not isinstance(value, bool) else None
    except ValueError:
        year = None
    if year is None and isinstance(value, float) and value.is_integer():
        year = int(value)
    if year is None or not 1 <= year <= 9999:
        return InputError(f"{where}: year {value!r} is not a whole year between 1 and 9999")
    return year


def _authors(value: Any, where: str) -> tuple[str, ...] | InputError:
    """Author names from a list (of names or {"name": …} objects) or a ';'-separated string."""
    if isinstance(value, str):
        value = value.split(";")
    if not isinstance(value, list):
        return ()
    names = []
    for item in value:
        if isinstance(item, dict):
            item = item.get("name")
        if not isinstance(item, (str, int)) or isinstance(item, bool):
            continue
        name = _text(str(item), where, "author name", MAX_FIELD)
        if isinstance(name, InputError):
            return name
        if name:
            names.append(name)
    return tuple(names)


_READERS: dict[str, Callable[[Path, str], Iterator[Paper | InputError]]] = {
    ".txt": _read_seed_text,
    ".json": _read_json,
    ".jsonl": _read_jsonl,
    ".ndjson": _read_jsonl,
    ".csv": _read_csv,
}
