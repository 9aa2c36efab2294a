"""Extraction rules on small real sentences (most from ICML 2024 abstracts), with a small fixture scheme."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.extract import PhraseExtractor
from kg.extract import scheme as scheme_
from kg.extract.acronyms import definitions
from kg.extract.cleanup import clean
from kg.extract.ingest import Paper

SCHEME = Path(__file__).parent / "fixtures" / "extract-scheme.ttl"
KGC = "https://w3id.org/kg/concept/"


@pytest.fixture(scope="module")
def extractor() -> PhraseExtractor:
    return PhraseExtractor(scheme_.load([SCHEME]))


@pytest.fixture(scope="module")
def bundled() -> PhraseExtractor:
    """The extractor with the bundled scheme and scorer."""
    return PhraseExtractor(scheme_.load())


def run(extractor: PhraseExtractor, *abstracts: str, titles: tuple[str | None, ...] = ()):
    papers = [Paper(f"p{i}", a, titles[i] if i < len(titles) else None) for i, a in enumerate(abstracts)]
    return extractor(papers)


def links(extraction) -> dict[str, object]:
    """The concepts the paper names (its described concept, kg.extract.definitions, left out)."""
    return {l.concept.removeprefix(KGC): l for l in extraction.links if not l.described}


def test_every_mention_indexes_the_stored_abstract(extractor):
    text = "We show a $\\mathcal{O}(1/\\sqrt{K})$ rate for <i>offline</i> reinforcement learning and model\u2010based RL."
    (ex,) = run(extractor, text)
    mentions = [m for l in ex.links for m in l.mentions]
    assert mentions
    assert all(text[m.start : m.end] == m.exact for m in mentions)


def test_case_and_plural_do_not_matter(extractor):
    (ex,) = run(extractor, "Large Language Models and Diffusion models are studied.")
    assert {"large-language-model", "diffusion-model"} <= set(links(ex))


def test_hyphens_match_as_written_as_spaces_or_dropped(extractor):
    found = [set(links(e)) for e in run(extractor, "We study multi-task learning.", "We study multi task learning.", "We study multitask learning.")]
    assert all("multi-task-learning" in f for f in found)


def test_longest_match_wins(extractor):
    (ex,) = run(extractor, "We study offline reinforcement learning from logged data.")
    assert set(links(ex)) == {"offline-reinforcement-learning"}


def test_verb_forms_are_not_lemmatised(extractor):
    # Only plurals fold: "learned representations" is not "representation learning".
    (ex,) = run(extractor, "Models learned representations of the data.")
    assert "representation-learning" not in links(ex)


def test_acronym_definition_links_later_uses():
    sch = scheme_.load([SCHEME])
    (ex,) = PhraseExtractor(sch)([Paper("p", "In this setting, the Q-function decomposes into successor features (SFs) and a reward mapping. Learning SFs with deep networks is hard.")])
    sf = links(ex)["successor-features"]
    assert [m.exact for m in sf.mentions] == ["successor features", "SFs"]


def test_schwartz_hearst_finds_the_long_form():
    text = "We propose Conformalized Amortized Neural Variational Inference (CANVI), a procedure."
    (d,) = definitions(text)
    assert (d.short, text[d.long_start : d.long_end]) == ("CANVI", "Conformalized Amortized Neural Variational Inference")


def test_an_acronym_defined_as_something_else_is_not_linked(extractor):
    (ex,) = run(extractor, "We study robust learning (RL) of features. Our RL method is simple.")
    assert "reinforcement-learning" not in links(ex)


def test_ambiguous_acronym_needs_exact_case(extractor):
    (lower,) = run(extractor, "The rl of this model is small.")
    (upper,) = run(extractor, "Deep RL agents learn from rewards.")
    assert "reinforcement-learning" not in links(lower)
    assert "reinforcement-learning" in links(upper)


def test_acronym_inside_a_hyphenated_name_is_not_a_mention(extractor):
    (ex,) = run(extractor, "We introduce a framework with probabilistically triggering arms (CMAB-MT).")
    assert "machine-translation" not in links(ex)


def test_cleanup_keeps_offsets_true():
    text = "A \\emph{diffusion} model with <b>k</b>-means and $\\ell_1$ and *QORA* &amp; caf\u00e9 \u2014 done."
    c = clean(text)
    assert "diffusion model" in c.text and "QORA" in c.text and "k-means" in c.text and "&" in c.text
    i = c.text.index("QORA")
    start, end = c.original(i, i + 4)
    assert text[start:end] == "QORA"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["$x^2$", "<i>", "</i>", "*", "**", "\\emph{", "}", "\u2010", "\u00a0", "&amp;", "~", " ", "word", "RL"]), max_size=30))
def test_cleanup_maps_every_word_back_to_itself(pieces):
    text = " ".join(pieces)
    c = clean(text)
    for word in ("word", "RL"):
        at = c.text.find(word)
        while at != -1:
            start, end = c.original(at, at + len(word))
            assert text[start:end] == word
            at = c.text.find(word, at + 1)


def test_big_o_in_math_is_no_acronym() -> None:
    """'$\\mathcal{O}(\\sqrt{T})$' kept its letters as 'OT' and linked optimal transport; '$k$-means' keeps its letter."""
    assert clean("a regret of ${\\mathcal{O}}(\\sqrt{T})$ and $\\mathcal{O}(T)$ memory").text == "a regret of X and X memory"
    assert clean("$k$-means and $L_2$ loss").text == "k-means and L2 loss"


@pytest.mark.parametrize(("text", "cleaned"), [
    ("Collaborative filtering- based methods", "Collaborative filtering-based methods"),  # two words: hyphenated
    ("classi- fication of plat- forms", "classification of platforms"),  # an English word split by a line break
    ("collabora- tive filtering and collaborative ones", "collaborative filtering and collaborative ones"),  # the text's own word
    ("train- and test-time data", "train- and test-time data"),  # a suspended hyphen waits for its word
    ("state- of- the-art, end- to- end", "state-of-the-art, end-to-end"),
])
def test_line_break_hyphens_are_repaired(text, cleaned):
    """Abstracts copied from PDFs keep the line break's hyphen ("Collaborative filtering- based" hid collaborative
    filtering from an expert's paper); evidence still quotes the stored text."""
    c = clean(text)
    assert c.text == cleaned
    for word in cleaned.replace(",", "").split():
        if "-" not in word:
            at = c.text.index(word)
            start, end = c.original(at, at + len(word))
            assert text[start:end].replace("- ", "") == word


