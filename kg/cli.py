"""The `kg` command: thin click commands over the Python API, turning KgError into one clean line."""

from __future__ import annotations

import functools
import gc
import os
import sys
from pathlib import Path
from typing import Any, Callable

import click

from .defaults import BASE, GRAPH_DIR, SAMPLE_NAME, SERVE_MAX_ROWS, SERVE_TIMEOUT
from .defaults import VERSION as __version__
from .errors import KgError


def _step(message: str) -> None:
    """Say on a terminal's stderr what a step that takes seconds is doing (nothing when stderr is a file or pipe)."""
    if sys.stderr.isatty():
        click.echo(f"{message}…", err=True)


def _clean_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Report any failure as one line 'Error: …' (exit 1; Ctrl-C exits 130), never a traceback.

    Set KG_DEBUG=1 to get the traceback of an unexpected error (a bug in kg) instead.
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except KgError as exc:
            raise click.ClickException(str(exc)) from None
        except KeyboardInterrupt:
            # Outputs are written with atomic_write, so an interrupted run leaves them as they were.
            click.echo("Error: interrupted; outputs not yet written were left as they were", err=True)
            raise click.exceptions.Exit(130) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:
            if os.environ.get("KG_DEBUG"):
                raise
            raise click.ClickException(
                f"unexpected {type(exc).__name__}: {exc} (a bug in kg: please report it; KG_DEBUG=1 shows the traceback)"
            ) from None

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kg")
def cli() -> None:
    """kg: map research papers onto machine-learning concepts as an RDF knowledge graph."""


