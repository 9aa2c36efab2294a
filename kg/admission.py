"""Who gets the next free query worker of `kg serve`: fairness between clients.

A worker pool alone serves whoever asks first, so two clients sending runaway queries back to
back keep every worker busy and everyone else waits out the time limit. `Admission` hands out
worker slots by these rules:

- a client (an address) runs one query at a time while another client waits; alone it may use
  every worker;
- a client whose query recently hit a limit (time, memory, response size) or ran past half the
  time limit is *heavy* for `penalty_seconds`: heavy clients together hold at most all workers
  but one, and start a query only while another started worker stays idle, so one worker stays
  free for everyone else (also while a killed worker is being replaced);
- among waiting clients the one that used the least worker time lately goes first (usage decays
  with a half-life), then first come first served;
- nobody waits longer than `wait` seconds (shorter than the time limit: a client is told the
  server is busy instead of hanging), and a client may have at most `per_client` requests waiting.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass


class Busy(Exception):
    """No slot within the wait; `status` 503 (server busy) or 429 (this client has too many waiting)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class _Client:
    running: int = 0
    waiting: int = 0
    usage: float = 0.0  # worker seconds, decayed
    stamp: float = 0.0  # when usage was last decayed
    heavy_until: float = 0.0


class Admission:
    """Slots for `slots` workers, shared fairly between client addresses."""

    def __init__(self, slots: int, *, wait: float, limit: float, per_client: int = 8,
                 half_life: float = 30.0, penalty_seconds: float = 60.0, ready: Callable[[], int] | None = None) -> None:
        """`ready`: how many idle workers are started and ready; a heavy client waits unless one would be
        left for others (a worker killed for a heavy query takes a while to replace)."""
        self.slots, self.wait, self.limit, self.per_client = slots, wait, limit, per_client
        self.ready = ready
        self.half_life, self.penalty_seconds = half_life, penalty_seconds
        self._cond = threading.Condition()
        self._clients: dict[str, _Client] = {}
        self._queue: dict[int, str] = {}  # ticket -> client, in arrival order
        self._tickets = itertools.count()
        self._running = 0
        self._heavy_running = 0

    @contextmanager
    def slot(self, client: str) -> Iterator[None]:
        """Hold a worker slot for `client` (raises Busy); the time held counts as the client's usage."""
        heavy = self._enter(client)
        started = time.monotonic()
        try:
            yield
        finally:
            self._leave(client, heavy, time.monotonic() - started)

    def penalize(self, client: str) -> None:
        """The client's query hit a limit: heavy for a while."""
        with self._cond:
            self._state(client).heavy_until = time.monotonic() + self.penalty_seconds

    def _state(self, client: str) -> _Client:
        state = self._clients.setdefault(client, _Client(stamp=time.monotonic()))
        now = time.monotonic()
        state.usage *= math.pow(0.5, (now - state.stamp) / self.half_life)
        state.stamp = now
        return state

    def _heavy(self, state: _Client) -> bool:
        return state.heavy_until > time.monotonic()

    def _eligible(self, client: str) -> bool:
        """Could this client's ticket take a free slot, ignoring the order of the queue?"""
        state = self._state(client)
        crowded = self._heavy_running >= self.slots - 1 or (self.ready is not None and self.ready() < 2)
        if self._heavy(state) and self.slots > 1 and crowded:
            return False
        return not state.running or all(c == client for c in self._queue.values())

    def _may_go(self, ticket: int, client: str) -> bool:
        if self._running >= self.slots or not self._eligible(client):
            return False
        ranked = min((self._state(c).usage, t) for t, c in self._queue.items() if self._eligible(c))
        return ranked[1] == ticket

    def _enter(self, client: str) -> bool:
        deadline = time.monotonic() + self.wait
        with self._cond:
            state = self._state(client)
            if state.waiting >= self.per_client:
                raise Busy(429, f"{state.waiting} queries of this client are waiting already; send the next when one is answered")
            ticket = next(self._tickets)
            self._queue[ticket] = client
            state.waiting += 1
            try:
                while not self._may_go(ticket, client):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise Busy(503, f"all query workers are busy (waited {self.wait:g} s); try again shortly")
                    self._cond.wait(min(left, 0.5))
            finally:
                del self._queue[ticket]
                state.waiting -= 1
                self._cond.notify_all()
            heavy = self._heavy(state)
            state.running += 1
            self._running += 1
            self._heavy_running += heavy
            return heavy

    def _leave(self, client: str, heavy: bool, seconds: float) -> None:
        with self._cond:
            state = self._state(client)
            state.running -= 1
            state.usage += seconds
            if seconds > self.limit / 2:
                state.heavy_until = max(state.heavy_until, time.monotonic() + self.penalty_seconds)
            self._running -= 1
            self._heavy_running -= heavy
            if len(self._clients) > 1000:  # forget idle clients whose history no longer matters
                now = time.monotonic()
                for name in [c for c, st in self._clients.items()
                             if not st.running and not st.waiting and st.heavy_until < now and self._state(c).usage < 0.01]:
                    del self._clients[name]
            self._cond.notify_all()
