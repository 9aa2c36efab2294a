"""`kg build`, `kg export`, `kg render`: making graphs and drawing them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kg.cli.common import Jobs, clean_errors, params_of, refuse_overwrite, setting_option, step, with_progress
from kg.core.defaults import BASE, GRAPH_DIR, MAP_CONCEPTS, RENDER_HOPS, RENDER_HOPS_CONCEPTS, RENDER_MAX_NODES, SAMPLE_NAME

if TYPE_CHECKING:
    from kg.graph.handle import Derive
    from kg.pipeline.plan import Options
    from kg.sparql.store import Loading


@click.command(epilog="""\b
Examples:
  kg build                              the bundled ICML 2024 sample -> graphs/icml2024.ttl + .html
  kg build my.jsonl                     your papers -> graphs/my.ttl + graphs/my.html
  kg build more.csv --update graphs/my.ttl    add only the new papers""")
@click.argument("inputs", nargs=-1, type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Turtle file to write [graphs/icml2024.ttl for the sample].")
@click.option("--scheme", "schemes", multiple=True, type=click.Path(path_type=Path), help="Extra SKOS concept scheme (repeatable).")
@click.option("--no-default-scheme", is_flag=True, help="Use only the --scheme files, not the bundled ML scheme.")
@click.option("--threshold", type=click.FloatRange(0, 1), default=None, help="Probability a link needs to be a dcterms:subject [the scorer model's own, see kg train].")
@click.option("--model", type=click.Path(path_type=Path), help="Scorer model written by `kg train` [the bundled one].")
@click.option("--base", default=BASE, show_default=True, help="Base IRI for papers and annotations.")
@click.option("--render/--no-render", "render_html", default=True, show_default=True, help="Also write an HTML view beside the graph.")
@click.option("--skip-bad", is_flag=True, help="Skip malformed records and report them instead of stopping.")
@setting_option("-j", "--jobs", setting="BUILD_JOBS", type=Jobs(), metavar="N|auto")
@click.option("--progress/--no-progress", default=None, help="Progress on stderr even when it is no terminal, or none [on when stderr is a terminal and -q is not given].")
@click.option("--update", "update_graph", type=click.Path(path_type=Path), help="Add only the papers of INPUTS not already in this graph file, in place (or to -o).")
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="dask: extract on a Dask cluster and write a folder of N-Triples shards (pip install 'kg[dask]').")
@click.option("--scheduler", metavar="ADDRESS", help="With --engine dask: the scheduler (tcp://HOST:8786) [a local cluster of --jobs workers].")
@click.option("--venue", metavar="NAME", help="Venue for the papers whose records have none (or only arXiv), e.g. ICML.")
@click.option("--year", type=click.IntRange(1, 9999), help="Publication year for the papers whose records have none.")
@click.option("--keep-duplicates", is_flag=True, help="Keep records of the same paper under other ids (same DOI, arXiv id, title and first author, or abstract) as separate papers.")
@click.option("--store/--no-store", "with_store", default=True, show_default=True,
              help="Also load the graph into its SPARQL store now, which ad-hoc queries and kg serve open at once (else the first of them loads it).")
@with_progress
@clean_errors
def build(
    inputs: tuple[Path, ...],
    output: Path | None,
    schemes: tuple[Path, ...],
    no_default_scheme: bool,
    threshold: float | None,
    model: Path | None,
    base: str,
    render_html: bool,
    skip_bad: bool,
    jobs: int | str,
    progress: bool | None,
    update_graph: Path | None,
    engine: str,
    scheduler: str | None,
    venue: str | None,
    year: int | None,
    keep_duplicates: bool,
    with_store: bool,
) -> None:
    """Build a knowledge graph from paper lists (the bundled ICML 2024 sample when no INPUT is given)."""

    from kg.core import progress as progress_
    from kg.graph.handle import GraphFile
    from kg.pipeline.build import build_with, write
    from kg.pipeline.plan import Options
    from kg.sparql.store import load_aside

    if progress is not None:
        progress_.enable(progress)
    # The options of every engine, for a build and an update: spelled once (kg.pipeline.plan).
    options = Options(schemes=schemes, default_scheme=not no_default_scheme, threshold=threshold, model=model, base=base, skip_bad=skip_bad,
                      venue=venue, year=year, keep_duplicates=keep_duplicates)
    if engine == "dask" or scheduler is not None:
        _cluster_build(inputs, output, update_graph, scheduler, options, jobs)
        return
    # The files derived from the graph besides its query index, made in the write's transaction (kg.graph.handle).
    # The store loads in another process while this one makes the index's tables and draws the page (decisions 0048,
    # 0060): it starts as soon as the graph file is in place, and is waited for last.
    derived: list[Derive] = [lambda graph: click.echo(f"wrote {graph}")]
    loading: list[Loading] = []
    aside: list[Derive] = [lambda graph: loading.append(load_aside(graph))] if with_store else []
    if render_html:
        derived.append(_page)
    if with_store:
        derived.append(lambda graph: _store(graph, loading.pop() if loading else None))
    try:
        if update_graph is not None:  # up to date: its store is loaded if it is missing
            _update(update_graph, inputs, output, render_html, options, jobs, [*derived[:1], *aside, *derived[1:]],
                    [_store] if with_store else [])
            return
        if output is None:
            output = GRAPH_DIR / (f"{SAMPLE_NAME}.ttl" if not inputs else f"{inputs[0].stem}.ttl")
        refuse_overwrite(output, [*inputs, *options.reads()], output.with_suffix(".html") if render_html else None)
        GraphFile(output).refuse_sharded()  # before the build, not after it
        built = [build_with(inputs or None, options, jobs=jobs)]
        for problem in built[0].problems:
            click.echo(f"warning: {problem}", err=True)
        notes = built[0].notes
        summary: list[dict[str, Any]] = []
        # Once the graph file is in place its summary is taken and the papers and extractions let go, before the index's
        # tables, the page and the store: at 100,000 papers they are most of what the build holds (decisions 0059, 0060).
        # Their memory is given back to the system, not kept for reuse: 2,384 -> 2,060 MB at 100,000 papers.
        write(built[0], output, derived=derived, placed=[lambda graph: _let_go(built, summary), *aside])
    finally:
        for started in loading:  # the build failed or was stopped before the store was waited for: no store published
            started.stop()
    s = summary[0]
    click.echo(f"{s['papers']} papers, {s['concepts']} concepts, {s['links']} subject links, {s['mentions']} mentions")
    if s["top"]:
        click.echo("top concepts: " + ", ".join(f"{label} ({n})" for label, n in s["top"]))
    for note in notes:  # advice, after the work is done: fields not read, papers without a venue or year
        click.echo(f"note: {note}", err=True)


def _let_go(built: list[Any], summary: list[dict[str, Any]]) -> None:
    """Take the build's summary and let its papers, extractions and extractor go, their memory given back to the system."""
    from kg.core.memory import give_back_freed
    from kg.extract import forget_extractors

    summary.append(built.pop().summary())
    forget_extractors()
    give_back_freed()


