"""A `--jobs 2` build whose extraction worker is killed (SIGKILL, as the out-of-memory killer does) ends with a
one-line error and leaves its output alone; it used to wait for the lost chunk for ever at 0 % CPU (issue #36 M3)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import kg

from .conftest import FIXTURES, ROOT

PAPERS = 4000  # sixteen chunks of kg.pipeline.parallel.CHUNK: seconds of extraction for two workers
LIMIT = 60.0  # seconds the whole build may take once a worker is killed (it hung for ever)


def _papers(path: Path) -> Path:
    """The tiny fixture's papers again and again, under new ids, titles and abstracts (distinct papers, not copies)."""
    records = [json.loads(line) for line in (FIXTURES / "tiny.jsonl").read_text(encoding="utf-8").splitlines()]
    with path.open("w", encoding="utf-8") as out:
        for i in range(PAPERS):
            record = records[i % len(records)]
            out.write(json.dumps(record | {"id": f"k{i}", "title": f"{record.get('title') or 'Paper'} {i}", "abstract": f"{record['abstract']} Case {i}."}) + "\n")
    return path


def _kept(folder: Path) -> dict[str, object]:
    """Each file's bytes; a query index as its rows, less the `seen` row that any reader of a graph settled for
    kg.graph.stamp.SETTLE seconds records (the update records it if it reads the graph before it is killed: the
    bytes compared made the test fail whenever the machine was busy enough for that)."""
    import sqlite3

    kept: dict[str, object] = {}
    for path in folder.iterdir():
        if path.name.endswith(".kg-query.sqlite"):
            db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            try:
                kept[path.name] = [line for line in db.iterdump() if not line.startswith("INSERT INTO \"meta\" VALUES('seen',")]
            finally:
                db.close()
        else:
            kept[path.name] = path.read_bytes()
    return kept


def _children(pid: int) -> list[int]:
    """The child processes of `pid`, from /proc (psutil is not needed)."""
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as stream:
                found.extend(int(p) for p in stream.read().split())
    except OSError:
        pass
    return found


def _command_line(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as stream:
            return stream.read()
    except OSError:
        return b""


@pytest.mark.parametrize("command", ["build", "update"])
def test_a_killed_extraction_worker_ends_the_build_with_one_line_and_writes_nothing(tmp_path: Path, command: str) -> None:
    """A build (whose workers stream to the writer) and an update (which waits for all of them) alike."""
    papers, out = _papers(tmp_path / "papers.jsonl"), tmp_path / "out.ttl"
    if command == "build":
        out.write_bytes(b"# the previous graph\n")
        args = [str(papers), "-o", str(out)]
    else:
        kg.write(kg.build([FIXTURES / "tiny.jsonl"]), out)
        args = ["--update", str(out), str(papers)]
    before = _kept(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KG_PROGRESS_DELAY": "0"}
    build = subprocess.Popen([sys.executable, "-m", "kg", "build", "--no-render", "--no-store", "--jobs", "2", *args],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        workers: list[int] = []
        started = time.monotonic()
        while not workers:  # the spawned workers (a resource tracker is spawned too, but runs another main)
            assert build.poll() is None, f"the build ended before its workers started: {build.communicate()}"
            assert time.monotonic() - started < LIMIT, "no extraction workers appeared"
            workers = [p for p in _children(build.pid) if b"spawn_main" in _command_line(p)]
            try:
                build.wait(0.02)  # (returns at once if the build ends meanwhile)
            except subprocess.TimeoutExpired:
                pass
        os.kill(workers[0], signal.SIGKILL)
        stdout, stderr = build.communicate(timeout=LIMIT)
    finally:
        if build.poll() is None:  # it hung: do not leave it (or its workers) behind
            for pid in _children(build.pid):
                os.kill(pid, signal.SIGKILL)
            build.kill()
            build.communicate()
    message = stderr.decode().strip().splitlines()
    assert build.returncode == 1, (build.returncode, stdout, stderr)
    assert len(message) == 1 and message[0].startswith("Error: an extraction worker process was killed"), message
    assert "Traceback" not in stderr.decode()
    assert _kept(tmp_path) == before  # the graph as it was; no temporary file, no index
    assert not [p for p in _children(build.pid)]


def test_a_worker_killed_while_the_chunks_are_handed_out_is_the_same_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pool can break before every chunk is handed out (a worker killed in its start-up): `submit` then raises
    BrokenProcessPool itself, which came out as a nine-line "unexpected" error instead of the killed worker's line."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from click.testing import CliRunner

    from kg.cli import cli

    papers, out = _papers(tmp_path / "papers.jsonl"), tmp_path / "out.ttl"
    out.write_bytes(b"# the previous graph\n")
    before = _kept(tmp_path)
    submit, calls = ProcessPoolExecutor.submit, []

    def breaking(self: ProcessPoolExecutor, *args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) > 1:  # the first chunk handed out (its worker started), then the pool is broken
            raise BrokenProcessPool("A child process terminated abruptly, the process pool is not usable anymore")
        return submit(self, *args, **kwargs)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", breaking)
    result = CliRunner().invoke(cli, ["build", str(papers), "-o", str(out), "--no-render", "--no-store", "--jobs", "2"])
    lines = result.output.strip().splitlines()
    assert result.exit_code == 1, result.output
    assert len(lines) == 1 and lines[0].startswith("Error: an extraction worker process was killed") and "before papers 1-250 " in lines[0], lines
    assert _kept(tmp_path) == before
    assert not [p for p in _children(os.getpid()) if b"spawn_main" in _command_line(p)]  # its workers are gone
