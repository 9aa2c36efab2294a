"""JSON, JSONL and CSV records, under the field names downloads use; CSL-JSON items and OpenAlex works are recognised by their keys."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any, Iterator

from kg.core.errors import InputError
from kg.extract.formats import bibtex, csl, openalex
from kg.extract.formats.fields import Notice, Paper, canonical, fold, record, unread_notice
from kg.extract.formats.seed import lines


class _Unread:
    """The fields of a file's records that look like kg's but were not read, for one warning per file."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def notice(self, path: Path) -> Iterator[Notice]:
        found = unread_notice(str(path), self.names)
        if found is not None:
            yield found


def paper(item: Any, where: str, unread: _Unread | None = None) -> Paper | InputError:
    """One JSON object or CSV row as a Paper (a CSL-JSON item, an OpenAlex work, or a record under download field names)."""
    if not isinstance(item, dict):
        return InputError(f"{where}: expected an object with 'abstract', got {type(item).__name__}")
    if openalex.looks(item):
        fields, read = openalex.fields(item), openalex.READ
    elif csl.looks(item):
        fields, read = csl.fields(item), csl.READ
    else:
        fields, skipped = canonical(item)
        if unread is not None:
            unread.names.update(skipped)
        weak: set[str] = set()
        embedded = fields.pop("bibtex", None)
        if isinstance(embedded, str) and embedded.lstrip().startswith("@"):
            for name, value in bibtex.embedded(embedded).items():  # a paper-list download's `bibtex` field: venue, year, DOI
                if name not in fields:
                    fields[name] = value
                    weak.add(name)
        return record(fields, where, frozenset(weak))
    if unread is not None:
        unread.names.update(name for name in item if isinstance(name, str) and name not in read and name in _NAMED_BY_KG)
    return record(fields, where)


_NAMED_BY_KG = frozenset({"authors", "venue", "year", "abstract"})  # kg's own names, left unread by a dialect that reads others


def read_json(path: Path, text: str) -> Iterator[Paper | InputError | Notice]:
    """A list of records, or an object with them under `papers` (kg), `results` (OpenAlex's API) or `items`."""
    data = _load(text, str(path), line_of_error=True)
    if isinstance(data, InputError):
        yield data
        return
    if isinstance(data, dict):
        data = next((data[k] for k in ("papers", "results", "items") if isinstance(data.get(k), list)), data)
    if not isinstance(data, list):
        yield InputError(f"{path}:1: expected a JSON list of paper records (or {{\"papers\": [...]}})")
        return
    if not data:
        yield InputError(f"{path}: the JSON list holds no paper records")
        return
    unread = _Unread()
    for number, item in enumerate(data, start=1):
        yield paper(item, f"{path}: record {number}", unread)
    yield from unread.notice(path)


def read_jsonl(path: Path, text: str, first_line: int = 1) -> Iterator[Paper | InputError | Notice]:
    """One record per line (blank lines skipped); `first_line`: where `text` starts in the file (a cluster partition)."""
    unread = _Unread()
    for number, line in enumerate(lines(text), start=first_line):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        item = _load(line, where)
        yield item if isinstance(item, InputError) else paper(item, where, unread)
    yield from unread.notice(path)


def _load(text: str, where: str, line_of_error: bool = False) -> Any:
    """The JSON value of `text`, or the one-line InputError that says why it has none (placed at `where`, and at
    the error's line of the file when `line_of_error`)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        at = f"{where}:{exc.lineno}" if line_of_error else where
        return InputError(f"{at}: malformed JSON ({exc.msg}, column {exc.colno})")
    except RecursionError:
        return InputError(f"{where}: malformed JSON (nested too deeply)")
    except ValueError as exc:  # e.g. a number of more than 4,300 digits (Python's int conversion limit)
        return InputError(f"{where}: unreadable JSON ({exc})")


def read_csv(path: Path, text: str) -> Iterator[Paper | InputError | Notice]:
    """A header row naming the fields, then one record per row (quoted fields may span lines)."""
    # newline="" keeps line breaks inside quoted fields, and only \r and \n end rows.
    # Abstracts may be longer than the csv module's default field limit (131,072):
    # let the MAX_ABSTRACT check give the clear message instead.
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 26))
    rows = csv.reader(io.StringIO(text, newline=""), strict=True)
    line = 1  # the line where the next row starts
    try:
        header = [fold(name) for name in next(rows)]
        lowered = [name.lower() for name in header]
        if not canonical(dict.fromkeys(header, "x"))[0].get("abstract"):
            yield InputError(f"{path}:1: the CSV header has no 'abstract' column (found: {', '.join(lowered)})")
            return
        twice = sorted({name for name in lowered if name and lowered.count(name) > 1})
        if twice:
            yield InputError(f"{path}:1: the CSV header names the column {twice[0]!r} more than once; keep one")
            return
        line = rows.line_num + 1
        found = False
        unread = _Unread()
        for row in rows:
            where, line = f"{path}:{line}", rows.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            found = True
            if len(row) != len(header):
                yield InputError(f"{where}: {len(row)} fields where the header has {len(header)}")
                continue
            yield paper(dict(zip(header, row)), where, unread)
        if not found:
            yield InputError(f"{path}: the CSV has a header but no rows")
        yield from unread.notice(path)
    except csv.Error as exc:
        # The csv module cannot resynchronise after a broken quote: the rest of the file is lost.
        yield InputError(f"{path}:{line}: malformed CSV ({exc}); the rest of the file was not read")
