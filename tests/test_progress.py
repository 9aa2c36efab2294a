"""Progress on stderr (kg.core.progress): shown by the real `kg` command on a terminal, never in a pipe, with -q, or by the library.

The terminal is a real pseudo-terminal (os.openpty) given to a `kg` process as its stderr; what the
process prints there is read back. KG_PROGRESS_DELAY=0 shows every step, however quick: the tiny
inputs here finish each step well under the second after which a step is shown by default.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

import kg
from kg.cli import cli

FIXTURES = Path(__file__).parent / "fixtures"
QUICK = {"KG_PROGRESS_DELAY": "0"}

# What each command shows while it runs: the steps and what they count.
SHOWN = {
    "build": ["reading my.jsonl", "loading the extractor for 3 papers", "extract:", "/3 papers", "writing g.ttl:", "triples",
              "indexing g.ttl for the named queries", "drawing g.ttl"],
    "analyze": ["analysing g.ttl", "analysing g.ttl: reading the query index of g.ttl", "analysing g.ttl: finding similar papers"],
    "report": ["reporting on g.ttl", "reporting on g.ttl: charts"],
    "export": ["converting g.ttl to jsonld", "writing jsonld:"],
    "render": ["drawing g.ttl", "drawing g.ttl: laying out the view"],
    "query": ["loading g.ttl into its SPARQL store"],
}
ARGS = {
    "build": ["build", "my.jsonl", "-o", "g.ttl"],
    "analyze": ["analyze", "g.ttl"],
    "report": ["report", "g.ttl"],
    "export": ["export", "g.ttl", "-o", "g.jsonld"],
    "render": ["render", "g.ttl", "--view", "concepts", "-o", "concepts.html"],
    "query": ["query", "count.rq", "--graph", "g.ttl"],
}


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(FIXTURES / "tiny.jsonl", tmp_path / "my.jsonl")
    (tmp_path / "count.rq").write_text("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _terminal() -> tuple[int, int]:
    """A pseudo-terminal 160 columns wide: (leader, follower)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    return leader, follower


def on_terminal(args: list[str], cwd: Path, env: dict[str, str] = QUICK) -> tuple[int, str, str]:
    """Run `kg ARGS` with stderr on a pseudo-terminal and stdout on a pipe: exit code, stdout, what the terminal got."""
    leader, follower = _terminal()
    said: list[bytes] = []

    def drain() -> None:  # read while it runs: a full terminal buffer would stop the process
        try:
            while chunk := os.read(leader, 4096):
                said.append(chunk)
        except OSError:  # the last writer closed the terminal
            pass

    reader = threading.Thread(target=drain)
    reader.start()
    with subprocess.Popen([sys.executable, "-m", "kg", *args], stdout=subprocess.PIPE, stderr=follower, cwd=cwd,
                          env={**os.environ, **env}) as proc:
        os.close(follower)
        out, _ = proc.communicate(timeout=300)
    reader.join(timeout=60)
    os.close(leader)
    return proc.returncode, out.decode(), b"".join(said).decode(errors="replace")


def test_every_slow_step_shows_on_a_terminal(folder: Path) -> None:
    for command, shown in SHOWN.items():
        code, out, terminal = on_terminal(ARGS[command], folder)
        assert code == 0, (command, out, terminal)
        missing = [text for text in shown if text not in terminal]
        assert missing == [], f"kg {command} did not show {missing} on the terminal; it showed {terminal!r}"
    assert (folder / "g.oxigraph").is_dir(), "the ad-hoc query loaded the store"


def test_serve_shows_its_start_on_a_terminal(folder: Path) -> None:
    assert CliRunner().invoke(cli, ["build", "my.jsonl", "-o", "g.ttl", "--no-render"]).exit_code == 0
    leader, follower = _terminal()
    said = b""
    with subprocess.Popen([sys.executable, "-m", "kg", "serve", "g.ttl", "--port", "0", "--workers", "1"], stdout=subprocess.DEVNULL,
                          stderr=follower, cwd=folder, env={**os.environ, **QUICK}) as proc:
        os.close(follower)
        try:
            while b"Ctrl-C to stop" not in said:
                ready, _, _ = select.select([leader], [], [], 120)
                assert ready, f"kg serve said no address in 120 s: {said!r}"
                said += os.read(leader, 4096)
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
    os.close(leader)
    text = said.decode(errors="replace")
    assert "starting the endpoint for g.ttl" in text and "starting the query workers (loading the graph into memory)" in text
    assert text.index("starting the endpoint") < text.index("kg serve: http://")


def test_nothing_in_a_pipe(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_PROGRESS_DELAY", "0")
    piped = subprocess.run([sys.executable, "-m", "kg", *ARGS["build"]], capture_output=True, text=True, cwd=folder, timeout=300)
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
    for command in ["analyze", "report", "export", "render", "query"]:
        done = CliRunner().invoke(cli, ARGS[command])
        assert done.exit_code == 0, done.output
        assert [text for text in SHOWN[command] if text in done.stderr] == [], (command, done.stderr)
        assert "[00:0" not in done.stderr


def test_nothing_with_quiet_on_a_terminal(folder: Path) -> None:
    for command in ["build", "analyze", "export", "query"]:
        code, out, terminal = on_terminal([*ARGS[command], "-q"], folder)
        assert code == 0, (command, out, terminal)
        assert terminal.strip() in ("", "wrote g.jsonld"), f"kg {command} -q showed {terminal!r}"


def test_the_library_shows_nothing_unless_asked(folder: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    from kg.core import progress

    monkeypatch.setenv("KG_PROGRESS_DELAY", "0")
    assert not progress.enabled()
    built = kg.build(folder / "my.jsonl")
    kg.write(built, folder / "g.ttl")
    kg.analyze(folder / "g.ttl")
    kg.export(folder / "g.ttl", folder / "g.jsonld")
    assert capfd.readouterr().err == ""


def test_a_step_shows_its_label_count_and_stage(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from kg.core import progress

    monkeypatch.setenv("KG_PROGRESS_DELAY", "0")
    progress.enable()
    try:
        with progress.step("writing g.ttl", unit="triples") as tick:
            assert list(progress.counted(range(20_000), tick, every=5_000)) == list(range(20_000))
            progress.stage("the index")
            tick(0)
        with progress.step("extract", total=4, unit="papers") as tick:
            tick(4)
    finally:
        progress.enable(False)
    err = capsys.readouterr().err
    assert "writing g.ttl:" in err and " triples [" in err and "writing g.ttl: the index" in err
    assert "extract:" in err and "/4 papers" in err


def test_counted_ticks_in_batches_and_costs_nothing_when_silent() -> None:
    from kg.core import progress

    ticks: list[int] = []
    assert list(progress.counted(iter(range(10)), ticks.append, every=4)) == list(range(10))
    assert ticks == [4, 4, 2]
    items = [1, 2, 3]
    assert progress.counted(items, progress.silent) is items


def test_stepped_labels_a_call_from_its_arguments(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from kg.core import progress

    @progress.stepped("analysing {graph} into {out}")
    def work(graph: object, out: object = None) -> int:
        progress.stage("communities")
        return 7

    assert work(Path("g.ttl")) == 7 and capsys.readouterr().err == ""
    monkeypatch.setenv("KG_PROGRESS_DELAY", "0")
    progress.enable()
    try:
        assert work(Path("g.ttl"), out=[1]) == 7
    finally:
        progress.enable(False)
    err = capsys.readouterr().err
    assert "analysing g.ttl into a list" in err and "analysing g.ttl into a list: communities" in err
