"""Concepts a paper describes without naming them (kg.extract.definitions), with the bundled scheme and scorer."""

from __future__ import annotations

import json

import pytest

import kg
from kg.extract import make_extractor
from kg.extract import scheme as scheme_
from kg.extract.definitions import DefinitionIndex, Query, word_key
from kg.extract.ingest import Paper
from kg.extract.matcher import make_nlp

KGC = "https://w3id.org/kg/concept/"

# The topic is described, never named: no label of the evidence lower bound ("ELBO", "variational lower bound",
# "variational bound") is written; its definition is "A lower bound on the log marginal likelihood maximised in
# variational inference."
DESCRIBED = ("We propose to train variational autoencoders by maximising a lower bound to the log marginal likelihood of the data. "
             "Our estimator tightens the bound with importance weights and reduces the variance of its gradients.")


@pytest.fixture(scope="module")
def extractor():
    return make_extractor(scheme_.load())


def links(extraction) -> dict[str, object]:
    return {link.concept.removeprefix(KGC): link for link in extraction.links}


def test_a_described_topic_is_a_candidate_with_its_sentence_as_evidence(extractor) -> None:
    (ex,) = extractor([Paper("p", DESCRIBED)])
    link = links(ex)["evidence-lower-bound"]
    assert link.described
    (mention,) = link.mentions
    assert DESCRIBED[mention.start : mention.end] == mention.exact
    assert mention.exact == "We propose to train variational autoencoders by maximising a lower bound to the log marginal likelihood of the data."
    assert link.subject


def test_the_evidence_sentence_is_in_the_graph(tmp_path) -> None:
    source = tmp_path / "p.jsonl"
    source.write_text(json.dumps({"id": "p", "title": "Tighter bounds for variational autoencoders", "abstract": DESCRIBED}) + "\n", encoding="utf-8")
    graph = kg.write(kg.build([source]), tmp_path / "p.ttl")
    rows = list(kg.query("evidence", {"paper": "p", "concept": "evidence lower bound"}, graph=graph))
    assert [(r["field"], r["start"], r["exact"]) for r in rows] == [("abstract", 0, DESCRIBED.split(". ")[0] + ".")]
    subjects = {r["concept"] for r in kg.query("concepts-of-paper", {"paper": "p"}, graph=graph)}
    assert KGC + "evidence-lower-bound" in {str(s) for s in subjects} | {s for s in map(str, subjects)}


def test_a_definition_word_in_passing_makes_no_subject(extractor) -> None:
    text = ("We present a convolutional network for semantic segmentation of street scenes. It is trained on a small set "
            "of labelled images and reaches state-of-the-art accuracy on Cityscapes, with a reward for thin structures.")
    (ex,) = extractor([Paper("p", text)])
    described = [link for link in ex.links if link.described]
    assert len(described) == 1  # the paper's best-scoring concept the matcher did not find
    assert not described[0].subject


def test_one_described_candidate_at_most_and_none_for_wordless_text(extractor) -> None:
    (ex,) = extractor([Paper("p", "The of and to in 12 345.")])
    assert ex.links == ()


def test_words_are_compared_by_lemma_without_stop_words() -> None:
    assert [word_key(w) for w in ("the", "networks", "learned", "second", "x", "states")] == [None, "network", "learn", "second", None, "state"]


def test_a_users_scheme_gets_described_candidates_too(tmp_path) -> None:
    ttl = tmp_path / "s.ttl"
    ttl.write_text(
        "@prefix skos: <http://www.w3.org/2004/02/skos/core#> . @prefix ex: <https://example.org/c/> .\n"
        'ex:a a skos:Concept ; skos:prefLabel "apple picking"@en ; skos:definition "Robots that harvest fruit from orchard trees."@en .\n'
        'ex:b a skos:Concept ; skos:prefLabel "wine tasting"@en ; skos:definition "Judging the flavour of fermented grape juice."@en .\n',
        encoding="utf-8",
    )
    nlp = make_nlp()
    index = DefinitionIndex(scheme_.load([ttl]), nlp)
    text = "our robot harvests fruit in the orchard"
    (d,) = index.describe_all([Query(index.tokens(nlp(text)), (0,), text, frozenset())], nlp.vocab.strings)
    assert d.concept == "https://example.org/c/a"
    assert d.sentence == (0, 39)


def test_a_concept_described_outside_what_the_paper_does_is_no_subject(extractor) -> None:
    # The same description of the evidence lower bound, now as the setting the paper starts from, not what it does.
    setting = ("Variational autoencoders are trained by maximising a lower bound to the log marginal likelihood of the data. "
               "We study the calibration of image classifiers under distribution shift and propose a temperature schedule.")
    (ex,) = extractor([Paper("p", setting)])
    link = links(ex).get("evidence-lower-bound")
    assert link is not None and link.described and link.mentions  # still the described candidate, with its sentence
    assert not link.subject


def test_chunks_give_the_same_candidates_as_one_paper_at_a_time(extractor) -> None:
    papers = [Paper(f"p{i}", DESCRIBED if i % 2 else "We propose a reward model for robot grasping from human preferences.") for i in range(5)]
    together = extractor(papers)
    alone = [extractor([p])[0] for p in papers]
    assert together == alone