def test_a_split_label_links_with_its_evidence(bundled):
    text = "Collaborative filtering- based methods and matrix fac- torization are strong baselines for recommendation."
    (ex,) = run(bundled, text)
    mentions = {m.exact for link in ex.links for m in link.mentions}
    assert "Collaborative filtering" in mentions and "matrix fac- torization" in mentions


def test_contrast_is_not_a_subject(extractor):
    (ex,) = run(extractor, "Unlike diffusion models, we propose a generative adversarial network for fast sampling.")
    got = links(ex)
    assert not got["diffusion-model"].subject
    assert got["generative-adversarial-network"].subject


@pytest.mark.parametrize(("text", "passing", "topic"), [
    ("Inspired by bottom-up grammar induction, we propose an efficient graph parsing algorithm for graph pooling.",
     "grammar-induction", "graph-pooling"),
    ("We learn rewards with inverse reinforcement learning, removing the need for manual reward engineering.",
     "reward-design", "inverse-reinforcement-learning"),
    ("We train energy-based models that resist attacks without the need for adversarial training.",
     "adversarial-training", "energy-based-model"),
    ("We propose a recurrent model for video action anticipation, a task that diverges from action recognition.",
     "action-recognition", "recurrent-neural-network"),
])
def test_what_a_paper_does_without_or_is_inspired_by_is_in_passing(bundled, text, passing, topic):
    """From an expert's reading of 2024 abstracts: "inspired by X", "removing the need for X", "without the need for X"."""
    (ex,) = run(bundled, text)
    got = links(ex)
    assert not got[passing].subject
    assert got[topic].subject


