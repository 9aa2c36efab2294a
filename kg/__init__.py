"""kg: a knowledge-graph builder for the research literature.

The pipeline runs one way, one module a stage: ingest → extract → rdf → query / render.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .analyze import Analysis, analyze  # noqa: E402
from .build import Built, build, write  # noqa: E402
from .evaluate import evaluate  # noqa: E402
from .errors import InputError, KgError, OutputError, QueryError, SchemeError, UsageError  # noqa: E402
from .export import export  # noqa: E402
from .network import to_networkx  # noqa: E402
from .rdf import load  # noqa: E402
from .upload import push  # noqa: E402
from .render import render  # noqa: E402
from .update import Updated, update  # noqa: E402
from .report import report  # noqa: E402
from .results import Results  # noqa: E402
from .serve import make_app, serve  # noqa: E402
from .query import query  # noqa: E402  (last: the function shadows the module name on the package)

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
