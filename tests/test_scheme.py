"""The concept scheme and the ontology: they parse, pass their SHACL shapes, and keep the scheme's conventions."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from kg.extract import scheme as scheme_

ROOT = Path(__file__).parent.parent
ONTOLOGY = ROOT / "ontology"
GOLD_VOCABULARY = ROOT.parent / "shared" / "gold" / "topic-vocabulary.txt"
EXAMPLE = ONTOLOGY / "examples" / "acm-ccs-excerpt.ttl"
SKOS = "http://www.w3.org/2004/02/skos/core#"
KG = "https://w3id.org/kg/ontology#"
KGC = "https://w3id.org/kg/concept/"


@pytest.fixture(scope="module")
def scheme() -> scheme_.Scheme:
    return scheme_.load()


@pytest.fixture(scope="module")
def tops(scheme: scheme_.Scheme) -> set[str]:
    return {t.subject.value for t in scheme.triples if t.predicate.value == SKOS + "topConceptOf"}


@pytest.fixture(scope="module")
def nlp_and_matchers(scheme: scheme_.Scheme):
    from kg.extract import make_matchers, make_nlp

    nlp = make_nlp()
    return nlp, make_matchers(nlp, scheme)


def _shapes():
    import rdflib

    return rdflib.Graph().parse(ONTOLOGY / "shapes.ttl")


def _validate(graph) -> tuple[bool, str]:
    import pyshacl

    conforms, _, text = pyshacl.validate(graph, shacl_graph=_shapes(), advanced=True)
    return conforms, text


def _validate_papers(graph) -> tuple[bool, str]:
    """`_validate` on a built graph less the concepts no paper, annotation or analysis refers to: the scheme
    is validated whole once (test_shapes_pass_on_the_scheme, test_shapes_pass_on_a_built_graph), and its
    ~1,900 concepts are most of a small graph's validation time (7.8 s against 2.3 s for the sample)."""
    import rdflib

    concept = rdflib.URIRef(SKOS + "Concept")
    concepts = set(graph.subjects(rdflib.RDF.type, concept))
    used = {o for s, _, o in graph if o in concepts and s not in concepts}
    part = rdflib.Graph()
    for triple in graph:
        if triple[0] not in concepts or triple[0] in used:
            part.add(triple)
    return _validate(part)


def _scheme_graph(files):
    import rdflib

    graph = rdflib.Graph()
    for path in files:
        graph.parse(path)
    return graph


# ---- parsing and size ----------------------------------------------------------------------------


def test_every_ontology_file_parses_with_both_engines() -> None:
    import pyoxigraph as ox
    import rdflib

    files = sorted(ONTOLOGY.rglob("*.ttl"))
    assert {p.name for p in files} >= {"schema.ttl", "shapes.ttl", "00-scheme.ttl", "acm-ccs-excerpt.ttl"}
    for path in files:
        assert list(ox.parse(path=str(path), format=ox.RdfFormat.TURTLE)), path
        assert len(rdflib.Graph().parse(path)) > 0, path


def test_scheme_is_large_and_versioned(scheme: scheme_.Scheme, tops: set[str]) -> None:
    assert len(scheme.concepts) >= 1000
    assert scheme.iris == (KGC + "scheme",)
    assert scheme.versions == ("1.4.0",)
    assert len(tops) == 25 and KGC + "reinforcement-learning" in tops


def test_every_concept_has_one_label_and_a_definition(scheme: scheme_.Scheme) -> None:
    missing = [c.iri for c in scheme.concepts.values() if not c.definition or not c.label.strip()]
    assert not missing
    prefs = defaultdict(list)
    for t in scheme.triples:
        if t.predicate.value == SKOS + "prefLabel":
            prefs[t.subject.value].append(t.object.value)
    assert [iri for iri, labels in prefs.items() if len(labels) != 1] == []


def test_slugs_follow_the_convention(scheme: scheme_.Scheme) -> None:
    bad = [c.iri for c in scheme.concepts.values() if not re.fullmatch(re.escape(KGC) + r"[a-z0-9]+(-[a-z0-9]+)*", c.iri)]
    assert bad == []