@cli.command(epilog="""\b
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
@click.option("-j", "--jobs", type=click.IntRange(1), default=1, show_default=True, help="Worker processes for extraction (same output for any number).")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr [on when stderr is a terminal].")
@click.option("--update", "update_graph", type=click.Path(path_type=Path), help="Add only the papers of INPUTS not already in this graph file, in place (or to -o).")
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="dask: extract on a Dask cluster and write a folder of N-Triples shards (pip install 'kg[dask]').")
@click.option("--scheduler", metavar="ADDRESS", help="With --engine dask: the scheduler (tcp://HOST:8786) [a local cluster of --jobs workers].")
@_clean_errors
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
    jobs: int,
    progress: bool | None,
    update_graph: Path | None,
    engine: str,
    scheduler: str | None,
) -> None:
    """Build a knowledge graph from paper lists (the bundled ICML 2024 sample when no INPUT is given)."""

    from .build import build as build_graph
    from .build import write
    from .render import render as render_graph

    # The options a full build and an update share, spelled once.
    options: dict[str, Any] = {
        "schemes": schemes,
        "default_scheme": not no_default_scheme,
        "threshold": threshold,
        "model": model,
        "base": base,
        "skip_bad": skip_bad,
        "jobs": jobs,
        "progress": sys.stderr.isatty() if progress is None else progress,
    }
    if engine == "dask" or scheduler is not None:
        _cluster_build(inputs, output, update_graph, scheduler, options)
        return
    if update_graph is not None:
        _update(update_graph, inputs, output, render_html, options)
        return
    if output is None:
        output = GRAPH_DIR / (f"{SAMPLE_NAME}.ttl" if not inputs else f"{inputs[0].stem}.ttl")
    _refuse_overwrite(output, inputs, output.with_suffix(".html") if render_html else None)
    built = build_graph(inputs or None, **options)
    for problem in built.problems:
        click.echo(f"warning: {problem}", err=True)
    _step(f"writing {output}")
    write(built, output)
    click.echo(f"wrote {output}")
    if render_html:
        _step(f"drawing {output.with_suffix('.html')}")
        page = render_graph(output, output.with_suffix(".html"))
        click.echo(f"wrote {page}")
    s = built.summary()
    click.echo(f"{s['papers']} papers, {s['concepts']} concepts, {s['links']} subject links, {s['mentions']} mentions")
    if s["top"]:
        click.echo("top concepts: " + ", ".join(f"{label} ({n})" for label, n in s["top"]))


@cli.command(epilog="""\b
Examples:
  kg export graphs/my.ttl -o my.jsonld          JSON-LD with a compact @context
  kg export graphs/my.ttl -o my.graphml         for Gephi, Cytoscape, yEd
  kg export graphs/my.ttl -o concepts.gexf --view concepts""")
@click.argument("graph", type=click.Path(path_type=Path))
@click.option("-f", "--format", "fmt", help="ttl, nt, nq, trig, jsonld, xml; or graphml, gexf for graph tools [from the -o suffix, else ttl].")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="File to write [standard output].")
@click.option("--view", type=click.Choice(["papers", "concepts"]), default="papers", show_default=True, help="GraphML/GEXF: paper–concept graph or concept co-occurrence graph.")
@_clean_errors
def export(graph: Path, fmt: str | None, output: Path | None, view: str) -> None:
    """Convert a graph file to another RDF format, or to GraphML/GEXF for Gephi and Cytoscape."""
    from .export import export as export_graph
    from .export import export_bytes

    if output is None:
        click.echo(export_bytes(graph, fmt or "ttl", view).decode("utf-8"), nl=False)
    else:
        export_graph(graph, output, fmt, view)
        click.echo(f"wrote {output}")


@cli.command(epilog="""\b
Examples:
  kg render graphs/my.ttl                       the default page (a concept map for large graphs)
  kg render graphs/my.ttl --view map --max-nodes 300
  kg render graphs/my.ttl --concept "reinforcement learning" --hops 1""")
@click.argument("graph", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="HTML file to write [GRAPH with .html].")
@click.option("--view", type=click.Choice(["papers", "concepts", "map"]),
              help="papers: papers and their concepts; concepts: concepts linked by shared papers; map: concepts by area with "
                   "drill-down [map for large graphs, else papers].")
@click.option("--concept", metavar="LABEL", help="Draw only the neighbourhood of this concept (label, alt label or IRI).")
@click.option("--hops", type=click.IntRange(min=0), help="Steps out from --concept [2 in the papers view, 1 in the concepts view].")
@click.option("--query", metavar="NAME|FILE.rq", help="Draw the graph returned by this CONSTRUCT query (a named query or a file).")
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE", help="A --query parameter (repeatable).")
@click.option("--max-nodes", type=click.IntRange(min=0), help="Keep the N most connected nodes, noting the rest on the page [500; the map: 150 concepts; 0 = all].")
@click.option("--title", help="Page heading [from the view and the graph file name].")
@_clean_errors
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
) -> None:
    """Draw a graph as an interactive HTML page that works offline."""
    from .render import render as render_graph

    _step(f"drawing {output or graph.with_suffix('.html')}")
    page = render_graph(graph, output or graph.with_suffix(".html"), view=view, concept=concept, hops=hops,
                        query=query, params=_params(params), max_nodes=max_nodes, title=title)
    click.echo(f"wrote {page} ({page.nodes} nodes, {page.edges} edges)")
    if page.note:
        click.echo(f"note: {page.note}", err=True)


def _cluster_build(inputs: tuple[Path, ...], output: Path | None, update_graph: Path | None, scheduler: str | None, options: dict[str, Any]) -> None:
    """`kg build --engine dask`: a sharded graph folder, built (or updated) on a Dask cluster."""
    from .build import SAMPLE_NAME
    from .cluster import build as cluster_build
    from .errors import UsageError

    if update_graph is not None and not inputs:
        raise UsageError("--update needs the new inputs too: kg build --engine dask --update FOLDER NEW_INPUT ...")
    if update_graph is not None and output is not None and output != update_graph:
        raise UsageError("--engine dask --update adds shards to the folder itself; leave out -o")
    folder = update_graph or output or GRAPH_DIR / (f"{SAMPLE_NAME}-shards" if not inputs else f"{inputs[0].stem}-shards")
    workers = options.pop("jobs")
    result = cluster_build(inputs or None, folder, scheduler=scheduler, workers=workers,
                           update=update_graph is not None, **options)
    for problem in result.problems:
        click.echo(f"warning: {problem}", err=True)
    m = result.manifest
    if update_graph is not None and not result.added:
        click.echo(f"{folder} is up to date: all {result.unchanged} papers of the inputs are in it")
        return
    click.echo(f"wrote {folder}/manifest.json: {result.added} papers {'added' if update_graph else 'built'}; "
               f"the graph has {m.papers} papers, {m.triples} triples in {len(m.shards)} shards")


def _update(graph: Path, inputs: tuple[Path, ...], output: Path | None, render_html: bool, options: dict[str, Any]) -> None:
    """`kg build --update GRAPH INPUT...`: add the new papers of INPUTS to GRAPH."""
    from .errors import UsageError
    from .render import render as render_graph
    from .update import update as update_graph

    if not inputs:
        raise UsageError("--update needs the new inputs too: kg build --update GRAPH NEW_INPUT ...")
    _refuse_overwrite(output or graph, inputs, (output or graph).with_suffix(".html") if render_html else None)
    result = update_graph(graph, inputs, output=output, **options)
    for problem in result.problems:
        click.echo(f"warning: {problem}", err=True)
    if not result.changed:
        click.echo(f"{result.path} is up to date: all {result.unchanged} papers of the inputs are in it")
        return
    click.echo(f"wrote {result.path}")
    if render_html:
        page = render_graph(result.path, result.path.with_suffix(".html"))
        click.echo(f"wrote {page}")
    click.echo(f"{result.added} papers added, {result.replaced} replaced (abstract changed), {result.unchanged} already in the graph")
    if result.stale_analysis:
        click.echo(f"warning: the analysis in {result.path} (communities, ranks, similar papers) does not cover the new papers; "
                   f"run 'kg analyze {result.path}' again", err=True)


def _refuse_overwrite(output: Path, inputs: Any, page: Path | None = None) -> None:
    """Refuse an output (or the HTML page written beside it) that is one of the inputs (kg.atomic.refuse_overwrite)."""
    from .atomic import refuse_overwrite

    refuse_overwrite(output, inputs)
    if page is not None:
        refuse_overwrite(page, inputs)


# ---- query interface: query, serve, push -------------------------------------------------------


def _show(text: str) -> None:
    """Print a result; on a terminal, one taller than the screen goes through a pager ($PAGER, else `less -FRSX`, as git does)."""
    import shutil

    if sys.stdout.isatty() and text.count("\n") > shutil.get_terminal_size().lines - 2:
        os.environ.setdefault("LESS", "FRSX")  # long lines scroll sideways instead of wrapping; quit when it fits
        click.echo_via_pager(text)
    else:
        click.echo(text, nl=False)


def _default_graph() -> Path:
    """The graph a command uses when none is named, said on stderr so that nobody wonders which graph answered."""
    from .query import default_graph

    graph = default_graph()
    click.echo(f"graph: {graph} (the latest in graphs/; --graph to choose)" if graph.is_file() else f"graph: {graph}", err=True)
    return graph


def _params(pairs: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{pair!r} is not name=value", param_hint="--param")
        out[name.strip()] = value
    return out


@cli.command("query", epilog="""\b
Examples:
  kg query --list
  kg query top-concepts                         on the latest graph in graphs/
  kg query papers-by-concept -p concept="reinforcement learning" -f csv
  echo 'SELECT ?p ?m WHERE { ?p kg:proposes ?x . ?x rdfs:label ?m }' | kg query -""")
@click.argument("name", required=False)
@click.option("--graph", type=click.Path(path_type=Path), help="Graph file to query [the latest graph in graphs/].")
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE", help="A query parameter (repeatable).")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "csv", "tsv", "sparql-tsv", "json", "xml", "ttl", "nt"]),
              help="Output format [table for SELECT/ASK, ttl for CONSTRUCT/DESCRIBE]; tsv: plain values, sparql-tsv: RDF terms.")
@click.option("-n", "--limit", type=click.IntRange(min=1), help="Show at most N rows.")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="File to write [standard output].")
@click.option("--list", "list_queries", is_flag=True, help="List the named queries and exit.")
@click.option("--endpoint", metavar="URL", help="Run on a remote SPARQL endpoint instead of a graph file.")
@click.option("--graph-iri", metavar="IRI", help="With --endpoint: query this named graph (default-graph-uri).")
@click.option("--timeout", default=SERVE_TIMEOUT, show_default=True, type=click.FloatRange(0),
              help="Seconds the query may run (0 = no limit); building the store the first time is not counted.")
@_clean_errors
def query_command(name: str | None, graph: Path | None, params: tuple[str, ...], fmt: str | None, output: Path | None,
                  list_queries: bool, endpoint: str | None, graph_iri: str | None, timeout: float, limit: int | None) -> None:
    """Run a named query (see --list), a .rq FILE, or '-' (SPARQL on standard input)."""
    from .atomic import atomic_write
    from .errors import UsageError
    from .query import catalog, default_graph, from_text
    from .query import query as run_query

    if list_queries:
        for q in catalog().values():
            click.echo(f"{q.name}  {q.signature()}  {q.purpose}".replace("  ", "  ", 1))
        return
    if not name:
        raise UsageError("name a query (see 'kg query --list'), a .rq file, or '-' for standard input")
    if endpoint and graph:
        raise UsageError("--graph reads a local file and --endpoint a remote store: pass one of them")
    if graph_iri and not endpoint:
        raise UsageError("--graph-iri only applies with --endpoint")
    if output is not None:
        local = [graph or default_graph()] if endpoint is None else []
        _refuse_overwrite(output, [*local, *([Path(name)] if Path(name).is_file() else [])])
    target = from_text(sys.stdin.read(), "stdin") if name == "-" else name
    if graph is None and endpoint is None:
        graph = _default_graph()
    if graph is not None:
        from .store import fresh_folder

        if graph.is_file() and fresh_folder(graph) is None:
            _step(f"building the query store beside {graph} (once; it takes a while on a large graph and is reused)")
    results = run_query(target, _params(params), graph=graph, endpoint=endpoint, graph_iri=graph_iri, timeout=timeout, max_rows=limit)
    chosen = fmt or ("ttl" if results.kind == "graph" else "table")
    if chosen == "table" and results.kind == "select" and output is None:
        import shutil

        results, echoed = _without_echoed(results, set(_params(params)))
        for param, value in echoed:
            click.echo(f"{param}: {value}")
        data = results.table(width=max(60, shutil.get_terminal_size((100, 24)).columns // 2))  # long titles as the terminal allows
    else:
        data = results.serialize({"tsv": "values-tsv", "sparql-tsv": "tsv"}.get(chosen, chosen))
    if output is None:
        _show(data.decode("utf-8"))
    else:
        with atomic_write(output) as stream:
            stream.write(data)
        click.echo(f"wrote {output}", err=True)


def _without_echoed(results: Any, params: set[str]) -> tuple[Any, list[tuple[str, str]]]:
    """A table without the columns that only repeat a parameter (the same value in every row), and those values."""
    from dataclasses import replace

    from .results import compact

    keep, echoed = [], []
    for i, name in enumerate(results.variables):
        values = {row[i] for row in results.rows}
        if name in params and len(values) == 1 and None not in values and results.rows:
            term = next(iter(values))
            echoed.append((name, compact(term.value) if term.kind == "uri" else term.value))
        else:
            keep.append(i)
    if not echoed:
        return results, []
    rows = tuple(tuple(row[i] for i in keep) for row in results.rows)
    return replace(results, variables=tuple(results.variables[i] for i in keep), rows=rows), echoed


@cli.command("serve", epilog="""\b
Examples:
  kg serve                                      the latest graph in graphs/ on http://127.0.0.1:8000/
  curl --data-urlencode 'query=SELECT * WHERE { ?p kg:proposes ?m } LIMIT 3' -H 'Accept: text/csv' http://127.0.0.1:8000/sparql""")
@click.argument("graph", type=click.Path(path_type=Path), required=False)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (loopback: this machine only).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port (0 picks a free one).")
@click.option("--timeout", default=SERVE_TIMEOUT, show_default=True, type=click.FloatRange(0.1), help="Seconds a query may run.")
@click.option("--max-rows", default=SERVE_MAX_ROWS, show_default=True, type=click.IntRange(1), help="Rows returned at most per query.")
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 64), help="Query worker processes.")
@click.option("--memory/--on-disk", default=True, show_default=True,
              help="Workers load the graph into memory (faster queries) or open the persisted store (instant start, less RAM).")
