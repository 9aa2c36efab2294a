"""The `kg` command: thin click commands over the Python API, turning KgError into one clean line.

One module a group of verbs: build (build, export, render), query (query, serve, push), analysis
(analyze, report, eval, train); common holds what they share.
"""

from __future__ import annotations

import gc
import os
import sys

import click

from kg.cli import analysis, build, query
from kg.core.defaults import VERSION as __version__
from kg.sparql.deadline import given_up_running


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kg")
def cli() -> None:
    """kg: map research papers onto machine-learning concepts as an RDF knowledge graph."""


for _command in (build.build, build.export, build.render, query.query_command, query.serve_command, query.push_command,
                 analysis.analyze, analysis.report, analysis.eval_, analysis.train):
    cli.add_command(_command)


def main() -> None:
    """Console-script entry point."""
    # A kg process is short, and what it makes (papers, triples, spaCy's vocabulary) is freed by
    # reference counting, not by the cyclic collector. At the collector's default pace (a pass every
    # 700 new objects, re-walking spaCy's import-time objects) it took ~0.3 s of a 2.5 s
    # `kg build --update`, and its final pass at exit another ~0.2 s; rarer passes keep it bounded.
    gc.set_threshold(100_000, 50, 100)
    code: int | str | None = 0
    try:
        cli()
    except SystemExit as exc:
        code = exc.code
    finally:
        gc.freeze()  # the process ends: no final pass over objects the OS reclaims anyway
    if given_up_running():
        # A query given up (--timeout, Ctrl-C) still runs in the engine's native code: interpreter
        # teardown beside it could wait for it (a `kg query` did not exit after Ctrl-C), so end here.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code if isinstance(code, int) else 0 if code is None else 1)
    sys.exit(code)
