"""Score a built graph's subject links against hand-labelled topics (micro precision, recall, F1).

The rule (see the gold set's README): a gold topic is found when the paper's dcterms:subject is a
concept, or lies below a concept through skos:broader, whose prefLabel or altLabel equals the topic
name — case-insensitive, hyphens as spaces, a final plural "s" ignored. Only predicted topics in the
vocabulary count for precision. Gold lines find their papers by `abstract_start` against
dcterms:abstract.

The author-keyword rule (kg.extract.keywords) and the expert rule (kg.extract.expert) score mappings; here they get
their papers' subjects and mentions from a graph, matched by dcterms:identifier, and their reports.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kg.core.errors import InputError, UsageError
from kg.extract.expert import CAUSES, KINDS, NOT_LISTED, ExpertEvaluation, read_expert, score_expert
from kg.extract.ingest import fold
from kg.extract.keywords import Figures, Hierarchy, KeywordEvaluation, json_lines, read_keywords, score_keywords
from kg.extract.keywords import topic_key as topic_key
from kg.graph.facts import Facts, closure, read_facts


@dataclass(frozen=True)
class PaperScore:
    """One gold paper: the topics found, missed and wrongly predicted."""

    where: str  # "file#index" of the gold line
    paper: str | None  # the paper IRI, None when no paper of the graph has that abstract
    found: tuple[str, ...]
    missed: tuple[str, ...]
    extra: tuple[str, ...]


@dataclass(frozen=True)
class Evaluation:
    """Micro-averaged scores over (paper, topic) pairs, with the per-paper detail."""

    papers: tuple[PaperScore, ...]

    @property
    def tp(self) -> int:
        return sum(len(p.found) for p in self.papers)

    @property
    def fp(self) -> int:
        return sum(len(p.extra) for p in self.papers)

    @property
    def fn(self) -> int:
        return sum(len(p.missed) for p in self.papers)

    @property
    def figures(self) -> Figures:
        """The micro figures (kg.extract.keywords.Figures: precision, recall, F1)."""
        return Figures(self.tp, self.fp, self.fn)

    @property
    def precision(self) -> float:
        return self.figures.precision

    @property
    def recall(self) -> float:
        return self.figures.recall

    @property
    def f1(self) -> float:
        return self.figures.f1

    @property
    def unmatched(self) -> tuple[str, ...]:
        """Gold lines whose abstract is not in the graph."""
        return tuple(p.where for p in self.papers if p.paper is None)


def read_gold(path: str | Path) -> list[dict]:
    """Read a gold JSONL file: one {file, index, abstract_start, topics, mentioned_only} per line."""
    gold = []
    for number, entry in json_lines(path, "gold"):
        if not isinstance(entry, dict) or not isinstance(entry.get("abstract_start"), str) or not isinstance(entry.get("topics"), list):
            raise InputError(f"{path}:{number}: a gold line needs 'abstract_start' (text) and 'topics' (a list)")
        gold.append(entry)
    return gold


def read_vocabulary(path: str | Path) -> set[str]:
    """Topic names, one a line."""
    try:
        return {topic_key(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()}
    except FileNotFoundError:
        raise InputError(f"{path}: no such vocabulary file") from None


def evaluate(gold_path: str | Path, graph: str | Path | None = None, vocabulary: str | Path | None = None) -> Evaluation:
    """Score the subjects of `graph` (the latest graph in graphs/, else the sample built in memory) against a gold file.

    The vocabulary is `vocabulary`, else topic-vocabulary.txt beside the gold file, else every
    topic the gold file names.
    """
    gold = read_gold(gold_path)
    if vocabulary is None and (Path(gold_path).parent / "topic-vocabulary.txt").is_file():
        vocabulary = Path(gold_path).parent / "topic-vocabulary.txt"
    vocab = read_vocabulary(vocabulary) if vocabulary is not None else {
        topic_key(t) for g in gold for t in [*g["topics"], *g.get("mentioned_only", [])]
    }
    return score(gold, _graph(graph), vocab)


def _graph(graph: str | Path | None) -> Any:
    if graph is not None:
        return graph
    from kg.graph.files import latest_graph

    latest = latest_graph()
    if latest is not None:
        return latest
    from kg.pipeline.build import build

    return build()


def score(gold: list[dict], graph: Any, vocab: set[str]) -> Evaluation:
    """Score gold entries against a graph (a file, a kg.Built, pyoxigraph triples or kg.graph.facts.Facts)."""
    facts = read_facts(graph)
    abstracts = {s: fold(a) for s, a in facts.abstracts.items()}
    subjects: dict[str, set[str]] = {}
    for resource, concept in facts.subjects:
        subjects.setdefault(resource, set()).add(concept)
    labels = {c: {topic_key(n) for n in names} for c, names in facts.labels.items()}
    up = closure(facts.broader)

    def topics_of(concept: str) -> set[str]:
        return set().union(*(labels.get(c, set()) & vocab for c in up(concept)))

    # Report topics as the gold file spells them ("time series", not the comparison key "time serie").
    spelled = {topic_key(t): t.lower() for g in gold for t in [*g["topics"], *g.get("mentioned_only", [])]}

    def _named(keys: set[str]) -> tuple[str, ...]:
        return tuple(sorted(spelled.get(k, k) for k in keys))

    by_start = sorted(abstracts.items())
    used: set[str] = set()
    scores = []
    for entry in gold:
        where = f"{entry.get('file', '?')}#{entry.get('index', '?')}"
        start = fold(entry["abstract_start"])
        paper = next((iri for iri, text in by_start if iri not in used and text.startswith(start)), None)
        want = {topic_key(t) for t in entry["topics"]}
        got: set[str] = set()
        if paper is not None:
            used.add(paper)
            for concept in subjects.get(paper, ()):
                got |= topics_of(concept)
        scores.append(PaperScore(where, paper, _named(want & got), _named(want - got), _named(got - want)))
    return Evaluation(tuple(scores))


def report(result: Evaluation, verbose: bool = False) -> str:
    """The evaluation as text: per-paper misses and extras when verbose, then the micro scores."""
    lines = []
    if verbose:
        for p in result.papers:
            if p.paper is None:
                lines.append(f"{p.where}: no paper of the graph has this abstract")
            elif p.missed or p.extra:
                lines.append(f"{p.where} {p.paper}")
                if p.missed:
                    lines.append("  missed: " + ", ".join(p.missed))
                if p.extra:
                    lines.append("  extra:  " + ", ".join(p.extra))
    if result.unmatched and not verbose:
        lines.append(f"warning: {len(result.unmatched)} gold abstracts not found in the graph (use -v to list them)")
    lines.append(f"papers {len(result.papers)}  pairs: {result.tp} found, {result.fn} missed, {result.fp} extra")
    lines.append(f"precision {result.precision:.3f}  recall {result.recall:.3f}  F1 {result.f1:.3f}")
    return "\n".join(lines)



@dataclass(frozen=True)
class KeywordResult:
    """The keyword rule's figures for a graph, with what -v needs to explain them."""

    evaluation: KeywordEvaluation
    labels: dict[str, str]  # concept IRI → prefLabel
    mentioned: dict[str, frozenset[str]]  # paper id → concepts its annotations name


