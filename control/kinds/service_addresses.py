"""A Service's addresses: cluster IPs from the service range (`network.service_cidr()`), node ports from NODE_PORT_RANGE (the
Service kind's allocator, `SERVICE_ADDRESSES`).

Guarantees:
- Decided from what the stored Services hold, read through `stored_bodies()` which the hub calls
  inside the Service's write transaction with writes held: two Services never share a cluster IP
  or a node port, also with several hub processes on one PostgreSQL, and a deleted Service's
  addresses are free again at once (nothing is kept beside the stored objects).
- ClusterIP, NodePort and LoadBalancer Services get `spec.clusterIP`/`clusterIPs` (random free
  address; the network address, the broadcast address and the first address — the `kubernetes`
  Service's in real clusters — are never handed out), `ipFamilies: [IPv4]` and
  `ipFamilyPolicy: SingleStack`; `clusterIP: None` is headless; ExternalName gets no address.
- NodePort Services (and LoadBalancer ones unless `allocateLoadBalancerNodePorts: false`) get a
  free `nodePort` per port; a LoadBalancer with `externalTrafficPolicy: Local` a
  `healthCheckNodePort`. A requested address or port is honoured when free and in range, else a
  cause with Kubernetes' words ("provided IP is already allocated", "provided port is already
  allocated"); a full range raises `RangeFull`.
- On update, what was allocated is carried over when the client leaves it out (a `kubectl
  replace` of the original manifest), and dropped when the new type no longer uses it
  (NodePort → ClusterIP drops the node ports, → ExternalName the cluster IP), as the real
  registry does; changing an allocated clusterIP is refused by the Service's update validation.
"""

from __future__ import annotations

import ipaddress
import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from control.errors import go_value
from control.kinds.base import Cause, Obj, cause
from control.kinds.network import NODE_PORT_RANGE, Network, service_cidr
from control.kinds.strategy import Allocator, RangeFull

rng = random.Random()  # tests seed or replace it

def reserved_ips(cidr: Network) -> frozenset[str]:
    """Never handed out: the network address, the broadcast address and the first host (the
    `kubernetes` Service's address in a real cluster; asked for explicitly it is "already allocated")."""
    return frozenset(str(ip) for ip in (cidr.network_address, cidr.broadcast_address, cidr.network_address + 1))


def needs_cluster_ip(spec: dict[str, Any]) -> bool:
    return spec.get("type", "ClusterIP") != "ExternalName" and spec.get("clusterIP") != "None"


def needs_node_ports(spec: dict[str, Any]) -> bool:
    kind = spec.get("type", "ClusterIP")
    return kind == "NodePort" or (kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts", True) is not False)


def needs_health_check_port(spec: dict[str, Any]) -> bool:
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def _ports(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in spec.get("ports") or [] if isinstance(p, dict)]


def _node_ports(spec: dict[str, Any]) -> list[Any]:
    return [p.get("nodePort") for p in _ports(spec)]


# --- updates: what carries over, what goes ---------------------------------------------------

def carry_over(new: Obj, old: Obj) -> None:
    """Before validation of an update: keep what the hub allocated when the client left it out,
    drop what the new type no longer uses (the registry's patchAllocatedValues and
    dropTypeDependentFields)."""
    spec, old_spec = new.get("spec"), old.get("spec") or {}
    if not isinstance(spec, dict):
        return
    if spec.get("clusterIP") != old_spec.get("clusterIP") and spec.get("clusterIPs") == old_spec.get("clusterIPs"):
        spec.pop("clusterIPs", None)  # only clusterIP was edited: clusterIPs follows it (or is carried over below)
    if needs_cluster_ip(old_spec) and needs_cluster_ip(spec):
        if not spec.get("clusterIP") and old_spec.get("clusterIP"):
            spec["clusterIP"] = old_spec["clusterIP"]
        if not spec.get("clusterIPs") and spec.get("clusterIP") == old_spec.get("clusterIP") and old_spec.get("clusterIPs"):
            spec["clusterIPs"] = list(old_spec["clusterIPs"])
    if needs_node_ports(old_spec) and needs_node_ports(spec):
        old_by_port = {(p.get("port"), p.get("protocol", "TCP")): p.get("nodePort") for p in _ports(old_spec)}
        for port in _ports(spec):
            if not port.get("nodePort") and old_by_port.get((port.get("port"), port.get("protocol", "TCP"))):
                port["nodePort"] = old_by_port[(port.get("port"), port.get("protocol", "TCP"))]
    if needs_health_check_port(old_spec) and needs_health_check_port(spec) and not spec.get("healthCheckNodePort"):
        if old_spec.get("healthCheckNodePort"):
            spec["healthCheckNodePort"] = old_spec["healthCheckNodePort"]
    _drop_type_dependent(spec, old_spec)


def _drop_type_dependent(spec: dict[str, Any], old_spec: dict[str, Any]) -> None:
    if spec.get("type") == "ExternalName" and old_spec.get("type") != "ExternalName":
        for key in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            if spec.get(key) == old_spec.get(key):
                spec.pop(key, None)
    if not needs_node_ports(spec) and needs_node_ports(old_spec) and _node_ports(spec) == _node_ports(old_spec):
        for port in _ports(spec):
            port.pop("nodePort", None)
    if not needs_health_check_port(spec) and spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort"):
        spec.pop("healthCheckNodePort", None)
    if spec.get("type") not in ("NodePort", "LoadBalancer") and spec.get("externalTrafficPolicy") == old_spec.get("externalTrafficPolicy"):
        spec.pop("externalTrafficPolicy", None)
    if spec.get("type") != "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") == old_spec.get("allocateLoadBalancerNodePorts"):
        spec.pop("allocateLoadBalancerNodePorts", None)


