"""kg: a knowledge-graph builder for the research literature.

The pipeline runs one way, one folder a layer (docs/architecture.md): ingest and extract → triples → query / render; tests/test_layers.py holds the layers.
"""

from __future__ import annotations

from kg.core.defaults import VERSION as __version__
from kg.views.analyze import Analysis, analyze
from kg.pipeline.build import Built, build, write
from kg.views.evaluate import evaluate
from kg.core.errors import InputError, KgError, OutputError, QueryError, SchemeError, UsageError
from kg.views.export import export
from kg.views.network import to_networkx
from kg.graph.files import load
from kg.sparql.push import push
from kg.views.render import render
from kg.pipeline.update import Updated, update
from kg.views.report import report
from kg.sparql.results import Results
from kg.endpoint.app import make_app, serve
from kg.sparql.run import query

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