def evaluate_keywords(keywords: str | Path, graph: Any = None) -> KeywordResult:
    """Score a graph's subjects against the author keywords of a keyword file (see kg.extract.keywords).

    Papers are matched by dcterms:identifier. Without `graph`, the keyword file's own papers
    (id, title, abstract) are built in memory with the default extraction.
    """
    entries = read_keywords(keywords)
    if graph is None:
        from kg.pipeline.build import build

        graph = build([keywords])
    facts = read_facts(graph)
    hierarchy, predicted, mentioned = _by_paper(facts)
    result = score_keywords(entries, predicted, hierarchy)
    return KeywordResult(result, dict(facts.concepts), {p: hierarchy.closure(c) for p, c in mentioned.items()})


def _by_paper(facts: Facts) -> tuple[Hierarchy, dict[str, set[str]], dict[str, set[str]]]:
    """The scheme as the keyword and expert rules see it, and each paper's subjects and mentioned concepts, by dcterms:identifier."""
    ids = {resource: identifier for identifier, resource in facts.identifiers.items()}
    hierarchy = Hierarchy(
        {c: frozenset(topic_key(n) for n in names) for c, names in facts.labels.items()},
        {c: frozenset(b) for c, b in facts.broader.items()},
    )
    predicted: dict[str, set[str]] = {ids[p]: set() for p in facts.papers if p in ids}
    for paper, concept in facts.subjects:
        if paper in ids:
            predicted[ids[paper]].add(concept)
    mentioned: dict[str, set[str]] = {}
    for paper, concept in facts.mentions:
        if paper in ids:
            mentioned.setdefault(ids[paper], set()).add(concept)
    return hierarchy, predicted, mentioned


