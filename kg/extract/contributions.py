"""Contributions: the named methods a paper proposes ("we propose QORA", "a method, namely RAUCA")."""

from __future__ import annotations

import re
from typing import AbstractSet, Iterable

WINDOW = 15  # tokens after "we propose" in which the name must appear
NAMING_WINDOW = 4  # tokens after "called" / "namely" ("called $k$-RPW" is three tokens)
PAREN_LEAD = 3  # "we propose <≤3 tokens> Long Form Name (LFN)": the acronym names the proposal
STOP = {".", ";", ":", "!", "?"}
# A name after one of these is what the method works on or builds upon ("an algorithm for PSI",
# "a modification of SMART", "to improve CS-MRI"), not the method itself.
OBJECT_WORDS = {"for", "to", "of", "with", "on", "in", "from", "by", "over", "that", "which", "where", "using", "via", "than"}
_NOT_NAMES = {"AI", "II", "III", "IV", "IID", "I.I.D.", "KL", "PhD", "GPU", "GPUs", "CPU", "API", "APIs", "URL", "USA", "UK", "EU"}
_FIRST_WORDS = 8


def is_name(text: str) -> bool:
    """A word that reads like a coined name: QORA, FedType, MoMo, MemoryLLM, RL-CFR (not 'Method' or 'RL')."""
    letters = [c for c in text if c.isalpha()]
    if len(letters) < 3 or text in _NOT_NAMES:
        return False
    upper = sum(c.isupper() for c in letters)
    return upper >= 2 and (upper >= 3 or not text.isupper())


def methods(
    doc, text: str, cues: Iterable[tuple[str, int, int]], definitions: dict[int, int], known: set[str], defined: AbstractSet[str] = frozenset()
) -> list[tuple[int, int]]:
    """Character spans (in `text`, the doc's text) of method names after PROPOSE / NAMING cues.

    `cues` are (label, first token, end token); `definitions` maps the character start of a
    defined short form to the start of its long form; `known` holds the scheme's labels and
    `defined` the paper's acronyms of scheme concepts: both name existing concepts, not a new method.
    """
    spans: list[tuple[int, int]] = []
    for label, _, end in cues:
        if label not in ("PROPOSE", "NAMING"):
            continue
        window = WINDOW if label == "PROPOSE" else NAMING_WINDOW
        for i in range(end, min(end + window, len(doc))):
            token = doc[i]
            if token.text in STOP or (label == "PROPOSE" and token.lower_ in OBJECT_WORDS):
                break
            if not is_name(token.text):
                continue
            start, stop = _compound(doc, i)
            name = text[start:stop]
            if any(n in known or n in defined for n in (name, name.rstrip("s"))):
                break  # the proposal is about a known concept, not a named method
            if start in definitions:
                lead_chars = (doc[end].idx, definitions[start])
                lead = len(doc.char_span(*lead_chars, alignment_mode="expand") or ()) if lead_chars[1] > lead_chars[0] else 0
                if lead > PAREN_LEAD:
                    break  # an acronym defined later in the sentence names a part, not the proposal
            elif doc[i - 1].text == "(":
                break
            spans.append((start, stop))
            break
    return spans


def _compound(doc, i: int) -> tuple[int, int]:
    """Grow a name over hyphens and digits written without spaces: 'RL-CFR', 'k-RPW', 'MoMo-Adam'."""
    first = last = i
    while first > 0 and not doc[first - 1].whitespace_ and re.fullmatch(r"[\w-]+", doc[first - 1].text) and (
        doc[first - 1].text == "-" or doc[first].text == "-"
    ):
        first -= 1
    while last + 1 < len(doc) and not doc[last].whitespace_ and re.fullmatch(r"[\w-]+", doc[last + 1].text) and (
        doc[last + 1].text == "-" or doc[last].text == "-"
    ):
        last += 1
    if doc[last].text == "-":
        last -= 1
    if doc[first].text == "-":
        first += 1
    return doc[first].idx, doc[last].idx + len(doc[last])


def first_words(text: str) -> str:
    """The opening words of a text, as a fallback label."""
    end = re.search(r"[.!?](\s|$)", text)
    words = text[: end.end() if end else len(text)].split()
    return " ".join(words[:_FIRST_WORDS]) + ("…" if len(words) > _FIRST_WORDS else "")
