"""Cluster DNS as a pure function: what `<svc>.<ns>.svc.cluster.local` and its short forms answer.

Guarantees (Kubernetes' DNS specification for Services):
- `name`, `name.ns`, `name.ns.svc` and `name.ns.svc.cluster.local` (a trailing dot allowed) name the
  Service `name` in `ns`; a bare `name` is looked up in the asker's namespace (its search path).
- A ClusterIP/NodePort/LoadBalancer Service answers an A record with its clusterIP; a headless one
  (`clusterIP: None`) answers the IPs of its ready endpoints (none ready: no records, still found);
  an ExternalName Service answers a CNAME to `spec.externalName`.
- A pod behind a headless Service whose Endpoints address carries a `hostname` (a StatefulSet's
  pod, spec.hostname + spec.subdomain) has its own A record, as CoreDNS serves it:
  `host.svc.ns.svc.cluster.local`, `host.svc.ns.svc`, `host.svc.ns`, and `host.svc` from the
  asker's namespace (the search path tries `<name>.<ns>.svc.cluster.local` first, so these win
  over a Service `host` in namespace `svc`); the address must be ready, unless the Service
  publishes not-ready addresses.
- Anything else is NXDOMAIN (`NameNotFound`). The lookups are injected, so the hub (from the store)
  and kube-proxy (from its informer cache) resolve with the same rules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from control.kinds.network import CLUSTER_DOMAIN

Lookup = Callable[[str, str], "dict[str, Any] | None"]  # (namespace, name) -> object or None


class NameNotFound(LookupError):
    """NXDOMAIN: no Service has that name."""


@dataclass(frozen=True)
class Answer:
    name: str  # the fully qualified name asked about
    type: str  # "A" or "CNAME"
    records: list[str] = field(default_factory=list)
    service: str = ""  # "<namespace>/<name>"
    headless: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "records": list(self.records),
                "service": self.service, "headless": self.headless}


def split_name(name: str, namespace: str) -> tuple[str, str]:
    """(service, namespace) a DNS name refers to, asked from `namespace`; NameNotFound otherwise."""
    labels = [p for p in name.strip().lower().rstrip(".").split(".")]
    if not labels or not all(labels):
        raise NameNotFound(f"{json.dumps(name)} is not a valid DNS name")
    domain = CLUSTER_DOMAIN.split(".")
    if len(labels) == 1:
        return labels[0], namespace
    if len(labels) == 2 or (len(labels) == 3 and labels[2] == "svc") or \
            (len(labels) == 3 + len(domain) and labels[2] == "svc" and labels[3:] == domain):
        return labels[0], labels[1]
    raise NameNotFound(f"{name} is not a name in the cluster domain {CLUSTER_DOMAIN}")


def ready_addresses(endpoints: dict[str, Any] | None) -> list[str]:
    out: list[str] = []
    for subset in (endpoints or {}).get("subsets") or []:
        for address in subset.get("addresses") or []:
            if address.get("ip") and address["ip"] not in out:
                out.append(address["ip"])
    return out


def split_host_name(name: str, namespace: str) -> tuple[str, str, str] | None:
    """(hostname, service, namespace) when `name` may be a pod's record under a headless Service."""
    labels = name.strip().lower().rstrip(".").split(".")
    if not all(labels):
        return None
    domain = CLUSTER_DOMAIN.split(".")
    if len(labels) == 4 + len(domain) and labels[3] == "svc" and labels[4:] == domain:
        return labels[0], labels[1], labels[2]
    if len(labels) == 4 and labels[3] == "svc":
        return labels[0], labels[1], labels[2]
    if len(labels) == 3 and labels[2] != "svc":
        return labels[0], labels[1], labels[2]
    if len(labels) == 2:
        return labels[0], labels[1], namespace
    return None


def host_addresses(endpoints: dict[str, Any] | None, hostname: str, *, not_ready: bool) -> list[str]:
    out: list[str] = []
    for subset in (endpoints or {}).get("subsets") or []:
        for field in ("addresses", "notReadyAddresses") if not_ready else ("addresses",):
            for address in subset.get(field) or []:
                if address.get("hostname") == hostname and address.get("ip") and address["ip"] not in out:
                    out.append(address["ip"])
    return out


def resolve_host(name: str, namespace: str, *, services: Lookup, endpoints: Lookup) -> Answer | None:
    """The A record of a pod's hostname under a headless Service, or None when there is none."""
    parts = split_host_name(name, namespace)
    if parts is None:
        return None
    host, service_name, service_namespace = parts
    service = services(service_namespace, service_name)
    spec = (service or {}).get("spec") or {}
    if service is None or spec.get("clusterIP") not in ("None", None, ""):
        return None
    records = host_addresses(endpoints(service_namespace, service_name), host,
                             not_ready=bool(spec.get("publishNotReadyAddresses")))
    if not records:
        return None
    fqdn = f"{host}.{service_name}.{service_namespace}.svc.{CLUSTER_DOMAIN}"
    return Answer(fqdn, "A", records, f"{service_namespace}/{service_name}", headless=True)


def resolve(name: str, namespace: str, *, services: Lookup, endpoints: Lookup) -> Answer:
    host = resolve_host(name, namespace, services=services, endpoints=endpoints)
    if host is not None:
        return host
    service_name, service_namespace = split_name(name, namespace)
    fqdn = f"{service_name}.{service_namespace}.svc.{CLUSTER_DOMAIN}"
    service = services(service_namespace, service_name)
    if service is None:
        raise NameNotFound(f"{fqdn}: no such Service (NXDOMAIN)")
    spec = service.get("spec") or {}
    key = f"{service_namespace}/{service_name}"
    if spec.get("type") == "ExternalName":
        return Answer(fqdn, "CNAME", [str(spec.get("externalName", "")).rstrip(".")], key)
    if spec.get("clusterIP") in ("None", None, ""):
        return Answer(fqdn, "A", ready_addresses(endpoints(service_namespace, service_name)), key, headless=True)
    return Answer(fqdn, "A", [spec["clusterIP"]], key)
