"""What the scorer knows of one (paper, concept) candidate: a fixed vector of numbers.

Where and how often the paper mentions the concept (title, opening and focus sentences, contrast
and example stretches, enumerations), how common and how topical the concept is in a reference
corpus, where it sits in the scheme and what kind of thing it is (a data set, a tool), and how it
agrees with the paper's other candidates (its narrower or broader concepts mentioned too).
The names in FEATURES are the keys of the model file; their order is the vector's order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from kg.extract.definitions import NONE, Described
from kg.extract.salience import PASSING_CONTRAST, PRIOR_RATE, Prior
from kg.extract.scheme import KG, Scheme

FEATURES: tuple[str, ...] = (
    "mentions",  # log(1 + number of mentions in the abstract)
    "best_weight",  # the largest salience weight of a mention (place and context, see salience.Context)
    "weight_sum",  # log(1 + sum of the weights)
    "in_title",
    "has_title",  # the paper has a title at all (seed lists have none)
    "title_only",  # named in the title, never in the abstract
    "first_sentence",  # a mention in the opening sentence
    "first_position",  # where the first mention is: 0 at the start of the abstract, 1 at its end
    "last_sentence_only",  # every mention in the closing sentence (evaluation set-up, outlook)
    "focus",  # a mention in a sentence that says what the paper does
    "passing_share",  # share of mentions after "unlike", "such as", "applied to" …
    "contrast_share",  # share of mentions the paper sets itself against ("unlike", "compared to", "outperforms")
    "listed_share",  # share of mentions that are items of an enumeration
    "mention_share",  # this concept's share of all the paper's mentions
    "rank",  # 1/(rank by weight sum among the paper's candidates)
    "corpus_rate",  # -log10 of the share of reference abstracts that mention it
    "topicality",  # how often a reference title names it when its abstract does, relative to the average
    "depth",  # concepts above it
    "narrower_in_scheme",  # log(1 + concepts below it)
    "narrower_mentioned",  # candidates of this paper that lie below it
    "broader_mentioned",  # candidates of this paper that lie above it
    "dataset",
    "tool",  # a model, library, metric or other thing a paper uses
    "umbrella",  # a concept nearly every paper could claim (kg:Umbrella: machine learning, deep learning, ...)
    "acronym_only",  # every mention is an exact-case short form
    "label_words",  # length of the longest mention in words (characters / 6)
    # The concept's definition and labels against the paper's words (kg.extract.definitions):
    "definition_bm25",  # BM25, the definition and labels as the query
    "definition_rank",  # 1/(rank of that score among every concept for this paper)
    "definition_z",  # that score in standard deviations above the mean over every concept for this paper
    "described_bm25",  # the BM25 again, on a described candidate only (0 on the matcher's: a slope of its own)
    "described_z",  # the z-score again, on a described candidate only
    "described",  # the concept is no mention's: the paper's best-scoring concept the matcher did not find
)


@dataclass(frozen=True)
class ConceptFacts:
    """Per concept, what the features need of the scheme: depth, narrower count, kinds, ancestors."""

    depth: dict[str, int]
    narrower: dict[str, int]
    ancestors: dict[str, frozenset[str]]
    datasets: frozenset[str]
    tools: frozenset[str]
    umbrellas: frozenset[str]

    @classmethod
    def of(cls, scheme: Scheme) -> ConceptFacts:
        ancestors = {iri: frozenset(scheme.ancestors(iri)) for iri in scheme.concepts}
        narrower: dict[str, int] = dict.fromkeys(scheme.concepts, 0)
        for above in ancestors.values():
            for a in above:
                if a in narrower:
                    narrower[a] += 1
        kinds = {iri: set(c.kinds) for iri, c in scheme.concepts.items()}
        tool_kinds = {KG + k for k in ("Tool", "Model", "Metric", "Software", "Library")}
        return cls(
            depth={iri: len(a) for iri, a in ancestors.items()},
            narrower=narrower,
            ancestors=ancestors,
            datasets=frozenset(i for i, k in kinds.items() if KG + "Dataset" in k),
            tools=frozenset(i for i, k in kinds.items() if k & tool_kinds),
            umbrellas=frozenset(i for i, k in kinds.items() if KG + "Umbrella" in k),
        )


# One mention as the extractor hands it over: concept, start, end, weight, sentence, focus, passing (0 or its kind:
# kg.extract.salience.PASSING_EXAMPLE, PASSING_CONTRAST), listed, exact case.
MentionNote = tuple[str, int, int, float, int, bool, int, bool, bool]


def candidate_rows(
    notes: Sequence[MentionNote],
    title_concepts: frozenset[str],
    sentences: int,
    has_title: bool,
    text_length: int,
    facts: ConceptFacts,
    priors: dict[str, Prior],
    described: Described | None = None,
    focus: frozenset[int] = frozenset(),
) -> tuple[list[str], list[list[float]]]:
    """The candidates of one paper (mentioned, named in the title or described), sorted, and their feature rows."""
    by_concept: dict[str, list[MentionNote]] = {}
    for note in notes:
        by_concept.setdefault(note[0], []).append(note)
    present = set(by_concept) | title_concepts  # the matcher's candidates
    extra = described.concept if described is not None and described.concept not in present else None
    concepts = sorted(present | {extra}) if extra is not None else sorted(present)
    total = max(1, len(notes))
    sums = {c: sum(n[3] for n in by_concept.get(c, ())) + (2.0 if c in title_concepts else 0.0) for c in concepts}
    ranked = {c: i + 1 for i, c in enumerate(sorted(concepts, key=lambda c: (-sums[c], c)))}
    similarity = described.similarity if described is not None else {}
    rows = []
    last = max(0, sentences - 1)
    for c in concepts:
        ms = by_concept.get(c, [])
        n = len(ms)
        above = facts.ancestors.get(c, frozenset())
        prior = priors.get(c)
        rate = prior.rate if prior is not None else PRIOR_RATE
        in_title = c in title_concepts
        bm25, rank, z = similarity.get(c, NONE)
        new = c == extra
        # A described concept's evidence sentence stands in for a mention's place (opening, focus, closing sentence).
        placed = ms or ([(c, described.sentence[0], described.sentence[0], 0.0, described.place, described.place in focus, 0, False, False)]
                        if new and described is not None and described.sentence is not None else [])
        rows.append([
            math.log1p(n),
            max((m[3] for m in ms), default=0.0),
            math.log1p(sum(m[3] for m in ms)),
            float(in_title),
            float(has_title),
            float(in_title and n == 0),
            float(any(m[4] == 0 for m in placed)),
            (placed[0][1] / text_length) if placed and text_length else 1.0,
            float(bool(placed) and last > 0 and all(m[4] == last for m in placed)),
            float(any(m[5] for m in placed)),
            (sum(1 for m in ms if m[6]) / n) if n else 0.0,
            (sum(1 for m in ms if m[6] == PASSING_CONTRAST) / n) if n else 0.0,
            (sum(m[7] for m in ms) / n) if n else 0.0,
            n / total,
            0.0 if new else 1.0 / ranked[c],
            -math.log10(max(rate, 1e-5)),
            prior.topicality if prior is not None else 1.0,
            float(facts.depth.get(c, 0)),
            math.log1p(facts.narrower.get(c, 0)),
            float(sum(1 for d in present if d != c and c in facts.ancestors.get(d, ()))),
            float(len(above & present)),
            float(c in facts.datasets),
            float(c in facts.tools),
            float(c in facts.umbrellas),
            float(n > 0 and all(m[8] for m in ms)),
            float(max((_words(m) for m in ms), default=0)),
            bm25,
            rank,
            z,
            bm25 if new else 0.0,
            z if new else 0.0,
            float(new),
        ])
    return concepts, rows


def _words(note: MentionNote) -> int:
    """Words of a mention, from its span length (a cheap proxy: characters / 6, at least 1)."""
    return max(1, round((note[2] - note[1]) / 6))


_IN_TITLE, _CONTRAST, _FOCUS, _LAST, _TOOL, _UMBRELLA, _DESCRIBED = (
    FEATURES.index(name) for name in ("in_title", "contrast_share", "focus", "last_sentence_only", "tool", "umbrella", "described")
)


def choose(scores: Sequence[tuple[float, bool, bool]], threshold: float) -> list[bool]:
    """Which of a paper's candidates are subjects, from (probability, eligible, named) triples (`judged`): those at
    the threshold that `eligible` allows. A paper none of whose candidates passes both keeps its most probable
    candidate that it names (its described concept only when it names none): an abstract that names neural networks
    only to set the scene is still about something kg can find it by, and a paper no query reaches is lost to its
    reader."""
    chosen = [p >= threshold and ok for p, ok, _ in scores]
    if scores and not any(chosen):
        named = [i for i, s in enumerate(scores) if s[2]] or list(range(len(scores)))
        chosen[max(named, key=lambda i: scores[i][0])] = True
    return chosen


def judged(probability: float, row: Sequence[float]) -> tuple[float, bool, bool]:
    """What `choose` needs of a candidate: its probability, whether it is `eligible`, whether the paper names it."""
    return probability, eligible(row), row[_DESCRIBED] == 0.0


def eligible(row: Sequence[float]) -> bool:
    """Whether a candidate may be a subject at all; the title naming it always makes it one.

    Readers do not count as a topic what the paper only sets itself against ("unlike X", "compared to X"), and,
    outside the sentences that say what the paper does, neither what only the closing sentence names (the
    evaluation set-up, an outlook) nor a model, tool or metric (a baseline, the model a method is applied to), nor
    an umbrella concept ("machine learning" in "Machine learning has transformed science"). A concept the paper only
    describes (kg.extract.definitions) must be described in one of the sentences that say what the paper does:
    elsewhere its words are the setting or the related work (decision 0062). Examples ("tasks such as X") and items
    of an enumeration are left to the scorer, which has each as a feature: experts list many of them, and a rule the
    scorer could not overrule cost recall at the same precision once it was fitted on expert lists (decision 0070).
    """
    if row[_IN_TITLE] == 1.0:
        return True
    return not (
        row[_CONTRAST] == 1.0
        or (row[_FOCUS] == 0.0 and (row[_LAST] == 1.0 or row[_TOOL] == 1.0 or row[_UMBRELLA] == 1.0 or row[_DESCRIBED] == 1.0))
    )