def test_an_umbrella_concept_gives_way_to_the_specific_one(bundled):
    """"Machine learning has transformed ..." sets the scene, and even a title or a sentence saying what the paper
    does names an umbrella concept beside the paper's topic: experts listed none of the 20 umbrella concepts that
    titles of their 200 papers named. The specific concept is the subject."""
    scene = "Machine learning has transformed the sciences. We propose a fast sampler for diffusion models."
    own = "In this paper we study machine learning with few labels: we propose a sampler for diffusion models."
    for ex in run(bundled, scene, own, scene, titles=(None, None, "Machine learning for the sciences")):
        assert not links(ex)["machine-learning"].subject and links(ex)["diffusion-model"].subject


def test_a_paper_whose_candidates_the_exclusions_all_stop_keeps_its_best_one(bundled):
    """Each candidate here is an umbrella concept setting the scene; the paper is still found by its best one."""
    text = "Neural networks can deduce racial information from an X-ray. Such information must be removed from them."
    (ex,) = run(bundled, text)
    assert [l.concept.removeprefix(KGC) for l in ex.links if l.subject] == ["neural-network"]


def test_applications_listed_in_passing_are_not_subjects(extractor):
    (ex,) = run(
        extractor,
        "We study offline reinforcement learning with learned models. Offline reinforcement learning is hard. "
        "It has applications such as robotics and machine translation.",
    )
    got = links(ex)
    assert got["offline-reinforcement-learning"].subject
    assert not got["robotics"].subject and not got["machine-translation"].subject


def test_an_area_in_a_list_of_short_phrases_is_not_a_subject(extractor):
    """An expert's example: "education" in "Remote work, education, telemedicine all rely on video calls" is a
    motivating application, not a topic, though the other items are no concepts; a list of concepts that opens the
    abstract still names its field."""
    (ex,) = run(extractor, "Remote work, robotics, telemedicine all rely on video calls. "
                           "We propose offline reinforcement learning for congestion control of video streams.")
    got = links(ex)
    assert not got["robotics"].subject and got["offline-reinforcement-learning"].subject
    (field,) = run(extractor, "Transfer learning, multi-task learning, and self-supervised learning share one goal. "
                              "We unify them for video streams.")
    assert got["robotics"].mentions[0].weight < links(field)["transfer-learning"].mentions[0].weight


@pytest.mark.parametrize(("sentence", "item", "listed"), [
    ("Remote work, education, telemedicine all rely on video calls.", "education", True),
    ("Remote work, education, telemedicine all rely on video calls.", "telemedicine", True),
    ("Remote work, education, telemedicine all rely on video calls.", "video calls", False),
    ("We evaluate on images, text, and graphs, showing gains in reinforcement learning.", "graphs", True),
    ("We evaluate on images, text, and graphs, showing gains in reinforcement learning.", "reinforcement learning", False),
    ("In this paper, we propose FedType, a simple framework for federated learning.", "FedType", False),
    ("Deep learning, a popular tool, works well.", "Deep learning", False),  # an apposition
    ("Models of compact states, also called state-space models, reduce the cost.", "state-space models", False),
    ("It connects many-body physics, quantum information theory, and machine learning.", "machine learning", True),
    ("A key part of all LLMs, such as BERT, GPT-1, Transformers, and GPT-2.", "LLMs", False),  # the examples' head
    ("A key part of all LLMs, such as BERT, GPT-1, Transformers, and GPT-2.", "Transformers", True),
])
def test_lists_of_short_phrases(sentence: str, item: str, listed: bool) -> None:
    from kg.extract.salience import LIST_SIZE, _list_items

    start = sentence.index(item)
    items = _list_items(sentence, start, start + len(item))
    assert bool(items) == listed
    assert not items or (len(items) >= LIST_SIZE and any(a <= start and start + len(item) <= b for a, b in items))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["data", "we", "a", "and", "or", ",", ", and", "(x, y)", ".", "learning", "the"]), min_size=1, max_size=25),
       st.data())
def test_list_items_hold_the_mention_and_are_in_order(pieces, data):
    from kg.extract.salience import LIST_SIZE, _list_items

    sentence = " ".join(pieces)
    start = data.draw(st.integers(0, len(sentence) - 1))
    end = data.draw(st.integers(start + 1, len(sentence)))
    items = _list_items(sentence, start, end)
    if items:
        assert len(items) >= LIST_SIZE and any(a <= start and end <= b for a, b in items)
        assert all(a < b <= c for (a, b), (c, _) in pairwise(items))