def _page(graph: Path) -> None:
    """The HTML view beside the graph, drawn from the version just written (on a heap with what the query index's
    writer freed, its SQLite caches and term tables, given back to the system first)."""
    from kg.core.memory import give_back_freed
    from kg.views.render import render as render_graph

    give_back_freed()
    click.echo(f"wrote {render_graph(graph, graph.with_suffix('.html'))}")


def _store(graph: Path, loading: Loading | None = None) -> None:
    """The SPARQL store for ad-hoc queries and `kg serve`, loaded now, once per version of the graph (the named
    queries need only the query index): a user who built a graph does not wait for it again at the first query.
    `loading`: the store already being loaded in another process, waited for."""
    from kg.sparql.store import ensure_store, store_dir

    step(f"loading {graph} into its SPARQL store")
    if loading is not None:
        loading.wait()
    else:
        ensure_store(graph)
    click.echo(f"wrote {store_dir(graph)}")


@click.command(epilog="""\b
Examples:
  kg export graphs/my.ttl -o my.jsonld          JSON-LD with a compact @context
  kg export graphs/my.ttl -o my.graphml         for Gephi, Cytoscape, yEd
  kg export graphs/my.ttl -o concepts.gexf --view concepts
  kg export graphs/my.ttl -o links.csv            papers × concepts: score, evidence spans
  kg export graphs/my.ttl -o papers.csv --table papers
  kg export graphs/my.ttl -o concepts.csv --table concepts""")
