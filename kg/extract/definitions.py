"""Concepts a paper describes without naming them, from the concepts' definitions.

Writers often describe a topic instead of naming it ("only state trajectories are available" for imitation from
observation, "a lower bound to the log marginal likelihood" for the evidence lower bound). Every concept of the
scheme has a skos:definition written by people; each concept's definition and labels are a query, and the paper's
title and abstract the document, scored by BM25 over content words (lower case, spaCy's lemma table, stop words
out) with document frequencies from a reference corpus of ML abstracts (`patterns/definition-df.tsv`, written by
bench/definition_df.py). A paper's best-scoring concept that the matcher did not find becomes one more candidate
(`described`), with the sentence whose words hold most of the concept's weight as its evidence; the scorer
decides, like every candidate, whether it is a subject. Decision 0062.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from kg.extract.lexicon import lemmas
from kg.extract.scheme import Scheme
from kg.graph.resources import data_path

if TYPE_CHECKING:
    import numpy as np

K1, B = 1.2, 0.75  # BM25's usual term saturation and length normalisation
SHORTLIST = 10  # best-scoring concepts the matcher did not find that are scored again for the described one
MIN_LENGTH = 3  # shorter words ("of", "rl", "x") carry no definition


@dataclass(frozen=True)
class Similarity:
    """A concept's BM25 against one paper, 1/its rank among every concept for that paper, and its z-score there."""

    bm25: float
    rank: float
    z: float


