"""Every write of a graph is a transaction on its handle (issue #36 H4, #37 item 1): `kg analyze` and
`kg build --update` on one graph at once lose no paper a command reported added.

The races are made deterministic with a hook, not timing: one command stops after it has read the graph,
the other runs until it has either finished or is waiting for the graph's lock, then the first goes on.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

import kg
import kg.graph.atomic as atomic
import kg.views.analyze as analyze_
from kg.graph.files import read_triples
from kg.graph.handle import GraphFile
from kg.graph.vocabulary import DCTERMS, KG

from .conftest import FIXTURES

ROUNDS = 3  # three races in each order: six


def _papers(graph: Path) -> set[str]:
    """The papers' identifiers, parsed back from the file."""
    return {t.object.value for t in read_triples(graph) if t.predicate.value == DCTERMS + "identifier"}


def _analysed(graph: Path) -> bool:
    return any(t.predicate.value == KG + "pagerank" for t in read_triples(graph))


def _new_papers(folder: Path, round_: int) -> Path:
    out = folder / f"new{round_}.jsonl"
    out.write_text("".join(json.dumps({"id": f"r{round_}-{i}", "title": f"Offline reinforcement learning {i}",
                                       "abstract": f"We study offline reinforcement learning with diffusion models, case {i}."}) + "\n"
                           for i in range(5)), encoding="utf-8")
    return out


class _Other:
    """The second command, run in a thread: done when it finished or when it waits for the lock the first holds."""

    def __init__(self, run: Any) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self.settled = threading.Event()  # finished, or waiting for the lock
        self.thread = threading.Thread(target=self._go, args=(run,), daemon=True)

    def _go(self, run: Any) -> None:
        try:
            self.result = run()
        except BaseException as exc:  # reported by the test
            self.error = exc
        finally:
            self.settled.set()

    def start_and_settle(self) -> None:
        self.thread.start()
        assert self.settled.wait(120), "the second command neither finished nor waited for the lock"

    def join(self) -> Any:
        self.thread.join(120)
        assert not self.thread.is_alive()
        if self.error is not None:
            raise self.error
        return self.result


@pytest.fixture(scope="module")
def tiny_ttl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return kg.write(kg.build([FIXTURES / "tiny.jsonl"]), tmp_path_factory.mktemp("tiny") / "g.ttl")


@pytest.fixture
def graph(tiny_ttl: Path, tmp_path: Path) -> Path:
    """A fresh copy of the tiny graph (three papers) with its query index."""
    source = GraphFile(tiny_ttl)
    return GraphFile(tmp_path / "g.ttl").copy_from(source, source.fresh_index())


