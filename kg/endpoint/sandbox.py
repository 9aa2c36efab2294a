"""Limits a `kg serve` query worker puts on itself before it answers anything.

`no_network()` installs a seccomp filter that makes creating an IPv4/IPv6 socket fail with EACCES
for the rest of the process's life. pyoxigraph ships with an HTTP client for SPARQL `SERVICE`
and has no option to turn it off; the endpoint refuses such queries after parsing them
(kg.sparql.sanitise.check), and this filter is the second wall: should a query ever slip past
the check, the engine still cannot open a connection. The worker talks to the server over pipes
and reads its store from files, so it needs no socket of its own.

`memory_limit()` caps the worker's address space (RLIMIT_AS): a query that would need more fails
its allocation and the worker dies, instead of growing until the machine swaps. It first holds glibc's
malloc to two arenas: each thread that allocates (pyoxigraph's loader and query threads) otherwise gets an
arena of its own, up to eight a core, each reserving 64 MB of address space that RLIMIT_AS counts, so the
address space of the same work varied by hundreds of MB from run to run (a worker loading a 41 MB N-Triples
graph peaked at 800-840 MB against 490-530 MB with two arenas, and died under its 1,352 MB cap in 4 of 8
starts on a busy machine).

`give_back_large_blocks()` is for the server process: answers of megabytes are allocated and
freed all the time, and glibc's malloc keeps freed blocks in its per-thread arenas, so the
process grew past the bytes it still held.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import resource
import struct

# Linux seccomp and BPF constants (linux/seccomp.h, linux/filter.h, linux/audit.h).
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_AF_INET, _AF_INET6 = 2, 10
# (audit arch, socket syscall number, io_uring_setup number, first number of another ABI to refuse or None)
_ARCHES = {"x86_64": (0xC000003E, 41, 425, 0x40000000), "aarch64": (0xC00000B7, 198, 425, None)}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def no_network() -> bool:
    """Forbid this process (and its threads and children) to open IPv4/IPv6 sockets; False where unsupported."""
    arch = _ARCHES.get(platform.machine())
    if arch is None or not hasattr(os, "sched_getaffinity"):  # not Linux, or a CPU this filter does not know
        return False
    audit, socket_nr, uring_nr, other_abi = arch
    deny = _RET_ERRNO | errno.EACCES
    prog = [
        _op(_LD_W_ABS, 4),  # seccomp_data.arch
        _op(_JEQ_K, audit, 1, 0),
        _op(_RET_K, deny),  # a syscall of another architecture's table: refused
        _op(_LD_W_ABS, 0),  # seccomp_data.nr
        _op(_JGE_K, other_abi if other_abi is not None else 0xFFFFFFFF, 0, 1),
        _op(_RET_K, deny),  # x32 calls: refused
        _op(_JEQ_K, uring_nr, 0, 1),
        _op(_RET_K, deny),  # io_uring can open sockets without the socket call
        _op(_JEQ_K, socket_nr, 0, 4),
        _op(_LD_W_ABS, 16),  # seccomp_data.args[0] (low half): the address family
        _op(_JEQ_K, _AF_INET, 1, 0),
        _op(_JEQ_K, _AF_INET6, 0, 1),
        _op(_RET_K, deny),
        _op(_RET_K, _RET_ALLOW),
    ]
    code = b"".join(prog)
    buffer = ctypes.create_string_buffer(code, len(code))

    class _Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = _Prog(len(prog), ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0


_M_ARENA_MAX = -8  # mallopt parameter (malloc.h)


def memory_limit(megabytes: int | None) -> None:
    """Cap this process's address space at `megabytes` (None or 0: no cap), its malloc held to two arenas."""
    if not megabytes:
        return
    try:
        ctypes.CDLL(None).mallopt(_M_ARENA_MAX, 2)
    except (OSError, AttributeError):  # no glibc: no arenas to hold
        pass
    limit = megabytes * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def give_back_large_blocks(threshold: int = 1 << 20) -> bool:
    """Make glibc's malloc map every block of `threshold` bytes or more on its own and unmap it when freed
    (M_MMAP_THRESHOLD; a fixed one also stops malloc raising it after each large free): False where
    there is no glibc."""
    try:
        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(-3, threshold))  # -3: M_MMAP_THRESHOLD (malloc.h)
    except (OSError, AttributeError):
        return False
