"""The other core/v1 kinds: Namespace, Node, Service, Endpoints, Event, ConfigMap.

Guarantees: each kind's defaults are idempotent, its validation returns Kubernetes-style causes
(never raises on odd input), and its table cells match kubectl's usual columns.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from typing import Any

from control.errors import go_value
from control.kinds.base import (
    AGE_COLUMN, DNS1035_LABEL, NAME_COLUMN, Cause, Column, Kind, Obj, cause, field_value, label_causes,
    label_name, name_causes, required, reset_status,
)
from control.kinds import events_v1
from control.kinds.meta import age, human_duration, node_ready, parse_time
from control.kinds.service_addresses import SERVICE_ADDRESSES
from control.kinds.strategy import Deletion

SERVICE_TYPES = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")
PROTOCOLS = ("TCP", "UDP", "SCTP")


# --- Namespace -------------------------------------------------------------------------------

def namespace_defaults(ns: Obj) -> None:
    spec = ns.setdefault("spec", {})
    if isinstance(spec, dict):
        spec.setdefault("finalizers", ["kubernetes"])
    status = ns.setdefault("status", {})
    if isinstance(status, dict):
        status.setdefault("phase", "Active")
    labels = ns["metadata"].setdefault("labels", {})
    if isinstance(labels, dict):
        labels["kubernetes.io/metadata.name"] = ns["metadata"].get("name", "")


def namespace_held(ns: Obj) -> bool:
    """The namespace controller empties spec.finalizers (PUT .../finalize) once the namespace's
    content is gone; until then a deleted namespace stays, Terminating."""
    return bool((ns.get("spec") or {}).get("finalizers"))


def namespace_terminating(ns: Obj) -> None:
    ns.setdefault("status", {})["phase"] = "Terminating"


# The namespaces upstream's NamespaceLifecycle admission never lets go (its immortalNamespaces).
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})


def namespace_refusal(ns: Obj) -> str:
    return "this namespace may not be deleted" if ns["metadata"].get("name") in IMMORTAL_NAMESPACES else ""


def namespace_finalize(stored: Obj, written: Obj) -> None:
    """PUT .../finalize changes spec.finalizers only (the namespace controller, when it is done)."""
    stored.setdefault("spec", {})["finalizers"] = (written.get("spec") or {}).get("finalizers") or []


NAMESPACE = Kind(
    group="", version="v1", kind="Namespace", plural="namespaces", namespaced=False,
    definition="io.k8s.api.core.v1.Namespace", short_names=("ns",), subresources=("status", "finalize"),
    defaults=namespace_defaults, name_rule=label_name, finalize=namespace_finalize,
    deletion=Deletion(held=namespace_held, on_hold=namespace_terminating, returns_object=True,
                      refusal=namespace_refusal),
    columns=(NAME_COLUMN, Column("Status", description="The status of the namespace"), AGE_COLUMN),
    cells=lambda o, now: [o["metadata"]["name"], field_value(o, "status", "phase"), age(o, now)],
    field_getters={"status.phase": lambda o: field_value(o, "status", "phase")},
)


# --- Node ------------------------------------------------------------------------------------

def _node_status_text(node: Obj) -> str:
    text = node_ready(node)
    if text == "Unknown":
        text = "NotReady"
    if (node.get("spec") or {}).get("unschedulable"):
        text += ",SchedulingDisabled"
    return text


def _node_roles(node: Obj) -> str:
    prefix = "node-role.kubernetes.io/"
    roles = sorted(k[len(prefix):] for k in (node["metadata"].get("labels") or {}) if k.startswith(prefix))
    return ",".join(roles) or "<none>"


def _node_address(node: Obj, kind: str) -> str:
    for address in (node.get("status") or {}).get("addresses") or []:
        if address.get("type") == kind:
            return address.get("address") or "<none>"
    return "<none>"


def node_cells(node: Obj, now: float) -> list[Any]:
    info = (node.get("status") or {}).get("nodeInfo") or {}
    return [node["metadata"]["name"], _node_status_text(node), _node_roles(node), age(node, now),
            info.get("kubeletVersion", ""), _node_address(node, "InternalIP"), _node_address(node, "ExternalIP"),
            info.get("osImage") or "<unknown>", info.get("kernelVersion") or "<unknown>",
            info.get("containerRuntimeVersion") or "<unknown>"]


NODE = Kind(
    group="", version="v1", kind="Node", plural="nodes", namespaced=False,
    definition="io.k8s.api.core.v1.Node", short_names=("no",), subresources=("status",),
    columns=(NAME_COLUMN, Column("Status", description="The status of the node"),
             Column("Roles", description="The roles of the node"), AGE_COLUMN,
             Column("Version", description="Kubelet Version reported by the node."),
             Column("Internal-IP", priority=1, description="List of internal IPs for the node."),
             Column("External-IP", priority=1, description="List of external IPs for the node."),
             Column("OS-Image", priority=1, description="OS Image reported by the node."),
             Column("Kernel-Version", priority=1, description="Kernel Version reported by the node."),
             Column("Container-Runtime", priority=1, description="Container Runtime Version reported by the node.")),
    cells=node_cells,
    field_getters={"spec.unschedulable": lambda o: field_value(o, "spec", "unschedulable") or "false"},
)


# --- Service ---------------------------------------------------------------------------------

def service_defaults(svc: Obj) -> None:
    spec = svc.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    spec.setdefault("type", "ClusterIP")
    if spec["type"] != "ExternalName":
        spec.setdefault("sessionAffinity", "None")
        spec.setdefault("internalTrafficPolicy", "Cluster")
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if spec["type"] != "ExternalName" and "port" in port:
                port.setdefault("targetPort", port["port"])
    if spec["type"] in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    if spec["type"] == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)
    svc.setdefault("status", {"loadBalancer": {}})


def dns1035_name(name: Any) -> list[Cause]:
    """A Service's name is a DNS-1035 label (ValidateServiceName): it becomes a DNS name and an
    environment variable prefix, so it starts with a letter."""
    if not name or not isinstance(name, str):
        return name_causes(name)
    out = []
    if len(name) > 63:
        out.append(cause("metadata.name", f'Invalid value: {go_value(name)}: must be no more than 63 characters'))
    if not DNS1035_LABEL.match(name):
        out.append(cause("metadata.name", f'Invalid value: {go_value(name)}: a DNS-1035 label must consist of lower case '
                         "alphanumeric characters or '-', start with an alphabetic character, and end with an "
                         "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
                         "'[a-z]([-a-z0-9]*[a-z0-9])?')"))
    return out


def validate_service(svc: Obj) -> list[Cause]:
    out: list[Cause] = []
    spec = svc.get("spec")
    if not isinstance(spec, dict):
        return out + [required("spec")]
    kind = spec.get("type")
    if kind not in SERVICE_TYPES:
        out.append(cause("spec.type", f'Unsupported value: {go_value(kind)}: supported values: "ClusterIP", '
                         '"ExternalName", "LoadBalancer", "NodePort"', "FieldValueNotSupported"))
    ports = spec.get("ports") or []
    if kind == "ExternalName":
        if not spec.get("externalName"):
            out.append(required("spec.externalName"))
    elif not ports and spec.get("clusterIP") != "None":
        out.append(required("spec.ports"))
    seen: set[Any] = set()
    for i, port in enumerate(ports):
        if not isinstance(port, dict):
            out.append(cause(f"spec.ports[{i}]", "Invalid value: must be an object"))
            continue
        number = port.get("port")
        if not isinstance(number, int) or not 1 <= number <= 65535:
            out.append(cause(f"spec.ports[{i}].port", f"Invalid value: {go_value(number)}: must be between 1 and 65535, inclusive"))
        if port.get("protocol", "TCP") not in PROTOCOLS:
            out.append(cause(f"spec.ports[{i}].protocol", f'Unsupported value: {go_value(port.get("protocol"))}: '
                             'supported values: "SCTP", "TCP", "UDP"', "FieldValueNotSupported"))
        if len(ports) > 1 and not port.get("name"):
            out.append(required(f"spec.ports[{i}].name"))
        if (port.get("name"), number) in seen:
            out.append(cause(f"spec.ports[{i}]", f"Duplicate value: {go_value(number)}", "FieldValueDuplicate"))
        seen.add((port.get("name"), number))
    out += label_causes(spec.get("selector"), "spec.selector")
    return out + _cluster_ip_causes(spec) + _node_port_causes(spec)


def _cluster_ip_causes(spec: Obj) -> list[Cause]:
    kind, ip, ips = spec.get("type"), spec.get("clusterIP"), spec.get("clusterIPs")
    if kind == "ExternalName":
        out = [] if not ip and not ips else [cause("spec.clusterIPs", "Forbidden: may not be set for ExternalName services",
                                                     "FieldValueForbidden")]
        external = str(spec.get("externalName") or "")
        return out + (name_causes(external[:-1] if external.endswith(".") else external, "spec.externalName")
                      if external else [])
    out = []
    if ips is not None and (not isinstance(ips, list) or len(ips) > 1 or not all(isinstance(i, str) for i in ips)):
        out.append(cause("spec.clusterIPs", "Invalid value: only one IPv4 address is supported here"))
    elif ips and ip and ips[0] != ip:
        out.append(cause("spec.clusterIPs[0]", f'Invalid value: {go_value(ips[0])}: must match `clusterIP` when both are set'))
    chosen = ip or (ips[0] if isinstance(ips, list) and ips else None)
    if chosen == "None" and kind in ("NodePort", "LoadBalancer"):
        out.append(cause("spec.clusterIPs[0]", f"Invalid value: \"None\": may not be set to 'None' for {kind} services"))
    elif chosen not in (None, "", "None"):
        try:
            ipaddress.IPv4Address(str(chosen))
        except ValueError:
            out.append(cause("spec.clusterIPs[0]", f'Invalid value: {go_value(chosen)}: must be a valid IP address, '
                             "(e.g. 10.9.8.7 or 2001:db8::ffff)"))
    return out


def _node_port_causes(spec: Obj) -> list[Cause]:
    kind, out, seen = spec.get("type"), [], set()
    for i, port in enumerate(spec.get("ports") or []):
        number = port.get("nodePort") if isinstance(port, dict) else None
        if number in (None, 0):
            continue
        if kind not in ("NodePort", "LoadBalancer"):
            out.append(cause(f"spec.ports[{i}].nodePort", f"Forbidden: may not be used when `type` is '{kind}'",
                             "FieldValueForbidden"))
        elif not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= 65535:
            out.append(cause(f"spec.ports[{i}].nodePort", f"Invalid value: {go_value(number)}: must be between 1 and 65535, inclusive"))
        elif (number, port.get("protocol", "TCP")) in seen:
            out.append(cause(f"spec.ports[{i}].nodePort", f"Duplicate value: {go_value(number)}", "FieldValueDuplicate"))
        seen.add((number, port.get("protocol", "TCP")))
    return out


def validate_service_update(new: Obj, old: Obj) -> list[Cause]:
    """An allocated cluster IP stays for the Service's life (unless it becomes or was ExternalName)."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    if "ExternalName" in (spec.get("type"), old_spec.get("type")) or not old_spec.get("clusterIP"):
        return []
    if spec.get("clusterIP") != old_spec["clusterIP"]:
        return [cause("spec.clusterIP", f'Invalid value: {go_value(spec.get("clusterIP") or "")}: field is immutable')]
    return []


