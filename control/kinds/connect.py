"""What a kind says about its connect subresources (log, exec, attach, portforward): where on a
node a request for one of its objects goes, as kube-apiserver's `LogLocation`, `ExecLocation`,
`AttachLocation` and `PortForwardLocation` (pkg/registry/core/pod/strategy.go).

Guarantees: pure data and pure functions. A `Connect` names the kind that hosts its objects (the
store key of Nodes), reads which host an object names (`host`), and for each subresource maps the
object, the host object (None when it does not exist) and the request's query to a `Location` or
raises a `control.errors.ApiError` (400 with Kubernetes' messages, 503 for a host publishing no
endpoint). The address and port in a `Location` are what the host object says, unchecked: the
hub's HTTP face decides whether it may contact them (`control.api.node_address`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

Obj = dict[str, Any]
Query = dict[str, list[str]]  # a request's query, every parameter with all its values


@dataclass(frozen=True)
class Location:
    """Where a connect request goes: the host's name, its endpoint as the host object publishes
    it (unchecked), and the path on that endpoint (query included)."""

    node: str
    address: Any
    port: Any
    path: str


Locator = Callable[[Obj, "Obj | None", Query], Location]


@dataclass(frozen=True)
class Connect:
    """A kind's connect subresources: `locations` maps each subresource ("log", "exec", ...) to
    its locator; `host(obj)` is the name of the object's host ("" when it has none yet) and
    `host_resource` the store key of the hosts' kind."""

    host_resource: str
    host: Callable[[Obj], str]
    locations: dict[str, Locator] = field(default_factory=dict)

    def location(self, subresource: str, obj: Obj, host: Obj | None, query: Query) -> Location:
        return self.locations[subresource](obj, host, query)
