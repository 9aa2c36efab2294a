"""Acronym definitions in the Schwartz–Hearst style: 'reinforcement learning (RL)' defines RL."""

from __future__ import annotations

import re
from dataclasses import dataclass

# A parenthesised short form: one or two words, starting with a letter or digit, with a capital letter in it.
_PAREN = re.compile(r"\(\s*([A-Za-z0-9][A-Za-z0-9\-.&/+]{0,10}(?: [A-Za-z0-9\-]{1,6})?)\s*[);,]")
_CLAUSE_BREAK = re.compile(r"[.;:!?()\[\]]|, (?:and|or|which|where|while|whereas) ")


@dataclass(frozen=True)
class Definition:
    """'long form (SHORT)': where each part sits in the text."""

    short: str
    short_start: int
    long_start: int
    long_end: int


def definitions(text: str) -> list[Definition]:
    """Every acronym definition in `text` (Schwartz & Hearst 2003: characters of the short form in order)."""
    found: list[Definition] = []
    for m in _PAREN.finditer(text):
        short = m.group(1)
        letters = [c for c in short if c.isalpha()]
        if len(short) < 2 or not letters or not any(c.isupper() for c in short) or (" " in short and len(short) > 8):
            continue
        before = text[: m.start()].rstrip()
        window = _window(before, len(short))
        long_form = _best_long_form(short.rstrip("s") if short.endswith("s") and short[:-1].isupper() else short, window)
        if long_form is None:
            continue
        long_start = len(before) - len(long_form)
        if len(long_form.split()) < 2 and "-" not in long_form:
            continue  # one word is an abbreviation of a word, not of a concept name
        found.append(Definition(short, m.start(1), long_start, len(before)))
    return found


def _window(before: str, n: int) -> str:
    """The words before the parenthesis that may hold the long form: min(|SF| + 5, 2|SF|) words, one clause."""
    breaks = list(_CLAUSE_BREAK.finditer(before))
    start = breaks[-1].end() if breaks else 0
    words = before[start:].split(" ")
    keep = min(n + 5, 2 * n)
    return " ".join(words[-keep:]).strip()


def _best_long_form(short: str, long: str) -> str | None:
    """The shortest tail of `long` whose words hold the short form's letters in order, the first at a word start."""
    s, l = len(short) - 1, len(long) - 1
    while s >= 0:
        c = short[s].lower()
        if not c.isalnum():
            s -= 1
            continue
        while l >= 0 and (long[l].lower() != c or (s == 0 and l > 0 and long[l - 1].isalnum())):
            l -= 1
        if l < 0:
            return None
        l -= 1
        s -= 1
    start = long.rfind(" ", 0, l + 1) + 1
    return long[start:]


def uses(text: str, short: str) -> list[tuple[int, int]]:
    """Every place the short form (or its plural) is written, in exact case, as a word of its own."""
    base = short[:-1] if short.endswith("s") and short[:-1].isupper() else short
    return [m.span() for m in re.finditer(rf"(?<![\w-]){re.escape(base)}s?(?![\w])", text)]
