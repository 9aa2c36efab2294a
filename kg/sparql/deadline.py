"""The one time limit of a query, and running a piece of work so that Ctrl-C stops the wait at once and the limit can give it up.

`limit` is how every query kg runs reads its time limit (`kg query`, `kg.query()`, `--endpoint`, `kg render --query`):
seconds, with None or 0 meaning no limit; QUERY_TIMEOUT (kg.core.defaults) is the one default. `with_deadline` holds
local queries to it, the query index's SQL stops itself there (kg.sparql.index), and a remote answer must arrive
by `ends` (kg.sparql.remote). Used by `kg query` for local queries: pyoxigraph evaluates without holding the GIL, so the waiting
thread gets the KeyboardInterrupt while the engine runs (called directly, Ctrl-C waited for the whole
query: minutes on a large graph).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from kg.core.errors import QueryError

T = TypeVar("T")
_STARTING = threading.Lock()  # threading.stack_size is the process's: one start at a time sets it
_GIVEN_UP: list[Any] = []  # threads whose work was given up (a timeout, Ctrl-C): the engine may still be running it


def limit(timeout: float | None) -> float | None:
    """A time limit as given (`--timeout`, `timeout=`) as seconds, or None for no limit (None or 0)."""
    return float(timeout) if timeout else None


def ends(timeout: float | None) -> float:
    """The time.monotonic() by which work started now must end under `timeout` (infinity: no limit)."""
    seconds = limit(timeout)
    return math.inf if seconds is None else time.monotonic() + seconds


def given_up_running() -> bool:
    """True while work that `with_deadline` gave up still runs in its thread.

    The engine cannot be stopped, so such a thread runs until its query ends or the process does;
    the command-line entry point then ends the process at once rather than through interpreter
    teardown, which native code still running in another thread can hold up.
    """
    return any(thread.is_alive() for thread in _GIVEN_UP)


def too_slow(name: str, timeout: float) -> QueryError:
    """The one error for a query past its time limit, whichever engine ran it."""
    return QueryError(f"query {name!r} did not finish in {timeout:g} s; narrow it (a LIMIT, a parameter) "
                      "or allow more time (--timeout SECONDS, 0 = no limit)")


def with_deadline(work: Callable[[], T], timeout: float | None, name: str, *, stack: int | None = None) -> T:
    """Run `work` in a thread that this one waits for, so that Ctrl-C stops the wait at once and a query
    past `timeout` seconds (None or 0: no limit) is given up with a QueryError. `stack`: the thread's
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
            thread = threading.Thread(target=target, name=f"kg query {name}", daemon=True)
            thread.start()
        finally:
            if before is not None:
                threading.stack_size(before)
    deadline = ends(timeout)
    try:
        while thread.is_alive():
            if time.monotonic() >= deadline:
                raise too_slow(name, timeout or 0)
            thread.join(max(0.0, min(0.1, deadline - time.monotonic())))
    except BaseException:
        _GIVEN_UP[:] = [*(t for t in _GIVEN_UP if t.is_alive()), thread]
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]
