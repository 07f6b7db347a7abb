"""The pods behind an Ingress backend, from its Service and EndpointSlices, as ingress-nginx reads
them (it sends to pod endpoints, not to the ClusterIP), and the round-robin choice among them.

Guarantees (pure):
- `endpoints_for(service, slices, port)` resolves the backend's port (a number: the Service port
  with that `port`; a name: the Service port with that `name`) and lists the READY endpoints of
  the slices (`conditions.ready` true or unset; never a terminating one) on the slice port of the
  same name, one per address, without duplicates, in a stable order. An unknown Service, a port
  the Service lacks or an ExternalName Service gives no endpoints; `why_none` says why.
- `RoundRobin.choose(key, endpoints)` cycles through the list it is given, per key.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any, Sequence

Obj = dict[str, Any]


@dataclass(frozen=True)
class PodEndpoint:
    ip: str
    port: int
    pod: str
    node: str


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def service_port(service: Obj | None, port: int | str) -> Obj | None:
    if service is None:
        return None
    for item in _dict(service.get("spec")).get("ports") or []:
        item = _dict(item)
        if (isinstance(port, int) and item.get("port") == port) or (isinstance(port, str) and item.get("name") == port):
            return item
    return None


def why_none(service: Obj | None, port: int | str) -> str:
    if service is None:
        return "no such Service"
    if _dict(service.get("spec")).get("type") == "ExternalName":
        return "an ExternalName Service has no endpoints"
    if service_port(service, port) is None:
        return f"the Service has no port {port}"
    return "no ready endpoints"


def _order(endpoint: PodEndpoint) -> tuple:
    try:
        return 0, int(ipaddress.ip_address(endpoint.ip)), endpoint.port
    except ValueError:
        return 1, endpoint.ip, endpoint.port


def endpoints_for(service: Obj | None, slices: Sequence[Obj], port: int | str) -> list[PodEndpoint]:
    wanted = service_port(service, port)
    if wanted is None or _dict(_dict(service).get("spec")).get("type") == "ExternalName":
        return []
    name = wanted.get("name") or ""
    found: dict[tuple[str, int], PodEndpoint] = {}
    for slice_ in slices:
        if slice_.get("addressType") not in ("IPv4", "IPv6"):
            continue
        numbers = [p.get("port") for p in slice_.get("ports") or [] if _dict(p).get("name", "") == name
                   and isinstance(p.get("port"), int)]
        if not numbers:
            continue
        for endpoint in slice_.get("endpoints") or []:
            endpoint = _dict(endpoint)
            conditions = _dict(endpoint.get("conditions"))
            if conditions.get("ready") is False or conditions.get("terminating") is True:
                continue
            addresses = endpoint.get("addresses") or []
            if not addresses:
                continue
            pod = str(_dict(endpoint.get("targetRef")).get("name") or "")
            found.setdefault((str(addresses[0]), numbers[0]),
                             PodEndpoint(str(addresses[0]), numbers[0], pod, str(endpoint.get("nodeName") or "")))
    return sorted(found.values(), key=_order)


class RoundRobin:
    def __init__(self) -> None:
        self._next: dict[str, int] = {}

    def choose(self, key: str, endpoints: Sequence[PodEndpoint]) -> PodEndpoint | None:
        if not endpoints:
            return None
        at = self._next.get(key, 0) % len(endpoints)
        self._next[key] = at + 1
        return endpoints[at]
