"""Where a node's servers listen: each node on its own loopback address, or all on 127.0.0.1.

A simulated node's InternalIP is 127.0.1.N (`control.kubelet.node.internal_ip`), so every kubelet
can take the kubelet's usual port 10250 as real nodes do. Linux answers on all of 127.0.0.0/8;
macOS has only 127.0.0.1 on its loopback (a bind to 127.0.1.N fails with "Can't assign requested
address") unless an alias is added. There every node shares 127.0.0.1, each with ports of its own.

Guarantees:
- `setting(env)` reads `KK_NODE_ADDRESSES`: `auto` (default: own addresses where this machine can
  bind them), `own` (127.0.1.N, each kubelet still falls back to a free port, then to 127.0.0.1,
  when a bind fails) or `loopback` (every node on 127.0.0.1, each kubelet on a port the kernel
  hands out, where the hub's node-address gate allows it); anything else is a ValueError at start.
- `decide(wanted, nodes)` turns `auto` into `own` only when every node's address can be bound
  here (checked by binding it, port 0, and closing at once), else `loopback`; `own` and
  `loopback` are kept as asked.
- `listen_plan(mode, address, port)` lists the (address, port) a kubelet tries, in order.
Nothing else reaches a node by these rules: the hub, kube-proxy, exec, logs, port-forward and the
dashboard follow the address and port the Node reports (`status.addresses` InternalIP,
`status.daemonEndpoints.kubeletEndpoint.Port`, the kube-proxy port annotation).
"""

from __future__ import annotations

import socket
from typing import Callable, Iterable, Mapping

from control import config

AUTO, OWN, LOOPBACK = "auto", "own", "loopback"
MODES = (AUTO, OWN, LOOPBACK)
SHARED = "127.0.0.1"


def setting(env: Mapping[str, str] | None = None) -> str:
    """The `KK_NODE_ADDRESSES` setting, checked (default `auto`)."""
    value = config.text("KK_NODE_ADDRESSES", env).lower()
    if value not in MODES:
        raise ValueError(f"KK_NODE_ADDRESSES must be one of {', '.join(MODES)}, got {value!r}")
    return value


def can_bind(address: str) -> bool:
    """This machine can listen on `address` (a free port of it, released at once)."""
    try:
        with socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind((address, 0))
    except OSError:
        return False
    return True


def decide(wanted: str, addresses: Iterable[str], *, bindable: Callable[[str], bool] | None = None) -> str:
    """`own` or `loopback` for a cluster whose nodes have `addresses` (see the module's guarantees)."""
    if wanted not in MODES:
        raise ValueError(f"the node addresses must be one of {', '.join(MODES)}, got {wanted!r}")
    if wanted != AUTO:
        return wanted
    check = bindable or can_bind
    return OWN if all(check(address) for address in addresses) else LOOPBACK


def listen_plan(mode: str, address: str, port: int) -> list[tuple[str, int]]:
    """Where a kubelet whose own address is `address` tries to listen, in order: in `loopback`
    mode a free port of 127.0.0.1 only; else its own address at `port` (stable across restarts),
    a free port of it (another cluster holds `port`), then a free port of 127.0.0.1."""
    if mode == LOOPBACK:
        return [(SHARED, 0)]
    return [(address, port), (address, 0), (SHARED, 0)]
