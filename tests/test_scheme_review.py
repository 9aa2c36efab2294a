"""The scheme's rule kept: no repeated statements, no wrong roll-ups, no redundant or cyclic broader links,
every broader link backed by corpus evidence or a reader's verdict, and ambiguous labels read in context."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from kg.extract import scheme as scheme_

ROOT = Path(__file__).parent.parent
CONCEPTS = ROOT / "ontology" / "concepts"
WRONG_ROLLUPS = Path(__file__).parent / "fixtures" / "review-wrong-rollups.tsv"
EVIDENCE = ROOT / "ontology" / "broader-evidence.tsv"
REVIEWED = ROOT / "ontology" / "broader-reviewed.tsv"
MIN_TITLED, MIN_SHARE = 5, 0.5  # of the papers whose title names X, at least half name Y's family
KGC = "https://w3id.org/kg/concept/"
KG = "https://w3id.org/kg/ontology#"


def test_scheme_files_state_nothing_twice() -> None:
    """Issue 18 item 7: a label written twice was a duplicate triple in every built graph."""
    import pyoxigraph as ox

    triples = [t for path in sorted(CONCEPTS.glob("*.ttl")) for t in ox.parse(path=str(path), format=ox.RdfFormat.TURTLE)]
    repeated = [t for t, n in Counter(triples).items() if n > 1]
    assert len(triples) > 15000
    assert repeated == []
    assert len(scheme_.load().triples) == len(set(scheme_.load().triples))


@pytest.fixture(scope="module")
def scheme() -> scheme_.Scheme:
    return scheme_.load()


def _slug(scheme: scheme_.Scheme, slug: str) -> str:
    iri = KGC + slug
    assert iri in scheme.concepts, f"{slug}: no such concept (fix the fixture or the scheme)"
    return iri


def _rows(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]


# ---- the hierarchy ---------------------------------------------------------------------------------


def test_no_roll_up_the_review_calls_wrong_holds(scheme: scheme_.Scheme) -> None:
    """Every path of the review's lists (first concept to last) is gone from skos:broader*."""
    rows = _rows(WRONG_ROLLUPS)
    assert len(rows) >= 100
    held = [(a, b) for a, b, *_ in rows if _slug(scheme, b) in scheme.ancestors(_slug(scheme, a))]
    assert held == []


# Two short abstracts: one about DPO alone (no RLHF, no reward model, no RL), one about RLHF.
PREFERENCE_PAPERS = [
    {"id": "dpo-paper", "title": "Direct preference optimization of language models", "year": 2024,
     "abstract": "We align a large language model to human preferences with direct preference optimization (DPO). DPO fits "
                 "the policy to pairs of preferred and rejected responses with a simple classification loss. On dialogue and "
                 "summarization benchmarks, DPO matches stronger baselines."},
    {"id": "rlhf-paper", "title": "Reward models for reinforcement learning from human feedback", "year": 2024,
     "abstract": "Reinforcement learning from human feedback (RLHF) trains a reward model on human preference comparisons and "
                 "then optimizes the policy of a large language model against it with proximal policy optimization. We study "
                 "how reward model errors affect RLHF."},
]