def test_a_noun_before_of_or_in_is_not_an_example_list(extractor):
    """"problems in X", "fields of X" name the paper's own setting; only "applications to/in …" and
    "tasks such as …" introduce examples (a "receptive fields of …" reading once made X passing)."""
    (ex,) = run(
        extractor,
        "Agents need data. We address the exploration problems in reinforcement learning with learned models. "
        "Our method also helps the settings of transfer learning, and has applications to robotics.",
    )
    from kg.extract.salience import PASSING_WEIGHT

    weight = {c: link.mentions[0].weight for c, link in links(ex).items()}
    assert weight["reinforcement-learning"] > PASSING_WEIGHT and weight["transfer-learning"] > PASSING_WEIGHT
    assert weight["robotics"] == PASSING_WEIGHT


def test_closing_sentence_and_named_tools_are_subjects_only_where_the_paper_says_what_it_does():
    from kg.extract.features import FEATURES, eligible

    def row(**values: float) -> list[float]:
        return [values.get(name, 0.0) for name in FEATURES]

    assert eligible(row(mentions=1.0))
    assert not eligible(row(last_sentence_only=1.0))  # "experiments on ImageNet show …"
    assert eligible(row(last_sentence_only=1.0, focus=1.0))  # "… We propose X." as the closing sentence
    assert not eligible(row(tool=1.0))  # a baseline or the model a method is applied to
    assert eligible(row(tool=1.0, focus=1.0)) and eligible(row(tool=1.0, in_title=1.0))
    assert not eligible(row(passing_share=1.0, contrast_share=1.0))  # "unlike X": what the paper sets itself against
    assert eligible(row(passing_share=1.0, contrast_share=1.0, in_title=1.0))
    # Examples ("tasks such as X") and items of an enumeration are the scorer's to weigh (decision 0070)
    assert eligible(row(passing_share=1.0)) and eligible(row(listed_share=1.0))


def test_title_and_opening_raise_the_score(extractor):
    text = "Agents need data. Our method uses transfer learning between tasks."
    plain, titled = run(extractor, text, text, titles=(None, "Transfer learning for agents"))
    assert links(titled)["transfer-learning"].score > links(plain)["transfer-learning"].score
    (opening,) = run(extractor, "Transfer learning helps agents. Our method uses data between tasks.")
    assert links(opening)["transfer-learning"].score > links(plain)["transfer-learning"].score


def test_concepts_every_paper_mentions_are_less_specific():
    """Without a corpus prior for a concept (a user's own scheme), the build's counts decide its specificity."""
    unknown = PhraseExtractor(scheme_.load([SCHEME]))
    unknown.priors = {}
    rare = "Agents need data. We rely on robotics tools here."
    common = [f"Paper {i} uses robotics tools." for i in range(60)]
    alone = run(unknown, rare)[0]
    crowded = run(unknown, rare, *common)[0]
    assert links(crowded)["robotics"].score < links(alone)["robotics"].score


def test_with_a_corpus_prior_a_paper_is_scored_alone(extractor):
    """Concepts the reference corpus knows are scored from its rates: the build around a paper does not matter."""
    rare = "Agents need data. We rely on robotics tools here."
    common = [f"Paper {i} uses robotics tools." for i in range(60)]
    assert KGC + "robotics" in extractor.priors
    assert links(run(extractor, rare, *common)[0])["robotics"].score == links(run(extractor, rare)[0])["robotics"].score
    assert extractor.per_paper  # every fixture concept has a prior: builds may be split into chunks