def _waits_signal(monkeypatch: pytest.MonkeyPatch, others: list[_Other]) -> None:
    """When a command starts waiting for a graph's lock, the second command has settled."""
    def held(target: Path, holder: str) -> None:
        for other in others:
            if other.thread.ident == threading.get_ident():
                other.settled.set()

    monkeypatch.setattr(atomic, "_held", held, raising=False)


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_an_update_while_analyze_has_read_the_graph_keeps_its_papers(graph: Path, tmp_path: Path, round_: int,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """analyze reads the graph and starts writing it out with its analysis; an update of it runs; then analyze
    renames its file into place. On main the update said "5 papers added" and analyze's rename put back the
    graph without them."""
    new = _new_papers(tmp_path, round_)
    others: list[_Other] = []
    _waits_signal(monkeypatch, others)
    real_compute, real_parse = analyze_.compute, GraphFile.parse
    computed = threading.Event()

    def compute(*args: Any, **kwargs: Any) -> Any:
        result = real_compute(*args, **kwargs)
        computed.set()
        return result

    def parse_then_update(self: GraphFile) -> Any:
        """analyze's stream of the graph it writes out: the update runs once the first triple was read."""
        triples = iter(real_parse(self))
        for t in triples:
            yield t
            if computed.is_set() and not others:
                others.append(_Other(lambda: kg.update(graph, [new])))
                others[0].start_and_settle()
        if computed.is_set() and not others:  # an empty stream: still race
            others.append(_Other(lambda: kg.update(graph, [new])))
            others[0].start_and_settle()

    monkeypatch.setattr(analyze_, "compute", compute)
    monkeypatch.setattr(GraphFile, "parse", parse_then_update)
    kg.analyze(graph, graph)
    updated = others[0].join()
    assert updated.added == 5
    found = _papers(graph)
    assert {f"r{round_}-{i}" for i in range(5)} <= found, "papers an update reported added are gone"
    assert {"p1", "p2", "p3"} <= found
    assert _analysed(graph)
    assert GraphFile(graph).fresh_index() is not None


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_analyze_while_an_update_has_read_the_graph_waits_for_it(graph: Path, tmp_path: Path, round_: int,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The update reads the graph; analyze of it runs; then the update writes. Both succeed, in turn: the
    analysis waits for the update's lock and then analyses the graph with the new papers."""
    new = _new_papers(tmp_path, round_)
    others: list[_Other] = []
    _waits_signal(monkeypatch, others)
    real = GraphFile.known

    def known_then_analyze(self: GraphFile) -> Any:
        found = real(self)
        if not others:
            others.append(_Other(lambda: kg.analyze(graph, graph)))
            others[0].start_and_settle()
        return found

    monkeypatch.setattr(GraphFile, "known", known_then_analyze)
    updated = kg.update(graph, [new])
    analysis = others[0].join()
    assert updated.added == 5
    found = _papers(graph)
    assert {f"r{round_}-{i}" for i in range(5)} <= found
    assert len(analysis.facts.papers) == len(found), "the analysis describes the graph before the update"
    assert _analysed(graph)


def test_analyze_refuses_to_replace_a_graph_changed_since_it_read_it(graph: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another program (which takes no lock) edits the graph while kg analyze computes: nothing is written."""
    real = analyze_.compute

    def compute_then_edit(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        with graph.open("a", encoding="utf-8") as other:
            other.write("<http://x/a> <http://x/b> <http://x/c> .\n")
        return result

    monkeypatch.setattr(analyze_, "compute", compute_then_edit)
    with pytest.raises(kg.InputError, match="g.ttl changed while it was being analysed"):
        kg.analyze(graph, graph)
    assert graph.read_text(encoding="utf-8").endswith("<http://x/c> .\n") and not _analysed(graph)
    assert not [p for p in graph.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_graph_locked_for_longer_than_the_wait_is_refused_with_one_line(graph: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that finds the graph locked waits at most LOCK_WAIT, then says who holds it; it writes nothing."""
    import os

    monkeypatch.setattr(atomic, "LOCK_WAIT", 0.0)
    before = graph.read_bytes()
    with atomic.locked(graph):
        for run in (lambda: kg.analyze(graph, graph), lambda: kg.update(graph, [_new_papers(graph.parent, 9)]),
                    lambda: kg.write(kg.build([FIXTURES / "tiny.jsonl"]), graph)):
            with pytest.raises(kg.OutputError) as caught:
                run()
            message = str(caught.value)
            assert f"another kg (process {os.getpid()}) has been writing it" in message and "\n" not in message, message
    assert graph.read_bytes() == before


@pytest.mark.parametrize("command", ["update", "analyze", "build"])
def test_the_derived_files_are_made_in_the_transaction_from_the_version_written(graph: Path, tmp_path: Path, command: str) -> None:
    """The page and the store (what `derived` makes) see the graph just written, while its lock is still held: no
    other writer's version slips in between the graph and its page."""
    seen: list[tuple[set[str], bool]] = []

    def page(path: Path) -> None:
        try:
            with atomic.locked(path, wait=0.0):
                held = False
        except kg.OutputError:
            held = True
        seen.append((_papers(path), held))

    if command == "update":
        kg.update(graph, [_new_papers(tmp_path, 7)], derived=[page])
    elif command == "analyze":
        kg.analyze(graph, graph, derived=[page])
    else:
        kg.write(kg.build([_new_papers(tmp_path, 7)]), graph, derived=[page])
    assert seen == [(_papers(graph), True)]
    assert kg.update(graph, [FIXTURES / "tiny.jsonl"], derived=[page]).changed is (command == "build")
    assert len(seen) == 1 + (command == "build"), "a graph left as it was has no files to make again"
