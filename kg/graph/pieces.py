"""A Turtle or N-Triples file cut into pieces of whole statements, each of which parses alone to the triples it gives
within the whole file.

pyoxigraph's bulk loader parses bytes in Rust, with no Python object per triple, but holds all it sorts in memory and
takes no limit (1.5 GB for the 2.7M triples of 21k papers in one load): `kg.sparql.store` hands it a piece at a time.
A cut is made only where it provably falls between two statements of a valid file (an invalid one fails to load
either way), without lexing the piece:

* **N-Triples and N-Quads**: a statement is one line (no string, IRI or comment holds a raw newline): every newline
  ends one.
* **Turtle**: a piece ends with a line that ends in " ." and holds no "#". With no long string in the piece (no
  \"\"\" and no \'\'\' anywhere in it), strings and IRIs close on the line they open, so that full stop stands outside
  them, and outside a comment: a full stop standing alone ends a statement or a directive, and nothing else, at
  the top level. Each piece after the first is given the file's header (its leading @prefix and @base lines).

A piece must also hold no blank node label (`_:`: it names one node in a whole document, and pyoxigraph names the
labels anew in each load) and no directive (`@prefix`, `@base`, or PREFIX or BASE followed by what a directive has
next: it would have to reach the pieces after it); these are looked for in the raw bytes, literals included, so a
literal that holds one only costs speed. Where a piece is not proven, the last item is the Rest of the file, which
the caller parses as before. kg's own files, written by pyoxigraph's serializer (newlines escaped, no comments, blank
nodes or directives after the header), cut whole unless a literal holds one of those. TriG and the other formats are
not cut.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Iterator

# The Turtle a piece starts with: @prefix and @base lines (and blank lines) at the head of the file.
_HEADER = re.compile(rb"(?:[ \t]*(?:@prefix[ \t]+[A-Za-z0-9_.\-]*:[ \t]*<[^<>\"\n]*>[ \t]*\.|@base[ \t]+<[^<>\"\n]*>[ \t]*\.)?[ \t]*\n)*")
# What a piece may hold only inside a "..." literal: a long string's single quotes, a blank node label, a directive.
_SUSPECT = (b"'''", b"_:", b"@prefix", b"@base")
# PREFIX or BASE (any case) as a word of its own (no letter, digit, _, -, : or byte of a UTF-8 letter joined to it),
# followed by what a SPARQL-style directive has next: its IRI, or a prefix name and then the IRI (or a comment).
_KEYWORDS = (b"prefix", b"base")
_JOINS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-:" + bytes(range(0x80, 0x100)))
_DIRECTIVE_NEXT = re.compile(rb"\s*(?:[^\s<>\"]*:\s*)?[<#]")
# The tokens of one line that may hold anything: its "..." strings (escapes inside) and <...> IRIs.
_TOKENS = re.compile(rb'"[^"\\\n]*(?:\\.[^"\\\n]*)*"|<[^<>"\n]*>')
_TRIES = 64  # statement ends tried, from the block's end back, for one whose line holds no "#"
_END = b" .\n"


@dataclass(frozen=True)
class Piece:
    """Bytes that parse alone (the file's header, then whole statements) and the file's line number of the first
    statement line; `header_lines` lines of header stand before it."""

    data: bytes
    line: int
    header_lines: int

    def file_line(self, line: int) -> int:
        """The file's line number of a line number in `data` (a header line: the piece's first)."""
        return self.line + max(line - 1 - self.header_lines, 0)


@dataclass(frozen=True)
class Rest:
    """The part of the file from `offset` (at line `line`) on, which no proven cut divides: read it whole, after the
    header it needs."""

    path: Path
    offset: int
    line: int
    header: bytes

    def open(self) -> IO[bytes]:
        """The header, then the file from `offset` on, as one binary stream."""
        stream = self.path.open("rb")
        stream.seek(self.offset)
        return io.BufferedReader(_Joined(self.header, stream))

    def file_line(self, line: int) -> int:
        """The file's line number of a line number in what `open` reads."""
        return Piece(b"", self.line, self.header.count(b"\n")).file_line(line)