def test_threshold_decides_subjects():
    sch = scheme_.load([SCHEME])
    text = "We propose offline reinforcement learning with diffusion models."
    low = PhraseExtractor(sch, threshold=0.01)([Paper("p", text)])[0]
    high = PhraseExtractor(sch, threshold=0.999)([Paper("p", text)])[0]
    assert links(low)["diffusion-model"].subject and links(low)["offline-reinforcement-learning"].subject
    # above every score, a paper keeps only its most probable candidate, so that it can still be found
    assert [l.subject for l in high.links].count(True) == 1
    assert all(l.mentions for l in high.links)  # the mentions stay, with their scores


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("To address this, we introduce *QORA*, an algorithm that constructs models.", "QORA"),
        ("In this paper, we propose a robust and accurate camouflage generation method, namely RAUCA.", "RAUCA"),
        ("We propose Conformalized Amortized Neural Variational Inference (CANVI), a procedure that is scalable.", "CANVI"),
        ("This paper presents FedType, a simple yet pioneering framework.", "FedType"),
        ("To this end, we introduce RL-CFR, a novel reinforcement learning (RL) approach.", "RL-CFR"),
    ],
)
def test_proposed_methods_are_named(extractor, text, name):
    (ex,) = run(extractor, text)
    assert [m.name for m in ex.methods] == [name]
    m = ex.methods[0]
    assert text[m.start : m.end] == m.exact
    assert ex.label == name


@pytest.mark.parametrize(
    "text",
    [
        "We propose a method for bounding the causal effect with instrumental variables (IVs) under weak confounding.",
        "We propose a new RL algorithm for games.",
        "We present an analysis of LLM training.",
    ],
)
def test_no_method_without_a_coined_name(extractor, text):
    (ex,) = run(extractor, text)
    assert ex.methods == ()
    assert not ex.label.isupper()


def test_datasets_are_evaluated_on_not_subjects(extractor):
    (ex,) = run(extractor, "ImageNet results. We train diffusion models and report results on ImageNet and ImageNet again.")
    imagenet = links(ex)["imagenet"]
    assert imagenet.dataset and not imagenet.subject


def test_methods_and_datasets_in_rdf(tmp_path: Path):
    import json

    import kg

    papers = tmp_path / "p.jsonl"
    papers.write_text(json.dumps({"id": "q", "abstract": "We introduce *QORA*, an algorithm for offline reinforcement learning. Results on ImageNet."}) + "\n")
    import pyoxigraph as ox

    from kg.graph.files import read_triples

    built = kg.build([papers], schemes=[SCHEME], default_scheme=False)
    store = ox.Store()
    store.extend(ox.Quad(t.subject, t.predicate, t.object) for t in read_triples(kg.write(built, tmp_path / "g.ttl")))
    rows = list(store.query(
        """PREFIX kg: <https://w3id.org/kg/ontology#> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
        PREFIX oa: <http://www.w3.org/ns/oa#>
        SELECT ?label ?exact ?data ?paperLabel WHERE {
          ?p kg:proposes ?m ; kg:evaluatesOn ?data ; rdfs:label ?paperLabel . ?m a kg:Method ; rdfs:label ?label .
          ?a oa:hasBody ?m ; oa:hasTarget/oa:hasSelector/oa:exact ?exact }"""
    ))
    assert [(r[0].value, r[1].value, r[2].value.rsplit("/", 1)[-1], r[3].value) for r in rows] == [("QORA", "QORA", "imagenet", "QORA")]


def test_an_acronym_of_two_concepts_links_only_where_defined(extractor):
    (bare,) = run(extractor, "Recent SSL methods learn from unlabeled images.")
    (defined,) = run(extractor, "We study self-supervised learning (SSL). Recent SSL methods learn from unlabeled images.")
    assert not {"semi-supervised-learning", "self-supervised-learning"} & set(links(bare))
    assert [m.exact for m in links(defined)["self-supervised-learning"].mentions] == ["self-supervised learning", "SSL"]
    assert "semi-supervised-learning" not in links(defined)


def test_an_ambiguous_word_at_a_sentence_start_is_not_a_mention(extractor):
    (start,) = run(extractor, "Adult patients were enrolled. We test on the Adult census data.")
    assert [m.exact for m in links(start)["adult"].mentions] == ["Adult"]
    assert links(start)["adult"].mentions[0].start > 20


def test_longest_match_wins_in_the_title_too(extractor):
    (ex,) = run(extractor, "We study learning from logged data.", titles=("Conservative offline RL",))
    assert links(ex)["offline-reinforcement-learning"].subject
    assert "reinforcement-learning" not in links(ex)


@pytest.mark.parametrize(
    "text",
    [
        "We propose and analyze the first optimal design-based algorithms for PSI.",
        "We present a modification of SMART that combines two learners.",
        "We introduce a novel framework of combinatorial multi-armed bandits (CMAB) with triggering arms.",
    ],
)
def test_a_name_after_for_or_of_is_not_the_proposal(extractor, text):
    (ex,) = run(extractor, text)
    assert ex.methods == ()