def test_wikidata_matches_are_entity_iris(scheme: scheme_.Scheme) -> None:
    matches = [t.object.value for t in scheme.triples if t.predicate.value == SKOS + "exactMatch"]
    assert matches, "a few concepts link to Wikidata"
    assert [m for m in matches if not re.fullmatch(r"http://www\.wikidata\.org/entity/Q[1-9][0-9]*", m)] == []


# ---- hierarchy -----------------------------------------------------------------------------------


def test_broader_targets_exist_and_have_no_cycles(scheme: scheme_.Scheme) -> None:
    dangling = sorted({b for c in scheme.concepts.values() for b in c.broader if b not in scheme.concepts})
    assert dangling == []
    for concept in scheme.concepts.values():
        assert concept.iri not in scheme.ancestors(concept.iri), f"cycle through {concept.iri}"


def test_related_never_joins_a_concept_to_its_ancestors(scheme: scheme_.Scheme) -> None:
    """SKOS S27: skos:related is disjoint with skos:broaderTransitive."""
    related = [(t.subject.value, t.object.value) for t in scheme.triples if t.predicate.value == SKOS + "related"]
    assert len(related) >= 10  # the cross-field links of ontology/README.md
    clashes = [(a, b) for a, b in related if b in scheme.ancestors(a) or a in scheme.ancestors(b)]
    assert not clashes


def test_model_families_do_not_roll_up_to_application_fields(scheme: scheme_.Scheme) -> None:
    """An LLM paper is not thereby an NLP paper; a distillation paper not thereby a compression paper."""
    assert KGC + "language-model" in scheme.ancestors(KGC + "large-language-model")
    assert KGC + "natural-language-processing" not in scheme.ancestors(KGC + "large-language-model")
    assert KGC + "model-compression" not in scheme.ancestors(KGC + "policy-distillation")
    assert KGC + "natural-language-processing" in scheme.ancestors(KGC + "machine-translation")
    assert KGC + "model-compression" in scheme.ancestors(KGC + "quantization")


def test_every_concept_reaches_a_top_concept(scheme: scheme_.Scheme, tops: set[str]) -> None:
    stranded = [c.iri for c in scheme.concepts.values() if c.iri not in tops and not (scheme.ancestors(c.iri) & tops)]
    assert stranded == []
    # top concepts are the roots, and only they are
    assert {c.iri for c in scheme.concepts.values() if not c.broader} == tops


def test_poly_hierarchy_is_kept(scheme: scheme_.Scheme) -> None:
    rlhf = scheme.ancestors(KGC + "reinforcement-learning-from-human-feedback")
    assert {KGC + "reinforcement-learning", KGC + "alignment"} <= rlhf


# ---- labels --------------------------------------------------------------------------------------


def _matcher_key(nlp, label: str, exact: bool) -> str:
    """What the extractor's matcher compares: exact text for acronyms/ambiguous labels, else folded lemmas."""
    doc = nlp.make_doc(label)  # make_nlp sets each word's NORM (folded lemma) on the vocabulary
    return "exact:" + " ".join(t.text for t in doc) if exact else " ".join(t.norm_ for t in doc)


def test_no_label_is_shared_unless_ambiguous(scheme: scheme_.Scheme, nlp_and_matchers) -> None:
    from kg.extract.matcher import _is_acronym

    nlp, _ = nlp_and_matchers
    owners: dict[str, set[tuple[str, bool]]] = defaultdict(set)
    for c in scheme.concepts.values():
        for label in c.labels:
            exact = label in c.ambiguous or _is_acronym(label)
            owners[_matcher_key(nlp, label, exact)].add((c.iri, label in c.ambiguous))
            if exact:  # an acronym must not also be another concept's ordinary (case-folded) label
                owners[_matcher_key(nlp, label, False)].add((c.iri, label in c.ambiguous))
    shared = {k: v for k, v in owners.items() if len({iri for iri, _ in v}) > 1 and not all(a for _, a in v)}
    assert shared == {}