# --- what is taken ---------------------------------------------------------------------------

@dataclass
class Taken:
    """Addresses and ports the stored Services hold (the one being written included: its own
    values count as its own where it matters, see `_cluster_ip` and `_node_port_causes`)."""

    ips: set[str] = field(default_factory=set)  # canonical text: validation accepts nothing else
    ports: set[int] = field(default_factory=set)


# The stored JSON is compact (`store._dumps`), so these fields appear as exactly this text; escaped
# copies (the last-applied annotation) and managedFields' "f:clusterIP" do not match. Reading the
# fields from the text instead of parsing every body keeps a create cheap with thousands of
# Services (2,000: ~17 ms instead of ~100 ms); a stray match (an annotation named "clusterIP")
# could only reserve an address too many, never hand one out twice.
QUOTED = re.compile(r'"([^"]*)"')
ALLOCATED_FIELD = re.compile(r'"(clusterIPs?|nodePort|healthCheckNodePort)":(\[[^\]]*\]|"[^"]*"|\d+)')


def taken_in(bodies: list[str]) -> Taken:
    """Read from the stored JSON of every Service."""
    taken = Taken()
    for body in bodies:
        for name, value in ALLOCATED_FIELD.findall(body):
            if name in ("nodePort", "healthCheckNodePort"):
                taken.ports.add(int(value))
            else:
                taken.ips.update(QUOTED.findall(value))
    taken.ips -= {"None", ""}
    return taken


# --- allocation ------------------------------------------------------------------------------

def _invalid_ip(ip: str, why: str) -> Cause:
    return cause("spec.clusterIPs", f'Invalid value: []string{{"{ip}"}}: failed to allocate IP {ip}: {why}')


def _pick_ip(taken: Taken) -> str:
    cidr = service_cidr()
    size, reserved = cidr.num_addresses, reserved_ips(cidr)
    start = rng.randrange(size)
    for step in range(size):
        candidate = str(cidr.network_address + (start + step) % size)
        if candidate not in reserved and candidate not in taken.ips:
            taken.ips.add(candidate)
            return candidate
    raise RangeFull("failed to allocate a serviceIP: range is full")


def _pick_port(taken: Taken) -> int:
    size = len(NODE_PORT_RANGE)
    start = rng.randrange(size)
    for step in range(size):
        candidate = NODE_PORT_RANGE[(start + step) % size]
        if candidate not in taken.ports:
            taken.ports.add(candidate)
            return candidate
    raise RangeFull("failed to allocate a nodePort: range is full")


