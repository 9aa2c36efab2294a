"""kg: a knowledge-graph builder for the research literature.

The pipeline runs one way, one module a stage: ingest → extract → triples → query / render; tests/test_layers.py holds the layers.
"""

from __future__ import annotations

from .defaults import VERSION as __version__
from .analyze import Analysis, analyze
from .build import Built, build, write
from .evaluate import evaluate
from .errors import InputError, KgError, OutputError, QueryError, SchemeError, UsageError
from .export import export
from .network import to_networkx
from .graphio import load
from .upload import push
from .render import render
from .update import Updated, update
from .report import report
from .results import Results
from .serve import make_app, serve
from .query import query  # (last: the function shadows the module name on the package)

__all__ = [
    "Analysis",
    "Built",
    "InputError",
    "KgError",
    "OutputError",
    "QueryError",
    "SchemeError",
    "UsageError",
    "Updated",
    "analyze",
    "build",
    "evaluate",
    "export",
    "load",
    "make_app",
    "push",
    "query",
    "Results",
    "render",
    "update",
    "report",
    "serve",
    "to_networkx",
    "write",
    "__version__",
]
