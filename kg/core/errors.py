"""The one error hierarchy of kg: every failure a user can cause is a KgError."""

from __future__ import annotations


class KgError(Exception):
    """Base class: a message that names the input and suggests the fix."""


class InputError(KgError):
    """An input file is missing, unreadable or malformed."""


class SchemeError(KgError):
    """A concept scheme or ontology file cannot be loaded."""


class QueryError(KgError):
    """A SPARQL query is unknown, malformed, or failed to run."""


class UsageError(KgError):
    """Options that do not fit together, or a name that is not registered."""


class OutputError(KgError):
    """An output file cannot be written (no space, no permission, a directory in the way)."""


class WorkerError(KgError):
    """A worker process ended without an answer: killed (the out-of-memory killer, a signal), not failed on an input."""
