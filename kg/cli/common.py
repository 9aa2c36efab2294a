"""What every `kg` command shares: one-line errors, progress notes, paging, the default graph, parameters."""

from __future__ import annotations

import functools
import gc
import os
import sys
from pathlib import Path
from typing import Any, Callable, TypeVar

import click

from kg.core.defaults import setting
from kg.core.errors import KgError


def step(message: str) -> None:
    """Say on a terminal's stderr what a step that takes seconds is doing (nothing when stderr is a file or pipe, or with -q)."""
    from kg.core import progress

    progress.note(message)


def with_progress(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add -q/--quiet, and show the library's progress (kg.core.progress) on stderr while the command runs when stderr
    is a terminal and -q is not given: a pipe or a log file gets none of it."""

    @click.option("-q", "--quiet", is_flag=True, help="No progress on stderr [shown while a step runs, when stderr is a terminal].")
    @functools.wraps(command)
    def wrapper(*args: Any, quiet: bool, **kwargs: Any) -> Any:
        from kg.core import progress

        before = progress.enabled()
        progress.enable(sys.stderr.isatty() and not quiet)
        try:
            return command(*args, **kwargs)
        finally:
            progress.enable(before)

    return wrapper


def without_collector(command: Callable[..., Any]) -> Callable[..., Any]:
    """Run the command with Python's cyclic garbage collector off, on again after it (if it was on).

    For a command that makes hundreds of thousands of objects and no cycles: `kg query`'s rows, terms and table
    lines are freed by reference counting, and the collector's passes over them while they were alive cost 0.1 s of
    the 1 s a 61,000-row listing took. It is turned on again once the command's objects are gone, so no pass over
    them is left pending (a test's in-process call, the next command)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        collecting = gc.isenabled()
        gc.disable()
        try:
            return command(*args, **kwargs)
        finally:
            if collecting:
                gc.enable()

    return wrapper


def clean_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Report any failure as one line 'Error: …' (exit 1; Ctrl-C exits 130), never a traceback.

    Set KG_DEBUG=1 to get the traceback of an unexpected error (a bug in kg) instead.
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except KgError as exc:
            raise click.ClickException(str(exc)) from None
        except KeyboardInterrupt:
            # Outputs are written with atomic_write, so an interrupted run leaves them as they were.
            click.echo("Error: interrupted; outputs not yet written were left as they were", err=True)
            raise click.exceptions.Exit(130) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:
            if os.environ.get("KG_DEBUG"):
                raise
            raise click.ClickException(
                f"unexpected {type(exc).__name__}: {exc} (a bug in kg: please report it; KG_DEBUG=1 shows the traceback)"
            ) from None

    return wrapper


def show(text: str | bytes) -> None:
    """Print a result (text, or UTF-8 bytes); on a terminal, one taller than the screen goes through a pager ($PAGER, else
    `less -FRSX`, as git does).

    Bytes go out as they are when that is what printing their text would write: not to a terminal, on a UTF-8 stream
    with no newline translation, and with no escape character, which click takes out of text for a pipe or a file.
    A 61,000-row table is 13 MB: decoding, scanning and encoding it again cost 0.04 s."""
    import shutil

    if isinstance(text, bytes):
        if not sys.stdout.isatty() and b"\x1b" not in text and os.linesep == "\n" and _utf8(sys.stdout):
            click.echo(text, nl=False)
            return
        text = text.decode("utf-8")
    if sys.stdout.isatty() and text.count("\n") > shutil.get_terminal_size().lines - 2:
        os.environ.setdefault("LESS", "FRSX")  # long lines scroll sideways instead of wrapping; quit when it fits
        click.echo_via_pager(text)
    else:
        click.echo(text, nl=False)


def _utf8(stream: Any) -> bool:
    import codecs

    try:
        return codecs.lookup(getattr(stream, "encoding", None) or "").name == "utf-8"
    except LookupError:
        return False


def default_graph_said() -> Path:
    """The graph a command uses when none is named, said on stderr so that nobody wonders which graph answered."""
    from kg.sparql.run import default_graph

    graph = default_graph()
    click.echo(f"graph: {graph} (the latest in graphs/; --graph to choose)" if graph.is_file() else f"graph: {graph}", err=True)
    return graph


def params_of(pairs: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{pair!r} is not name=value", param_hint="--param")
        out[name.strip()] = value
    return out


def refuse_overwrite(output: Path, inputs: Any, page: Path | None = None) -> None:
    """Refuse an output (or the HTML page written beside it) that is one of the inputs (kg.graph.handle.refuse_overwrite)."""
    from kg.graph.handle import refuse_overwrite as refuse

    refuse(output, inputs)
    if page is not None:
        refuse(page, inputs)


F = TypeVar("F", bound=Callable[..., Any])


class SettingOption(click.Option):
    """An option whose default and help text come from a setting of kg.core.defaults.SETTINGS (`more`: words the
    option adds about itself)."""

    def __init__(self, *args: Any, setting_name: str, more: str = "", **kwargs: Any) -> None:
        found = setting(setting_name)
        kwargs.update(default=found.value, show_default=True, help=f"{found.help} {more}".strip())
        super().__init__(*args, **kwargs)
        self.setting = found


class Jobs(click.ParamType):
    """A number of worker processes (at least 1), or auto (kg.pipeline.parallel.workers)."""

    name = "N|auto"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int | str:
        if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            return value
        try:
            number = int(value)
        except (TypeError, ValueError):
            number = 0
        if number < 1:
            self.fail(f"{value!r} is neither a number of processes (at least 1) nor auto", param, ctx)
        return number


def setting_option(*decls: str, setting: str, more: str = "", **kwargs: Any) -> Callable[[F], F]:
    """click.option for the setting called `setting`: its value is the default, its text the help."""
    return click.option(*decls, cls=SettingOption, setting_name=setting, more=more, **kwargs)
