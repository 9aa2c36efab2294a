"""The phrase extractor: scheme labels matched on case-folded, de-pluralised words, longest match first."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import product
from pathlib import Path
from typing import Sequence

from kg.extract import acronyms, benchmarks, contributions, definitions, overlaps, salience
from kg.extract.cleanup import Cleaned, clean
from kg.extract.cues import CueMatcher
from kg.extract.definitions import DefinitionIndex, Described, Query
from kg.extract.features import ConceptFacts, MentionNote, candidate_rows, choose, judged
from kg.extract.ingest import Paper
from kg.extract.labels import label_tokens
from kg.extract.lexicon import norm as _norm
from kg.extract.records import Extraction, Link, Mention, Method
from kg.extract.scheme import KG, Scheme
from kg.extract.scorer import Scorer
from kg.extract.scorer import load as load_scorer
from kg.graph.resources import data_path

DESCRIBED_WEIGHT = 0.0  # a sentence that describes a concept is evidence, not a mention of its label
MAX_HYPHEN_WORDS = 4  # labels up to this many words match with any mix of spaces and hyphens
DATASET = KG + "Dataset"


def make_nlp():  # -> spacy.Language
    """A blank English pipeline (no downloads) whose NORM is the lower-cased word with a plural 's' lemmatised.

    The norm is set once per vocabulary entry (a lexeme attribute), so tokens cost nothing extra.
    Only words ending in 's' are lemmatised ('models' → 'model', 'processes' → 'process'): verb
    forms stay apart ('learned' is not 'learning'), as the scoring rule for topics expects.
    """
    import spacy
    from spacy.attrs import NORM

    nlp = spacy.blank("en")
    nlp.vocab.lex_attr_getters[NORM] = _norm
    for lexeme in nlp.vocab:
        lexeme.norm_ = _norm(lexeme.orth_)
    return nlp


def _is_acronym(label: str) -> bool:
    """Short labels written mostly in capitals (RL, LLM, GPT-4, LoRA) must match in their exact case."""
    letters = [c for c in label if c.isalpha()]
    return bool(letters) and len(label) <= 8 and sum(c.isupper() for c in letters) >= max(2, len(letters) - 1)


def _read_in_context(concept, label: str) -> bool:
    """A lower-case ambiguous label of a concept with sense terms ("alignment") matches in any case, as other
    labels do ("Alignment" in a title): the paper's words decide (SenseMatcher), not the case."""
    return bool(concept.senses) and label in concept.ambiguous and label.islower()


def _folded(text: str) -> str:
    """A label or matched text as the folded matcher compares it, roughly: lemmatised lower-case words."""
    return " ".join(_norm(w) for w in text.replace("-", " ").split())


def _joined(text: str) -> str:
    """A label or matched text folded and with its words run together: every spacing and hyphenation of it alike."""
    return "".join(_folded(text).split())


def _variants(label: str) -> set[str]:
    """A label with each gap between its words written as a space or a hyphen, and with hyphens dropped.

    "multi-task learning" also matches "multi task learning" and "multitask learning";
    "reinforcement learning" also matches "reinforcement-learning tasks"; a word that starts with a
    prefix of kg/extract/patterns/word-prefixes.txt is also split after it ("autoencoder": "auto-encoder").
    """
    words = label.replace("-", " ").split()
    out = {label}
    if "-" in label:
        out.add(label.replace("-", ""))
    if 1 < len(words) <= MAX_HYPHEN_WORDS:
        for seps in product(" -", repeat=len(words) - 1):
            out.add(words[0] + "".join(sep + word for sep, word in zip(seps, words[1:])))
    if len(words) <= MAX_HYPHEN_WORDS:
        splits = [_split_prefix(word) for word in words]
        if any(len(forms) > 1 for forms in splits):
            out.update(" ".join(choice) for choice in product(*splits))
    return out


def _split_prefix(word: str) -> tuple[str, ...]:
    """A word, and where it starts with a known prefix followed by four or more letters, the prefix hyphenated and apart."""
    lower = word.lower()
    prefix = next((p for p in _prefixes() if lower.startswith(p) and len(word) - len(p) >= 4 and word[len(p):].isalpha()), None)
    if prefix is None:
        return (word,)
    head, rest = word[: len(prefix)], word[len(prefix) :]
    return (word, f"{head}-{rest}", f"{head} {rest}")


