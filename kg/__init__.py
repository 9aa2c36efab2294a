"""kg: a knowledge-graph builder for the research literature.

The pipeline runs one way, one folder a layer (docs/architecture.md): ingest and extract → triples → query / render; tests/test_layers.py holds the layers.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from kg.core.defaults import VERSION as __version__
from kg.core.errors import InputError, KgError, OutputError, QueryError, SchemeError, UsageError

# The API's functions and classes, each imported from its module when first used: `import kg` (which every `kg`
# command runs first) imported every layer, 0.46 s of CPU before a `kg query` read a row (decision 0051).
_FROM = {
    "Analysis": "kg.views.analyze", "analyze": "kg.views.analyze", "Built": "kg.pipeline.build", "build": "kg.pipeline.build",
    "write": "kg.pipeline.build", "evaluate": "kg.views.evaluate", "export": "kg.views.export",
    "to_networkx": "kg.views.network", "load": "kg.graph.files", "push": "kg.sparql.push", "render": "kg.views.render",
    "Updated": "kg.pipeline.update", "update": "kg.pipeline.update", "report": "kg.views.report",
    "Results": "kg.sparql.results", "make_app": "kg.endpoint.app", "serve": "kg.endpoint.app", "query": "kg.sparql.run",
}

if TYPE_CHECKING:
    from kg.endpoint.app import make_app, serve
    from kg.graph.files import load
    from kg.pipeline.build import Built, build, write
    from kg.pipeline.update import Updated, update
    from kg.sparql.push import push
    from kg.sparql.results import Results
    from kg.sparql.run import query
    from kg.views.analyze import Analysis, analyze
    from kg.views.evaluate import evaluate
    from kg.views.export import export
    from kg.views.network import to_networkx
    from kg.views.render import render
    from kg.views.report import report


def __getattr__(name: str) -> Any:
    module = _FROM.get(name)
    if module is None:
        raise AttributeError(f"module 'kg' has no attribute {name!r}")
    value = globals()[name] = getattr(import_module(module), name)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_FROM})


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