def keyword_report(result: KeywordResult, verbose: bool = False) -> str:
    """The keyword figures as text; with `verbose`, each paper's misses and extras grouped by kind.

    Misses are "not in the text" (no mention of the concept or of anything below it) or "below the
    threshold" (mentioned, not made a subject); extras are "direct" (a subject the keywords do not
    support) or "rolled up" (a concept above a subject).
    """
    ev = result.evaluation
    name = result.labels.get
    lines = []
    if verbose:
        for p in ev.papers:
            missed = p.gold - p.predicted
            extra = ev.extras(p)
            if not (missed or extra):
                continue
            seen = result.mentioned.get(p.id, frozenset())
            groups = {
                "missed, not in the text": missed - seen,
                "missed, below the threshold": missed & seen,
                "extra, a subject": extra & p.predicted_direct,
                "extra, rolled up": extra - p.predicted_direct,
            }
            lines.append(p.id)
            for kind, concepts in groups.items():
                if concepts:
                    lines.append(f"  {kind}: " + ", ".join(sorted(name(c, c) for c in concepts)))
    scored = len(ev.papers)
    lines.append(f"papers {scored + ev.left_out}: {scored} scored, {ev.left_out} without a keyword that names a concept")
    if ev.unmatched:
        lines.append(f"warning: {ev.unmatched} scored papers are not in the graph (matched by dcterms:identifier)")
    lines.append(ev.figures().line("roll-up"))
    lines.append(ev.figures(direct=True).line("direct"))
    venues = ev.groups()
    if len(venues) > 1:  # where the figures come from: keyword habits differ by venue and year
        for group in venues:
            n = sum(1 for p in ev.papers if p.group == group)
            lines.append(f"  {group or '(no venue)'} ({n} papers) " + ev.figures(group=group).line("roll-up").removeprefix("roll-up").strip())
    lines.append(f"coverage {ev.coverage:.3f} of the keywords used by at least 3 papers name a concept")
    return "\n".join(lines)


@dataclass(frozen=True)
class ExpertResult:
    """The expert rule's figures for a graph (kg.extract.expert), with the concept labels its report needs."""

    evaluation: ExpertEvaluation
    labels: dict[str, str]  # concept IRI → prefLabel
    # With a second expert's lists of some of the papers: kg and the second expert, each scored against the first on
    # those papers alone (the second expert's subjects are the concepts their about labels name).
    beside: tuple[ExpertEvaluation, ExpertEvaluation] | None = None


def evaluate_expert(expert: str | Path, graph: Any = None, papers: str | Path | None = None, beside: str | Path | None = None) -> ExpertResult:
    """Score a graph's subjects against the topic lists of an expert file (see kg.extract.expert).

    Papers are matched by dcterms:identifier. An expert file has no abstracts: without `graph`, the papers of
    `papers` (JSONL: id, title, abstract) that the expert file lists are built in memory with the default extraction.
    """
    entries = read_expert(expert)
    if (graph is None) == (papers is None):
        raise UsageError("evaluate_expert needs graph= (a built graph) or papers= (a JSONL file with id, title, abstract), one of them")
    if papers is not None:
        from kg.pipeline.build import build

        graph = build([papers], ids={e.id for e in entries})
    facts = read_facts(graph)
    hierarchy, predicted, mentioned = _by_paper(facts)
    result = ExpertResult(score_expert(entries, predicted, hierarchy, facts.umbrellas, mentioned), dict(facts.concepts))
    if beside is None:
        return result
    second = {e.id: e for e in read_expert(beside)}
    shared = [e for e in entries if e.id in second]
    if not shared:
        raise UsageError(f"{beside}: none of its papers is in {expert}; give a second expert's lists of the same papers")
    named_by = hierarchy.named_by()
    theirs = {i: {c for t in e.about for c in named_by.get(topic_key(t.label), ())} for i, e in second.items()}
    kg_there = score_expert(shared, {e.id: predicted.get(e.id, set()) for e in shared if e.id in predicted}, hierarchy, facts.umbrellas, mentioned)
    return replace(result, beside=(kg_there, score_expert(shared, theirs, hierarchy, facts.umbrellas)))


