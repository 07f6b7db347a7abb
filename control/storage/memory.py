"""Giving freed memory back to the system, so a burst (a namespace of 9,000 objects deleted, the
lists and events it made) does not leave the hub at its peak size for the rest of the workshop.

CPython hands objects over 512 bytes (every object body, every watch line) to the C allocator.
glibc keeps what they freed inside its heaps (one per thread that allocated: the database thread
has its own), to reuse it; the hub's resident size then stays near its peak although the objects
are gone. `malloc_trim(0)` returns every free page of every heap to the kernel.

Guarantees: `release_free_memory()` asks glibc to return its free pages and says whether it could
(no forced garbage collection: a full collection of the hub's objects would cost more CPU than an
idle hub is allowed); on another C library (musl, macOS) it does nothing and returns
False. It never raises. It costs about a millisecond on an idle hub, so the change feed calls it
on its housekeeping tick (`ChangeFeed._compact`), not per request.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Callable

_trim: Callable[[int], int] | None = None
_looked = False


def _malloc_trim() -> Callable[[int], int] | None:
    global _trim, _looked
    if not _looked:
        _looked = True
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            function = libc.malloc_trim
            function.argtypes, function.restype = [ctypes.c_size_t], ctypes.c_int
            _trim = function
        except (OSError, AttributeError):
            _trim = None
    return _trim


def release_free_memory() -> bool:
    """Return the C heaps' free pages to the kernel; False where that is not possible."""
    trim = _malloc_trim()
    if trim is None:
        return False
    try:
        trim(0)
    except OSError:
        return False
    return True
