"""Clean LaTeX, markup and odd Unicode out of an abstract while keeping a map back to its offsets.

Matching runs on the cleaned copy; every span found there is mapped back, so evidence
always indexes the stored abstract (abstract[start:end] is the quoted text).
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass
from typing import Callable

from kg.extract import lexicon

# Anything outside printable ASCII, a character that starts markup, or a hyphen before a space and a lower-case
# word sends a text down the slow path.
_NEEDS_CLEANING = re.compile(r"[^\x20-\x7e]|[$\\<&*{}~]|[A-Za-z]-\s+[a-z]")
_SUSPENDED = frozenset({"and", "or", "nor", "versus", "vs"})  # "train- and test-time": the hyphen waits for its word

_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
_CHAR_MAP = {
    **{d: "-" for d in _DASHES},
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"',
    "\u00a0": " ", "\u2009": " ", "\u202f": " ", "\u2002": " ", "\u2003": " ",
    "\u200b": "", "\u200c": "", "\u200d": "", "\u00ad": "", "\ufeff": "",
}
_INLINE_TAGS = {"i", "b", "em", "strong", "sub", "sup", "u", "tt", "code", "span", "a", "small"}


@dataclass(frozen=True)
class Cleaned:
    """A cleaned copy of a text; `starts[i]`/`ends[i]` give the original span of cleaned character i."""

    text: str
    starts: tuple[int, ...] | None = None  # None: the text needed no cleaning (identity map)
    ends: tuple[int, ...] | None = None

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that the cleaned span [start, end) came from."""
        if self.starts is None or self.ends is None:
            return start, end
        return self.starts[start], self.ends[end - 1]


def clean(text: str) -> Cleaned:
    """Rewrite math, LaTeX commands, HTML/Markdown markup and odd Unicode into plain text."""
    if not _NEEDS_CLEANING.search(text):
        return Cleaned(text)
    starts = list(range(len(text)))
    ends = list(range(1, len(text) + 1))
    for pattern, repl in _RULES:
        text, starts, ends = _sub(text, starts, ends, pattern, repl)
    return Cleaned(text, tuple(starts), tuple(ends))


def _sub(
    text: str, starts: list[int], ends: list[int], pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str]
) -> tuple[str, list[int], list[int]]:
    """re.sub that carries the offset maps along: new characters map to the whole matched span."""
    out: list[str] = []
    new_starts: list[int] = []
    new_ends: list[int] = []
    pos = 0
    for m in pattern.finditer(text):
        a, b = m.span()
        if a == b:
            continue
        out.append(text[pos:a])
        new_starts.extend(starts[pos:a])
        new_ends.extend(ends[pos:a])
        r = repl(m)
        if r == m.group(0):  # unchanged: keep the character-exact map
            new_starts.extend(starts[a:b])
            new_ends.extend(ends[a:b])
        else:
            new_starts.extend([starts[a]] * len(r))
            new_ends.extend([ends[b - 1]] * len(r))
        out.append(r)
        pos = b
    if pos == 0:
        return text, starts, ends
    out.append(text[pos:])
    new_starts.extend(starts[pos:])
    new_ends.extend(ends[pos:])
    return "".join(out), new_starts, new_ends


def _math(m: re.Match[str]) -> str:
    """Short math ($k$, $2$, $\\ell_1$) keeps its letters so '$k$-means' reads 'k-means'; longer math, and any
    with a bracket ($\\mathcal{O}(T)$ is no 'OT', optimal transport), is 'X'."""
    inner = re.sub(r"\\[a-zA-Z]+|[^A-Za-z0-9]", "", m.group(0))
    return inner if 0 < len(inner) <= 2 and "(" not in m.group(0) else "X"


def _tag(m: re.Match[str]) -> str:
    name = m.group(1).lower()
    return "" if name in _INLINE_TAGS else " "


def _char(m: re.Match[str]) -> str:
    c = m.group(0)
    if c in _CHAR_MAP:
        return _CHAR_MAP[c]
    if unicodedata.category(c).startswith(("C", "Z")):
        return " "
    folded = unicodedata.normalize("NFKC", c)
    return folded if folded.isprintable() else " "


def _line_break(m: re.Match[str]) -> str:
    """A hyphen that a line break left before a space: "classi- fication" is "classification" (the joined word is
    English or the text's own), "filtering- based" is "filtering-based", and "train- and test-" stays as it is."""
    before = re.search(r"[A-Za-z]+$", m.string[: m.start()])
    after = re.match(r"[a-z]+", m.string[m.end() :])
    if before is None or after is None or after.group(0) in _SUSPENDED:
        return m.group(0)
    joined = (before.group(0) + after.group(0)).lower()
    if joined in lexicon.words() or re.search(rf"\b{joined}\b", m.string, re.I):
        return ""
    return "-" if after.group(0) in lexicon.words() else ""


_RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"&(?:[a-zA-Z]{2,8}|#\d{1,6}|#x[0-9a-fA-F]{1,5});"), lambda m: html.unescape(m.group(0))),
    (re.compile(r"\$\$.{1,500}?\$\$|\$[^$]{1,300}?\$|\\\(.{1,300}?\\\)|\\\[.{1,500}?\\\]", re.S), _math),
    (re.compile(r"\\(?:cite[a-z]*|ref|eqref|label|url|footnote)\{[^{}]*\}|\\(?:hyperlink|href)\{[^{}]*\}(?=\{)"), lambda m: ""),
    (re.compile(r"\\[a-zA-Z]+\*?(?=[{\s])\s*|\\[a-zA-Z]+\*?"), lambda m: ""),
    (re.compile(r"\\([%&#_$])"), lambda m: m.group(1)),
    (re.compile(r"</?([a-zA-Z][a-zA-Z0-9]*)(?:\s[^<>]{0,200})?/?>"), _tag),
    (re.compile(r"[{}]|(?<=\S)\*{1,2}(?=[\s.,;:!?)]|$)|(?<![^\s(])\*{1,2}(?=\S)|(?<=\w)\*\*(?=\w)"), lambda m: ""),
    (re.compile(r"~"), lambda m: " "),
    (re.compile(r"[^\x00-\x7e]"), _char),
    (re.compile(r"\s{2,}"), lambda m: " "),
    (re.compile(r"(?<=[A-Za-z])-\s+(?=[a-z])"), _line_break),
)
