"""Whether NetworkPolicies let one connection through, decided as a CNI enforces them
(kubernetes.io's "Network Policies" page, the upstream netpol e2e truth tables): pure values in,
a `Verdict` out.

Guarantees:
- A pod is isolated for ingress (egress) when at least one policy of its namespace selects it and
  lists Ingress (Egress) in its policyTypes (defaulted as the API does: Ingress, plus Egress when
  there are egress rules). A pod no policy isolates in a direction is open in that direction.
- Allows are additive: an isolated pod's connection is allowed in a direction when any rule of
  any policy isolating it in that direction matches. A connection is allowed iff egress is allowed
  at the source AND ingress at the destination; the verdict names the direction that dropped it
  (egress first, as the packet leaves the source before it reaches the destination).
- A rule matches when one of its peers matches (no peers: everyone) and one of its ports matches
  (no ports: every port). Peers: podSelector alone selects pods of the policy's namespace;
  namespaceSelector alone every pod of the selected namespaces; both, the selected pods of the
  selected namespaces (AND); ipBlock matches an address in cidr and in none of except, pod
  addresses too. A source or destination that is no pod (the host, a node, anything outside) is
  matched by ipBlock peers only, and is never isolated itself.
- Ports: the protocol (default TCP) must be the connection's; a number matches that port, or the
  range port..endPort; a name is resolved against the DESTINATION pod's container ports (name and
  protocol), for ingress and egress alike, and matches nothing when the destination is no pod.
- A drop's verdict names the policies isolating the pod in the dropping direction; an allow names
  the policies that allowed it (both directions, in order, each once; none when nothing isolates).
- `PolicyIndex` compiles each policy once (selectors, networks, ports) and keeps them by namespace:
  a decision reads the policies of two namespaces only, never every policy.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from control.kinds.selectors import LabelSelector, SelectorError, label_selector_from_object

Obj = dict[str, Any]
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Labels = Mapping[str, str]
# namespace name -> its labels (None: the namespace is unknown, matched by no namespaceSelector)
NamespaceLabels = Callable[[str], "Labels | None"]


@dataclass(frozen=True)
class Peer:
    """One end of a connection: a pod (namespace and name set) or only an address."""

    ip: str
    namespace: str = ""
    name: str = ""
    labels: Labels = field(default_factory=dict)
    # container ports: (name, number, protocol)
    ports: tuple[tuple[str, int, str], ...] = ()

    @property
    def is_pod(self) -> bool:
        return bool(self.name)

    @property
    def shown(self) -> str:
        return f"{self.namespace}/{self.name}" if self.is_pod else self.ip

    def named_port(self, name: str, protocol: str) -> int | None:
        return next((number for n, number, p in self.ports if n == name and p == protocol), None)


def pod_peer(pod: Obj) -> Peer:
    """A pod object as a connection's end."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    ports = []
    for container in spec.get("containers") or []:
        for port in (container or {}).get("ports") or []:
            if isinstance(port, dict) and isinstance(port.get("containerPort"), int):
                ports.append((str(port.get("name") or ""), port["containerPort"], str(port.get("protocol") or "TCP")))
    return Peer(str((pod.get("status") or {}).get("podIP") or ""), str(meta.get("namespace") or ""),
                str(meta.get("name") or ""), dict(meta.get("labels") or {}), tuple(ports))


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    direction: str = ""  # "egress" or "ingress" for a drop
    policies: tuple[str, ...] = ()  # a drop: the isolating policies; an allow: the allowing ones

    @property
    def isolated(self) -> bool:
        return bool(self.policies)


def _selector(obj: Any) -> LabelSelector:
    try:
        return label_selector_from_object(obj if isinstance(obj, dict) else {})
    except SelectorError:
        return LabelSelector.nothing()  # a selector the API let through but we cannot read selects nothing


def _network(text: Any) -> Network | None:
    try:
        return ipaddress.ip_network(str(text), strict=False)
    except ValueError:
        return None


@dataclass(frozen=True)
class _PeerRule:
    pods: LabelSelector | None
    namespaces: LabelSelector | None
    block: Network | None
    excepted: tuple[Network, ...]
    is_block: bool

    def matches(self, peer: Peer, own_namespace: str, namespace_labels: NamespaceLabels) -> bool:
        if self.is_block:
            if self.block is None:
                return False
            try:
                address = ipaddress.ip_address(peer.ip)
            except ValueError:
                return False
            return address in self.block and not any(address in e for e in self.excepted)
        if not peer.is_pod:
            return False
        if self.namespaces is None:
            if peer.namespace != own_namespace:
                return False
        else:
            labels = namespace_labels(peer.namespace)
            if labels is None or not self.namespaces.matches(dict(labels)):
                return False
        return self.pods is None or self.pods.matches(dict(peer.labels))


@dataclass(frozen=True)
class _PortRule:
    protocol: str
    port: int | str | None
    end: int | None

    def matches(self, port: int, protocol: str, destination: Peer) -> bool:
        if protocol != self.protocol:
            return False
        if self.port is None:
            return True
        if isinstance(self.port, str):
            return destination.is_pod and destination.named_port(self.port, protocol) == port
        return self.port <= port <= (self.end if self.end is not None else self.port)


@dataclass(frozen=True)
class _Rule:
    peers: tuple[_PeerRule, ...] | None  # None: every peer
    ports: tuple[_PortRule, ...] | None  # None: every port