@click.argument("graph", type=click.Path(path_type=Path))
@click.option("-f", "--format", "fmt",
              help="ttl, nt, nq, trig, jsonld, xml; graphml, gexf for graph tools; csv for spreadsheets [from the -o suffix, else ttl].")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="File to write [standard output].")
@click.option("--view", type=click.Choice(["papers", "concepts"]), default="papers", show_default=True, help="GraphML/GEXF: paper–concept graph or concept co-occurrence graph.")
@click.option("--table", type=click.Choice(["links", "papers", "concepts"]), default="links", show_default=True,
              help="CSV: one row per paper–concept link (score, evidence), per paper (authors, venue, DOI, subjects), or per concept (counts).")
@with_progress
@clean_errors
def export(graph: Path, fmt: str | None, output: Path | None, view: str, table: str) -> None:
    """Convert a graph file to another RDF format, to GraphML/GEXF for Gephi and Cytoscape, or to a CSV table."""
    from kg.views.export import export_counted, export_to, format_for

    fmt = format_for(fmt, output)
    unit = {"graphml": "nodes", "gexf": "nodes", "csv": "rows"}.get(fmt, "triples")
    if output is None:
        step(f"converting {graph}")
        stdout = sys.stdout.buffer
        count = export_to(graph, stdout, fmt or "ttl", view, table)
        stdout.flush()
        if sys.stderr.isatty():
            click.echo(f"{count:,} {unit}", err=True)
    else:
        step(f"writing {output}")
        _, count = export_counted(graph, output, fmt, view, table)
        click.echo(f"wrote {output} ({count:,} {unit})")


@click.command(epilog="""\b
Examples:
  kg render graphs/my.ttl                       the default page (a concept map for large graphs)
  kg render graphs/my.ttl --view map --max-nodes 300
  kg render graphs/my.ttl --concept "reinforcement learning" --hops 1""")
@click.argument("graph", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path),
              help="HTML file to write [GRAPH with .html; with --concept or --query a page of its own: GRAPH-CONCEPT.html, GRAPH-QUERY.html].")
@click.option("--view", type=click.Choice(["papers", "concepts", "map"]),
              help="papers: papers and their concepts; concepts: concepts linked by shared papers; map: concepts by area with "
                   "drill-down [map for large graphs, else papers].")
@click.option("--concept", metavar="LABEL", help="Draw only the neighbourhood of this concept (label, alt label, slug, kgc: name or IRI).")
@click.option("--hops", type=click.IntRange(min=0), help=f"Steps out from --concept [{RENDER_HOPS} in the papers view, {RENDER_HOPS_CONCEPTS} in the concepts view].")
@click.option("--query", metavar="NAME|FILE.rq", help="Draw the graph returned by this CONSTRUCT query (a named query or a file).")
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE", help="A --query parameter (repeatable).")
@click.option("--max-nodes", type=click.IntRange(min=0), help="Draw at most N nodes, noting the rest on the page: the most connected, or in a large papers view N linked papers "
                   f"[{RENDER_MAX_NODES}; the map: {MAP_CONCEPTS} concepts; 0 = all].")
@click.option("--title", help="Page heading [from the view and the graph file name].")
@setting_option("--timeout", setting="QUERY_TIMEOUT", type=click.FloatRange(0), more="For --query, as for kg query.")
@with_progress
@clean_errors
def render(
    graph: Path,
    output: Path | None,
    view: str | None,
    concept: str | None,
    hops: int | None,
    query: str | None,
    params: tuple[str, ...],
    max_nodes: int | None,
    title: str | None,
    timeout: float,
) -> None:
    """Draw a graph as an interactive HTML page that works offline."""
    from kg.views.render import render as render_graph

    page = render_graph(graph, output or _page_for(graph, concept, query), view=view, concept=concept, hops=hops,
                        query=query, params=params_of(params), max_nodes=max_nodes, title=title, timeout=timeout)
    click.echo(f"wrote {page} ({page.nodes} nodes, {page.edges} edges)")
    if page.note:
        click.echo(f"note: {page.note}", err=True)


