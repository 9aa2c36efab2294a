"""The one time limit of a query: a `Deadline` started once per query that every engine holds, and work waited for aside.

`with_deadline` runs a piece of work so that Ctrl-C stops the wait at once and the limit can give it up.

`start` is how every query kg runs reads its time limit (`kg query`, `kg.query()`, `--endpoint`, `kg render --query`):
seconds, with None or 0 meaning no limit; QUERY_TIMEOUT (kg.core.defaults) is the one default. The query's Deadline
goes to the backend that runs it (kg.sparql.backends). Each engine stops in the one way it can, at the same moment,
with the same message (`Deadline.error`):

- the engine (pyoxigraph) cannot be stopped from Python: `with_deadline` waits for it on another thread until the
  deadline and gives it up there (pyoxigraph evaluates without holding the GIL, so the waiting thread also gets the
  KeyboardInterrupt while the engine runs; called directly, Ctrl-C waited for the whole query);
- the query index's SQL asks `Deadline.passed` from SQLite's progress handler, which interrupts it (kg.sparql.index);
- a remote endpoint's socket waits at most `Deadline.left`, and the answer's body and its parsing stop when the
  deadline has passed (kg.sparql.remote): the look-ups and the query share the one deadline.

Decision 0057 says why these three stay three ways to stop and one way to decide.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from kg.core.errors import QueryError

T = TypeVar("T")
_STARTING = threading.Lock()  # threading.stack_size is the process's: one start at a time sets it
_GIVEN_UP: list[Any] = []  # threads whose work was given up (a timeout, Ctrl-C): the engine may still be running it


def limit(timeout: float | None) -> float | None:
    """A time limit as given (`--timeout`, `timeout=`) as seconds, or None for no limit (None or 0)."""
    return float(timeout) if timeout else None


QUERY_ADVICE = "narrow it (a LIMIT, a parameter) or allow more time (--timeout SECONDS, 0 = no limit)"


@dataclass(frozen=True)
class Deadline:
    """A time limit from the moment it was started (`start`): `seconds` (None: no limit) and `at`, the time.monotonic()
    by which the work must end (infinity: never). `what` is said when it passes ("query 'top-concepts'"), with `advice`."""

    what: str
    seconds: float | None
    at: float
    advice: str = QUERY_ADVICE

    def passed(self) -> bool:
        return time.monotonic() >= self.at

    def left(self) -> float | None:
        """Seconds left (a little above 0 once passed: a socket timeout of 0 would not block at all), None: no limit."""
        return None if self.seconds is None else max(self.at - time.monotonic(), 1e-3)

    def error(self) -> QueryError:
        """The one error for a query past its time limit, whichever engine ran it."""
        return QueryError(f"{self.what} did not finish in {self.seconds or 0:g} s; {self.advice}")


def start(timeout: float | None, name: str) -> Deadline:
    """The deadline of query `name` started now, under `timeout` seconds (None or 0: no limit; `limit`)."""
    return started(timeout, f"query {name!r}")


def started(timeout: float | None, what: str, advice: str = QUERY_ADVICE) -> Deadline:
    """A deadline started now for `what` (a query: `start`; one request of `kg push`), under `timeout` seconds."""
    seconds = limit(timeout)
    return Deadline(what, seconds, math.inf if seconds is None else time.monotonic() + seconds, advice)


def given_up_running() -> bool:
    """True while work that `with_deadline` gave up still runs in its thread.

    The engine cannot be stopped, so such a thread runs until its query ends or the process does;
    the command-line entry point then ends the process at once rather than through interpreter
    teardown, which native code still running in another thread can hold up.
    """
    return any(thread.is_alive() for thread in _GIVEN_UP)


def with_deadline(work: Callable[[], T], deadline: Deadline, *, stack: int | None = None) -> T:
    """Run `work` in a thread that this one waits for, so that Ctrl-C stops the wait at once and a query
    past its deadline is given up with the deadline's error. `stack`: the thread's
    stack in bytes (reserved, used as needed), for work that recurses deeply (the engine's parser).

    pyoxigraph evaluates without holding the GIL, so the waiting thread gets the KeyboardInterrupt
    while the engine runs (called directly, Ctrl-C waited for the whole query: minutes on a large graph).
    The abandoned thread is a daemon: it ends with the process.
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:
            box["error"] = exc

    with _STARTING:
        before = threading.stack_size(stack) if stack else None
        try:
            thread = threading.Thread(target=target, name=f"kg {deadline.what}", daemon=True)
            thread.start()
        finally:
            if before is not None:
                threading.stack_size(before)
    try:
        while thread.is_alive():
            if deadline.passed():
                raise deadline.error()
            thread.join(max(0.0, min(0.1, deadline.at - time.monotonic())))
    except BaseException:
        _GIVEN_UP[:] = [*(t for t in _GIVEN_UP if t.is_alive()), thread]
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]