def service_port_text(port: Obj) -> str:
    """One Service port as `kubectl get svc` prints it (makePortString): "80/TCP", or "80:31234/TCP"
    with a nodePort."""
    node_port = f":{port['nodePort']}" if port.get("nodePort") else ""
    return f"{port.get('port')}{node_port}/{port.get('protocol', 'TCP')}"


def _service_ports(svc: Obj) -> str:
    ports = (svc.get("spec") or {}).get("ports") or []
    return ",".join(service_port_text(p) for p in ports if isinstance(p, dict)) or "<none>"


def _external_ip(svc: Obj) -> str:
    spec = svc.get("spec") or {}
    if spec.get("type") == "ExternalName":
        return spec.get("externalName") or "<none>"
    ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    ips = [i.get("ip") or i.get("hostname") for i in ingress] + list(spec.get("externalIPs") or [])
    if ips:
        return ",".join(ip for ip in ips if ip)
    return "<pending>" if spec.get("type") == "LoadBalancer" else "<none>"


def service_cells(svc: Obj, now: float) -> list[Any]:
    spec = svc.get("spec") or {}
    selector = ",".join(f"{k}={v}" for k, v in sorted((spec.get("selector") or {}).items())) or "<none>"
    return [svc["metadata"]["name"], spec.get("type", ""), spec.get("clusterIP") or "<none>",
            _external_ip(svc), _service_ports(svc), age(svc, now), selector]


