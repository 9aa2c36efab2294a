"""Memory a long command has freed, given back to the system before its next step.

Python frees a build's papers and extractions into glibc's heap, which keeps the freed pages between the blocks
still in use; the process's resident size stays at its peak and the next step (the page) is counted on top of it.
"""

from __future__ import annotations

import ctypes
import gc


def give_back_freed() -> bool:
    """Collect unreachable objects and return the heap's free pages to the system (glibc's malloc_trim):
    False where there is no glibc."""
    gc.collect()
    try:
        return bool(ctypes.CDLL(None).malloc_trim(0))
    except (OSError, AttributeError):
        return False