def _cluster_ip(spec: dict[str, Any], old_spec: dict[str, Any], taken: Taken, causes: list[Cause]) -> None:
    if spec.get("clusterIP") == "None":
        spec["clusterIPs"] = ["None"]
        return
    requested = spec.get("clusterIP") or (spec.get("clusterIPs") or [None])[0]
    if requested and requested == old_spec.get("clusterIP"):
        pass  # its own address, allocated before
    elif requested:
        address = ipaddress.ip_address(requested)  # kinds.core validated the text
        cidr = service_cidr()
        if address not in cidr:
            causes.append(_invalid_ip(requested, f"the provided IP ({requested}) is not in the valid range. "
                                                 f"The range of valid IPs is {cidr}"))
            return
        if requested in taken.ips or requested in reserved_ips(cidr):
            causes.append(_invalid_ip(requested, "provided IP is already allocated"))
            return
    else:
        requested = _pick_ip(taken)
    spec["clusterIP"] = requested
    spec["clusterIPs"] = [requested]


def _node_port_causes(spec: dict[str, Any], old_spec: dict[str, Any], taken: Taken) -> list[Cause]:
    owned = {p for p in [*_node_ports(old_spec), old_spec.get("healthCheckNodePort")] if isinstance(p, int)}
    out = []
    for i, port in enumerate(_ports(spec)):
        number = port.get("nodePort")
        if not number:
            continue
        if number not in NODE_PORT_RANGE:
            out.append(cause(f"spec.ports[{i}].nodePort", f"Invalid value: {go_value(number)}: provided port is not in the valid "
                             f"range. The range of valid ports is {NODE_PORT_RANGE.start}-{NODE_PORT_RANGE.stop - 1}"))
        elif number in taken.ports and number not in owned:
            out.append(cause(f"spec.ports[{i}].nodePort", f"Invalid value: {go_value(number)}: provided port is already allocated"))
    return out


def _nothing_to_choose(spec: dict[str, Any], old_spec: dict[str, Any]) -> bool:
    """Every address and port the spec needs is there and was the Service's own before."""
    return (spec.get("clusterIP") == old_spec.get("clusterIP") and spec.get("clusterIPs") == old_spec.get("clusterIPs")
            and (spec.get("clusterIP") is not None or not needs_cluster_ip(spec))
            and set(_node_ports(spec)) <= set(_node_ports(old_spec))
            and (not needs_node_ports(spec) or all(_node_ports(spec)))
            and spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort")
            and (not needs_health_check_port(spec) or bool(spec.get("healthCheckNodePort"))))


def allocate(svc: Obj, old: Obj | None, stored_bodies: Callable[[], list[str]]) -> list[Cause]:
    """After validation, inside the write transaction: fill in the addresses and ports the
    Service's type needs; causes (422) when a requested one cannot be had."""
    spec = svc.get("spec")
    if not isinstance(spec, dict) or spec.get("type") == "ExternalName":
        return []
    old_spec = (old or {}).get("spec") or {}
    spec.setdefault("ipFamilies", ["IPv4"])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    if old is not None and _nothing_to_choose(spec, old_spec):
        return []  # an ordinary update (labels, selector, ports' targetPort) pays no scan
    taken = taken_in(stored_bodies())
    causes: list[Cause] = []
    _cluster_ip(spec, old_spec, taken, causes)
    if needs_node_ports(spec):
        causes += _node_port_causes(spec, old_spec, taken)
        taken.ports.update(n for n in _node_ports(spec) if isinstance(n, int))
        for port in _ports(spec):
            if not port.get("nodePort"):
                port["nodePort"] = _pick_port(taken)
    if needs_health_check_port(spec):
        number = spec.get("healthCheckNodePort")
        if number and number in taken.ports and number != old_spec.get("healthCheckNodePort"):
            causes.append(cause("spec.healthCheckNodePort", f"Invalid value: {go_value(number)}: provided port is already allocated"))
        elif not number:
            spec["healthCheckNodePort"] = _pick_port(taken)
    return causes


SERVICE_ADDRESSES = Allocator(scans="/services", carry_over=carry_over, allocate=allocate)