SERVICE = Kind(
    group="", version="v1", kind="Service", plural="services", namespaced=True,
    definition="io.k8s.api.core.v1.Service", short_names=("svc",), categories=("all",),
    subresources=("status",), defaults=service_defaults, validate=validate_service,
    validate_update=validate_service_update, name_rule=dns1035_name, prepare_for_create=reset_status,
    prepare_for_update=SERVICE_ADDRESSES.carry_over, allocator=SERVICE_ADDRESSES,
    deletion=Deletion(returns_object=True),
    columns=(NAME_COLUMN, Column("Type", description="The type of the service."),
             Column("Cluster-IP", description="The IP address of the service."),
             Column("External-IP", description="External IP addresses of the service."),
             Column("Port(s)", description="The ports of the service."), AGE_COLUMN,
             Column("Selector", priority=1, description="Route service traffic to pods with label keys and values matching this selector.")),
    cells=service_cells,
    field_getters={"spec.clusterIP": lambda o: field_value(o, "spec", "clusterIP"),
                   "spec.type": lambda o: field_value(o, "spec", "type")},
)


# --- Endpoints -------------------------------------------------------------------------------

def endpoints_cells(ep: Obj, now: float) -> list[Any]:
    shown = []
    for subset in ep.get("subsets") or []:
        ports = subset.get("ports") or [{}]
        for address in subset.get("addresses") or []:
            for port in ports:
                shown.append(f"{address.get('ip')}:{port['port']}" if port.get("port") else f"{address.get('ip')}")
    text = ",".join(shown[:3]) + (f" + {len(shown) - 3} more..." if len(shown) > 3 else "")
    return [ep["metadata"]["name"], text or "<none>", age(ep, now)]


