"""`kg query`, `kg serve`, `kg push`: asking a graph questions, serving it, loading it into a store."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from kg.cli.common import (
    clean_errors,
    default_graph_said,
    params_of,
    refuse_overwrite,
    setting_option,
    show,
    with_progress,
    without_collector,
)
from kg.core.defaults import PUSH_BATCH, PUSH_BULK_BATCH, PUSH_STORE_BATCH, SERVE_MEMORY_MB, SERVE_MEMORY_PER_MB
from kg.sparql.catalog import is_file


@click.command("query", epilog="""\b
Examples:
  kg query --list
  kg query top-concepts                         on the latest graph in graphs/
  kg query papers-by-concept -p concept="reinforcement learning" -f csv
  echo 'SELECT ?p ?m WHERE { ?p kg:proposes ?x . ?x rdfs:label ?m }' | kg query -""")
@click.argument("name", required=False)
@click.option("--graph", type=click.Path(path_type=Path), help="Graph file or shard folder to query [the latest graph in graphs/].")
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE", help="A query parameter (repeatable).")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "csv", "tsv", "sparql-tsv", "json", "xml", "ttl", "nt"]),
              help="Output format [table for SELECT/ASK, ttl for CONSTRUCT/DESCRIBE]; tsv: plain values, sparql-tsv: RDF terms.")
@click.option("-n", "--limit", type=click.IntRange(min=1), help="Show at most N rows.")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="File to write [standard output].")
@click.option("--list", "list_queries", is_flag=True, help="List the named queries and exit.")
@click.option("--endpoint", metavar="URL", help="Run on a remote SPARQL endpoint instead of a graph file.")
@click.option("--graph-iri", metavar="IRI", help="With --endpoint: query this named graph (default-graph-uri).")
@setting_option("--timeout", setting="QUERY_TIMEOUT", type=click.FloatRange(0), more="Building the store the first time is not counted.")
@with_progress
@clean_errors
@without_collector
def query_command(name: str | None, graph: Path | None, params: tuple[str, ...], fmt: str | None, output: Path | None,
                  list_queries: bool, endpoint: str | None, graph_iri: str | None, timeout: float, limit: int | None) -> None:
    """Run a named query (see --list), a .rq FILE, or '-' (SPARQL on standard input)."""
    from kg.core.errors import UsageError
    from kg.graph.atomic import atomic_write
    from kg.sparql.run import catalog, default_graph, from_text
    from kg.sparql.run import query as run_query

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
        refuse_overwrite(output, [*local, *([Path(name)] if is_file(Path(name)) else [])])
    target = from_text(sys.stdin.read(), "stdin") if name == "-" else name
    if graph is None and endpoint is None:
        graph = default_graph_said()
    _advise(target, name)
    results = run_query(target, params_of(params), graph=graph, endpoint=endpoint, graph_iri=graph_iri, timeout=timeout, max_rows=limit)
    named = catalog().get(name) if isinstance(target, str) else None
    if named is not None and named.reads_analysis and results.kind == "select" and not results.rows and endpoint is None:
        click.echo(f"no rows: {name} reads what `kg analyze` adds to a graph, and a rebuilt graph has none; "
                   f"run {_analyze_advice(graph)} and ask again", err=True)
    chosen = fmt or ("ttl" if results.kind == "graph" else "table")
    if chosen == "table" and results.kind == "select" and output is None:
        import shutil

        results, echoed = _without_echoed(results, set(params_of(params)))
        for param, value in echoed:
            click.echo(f"{param}: {value}")
        data = results.table(width=max(60, shutil.get_terminal_size((100, 24)).columns // 2))  # long titles as the terminal allows
    else:
        data = results.serialize({"tsv": "values-tsv", "sparql-tsv": "tsv"}.get(chosen, chosen))
    if output is None:
        show(data)
    else:
        with atomic_write(output) as stream:
            stream.write(data)
        click.echo(f"wrote {output}", err=True)


def _analyze_advice(graph: Path | None) -> str:
    """How to analyse the graph queried: in place, or (a shard folder, which only the cluster build writes) into a file."""
    from kg.graph.shards import is_sharded

    if graph is not None and is_sharded(graph):
        return f"`kg analyze {graph} -o {graph.name}-analysed.ttl` (a shard folder is not written in place), query that file,"
    return f"`kg analyze {graph}`"


def _without_echoed(results: Any, params: set[str]) -> tuple[Any, list[tuple[str, str]]]:
    """A table without the columns that only repeat a parameter (the same value in every row), and those values."""
    from dataclasses import replace
    from operator import itemgetter

    from kg.graph.vocabulary import compact

    echoed, dropped = [], set()
    for i, name in enumerate(results.variables):
        if name in params and results.rows:
            values = set(map(itemgetter(i), results.rows))
            if len(values) == 1 and None not in values:
                term = next(iter(values))
                echoed.append((name, compact(term.value) if term.kind == "uri" else term.value))
                dropped.add(i)
    if not echoed:
        return results, []
    keep = [i for i in range(len(results.variables)) if i not in dropped]
    kept: Any = itemgetter(*keep) if len(keep) > 1 else lambda row: tuple(row[i] for i in keep)  # a tuple for 0 or 1 too
    rows = tuple(map(kept, results.rows))
    return replace(results, variables=tuple(results.variables[i] for i in keep), rows=rows), echoed


@click.command("serve", epilog="""\b
Examples:
  kg serve                                      the latest graph in graphs/ on http://127.0.0.1:8000/
  curl --data-urlencode 'query=SELECT * WHERE { ?p kg:proposes ?m } LIMIT 3' -H 'Accept: text/csv' http://127.0.0.1:8000/sparql""")