@lru_cache(maxsize=1)
def _prefixes() -> tuple[str, ...]:
    """The prefixes of kg/extract/patterns/word-prefixes.txt, longest first (so "counter" is tried before "co")."""
    lines = (data_path("patterns") / "word-prefixes.txt").read_text(encoding="utf-8").splitlines()
    return tuple(sorted((p.strip() for p in lines if p.strip() and not p.startswith("#")), key=lambda p: (-len(p), p)))


def make_matchers(nlp, scheme: Scheme):  # -> tuple[PhraseMatcher, PhraseMatcher]
    """PhraseMatchers for every label: on norms (case-folded, de-pluralised), and in exact case for acronyms.

    An exact-case label that names two concepts ("SSL": semi- or self-supervised learning) is left
    out: it links only where the paper defines it (see acronyms). Patterns are given to the matchers
    as the hashes of their tokens' NORM (or ORTH), from the token texts of kg.extract.labels (cached
    on disk), not as Docs: making ~25,000 Docs took ~1 s of every set-up, and tokenizing the labels
    with the pipeline that then reads abstracts was measured to make its tokenizer 2.5x slower.
    Matching compares hashes only, so these patterns match exactly what Docs of the labels would.
    """
    from spacy.matcher import PhraseMatcher
    from spacy.strings import get_string_id

    folded = PhraseMatcher(nlp.vocab, attr="NORM")
    exact = PhraseMatcher(nlp.vocab, attr="ORTH")
    owners: dict[str, set[str]] = {}
    for concept in scheme.concepts.values():
        for label in concept.labels:
            if (label in concept.ambiguous or _is_acronym(label)) and not _read_in_context(concept, label):
                owners.setdefault(label, set()).add(concept.iri)
    rules: list[tuple[PhraseMatcher, str, set[str]]] = []  # (matcher, concept, pattern texts), in the order they are added
    for concept in sorted(scheme.concepts.values(), key=lambda c: c.iri):
        for label in concept.labels:
            if label in owners:
                # A label of several concepts links only where the paper defines it, or (kg:senseTerm) in the
                # sense its words support: each concept with sense terms gets the label, PhraseExtractor decides.
                if len(owners[label]) == 1 or concept.senses:
                    rules.append((exact, concept.iri, {label} | ({label + "s"} if label[-1:].isupper() else set())))
            else:
                rules.append((folded, concept.iri, _variants(label)))
    found = label_tokens(text for _, _, texts in rules for text in texts)
    words = {t for tokens in found.tokens.values() for t in tokens}
    orths = {t: get_string_id(t) for t in words}
    norms = {t: get_string_id(_norm(t)) for t in words}
    # A tokenizer exception's own norm wins over the word's, as in Token.norm.
    special = {(text, i): get_string_id(n) for (text, i), n in found.norms.items()}

    def pattern(text: str, is_exact: bool) -> tuple[int, ...]:
        ids = tuple(map((orths if is_exact else norms).__getitem__, found.tokens[text]))
        if special and not is_exact:
            ids = tuple(special.get((text, i), h) for i, h in enumerate(ids))
        return ids

    for matcher, iri, texts in rules:
        matcher.add(iri, [pattern(text, matcher is exact) for text in texts])
    return folded, exact