ENDPOINTS = Kind(
    group="", version="v1", kind="Endpoints", plural="endpoints", namespaced=True,
    definition="io.k8s.api.core.v1.Endpoints", short_names=("ep",), allow_create_on_update=True,
    columns=(NAME_COLUMN, Column("Endpoints", description="Endpoints of the service."), AGE_COLUMN),
    cells=endpoints_cells,
)


# --- Event -----------------------------------------------------------------------------------

def event_defaults(event: Obj) -> None:
    event.setdefault("type", "Normal")
    event.setdefault("count", 1)
    event.setdefault("reportingComponent", "")
    event.setdefault("reportingInstance", "")


def validate_event(event: Obj) -> list[Cause]:
    out = []
    involved = event.get("involvedObject")
    if not isinstance(involved, dict) or not involved:
        out.append(required("involvedObject"))
    elif involved.get("namespace") and event["metadata"].get("namespace") and involved["namespace"] != event["metadata"]["namespace"]:
        out.append(cause("involvedObject.namespace", "Invalid value: does not match event.namespace"))
    if event.get("type") not in ("Normal", "Warning"):
        out.append(cause("type", f'Unsupported value: {go_value(event.get("type"))}: supported values: "Normal", "Warning"',
                         "FieldValueNotSupported"))
    return out