@click.argument("graph", type=click.Path(path_type=Path), required=False)
@setting_option("--host", setting="SERVE_HOST")
@setting_option("--port", setting="SERVE_PORT", type=click.IntRange(0, 65535))
@setting_option("--timeout", setting="SERVE_TIMEOUT", type=click.FloatRange(0.1))
@setting_option("--max-rows", setting="SERVE_MAX_ROWS", type=click.IntRange(1))
@setting_option("--workers", setting="SERVE_WORKERS", type=click.IntRange(1, 64))
@click.option("--memory/--on-disk", default=True, show_default=True,
              help="Workers load the graph into memory (faster queries; they answer from the persisted store meanwhile) or only open the persisted store (less RAM).")
@setting_option("--max-bytes", setting="SERVE_MAX_MB", type=click.IntRange(1))
@click.option("--max-memory", type=click.IntRange(256),
              help=f"Megabytes of address space per query worker; a query needing more fails [{SERVE_MEMORY_MB} + {SERVE_MEMORY_PER_MB} × the graph file's MB].")
@click.option("--allow-host", "hosts", multiple=True, metavar="NAME", help="A host name clients use to reach the server (repeatable); others are refused.")
@setting_option("--answer-cache", setting="SERVE_CACHE_MB", type=click.IntRange(0))
@with_progress
@clean_errors
def serve_command(graph: Path | None, host: str, port: int, timeout: float, max_rows: int, workers: int, memory: bool,
                  max_bytes: int, max_memory: int | None, hosts: tuple[str, ...], answer_cache: int) -> None:
    """Serve GRAPH [the latest graph in graphs/] as a read-only SPARQL endpoint at /sparql, with a page at /."""
    from kg.endpoint.app import serve as run_server

    run_server(graph or default_graph_said(), host, port, timeout=timeout, max_rows=max_rows, workers=workers, memory=memory,
               max_bytes=max_bytes * 1024 * 1024, memory_mb=max_memory, hosts=hosts, cache_mb=answer_cache)


@click.command("push")
@click.argument("graph", type=click.Path(path_type=Path))
@click.option("--store", metavar="URL", help="The store's Graph Store Protocol URL, the fast way (Oxigraph: http://HOST:PORT/store).")
@click.option("--endpoint", metavar="URL", help="The store's SPARQL Update URL (Oxigraph: http://HOST:PORT/update): batched INSERT DATA, and the swap of --replace.")
@click.option("--graph", "graph_iri", metavar="IRI", help="Named graph to load into [the default graph].")
@click.option("--replace", is_flag=True, help="Replace that graph's content (swapped in whole at the end; an interrupted push leaves it as it was). "
              "Through --store it needs --endpoint of the same store for the swap, unless the graph fits one request and --bulk is not given.")
@click.option("--bulk", is_flag=True, help="With --store: into the store's bulk loader (Oxigraph's no_transaction), several times faster; a failed request may stay partly loaded.")
@click.option("--batch", type=click.IntRange(1), help=f"Triples per request [{PUSH_STORE_BATCH} with --store, {PUSH_BULK_BATCH} with --bulk, else {PUSH_BATCH}].")
@with_progress
@clean_errors
def push_command(graph: Path, store: str | None, endpoint: str | None, graph_iri: str | None, replace: bool, bulk: bool,
                 batch: int | None) -> None:
    """Load a graph file or shard folder into a SPARQL 1.1 store (Oxigraph, Fuseki, GraphDB, …)."""
    from kg.sparql.push import push as push_graph

    n = push_graph(graph, endpoint, store=store, graph_iri=graph_iri, replace=replace, batch=batch, bulk=bulk,
                   progress=lambda done: click.echo(f"sent {done} triples", err=True))
    click.echo(f"pushed {n} triples to {store or endpoint}" + (f" (graph <{graph_iri}>)" if graph_iri else ""))


def _advise(target: Any, name: str) -> None:
    """Warn on stderr about the shape of a query kg does not ship (kg.sparql.advice), before it runs."""
    from kg.core.errors import KgError
    from kg.sparql.advice import late_optionals
    from kg.sparql.catalog import NamedQuery, resolve, shipped

    try:
        q = target if isinstance(target, NamedQuery) else resolve(target)
    except KgError:
        return  # the run names what is wrong
    if shipped(q):
        return
    for advice in late_optionals(q.text):
        click.echo(f"warning: {'stdin' if name == '-' else Path(name).name}: {advice}", err=True)
