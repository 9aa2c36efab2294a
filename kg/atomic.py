"""Write outputs all or nothing: a temporary file beside the target, renamed into place."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterator

from .errors import OutputError


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
def scratch_sqlite(path: Path) -> Iterator[sqlite3.Connection]:
    """A new SQLite file in a store's temporary folder (kg.textindex, kg.tables), committed and closed at the end.

    The folder is thrown away if the build fails, so the file is written without journal or fsync.
    """
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        yield db
        db.commit()
    finally:
        db.close()
