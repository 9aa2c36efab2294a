"""Benchmarks and data sets a paper contributes are linked at the level of their kind (kg.extract.benchmarks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kg

PAPERS = {
    "lm": ("", "Reasoning about space is hard. We introduce PathBench, a benchmark for testing whether large language "
               "models can plan paths. Models fail on long routes."),
    "nearest": ("", "Large language models are everywhere. In this paper we present a new benchmark of charts "
                    "for vision-language models, and we find that they misread axes."),
    "titled": ("LST-Bench: A Benchmark for Long Sequence Time Series Forecasting",
               "Forecasting long sequences matters for energy planning. We evaluate twenty models and report where they fail."),
    "plain": ("", "We present a new dataset of handwritten recipes, annotated by cooks, and release it to the public."),
    "used": ("", "We propose a pruning method for convolutional networks and evaluate it on the ImageNet dataset and "
                 "the CIFAR-10 benchmark."),
    "method": ("Dataset Distillation for Speech", "We propose a way to condense a training set into a few synthetic samples."),
    "used-title": ("Imitation Learning for Overtaking on the OSHA Dataset", "We train a transformer planner from demonstrations."),
}


@pytest.fixture(scope="module")
def links(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, kg.extract.Link]]:
    path: Path = tmp_path_factory.mktemp("benchmarks") / "papers.jsonl"
    path.write_text("".join(json.dumps({"id": i, "title": t, "abstract": a}) + "\n" for i, (t, a) in PAPERS.items()), encoding="utf-8")
    built = kg.build([path])
    label = {iri: c.label for iri, c in built.scheme.concepts.items()}
    return {p.id: {label[l.concept]: l for l in e.links if not l.described} for p, e in zip(built.papers, built.extractions)}


def test_a_contributed_benchmark_is_linked_to_its_kind_with_the_word_as_evidence(links) -> None:
    link = links["lm"]["language model benchmark"]
    assert [m.exact for m in link.mentions] == ["benchmark"]
    assert link.subject
    assert "NLP benchmark" not in links["lm"]  # the narrower field wins: a large language model is NLP too


def test_the_field_named_nearest_the_benchmark_gives_its_kind(links) -> None:
    assert "multimodal benchmark" in links["nearest"]
    assert "language model benchmark" not in links["nearest"]


def test_a_title_that_names_a_benchmark_gives_its_kind_with_title_evidence(links) -> None:
    link = links["titled"]["time series benchmark"]
    assert [m.exact for m in link.title_mentions] == ["Benchmark"]
    assert link.subject


def test_a_benchmark_of_no_named_field_is_a_data_set_contribution(links) -> None:
    assert [m.exact for m in links["plain"]["datasets and benchmarks"].mentions] == ["dataset"]


@pytest.mark.parametrize("paper", ["used", "method", "used-title"])
def test_data_sets_a_paper_uses_or_works_on_are_no_contribution(links, paper: str) -> None:
    kinds = {"datasets and benchmarks", "image dataset", "3D dataset", "audio dataset", "NLP benchmark"}
    assert not kinds & set(links[paper]), sorted(links[paper])
