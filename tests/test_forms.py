"""Scheme labels a writer puts in another form are candidates with their phrase as evidence (kg.extract.forms)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rdflib

import kg
from kg.core.errors import SchemeError

# paper id → (title, abstract); each names a label only in another form than the label's
PAPERS = {
    "inverted-title": ("Transformers on Graphs", "We study attention over the nodes and edges of molecules and social networks."),
    "inverted": ("", "We develop a theory of deep learning that explains why wide models generalize."),
    "acronym-plural": ("", "We study the alignment of LLMs with the preferences of their users."),
    "determiner": ("", "This paper studies the segmentation of the medical images that scanners produce."),
    "coordinated": ("Safe and Autonomous Reinforcement Learning", "Agents explore while keeping a budget of failures low."),
    "coordinated-list": ("", "We compare supervised, semi-supervised and unsupervised learning on tabular data."),
    "stacked": ("Robust Offline Reinforcement Learning", "We learn policies from logged data that hold up under perturbed dynamics."),
    # not these forms
    "phrase-goes-on": ("", "We propose generation of music videos from a song and a few photographs."),
    "whole-modifier": ("", "We give an analysis of a neural network that counts objects in images."),
    "sentence-boundary": ("", "We propose a new theory. Of deep learning, little is known; we test it on neural networks."),
    "verb-between": ("", "We study quantization and apply it to neural networks."),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    path: Path = tmp_path_factory.mktemp("forms") / "papers.jsonl"
    path.write_text("".join(json.dumps({"id": i, "title": t, "abstract": a}) + "\n" for i, (t, a) in PAPERS.items()), encoding="utf-8")
    return kg.build([path])


@pytest.fixture(scope="module")
def links(built) -> dict[str, dict[str, kg.extract.Link]]:
    label = {iri: c.label for iri, c in built.scheme.concepts.items()}
    return {p.id: {label[l.concept]: l for l in e.links if not l.described} for p, e in zip(built.papers, built.extractions)}


@pytest.mark.parametrize(
    ("paper", "label", "evidence"),
    [
        ("inverted", "deep learning theory", "theory of deep learning"),
        ("acronym-plural", "alignment of language models", "alignment of LLMs"),
        ("determiner", "medical image segmentation", "segmentation of the medical images"),
        ("coordinated-list", "supervised learning", "supervised, semi-supervised and unsupervised learning"),
        ("coordinated-list", "semi-supervised learning", "semi-supervised and unsupervised learning"),
    ],
)
def test_a_label_in_another_form_is_a_candidate_with_its_phrase_as_evidence(links, paper: str, label: str, evidence: str) -> None:
    link = links[paper][label]
    assert evidence in [m.exact for m in link.mentions]
    abstract = PAPERS[paper][1]
    assert all(abstract[m.start : m.end] == m.exact for m in link.mentions)


@pytest.mark.parametrize(
    ("paper", "label", "evidence"),
    [
        ("inverted-title", "graph transformer", "Transformers on Graphs"),
        ("coordinated", "safe reinforcement learning", "Safe and Autonomous Reinforcement Learning"),
        ("stacked", "robust reinforcement learning", "Robust Offline Reinforcement Learning"),
    ],
)
def test_a_title_in_another_form_gives_its_concept_with_title_evidence(links, paper: str, label: str, evidence: str) -> None:
    link = links[paper][label]
    assert [m.exact for m in link.title_mentions] == [evidence]


def test_the_labels_own_mentions_are_kept_beside_the_form(links) -> None:
    assert "offline reinforcement learning" in links["stacked"]  # "Robust Offline RL" holds offline RL as well
    assert "unsupervised learning" in links["coordinated-list"]


@pytest.mark.parametrize(
    ("paper", "phrase"),
    [
        ("phrase-goes-on", "generation of music"),  # "music videos": the modifier's phrase goes on
        ("whole-modifier", "analysis of"),  # "a neural network" is no "network" analysis
        ("sentence-boundary", "theory"),
        ("verb-between", "quantization and"),
    ],
)
def test_words_outside_one_phrase_are_no_form(links, paper: str, phrase: str) -> None:
    exact = [m.exact.lower() for link in links[paper].values() for m in (*link.mentions, *link.title_mentions)]
    assert not any(e.startswith(phrase) and e != phrase for e in exact), exact


def test_the_forms_evidence_is_in_the_graph(built, tmp_path: Path) -> None:
    out = tmp_path / "forms.ttl"
    kg.write(built, out)
    graph = rdflib.Graph().parse(out)
    exact = {str(o) for o in graph.objects(None, rdflib.URIRef("http://www.w3.org/ns/oa#exact"))}
    assert {"theory of deep learning", "alignment of LLMs", "Transformers on Graphs"} <= exact


def test_a_forms_file_without_a_form_names_the_file_and_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kg.extract import forms

    (tmp_path / "forms.tsv").write_text("inversion\tof for on\ncoordination\tand or\n", encoding="utf-8")
    monkeypatch.setattr(forms, "data_path", lambda _: tmp_path)
    with pytest.raises(SchemeError, match=r"forms\.tsv: no line for determiner; add one"):
        forms.read_words()
