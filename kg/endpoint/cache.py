"""Answers `kg serve` has given, kept in the server process and given again without a worker.

`kg serve` pins one version of the graph, its query index and its store for its whole life (decision 0033), so the
same request (query text, bound parameters, negotiated format, page offset) has the same answer until the server
stops: no invalidation is needed. A request in flight is asked once: others with the same key wait for its answer
(`Answers.answer`), so eight clients that open with the same query cost one worker job, not eight, and a query that
ran into the time limit is not run again at once by each of them. Only complete
answers (status 200, not cut at the byte cap) of deterministic queries are kept, up to a byte budget, least recently
used first out. Decision 0052.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Hashable

from kg.core.defaults import SERVE_CACHE_MB

if TYPE_CHECKING:
    from kg.endpoint.answer import Reply

# SPARQL functions whose value changes from one evaluation to the next: a query calling one is never kept.
_VOLATILE = re.compile(r"\b(RAND|NOW|UUID|STRUUID|BNODE)\s*\(", re.IGNORECASE)


def deterministic(text: str) -> bool:
    """Whether a query's answer is the same each time it runs on one version of the graph."""
    return _VOLATILE.search(text) is None


def cut_at_bytes(reply: Reply) -> bool:
    """Whether the answer was cut at the byte cap (--max-bytes): what the worker wrote, not the whole answer."""
    return any(k == "X-Kg-Truncated" and "max-bytes" in v for k, v in reply.headers)


def keepable(reply: Reply) -> bool:
    """A complete answer: status 200 and not cut at the byte cap (a cut at the row cap is the same each time)."""
    return reply.status == 200 and not cut_at_bytes(reply)


def shared(reply: Reply) -> bool:
    """An outcome of the query itself, given to the same requests in flight: an answer, or a limit it hit (they would
    hit it again, each holding a worker for the time limit). Not a refusal about who asked (busy, too many of one
    client: those say Retry-After): the others then ask on their own."""
    return not any(k == "Retry-After" for k, _ in reply.headers)


@dataclass
class _Flight:
    """A request being answered; the others with its key wait on `done`."""

    done: threading.Event = field(default_factory=threading.Event)
    reply: Reply | None = None


class Answers:
    """Kept answers by request key, at most `budget` bytes of bodies in all (0: none kept, none shared)."""

    def __init__(self, budget: int = SERVE_CACHE_MB << 20, *, follow: float = 20.0) -> None:
        self.budget, self.follow = budget, follow  # follow: seconds a request waits for the same one in flight
        self.kept: OrderedDict[Hashable, Reply] = OrderedDict()
        self.size = 0
        self.hits = self.misses = 0
        self._flights: dict[Hashable, _Flight] = {}
        self._lock = threading.Lock()

    def answer(self, key: Hashable, run: Callable[[], Reply]) -> Reply:
        """The kept answer for `key`, the answer of the same request in flight, or `run()`'s (kept if complete)."""
        if self.budget <= 0:
            return run()
        with self._lock:
            kept = self.kept.get(key)
            if kept is not None:
                self.kept.move_to_end(key)
                self.hits += 1
                return kept
            flight = self._flights.get(key)
            leader = flight is None
            if flight is None:
                flight = self._flights[key] = _Flight()
            self.misses += leader
        if not leader:
            if flight.done.wait(self.follow) and flight.reply is not None:
                with self._lock:
                    self.hits += 1
                return flight.reply
            return run()  # the first one was refused for who asked, or is still waiting: this one asks on its own
        try:
            reply = run()
            if shared(reply):
                flight.reply = reply
            if keepable(reply):
                self._keep(key, reply)
            return reply
        finally:
            with self._lock:
                del self._flights[key]
            flight.done.set()

    def _keep(self, key: Hashable, reply: Reply) -> None:
        size = len(reply.body)
        if size > self.budget // 4:  # one answer never pushes out most of the others
            return
        with self._lock:
            if key in self.kept:
                return
            self.kept[key] = reply
            self.size += size
            while self.size > self.budget:
                _, old = self.kept.popitem(last=False)
                self.size -= len(old.body)