def test_latex_links_keep_their_text_once(extractor):
    text = "To this end, we propose the \\hyperlink{PSIPS}{PSIPS} algorithm that deals with it."
    assert text.count("\\") == 1
    (ex,) = run(extractor, text)
    assert [m.name for m in ex.methods] == ["PSIPS"]


def test_named_after_called_and_we_first_develop(extractor):
    (called,) = run(extractor, "We introduce a new family of distances parameterized by $k \\ge 0$, called $k$-RPW that is based on transport.")
    (first,) = run(extractor, "We first develop MoMo, a **Mo**mentum **Mo**del based adaptive learning rate.")
    assert [m.exact for m in called.methods] == ["$k$-RPW"]
    assert [m.name for m in first.methods] == ["MoMo"]


def test_a_hyphen_in_the_text_matches_a_space_in_the_label(extractor):
    (ex,) = run(extractor, "Neural networks succeed in various reinforcement-learning tasks.")
    assert [m.exact for m in links(ex)["reinforcement-learning"].mentions] == ["reinforcement-learning"]


# --- salience rules of the second round (issue 4): enumerations, definitions, corpus priors ---


def _weights(text: str, items: list[tuple[str, str]]) -> dict[str, float]:
    """Salience weights of the named mentions (concept, exact text) of one text, with no cues."""
    from kg.extract import salience

    mentions, at = [], 0
    for concept, words in items:
        start = text.index(words, at)
        mentions.append((concept, start, start + len(words)))
        at = start + len(words)
    ctx = salience.context(text, [])
    return {f"{c}@{s}": w for (c, s, _), w in zip(mentions, (d[0] for d in ctx.describe(mentions, text)))}


def test_a_coordinated_list_is_an_enumeration():
    text = (
        "We study large language models. We explore their capabilities across three critical phases: "
        "Pretraining, Supervised Fine-Tuning (SFT), and Reinforcement Learning from Human Feedback (RLHF)."
    )
    got = _weights(text, [("pt", "Pretraining"), ("sft", "Supervised Fine-Tuning"), ("sft", "SFT"), ("rlhf", "Reinforcement Learning from Human Feedback")])
    assert set(got.values()) == {0.75}  # 1.5 in the second sentence, halved: three items joined by commas and "and"


def test_concepts_in_one_sentence_that_are_not_a_list_keep_their_weight():
    text = "Agents need data. A morphology-conditioned hypernetwork generates robot policies trained by policy distillation."
    got = _weights(text, [("hn", "hypernetwork"), ("robot", "robot"), ("pd", "policy distillation")])
    assert set(got.values()) == {1.5}  # the second sentence's weight, not halved


def test_the_short_form_of_a_definition_is_not_a_second_mention(extractor):
    text = "Agents need data. We train a generative adversarial network (GAN) on images. The GAN is small."
    (ex,) = run(extractor, text)
    gan = links(ex)["generative-adversarial-network"]
    assert [(m.exact, m.start) for m in gan.mentions] == [
        ("generative adversarial network", text.index("generative")),
        ("GAN", text.index("The GAN") + 4),  # the later use counts, the "(GAN)" of the definition does not
    ]


def test_a_position_paper_says_what_it_argues(extractor):
    plain, argued = run(
        extractor,
        "Agents need data. Methods are needed. The area hides opportunities to improve transfer learning.",
        "Agents need data. This position paper argues that the area hides opportunities to improve transfer learning.",
    )
    assert links(argued)["transfer-learning"].score > links(plain)["transfer-learning"].score


def test_corpus_priors_read_rates_and_keyphraseness(tmp_path: Path):
    from kg.extract import salience

    table = tmp_path / "rates.tsv"
    # 1000 abstracts use "context", 30 of whose titles name it; "topic" is named by 60 of 100 titles.
    table.write_text("# comment\nctx\t1000\t0.10000\t30\ntopic\t100\t0.01000\t60\n", encoding="utf-8")
    priors = salience.corpus_priors(table)
    assert priors["ctx"].rate == 0.1 and priors["topic"].rate == 0.01
    assert priors["ctx"].topicality == salience.TOPICAL_MIN  # named by few titles: counts half
    assert priors["topic"].topicality == salience.TOPICAL_MAX
    assert salience.corpus_priors(tmp_path / "missing.tsv") == {}


