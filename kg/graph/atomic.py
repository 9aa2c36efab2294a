"""Write outputs all or nothing: a temporary file beside the target, renamed into place."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any, Iterator

from kg.core.errors import OutputError


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
def locked(path: str | Path) -> Iterator[None]:
    """Hold the lock for writing `path`: an exclusive flock on `.NAME.lock` beside it, waited for.

    Two kg processes updating or building the same graph take turns instead of both reading the old
    file and the last rename winning (one run's papers lost, the next update duplicating them). The
    holder removes the lock file when done; a waiter that then finds its file gone or replaced
    locks again, so no two holders ever hold different files. Where flock is missing (not POSIX)
    the lock is a no-op.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    target = Path(path)
    lock = target.with_name(f".{target.name}.lock")
    while True:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OutputError(f"{target}: cannot write ({exc.strerror or exc})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
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
        yield
    finally:
        with suppress(OSError):  # already gone: nothing to tidy
            os.unlink(lock)
        os.close(fd)

