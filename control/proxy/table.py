"""kube-proxy's forwarding table as values: Services + EndpointSlices -> rules, shown as iptables
lines, and the choice of one endpoint per request.

Guarantees:
- `service_rule(service, slices)` is pure: a rule lists the Service's ports and only the READY
  endpoints of its EndpointSlices (`conditions.ready` true or unset, as kube-proxy reads it;
  never a not-ready or terminating one), the first address of each, once per slice port (matched
  to the service port by name), without duplicates across slices; and the highest
  resourceVersion among the slices it was built from (`endpoints_rv`, "" with none: the version
  of kube-proxy's view, which only moves forward). Slices of the FQDN type carry no IPs and are
  skipped. ExternalName Services get a rule with no endpoints and no iptables lines (kube-proxy
  leaves them to DNS).
- A `Table` is immutable: `with_rule` returns a new table with the version bumped when the rule
  changed, or the same table when nothing did. A reader holding a table sees one consistent
  state however many updates follow.
- `iptables_lines` renders rules as `iptables-save` would show kube-proxy's iptables mode:
  KUBE-SERVICES (cluster and external IPs; REJECT in the filter table when there is no
  endpoint), KUBE-NODEPORTS, KUBE-SVC-<hash> (`-m statistic --mode random --probability p` for
  random, `--mode nth --every n --packet 0` for round robin) and KUBE-SEP-<hash> (DNAT
  `--to-destination ip:port`). Chain hashes are kube-proxy's: base32(sha256(name+protocol))[:16].
- `Balancer.choose` picks only from the endpoints it is given: round robin (per service port,
  in table order) or uniformly at random.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import random
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Mapping, Sequence

Obj = dict[str, Any]
BALANCE_MODES = ("round-robin", "random")


@dataclass(frozen=True)
class Endpoint:
    ip: str
    port: int
    pod: str
    node: str
    port_name: str = ""

    @property
    def address(self) -> str:
        return f"{self.ip}:{self.port}"

    def to_dict(self) -> Obj:
        return {"ip": self.ip, "port": self.port, "pod": self.pod, "node": self.node}


@dataclass(frozen=True)
class ServicePort:
    name: str
    port: int
    protocol: str
    node_port: int | None
    target_port: Any

    def to_dict(self) -> Obj:
        return {"name": self.name, "port": self.port, "protocol": self.protocol, "nodePort": self.node_port,
                "targetPort": self.target_port}


@dataclass(frozen=True)
class ServiceRule:
    key: str  # "namespace/name"
    type: str
    cluster_ip: str  # "" (ExternalName), "None" (headless) or an address
    external_ips: tuple[str, ...]
    ports: tuple[ServicePort, ...]
    endpoints: tuple[Endpoint, ...]  # ready addresses only
    endpoints_rv: str

    @property
    def namespace(self) -> str:
        return self.key.split("/", 1)[0]

    @property
    def has_virtual_ip(self) -> bool:
        return self.cluster_ip not in ("", "None")

    def port(self, number: int | None) -> ServicePort | None:
        """The service port `number` (the first port when None)."""
        if number is None:
            return self.ports[0] if self.ports else None
        return next((p for p in self.ports if p.port == number), None)

    def endpoints_for(self, port: ServicePort) -> tuple[Endpoint, ...]:
        if len(self.ports) == 1:
            return self.endpoints
        return tuple(e for e in self.endpoints if e.port_name == port.name)

    def to_dict(self) -> Obj:
        return {"service": self.key, "type": self.type, "clusterIP": self.cluster_ip,
                "externalIPs": list(self.external_ips), "ports": [p.to_dict() for p in self.ports],
                "endpoints": [e.to_dict() for e in self.endpoints], "endpointsResourceVersion": self.endpoints_rv}

    @cached_property
    def lines(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(nat lines, filter lines) of this rule, rendered once per rule."""
        return render_rule(self, round_robin=False), render_rule(self, round_robin=True)


