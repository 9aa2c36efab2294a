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
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from kg.extract.labels import label_tokens
from kg.extract.lexicon import lemmas
from kg.extract.scheme import Scheme
from kg.graph.resources import data_path

if TYPE_CHECKING:
    import numpy as np

K1, B = 1.2, 0.75  # BM25's usual term saturation and length normalisation
CHUNK = 256  # papers scored by one sparse product
SHORTLIST = 10  # best-scoring concepts the matcher did not find that are scored again for the described one
MIN_LENGTH = 3  # shorter words ("of", "rl", "x") carry no definition
NOT_COMPARED = -2  # the term of a word that is not compared (stop words, short words, numbers)


# A concept's BM25 against one paper, 1/its rank among every concept for that paper, and its z-score there: a plain
# tuple of floats, which the cyclic garbage collector stops tracking (a build holds one for every candidate).
Similarity = tuple[float, float, float]
NONE: Similarity = (0.0, 0.0, 0.0)


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

    terms: np.ndarray
    offsets: np.ndarray
    held: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True)
class Tokens:
    """A doc's tokens as spaCy gives them (LOWER, IDX per token) and the concepts' mentions (concept, start, end)."""

    arrays: np.ndarray
    spans: tuple[tuple[str, int, int], ...] = ()


@dataclass(frozen=True)
class Query:
    """One paper as the definitions read it: its abstract's tokens, the cleaned abstract's sentence starts and text,
    the concepts the matcher found, and its title's tokens (None: no title)."""

    tokens: Tokens
    starts: tuple[int, ...]
    text: str
    found: frozenset[str]
    title: Tokens | None = None


