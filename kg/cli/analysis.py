"""`kg analyze`, `kg report`, `kg eval`, `kg train`: analysing a graph and measuring its links."""

from __future__ import annotations

from pathlib import Path

import click

from kg.cli.common import clean_errors, setting_option, with_progress


@click.command()
@click.argument("graph", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Graph file to write [GRAPH itself, replacing any earlier analysis].")
@setting_option("--seed", setting="ANALYZE_SEED", type=int)
@setting_option("--resolution", setting="ANALYZE_RESOLUTION", type=click.FloatRange(min=0, min_open=True))
@with_progress
@clean_errors
def analyze(graph: Path, output: Path | None, seed: int, resolution: float) -> None:
    """Add centrality, communities, related concepts, bridging and similar papers to a graph."""
    from kg.views.analyze import analyze as analyze_graph

    output = output or graph
    result = analyze_graph(graph, output, seed=seed, resolution=resolution)
    s = result.summary()
    click.echo(f"wrote {output}")
    click.echo(
        f"{s['concepts']} concepts ranked, {s['communities']} communities of two or more, {s['related']} related pairs, "
        f"{s['bridges']} bridging papers, {s['similar']} similar pairs"
    )


@click.command()
@click.argument("graph", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="HTML file to write [GRAPH with -report.html].")
@with_progress
@clean_errors
def report(graph: Path, output: Path | None) -> None:
    """Write a self-contained HTML report of a graph: charts, communities, related concepts."""
    from kg.views.report import report as report_graph

    page = report_graph(graph, output or graph.with_name(f"{graph.stem}-report.html"))
    click.echo(f"wrote {page}")


# --- evaluation: eval -----------------------------------------------------------------------


@click.command("eval")
@click.argument("gold", required=False, type=click.Path(path_type=Path))
@click.argument("graph", required=False, type=click.Path(path_type=Path))
@click.option("--keywords", type=click.Path(path_type=Path), help="Score against author keywords (JSONL: id, keywords) instead; GRAPH is then the only argument [the file's papers built in memory].")
@click.option("--expert", type=click.Path(path_type=Path), help="Score against expert topic lists (JSONL: id, about, not_about) instead; give the GRAPH to score, or --papers.")
@click.option("--papers", type=click.Path(path_type=Path), help="With --expert: the papers (JSONL: id, title, abstract) to build in memory, those the expert file lists.")
@click.option("--vocabulary", type=click.Path(path_type=Path), help="Topic names, one a line [topic-vocabulary.txt beside GOLD].")
@click.option("--beside", type=click.Path(path_type=Path), help="With --expert: a second expert's lists of some of the same papers; prints kg and the second expert side by side on them.")
@click.option("-v", "--verbose", is_flag=True, help="List each paper's missed and extra topics (with --keywords: grouped by kind; with --expert: misses by cause, wrong subjects by kind).")
@with_progress
@clean_errors
def eval_(
    gold: Path | None, graph: Path | None, keywords: Path | None, expert: Path | None, papers: Path | None,
    vocabulary: Path | None, beside: Path | None, verbose: bool,
) -> None:
    """Score a graph's subjects against gold topics, author keywords or expert topic lists: micro precision, recall and F1 [GRAPH: the latest graph in graphs/, else the sample]."""
    from kg.core.errors import UsageError
    from kg.views.evaluate import evaluate, evaluate_expert, evaluate_keywords, expert_report, keyword_report, report

    if beside is not None and expert is None:
        raise UsageError("--beside goes with --expert: kg eval --expert FIRST.jsonl --beside SECOND.jsonl GRAPH")
    if papers is not None and expert is None:
        raise UsageError("--papers goes with --expert: kg eval --expert EXPERT.jsonl --papers PAPERS.jsonl")
    if expert is not None:
        if keywords is not None or vocabulary is not None:
            raise UsageError("--expert scores on its own: leave out --keywords and --vocabulary")
        if gold is not None and graph is not None:
            raise UsageError("with --expert give at most one argument, the GRAPH to score")
        target = gold or graph
        if (target is None) == (papers is None):
            raise UsageError("with --expert give the GRAPH to score or --papers PAPERS.jsonl (id, title, abstract) to build in memory, one of them")
        click.echo(expert_report(evaluate_expert(expert, target, papers, beside), verbose=verbose))
        return
    if keywords is not None:
        if gold is not None and graph is not None:
            raise UsageError("with --keywords give at most one argument, the GRAPH to score")
        click.echo(keyword_report(evaluate_keywords(keywords, gold or graph), verbose=verbose))
        return
    if gold is None:
        raise UsageError("give a GOLD topics file, or --keywords FILE")
    if graph is None:
        from kg.graph.files import latest_graph

        graph = latest_graph()
        click.echo(f"graph: {graph} (the latest in graphs/; pass GRAPH to choose)" if graph else
                   "graph: the bundled sample, built in memory (no graph in graphs/)", err=True)
    click.echo(report(evaluate(gold, graph, vocabulary), verbose=verbose))


@click.command("train")
@click.option("--keywords", type=click.Path(path_type=Path), help="Papers with author keywords (JSONL: id, title, abstract, keywords).")
@click.option("--expert", type=click.Path(path_type=Path), help="Expert topic lists (JSONL: id, about, not_about); with --papers.")
@click.option("--papers", type=click.Path(path_type=Path), help="With --expert: the papers' titles and abstracts (JSON, JSONL or CSV with id, title, abstract).")
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path), help="Model file to write (JSON), for `kg build --model`.")
@setting_option("--folds", setting="TRAIN_FOLDS", type=click.IntRange(2))
@with_progress
@clean_errors
def train(keywords: Path | None, expert: Path | None, papers: Path | None, output: Path, folds: int) -> None:
    """Fit the link scorer on expert topic lists or author keywords; print its cross-validated figures (needs kg[train])."""
    from kg.core.errors import UsageError

    if (keywords is None) == (expert is None):
        raise UsageError("give --expert EXPERT.jsonl --papers PAPERS.jsonl, or --keywords KEYWORDS.jsonl, one of them")
    if (expert is None) != (papers is None):
        raise UsageError("--expert and --papers go together: kg train --expert EXPERT.jsonl --papers PAPERS.jsonl -o MODEL.json")
    from kg.graph.handle import refuse_overwrite

    refuse_overwrite(output, [p for p in (keywords, expert, papers) if p is not None])
    if expert is not None and papers is not None:
        from kg.extract.training.expert import PRECISION_FLOOR
        from kg.extract.training.expert import train_file as train_expert

        fitted = train_expert(expert, papers, output, folds)
        ev = fitted.cross_validated
        click.echo(f"cross-validated ({folds} folds by paper), threshold {fitted.scorer.threshold:.2f} "
                   f"(the lowest with precision at least {PRECISION_FLOOR:.2f}):")
        click.echo(f"expert   precision {ev.precision:.3f}  recall {ev.recall:.3f}  F1 {ev.f1:.3f}  subjects a paper {ev.subjects_a_paper:.2f}")
        click.echo(f"wrote {output}")
        return
    from kg.extract.training.scorer import train_file

    assert keywords is not None
    trained = train_file(keywords, output, folds)
    click.echo(f"cross-validated ({folds} folds by paper), threshold {trained.scorer.threshold:.2f}:")
    click.echo(trained.cross_validated.figures().line("roll-up"))
    click.echo(trained.cross_validated.figures(direct=True).line("direct"))
    click.echo(trained.untitled.figures().line("no title"))
    click.echo(f"wrote {output}")