def _event_object(event: Obj) -> str:
    involved = event.get("involvedObject") or {}
    return f"{(involved.get('kind') or '').lower()}/{involved.get('name', '')}"


def event_cells(event: Obj, now: float) -> list[Any]:

    last = parse_time(event.get("lastTimestamp")) or parse_time(event.get("metadata", {}).get("creationTimestamp"))
    first = parse_time(event.get("firstTimestamp")) or last
    source = event.get("source") or {}
    return [human_duration(now - last) if last else "<unknown>", event.get("type", ""), event.get("reason", ""),
            _event_object(event), event.get("message", ""),
            (event.get("involvedObject") or {}).get("fieldPath", ""),
            ", ".join(v for v in (source.get("component"), source.get("host")) if v),
            human_duration(now - first) if first else "<unknown>", event.get("count", 1), event["metadata"]["name"]]


def _involved(key: str):
    return lambda o: field_value(o, "involvedObject", key)


EVENT = Kind(
    group="", version="v1", kind="Event", plural="events", namespaced=True,
    definition="io.k8s.api.core.v1.Event", short_names=("ev",),
    defaults=event_defaults, validate=validate_event, allow_create_on_update=True,
    columns=(Column("Last Seen", description="Time when last event occurred"), Column("Type"), Column("Reason"),
             Column("Object"), Column("Message"),
             Column("Subobject", priority=1), Column("Source", priority=1),
             Column("First Seen", priority=1), Column("Count", type="integer", priority=1),
             Column("Name", format="name", priority=1)),
    cells=event_cells,
    field_getters={
        **{f"involvedObject.{k}": _involved(k) for k in
           ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
        "reason": lambda o: field_value(o, "reason"),
        "reportingComponent": lambda o: field_value(o, "reportingComponent"),
        "source": lambda o: field_value(o, "source", "component"),
        "type": lambda o: field_value(o, "type"),
    },
)


# --- ConfigMap -------------------------------------------------------------------------------

def validate_configmap(cm: Obj) -> list[Cause]:
    out = []
    for section in ("data", "binaryData"):
        values = cm.get(section)
        if values is not None and not isinstance(values, dict):
            out.append(cause(section, "Invalid value: must be a map of strings"))
            continue
        for key in values or {}:
            if not key or len(key) > 253 or not all(ch.isalnum() or ch in "-._" for ch in key):
                out.append(cause(f"{section}[{key}]", f'Invalid value: {go_value(key)}: a valid config key must '
                                 "consist of alphanumeric characters, '-', '_' or '.'"))
    return out


def configmap_cells(cm: Obj, now: float) -> list[Any]:
    return [cm["metadata"]["name"], len(cm.get("data") or {}) + len(cm.get("binaryData") or {}), age(cm, now)]


CONFIGMAP = Kind(
    group="", version="v1", kind="ConfigMap", plural="configmaps", namespaced=True,
    definition="io.k8s.api.core.v1.ConfigMap", short_names=("cm",), validate=validate_configmap,
    allow_create_on_update=True,
    columns=(NAME_COLUMN, Column("Data", type="integer", description="Number of keys."), AGE_COLUMN),
    cells=configmap_cells,
)

# events.k8s.io/v1 serves the same Events under its own names (control.kinds.events_v1)
EVENT = dataclasses.replace(EVENT, other_versions=(EVENT.served_as(
    events_v1.VERSION, events_v1.DEFINITION, group=events_v1.GROUP, on_read=events_v1.to_events_v1,
    to_storage=events_v1.from_events_v1, field_getters=events_v1.FIELD_GETTERS,
    cells=lambda event, now: event_cells(events_v1.from_events_v1(event), now)),))
