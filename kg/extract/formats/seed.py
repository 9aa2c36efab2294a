"""The seed text format: a first line naming the venue and year, then one abstract per blank-line-separated paragraph."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

from kg.core.errors import InputError
from kg.extract.formats.fields import MAX_ABSTRACT, Paper, content_id, fold, text

_HEADER = re.compile(r"^\s*(?P<venue>.*?)\s*(?P<year>(?:19|20)\d\d)\b")


def lines(text: str) -> list[str]:
    """Lines split on \\n only: U+2028, form feeds etc. may sit inside JSON strings and CSV fields."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def read(path: Path, text_: str) -> Iterator[Paper | InputError]:
    """The papers of a seed text file: a header naming venue and year, then blank-line-separated abstracts."""
    all_lines = lines(text_)
    first = next(i for i, line in enumerate(all_lines) if line.strip())  # the file is not blank
    header = _HEADER.match(all_lines[first])
    if header is None:
        yield InputError(f"{path}:{first + 1}: the first line must name the venue and year, e.g. 'ICML 2024'")
        return
    venue = fold(header["venue"]) or None
    year = int(header["year"])
    paragraph: list[str] = []
    start = 0  # the line of the paragraph being read; still 0 at the end: the file had none
    for number, line in enumerate([*all_lines[first + 1 :], ""], start=first + 2):
        if fold(line):
            if not paragraph:
                start = number
            paragraph.append(line)
            continue
        if paragraph:
            where = f"{path}:{start}"
            abstract = text(" ".join(paragraph), where, "abstract", MAX_ABSTRACT)
            if isinstance(abstract, InputError):
                yield abstract
            else:
                yield Paper(content_id(abstract), abstract, None, (), venue, year, where)
            paragraph = []
    if not start:
        yield InputError(f"{path}: holds no abstracts after its header line")