def _ports(spec: Obj) -> tuple[ServicePort, ...]:
    out = []
    for p in spec.get("ports") or []:
        if not isinstance(p, dict) or not isinstance(p.get("port"), int):
            continue
        out.append(ServicePort(str(p.get("name") or ""), p["port"], str(p.get("protocol") or "TCP"),
                               p.get("nodePort") if isinstance(p.get("nodePort"), int) else None,
                               p.get("targetPort", p["port"])))
    return tuple(out)


def _ready_endpoints(slices: Sequence[Obj]) -> tuple[Endpoint, ...]:
    out: dict[tuple[str, int, str], Endpoint] = {}
    for slice_ in slices:
        if slice_.get("addressType") not in ("IPv4", "IPv6"):
            continue
        for endpoint in slice_.get("endpoints") or []:
            addresses = endpoint.get("addresses") or []
            if not addresses or (endpoint.get("conditions") or {}).get("ready") is False:
                continue
            pod = (endpoint.get("targetRef") or {}).get("name") or ""
            for port in slice_.get("ports") or []:
                if isinstance(port.get("port"), int):
                    name = str(port.get("name") or "")
                    out.setdefault((addresses[0], port["port"], name),
                                   Endpoint(addresses[0], port["port"], pod, endpoint.get("nodeName") or "", name))
    return tuple(out[key] for key in sorted(out, key=lambda k: (_ip_order(k[0]), k[1], k[2])))


def _ip_order(ip: str) -> tuple[int, int, Any]:
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return (1, 0, ip)
    return (0, address.version, int(address))


def _newest_version(slices: Sequence[Obj]) -> str:
    versions = [str((s.get("metadata") or {}).get("resourceVersion") or "") for s in slices]
    return max((v for v in versions if v), key=lambda v: (len(v), v), default="")