class _Joined(io.RawIOBase):
    """Some bytes, then a binary stream (closed with this one)."""

    def __init__(self, head: bytes, stream: io.BufferedReader) -> None:
        super().__init__()
        self.head, self.stream = head, stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.head:
            n = min(len(buffer), len(self.head))
            buffer[:n], self.head = self.head[:n], self.head[n:]
            return n
        return self.stream.readinto(buffer)

    def close(self) -> None:
        self.stream.close()
        super().close()


def pieces(path: Path, turtle: bool, size: int) -> Iterator[Piece | Rest]:
    """The file's statements in pieces of about `size` bytes: Turtle when `turtle`, else N-Triples or N-Quads. Where a
    piece cannot be proven (or no statement ends within 8 x `size` bytes), the last item is the Rest from there on."""
    with path.open("rb") as stream:
        held = stream.read(size)
        header = _HEADER.match(held).group() if turtle else b""  # type: ignore[union-attr]
        offset, line, held, ended = len(header), 1 + header.count(b"\n"), held[len(header):], False
        while held or not ended:
            if not ended and len(held) < size:
                more = stream.read(size - len(held))
                held, ended = held + more, not more
                if not held:
                    return
            end = len(held) if ended else _end(held, turtle)
            if end == 0 and not ended and len(held) < 8 * size:
                more = stream.read(size)
                held, ended = held + more, not more
                continue
            body = held[:end]
            if not body or not _proven(body):
                yield Rest(path, offset, line, header)
                return
            yield Piece(header + body, line, header.count(b"\n"))
            offset, line, held = offset + len(body), line + body.count(b"\n"), held[end:]


def _end(block: bytes, turtle: bool) -> int:
    """The length of the block's longest head that ends with a statement's end (0: none found)."""
    if not turtle:
        return block.rfind(b"\n") + 1
    at = len(block)
    for _ in range(_TRIES):
        at = block.rfind(_END, 0, at)
        if at < 0:
            return 0
        if block.find(b"#", block.rfind(b"\n", 0, at) + 1, at) < 0:  # no "#" on the line: its " ." is no comment's
            return at + len(_END)
    return 0


def _proven(body: bytes) -> bool:
    """Whether a piece parses alone to the triples it gives within the file (see the module's text)."""
    if b'"""' in body:  # pyoxigraph escapes every " in a literal: a long string is another writer's
        return False
    return all(_in_literal(body, at) for at in _suspects(body))


def _suspects(text: bytes) -> Iterator[int]:
    """Where the text holds a long string's single quotes, a blank node label or a directive."""
    for bad in _SUSPECT:
        yield from _finds(text, bad)
    lower = text.lower()
    for word in _KEYWORDS:
        yield from (at for at in _finds(lower, word) if _directive(lower, at, at + len(word)))


def _finds(text: bytes, word: bytes) -> Iterator[int]:
    at = text.find(word)
    while at >= 0:
        yield at
        at = text.find(word, at + len(word))


def _directive(lower: bytes, at: int, end: int) -> bool:
    """Whether the PREFIX or BASE at lower[at:end] stands as a directive's would."""
    return ((at == 0 or lower[at - 1] not in _JOINS) and (end == len(lower) or lower[end] not in _JOINS)
            and _DIRECTIVE_NEXT.match(lower, end) is not None)


def _in_literal(body: bytes, at: int) -> bool:
    """Whether the suspect at `at` lies inside a "..." literal: its line, lexed from the top level (where every line of
    a piece without long strings starts), holds no ', ", # or < outside its "..." strings and <...> IRIs (so this
    lexing is Turtle's) and no suspect there either."""
    start, end = body.rfind(b"\n", 0, at) + 1, body.find(b"\n", at)
    outside = _TOKENS.sub(b" ", body[start:end if end >= 0 else len(body)])
    return not any(c in outside for c in (b"'", b'"', b"#", b"<")) and next(_suspects(outside), None) is None