NONE = Similarity(0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Described:
    """What the definitions say of one paper: the similarity of each of its candidates, and the concept it
    describes best without the matcher finding it (None: none shares a word), with its evidence sentence
    (start, end in the cleaned text; None: only the title holds its words)."""

    similarity: dict[str, Similarity]
    concept: str | None = None
    sentence: tuple[int, int] | None = None
    place: int = -1  # the index of that sentence (-1: none)


def word_key(lower: str) -> str | None:
    """The form a lower-case word is compared by, None for words that say nothing (stop words, short, numbers)."""
    if len(lower) < MIN_LENGTH or not lower[0].isalpha():
        return None
    return _keys().get(lower, lower) or None


@lru_cache(maxsize=1)
def _keys() -> dict[str, str]:
    """Lower-case word → its compared form: spaCy's lemma, "" for a stop word (the table turns "second" into "2",
    which stays "second")."""
    from spacy.lang.en.stop_words import STOP_WORDS

    out = {w: lemma for w, lemma in lemmas().items() if lemma[:1].isalpha()}
    out.update(dict.fromkeys(STOP_WORDS, ""))
    return out


def keys(tokens: Iterable[str]) -> list[str]:
    """The compared forms of tokens' texts (spaCy tokens: hyphens are tokens of their own)."""
    out = []
    for t in tokens:
        k = word_key(t.lower())
        if k is not None:
            out.append(k)
    return out


@dataclass(frozen=True)
class Words:
    """The compared words of one text, in order: each one's term (its column in the index; -1: a word no definition
    holds, counted for the length only), its character offset, and, for the words inside a concept's mention, the
    word's position and that concept."""

    terms: tuple[int, ...] = ()
    offsets: tuple[int, ...] = ()
    held: tuple[tuple[int, str], ...] = ()


class DefinitionIndex:
    """Every concept's definition and labels as a BM25 query over a paper's words: a concept x term matrix of the
    terms' idf, so that one sparse product scores every concept for a paper."""

    def __init__(self, scheme: Scheme, nlp, df_path: Path | None = None) -> None:
        from scipy import sparse

        papers, mean_length, df = read_df(df_path or data_path("patterns") / "definition-df.tsv")
        self.iris = tuple(sorted(scheme.concepts))
        self.index = {c: i for i, c in enumerate(self.iris)}
        self.mean_length = mean_length
        self.ancestors = [frozenset(scheme.ancestors(c)) for c in self.iris]
        self.terms: dict[str, int] = {}  # compared form → its column
        rows, cols, idfs = [], [], []
        texts = [" ".join([scheme.concepts[c].definition or "", *scheme.concepts[c].labels]) for c in self.iris]
        for i, doc in enumerate(nlp.pipe(texts)):
            for w in sorted(set(keys(t.text for t in doc))):
                n = df.get(w, 0)
                rows.append(i)
                cols.append(self.terms.setdefault(w, len(self.terms)))
                idfs.append(math.log((papers - n + 0.5) / (n + 0.5) + 1))
        self.matrix = sparse.csr_matrix((idfs, (rows, cols)), shape=(len(self.iris), max(1, len(self.terms))))
        self.weights: list[dict[int, float]] = [{} for _ in self.iris]  # per concept: its terms' idf
        for i, t, idf in zip(rows, cols, idfs):
            self.weights[i][t] = idf
        self._by_lex: dict[int, int] = {}  # a lower-case word's hash → its term, -1 (no definition's), -2 (not compared)

    def words(self, doc, spans: Sequence[tuple[str, int, int]] = ()) -> Words:
        """The compared words of a spaCy doc; `spans`: the concepts' mentions (concept, start, end) in its text."""
        from bisect import bisect_left

        from spacy.attrs import IDX, LOWER

        if not len(doc):
            return Words()
        by_lex = self._by_lex
        terms, offsets = [], []
        for lex, idx in doc.to_array([LOWER, IDX]).tolist():
            t = by_lex.get(lex)
            if t is None:
                k = word_key(doc.vocab.strings[lex])
                t = by_lex[lex] = -2 if k is None else self.terms.get(k, -1)
            if t != -2:
                terms.append(t)
                offsets.append(idx)
        held: dict[int, str] = {}
        for concept, a, b in spans:  # the last span over a word wins
            for i in range(bisect_left(offsets, a), bisect_left(offsets, b)):
                held[i] = concept
        return Words(tuple(terms), tuple(offsets), tuple(sorted(held.items())))

    def describe(self, words: Words, sentence_starts: Sequence[int], text: str, found: Iterable[str], title_words: Words | None = None) -> Described:
        """The similarities of a paper's words and its title's words to every concept; `found`: the concepts the
        matcher gives the paper; `words` are in the cleaned abstract `text`, whose sentences start at `sentence_starts`.

        The described concept is the best of the SHORTLIST best-scoring concepts the matcher did not find, each
        scored again without the words of mentions of the concepts above it: a narrower concept is not described
        by its parent's name ("semantic segmentation" says nothing of weakly supervised semantic segmentation)."""
        import numpy as np

        title_words = title_words or Words()
        length = len(words.terms) + len(title_words.terms)
        norm = K1 * (1 - B + B * length / self.mean_length)
        counts = Counter(words.terms)
        counts.update(title_words.terms)
        counts.pop(-1, None)
        saturated = np.zeros(self.matrix.shape[1])
        if counts:
            n = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
            saturated[np.fromiter(counts, dtype=np.int64, count=len(counts))] = _saturation(n, norm)
        scores = self.matrix @ saturated
        mean = float(scores.mean())
        spread = math.sqrt(max(0.0, float(scores @ scores) / len(scores) - mean * mean)) or 1.0
        found_ix = sorted({self.index[c] for c in found if c in self.index})
        shortlist = self._shortlist(scores, set(found_ix))
        ranks = dict(zip(found_ix + shortlist, self._ranks(scores, found_ix + shortlist)))
        similarity = {self.iris[i]: Similarity(float(scores[i]), 1.0 / ranks[i], (float(scores[i]) - mean) / spread) for i in found_ix}
        held = [(words.terms[i], c) for i, c in words.held] + [(title_words.terms[i], c) for i, c in title_words.held]
        mentioned = {c for _, c in held}
        best, best_score = -1, 0.0
        for i in shortlist:
            above = self.ancestors[i]
            score = float(scores[i])
            if above & mentioned:
                weight = self.weights[i]
                for t, m in Counter(t for t, c in held if c in above and t in weight).items():
                    score -= weight[t] * (_saturation(counts[t], norm) - _saturation(counts[t] - m, norm))
            if score > best_score:
                best, best_score = i, score
        if best < 0:
            return Described(similarity)
        concept = self.iris[best]
        similarity[concept] = Similarity(best_score, 1.0 / ranks[best], (best_score - mean) / spread)
        return Described(similarity, concept, *self._sentence(best, words, sentence_starts, text))

    def _shortlist(self, scores: np.ndarray, found: set[int]) -> list[int]:
        """The SHORTLIST best-scoring concepts with a score above 0 outside `found`, best first (ties: first concept)."""
        import numpy as np

        k = min(len(scores), SHORTLIST + len(found))
        cut = max(float(np.partition(scores, len(scores) - k)[len(scores) - k]), np.nextafter(0.0, 1.0))
        top = np.flatnonzero(scores >= cut)
        out = []
        for i in top[np.lexsort((top, -scores[top]))].tolist():
            if i not in found:
                out.append(i)
                if len(out) == SHORTLIST:
                    break
        return out

    @staticmethod
    def _ranks(scores: np.ndarray, concepts: list[int]) -> list[int]:
        """The rank of each concept's score among every concept's (1: the best; ties ranked by concept)."""
        import numpy as np

        if not concepts:
            return []
        ascending = np.sort(scores)
        mine = scores[concepts]
        right = np.searchsorted(ascending, mine, side="right")
        ranks = (1 + len(scores) - right).tolist()
        for j in np.flatnonzero(right - np.searchsorted(ascending, mine, side="left") > 1).tolist():  # tied
            ranks[j] += int(np.count_nonzero(scores[: concepts[j]] == mine[j]))
        return ranks

    def _sentence(self, concept: int, words: Words, starts: Sequence[int], text: str) -> tuple[tuple[int, int] | None, int]:
        """The first sentence whose distinct words hold the most of the concept's idf ((start, end without its
        trailing space), its index); (None, -1) when no sentence holds any (only the title does)."""
        from bisect import bisect_right

        weight, above = self.weights[concept], self.ancestors[concept]
        out_of_it = {i for i, c in words.held if c in above}
        held: dict[int, set[int]] = {}
        for i, (t, offset) in enumerate(zip(words.terms, words.offsets)):
            if t in weight and i not in out_of_it:
                held.setdefault(max(0, bisect_right(starts, offset) - 1), set()).add(t)
        if not held:
            return None, -1
        n = max(sorted(held), key=lambda k: sum(weight[t] for t in held[k]))
        start = starts[n] if starts else 0
        end = starts[n + 1] if n + 1 < len(starts) else len(text)
        return (start, len(text[:end].rstrip())), n


def _saturation(n, norm: float):
    """BM25's term frequency saturation of n occurrences (a number or an array)."""
    return n * (K1 + 1) / (n + norm)


@lru_cache(maxsize=4)
def read_df(path: Path) -> tuple[int, float, dict[str, int]]:
    """(papers, mean compared words a paper, word → papers holding it) from the table bench/definition_df.py writes."""
    papers, mean_length, df = 1, 100.0, {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("# papers\t"):
                papers = int(line.split("\t")[1])
            elif line.startswith("# mean words\t"):
                mean_length = float(line.split("\t")[1])
            elif line and not line.startswith("#"):
                w, n = line.split("\t")
                df[w] = int(n)
    return papers, mean_length, df