def test_ambiguous_acronyms_are_marked(scheme: scheme_.Scheme) -> None:
    marked = {label for c in scheme.concepts.values() for label in c.ambiguous}
    assert {"RL", "GP", "SSL", "NAS", "DP", "IRL", "CoT", "ML", "FL"} <= marked
    for c in scheme.concepts.values():
        assert set(c.ambiguous) <= set(c.labels), c.iri


def test_every_label_is_matched_by_the_extractor(scheme: scheme_.Scheme, nlp_and_matchers) -> None:
    from kg.extract.matcher import _is_acronym

    nlp, (folded, exact) = nlp_and_matchers
    # An exact-case label of two concepts ("SSL") is matched only where a paper defines it (kg.extract.acronyms).
    owners: dict[str, set[str]] = defaultdict(set)
    for c in scheme.concepts.values():
        for label in c.labels:
            if label in c.ambiguous or _is_acronym(label):
                owners[label].add(c.iri)
    pairs = [(c.iri, label) for c in scheme.concepts.values() for label in c.labels if len(owners.get(label, ())) < 2]
    unmatched = []
    for (iri, label), doc in zip(pairs, nlp.pipe(label for _, label in pairs)):
        whole = {nlp.vocab.strings[m] for m, s, e in [*folded(doc), *exact(doc)] if s == 0 and e == len(doc)}
        if iri not in whole:
            unmatched.append((iri, label))
    assert unmatched == []


def test_extractor_finds_hyphen_and_plural_variants(scheme: scheme_.Scheme, nlp_and_matchers) -> None:
    nlp, (folded, exact) = nlp_and_matchers
    text = "We study multi armed bandits, Multi-Armed Bandits, LLMs, GANs and Gaussian processes with RL."
    doc = nlp(text)
    found = {nlp.vocab.strings[m] for m, _, _ in [*folded(doc), *exact(doc)]}
    for slug in ("multi-armed-bandit", "large-language-model", "generative-adversarial-network", "gaussian-process", "reinforcement-learning"):
        assert KGC + slug in found, slug
    from kg.extract.cleanup import clean

    doc = nlp(clean("The $2$-Wasserstein distance between distributions.").text)  # terms glued to TeX math still match
    assert KGC + "optimal-transport" in {nlp.vocab.strings[m] for m, _, _ in folded(doc)}
    # an ambiguous acronym in the wrong case is not a mention
    doc = nlp("the rl of gp")
    assert not [m for m in exact(doc)]


def test_a_word_with_a_common_prefix_also_matches_split_after_it(scheme: scheme_.Scheme, nlp_and_matchers) -> None:
    """Authors write "non-convex" and "nonconvex", "sub-population" and "subpopulation"; "non-linear dynamical systems"
    is no mention of linear dynamical systems."""
    nlp, (folded, _) = nlp_and_matchers
    doc = nlp("Non-convex losses under sub-population shift; multi-modal learning of non-linear dynamical systems.")
    spans = {(nlp.vocab.strings[m], doc[s:e].text) for m, s, e in folded(doc)}
    for slug, text in (("nonconvex-optimization", "Non-convex"), ("subpopulation-shift", "sub-population shift"),
                       ("multimodal-learning", "multi-modal learning"), ("dynamical-systems", "non-linear dynamical systems")):
        assert (KGC + slug, text) in spans, slug
    from kg.extract.matcher import _variants

    assert _variants("autoencoder") == {"autoencoder", "auto-encoder", "auto encoder"}
    assert _variants("deep learning") == {"deep learning", "deep-learning"}  # "deep" is no prefix word: nothing else


def test_all_gold_vocabulary_topics_are_named(scheme: scheme_.Scheme) -> None:
    if not GOLD_VOCABULARY.exists():
        pytest.skip("shared gold vocabulary not available")

    def norm(s: str) -> str:
        s = s.lower().replace("-", " ")
        return s[:-1] if s.endswith("s") else s

    names: dict[str, set[str]] = defaultdict(set)
    for c in scheme.concepts.values():
        for label in c.labels:
            names[norm(label)].add(c.iri)
    topics = [t for t in GOLD_VOCABULARY.read_text().splitlines() if t.strip()]
    assert len(topics) == 119
    assert [t for t in topics if len(names.get(norm(t), ())) != 1] == []
    # spot-check that the names sit on the right concepts
    assert names[norm("RLHF")] == names[norm("reinforcement learning from human feedback")]
    assert names[norm("offline RL")] == {KGC + "offline-reinforcement-learning"}


