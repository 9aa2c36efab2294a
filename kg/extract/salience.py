"""Where a paper mentions a concept and in what context, and how common the concept is in a reference corpus.

Each mention gets a weight from its place (opening sentences, a sentence that says what the paper
does) and its context (a contrast or an example list says the paper is not about it; an
enumeration says little about each item). These weights, and the corpus priors, are features of
the learned scorer (kg.extract.features, kg.extract.scorer), which decides what the paper is about.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

PASSING_EXAMPLE, PASSING_CONTRAST = 1, 2  # the kinds of a mention in passing: an example ("such as X"), a contrast ("unlike X")
PASSING_WEIGHT = 0.25  # a mention after "unlike", "such as", "e.g.", "applications to" …
FIRST_SENTENCE_BONUS = 1.0
SECOND_SENTENCE_BONUS = 0.5
FOCUS_BONUS = 1.0  # a sentence with "we propose / we study / this paper / in this work"
LIST_SIZE = 3  # distinct concepts coordinated by commas / "and" that make an enumeration
CROWDED_SIZE = 4  # distinct concepts in one sentence that make it a survey of the field
LIST_FACTOR = 0.5
PRIOR_PAPERS = 200  # a concept's rate in a build (smoothed_rate) counts as if the build had this many more papers…
PRIOR_RATE = 0.02  # …mentioning each concept at this rate (or at its rate in the reference corpus)
TOPICAL_PRIOR_PAPERS = 20  # keyphraseness is smoothed towards the average as if this many more papers had it
TOPICAL_MIN = 0.5  # "machine learning", named by 3% of the titles of abstracts that use it, counts half
TOPICAL_MAX = 1.0

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[\"'])")
_CLAUSE_END = re.compile(r"[;:()\[\]]|[.!?](?:\s|$)")
_LIST_END = re.compile(r"[;:)\]]|[.!?](?:\s|$)|, (?:we|our|which|while|where|whereas|but|and we|this|these|it|they)\b")


@dataclass(frozen=True)
class Context:
    """Where the sentences, the focus sentences and the passing (contrast or example) stretches of a text are."""

    sentence_starts: tuple[int, ...]
    focus: frozenset[int]  # indexes of sentences that say what the paper does
    passing: tuple[tuple[int, int, int], ...]  # (start, end, PASSING_EXAMPLE or PASSING_CONTRAST): "not what the paper is about"

    def sentence(self, offset: int) -> int:
        """The index of the sentence holding character `offset`."""
        return bisect_right(self.sentence_starts, offset) - 1

    def in_passing(self, start: int) -> bool:
        """True when a mention starting at `start` sits in a contrast or example stretch."""
        return self.passing_kind(start) != 0

    def passing_kind(self, start: int) -> int:
        """For a mention starting at `start`: PASSING_CONTRAST in a contrast stretch, else PASSING_EXAMPLE in an
        example stretch, else 0 (not in passing)."""
        return max((kind for a, b, kind in self.passing if a <= start < b), default=0)

    def weight(self, start: int) -> float:
        """The weight of one mention starting at `start`."""
        if self.in_passing(start):
            return PASSING_WEIGHT
        n = self.sentence(start)
        w = 1.0 + (FIRST_SENTENCE_BONUS if n == 0 else SECOND_SENTENCE_BONUS if n == 1 else 0.0)
        return w + (FOCUS_BONUS if n in self.focus else 0.0)

    def describe(self, mentions: list[tuple[str, int, int]], text: str) -> list[tuple[float, int, bool, int, bool]]:
        """(weight, sentence, in a focus sentence, in passing (`passing_kind`), listed) of each (concept, start, end) mention.

        An enumeration says little about each item. Outside the opening sentence, LIST_SIZE or more
        mentions coordinated only by commas, "and", "or" (and parenthesised acronyms: "Pretraining,
        Supervised Fine-Tuning (SFT), and RLHF") form an enumeration of phases, baselines or settings:
        they are `listed`, and their weights count LIST_FACTOR as much; so are the mentions of a
        sentence naming CROWDED_SIZE or more concepts, unless it says what the paper does ("we
        propose X, which consists of A, B and C": the parts of the contribution).
        """
        worded = self._in_word_lists(mentions, text)
        listed = _enumerated(mentions, text) | worded
        per_sentence: dict[int, set[str]] = {}
        for concept, start, _ in mentions:
            per_sentence.setdefault(self.sentence(start), set()).add(concept)
        out = []
        for i, (_, start, _) in enumerate(mentions):
            n = self.sentence(start)
            crowded = len(per_sentence[n]) >= CROWDED_SIZE and n not in self.focus
            is_listed = (n > 0 or i in worded) and (i in listed or crowded)
            w = self.weight(start)
            out.append((w * LIST_FACTOR if is_listed else w, n, n in self.focus, self.passing_kind(start), is_listed))
        return out

    def _in_word_lists(self, mentions: list[tuple[str, int, int]], text: str) -> set[int]:
        """Indexes of mentions that are items of a list of short phrases, outside the sentences that say what the
        paper does: "Remote work, education, telemedicine all rely on video calls" lists application areas, and
        the other items need not be concepts. In the opening sentence, which often names the paper's field in a
        list of concepts ("data pruning, coreset selection and dataset distillation"), only a list with a short
        item that names no concept counts."""
        out: set[int] = set()
        for i, (_, start, end) in enumerate(mentions):
            n = self.sentence(start)
            if n in self.focus:
                continue
            lo = self.sentence_starts[n]
            hi = self.sentence_starts[n + 1] if n + 1 < len(self.sentence_starts) else len(text)
            items = _list_items(text[lo:hi], start - lo, end - lo)
            plain = [(lo + a, lo + b) for a, b in items if _SHORT_ITEM.fullmatch(text[lo + a : lo + b])]
            if items and (n > 0 or any(not any(a <= s < b for _, s, _ in mentions) for a, b in plain)):
                out.add(i)
        return out


def _list_items(sentence: str, start: int, end: int) -> list[tuple[int, int]]:
    """The items (character ranges) of the list of LIST_SIZE or more comma-separated phrases that sentence[start:end]
    is an item of, else []. The inner items, and at least two in all, are short phrases; the first and the last may
    be the words beside the list's outer commas ("Remote work, education, telemedicine all rely on …")."""
    segments, short = _segments(sentence)
    mine = next((k for k, (a, b) in enumerate(segments) if a <= start and end <= b), None)
    for lo, hi in _short_runs(short):
        first, last = max(lo - 1, 0), min(hi + 1, len(segments) - 1)  # with the segments beside the run
        first, last = (first if sentence[slice(*segments[first])].strip() else lo), (last if sentence[slice(*segments[last])].strip() else hi)
        if mine is None or not first <= mine <= last or last - first + 1 < LIST_SIZE or sum(short[first : last + 1]) < 2:
            continue
        if mine < lo and sentence[end : segments[mine][1]].strip():
            continue  # not the last words before the list's first comma
        if mine > hi and re.sub(r"^\s*(?:and|or)\s+", "", sentence[segments[mine][0] : start]).strip():
            continue  # not the first words after its last comma
        return list(segments[first : last + 1])
    return []


@lru_cache(maxsize=64)
def _segments(sentence: str) -> tuple[tuple[tuple[int, int], ...], tuple[bool, ...]]:
    """The stretches of a sentence between its commas outside parentheses, and which of them are short phrases.

    A comma is inside parentheses when the next parenthesis after it closes one. One pass over the sentence's
    commas and parentheses from its end (linear however long the sentence is), once per sentence."""
    cuts, closing = [], False
    for m in reversed(list(_COMMA_OR_PARENTHESIS.finditer(sentence))):
        if m.group() == ",":
            if not closing:
                cuts.append(m.start())
        else:
            closing = m.group() == ")"
    bounds = [-1, *reversed(cuts), len(sentence)]
    segments = tuple((bounds[k] + 1, bounds[k + 1]) for k in range(len(bounds) - 1))
    return segments, tuple(_SHORT_ITEM.fullmatch(sentence[a:b]) is not None for a, b in segments)


def _short_runs(short: Sequence[bool]) -> list[tuple[int, int]]:
    """(first, last) index of each maximal run of True."""
    runs: list[tuple[int, int]] = []
    for k, flag in enumerate(short):
        if flag and runs and runs[-1][1] == k - 1:
            runs[-1] = (runs[-1][0], k)
        elif flag:
            runs.append((k, k))
    return runs


_COMMA_OR_PARENTHESIS = re.compile(r"[,()]")
# A short phrase: one to four words, the first not a pronoun or a word that opens a clause.
_SHORT_ITEM = re.compile(r"\s*(?:(?:and|or)\s+)?(?!(?:a|an|we|which|that|who|where|while|it|they|our|as|also|such|including|like|namely|especially|particularly|i\.e\.|e\.g\.|but|this|these|whereas|thus|hence|however)\b)"
                         r"[^\s,;:.]+(?:\s+[^\s,;:.]+){0,3}[.!?]?\s*", re.IGNORECASE)


def _enumerated(mentions: list[tuple[str, int, int]], text: str) -> set[int]:
    """Indexes of mentions (in text order) that are items of a coordinated list of LIST_SIZE or more."""
    out: set[int] = set()
    run = [0] if mentions else []
    for i in range(1, len(mentions) + 1):
        gap = text[mentions[i - 1][2] : mentions[i][1]] if i < len(mentions) else ""
        # "Supervised Fine-Tuning (SFT)": the acronym in parentheses is the same item.
        same = i < len(mentions) and mentions[i][0] == mentions[i - 1][0] and gap.strip() == "("
        joined = i < len(mentions) and (same or _LIST_GAP.fullmatch(gap) is not None)
        if joined:
            run.append(i)
            continue
        if len({mentions[j][0] for j in run}) >= LIST_SIZE:
            out.update(run)
        run = [i]
    return out


# What may stand between two items of a list: a comma or a conjunction, a short parenthesis, a few words.
_LIST_GAP = re.compile(r"\)?(?:\s*\([^()]{1,20}\))?(?:\s*,)?\s*(?:(?:and|or|as well as)\s+)?(?:the\s+)?")


def context(text: str, cues: list[tuple[str, int, int]]) -> Context:
    """Sentences and cue scopes of a text, from cue matches (label, start char, end char)."""
    starts = (0, *(m.end() for m in _SENTENCE_END.finditer(text)))
    ctx = Context(starts, frozenset(), ())
    focus: set[int] = set()
    passing: list[tuple[int, int, int]] = []
    for label, start, end in cues:
        if label in ("FOCUS", "PROPOSE"):
            focus.add(ctx.sentence(start))
        elif label in ("CONTRAST", "EXAMPLE"):
            # A contrast ends at the next comma ("unlike X, we …"); an example list runs to the clause end.
            pattern = _LIST_END if label == "EXAMPLE" else _CLAUSE_END_OR_COMMA
            skip = len(text[end:]) - len(re.sub(r"^[\s,]*", "", text[end:]))
            kind = PASSING_EXAMPLE if label == "EXAMPLE" else PASSING_CONTRAST
            passing.append((end, _stretch_end(text, end + skip, pattern), kind))
    return Context(starts, frozenset(focus), tuple(passing))


_CLAUSE_END_OR_COMMA = re.compile(_CLAUSE_END.pattern + r"|,")


def _stretch_end(text: str, start: int, pattern: re.Pattern[str]) -> int:
    """Where a cue's stretch from `start` ends: the first `pattern` match outside parentheses it opened.

    "such as PLSA (Hofmann, 1999), LDA (Blei et al., 2003) or SAM" is one list: the comma and the
    ")" inside a citation do not end it.
    """
    for stop in pattern.finditer(text, start):
        inside = text.count("(", start, stop.start()) - text.count(")", start, stop.start())
        if inside <= 0 or text[stop.start()] in ".!?;":
            return stop.start()
    return len(text)


def smoothed_rate(document_frequency: int, papers: int, prior_rate: float = PRIOR_RATE) -> float:
    """A concept's share of papers in a build, smoothed towards `prior_rate` as if PRIOR_PAPERS more papers had it."""
    return (document_frequency + PRIOR_PAPERS * prior_rate) / (papers + PRIOR_PAPERS)


@dataclass(frozen=True)
class Prior:
    """What a reference corpus says about one concept: how many abstracts use it, and how topical it is."""

    rate: float = PRIOR_RATE  # share of abstracts that mention it
    topicality: float = 1.0  # its keyphraseness relative to the average concept, in [TOPICAL_MIN, TOPICAL_MAX]


@lru_cache(maxsize=4)
def corpus_priors(path: Path) -> dict[str, Prior]:
    """Concept IRI → its Prior, from the table bench/corpus_rates.py writes (empty when the file is missing).

    Keyphraseness is the share of the abstracts mentioning a concept whose title names it too,
    smoothed towards the average over all concepts as if TOPICAL_PRIOR_PAPERS more papers had it.
    """
    rows: list[tuple[str, int, float, int]] = []
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line and not line.startswith("#"):
                cells = line.split("\t")
                rows.append((cells[0], int(cells[1]), float(cells[2]), int(cells[3])))
    mean = sum(r[3] for r in rows) / max(1, sum(r[1] for r in rows))
    priors = {}
    for iri, papers, rate, titled in rows:
        keyphraseness = (titled + TOPICAL_PRIOR_PAPERS * mean) / (papers + TOPICAL_PRIOR_PAPERS)
        priors[iri] = Prior(rate, min(TOPICAL_MAX, max(TOPICAL_MIN, keyphraseness / mean)))
    return priors
