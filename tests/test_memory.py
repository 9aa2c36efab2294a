"""kg.core.memory: freed heap memory is given back to the system (the build calls it before the page)."""

from __future__ import annotations

import os
import sys

import pytest

from kg.core.memory import give_back_freed


def _resident_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs glibc and /proc")
def test_memory_freed_between_kept_blocks_goes_back_to_the_system() -> None:
    blocks = [bytes(2048) for _ in range(100_000)]  # about 200 MB from malloc (blocks over pymalloc's 512 bytes)
    kept = blocks[::64]  # one block in 64 stays: the heap cannot shrink from its top alone
    del blocks
    before = _resident_mb()
    assert give_back_freed()
    after = _resident_mb()
    del kept  # alive until both readings: the blocks between them held the heap's freed pages in place
    assert before - after > 100, f"resident {before:.0f} MB before, {after:.0f} MB after"