def service_rule(service: Obj, slices: Sequence[Obj]) -> ServiceRule:
    meta, spec = service.get("metadata") or {}, service.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    ingress = [i.get("ip") for i in ((service.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
               if isinstance(i, dict) and i.get("ip")]
    external = tuple(dict.fromkeys([*(spec.get("externalIPs") or []), *ingress]))
    cluster_ip = "" if kind == "ExternalName" else str(spec.get("clusterIP") or "")
    ready = () if kind == "ExternalName" else _ready_endpoints(slices)
    rv = _newest_version(slices)
    return ServiceRule(f"{meta.get('namespace')}/{meta.get('name')}", kind, cluster_ip, external, _ports(spec),
                       ready, rv)


@dataclass(frozen=True)
class Table:
    """Every service's rule, by "namespace/name", and the virtual IPs that lead to them."""

    version: int = 0
    rules: Mapping[str, ServiceRule] = field(default_factory=dict)
    by_ip: Mapping[str, str] = field(default_factory=dict)

    def with_rule(self, key: str, rule: ServiceRule | None) -> "Table":
        if self.rules.get(key) == rule:
            return self
        rules = dict(self.rules)
        if rule is None:
            rules.pop(key, None)
        else:
            rules[key] = rule
        by_ip = {ip: k for k, r in rules.items() for ip in ((r.cluster_ip,) if r.has_virtual_ip else ()) + r.external_ips}
        return replace(self, version=self.version + 1, rules=rules, by_ip=by_ip)

    def rule_for_ip(self, ip: str) -> ServiceRule | None:
        key = self.by_ip.get(ip)
        return self.rules.get(key) if key else None

    def to_dict(self, *, node: str, balance: str, service: str | None = None) -> Obj:
        keys = [service] if service else sorted(self.rules)
        rules = [self.rules[k] for k in keys if k in self.rules]
        return {"node": node, "balance": balance, "version": self.version,
                "services": [r.to_dict() for r in rules],
                "iptables": iptables_lines(rules, round_robin=balance == "round-robin")}


# --- iptables rendering ---------------------------------------------------------------------------

def chain_hash(*parts: str) -> str:
    digest = hashlib.sha256("".join(parts).encode()).digest()
    return base64.b32encode(digest).decode()[:16]


def _port_name(rule: ServiceRule, port: ServicePort) -> str:
    return f"{rule.key}:{port.name}" if port.name else rule.key


def render_rule(rule: ServiceRule, *, round_robin: bool) -> tuple[str, ...]:
    """This rule's lines; the filter table's REJECT lines are prefixed "filter:"."""
    if not rule.has_virtual_ip and not rule.external_ips and not any(p.node_port for p in rule.ports):
        return ()
    lines: list[str] = []
    for port in rule.ports:
        name, proto = _port_name(rule, port), port.protocol.lower()
        svc_chain = f"KUBE-SVC-{chain_hash(name, port.protocol)}"
        targets = [rule.cluster_ip] if rule.has_virtual_ip else []
        endpoints = rule.endpoints_for(port)
        for ip in targets + list(rule.external_ips):
            match = f"-d {ip}/32 -p {proto} -m {proto} --dport {port.port}"
            if endpoints:
                lines.append(f"-A KUBE-SERVICES {match} -j {svc_chain}")
            else:
                lines.append(f"filter:-A KUBE-SERVICES {match} -j REJECT --reject-with icmp-port-unreachable")
        if port.node_port and endpoints:
            lines.append(f"-A KUBE-NODEPORTS -p {proto} -m {proto} --dport {port.node_port} -j {svc_chain}")
        seps = []  # as iptables-save groups rules by chain: the service chain first, then each endpoint's
        for i, endpoint in enumerate(endpoints):
            sep_chain = f"KUBE-SEP-{chain_hash(name, port.protocol, endpoint.address)}"
            left = len(endpoints) - i
            if left == 1:
                pick = ""
            elif round_robin:
                pick = f"-m statistic --mode nth --every {left} --packet 0 "
            else:
                pick = f"-m statistic --mode random --probability {1 / left:.10f} "
            lines.append(f"-A {svc_chain} {pick}-j {sep_chain}")
            seps += [f"-A {sep_chain} -s {endpoint.ip}/32 -j KUBE-MARK-MASQ",
                     f"-A {sep_chain} -p {proto} -m {proto} -j DNAT --to-destination {endpoint.address}"]
        lines += seps
    return tuple(lines)


def iptables_lines(rules: Sequence[ServiceRule], *, round_robin: bool) -> list[str]:
    """The nat table's -A lines (services first, then their chains), then the filter table's."""
    rendered = [r.lines[1 if round_robin else 0] for r in rules]
    nat = [line for lines in rendered for line in lines if not line.startswith("filter:")]
    services = [line for line in nat if line.startswith("-A KUBE-SERVICES ")]
    node_ports = [line for line in nat if line.startswith("-A KUBE-NODEPORTS ")]
    chains = [line for line in nat if not line.startswith(("-A KUBE-SERVICES ", "-A KUBE-NODEPORTS "))]
    jump = ["-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS"] if rules else []
    filtered = [line.removeprefix("filter:") for lines in rendered for line in lines if line.startswith("filter:")]
    return services + jump + node_ports + chains + filtered


def iptables_save(lines: Sequence[str]) -> str:
    """`iptables-save` text of the lines: the filter table's REJECTs, then the nat table."""
    nat = [line for line in lines if "-j REJECT" not in line]
    rejects = [line for line in lines if "-j REJECT" in line]
    chains = sorted({"KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-MARK-MASQ", *(line.split(" ", 2)[1] for line in nat)})
    out = ["*filter", ":KUBE-SERVICES - [0:0]", *rejects, "COMMIT", "*nat"]
    out += [f":{chain} - [0:0]" for chain in chains] + nat + ["COMMIT"]
    return "\n".join(out) + "\n"


class Balancer:
    """One endpoint per request: round robin per service port, or uniformly at random."""

    def __init__(self, mode: str = "round-robin", rng: random.Random | None = None):
        if mode not in BALANCE_MODES:
            raise ValueError(f"balance must be one of {', '.join(BALANCE_MODES)}, not {mode!r}")
        self.mode, self.rng = mode, rng or random.Random()
        self._next: dict[str, int] = {}

    def choose(self, key: str, endpoints: Sequence[Endpoint]) -> Endpoint | None:
        if not endpoints:
            return None
        if self.mode == "random":
            return self.rng.choice(list(endpoints))
        index = self._next.get(key, 0) % len(endpoints)
        self._next[key] = index + 1
        return endpoints[index]
