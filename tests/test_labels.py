"""Label tokens for the matchers: cached on disk, and the patterns made from them are those Docs would give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from spacy.attrs import NORM, ORTH

from kg.extract import labels, lexicon, matcher
from kg.extract import scheme as scheme_
from kg.extract.matcher import make_matchers, make_nlp


def _reference(nlp, scheme: scheme_.Scheme):
    """The matchers as they were made before the cache: a Doc of every label variant, from a twin pipeline."""
    from spacy.matcher import PhraseMatcher

    make_doc = make_nlp().make_doc
    folded, exact = PhraseMatcher(nlp.vocab, attr="NORM"), PhraseMatcher(nlp.vocab, attr="ORTH")
    owners: dict[str, set[str]] = {}
    for concept in scheme.concepts.values():
        for label in concept.labels:
            if (label in concept.ambiguous or matcher._is_acronym(label)) and not matcher._read_in_context(concept, label):
                owners.setdefault(label, set()).add(concept.iri)
    for concept in sorted(scheme.concepts.values(), key=lambda c: c.iri):
        for label in concept.labels:
            if label in owners:
                if len(owners[label]) == 1 or concept.senses:  # a shared label goes to each concept with sense terms
                    exact.add(concept.iri, [make_doc(f) for f in {label} | ({label + "s"} if label[-1:].isupper() else set())])
            else:
                folded.add(concept.iri, [make_doc(v) for v in matcher._variants(label)])
    return folded, exact


def _patterns(m) -> dict:
    return m.__reduce__()[1][1]  # (unpickle_matcher, (vocab, patterns by key, callbacks, attr))


def test_matchers_from_the_cache_equal_matchers_from_docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_CACHE_DIR", str(tmp_path))
    scheme = scheme_.load()
    nlp = make_nlp()
    folded, exact = _reference(nlp, scheme)
    cold = make_matchers(nlp, scheme)  # nothing cached yet: tokenized now, and the cache written
    (cache,) = tmp_path.glob("label-tokens-spacy-*.json")
    warm = make_matchers(nlp, scheme)
    for made in (cold, warm):
        assert _patterns(made[0]) == _patterns(folded) and _patterns(made[1]) == _patterns(exact)
    assert len(_patterns(folded)) > 1000 and len(_patterns(exact)) > 100
    assert len(json.loads(cache.read_text(encoding="utf-8"))["tokens"]) > 20000


TRICKY = ["don't", "can't stop", "U.S. models", "e.g. transformers", "state-of-the-art models", "Dr. Smith's GANs", "GPT-4o", "k-NN", "Q&A"]


def test_label_tokens_split_and_norm_as_the_pipeline_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_CACHE_DIR", str(tmp_path))
    nlp = make_nlp()
    for found in (labels.label_tokens(TRICKY), labels.label_tokens(TRICKY)):  # tokenized, then from the cache
        for text in TRICKY:
            doc = nlp.make_doc(text)
            assert found.tokens[text] == tuple(t.text for t in doc)
            norms = [found.norms.get((text, i)) or matcher._norm(t) for i, t in enumerate(found.tokens[text])]
            assert [nlp.vocab.strings[h] for h in doc.to_array([NORM]).tolist()] == norms
            assert doc.to_array([ORTH]).tolist() == [nlp.vocab.strings[t] for t in found.tokens[text]]
    assert found.norms[("don't", 1)] == "not"  # an exception's own norm, not the word's


def test_a_broken_or_foreign_cache_is_ignored_and_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import spacy

    monkeypatch.setenv("KG_CACHE_DIR", str(tmp_path))
    path = tmp_path / f"label-tokens-spacy-{spacy.__version__}.json"
    right = labels.label_tokens(TRICKY)
    for content in ("{broken", '{"format": 1, "tokens": {}}', json.dumps({"format": labels.FORMAT, "tokens": {"k-NN": 5}, "norms": []})):
        path.write_text(content, encoding="utf-8")
        assert labels.label_tokens(TRICKY) == right
        assert labels._read(path) == right  # rewritten whole


def test_an_unwritable_cache_folder_costs_time_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("KG_CACHE_DIR", str(tmp_path / "file" / "kg"))
    found = labels.label_tokens(["reinforcement learning"])
    assert found.tokens == {"reinforcement learning": ("reinforcement", "learning")}


def test_the_cache_folder_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KG_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert labels.cache_dir() == tmp_path / "xdg" / "kg"
    monkeypatch.setenv("KG_CACHE_DIR", str(tmp_path / "own"))
    assert labels.cache_dir() == tmp_path / "own"


def test_the_lemma_dict_answers_as_spacys_lookup_table() -> None:
    from spacy.lookups import load_lookups

    table = load_lookups("en", ["lemma_lookup"]).get_table("lemma_lookup")
    lemmas = lexicon.lemmas()
    assert len(lemmas) == len(table) > 10000
    assert all(table.get(word) == lemma for word, lemma in lemmas.items())
    assert [lexicon.norm(w) for w in ("Models", "processes", "bias", "learned", "GANs")] == ["model", "process", "bias", "learned", "gans"]  # only words the table knows
