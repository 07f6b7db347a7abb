"""A child process never outlives the process that started it, on any system.

Guarantees:
- `die_with_parent(sig)` asks the Linux kernel to send `sig` when the parent dies
  (`prctl(PR_SET_PDEATHSIG)`); elsewhere (macOS, the BSDs) it returns False and does nothing.
- `parent_is_gone(expected, parent)` is true once we were re-parented: the pid the parent named
  (`KK_PARENT_PID`) is not our parent any more, or our parent changed from `parent`.
- `watch_parent_in_thread(parent, on_gone)` calls `on_gone` once, from a daemon thread that looks
  at our parent's pid every `PARENT_CHECK` seconds, when the parent is gone: the portable part,
  for processes whose loop is not asyncio's (the hub's Twisted reactor, decode workers).
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
import threading
from typing import Callable

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PARENT_CHECK = 1.0  # seconds between two looks at the parent's pid


def die_with_parent(sig: int = 15) -> bool:
    """Ask the Linux kernel to send `sig` (default SIGTERM) to this process when its parent dies;
    False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def parent_is_gone(expected: str | None, parent: int) -> bool:
    """The process that started us has exited: we were re-parented (to init or a subreaper)."""
    if expected and expected.isdigit() and int(expected) != parent:
        return True
    return os.getppid() != parent


def watch_parent_in_thread(parent: int, on_gone: Callable[[], None], *, every: float = PARENT_CHECK,
                           stopped: threading.Event | None = None) -> threading.Thread:
    """Call `on_gone` once our parent is no longer `parent`, from a daemon thread looking every
    `every` seconds; `stopped` ends the watch early."""
    stopped = stopped or threading.Event()

    def watch() -> None:
        while not stopped.wait(every):
            if os.getppid() != parent:
                logging.getLogger(__name__).warning("parent %d is gone; stopping", parent)
                on_gone()
                return

    thread = threading.Thread(target=watch, name="parent-watch", daemon=True)
    thread.start()
    return thread