def test_shipped_priors_know_generic_concepts():
    """The table shipped with kg: 'machine learning' is context in most abstracts, a GAN is a topic."""
    from kg.extract import salience
    from kg.graph.resources import data_path

    priors = salience.corpus_priors(data_path("patterns") / "concept-rates.tsv")
    assert priors[KGC + "machine-learning"].topicality < priors[KGC + "generative-adversarial-network"].topicality
    assert priors[KGC + "optimization"].rate > 5 * priors[KGC + "generative-adversarial-network"].rate


def test_a_paper_gets_the_same_subjects_in_a_small_and_a_large_build():
    """The corpus prior makes subjects independent of build size (bench/build_size.py measures it at scale)."""
    from kg.extract import PhraseExtractor as Extractor

    ex = Extractor(scheme_.load())
    paper = Paper("p", "This paper considers stochastic weakly convex optimization without the standard Lipschitz "
                  "continuity assumption. We show that stochastic algorithms preserve the convergence rate.")
    others = [Paper(f"o{i}", f"We study optimization of neural networks for task {i}.") for i in range(39)]
    alone = {l.concept for l in ex([paper])[0].links if l.subject}
    crowd = {l.concept for l in ex([paper, *others])[0].links if l.subject}
    assert alone == crowd and KGC + "stochastic-nonconvex-optimization" in alone


def test_citations_do_not_end_an_example_list():
    """From a real abstract: SAM (a topic model) named after "such as" with citations is in passing."""
    from kg.extract import salience

    text = ("This paper introduces a new topic model, as opposed to previous topic models such as "
            "PLSA (Hofmann, 1999), LDA (Blei et al., 2003) or SAM (Reisinger et al., 2010). We propose a class.")
    cue = text.index("such as")
    ctx = salience.context(text, [("EXAMPLE", cue, cue + len("such as"))])
    assert ctx.in_passing(text.index("SAM")) and ctx.in_passing(text.index("LDA"))
    assert not ctx.in_passing(text.index("We propose"))


def test_i_e_restates_and_does_not_list(extractor):
    (ex,) = run(extractor, "Agents need data. We need better methods, i.e., transfer learning between tasks.")
    assert links(ex)["transfer-learning"].mentions[0].weight == 1.5  # second sentence, not 0.25 in passing


def test_the_shipped_scheme_has_a_corpus_prior_for_every_concept():
    """Else those concepts fall back to build counts and a paper's links depend on its build (--update, --jobs)."""
    from kg.extract import salience
    from kg.graph.resources import data_path

    priors = salience.corpus_priors(data_path("patterns") / "concept-rates.tsv")
    missing = sorted(set(scheme_.load().concepts) - set(priors))
    assert not missing, f"{len(missing)} concepts have no row, e.g. {missing[:3]}: run python bench/corpus_rates.py"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab ,()", max_size=40))
def test_list_segments_cut_at_the_commas_outside_parentheses(sentence: str) -> None:
    """The one-pass cut (linear on a sentence of any length) against its definition as a regular expression."""
    import re

    from kg.extract.salience import _segments

    bounds = [-1, *(m.start() for m in re.finditer(r",(?![^()]*\))", sentence)), len(sentence)]
    assert _segments(sentence)[0] == tuple((bounds[k] + 1, bounds[k + 1]) for k in range(len(bounds) - 1))


def test_builds_in_one_process_share_one_extractor_per_scheme_and_threshold():
    """make_extractor keeps its extractors: the second build on a scheme pays no matcher set-up (decision 0054)."""
    from kg.extract import make_extractor

    sch = scheme_.load([SCHEME])
    first = make_extractor(sch)
    assert make_extractor(scheme_.load([SCHEME])) is first
    other = make_extractor(sch, threshold=0.5)
    assert other is not first and other.threshold == 0.5
    text = "We propose offline reinforcement learning with diffusion models."
    assert first([Paper("p", text)]) == PhraseExtractor(sch)([Paper("p", text)])  # the kept one answers as a new one
