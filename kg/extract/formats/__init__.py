"""The input formats kg reads, one module each, chosen by the file's suffix (`READERS`).

A reader takes a file's path and its text and yields `Paper`s, `InputError`s for the records (or the file) it
cannot read, and `Notice`s for warnings about a file read all the same. kg.extract.ingest decodes the files,
calls the readers and applies what holds across files (duplicates, --venue and --year).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

from kg.core.errors import InputError
from kg.extract.formats import atom, bibtex, ris, seed, structured
from kg.extract.formats.fields import Notice, Paper

Reader = Callable[[Path, str], Iterator[Paper | InputError | Notice]]

READERS: dict[str, Reader] = {
    ".txt": seed.read,
    ".json": structured.read_json,  # kg's records, CSL-JSON (Zotero), OpenAlex works
    ".csljson": structured.read_json,
    ".jsonl": structured.read_jsonl,
    ".ndjson": structured.read_jsonl,
    ".csv": structured.read_csv,
    ".bib": bibtex.read,
    ".bibtex": bibtex.read,
    ".ris": ris.read,
    ".atom": atom.read,
    ".xml": atom.read,  # the arXiv API's answer, saved as .xml
}


def reader(path: Path) -> Reader | InputError:
    """The reader for a file's suffix, or the error that names the suffixes kg reads."""
    found = READERS.get(path.suffix.lower())
    if found is None:
        return InputError(f"{path}: unknown input format {path.suffix or '(no suffix)'!r} (known: {', '.join(sorted(READERS))})")
    return found


def parse(name: str, text: str, first_line: int = 1) -> Iterator[Paper | InputError | Notice]:
    """The records of one input's text (the format from the name's suffix).

    For JSONL, `text` may be a run of whole lines from the middle of the file that starts at
    line `first_line` (how a cluster build reads a partition); other formats must be whole files.
    """
    found = reader(Path(name))
    if isinstance(found, InputError):
        yield found
    elif found is structured.read_jsonl:
        yield from structured.read_jsonl(Path(name), text, first_line)
    elif first_line != 1:
        raise ValueError(f"only JSONL input can be read from line {first_line}")  # a bug in the caller
    else:
        yield from found(Path(name), text)
