"""Stage 2: link papers to concepts of the scheme, with scores and character-span evidence."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from .errors import UsageError
from .ingest import Paper
from .scheme import Scheme

DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True)
class Mention:
    """A span of the stored abstract that names a concept: abstract[start:end] == exact."""

    concept: str
    start: int
    end: int
    exact: str


@dataclass(frozen=True)
class Link:
    """A concept found in a paper: its salience score, whether the paper is about it, and the evidence."""

    concept: str
    score: float
    subject: bool
    mentions: tuple[Mention, ...]


@dataclass(frozen=True)
class Extraction:
    """Everything extraction found in one paper."""

    paper_id: str
    links: tuple[Link, ...]
    label: str  # a short name for papers without a title


Extractor = Callable[[Sequence[Paper]], list[Extraction]]


def make_nlp():  # -> spacy.Language
    """A blank English pipeline (no downloads) that writes case-folded lemmas into token.norm_."""
    import spacy

    _register_components()
    from spacy.util import compile_infix_regex

    nlp = spacy.blank("en")
    # Split TeX math from words ("$2$-Wasserstein distance" -> "$ 2 $ - Wasserstein distance") so that
    # terms written right after inline math still match.
    infixes = [*nlp.Defaults.infixes, r"\$", r"(?<=\$)-(?=[A-Za-z])"]
    nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer
    nlp.add_pipe("kg_lemma_norm")
    return nlp


def make_matchers(nlp, scheme: Scheme):  # -> tuple[PhraseMatcher, PhraseMatcher]
    """PhraseMatchers for every label: case-folded lemmas, and exact case for acronyms."""
    from spacy.matcher import PhraseMatcher

    lemma_norm = nlp.get_pipe("kg_lemma_norm")
    folded = PhraseMatcher(nlp.vocab, attr="NORM")
    exact = PhraseMatcher(nlp.vocab, attr="ORTH")
    for concept in scheme.concepts.values():
        ambiguous = set(concept.ambiguous)
        for label in concept.labels:
            pattern = lemma_norm(nlp.make_doc(label))
            if label in ambiguous or _is_acronym(label):
                exact.add(concept.iri, [pattern])
            else:
                folded.add(concept.iri, [pattern])
    return folded, exact


def _is_acronym(label: str) -> bool:
    """Short all-capitals labels (RL, LLM, GPT-4) must match in their exact case."""
    letters = [c for c in label if c.isalpha()]
    return bool(letters) and len(label) <= 8 and sum(c.isupper() for c in letters) >= max(2, len(letters) - 1)


def _register_components() -> None:
    from spacy.language import Language
    from spacy.lookups import load_lookups

    if "kg_lemma_norm" in Language.factories:
        return

    class LemmaNorm:
        """Set token.norm_ to the lookup lemma of the lower-cased word (case-insensitive lemmas)."""

        def __init__(self) -> None:
            self.table = load_lookups("en", ["lemma_lookup"]).get_table("lemma_lookup")

            self.cache: dict[int, int] = {}  # orth hash -> norm hash, filled as words are met

        def __call__(self, doc):
            # Speed (scale): one dict look-up per token on integer hashes and one vectorized
            # write, instead of a Python Token object and a string store round trip per token.
            if not len(doc):
                return doc
            import numpy
            from spacy.attrs import NORM, ORTH

            cache, table, strings = self.cache, self.table, doc.vocab.strings
            norms = []
            for orth in doc.to_array(ORTH).tolist():
                norm = cache.get(orth)
                if norm is None:
                    lower = strings[orth].lower()
                    norm = cache[orth] = strings.add(table.get(lower, lower))
                norms.append(norm)
            doc.from_array([NORM], numpy.array(norms, dtype="uint64").reshape(-1, 1))
            return doc

    Language.factory("kg_lemma_norm")(lambda nlp, name: LemmaNorm())


class PhraseExtractor:
    """Dictionary matching on case-folded lemmas, longest match first, scored by position and frequency."""

    per_paper = True  # no corpus statistics: kg.parallel may extract it in chunks and worker processes

    def __init__(self, scheme: Scheme, threshold: float = DEFAULT_THRESHOLD) -> None:
        self.scheme = scheme
        self.threshold = threshold
        self.nlp = make_nlp()
        self.matchers = make_matchers(self.nlp, scheme)

    def __call__(self, papers: Sequence[Paper]) -> list[Extraction]:
        from spacy.util import filter_spans

        folded, exact = self.matchers
        out: list[Extraction] = []
        for paper, doc in zip(papers, self.nlp.pipe(p.abstract for p in papers)):
            spans = [
                doc.char_span(doc[s].idx, doc[e - 1].idx + len(doc[e - 1]), label=m)
                for m, s, e in [*folded(doc), *exact(doc)]
            ]
            mentions = [
                Mention(span.label_, span.start_char, span.end_char, paper.abstract[span.start_char : span.end_char])
                for span in filter_spans([s for s in spans if s is not None])
            ]
            out.append(Extraction(paper.id, self._links(paper, mentions), derive_label(paper.abstract)))
        return out

    def _links(self, paper: Paper, mentions: list[Mention]) -> tuple[Link, ...]:
        by_concept: dict[str, list[Mention]] = {}
        for m in mentions:
            by_concept.setdefault(m.concept, []).append(m)
        first_sentence_end = _first_sentence_end(paper.abstract)
        title = (paper.title or "").lower()
        links = []
        for concept, ms in sorted(by_concept.items()):
            labels = self.scheme.concepts[concept].labels
            score = 0.3 + 0.15 * min(len(ms) - 1, 3)
            if ms[0].start < first_sentence_end:
                score += 0.25
            if title and any(label.lower() in title for label in labels):
                score += 0.3
            score = round(min(score, 1.0), 3)
            links.append(Link(concept, score, score >= self.threshold, tuple(ms)))
        return tuple(links)


def _first_sentence_end(text: str) -> int:
    match = re.search(r"[.!?](\s|$)", text)
    return match.end() if match else len(text)


_PROPOSE = re.compile(r"\b(?:we|this paper|this work)\s+(?:propose|introduce|present|develop)s?\s+(?:\w+\s+){0,8}?([A-Z][A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*)")


def derive_label(abstract: str) -> str:
    """A short name for an untitled paper: the method it proposes, else its first words."""
    match = _PROPOSE.search(abstract)
    if match:
        return match.group(1)
    words = abstract[: _first_sentence_end(abstract)].split()
    return " ".join(words[:8]) + ("…" if len(words) > 8 else "")


EXTRACTORS: dict[str, Callable[..., Extractor]] = {"phrase": PhraseExtractor}


def make_extractor(name: str, scheme: Scheme, threshold: float = DEFAULT_THRESHOLD) -> Extractor:
    """Build the registered extractor `name` for a scheme."""
    try:
        factory = EXTRACTORS[name]
    except KeyError:
        raise UsageError(f"unknown extractor {name!r} (available: {', '.join(sorted(EXTRACTORS))})") from None
    return factory(scheme, threshold)
