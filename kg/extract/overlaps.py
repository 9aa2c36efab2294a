"""Label matches in a doc as (concept, start, end) spans: which to keep where they overlap, repeat or sit in an idiom."""

from __future__ import annotations

from kg.extract.cleanup import clean
from kg.extract.ingest import Paper


def outside_idioms(spans: list[tuple[str, int, int, bool]], doc, cues: list[tuple[str, int, int]]) -> list[tuple[str, int, int, bool]]:
    """The label matches less those inside an idiom of kg/extract/patterns/cues.jsonl ("by a large margin", "boosting
    the performance"), where the label's words are everyday words, not the concept."""
    idioms = [(doc[s].idx, doc[e - 1].idx + len(doc[e - 1])) for label, s, e in cues if label == "IDIOM"]
    if not idioms:
        return spans
    return [m for m in spans if not any(a < m[2] and m[1] < b for a, b in idioms)]


def title_spans(paper: Paper, kept: list[tuple[str, int, int]]) -> tuple[tuple[str, int, int], ...]:
    """The title matches as (concept, start, end) in the stored title: the evidence of a title-only link."""
    if not kept:
        return ()
    cleaned = clean(paper.title or "")  # the same clean-up the title doc was made from; maps offsets back
    return tuple((c, *cleaned.original(a, b)) for c, a, b in kept)


def in_compound_name(doc, start: int, end: int) -> bool:
    """True for an acronym that is only part of a hyphenated name: the MT of 'CMAB-MT', the SF of 'SF-DQN'.

    'LLM-based' and 'RL-driven' still count: the other part is a lower-case word.
    """
    before = start >= 2 and doc[start - 1].text == "-" and not doc[start - 2].whitespace_ and not doc[start - 1].whitespace_
    after = end + 1 < len(doc) and doc[end].text == "-" and not doc[end - 1].whitespace_ and not doc[end].whitespace_
    return (before and has_capital(doc[start - 2].text)) or (after and has_capital(doc[end + 1].text))


def sentence_start(doc, i: int) -> bool:
    return i == 0 or doc[i - 1].text in (".", "!", "?", ":", ";", "(", '"')


def has_capital(word: str) -> bool:
    return any(c.isupper() for c in word)


def base(text: str) -> str:
    return text[:-1] if text.endswith("s") and text[:-1].isupper() else text


def same_item_once(kept: list[tuple[str, int, int]], text: str) -> list[tuple[str, int, int]]:
    """Drop the short form of a definition: "federated learning (FL)" is one mention, not two."""
    out: list[tuple[str, int, int]] = []
    for span in kept:
        prev = out[-1] if out else None
        if prev is not None and prev[0] == span[0] and text[prev[2] : span[1]].strip() == "(" and text[span[2] : span[2] + 1] == ")":
            continue
        out.append(span)
    return out


def longest_first(spans: list[tuple[str, int, int, bool]]) -> list[tuple[str, int, int]]:
    """Non-overlapping spans, longer ones winning, then earlier ones, then exact-case ones; in text order."""
    taken: list[tuple[int, int]] = []
    kept: list[tuple[str, int, int]] = []
    for concept, a, b, _exact in sorted(set(spans), key=lambda s: (s[1] - s[2], s[1], not s[3], s[0])):
        if all(b <= x or a >= y for x, y in taken):
            taken.append((a, b))
            kept.append((concept, a, b))
    return sorted(kept, key=lambda s: (s[1], s[0]))