@click.option("--max-bytes", default=16, show_default=True, type=click.IntRange(1), help="Megabytes of one response at most (rows past it are cut, as with --max-rows).")
@click.option("--max-memory", default=2048, show_default=True, type=click.IntRange(256), help="Megabytes of address space per query worker; a query needing more fails.")
@click.option("--allow-host", "hosts", multiple=True, metavar="NAME", help="A host name clients use to reach the server (repeatable); others are refused.")
@_clean_errors
def serve_command(graph: Path | None, host: str, port: int, timeout: float, max_rows: int, workers: int, memory: bool,
                  max_bytes: int, max_memory: int, hosts: tuple[str, ...]) -> None:
    """Serve GRAPH [the latest graph in graphs/] as a read-only SPARQL endpoint at /sparql, with a page at /."""
    from .serve import serve as run_server

    run_server(graph or _default_graph(), host, port, timeout=timeout, max_rows=max_rows, workers=workers, memory=memory,
               max_bytes=max_bytes * 1024 * 1024, memory_mb=max_memory, hosts=hosts)


@cli.command("push")
@click.argument("graph", type=click.Path(path_type=Path))
@click.option("--store", metavar="URL", help="The store's Graph Store Protocol URL, the fast way (Oxigraph: http://HOST:PORT/store).")
@click.option("--endpoint", metavar="URL", help="The store's SPARQL Update URL (Oxigraph: http://HOST:PORT/update): batched INSERT DATA, and the swap of --replace.")
@click.option("--graph", "graph_iri", metavar="IRI", help="Named graph to load into [the default graph].")
@click.option("--replace", is_flag=True, help="Replace that graph's content (swapped in whole at the end; an interrupted push leaves it as it was).")
@click.option("--bulk", is_flag=True, help="With --store: into the store's bulk loader (Oxigraph's no_transaction), several times faster; a failed request may stay partly loaded.")
@click.option("--batch", type=click.IntRange(1), help="Triples per request [10000 with --store, 500000 with --bulk, else 20000].")
@_clean_errors
def push_command(graph: Path, store: str | None, endpoint: str | None, graph_iri: str | None, replace: bool, bulk: bool,
                 batch: int | None) -> None:
    """Load a graph file or shard folder into a SPARQL 1.1 store (Oxigraph, Fuseki, GraphDB, …)."""
    from .upload import push as push_graph

    n = push_graph(graph, endpoint, store=store, graph_iri=graph_iri, replace=replace, batch=batch, bulk=bulk,
                   progress=lambda done: click.echo(f"sent {done} triples", err=True))
    click.echo(f"pushed {n} triples to {store or endpoint}" + (f" (graph <{graph_iri}>)" if graph_iri else ""))


