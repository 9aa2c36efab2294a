"""Loose mentions (kg.extract.loose): a label's words apart, turned round a preposition, or in another form."""

from __future__ import annotations

import pytest

from kg import scheme as scheme_
from kg.extract import PhraseExtractor
from kg.ingest import Paper

KGC = "https://w3id.org/kg/concept/"


@pytest.fixture(scope="module")
def bundled() -> PhraseExtractor:
    return PhraseExtractor(scheme_.load())


def mentions(extractor: PhraseExtractor, text: str) -> dict[str, tuple[str, bool]]:
    """concept slug -> (the mention's text, loose?) for the paper's abstract (first mention of each concept)."""
    (read,) = extractor.read([Paper("p", text)])
    out: dict[str, tuple[str, bool]] = {}
    for note in read.notes:
        out.setdefault(note[0].removeprefix(KGC), (text[note[1] : note[2]], bool(note[9])))
    return out


@pytest.mark.parametrize(
    ("text", "concept", "span"),
    [
        ("We study Robust Offline Reinforcement Learning in practice.", "robust-reinforcement-learning", "Robust Offline Reinforcement Learning"),
        ("We introduce Transformers on Graphs for molecules.", "graph-transformer", "Transformers on Graphs"),
        ("We consider the federated scenario with many clients.", "federated-learning", "federated scenario"),
        ("We train ensemble models on tabular data.", "ensemble-learning", "ensemble models"),
        ("The resulting model is mechanistically interpretable.", "mechanistic-interpretability", "mechanistically interpretable"),
    ],
)
def test_a_label_written_apart_turned_or_derived_is_a_loose_mention(bundled, text, concept, span):
    found = mentions(bundled, text)
    assert found.get(concept) == (span, True)


def test_a_phrase_match_is_not_repeated_loosely_nor_split_into_its_parts(bundled):
    found = mentions(bundled, "We study deep reinforcement learning for robots.")
    assert found["deep-reinforcement-learning"] == ("deep reinforcement learning", False)
    assert "reinforcement-learning" not in found  # inside the longer phrase, as for the phrase matcher


@pytest.mark.parametrize(
    "text",
    [
        "We align the sharpness of our bounds with the rates.",  # an ambiguous label stays with its sense rule
        "Reinforcement, learning and optimization are discussed.",  # punctuation ends a stretch
        "This is learned by reinforcement from the critic.",  # out of order: not a loose mention of RL
    ],
)
def test_no_loose_mention_across_punctuation_out_of_order_or_for_ambiguous_labels(bundled, text):
    found = mentions(bundled, text)
    assert not any(loose for _, loose in found.values()), found


def test_loose_mentions_are_evidence_spans_of_the_stored_abstract(bundled):
    text = "Our approach: <i>Robust</i> Offline Reinforcement Learning with $k$ critics."
    (ex,) = bundled([Paper("p", text)])
    for link in ex.links:
        for m in link.mentions:
            assert text[m.start : m.end] == m.exact
    assert any(l.concept == KGC + "robust-reinforcement-learning" for l in ex.links)