# ---- ontology and shapes -------------------------------------------------------------------------


def test_schema_declares_every_kg_term_a_build_uses(sample_ttl: Path) -> None:
    import rdflib

    schema = rdflib.Graph().parse(ONTOLOGY / "schema.ttl")
    declared = {str(s) for s in schema.subjects() if str(s).startswith(KG)}
    assert {KG + n for n in ("score", "ambiguousLabel", "Dataset", "Method", "schemeVersion", "softwareVersion", "inputName")} <= declared
    graph = rdflib.Graph().parse(sample_ttl)
    used = {str(t) for s, p, o in graph for t in (p, o) if str(t).startswith(KG)}
    assert used and used <= declared


def test_shapes_pass_on_the_scheme() -> None:
    conforms, report = _validate(_scheme_graph(scheme_.default_scheme_files()))
    assert conforms, report


def test_shapes_pass_on_a_built_graph(sample_ttl: Path) -> None:
    """The built graph less the scheme's unused concepts: those are the scheme's own triples, unchanged (checked
    here), which test_shapes_pass_on_the_scheme validates, and every shape looks at a node's own triples only
    (the SPARQL targets select annotations), so validating them again took time and added no coverage (measured
    in one process, load average 15 on 2 cores: the whole graph 14.9-17.6 s, this part 4.9 s, the scheme 10.2 s)."""
    import rdflib

    graph = rdflib.Graph().parse(sample_ttl)
    scheme_graph = _scheme_graph(scheme_.default_scheme_files())
    concepts = set(graph.subjects(rdflib.RDF.type, rdflib.URIRef(SKOS + "Concept")))
    used = {o for s, _, o in graph if o in concepts and s not in concepts}
    assert len(concepts) > 1000 > len(used) > 10  # the whole scheme is in the graph, and a part of it is used
    unused = {t for t in graph if t[0] in concepts - used}
    assert unused and unused <= set(scheme_graph), sorted(unused - set(scheme_graph))[:5]
    conforms, report = _validate_papers(graph)
    assert conforms, report
    versions = {str(o) for o in graph.objects(None, rdflib.URIRef(KG + "schemeVersion"))}
    assert versions == {"1.4.0"}


def test_shapes_catch_broken_graphs(small_graph_ttl: Path) -> None:
    import rdflib

    OA = rdflib.Namespace("http://www.w3.org/ns/oa#")
    graph = rdflib.Graph().parse(small_graph_ttl)
    assert _validate(graph)[0], "the unbroken graph conforms"
    quote = next(graph.subjects(OA.exact, None))
    graph.set((quote, OA.exact, rdflib.Literal("not what the abstract says")))
    conforms, report = _validate(graph)
    assert not conforms and "oa:exact quote differs" in report

    graph = rdflib.Graph().parse(small_graph_ttl)
    concept = rdflib.URIRef(KGC + "made-up")  # a kg concept that breaks the scheme's conventions
    graph.add((concept, rdflib.RDF.type, rdflib.URIRef(SKOS + "Concept")))
    graph.add((concept, rdflib.URIRef(SKOS + "prefLabel"), rdflib.Literal("made up", lang="en")))
    graph.add((concept, rdflib.URIRef(SKOS + "prefLabel"), rdflib.Literal("invented", lang="en")))
    graph.add((concept, rdflib.URIRef(KG + "ambiguousLabel"), rdflib.Literal("MU", lang="en")))
    conforms, report = _validate(graph)
    assert not conforms
    for message in ("one-line English skos:definition", "exactly one skos:prefLabel", "one skos:prefLabel per language",
                    "ambiguous label must also be a skos:altLabel", "skos:topConceptOf the scheme"):
        assert message in report, message


# ---- user schemes (kg build --scheme) -------------------------------------------------------------