class DefinitionIndex:
    """Every concept's definition and labels as a BM25 query over a paper's words: a term x concept matrix of the
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
        # A concept without a definition has no query: its labels alone are the matcher's, and their words one by one
        # are the loose matching decision 0047 turned down.
        texts = [" ".join([d, *scheme.concepts[c].labels]) if (d := scheme.concepts[c].definition) else "" for c in self.iris]
        tokens = label_tokens(texts).tokens  # the texts' tokens as `nlp` splits them, cached on disk as the labels' are
        for i, text in enumerate(texts):
            for w in sorted(set(keys(tokens[text]))):
                n = df.get(w, 0)
                rows.append(i)
                cols.append(self.terms.setdefault(w, len(self.terms)))
                idfs.append(math.log((papers - n + 0.5) / (n + 0.5) + 1))
        # term x concept idf, for a chunk of papers' product (papers x terms) @ (terms x concepts)
        self.by_term = sparse.csr_matrix((idfs, (cols, rows)), shape=(max(1, len(self.terms)), len(self.iris)))
        self.weights: list[dict[int, float]] = [{} for _ in self.iris]  # per concept: its terms' idf
        for i, t, idf in zip(rows, cols, idfs):
            self.weights[i][t] = idf
        self._lexemes = _Lexemes()  # a lower-case word's hash → its term, -1 (no definition's) or NOT_COMPARED

    @staticmethod
    def tokens(doc, spans: Sequence[tuple[str, int, int]] = ()) -> Tokens:
        """What describe_all needs of a spaCy doc; `spans`: the concepts' mentions (concept, start, end) in its text."""
        from spacy.attrs import IDX, LOWER

        return Tokens(doc.to_array([LOWER, IDX]).reshape(-1, 2), tuple(spans))

    def words(self, docs: Sequence[Tokens], strings) -> list[Words]:
        """The compared words of each doc (`strings`: spaCy's string store, for words not seen before)."""
        import numpy as np

        lengths = [len(t.arrays) for t in docs]
        arrays = np.concatenate([t.arrays for t in docs]) if docs else np.zeros((0, 2), dtype=np.uint64)
        terms = self._lexemes.terms(arrays[:, 0], lambda lex: self._term(strings[lex]))
        keep = terms != NOT_COMPARED
        kept_terms, kept_offsets = terms[keep], arrays[keep, 1].astype(np.int64)
        bounds = np.concatenate([[0], np.cumsum(keep)])[np.cumsum([0, *lengths])].tolist()
        out = []
        for t, a, b in zip(docs, bounds, bounds[1:]):
            offsets = kept_offsets[a:b]
            held: dict[int, str] = {}
            if t.spans:
                concepts, starts, ends = zip(*t.spans)
                edges = np.searchsorted(offsets, [*starts, *ends]).tolist()
                for concept, first, last in zip(concepts, edges, edges[len(concepts) :]):  # the last span over a word wins
                    held.update(dict.fromkeys(range(first, last), concept))
            out.append(Words(kept_terms[a:b], offsets, tuple(sorted(held.items()))))
        return out

    def _term(self, lower: str) -> int:
        k = word_key(lower)
        return NOT_COMPARED if k is None else self.terms.get(k, -1)

    def describe_all(self, queries: Sequence[Query], strings) -> list[Described]:
        """The similarities of each paper's words and its title's words to every concept, scored CHUNK papers at a
        time by one sparse product; `found`: the concepts the matcher gives the paper.

        The described concept is the best of the SHORTLIST best-scoring concepts the matcher did not find, each
        scored again without the words of mentions of the concepts above it: a narrower concept is not described
        by its parent's name ("semantic segmentation" says nothing of weakly supervised semantic segmentation)."""
        import numpy as np
        from scipy import sparse

        if not self.iris:
            return [Described({}) for _ in queries]
        out: list[Described] = []
        for first in range(0, len(queries), CHUNK):
            chunk = queries[first : first + CHUNK]
            docs = [q.tokens for q in chunk] + [q.title for q in chunk if q.title is not None]
            read = iter(self.words(docs, strings))
            abstracts = [next(read) for _ in chunk]
            titles = [next(read) if q.title is not None else None for q in chunk]
            every = [np.concatenate([w.terms, t.terms]) if t is not None else w.terms for w, t in zip(abstracts, titles)]
            norms = K1 * (1 - B + B * np.array([len(e) for e in every], dtype=np.float64) / self.mean_length)
            known = [e[e >= 0] for e in every]
            rows = np.repeat(np.arange(len(chunk)), [len(k) for k in known])
            counts = sparse.csr_matrix((np.ones(len(rows)), (rows, np.concatenate(known))), shape=(len(chunk), self.by_term.shape[0]))
            counts.sum_duplicates()
            saturated = counts.copy()
            saturated.data = _saturation(counts.data, np.repeat(norms, np.diff(counts.indptr)))
            scores = (saturated @ self.by_term).toarray()
            means = scores.mean(axis=1)
            spreads = scores.std(axis=1)
            ascending = np.sort(scores, axis=1)
            # Each row's best SHORTLIST + (most found) concepts above 0, with every concept tied at the cut.
            k = min(scores.shape[1], SHORTLIST + max(len(q.found) for q in chunk))
            best = np.argpartition(-scores, k - 1, axis=1)[:, :k]
            cuts = np.maximum(np.take_along_axis(scores, best, axis=1).min(axis=1), np.nextafter(0.0, 1.0))
            tied = np.count_nonzero(scores >= cuts[:, None], axis=1) > k
            for j, (q, words, title) in enumerate(zip(chunk, abstracts, titles)):
                row = slice(counts.indptr[j], counts.indptr[j + 1])
                paper_counts = dict(zip(counts.indices[row].tolist(), counts.data[row].tolist()))
                top = np.flatnonzero(scores[j] >= cuts[j]) if tied[j] else best[j][scores[j, best[j]] >= cuts[j]]
                out.append(self._choose(q, words, title, scores[j], ascending[j], top, float(means[j]), float(spreads[j]) or 1.0, paper_counts, float(norms[j])))
        return out

    def _choose(self, q: Query, words: Words, title_words: Words | None, scores: np.ndarray, ascending: np.ndarray, top: np.ndarray, mean: float, spread: float, counts: dict[int, float], norm: float) -> Described:
        """One paper's similarities and described concept from its scores over every concept."""
        found_ix = sorted({self.index[c] for c in q.found if c in self.index})
        shortlist = _shortlist(scores, top, set(found_ix))
        ranks = dict(zip(found_ix + shortlist, _ranks(scores, ascending, found_ix + shortlist)))
        similarity = {self.iris[i]: (float(scores[i]), 1.0 / ranks[i], (float(scores[i]) - mean) / spread) for i in found_ix}
        held = [(int(words.terms[i]), c) for i, c in words.held]
        if title_words is not None:
            held += [(int(title_words.terms[i]), c) for i, c in title_words.held]
        mentioned = {c for _, c in held}
        best, best_score = -1, 0.0
        for i in shortlist:
            above = self.ancestors[i]
            score = float(scores[i])
            if above & mentioned:
                weight = self.weights[i]
                for t, m in Counter(t for t, c in held if c in above and t in weight).items():
                    n = counts[t]
                    score -= weight[t] * (_saturation(n, norm) - _saturation(n - m, norm))
            if score > best_score:
                best, best_score = i, score
        if best < 0:
            return Described(similarity)
        concept = self.iris[best]
        similarity[concept] = (best_score, 1.0 / ranks[best], (best_score - mean) / spread)
        return Described(similarity, concept, *self._sentence(best, words, q.starts, q.text))

    def _sentence(self, concept: int, words: Words, starts: Sequence[int], text: str) -> tuple[tuple[int, int] | None, int]:
        """The first sentence whose distinct words hold the most of the concept's idf ((start, end without its
        trailing space), its index); (None, -1) when no sentence holds any (only the title does)."""
        from bisect import bisect_right

        weight, above = self.weights[concept], self.ancestors[concept]
        out_of_it = {i for i, c in words.held if c in above}
        held: dict[int, set[int]] = {}
        offsets = words.offsets
        for i, t in enumerate(words.terms.tolist()):
            if t in weight and i not in out_of_it:
                held.setdefault(max(0, bisect_right(starts, int(offsets[i])) - 1), set()).add(t)
        if not held:
            return None, -1
        n = max(sorted(held), key=lambda k: sum(weight[t] for t in held[k]))
        start = starts[n] if starts else 0
        end = starts[n + 1] if n + 1 < len(starts) else len(text)
        return (start, len(text[:end].rstrip())), n