@pytest.fixture(scope="module")
def preference_graph(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import json

    import kg

    folder = tmp_path_factory.mktemp("preference")
    source = folder / "papers.jsonl"
    source.write_text("".join(json.dumps(p) + "\n" for p in PREFERENCE_PAPERS), encoding="utf-8")
    return kg.write(kg.build([source]), folder / "g.ttl")


def _listed(graph: Path, concept: str) -> dict[str, str]:
    """papers-by-concept's papers (identifier -> the prefLabel of the subject that gave the best score)."""
    import kg

    return {r["identifier"]: r["viaLabel"] for r in kg.query("papers-by-concept", {"concept": concept}, graph=graph)}


def test_a_query_for_preference_alignment_reaches_dpo_and_rlhf_papers(preference_graph: Path) -> None:
    """The review: DPO -> RLHF -> RL was a wrong roll-up (DPO is RL-free). Both sit under preference alignment (and
    preference learning), so a query for the common parent finds both, each by its own concept."""
    for parent in ("preference alignment", "preference learning"):
        assert _listed(preference_graph, parent) == {"dpo-paper": "direct preference optimization",
                                                     "rlhf-paper": "reinforcement learning from human feedback"}, parent


def test_a_query_for_rlhf_does_not_return_a_dpo_only_paper(preference_graph: Path) -> None:
    """RLHF -> reinforcement learning stays; DPO reaches neither, and its scope note says why."""
    import pyoxigraph as ox

    assert list(_listed(preference_graph, "RLHF")) == ["rlhf-paper"]
    assert list(_listed(preference_graph, "reinforcement learning")) == ["rlhf-paper"]
    assert list(_listed(preference_graph, "DPO")) == ["dpo-paper"]
    notes = [t.object.value for path in sorted(CONCEPTS.glob("*.ttl")) for t in ox.parse(path=str(path), format=ox.RdfFormat.TURTLE)
             if t.subject.value == KGC + "direct-preference-optimization" and t.predicate.value == "http://www.w3.org/2004/02/skos/core#scopeNote"]
    assert len(notes) == 1 and "Not under reinforcement learning from human feedback" in notes[0]


def test_no_broader_link_repeats_an_ancestor(scheme: scheme_.Scheme) -> None:
    """A parent that another parent already reaches says nothing new (RLHF -> alignment beside RLHF -> preference alignment)."""
    redundant = [
        (c.iri, p) for c in scheme.concepts.values() for p in c.broader
        if any(p in scheme.ancestors(q) for q in c.broader if q != p)
    ]
    assert redundant == []


def test_no_broader_cycles(scheme: scheme_.Scheme) -> None:
    assert [iri for iri in scheme.concepts if iri in scheme.ancestors(iri)] == []


def _links(scheme: scheme_.Scheme) -> set[tuple[str, str]]:
    return {(c.iri.removeprefix(KGC), p.removeprefix(KGC)) for c in scheme.concepts.values() for p in c.broader}


def _unbacked(links: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """The links with neither corpus evidence nor a reader's verdict."""
    evidence = {(a.removeprefix(KGC), b.removeprefix(KGC)): (int(n), int(f)) for a, b, n, _, f in _rows(EVIDENCE)}
    reviewed = {(a, b) for a, b, *_ in _rows(REVIEWED)}
    backed = {link for link, (n, f) in evidence.items() if n >= MIN_TITLED and f >= MIN_SHARE * n}
    return sorted(links - backed - reviewed)


def test_every_broader_link_is_backed_by_the_corpus_or_a_reader(scheme: scheme_.Scheme) -> None:
    """The rule kept honest as the scheme grows: a new broader link needs corpus evidence or a reviewed line.

    Evidence (ontology/broader-evidence.tsv, bench/broader_evidence.py): of the corpus papers whose title
    names X, at least MIN_TITLED, and at least MIN_SHARE of them name Y or a concept under Y.
    Reviewed (ontology/broader-reviewed.tsv): a person read the link against the rule and signed it.
    """
    links = _links(scheme)
    unbacked = _unbacked(links)
    assert unbacked == [], (
        f"{len(unbacked)} skos:broader links have neither corpus evidence nor a reader's verdict, e.g. {unbacked[:5]}: "
        "run bench/broader_evidence.py, or read each against the rule and add it to ontology/broader-reviewed.tsv")
    stale = sorted({(a, b) for a, b, *_ in _rows(REVIEWED)} - links)
    assert stale == [], f"ontology/broader-reviewed.tsv lists links the scheme no longer has: {stale[:5]}"
    # a link added without either is caught
    assert _unbacked(links | {("clip", "reinforcement-learning")}) == [("clip", "reinforcement-learning")]


# ---- labels ------------------------------------------------------------------------------------------


def _found(text: str, title: str | None = None) -> set[str]:
    from kg.extract import ingest

    extractor = _extractor()
    (e,) = extractor([ingest.Paper("p", text, title)])
    return {link.concept.removeprefix(KGC) for link in e.links if not link.described}  # the concepts the paper names


_EXTRACTOR: list = []


def _extractor():
    from kg.extract import PhraseExtractor

    if not _EXTRACTOR:
        _EXTRACTOR.append(PhraseExtractor(scheme_.load()))
    return _EXTRACTOR[0]


@pytest.mark.parametrize(("text", "meant", "not_meant"), [
    ("We propose a variant of SAM that seeks flat minima of the loss landscape.", "sharpness", "segment-anything-model"),
    ("We adapt SAM to medical image segmentation with box prompts.", "segment-anything-model", "sharpness"),
    ("We report MAE and RMSE on three forecasting data sets.", "mean-absolute-error", "masked-modeling"),
    ("MAE pre-training reconstructs masked patches of images.", "masked-modeling", "mean-absolute-error"),
    ("We craft PGD attacks with adversarial perturbations of bounded norm.", "projected-gradient-descent-attack", "projected-gradient-descent"),
    ("BNNs with a Gaussian prior give calibrated posterior predictions.", "bayesian-neural-network", "binary-neural-network"),
    ("Alignment of LLMs with human preferences: we study alignment with RLHF.", "alignment", None),
    ("We evaluate node classification on Cora, Citeseer and PubMed.", "pubmed", None),
    ("We study pruning of neural network weights at initialization.", "pruning", None),
    ("Prompting large language models with worked examples improves their reasoning.", "prompting", None),
    ("Gradient descent ascent solves nonconvex-concave minimax problems.", "minimax-optimization", None),
    ("We learn dispatching rules for job scheduling to minimise makespan.", "scheduling", None),
    ("Algorithmic recourse gives individuals actions that change a classifier's decision.", "counterfactual-explanation", None),
    ("A seller posts prices to buyers; we learn a pricing policy with bandit feedback.", "dynamic-pricing", None),
    ("We pretrain video transformers on Kinetics and fine-tune on UCF101.", "kinetics", None),
    ("Post-training quantization of LLMs reduces memory at inference.", "post-training-quantization", None),
    ("We quantize networks: quantization of weights and activations to 4 bits keeps accuracy.", "quantization", None),
    ("We evaluate open-domain QA on Natural Questions and TriviaQA.", "natural-questions", None),
    ("We reduce a strong learner to boosting a weak learner with a constant edge.", "boosting", None),
    ("Sharpness of the loss landscape predicts generalization; we penalise it.", "sharpness", None),
    ("ASR systems still fail on accented speech; we lower the word error rate by 10%.", "automatic-speech-recognition", None),
    ("Our model accounts for human performance in psychophysical experiments.", "visual-perception", "ideal-observer"),
    ("We forecast household energy consumption from smart meter data.", "energy-systems", None),
    ("Large margin classifiers such as SVMs generalize well.", "margin-theory", None),
    ("Neural networks that model set functions must be permutation invariant.", "permutation-invariance", None),
    ("Our algorithm gives a confidence interval for the mean of a heavy-tailed distribution.", "statistical-estimation", "prediction-intervals"),
    ("Louvain modularity maximization finds the communities of a social network.", "community-detection", None),
    ("The problem is NP-hard: a hardness result settles the computational complexity of learning halfspaces.", "computational-complexity", None),
    ("Spectral methods recover latent variable models from the moments of the data.", "spectral-methods", None),
    ("Large batch training with a learning rate warmup keeps the accuracy of small batches.", "large-batch-training", None),
    ("We align language models with preference data by DPO and study their alignment.", "alignment", None),
    ("Recent studies found inherent distributional robustness in CLIP under sub-population shift.", "out-of-distribution-generalization",
     "distributionally-robust-optimization"),
    ("Stacked auto-encoders learn compressed codes of the images.", "autoencoder", None),
    ("Sub-population shift hurts the worst group most.", "subpopulation-shift", None),
    ("Molecular conformation optimization minimises the energy of a molecule.", "molecular-machine-learning", "molecular-conformation-generation"),
    ("Efficient exploration lets the agent find rewards that a greedy policy misses.", "exploration", None),
    ("We recommend items to users from their ratings, and the recommendations improve clicks.", "recommender-system", None),
    ("Transduction uses the unlabeled test set: we label it with a semi-supervised graph method.", "transductive-learning", None),
    ("Variance reduction speeds up stochastic methods for finite-sum convex problems.", "variance-reduction", None),
    ("Self-consistency samples several reasoning paths and takes a majority vote over their answers.", "self-consistency", None),
    ("Learning from AI feedback aligns the model with preferences without human labels.", "reinforcement-learning-from-ai-feedback", None),
    ("We learn locomotion policies for a quadruped robot on rough terrain.", "legged-locomotion", None),
    ("Neural radiance fields with a hash-grid positional encoding render novel views.", "positional-encoding", "transformer"),
    ("We report the kernel inception distance of the samples.", "generative-model-evaluation", "frechet-inception-distance"),
])
def test_ambiguous_labels_link_in_the_sense_the_abstract_supports(text: str, meant: str, not_meant: str | None) -> None:
    found = _found(text)
    assert meant in found
    assert not_meant is None or not_meant not in found


@pytest.mark.parametrize(("text", "wrong"), [
    ("We study the AGOP alignment of kernel machines trained by gradient descent.", "alignment"),
    ("We use score distillation sampling for text-to-3D generation; the distillation objective is unstable.", "knowledge-distillation"),
    ("The receptive fields of CNN units grow with depth.", "receptive-fields"),
    ("PubMed abstracts were annotated by clinical experts.", "pubmed"),
    ("We fine-tune SAM.", "sharpness"),
    ("Hindsight goals: HER improves sample efficiency of goal-conditioned agents.", "experience-replay"),
    ("Conditioning on a collider opens a path between treatment and outcome in the causal graph.", "particle-physics"),
    ("Majority voting over an ensemble of classifiers improves accuracy.", "social-choice"),
    ("Machine learning models can exhibit racial biases; we equalize error rates across groups.", "social-bias"),
    ("Software engineering teams triage bug reports with a graph neural network.", "software-engineering-with-llms"),
    ("We study 4-bit quantization of convolutional neural networks on mobile devices.", "weight-only-quantization"),
    ("Autonomous agents must explore unknown buildings with a reinforcement learning policy.", "llm-agents"),
    ("We study tag recommendation for questions on a programming forum.", "image-annotation"),
    ("A Langevin sampler allows fast sampling from multimodal posteriors with fewer sampling steps.", "diffusion-sampling"),
    ("We learn the dynamics of coupled oscillators with a neural ODE.", "neural-oscillations"),
    ("Streams of non-IID data break SGD; we propose replay for continual learning under data heterogeneity.", "statistical-heterogeneity"),
    ("We compare text encoding models for retrieval.", "neural-decoding"),
    ("We infer latent dynamics from spiking recordings of motor cortex.", "world-model"),
    ("We study procedural generation of game levels with grammars.", "reinforcement-learning-environment"),
    ("We record eye tracking data while people read.", "gaze-estimation"),
    ("Change detection in remote sensing images needs pixel-level labels.", "change-point-detection"),
    ("We classify the sentiment of social media posts.", "social-network-analysis"),
    ("Sound source localization with microphone arrays uses a neural network.", "robot-localization"),
    ("We model dynamic networks whose edges appear and vanish over time.", "conditional-computation"),
    ("We give a stability analysis of the closed-loop system under a learned controller.", "algorithmic-stability"),
    ("A sparse grid scheme for numerical integration in high dimensions.", "bayesian-quadrature"),
    ("Knowledge graphs store factual knowledge as triples.", "knowledge-in-language-models"),
    ("Pruning the search space with learned bounds speeds up Monte Carlo tree search.", "pruning"),
    ("Overfitting is common in small data sets, prompting the need for better regularizers.", "prompting"),
    ("We prove that the estimator attains the minimax risk over Holder classes.", "minimax-optimization"),
    ("We tune the noise scheduling of a diffusion model.", "scheduling"),
    ("We obtain convergence without recourse to projections.", "counterfactual-explanation"),
    ("The pricing problem of column generation is solved by dynamic programming.", "dynamic-pricing"),
    ("We minimise the kinetic energy of the flow between two distributions.", "kinetics"),
    ("Optimal quantization of probability measures connects optimal transport and learning theory.", "quantization"),
    ("K-means minimizes the quantization error of a codebook.", "quantization"),
    ("Then a natural question arises: can we keep the accuracy with fewer parameters?", "natural-questions"),
    ("The proposed module is lightweight, consistently boosting the performance of existing 3D detectors.", "boosting"),
    ("Our classifier outperforms the SVM baselines by a large margin.", "margin-theory"),
    ("We provide simulations to illustrate the sharpness of our theoretical predictions.", "sharpness"),
    ("Our jailbreak reaches an ASR of 90% on GPT-4 and lowers the ASR of defenses by 4.5x.", "automatic-speech-recognition"),
    ("Our accelerator reduces energy consumption by 3x on the same chip.", "energy-systems"),
    ("Our agent outperforms previous imitation methods by large margins on unseen tasks.", "margin-theory"),
    ("Given a bound on the submodular rank of a set function, we design a greedy algorithm.", "permutation-invariance"),
    ("We add knowledge and episodic memory modules to the agent.", "working-memory"),
    ("We reduce the computational complexity of spiking neural networks on microcontrollers.", "computational-complexity"),
    ("Modular neural networks outperform non-modular networks, and modularity improves generalization.", "community-detection"),
    ("The research community has long studied modularity of neural networks.", "community-detection"),
    ("We align the embedding spaces of pretrained unimodal encoders; unobserved pairs cause misalignment of LLMs.", "alignment"),
    ("A solver for parametric PDEs grounded in classical spectral methods with orthogonal bases.", "spectral-methods"),
    ("We distill a black-box LLM into a white-box model whose parameters are visible.", "interpretable-machine-learning"),
    ("Split inference lowers the latency of DNNs in edge computing scenarios.", "on-device-learning"),
    ("We predict hidden units in StarCraft from human replays with a convolutional network.", "deep-reinforcement-learning"),
    ("The attack steals user data from gradients even for large batch sizes of up to 512.", "large-batch-training"),
    ("These questions need further exploration; our exploration of the latent space finds clusters.", "exploration"),
    ("We give practical recommendations for how to scale the training of language models.", "recommender-system"),
    ("Sequence to sequence transduction maps a sentence in one language to another.", "transductive-learning"),
    ("An action-dependent baseline for variance reduction of policy gradients.", "variance-reduction"),
    ("We evaluate the self-consistency of code models across tasks.", "self-consistency"),
    ("Guiding search through AI feedback, an LM judges the quality of generated poems.", "reinforcement-learning-from-ai-feedback"),
    ("Zebrafish locomotion is described by stereotyped bouts of swimming.", "legged-locomotion"),
    ("Grokking appears under vanilla gradient descent with the MSE loss.", "saliency-map"),
])
def test_a_label_read_in_another_sense_links_nothing(text: str, wrong: str) -> None:
    assert wrong not in _found(text)


def test_labels_an_expert_found_missing_link_where_they_should(scheme: scheme_.Scheme) -> None:
    """'a second-order optimizer' in a title, and bias in any model (not only in language models) as fairness."""
    assert "second-order-methods" in _found("We train faster.", "A second-order optimizer for deep networks")
    assert "optimization" in _found("We propose a new optimizer that uses curvature information.")
    (bias,) = _found("Machine learning models can exhibit racial biases.") & {"algorithmic-bias"}
    assert KGC + "fairness" in scheme.ancestors(KGC + bias) and KGC + "large-language-model" not in scheme.ancestors(KGC + bias)


def test_a_hyphenated_form_of_an_ambiguous_label_needs_the_sense_too() -> None:
    """"Counter-Factual" in a title is the ambiguous "counterfactual" split: without causal words it links nothing."""
    assert "counterfactual-reasoning" not in _found("We perturb failed demonstrations.", "Grounding Plans Through Counter-Factual Perturbations")
    assert "counterfactual-reasoning" in _found("Counterfactual outcomes under interventions in a structural causal model.", "Counter-factual reasoning")


def test_an_idiom_in_a_title_is_no_mention() -> None:
    """The IDIOM cues of kg/extract/patterns/cues.jsonl hold in titles too: the verb is not the ensemble method."""
    assert "boosting" not in _found("This paper studies the actor and the critic.", "Boosting the Actor with Dual Critic")
    assert "boosting" in _found("We learn to make predictions in a chain.", "Chained Boosting")


def test_a_definition_decides_a_shared_acronym() -> None:
    found = _found("We introduce sharpness-aware minimization (SAM). SAM improves generalization of segmentation models.")
    assert "sharpness" in found and "segment-anything-model" not in found


def test_tools_models_and_metrics_are_marked(scheme: scheme_.Scheme) -> None:
    """What papers use gets a kind of its own, so extraction can tell use from topic."""
    by_label = {label: c for c in scheme.concepts.values() for label in c.labels}
    expected = {"BERT": "Model", "LLaMA": "Model", "GPT-4": "Model", "Llama 2": "Model", "Qwen": "Model", "ResNet": "Model",
                "CLIP": "Model", "PyTorch": "Tool", "JAX": "Tool", "TensorFlow": "Tool", "SGD": "Tool", "Adam": "Tool",
                "FID": "Metric", "ECE": "Metric", "expected calibration error": "Metric"}
    assert {label: [k.removeprefix(KG) for k in by_label[label].kinds] for label in expected} == {k: [v] for k, v in expected.items()}
    # the families these names used to stand for are topics, not tools
    assert not scheme.concepts[KGC + "masked-language-model"].kinds and not scheme.concepts[KGC + "calibration"].kinds
    import rdflib

    schema = rdflib.Graph().parse(ROOT / "ontology" / "schema.ttl")
    declared = {str(s) for s in schema.subjects()}
    assert {KG + "Model", KG + "Tool", KG + "Metric", KG + "senseTerm"} <= declared


def test_labels_the_review_found_on_the_wrong_concept_moved(scheme: scheme_.Scheme) -> None:
    by_label: dict[str, set[str]] = {}
    for c in scheme.concepts.values():
        for label in c.labels:
            by_label.setdefault(label, set()).add(c.iri.removeprefix(KGC))
    wrong = {"GLU": "gelu", "SwiGLU": "gelu", "HOG": "deformable-part-models", "Hanabi": "google-research-football",
             "Overcooked": "google-research-football", "CMNIST": "waterbirds", "MMBench": "mmmu", "OK-VQA": "gqa",
             "Isomap": "locally-linear-embedding", "HSIC": "kernel-two-sample-test", "earthquake": "climate-modeling",
             "RBF kernel": "radial-basis-function-network", "traffic forecasting": "traffic-simulation",
             "local minima": "saddle-points", "sycophancy": "deceptive-alignment", "supervised fine-tuning": "instruction-tuning",
             "chemistry": "quantum-chemistry", "HER": "experience-replay", "posterior sampling": "posterior-sampling-for-reinforcement-learning"}
    assert {label: owner for label, owner in wrong.items() if owner in by_label.get(label, set())} == {}
    assert by_label["fact checking"] == by_label["fact-checking"]


# ---- a user's scheme ---------------------------------------------------------------------------------


def test_a_user_scheme_taking_a_bundled_label_is_warned(tmp_path: Path) -> None:
    """Issue 18 item 10: both concepts are named in the warning; adding a label to kg's own concept is not warned."""
    mine = tmp_path / "mine.ttl"
    mine.write_text(
        "@prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n"
        "@prefix kgc: <https://w3id.org/kg/concept/> .\n"
        "<https://example.org/decision-graphs> a skos:Concept ; skos:prefLabel \"decision graphs\"@en ;\n"
        "    skos:altLabel \"influence diagram\"@en .\n"
        "kgc:reinforcement-learning skos:altLabel \"reinforcement-learning agents\"@en .\n",
        encoding="utf-8")
    got = scheme_.load([*scheme_.default_scheme_files(), mine])
    assert len(got.warnings) == 1
    (warning,) = got.warnings
    assert "mine.ttl" in warning and '"influence diagram"' in warning
    assert "<https://example.org/decision-graphs>" in warning and f"<{KGC}influence-diagrams>" in warning
    assert scheme_.load().warnings == () and scheme_.load([mine]).warnings == ()


def test_the_cli_prints_the_label_warning(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from kg.cli import cli

    mine = tmp_path / "mine.ttl"
    mine.write_text("@prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n"
                    "<https://example.org/x> a skos:Concept ; skos:prefLabel \"influence diagrams\"@en .\n", encoding="utf-8")
    papers = tmp_path / "papers.txt"
    papers.write_text("ICML 2024\n\nWe solve influence diagrams with reinforcement learning and graphical models.\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["build", str(papers), "-o", str(tmp_path / "g.ttl"), "--no-render", "--scheme", str(mine)])
    assert result.exit_code == 0, result.output
    assert "warning: mine.ttl: the label \"influence diagrams\" of <https://example.org/x>" in result.output
    assert "influence-diagrams>" in result.output


def test_a_scheme_that_shares_many_labels_gets_a_few_warnings_and_a_count() -> None:
    example = ROOT / "ontology" / "examples" / "acm-ccs-excerpt.ttl"
    warnings = scheme_.load([*scheme_.default_scheme_files(), example]).warnings
    assert len(warnings) == scheme_.SHOWN_TAKEN + 1
    assert all(w.startswith("acm-ccs-excerpt.ttl: the label ") for w in warnings[:-1])
    assert warnings[-1].startswith("acm-ccs-excerpt.ttl: ") and "more labels are labels of kg's concepts" in warnings[-1]


# Senses the scheme's own labels got wrong (issue #35): each text in the shape a real abstract writes it.
@pytest.mark.parametrize(("text", "meant", "not_meant"), [
    ("Generative flow networks (GFlowNets) learn a policy that samples objects with probability proportional to a reward.",
     "generative-flow-network", "normalizing-flow"),
    ("GFlowNets are amortized samplers of discrete compositional objects such as molecules.", "generative-flow-network", "normalizing-flow"),
    ("Glow is a generative flow with invertible 1x1 convolutions trained by exact likelihood.", "normalizing-flow", "generative-flow-network"),
    ("We study resource allocation in wireless networks with deep reinforcement learning to maximise throughput.",
     "resource-allocation", "scheduling"),
    ("Entity typing for long-tail entities: fine-grained classification of rare entities.", "classification", "long-tailed-recognition"),
    ("Under a long-tailed distribution the tail classes have few images; we rebalance the classifier.", "long-tailed-recognition", None),
    ("Machine learning for cybersecurity: we detect phishing and malware in enterprise networks.", "cybersecurity", "intrusion-detection"),
    ("Network intrusion detection systems flag malicious traffic.", "intrusion-detection", None),
    ("LiDAR place recognition retrieves the closest submap of point clouds for loop closure.", "lidar-place-recognition", "visual-place-recognition"),
    ("Place recognition from 3D point clouds is key to loop closure in SLAM.", "place-recognition", "visual-place-recognition"),
    ("Visual place recognition matches a query image against a database of geotagged images.", "visual-place-recognition", None),
])
def test_the_scheme_own_labels_link_in_their_sense(text: str, meant: str, not_meant: str | None) -> None:
    found = _found(text)
    assert meant in found
    assert not_meant is None or not_meant not in found


# In-scheme topics an expert gave that the extractor missed where the abstract writes them (issue #35): labels fixed, not code.
@pytest.mark.parametrize(("text", "meant"), [
    ("We present a method to improve the calibration of deep ensembles in the small data regime.", "calibration"),
    ("Mixup improves the robustness and calibration of deep neural networks.", "calibration"),
    ("Probabilities produced by classifiers are often miscalibrated, which inflates prediction sets.", "calibration"),
    ("We select a core set of the training data on which active learning is nearly as good as on all of it.", "coreset"),
    ("Positive samples are scarce in imbalanced datasets where negative samples dominate.", "imbalanced-learning"),
    ("Label imbalance and heterophily are the fundamental problems of graph fraud detection.", "imbalanced-learning"),
    ("Relational thinking refers to the ability of humans to form mental impressions about relations between signals.",
     "relational-reasoning"),
    ("Despite their success in many natural language tasks, solving math problems remains a challenge for LLMs.", "mathematical-reasoning"),
    ("Language models are becoming capable of solving mathematical quantitative reasoning problems.", "mathematical-reasoning"),
    ("We formulate the navigation task as a reinforcement learning problem: the agent reaches goals in unseen mazes.", "robot-navigation"),
    ("A mobile robot learns navigation in previously unseen office environments.", "robot-navigation"),
    ("RL algorithms that learn from human feedback (RLHF) need to be efficient in terms of statistical complexity.",
     "reinforcement-learning-from-human-feedback"),
    ("We fine-tune the language model with reinforcement learning from human preferences.", "reinforcement-learning-from-human-feedback"),
])
def test_in_scheme_topics_an_expert_gave_link_where_the_abstract_writes_them(text: str, meant: str) -> None:
    assert meant in _found(text)


@pytest.mark.parametrize(("text", "wrong"), [
    ("We trained recurrent networks to perform navigation tasks in 2D arenas from velocity inputs; grid-like cells emerge.",
     "robot-navigation"),
    ("The calibration set of split conformal prediction gives coverage guarantees.", "calibration"),
    ("Our building simulator is lightweight and calibrated with recorded data.", "calibration"),
])
def test_fixed_labels_still_need_their_sense(text: str, wrong: str) -> None:
    assert wrong not in _found(text)


# Topics experts gave that the scheme had no concept for (issue #35): each now a concept that links where an abstract
# writes it, and rolls up to a parent every paper about it is about.
@pytest.mark.parametrize(("text", "meant", "parent"), [
    ("We study multi-agent path finding (MAPF): agents must reach their goals on a grid without collisions.",
     "multi-agent-path-finding", "planning"),
    ("Edge classification predicts the type of each transaction in a financial graph.", "edge-classification", "graph-learning"),
    ("We show that attention sinks emerge in the first token of language models during pretraining.", "attention-sink", "self-attention"),
    ("Autoformalization translates natural language mathematics into Isabelle statements.", "autoformalization", "mathematical-reasoning"),
    ("Premise selection retrieves the useful lemmas from a large formal library.", "premise-selection", "automated-reasoning"),
    ("Topological deep learning extends message passing to simplicial and cell complexes.", "topological-deep-learning",
     "geometric-deep-learning"),
    ("We learn visual affordances that tell a robot where to grasp and open articulated objects.", "affordance-learning", "robotics"),
    ("Unsupervised object-centric learning decomposes scenes into slots with slot attention.", "object-centric-representation-learning",
     "representation-learning"),
    ("Multi-agent debate among LLMs improves factuality: several models argue over rounds.", "multi-agent-debate", "llm-agents"),
    ("Contact-rich manipulation tasks such as peg insertion need force feedback.", "contact-rich-manipulation", "robotic-manipulation"),
    ("Repository-level code completion needs context from other files of the repository.", "repository-level-code-generation",
     "code-generation"),
    ("Prompt extraction attacks recover the hidden system prompt of a deployed chatbot.", "prompt-extraction", "machine-learning-security"),
    ("We learn neural compression of images and video with a rate-distortion objective.", "neural-compression", "data-compression"),
    ("Point-supervised instance segmentation needs only one annotated point per object.", "point-supervision", "weakly-supervised-learning"),
    ("Probabilistic embeddings represent each image as a Gaussian distribution in the embedding space.", "probabilistic-embeddings",
     "representation-learning"),
    ("We predict material properties of crystals: crystal property prediction from the periodic structure.",
     "material-property-prediction", "materials-discovery"),
    ("Oversquashing limits long-range interactions in graphs that message passing needs.", "long-range-interactions-in-graphs",
     "graph-neural-network"),
    ("Agents that learn diverse behaviors are more robust; we optimise behavior diversity.", "behavior-diversity", "reinforcement-learning"),
    ("We learn counterfactually invariant predictors using a causal graph of the features.", "counterfactual-invariance", "causality"),
    ("Multi-image understanding asks a model to reason across several pictures in one conversation.", "multi-image-understanding",
     "vision-language-model"),
    ("Transformers fail to recognise context-free languages such as Dyck languages.", "context-free-languages", "formal-languages"),
    # scheme 1.4.0: research topics of AI and robotics venues the scheme lacked (issue #35)
    ("We compile the planning problem into answer set programming and solve it with clingo.", "answer-set-programming",
     "knowledge-representation"),
    ("Abstract argumentation frameworks decide which arguments are acceptable under grounded semantics.",
     "computational-argumentation", "artificial-intelligence"),
    ("We give an envy-free allocation of indivisible goods (EF1) for agents with additive valuations.", "fair-division", "social-choice"),
    ("The agent must satisfy a task specification written in linear temporal logic.", "temporal-logic", "knowledge-representation"),
    ("Mean-field reinforcement learning approximates the interactions of thousands of agents.", "mean-field-reinforcement-learning",
     "multi-agent-reinforcement-learning"),
    ("Zero-shot coordination asks agents to cooperate with partners never seen in training.", "zero-shot-coordination",
     "multi-agent-reinforcement-learning"),
    ("Video LLMs answer questions about hour-long videos.", "video-language-model", "vision-language-model"),
    ("We study bimanual manipulation with two arms folding cloth.", "bimanual-manipulation", "robotic-manipulation"),
    ("Safety-tuned models show over-refusal: they decline benign prompts that look harmful.", "over-refusal", "safety-alignment"),
    ("Point-of-interest recommendation predicts the next venue a user checks in at.", "point-of-interest-recommendation",
     "recommender-system"),
    ("We study last-iterate convergence of optimistic gradient methods in monotone games.", "last-iterate-convergence",
     "convergence-analysis"),
    ("Unlearnable examples add imperceptible noise so that models trained on the data fail.", "unlearnable-examples",
     "data-poisoning"),
    ("We classify arrhythmias from 12-lead ECG recordings.", "electrocardiogram", "healthcare"),
    ("Learning to branch: a GNN imitates strong branching in branch-and-bound MILP solvers.", "learning-to-branch",
     "combinatorial-optimization"),
    ("We fuzz compilers with inputs written by a language model, fuzzing that finds new crashes.", "fuzzing", "software-engineering"),
    ("Cross-embodiment transfer lets one policy control arms and quadrupeds.", "cross-embodiment-learning", "robot-learning"),
    ("Medical LLMs answer clinical questions and summarise patient notes.", "medical-large-language-model", "large-language-model"),
    ("We audit DP-SGD empirically: privacy auditing with canaries gives lower bounds on epsilon.", "privacy-auditing",
     "differential-privacy"),
    ("Federated fine-tuning of LLMs on clients' private instructions.", "federated-fine-tuning", "federated-learning"),
])
def test_topics_experts_gave_have_concepts_that_link(scheme: scheme_.Scheme, text: str, meant: str, parent: str) -> None:
    assert meant in _found(text)
    assert KGC + parent in scheme.ancestors(KGC + meant)