def expert_report(result: ExpertResult, verbose: bool = False) -> str:
    """The expert figures as text; with `verbose`, each paper's misses by cause and wrong subjects by kind.

    The counts of misses by cause and of wrong subjects by kind end the report either way.
    """
    ev = result.evaluation
    kinds = (*KINDS, NOT_LISTED)
    lines = []
    if verbose:
        for p in ev.papers:
            missed = [t for t in p.topics if not t.found]
            wrong = [s for s in p.subjects if not s.right]
            if not (missed or wrong):
                continue
            lines.append(p.id if p.in_graph else f"{p.id} (not in the graph)")
            for cause in CAUSES:
                labels = [t.label for t in missed if t.cause == cause]
                if labels:
                    lines.append(f"  missed, {cause}: " + ", ".join(labels))
            for kind in kinds:
                names = sorted(result.labels.get(s.concept, s.concept) for s in wrong if (s.kind or NOT_LISTED) == kind)
                if names:
                    lines.append(f"  wrong, {kind}: " + ", ".join(names))

    def counts(counter: Counter[str], names: tuple[str, ...]) -> str:
        return ", ".join(f"{name} {counter[name]}" for name in names)

    lines.append(f"papers {len(ev.papers)}: {len(ev.papers) - ev.unmatched} in the graph, {ev.empty} with no about topic")
    if ev.unmatched:
        lines.append(f"warning: {ev.unmatched} papers of the expert file are not in the graph (matched by dcterms:identifier); they count as having no subject")
    lines.append(f"precision {ev.precision:.3f}  recall {ev.recall:.3f}  F1 {ev.f1:.3f}  ({ev.right} of {ev.subjects} subjects right, {ev.found} of {ev.topics} topics found)")
    lines.append(f"recall over in-scheme topics {ev.recall_in_scheme:.3f}  ({ev.in_scheme} topics whose label names a concept)")
    lines.append(f"subjects a paper {ev.subjects_a_paper:.3f} (expert topics a paper {ev.topics_a_paper:.3f})")
    lines.append(f"generic share {ev.generic_share:.3f}  (subjects right only as the broader area of an about topic)")
    if result.beside is not None:
        lines.append(f"beside a second expert, on the {len(result.beside[0].papers)} papers both experts read (scored against the first):")
        lines.append("  | reader | P | R | in-scheme R | subjects a paper | generic share |")
        lines.append("  |---|---:|---:|---:|---:|---:|")
        for name, e in zip(("kg", "second expert"), result.beside):
            lines.append(f"  | {name} | {e.precision:.3f} | {e.recall:.3f} | {e.recall_in_scheme:.3f} | {e.subjects_a_paper:.2f} | {e.generic_share:.3f} |")
    hits = ev.not_about_hits()
    right_hits = sum(hits.values()) - sum(n for kind, n in ev.wrong_by_kind().items() if kind != NOT_LISTED)
    lines.append("subjects on a not_about concept: " + counts(hits, KINDS) + (f" ({right_hits} of them right: at, below or above an about concept)" if right_hits else ""))
    lines.append("wrong subjects by kind: " + counts(ev.wrong_by_kind(), kinds))
    lines.append("misses by cause: " + counts(ev.misses_by_cause(), CAUSES))
    return "\n".join(lines)
