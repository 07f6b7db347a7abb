"""The machine's ephemeral port range: where the kernel puts a socket bound to port 0.

The hub's node-address gate (`control.api.node_address`) lets a node's server use a port from
this range (a kubelet that could not take 10250, every kubelet when the nodes share 127.0.0.1), so
the range must be this machine's, not Linux's on every system.

Guarantees: `ephemeral_ports()` is Linux's `net.ipv4.ip_local_port_range` (read from /proc), the
BSDs' and macOS's `net.inet.ip.portrange.first`..`last` (sysctlbyname, no subprocess), and IANA's
49152-65535 (macOS's and Windows' default) where neither can be read; never raises.
"""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

IANA = range(49152, 65536)


def _linux() -> range | None:
    try:
        low, high = (int(v) for v in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        return None
    return range(low, high + 1)


def _sysctl_int(libc: ctypes.CDLL, name: str) -> int | None:
    value, size = ctypes.c_int(0), ctypes.c_size_t(ctypes.sizeof(ctypes.c_int))
    if libc.sysctlbyname(name.encode(), ctypes.byref(value), ctypes.byref(size), None, ctypes.c_size_t(0)) != 0:
        return None
    return value.value


def _bsd() -> range | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        low, high = _sysctl_int(libc, "net.inet.ip.portrange.first"), _sysctl_int(libc, "net.inet.ip.portrange.last")
    except (OSError, AttributeError):
        return None
    if low is None or high is None or not 0 < low <= high <= 65535:
        return None
    return range(low, high + 1)


def ephemeral_ports() -> range:
    """This machine's ephemeral port range (see the module's guarantees)."""
    found = _linux() if sys.platform.startswith("linux") else _bsd()
    return found if found is not None and len(found) > 0 else IANA