class _Lexemes:
    """A lower-case word's hash (spaCy's LOWER) → its term, looked up for a whole doc at once: a sorted array, and
    the words seen since it was last sorted in a dict."""

    MERGE = 4096

    def __init__(self) -> None:
        import numpy as np

        self.keys = np.zeros(0, dtype=np.uint64)
        self.values = np.zeros(0, dtype=np.int64)
        self.fresh: dict[int, int] = {}

    def terms(self, lexemes: np.ndarray, term: Callable[[int], int]) -> np.ndarray:
        import numpy as np

        at = np.minimum(np.searchsorted(self.keys, lexemes), max(0, len(self.keys) - 1))
        found = self.keys[at] == lexemes if len(self.keys) else np.zeros(len(lexemes), dtype=bool)
        out = np.where(found, self.values[at] if len(self.keys) else 0, 0)
        if not found.all():
            missing = np.flatnonzero(~found)
            fresh = self.fresh
            looked = []
            for lex in lexemes[missing].tolist():
                t = fresh.get(lex)
                if t is None:
                    t = fresh[lex] = term(lex)
                looked.append(t)
            out[missing] = looked
            if len(fresh) >= self.MERGE:
                keys = np.concatenate([self.keys, np.fromiter(fresh, dtype=np.uint64, count=len(fresh))])
                values = np.concatenate([self.values, np.fromiter(fresh.values(), dtype=np.int64, count=len(fresh))])
                order = np.argsort(keys)
                self.keys, self.values, self.fresh = keys[order], values[order], {}
        return out


def _shortlist(scores: np.ndarray, top: np.ndarray, found: set[int]) -> list[int]:
    """The SHORTLIST best-scoring concepts outside `found`, best first (ties: first concept); `top`: the concepts
    above 0 that score at least the SHORTLIST + len(found)-th best score."""
    import numpy as np

    out = []
    for i in top[np.lexsort((top, -scores[top]))].tolist():
        if i not in found:
            out.append(i)
            if len(out) == SHORTLIST:
                break
    return out


def _ranks(scores: np.ndarray, ascending: np.ndarray, concepts: list[int]) -> list[int]:
    """The rank of each concept's score among every concept's (1: the best; ties ranked by concept); `ascending`:
    the scores sorted."""
    import numpy as np

    if not concepts:
        return []
    mine = scores[concepts]
    right = np.searchsorted(ascending, mine, side="right")
    ranks = (1 + len(scores) - right).tolist()
    for j in np.flatnonzero(right - np.searchsorted(ascending, mine, side="left") > 1).tolist():  # tied
        ranks[j] += int(np.count_nonzero(scores[: concepts[j]] == mine[j]))
    return ranks


def _saturation(n, norm):
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
