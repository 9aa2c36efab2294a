"""kg push and kg query --endpoint against a real Oxigraph server (the session's, tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import kg
import kg.graph.files
import kg.sparql.push
from kg.cli import cli
from kg.sparql.run import catalog
from tests.conftest import free_port

GRAPH_IRI = "https://example.org/graph/sample"


def _rows(results) -> list[tuple]:
    if results.kind == "graph":
        return sorted((t.subject.value, t.predicate.value, t.object.value) for t in results.triples)
    return [tuple(t.python() if t is not None else None for t in row) for row in results.rows]


def _params(graph: Path) -> dict[str, dict]:
    some = next(iter(kg.query("papers-by-concept", {"concept": "reinforcement learning"}, graph=graph)))
    return {
        "papers-by-concept": {"concept": "reinforcement learning"},
        "concepts-of-paper": {"paper": some["identifier"]},
        "bridging-papers": {"a": "RL", "b": "machine learning"},
        "evidence": {"paper": some["identifier"], "concept": "machine learning"},
        "search": {"words": "reinforcement"},
        "paper-graph": {"paper": some["identifier"]},
        "concept-tree": {"root": "machine learning"},
        "trend": {"concept": "LLM"},
        "co-occurrence": {"min": "1"},
    }


def test_pushed_store_answers_the_named_queries_as_the_local_graph(oxigraph: str, sample_analyzed_ttl: Path) -> None:
    sample_ttl = sample_analyzed_ttl  # analysed, so related-concepts, communities and similar-papers have rows too
    n = kg.push(sample_ttl, f"{oxigraph}/update", batch=500)  # several batches
    assert n == len(kg.graph.files.read_triples(sample_ttl))
    params = _params(sample_ttl)
    for name in catalog():
        local = kg.query(name, params.get(name, {}), graph=sample_ttl)
        remote = kg.query(name, params.get(name, {}), endpoint=f"{oxigraph}/query")
        assert _rows(remote) == _rows(local), name
        assert remote.kind == local.kind and (len(local) > 0 or name == "co-occurrence"), name


def test_push_into_a_named_graph_with_the_cli(oxigraph: str, mini_ttl: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["push", str(mini_ttl), "--endpoint", f"{oxigraph}/update", "--graph", GRAPH_IRI, "--replace"])
    assert out.exit_code == 0 and "pushed" in out.output and GRAPH_IRI in out.output
    out = runner.invoke(cli, ["query", "papers-by-concept", "--endpoint", f"{oxigraph}/query", "--graph-iri", GRAPH_IRI,
                              "-p", "concept=RL", "-f", "csv"])
    assert out.exit_code == 0, out.output
    assert sorted(line.split(",")[2] for line in out.output.strip().splitlines()[1:]) == ["p1", "p2", "p5"]
    # Pushing again with --replace does not duplicate anything.
    runner.invoke(cli, ["push", str(mini_ttl), "--endpoint", f"{oxigraph}/update", "--graph", GRAPH_IRI, "--replace"])
    remote = kg.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", endpoint=f"{oxigraph}/query", graph_iri=GRAPH_IRI)
    assert remote.column("n") == [len(kg.graph.files.read_triples(mini_ttl))]


def test_remote_errors_are_one_line(oxigraph: str, mini_ttl: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["query", "-", "--endpoint", f"{oxigraph}/query"], input="SELECT * WHERE { ?s ?p }")
    assert out.exit_code == 1 and out.output.startswith("Error: ") and "400" in out.output
    out = runner.invoke(cli, ["query", "top-concepts", "--endpoint", f"http://127.0.0.1:{free_port()}/query"])
    assert out.exit_code == 1 and "cannot reach" in out.output
    out = runner.invoke(cli, ["push", str(mini_ttl), "--endpoint", "ftp://example.org/update"])
    assert out.exit_code == 1 and "http://" in out.output
    out = runner.invoke(cli, ["query", "top-concepts", "--endpoint", f"{oxigraph}/query", "--graph", str(mini_ttl)])
    assert out.exit_code == 1 and "pass one of them" in out.output


def test_values_block_goes_first_in_the_where_clause() -> None:
    from kg.sparql.lexer import uses_service, where_brace, with_values

    text = 'PREFIX x: <http://e/{}> SELECT ?a WHERE { # { not this\n ?a x:p "}" . }'
    bound = with_values(text, {"a": "<http://e/1>"})
    assert bound.index("VALUES (?a) { (<http://e/1>) }") == where_brace(text) + 3
    assert uses_service("SELECT * WHERE { service <http://e/> { ?s ?p ?o } }")
    assert not uses_service('SELECT * WHERE { ?s <http://e/SERVICE> "SERVICE" } # SERVICE')


def test_values_reach_only_subqueries_that_project_the_variable() -> None:
    """Not into `*`, `(… AS ?v)`, LIMIT/OFFSET subqueries, or below a subquery that hides the variable."""
    from kg.sparql.lexer import with_values

    text = ("SELECT * WHERE { { SELECT ?a ?x WHERE { ?a ?p ?x } } { SELECT ?a WHERE { ?a ?q ?o } LIMIT 3 }"
            " { SELECT * WHERE { ?a ?r ?o } } { SELECT ?y (1 AS ?a) WHERE { ?y ?s ?o } }"
            " { SELECT ?c WHERE { { SELECT ?a ?c WHERE { ?a ?t ?c } } } } }")
    bound = with_values(text, {"a": "<http://e/1>"})
    block = "VALUES (?a) { (<http://e/1>) }"
    assert bound.count(block) == 2  # the outer group and the first subquery
    assert bound.index(block, bound.index(block) + 1) < bound.index("?a ?p ?x") < bound.index("?a ?q ?o")


def _count(base: str, graph_iri: str | None = None) -> int:
    text = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }" if graph_iri is None else "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    return kg.query(text, endpoint=f"{base}/query", graph_iri=graph_iri).column("n")[0]


@pytest.mark.parametrize("evil", [
    "http://x/> {} } ; DROP ALL ; INSERT DATA { GRAPH <http://x/y",  # the attack that emptied a store
    "http://x/y> } ; CLEAR ALL ; #",
    "not an iri",
    "http://x/%zz",
    "http://x/a#b#c",
])
def test_a_graph_iri_cannot_inject_an_update(oxigraph: str, mini_ttl: Path, evil: str) -> None:
    keep = "https://example.org/graph/keep"
    kg.push(mini_ttl, f"{oxigraph}/update", graph_iri=keep, replace=True)
    before = _count(oxigraph, keep)
    runner = CliRunner()
    for url in (["--endpoint", f"{oxigraph}/update"], ["--store", f"{oxigraph}/store"]):
        for replace in ([], ["--replace"]):
            out = runner.invoke(cli, ["push", str(mini_ttl), *url, "--graph", evil, *replace])
            assert out.exit_code == 1 and "is not an absolute IRI" in out.output, out.output
    with pytest.raises(kg.UsageError, match="not an absolute IRI"):
        kg.push(mini_ttl, f"{oxigraph}/update", graph_iri=evil)
    assert _count(oxigraph, keep) == before > 0  # nothing was dropped or cleared


def test_an_interrupted_replace_leaves_the_graph_as_it_was(oxigraph: str, mini_ttl: Path, sample_ttl: Path) -> None:
    target = "https://example.org/graph/replace-me"
    kg.push(mini_ttl, f"{oxigraph}/update", graph_iri=target, replace=True)
    before = _count(oxigraph, target)
    total = _count(oxigraph)

    def interrupt(done: int) -> None:
        raise KeyboardInterrupt  # Ctrl-C after the first batch reached the store

    for how in ({"endpoint": f"{oxigraph}/update"}, {"store": f"{oxigraph}/store", "endpoint": f"{oxigraph}/update"}):
        with pytest.raises(kg.sparql.push.PushError) as caught:
            kg.push(sample_ttl, graph_iri=target, replace=True, batch=500, progress=interrupt, **how)  # type: ignore[arg-type]
        assert "is as it was (not replaced)" in str(caught.value) and "were dropped" in str(caught.value)
        assert _count(oxigraph, target) == before  # not emptied, not half-loaded
        assert _count(oxigraph) == total  # and the temporary graph is gone
    # A failure half-way (the store refuses a request) leaves it as it was too.
    with pytest.raises(kg.sparql.push.PushError, match="is as it was"):
        kg.push(sample_ttl, f"{oxigraph}/update", store=f"{oxigraph}/no-such-store", graph_iri=target, replace=True, batch=500)
    assert _count(oxigraph, target) == before
    # An interrupted push that adds says exactly how much it added.
    added = "https://example.org/graph/added"
    with pytest.raises(kg.sparql.push.PushError, match=r"stopped after 500 triples were loaded"):
        kg.push(sample_ttl, f"{oxigraph}/update", graph_iri=added, batch=500, progress=interrupt)
    assert _count(oxigraph, added) == 500


def test_push_through_the_graph_store_protocol(oxigraph: str, sample_ttl: Path) -> None:
    import random

    target = "https://example.org/graph/gsp"
    local = kg.graph.files.read_triples(sample_ttl)
    runner = CliRunner()
    out = runner.invoke(cli, ["push", str(sample_ttl), "--store", f"{oxigraph}/store", "--graph", target, "--batch", "3000"])
    assert out.exit_code == 0, out.output
    assert f"pushed {len(local)} triples" in out.output and out.output.count("sent ") == -(-len(local) // 3000)
    assert _count(oxigraph, target) == len(set(local))  # a store keeps each triple once
    # A sample of the file's triples, each asked for by value (ASK with the terms bound, not pasted).
    for t in random.Random(7).sample(local, 50):
        text = f"ASK {{ {t.subject} {t.predicate} {t.object} }}"
        assert kg.query(text, endpoint=f"{oxigraph}/query", graph_iri=target).boolean, t
    # --replace in one request is a Graph Store PUT; in several it needs the update URL for the swap.
    out = runner.invoke(cli, ["push", str(sample_ttl), "--store", f"{oxigraph}/store", "--graph", target, "--replace", "--batch", "100000"])
    assert out.exit_code == 0 and _count(oxigraph, target) == len(set(local)), out.output
    out = runner.invoke(cli, ["push", str(sample_ttl), "--store", f"{oxigraph}/store", "--graph", target, "--replace", "--batch", "3000"])
    assert out.exit_code == 1 and "needs --endpoint" in out.output
    out = runner.invoke(cli, ["push", str(sample_ttl), "--store", f"{oxigraph}/store", "--endpoint", f"{oxigraph}/update",
                              "--graph", target, "--replace", "--batch", "3000"])
    assert out.exit_code == 0 and _count(oxigraph, target) == len(set(local)), out.output
    out = runner.invoke(cli, ["push", str(sample_ttl)])
    assert out.exit_code == 1 and "--store" in out.output


def test_a_row_limit_holds_on_an_endpoint_as_on_a_graph(oxigraph: str, mini_ttl: Path) -> None:
    """`-n 3` printed every row of a remote answer (7 on a user's store); it shows three, as on a local graph."""
    runner = CliRunner()
    assert runner.invoke(cli, ["push", str(mini_ttl), "--endpoint", f"{oxigraph}/update", "--graph", GRAPH_IRI, "--replace"]).exit_code == 0
    args = ["query", "-", "-n", "3", "-f", "csv"]
    query = "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o"
    remote = runner.invoke(cli, [*args, "--endpoint", f"{oxigraph}/query", "--graph-iri", GRAPH_IRI], input=query)
    local = runner.invoke(cli, [*args, "--graph", str(mini_ttl)], input=query)
    assert remote.exit_code == 0 and local.exit_code == 0, remote.output + local.output
    assert len(remote.stdout.strip().splitlines()) == 4 and remote.stdout == local.stdout
    assert kg.query(query, endpoint=f"{oxigraph}/query", graph_iri=GRAPH_IRI, max_rows=3).truncated
