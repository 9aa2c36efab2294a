"""The input of a cluster build, cut into partitions a worker reads on its own.

A JSONL file is cut into byte ranges that start and end on line boundaries (fsspec's
`read_block`, what `dask.bag.read_text` uses), so a 100 GB file is read by many workers at once and
never by the client; any other format (CSV, whose quoted fields may span lines; JSON lists; seed
text) is one partition per file. Paths may be local or fsspec URLs (`s3://…`, `gs://…`, `https://…`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from kg.core.defaults import CLUSTER_BLOCKSIZE
from kg.core.errors import InputError
from kg.extract import ingest

SPLITTABLE = (".jsonl", ".ndjson")


@dataclass(frozen=True)
class Part:
    """One partition: `length` bytes of `url` from `offset` (None: the whole file), in input order."""

    url: str
    offset: int = 0
    length: int | None = None


@dataclass(frozen=True)
class Scanned:
    """What a first, cheap pass finds in a partition: its lines, and each good record's id and abstract hash."""

    lines: int
    ids: tuple[str, ...]
    wheres: tuple[str, ...]  # where each record is ("file:line", lines counted from the partition's first)
    derived: tuple[bool, ...]  # whether the id is a hash of the abstract (the record had none)
    digests: tuple[str, ...]  # empty when not asked for (a new build needs none)
    problems: tuple[str, ...]  # InputError messages, their line numbers counted from the partition's first


def plan(urls: list[str], blocksize: int = CLUSTER_BLOCKSIZE) -> list[Part]:
    """The partitions of the inputs, in order; InputError naming a missing input."""
    import fsspec

    parts: list[Part] = []
    for url in urls:
        try:
            fs, path = fsspec.core.url_to_fs(url)
            if fs.isdir(path):
                raise InputError(f"{url}: is a directory; pass the files inside it (e.g. {url}/*.jsonl)")
            size = fs.size(path)
        except FileNotFoundError:
            raise InputError(f"{url}: no such file") from None
        except (OSError, ValueError, ImportError) as exc:
            raise InputError(f"{url}: cannot read ({exc})") from None
        if url.lower().endswith(SPLITTABLE) and size > blocksize:
            parts.extend(Part(url, offset, min(blocksize, size - offset)) for offset in range(0, size, blocksize))
        else:
            parts.append(Part(url))
    return parts


def text(part: Part) -> str:
    """The partition's text, whole lines only; InputError when it is not UTF-8."""
    import fsspec
    from fsspec.utils import read_block

    with fsspec.open(part.url, "rb") as stream:
        raw = stream.read() if part.length is None else read_block(stream, part.offset, part.length, delimiter=b"\n")
    try:
        return raw.decode("utf-8-sig" if part.offset == 0 else "utf-8")
    except UnicodeDecodeError as exc:
        where = f"byte {part.offset + exc.start}"
        raise InputError(f"{part.url}: not UTF-8 text at {where}; re-save the file as UTF-8") from None


def records(part: Part, first_line: int = 1, body: str | None = None) -> Iterator[ingest.Paper | InputError]:
    """The partition's records as kg.extract.ingest reads them, lines numbered from `first_line`."""
    body = text(part) if body is None else body
    if part.length is None and not body.strip():
        yield InputError(f"{part.url}: the file is empty")
        return
    yield from ingest.parse(part.url, body, first_line)


def scan(part: Part, hashes: bool = True) -> Scanned:
    """The first pass over a partition (run on a worker): lines, ids, problems, and the abstracts' hashes if asked."""
    from kg.graph.facts import digest

    ids: list[str] = []
    wheres: list[str] = []
    derived: list[bool] = []
    digests: list[str] = []
    problems: list[str] = []
    try:
        body = text(part)
    except InputError as exc:
        return Scanned(0, (), (), (), (), (str(exc),))
    for item in records(part, 1, body):
        if isinstance(item, InputError):
            problems.append(str(item))
            continue
        ids.append(item.id)
        wheres.append(item.where)
        derived.append(item.id == ingest.content_id(item.abstract))
        if hashes:
            digests.append(digest(item.abstract))
    return Scanned(body.count("\n"), tuple(ids), tuple(wheres), tuple(derived), tuple(digests), tuple(problems))


def shifted(message: str, url: str, first_line: int) -> str:
    """A problem found in a partition read from line 1, its line number made the file's."""
    prefix = f"{url}:"
    if first_line == 1 or not message.startswith(prefix):
        return message
    rest = re.sub(r"^(\d+)", lambda m: str(int(m.group(1)) + first_line - 1), message[len(prefix):], count=1)
    return prefix + rest