class SenseMatcher:
    """Keeps a match of an ambiguous label only where the paper supports the concept's sense (kg:senseTerm).

    A concept with sense terms links through one of its kg:ambiguousLabels where the paper (abstract or
    title) writes one of those terms, or names the concept by another label; a span that two concepts
    claim that way is left to the paper's own definition (kg.extract.acronyms), if any. Concepts without
    sense terms keep the exact-case rule alone.
    """

    def __init__(self, nlp, scheme: Scheme) -> None:
        from spacy.matcher import PhraseMatcher

        self.strings = nlp.vocab.strings
        self.ambiguous = {c.iri: frozenset(c.ambiguous) for c in scheme.concepts.values() if c.senses and c.ambiguous}
        # compared without spaces or hyphens: the label's variants ("counter-factual", "fewshot") are doubtful too
        self.folded = {iri: frozenset(_joined(a) for a in labels if a.islower()) for iri, labels in self.ambiguous.items()}
        self.matcher = PhraseMatcher(nlp.vocab, attr="NORM")
        for c in scheme.concepts.values():
            if c.iri in self.ambiguous:
                self.matcher.add(c.iri, [nlp.make_doc(term) for term in c.senses])

    def keep(self, spans: list[tuple[str, int, int, bool]], text: str, docs: Sequence) -> list[tuple[str, int, int, bool]]:
        """The spans, less ambiguous-label matches whose sense the paper does not support."""
        doubtful = [
            s for s in spans if s[0] in self.ambiguous
            and (overlaps.base(text[s[1] : s[2]]) in self.ambiguous[s[0]] if s[3] else _joined(text[s[1] : s[2]]) in self.folded[s[0]])
        ]
        if not doubtful:
            return spans
        sure = [s for s in spans if s not in doubtful]
        supported = {s[0] for s in sure} | {self.strings[m] for d in docs for m, _, _ in self.matcher(d)}
        kept = [s for s in doubtful if s[0] in supported]
        claims = Counter((s[1], s[2]) for s in kept)
        return sure + [s for s in kept if claims[s[1], s[2]] == 1]


@dataclass(frozen=True)
class _Read:
    """What one paper's text yields before corpus statistics are known."""

    paper: Paper
    cleaned: Cleaned
    notes: tuple[MentionNote, ...]  # each mention (cleaned offsets), with its weight and context, see features
    title_concepts: frozenset[str]
    methods: tuple[tuple[int, int], ...]
    sentences: int
    title_spans: tuple[tuple[str, int, int], ...] = ()  # concept, start, end in the stored title (evidence only)
    described: Described | None = None  # what the concepts' definitions say of the paper (kg.extract.definitions)
    focus: frozenset[int] = frozenset()  # the sentences that say what the paper does


