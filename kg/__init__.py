"""kg: a knowledge-graph builder for the research literature.

The pipeline runs one way, one module a stage: ingest → extract → rdf → query / render.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .build import Built, build, write  # noqa: E402
from .errors import InputError, KgError, QueryError, SchemeError, UsageError  # noqa: E402
from .export import export  # noqa: E402
from .rdf import load  # noqa: E402
from .render import render  # noqa: E402
from .update import Updated, update  # noqa: E402

__all__ = [
    "Built",
    "InputError",
    "KgError",
    "QueryError",
    "SchemeError",
    "UsageError",
    "Updated",
    "build",
    "export",
    "load",
    "render",
    "update",
    "write",
    "__version__",
]
