"""kg.endpoint.sandbox: what a query worker does to itself before it answers anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

THREADS = """
import threading
from kg.endpoint.sandbox import memory_limit

def size_mb():
    return int(next(l for l in open("/proc/self/status") if l.startswith("VmSize")).split()[1]) // 1024

memory_limit(8192)
threading.stack_size(256 * 1024)
before = size_mb()
barrier = threading.Barrier(16)
held = []

def work():
    held.append([bytearray(50_000) for _ in range(4)])  # malloc'd, not pymalloc'd: each thread's own arena
    barrier.wait()

threads = [threading.Thread(target=work) for _ in range(16)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(size_mb() - before)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists() or sys.platform != "linux", reason="reads /proc (Linux)")
def test_threads_of_a_capped_worker_share_a_few_malloc_arenas() -> None:
    """Under the address-space cap, 16 allocating threads cost what they hold, not an arena of 64 MB each.

    glibc gives each thread that allocates an arena of its own (up to 8 a core), each reserving 64 MB of address
    space; RLIMIT_AS counts the reservation, so a worker's address space varied by hundreds of MB from run to run.
    """
    done = subprocess.run([sys.executable, "-c", THREADS], capture_output=True, text=True, check=True)
    grown = int(done.stdout.strip())
    assert grown < 200, f"the address space grew by {grown} MB for 16 threads holding 3 MB in all"