def _page_for(graph: Path, concept: str | None, query: str | None) -> Path:
    """The default page of `kg render`: the graph's own page, or for one concept or query a page beside it of its own
    (graphs/icml2024-reinforcement-learning.html), so drawing a part never writes over the page of the whole."""
    from kg.graph.vocabulary import slug

    part = concept if concept is not None else Path(query).stem if query is not None else None
    return graph.with_suffix(".html") if part is None else graph.with_name(f"{graph.stem}-{slug(part)}.html")


def _cluster_build(inputs: tuple[Path, ...], output: Path | None, update_graph: Path | None, scheduler: str | None, options: Options,
                   workers: int | str) -> None:
    """`kg build --engine dask`: a sharded graph folder, built (or updated) on a Dask cluster."""
    from kg.core.errors import UsageError
    from kg.pipeline import cluster, parallel
    from kg.pipeline.build import SAMPLE_NAME

    if update_graph is not None and not inputs:
        raise UsageError("--update needs the new inputs too: kg build --engine dask --update FOLDER NEW_INPUT ...")
    if update_graph is not None and output is not None and output != update_graph:
        raise UsageError("--engine dask --update adds shards to the folder itself; leave out -o")
    folder = update_graph or output or GRAPH_DIR / (f"{SAMPLE_NAME}-shards" if not inputs else f"{inputs[0].stem}-shards")
    result = cluster.build(inputs or None, folder, options, scheduler=scheduler, workers=parallel.processes(workers),
                           update=update_graph is not None)
    for problem in result.problems:
        click.echo(f"warning: {problem}", err=True)
    m = result.manifest
    if update_graph is not None and not result.added:
        click.echo(f"{folder} is up to date: all {result.unchanged} papers of the inputs are in it")
        return
    replaced = f", {result.replaced} replaced (abstract changed)" if result.replaced else ""
    click.echo(f"wrote {folder}/manifest.json: {result.added} papers {'added' if update_graph else 'built'}{replaced}; "
               f"the graph has {m.papers} papers, {m.triples} triples in {len(m.shards)} shards")


def _update(graph: Path, inputs: tuple[Path, ...], output: Path | None, render_html: bool, options: Options, jobs: int | str,
            derived: list[Derive], kept: list[Derive]) -> None:
    """`kg build --update GRAPH INPUT...`: add the new papers of INPUTS to GRAPH, in place or to OUTPUT (`derived`: what
    makes the files derived from the graph written; `kept`: those of a graph left as it was)."""
    from kg.core.errors import UsageError
    from kg.pipeline.update import update_with

    if not inputs:
        raise UsageError("--update needs the new inputs too: kg build --update GRAPH NEW_INPUT ...")
    page = [(output or graph).with_suffix(".html")] if render_html else []
    result = update_with(graph, inputs, options, output=output, jobs=jobs, derived=derived, kept=kept, beside=page)
    for problem in result.problems:
        click.echo(f"warning: {problem}", err=True)
    held = f" ({result.duplicates} of them under another id)" if result.duplicates else ""
    if not result.changed:
        click.echo(f"{result.path} is up to date: all {result.unchanged} papers of the inputs are in it{held}")
        for note in result.notes:
            click.echo(f"note: {note}", err=True)
        return
    click.echo(f"{result.added} papers added, {result.replaced} replaced (abstract changed), {result.unchanged} already in the graph{held}")
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    if result.stale_analysis:
        click.echo(f"warning: the analysis in {result.path} (communities, ranks, similar papers) does not cover the new papers; "
                   f"run 'kg analyze {result.path}' again", err=True)