ABSTRACT = (
    "ICML 2024\n\n"
    "We study information extraction from scientific text with neural networks and show that "
    "information extraction benefits from large language models trained with reinforcement learning.\n"
)


@pytest.fixture()
def papers(tmp_path: Path) -> Path:
    path = tmp_path / "papers.txt"
    path.write_text(ABSTRACT)
    return path


@pytest.fixture()
def small_graph_ttl(papers: Path, tmp_path: Path) -> Path:
    """A graph of one paper over the small example scheme: quick to validate."""
    import kg

    return kg.write(kg.build([papers], schemes=[EXAMPLE], default_scheme=False), tmp_path / "small.ttl")


def _subjects(built) -> set[str]:
    return {link.concept for e in built.extractions for link in e.links}


def test_user_scheme_adds_concepts(papers: Path) -> None:
    import kg

    built = kg.build([papers], schemes=[EXAMPLE])
    assert KGC + "reinforcement-learning" in built.scheme.concepts
    assert "https://example.org/acm-ccs/information-extraction" in built.scheme.concepts
    assert set(built.scheme.versions) == {"1.4.0", "2012-excerpt-1"}
    found = _subjects(built)
    assert KGC + "reinforcement-learning" in found
    assert "https://example.org/acm-ccs/information-extraction" in found or KGC + "information-extraction" in found


def test_no_default_scheme_replaces_it(papers: Path) -> None:
    import kg

    built = kg.build([papers], schemes=[EXAMPLE], default_scheme=False)
    assert not [iri for iri in built.scheme.concepts if iri.startswith(KGC)]
    assert built.scheme.versions == ("2012-excerpt-1",)
    assert _subjects(built) == {
        "https://example.org/acm-ccs/information-extraction",
        "https://example.org/acm-ccs/neural-networks",
    }


def test_cli_build_with_user_scheme(papers: Path, tmp_path: Path) -> None:
    import rdflib
    from click.testing import CliRunner

    from kg.cli import cli

    out = tmp_path / "g.ttl"
    args = ["build", str(papers), "-o", str(out), "--no-render", "--scheme", str(EXAMPLE), "--no-default-scheme"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    graph = rdflib.Graph().parse(out)
    assert len(list(graph.query("SELECT ?c WHERE { ?c a <http://www.w3.org/2004/02/skos/core#Concept> }"))) == 12
    conforms, report = _validate(graph)
    assert conforms, report

    bad = tmp_path / "bad.ttl"
    bad.write_text("@prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n<x> a skos:Concept .\n")
    result = CliRunner().invoke(cli, ["build", str(papers), "-o", str(out), "--no-render", "--scheme", str(bad)])
    assert result.exit_code == 1 and "prefLabel" in result.output


def _graph_suffixes() -> list[str]:
    from kg.graph import files

    return sorted({s for _, s in files.FORMATS.values()} | set(files.SUFFIX_ALIASES))


@pytest.mark.parametrize("suffix", _graph_suffixes())
def test_a_scheme_file_is_read_by_the_suffixes_a_graph_file_is(suffix: str, tmp_path: Path) -> None:
    """One suffix table (kg.graph.files) for graph and scheme files: `.owl` is RDF/XML for `--scheme` as for `--graph`."""
    from kg.graph import files
    from kg.graph.facts import read_facts

    source = Path(__file__).parent / "fixtures" / "query" / "mini-scheme.ttl"
    path = tmp_path / f"mini{suffix}"
    with path.open("wb") as out:
        files.write(files.read_triples(source), out, files.format_for(None, path))
    loaded = scheme_.load([path])
    assert "https://w3id.org/kg/concept/rlhf" in loaded.concepts
    assert set(read_facts(path).concepts) >= set(loaded.concepts)


def test_a_scheme_file_of_an_unknown_suffix_names_the_suffixes_kg_reads(tmp_path: Path) -> None:
    path = tmp_path / "mini.skos"
    path.write_text("", encoding="utf-8")
    with pytest.raises(scheme_.SchemeError, match=r"mini\.skos: unknown RDF format; use one of .*\.owl.*\.ttl"):
        scheme_.load([path])