# --- analytics: analyze, report -------------------------------------------------------------


@cli.command()
@click.argument("graph", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Graph file to write [GRAPH itself, replacing any earlier analysis].")
@click.option("--seed", type=int, default=42, show_default=True, help="Seed of the community detection and sampled betweenness.")
@click.option("--resolution", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True, help="Louvain resolution: above 1, more and smaller communities.")
@_clean_errors
def analyze(graph: Path, output: Path | None, seed: int, resolution: float) -> None:
    """Add centrality, communities, related concepts, bridging and similar papers to a graph."""
    from .analyze import analyze as analyze_graph

    output = output or graph
    _step(f"analysing {graph}")
    result = analyze_graph(graph, output, seed=seed, resolution=resolution)
    s = result.summary()
    click.echo(f"wrote {output}")
    click.echo(
        f"{s['concepts']} concepts ranked, {s['communities']} communities of two or more, {s['related']} related pairs, "
        f"{s['bridges']} bridging papers, {s['similar']} similar pairs"
    )


@cli.command()
@click.argument("graph", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="HTML file to write [GRAPH with -report.html].")
@_clean_errors
def report(graph: Path, output: Path | None) -> None:
    """Write a self-contained HTML report of a graph: charts, communities, related concepts."""
    from .report import report as report_graph

    _step(f"reporting on {graph}")
    page = report_graph(graph, output or graph.with_name(f"{graph.stem}-report.html"))
    click.echo(f"wrote {page}")


# --- evaluation: eval -----------------------------------------------------------------------


@cli.command("eval")
@click.argument("gold", required=False, type=click.Path(path_type=Path))
@click.argument("graph", required=False, type=click.Path(path_type=Path))
@click.option("--keywords", type=click.Path(path_type=Path), help="Score against author keywords (JSONL: id, keywords) instead; GRAPH is then the only argument [the file's papers built in memory].")
@click.option("--vocabulary", type=click.Path(path_type=Path), help="Topic names, one a line [topic-vocabulary.txt beside GOLD].")
@click.option("-v", "--verbose", is_flag=True, help="List each paper's missed and extra topics (with --keywords: grouped by kind).")
@_clean_errors
def eval_(gold: Path | None, graph: Path | None, keywords: Path | None, vocabulary: Path | None, verbose: bool) -> None:
    """Score a graph's subjects against gold topics or author keywords: micro precision, recall and F1 [GRAPH: the latest graph in graphs/, else the sample]."""
    from .errors import UsageError
    from .evaluate import evaluate, evaluate_keywords, keyword_report, report

    if keywords is not None:
        if gold is not None and graph is not None:
            raise UsageError("with --keywords give at most one argument, the GRAPH to score")
        click.echo(keyword_report(evaluate_keywords(keywords, gold or graph), verbose=verbose))
        return
    if gold is None:
        raise UsageError("give a GOLD topics file, or --keywords FILE")
    if graph is None:
        from .graphio import latest_graph

        graph = latest_graph()
        click.echo(f"graph: {graph} (the latest in graphs/; pass GRAPH to choose)" if graph else
                   "graph: the bundled sample, built in memory (no graph in graphs/)", err=True)
    click.echo(report(evaluate(gold, graph, vocabulary), verbose=verbose))


@cli.command("train")
@click.option("--keywords", required=True, type=click.Path(path_type=Path), help="Papers with author keywords (JSONL: id, title, abstract, keywords).")
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path), help="Model file to write (JSON), for `kg build --model`.")
@click.option("--folds", type=click.IntRange(2), default=5, show_default=True, help="Cross-validation folds (by paper).")
@_clean_errors
def train(keywords: Path, output: Path, folds: int) -> None:
    """Fit the link scorer on papers with author keywords; print its cross-validated figures (needs kg[train])."""
    from .training.scorer import train_file

    trained = train_file(keywords, output, folds)
    click.echo(f"cross-validated ({folds} folds by paper), threshold {trained.scorer.threshold:.2f}:")
    click.echo(trained.cross_validated.figures().line("roll-up"))
    click.echo(trained.cross_validated.figures(direct=True).line("direct"))
    click.echo(trained.untitled.figures().line("no title"))
    click.echo(f"wrote {output}")


def main() -> None:
    """Console-script entry point."""
    # A kg process is short, and what it makes (papers, triples, spaCy's vocabulary) is freed by
    # reference counting, not by the cyclic collector. At the collector's default pace (a pass every
    # 700 new objects, re-walking spaCy's import-time objects) it took ~0.3 s of a 2.5 s
    # `kg build --update`, and its final pass at exit another ~0.2 s; rarer passes keep it bounded.
    gc.set_threshold(100_000, 50, 100)
    try:
        cli()
    finally:
        gc.freeze()  # the process ends: no final pass over objects the OS reclaims anyway
