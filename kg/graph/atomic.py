"""Write outputs all or nothing: a temporary file beside the target, renamed into place."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any, Iterator

from kg.core.defaults import LOCK_WAIT
from kg.core.errors import OutputError

POLL = 0.05  # seconds between two tries of a lock another process holds


@contextmanager
def atomic_write(path: str | Path, mode: str = "wb") -> Iterator[IO]:
    """Open a temporary file next to `path`; on success rename it over `path`, on failure delete it.

    A failed or interrupted run (any exception, KeyboardInterrupt included) therefore leaves
    the previous output exactly as it was and no temporary file behind. Failures to create,
    write or rename the file itself become OutputError naming `path`.
    """
    target = Path(path)
    if target.is_dir():
        raise OutputError(f"{target}: is a directory; give a file name for the output")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise OutputError(f"{target}: cannot write ({exc.strerror or exc})") from None
    try:
        text: dict[str, Any] = {} if "b" in mode else {"encoding": "utf-8", "newline": ""}
        with os.fdopen(fd, mode, **text) as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        if exc.filename not in (None, tmp):  # not about our file (e.g. an input read while writing)
            raise
        raise OutputError(f"{target}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def locked(path: str | Path, wait: float | None = None) -> Iterator[None]:
    """Hold the lock for writing `path`: an exclusive flock on `.NAME.lock` beside it, waited for at most `wait`
    seconds (kg.core.defaults.LOCK_WAIT), then an OutputError that says which process holds it.

    Two kg processes writing the same graph take turns instead of both reading the old file and the last
    rename winning (one run's papers lost, the next update duplicating them). The holder writes its process
    id into the lock file and removes the file when done; a waiter that then finds its file gone or replaced
    locks again, so no two holders ever hold different files. A waiter says once on stderr whom it waits
    for. Where flock is missing (not POSIX) the lock is a no-op.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    target = Path(path)
    lock = target.with_name(f".{target.name}.lock")
    limit = LOCK_WAIT if wait is None else wait
    deadline: float | None = None
    while True:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OutputError(f"{target}: cannot write ({exc.strerror or exc})") from None
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    now = time.monotonic()
                    if deadline is None:
                        deadline = now + limit
                        _held(target, _holder(fd))
                    if now >= deadline:
                        raise OutputError(f"{target}: {_holder(fd)} has been writing it for more than {limit:g} s "
                                          f"(lock {lock.name}); run this again when it is done") from None
                    time.sleep(POLL)
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            break
        os.close(fd)  # the previous holder removed that file: lock the current one
    try:
        with suppress(OSError):  # who holds it, for a waiter's message; the lock holds without it
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        with suppress(OSError):  # already gone: nothing to tidy
            os.unlink(lock)
        os.close(fd)


def _holder(fd: int) -> str:
    """Who holds the lock open as `fd`, from the process id its holder wrote there."""
    with suppress(OSError, ValueError):
        return f"another kg (process {int(os.pread(fd, 32, 0).decode().strip())})"
    return "another kg"


def _held(target: Path, holder: str) -> None:
    """Say once that this run waits for the lock of `target`."""
    print(f"waiting for {holder}, which is writing {target}", file=sys.stderr, flush=True)
