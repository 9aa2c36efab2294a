"""Run jobs in worker processes that can be killed, so a runaway SPARQL query really stops.

pyoxigraph cannot interrupt a query from another thread, and a cross product with ORDER BY or
COUNT burns CPU inside one call; only ending the process stops it. Each worker holds its own
read-only store; a worker that overruns its deadline is killed and replaced, and the other
workers keep answering.

Workers are plain `python -m kg.endpoint.workers` subprocesses talking pickles over their stdin/stdout,
not multiprocessing children: multiprocessing's spawn re-imports the caller's __main__, which
breaks any script that starts a server without an `if __name__ == "__main__"` guard.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Callable


@dataclass(frozen=True)
class Outcome:
    """What a job gave: ok with a value, or failed with a kind ('timeout', 'busy', 'crash') and a message."""

    ok: bool
    value: Any = None
    kind: str = ""
    message: str = ""


def _main(conn: Any) -> None:
    """Worker loop: read (init, init_args, handle), build the state once, then answer jobs until EOF."""
    try:
        init, init_args, handle = conn.recv()
        state = init(*init_args)
    except BaseException as exc:  # report and exit; the pool then fails jobs with this message
        conn.send(("init-error", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", None))
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        try:
            conn.send(("ok", handle(state, job)))
        except BaseException as exc:  # a bug in handle must not kill the worker silently
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


class _Duplex:
    """A pair of one-way Connections (read end, write end) used as one."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._r = Connection(read_fd, writable=False)
        self._w = Connection(write_fd, readable=False)

    def send(self, obj: Any) -> None:
        self._w.send(obj)

    def recv(self) -> Any:
        return self._r.recv()

    def poll(self, timeout: float) -> bool:
        return self._r.poll(timeout)

    def close(self) -> None:
        for c in (self._r, self._w):
            try:
                c.close()
            except OSError:
                pass


class _Worker:
    def __init__(self, spec: tuple) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "kg.endpoint.workers"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdout is not None and self.proc.stdin is not None  # both are pipes (PIPE above)
        self.conn = _Duplex(os.dup(self.proc.stdout.fileno()), os.dup(self.proc.stdin.fileno()))
        self.proc.stdout.close()
        self.proc.stdin.close()
        self.conn.send(spec)
        self.ready = False

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=5)
        self.conn.close()


class _Idle:
    """Idle workers; `get` prefers one that has started (a replacement for a killed worker takes a
    second or two to load the graph, and a job given to it waits that long)."""

    def __init__(self) -> None:
        self._workers: list[_Worker] = []
        self._cond = threading.Condition()

    def put(self, worker: _Worker) -> None:
        with self._cond:
            self._workers.append(worker)
            self._cond.notify()

    def ready(self) -> int:
        """How many idle workers have started."""
        with self._cond:
            return sum(1 for w in self._workers if w.ready or w.conn.poll(0))

    def get(self, timeout: float) -> _Worker:
        with self._cond:
            if not self._cond.wait_for(lambda: bool(self._workers), timeout):
                raise queue.Empty
            ready = [w for w in self._workers if w.ready or w.conn.poll(0)]
            worker = (ready or self._workers)[0]
            self._workers.remove(worker)
            return worker


class Pool:
    """A fixed number of worker processes; `run` gives one a job and waits at most `timeout` seconds."""

    def __init__(self, init: Callable[..., Any], init_args: tuple, handle: Callable[[Any, Any], Any], *, size: int = 2,
                 spare: bool = False) -> None:
        """`spare`: keep one more worker started and idle, which takes a killed worker's place at once
        (a new one needs a second or more to start, during which the pool would be a worker short)."""
        self._spec = (init, init_args, handle)
        self._idle = _Idle()
        self._lock = threading.Lock()
        self._closed = False
        self.killed = 0  # workers ended for overrunning their deadline
        self._all: set[_Worker] = set()
        for _ in range(size):
            self._idle.put(self._start())
        self._spare = self._start() if spare else None

    def _start(self) -> _Worker:
        worker = _Worker(self._spec)
        with self._lock:
            self._all.add(worker)
        return worker

    def ready(self) -> int:
        """How many idle workers have started and could take a job at once."""
        return self._idle.ready()

    def started(self, timeout: float = 120.0) -> str | None:
        """Wait until one worker has started: None, or why it could not (e.g. the graph does not parse)."""
        try:
            worker = self._idle.get(timeout=timeout)
        except queue.Empty:
            return "no query worker is free"
        try:
            problem = self._ready(worker)
        finally:
            self._idle.put(worker)
        return problem

    def _ready(self, worker: _Worker) -> str | None:
        """Wait for a fresh worker's start-up (imports, opening the store): None when ready, else why not."""
        if worker.ready:
            return None
        if not worker.conn.poll(120):
            return "query worker did not start"
        try:
            tag, value = worker.conn.recv()
        except (EOFError, OSError):
            return "query worker failed to start"
        if tag != "ready":
            return str(value)
        worker.ready = True
        return None

    def run(self, job: Any, timeout: float, wait: float | None = None) -> Outcome:
        """Run `job` in an idle worker: the answer, or a timeout (the worker is killed and replaced)."""
        try:
            worker = self._idle.get(timeout=timeout if wait is None else wait)
        except queue.Empty:
            return Outcome(False, kind="busy", message="all query workers are busy; try again shortly")
        problem = self._ready(worker)  # a fresh worker's start-up does not count against the job
        if problem is not None:
            return self._replace(worker, Outcome(False, kind="crash", message=problem))
        try:
            worker.conn.send(job)
            if not worker.conn.poll(timeout):
                with self._lock:
                    self.killed += 1
                return self._replace(worker, Outcome(False, kind="timeout", message=f"query stopped after {timeout:g} s (the time limit)"))
            tag, value = worker.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            return self._replace(worker, Outcome(False, kind="crash", message="query worker died (out of memory?)"))
        self._idle.put(worker)
        if tag == "ok":
            return Outcome(True, value)
        return Outcome(False, kind="crash", message=str(value))

    def _replace(self, worker: _Worker, outcome: Outcome) -> Outcome:
        worker.kill()
        with self._lock:
            self._all.discard(worker)
        if not self._closed:
            with self._lock:
                promoted, self._spare = self._spare, None
            if promoted is None:
                self._idle.put(self._start())
            else:
                self._idle.put(promoted)
                fresh = self._start()
                with self._lock:
                    self._spare = fresh
        return outcome

    def close(self) -> None:
        """End every worker process."""
        self._closed = True
        with self._lock:
            workers, self._all = list(self._all), set()
        for worker in workers:
            worker.kill()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


if __name__ == "__main__":
    # The pipes are fds 0 and 1; anything the job prints goes to stderr instead of the pipe.
    _out = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _main(_Duplex(0, _out))