def _peer_rule(peer: Obj) -> _PeerRule:
    block = peer.get("ipBlock")
    if isinstance(block, dict):
        excepted = tuple(n for n in (_network(e) for e in block.get("except") or []) if n is not None)
        return _PeerRule(None, None, _network(block.get("cidr")), excepted, True)
    pods = _selector(peer["podSelector"]) if peer.get("podSelector") is not None else None
    namespaces = _selector(peer["namespaceSelector"]) if peer.get("namespaceSelector") is not None else None
    return _PeerRule(pods, namespaces, None, (), False)


def _port_rule(port: Obj) -> _PortRule:
    number = port.get("port")
    end = port.get("endPort") if isinstance(port.get("endPort"), int) else None
    value = number if isinstance(number, (int, str)) and not isinstance(number, bool) else None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    return _PortRule(str(port.get("protocol") or "TCP"), value, end)


def _rules(rules: Any, peers_key: str) -> tuple[_Rule, ...]:
    out = []
    for rule in rules if isinstance(rules, list) else []:
        rule = rule if isinstance(rule, dict) else {}
        peers, ports = rule.get(peers_key) or [], rule.get("ports") or []
        out.append(_Rule(tuple(_peer_rule(p) for p in peers if isinstance(p, dict)) if peers else None,
                         tuple(_port_rule(p) for p in ports if isinstance(p, dict)) if ports else None))
    return tuple(out)


@dataclass(frozen=True)
class CompiledPolicy:
    key: str  # "namespace/name"
    namespace: str
    selector: LabelSelector
    ingress_types: bool
    egress_types: bool
    ingress: tuple[_Rule, ...]
    egress: tuple[_Rule, ...]


def compile_policy(policy: Obj) -> CompiledPolicy:
    meta, spec = policy.get("metadata") or {}, policy.get("spec") or {}
    types = spec.get("policyTypes") or (["Ingress", "Egress"] if spec.get("egress") else ["Ingress"])
    namespace = str(meta.get("namespace") or "")
    return CompiledPolicy(f"{namespace}/{meta.get('name', '')}", namespace, _selector(spec.get("podSelector") or {}),
                          "Ingress" in types, "Egress" in types, _rules(spec.get("ingress"), "from"),
                          _rules(spec.get("egress"), "to"))


class PolicyIndex:
    """Compiled policies by namespace. `put`/`remove` change one policy; readers see whole tuples."""

    def __init__(self, policies: Iterable[Obj] = ()):
        self._by_namespace: dict[str, tuple[CompiledPolicy, ...]] = {}
        for policy in policies:
            self.put(policy)

    def put(self, policy: Obj) -> None:
        compiled = compile_policy(policy)
        kept = tuple(p for p in self._by_namespace.get(compiled.namespace, ()) if p.key != compiled.key)
        self._by_namespace[compiled.namespace] = tuple(sorted((*kept, compiled), key=lambda p: p.key))

    def remove(self, policy: Obj) -> None:
        meta = policy.get("metadata") or {}
        namespace, key = str(meta.get("namespace") or ""), f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        kept = tuple(p for p in self._by_namespace.get(namespace, ()) if p.key != key)
        if kept:
            self._by_namespace[namespace] = kept
        else:
            self._by_namespace.pop(namespace, None)

    def in_namespace(self, namespace: str) -> tuple[CompiledPolicy, ...]:
        return self._by_namespace.get(namespace, ())

    def __len__(self) -> int:
        return sum(len(p) for p in self._by_namespace.values())


def _direction(policies: tuple[CompiledPolicy, ...], pod: Peer, egress: bool, other: Peer, destination: Peer,
               port: int, protocol: str, namespace_labels: NamespaceLabels) -> tuple[bool, tuple[str, ...]]:
    """(allowed, policies): the isolating policies when dropped, the allowing ones when allowed."""
    labels = dict(pod.labels)
    isolating = [p for p in policies if (p.egress_types if egress else p.ingress_types) and p.selector.matches(labels)]
    if not isolating:
        return True, ()
    allowing = []
    for policy in isolating:
        for rule in policy.egress if egress else policy.ingress:
            if rule.peers is not None and not any(peer.matches(other, policy.namespace, namespace_labels)
                                                  for peer in rule.peers):
                continue
            if rule.ports is not None and not any(p.matches(port, protocol, destination) for p in rule.ports):
                continue
            allowing.append(policy.key)
            break
    if allowing:
        return True, tuple(allowing)
    return False, tuple(p.key for p in isolating)


def decide(index: PolicyIndex, source: Peer, destination: Peer, port: int, protocol: str = "TCP", *,
           namespace_labels: NamespaceLabels) -> Verdict:
    """The verdict on one connection from `source` to `destination`:`port`/`protocol`."""
    allowed_by: list[str] = []
    if source.is_pod:
        ok, names = _direction(index.in_namespace(source.namespace), source, True, destination, destination, port,
                               protocol, namespace_labels)
        if not ok:
            return Verdict(False, "egress", names)
        allowed_by += names
    if destination.is_pod:
        ok, names = _direction(index.in_namespace(destination.namespace), destination, False, source, destination,
                               port, protocol, namespace_labels)
        if not ok:
            return Verdict(False, "ingress", names)
        allowed_by += [n for n in names if n not in allowed_by]
    return Verdict(True, "", tuple(allowed_by))