class PhraseExtractor:
    """Dictionary matching with acronyms, markup clean-up, salience scores and proposed methods."""

    def __init__(self, scheme: Scheme, threshold: float | None = None, model: Path | None = None) -> None:
        self.scheme = scheme
        self.model = model
        self._threshold = threshold
        self.facts = ConceptFacts.of(scheme)
        self.nlp = make_nlp()
        self.folded, self.exact = make_matchers(self.nlp, scheme)
        self.cues = CueMatcher(self.nlp)
        self.known = {label for c in scheme.concepts.values() for label in c.labels}
        # Ambiguous labels that are ordinary capitalised words ("Adult", "Habitat") say nothing at a sentence start.
        self.ambiguous_words = {a for c in scheme.concepts.values() for a in c.ambiguous if a.istitle() and " " not in a}
        self.datasets = {iri for iri, c in scheme.concepts.items() if DATASET in c.kinds}
        self.senses = SenseMatcher(self.nlp, scheme)
        self.kinds = benchmarks.kinds(scheme)
        self.priors = salience.corpus_priors(data_path("patterns") / "concept-rates.tsv")
        self.definitions = DefinitionIndex(scheme, self.nlp)

    def __call__(self, papers: Sequence[Paper]) -> list[Extraction]:
        read = self.read(papers)
        candidates = self.candidates(read)
        rows = [row for _, paper_rows in candidates for row in paper_rows]
        scores = iter(map(judged, self.scorer.probabilities(rows), rows))
        return [self._extract(r, concepts, [next(scores) for _ in concepts]) for r, (concepts, _) in zip(read, candidates)]

    @property
    def per_paper(self) -> bool:
        """With a corpus prior for every concept, a paper's links depend on that paper alone: builds can be
        split into chunks (--jobs, --update) and give the same bytes."""
        return all(iri in self.priors for iri in self.scheme.concepts)

    @property
    def scorer(self) -> Scorer:
        return load_scorer(self.model)

    @property
    def threshold(self) -> float:
        """The probability a link needs to be a subject: the one given, else the model's own."""
        return self.scorer.threshold if self._threshold is None else self._threshold

    def read(self, papers: Sequence[Paper]) -> list[_Read]:
        """Match labels and cues in each paper's title and abstract."""
        cleaned = [clean(p.abstract) for p in papers]
        titled = [i for i, p in enumerate(papers) if p.title]
        title_docs = dict(zip(titled, self.nlp.pipe(clean(papers[i].title or "").text for i in titled)))
        out: list[_Read] = []
        chunk: list[tuple[_Read, Query]] = []
        for i, (paper, c, doc) in enumerate(zip(papers, cleaned, self.nlp.pipe(c.text for c in cleaned))):
            chunk.append(self._read(paper, c, doc, title_docs.get(i)))
            if len(chunk) == definitions.CHUNK or i == len(papers) - 1:
                # What the definitions say of a chunk of papers at once (kg.extract.definitions), then let its words go.
                described = self.definitions.describe_all([q for _, q in chunk], self.nlp.vocab.strings)
                out += [replace(r, described=d) for (r, _), d in zip(chunk, described)]
                chunk = []
        return out

    def candidates(self, read: Sequence[_Read]) -> list[tuple[list[str], list[list[float]]]]:
        """Each paper's candidate concepts and their feature rows (kg.extract.features)."""
        priors = self.priors
        if not self.per_paper:
            # Concepts the reference corpus does not know (a user's scheme): this build's own counts stand in.
            df = Counter(c for r in read for c in {n[0] for n in r.notes if not n[6]})
            priors = {**{c: salience.Prior(salience.smoothed_rate(n, len(read))) for c, n in df.items()}, **priors}
        return [
            candidate_rows(r.notes, r.title_concepts, r.sentences, bool(r.paper.title), len(r.cleaned.text), self.facts, priors, r.described, r.focus)
            for r in read
        ]

    def _concept_spans(self, doc) -> list[tuple[str, int, int, bool]]:
        """(concept, start char, end char, exact-case match) for every label match in a doc."""
        strings = self.nlp.vocab.strings
        out = []
        for matcher, is_exact in ((self.folded, False), (self.exact, True)):
            for match_id, s, e in matcher(doc):
                if is_exact and (overlaps.in_compound_name(doc, s, e) or (e - s == 1 and doc[s].text in self.ambiguous_words and overlaps.sentence_start(doc, s))):
                    continue
                out.append((strings[match_id], doc[s].idx, doc[e - 1].idx + len(doc[e - 1]), is_exact))
        return out

    def _read(self, paper: Paper, cleaned: Cleaned, doc, title_doc) -> tuple[_Read, Query]:
        """One paper as read, and its words as the concepts' definitions compare them (described a chunk at a time)."""
        text = cleaned.text
        docs = (doc,) if title_doc is None else (doc, title_doc)
        cue_tokens = self.cues(doc)
        spans = self.senses.keep(overlaps.outside_idioms(self._concept_spans(doc), doc, cue_tokens), text, docs)
        defined: dict[str, str | None] = {}  # short form → the concept its long form names (None: no concept)
        defs = acronyms.definitions(text)
        for d in defs:
            # The label must cover the whole long form: "probabilistic neural network (PNN)" is not "neural network".
            whole = [s for s in spans if s[1] == d.long_start and s[2] == d.long_end]
            best = whole[0] if whole else None
            defined.setdefault(d.short.rstrip("s") if d.short[:-1].isupper() else d.short, best[0] if best else None)
        if defined:
            # A paper's own definition wins over the scheme's reading of the same acronym.
            spans = [s for s in spans if not (s[3] and overlaps.base(text[s[1] : s[2]]) in defined and defined[overlaps.base(text[s[1] : s[2]])] != s[0])]
            for short, concept in defined.items():
                if concept is not None:
                    # The "(RL)" of the definition itself is not a second mention.
                    own = {d.short_start for d in defs}
                    spans.extend((concept, a, b, True) for a, b in acronyms.uses(text, short) if a not in own)
        title_cues = self.cues(title_doc) if title_doc is not None else []
        title_spans = (
            self.senses.keep(overlaps.outside_idioms(self._concept_spans(title_doc), title_doc, title_cues), title_doc.text, docs)
            if title_doc is not None else []
        )
        spans += self._benchmarks(doc, cue_tokens, spans, title_spans)
        if title_doc is not None:
            title_spans += self._benchmarks(title_doc, title_cues, spans, title_spans, in_title=True)
        kept = overlaps.same_item_once(overlaps.longest_first(spans), text)
        exact = {(c, a, b) for c, a, b, is_exact in spans if is_exact}
        cue_chars = [(label, doc[s].idx, doc[e - 1].idx + len(doc[e - 1])) for label, s, e in cue_tokens]
        ctx = salience.context(text, cue_chars)
        notes = tuple((*k, *d, k in exact) for k, d in zip(kept, ctx.describe(kept, text)))
        # Longest match wins in the title too: "offline RL" names offline RL, not RL as well.
        title_kept = overlaps.longest_first(title_spans)
        title = frozenset(c for c, _, _ in title_kept)
        starts = {d.short_start: d.long_start for d in defs} if defined else {}
        concept_shorts = {short for short, concept in defined.items() if concept is not None}
        methods = contributions.methods(doc, text, cue_tokens, starts, self.known, concept_shorts) if cue_tokens else []
        tokens = self.definitions.tokens(doc, [k[:3] for k in kept])
        title_tokens = self.definitions.tokens(title_doc, [k[:3] for k in title_kept]) if title_doc is not None else None
        query = Query(tokens, tuple(ctx.sentence_starts), text, frozenset(n[0] for n in notes) | title, title_tokens)
        read = _Read(paper, cleaned, notes, title, tuple(methods), len(ctx.sentence_starts), overlaps.title_spans(paper, title_kept), focus=ctx.focus)
        return read, query

    def _benchmarks(self, doc, cues, abstract: list, title: list, *, in_title: bool = False) -> list[tuple[str, int, int, bool]]:
        """A mention of its kind for each benchmark or data set the doc says the paper contributes (kg.extract.benchmarks)."""
        found = []
        for i in benchmarks.contributed(doc, cues, title=in_title):
            kind = self.kinds.kind(-1 if in_title else doc[i].idx, [s[:3] for s in abstract], [s[:3] for s in title])
            if kind is not None:
                found.append((kind, doc[i].idx, doc[i].idx + len(doc[i]), False))
        return found

    def _extract(self, r: _Read, concepts: list[str], scores: list[tuple[float, bool, bool]]) -> Extraction:
        abstract = r.paper.abstract
        by_concept: dict[str, list[Mention]] = {}
        for concept, a, b, weight, *_ in r.notes:
            start, end = r.cleaned.original(a, b)
            by_concept.setdefault(concept, []).append(Mention(concept, start, end, abstract[start:end], weight))
        title_spans = r.title_spans
        d = r.described
        described = d.concept if d is not None and d.concept in concepts and d.concept not in by_concept else None
        if d is not None and described is not None:
            # A described concept's evidence is the sentence that holds most of its definition's weight, else the title.
            if d.sentence is not None:
                start, end = r.cleaned.original(*d.sentence)
                by_concept[described] = [Mention(described, start, end, abstract[start:end], DESCRIBED_WEIGHT)]
            elif r.paper.title:
                title_spans = (*title_spans, (described, 0, len(r.paper.title)))
        links = []
        values = [(round(p, 3), ok, named) for p, ok, named in scores]
        for concept, (value, *_), subject in zip(concepts, values, choose(values, self.threshold)):
            ms = tuple(sorted(by_concept.get(concept, ()), key=lambda m: m.start))
            title_ms = tuple(Mention(c, a, b, (r.paper.title or "")[a:b]) for c, a, b in title_spans if c == concept)
            links.append(Link(concept, value, subject, ms, concept in self.datasets, title_ms, concept == described))
        methods: list[Method] = []
        for a, b in r.methods:
            start, end = r.cleaned.original(a, b)
            name = r.cleaned.text[a:b]
            if all(m.name != name for m in methods):
                methods.append(Method(name, start, end, abstract[start:end]))
        label = methods[0].name if methods else contributions.first_words(abstract)
        return Extraction(r.paper.id, tuple(links), label, tuple(methods))
