"""discovery.k8s.io/v1 EndpointSlice, as kube-apiserver serves it (pkg/apis/discovery,
pkg/registry/discovery/endpointslice, pkg/printers' EndpointSlice table).

Guarantees:
- Validation is upstream's ValidateEndpointSlice with its messages: `addressType` required and one
  of FQDN, IPv4, IPv6, immutable on update ("field is immutable"); at most 1000 endpoints
  ("Too many: N: must have at most 1000 items"), each with 1 to 100 addresses of the slice's type
  (an IPv4/IPv6 address of that family and, both checks reported, neither unspecified, loopback,
  link-local nor link-local multicast; an FQDN of at least two segments), a DNS-1123 subdomain
  nodeName, a DNS-1123 label hostname, at most 16 deprecatedTopology labels, at most 8 zone hints
  (unique label values); at most 20000 ports (upstream's maxPorts, though the API text says 100),
  each with a unique DNS-1123 label name, protocol TCP, UDP or SCTP, a qualified-name appProtocol.
- Defaults as SetDefaults_EndpointPort: a port's name "" and protocol TCP when absent.
- metadata.generation starts at 1 and goes up when addressType, endpoints or ports change.
- `kubectl get endpointslices` shows NAME, ADDRESSTYPE, PORTS, ENDPOINTS, AGE, the lists cut at
  three entries ("a,b,c + 2 more...") and `<unset>` when empty, as upstream's printer.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from control.errors import go_value
from control.kinds.base import (
    AGE_COLUMN, DNS1123_LABEL, LABEL_VALUE, NAME_COLUMN, QUALIFIED_NAME, Cause, Column, Kind, Obj, cause, label_causes,
    name_causes, required,
)
from control.kinds.meta import age

GROUP, VERSION = "discovery.k8s.io", "v1"
RESOURCE = f"{GROUP}/endpointslices"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")  # sorted, as upstream's NotSupported lists them
PROTOCOLS = ("SCTP", "TCP", "UDP")
MAX_ENDPOINTS, MAX_ADDRESSES, MAX_PORTS, MAX_TOPOLOGY_LABELS, MAX_ZONE_HINTS = 1000, 100, 20000, 16, 8
_SHOWN = 3  # kubectl's table lists three ports or addresses, then "+ N more..."


def endpointslice_defaults(slice_: Obj) -> None:
    for port in slice_.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("name", "")
            port.setdefault("protocol", "TCP")


def _too_many(path: str, count: int, limit: int) -> Cause:
    return cause(path, f"Too many: {count}: must have at most {limit} items", "FieldValueTooMany")


def _not_supported(path: str, value: Any, supported: tuple[str, ...]) -> Cause:
    listed = ", ".join(f'"{s}"' for s in supported)
    return cause(path, f"Unsupported value: {go_value(value)}: supported values: {listed}", "FieldValueNotSupported")


def endpoint_ip_causes(address: Any, path: str) -> list[Cause]:
    """ValidateEndpointIP: a usable unicast address, never a special one."""
    try:
        ip = ipaddress.ip_address(str(address))
    except ValueError:
        return [cause(path, f"Invalid value: {go_value(address)}: must be a valid IP address")]
    out = []
    if ip.is_unspecified:
        out.append(cause(path, f"Invalid value: {go_value(address)}: may not be unspecified ({address})"))
    if ip.is_loopback:
        out.append(cause(path, f"Invalid value: {go_value(address)}: may not be in the loopback range "
                         "(127.0.0.0/8, ::1/128)"))
    if ip.is_link_local and not ip.is_multicast:
        out.append(cause(path, f"Invalid value: {go_value(address)}: may not be in the link-local range "
                         "(169.254.0.0/16, fe80::/10)"))
    if ip.is_multicast and (ip in ipaddress.ip_network("224.0.0.0/24") if ip.version == 4
                            else ip in ipaddress.ip_network("ff02::/16")):
        out.append(cause(path, f"Invalid value: {go_value(address)}: may not be in the link-local multicast range "
                         "(224.0.0.0/24, ff02::/10)"))
    return out


def _address_causes(address: Any, address_type: Any, path: str) -> list[Cause]:
    """One address checked against the slice's type; an unknown type is not checked (upstream's)."""
    if address_type in ("IPv4", "IPv6"):
        try:
            ip = ipaddress.ip_address(str(address))
        except ValueError:
            ip = None
        wrong = ip is None or ip.version != int(address_type[-1])
        # upstream reports both checks: the family's, then ValidateEndpointIP's
        return ([cause(path, f"Invalid value: {go_value(address)}: must be a valid {address_type} address")]
                if wrong else []) + endpoint_ip_causes(address, path)
    if address_type == "FQDN":
        name = str(address).rstrip(".") if isinstance(address, str) else address
        if not name:
            return [required(path)]
        out = name_causes(name, path)
        if isinstance(name, str) and len(name.split(".")) < 2:
            out.append(cause(path, f"Invalid value: {go_value(name)}: should be a domain with at least two segments "
                             "separated by dots"))
        return out
    return []


def _endpoint_causes(endpoint: Any, address_type: Any, path: str) -> list[Cause]:
    if not isinstance(endpoint, dict):
        return [cause(path, f"Invalid value: {go_value(endpoint)}: must be an object")]
    out: list[Cause] = []
    addresses = endpoint.get("addresses") or []
    if not addresses:
        out.append(cause(f"{path}.addresses", "Required value: must contain at least 1 address", "FieldValueRequired"))
    elif len(addresses) > MAX_ADDRESSES:
        out.append(_too_many(f"{path}.addresses", len(addresses), MAX_ADDRESSES))
    for i, address in enumerate(addresses):
        out += _address_causes(address, address_type, f"{path}.addresses[{i}]")
    if endpoint.get("nodeName"):
        out += name_causes(endpoint["nodeName"], f"{path}.nodeName")
    topology = endpoint.get("deprecatedTopology")
    if isinstance(topology, dict) and len(topology) > MAX_TOPOLOGY_LABELS:
        out.append(_too_many(f"{path}.deprecatedTopology", len(topology), MAX_TOPOLOGY_LABELS))
    out += label_causes(topology, f"{path}.deprecatedTopology")
    if endpoint.get("hostname") is not None:
        out += name_causes(endpoint["hostname"], f"{path}.hostname", label=True)
    if isinstance(endpoint.get("hints"), dict):
        out += _hints_causes(endpoint["hints"], f"{path}.hints")
    return out


def _hints_causes(hints: Obj, path: str) -> list[Cause]:
    """validateHints: at most 8 zones, each named once by a label value."""
    zones = hints.get("forZones") or []
    if len(zones) > MAX_ZONE_HINTS:
        return [_too_many(f"{path}.forZones", len(zones), MAX_ZONE_HINTS)]
    out: list[Cause] = []
    seen: set[Any] = set()
    for i, zone in enumerate(zones):
        name = zone.get("name") if isinstance(zone, dict) else None
        where = f"{path}.forZones[{i}].name"
        if name in seen:
            out.append(cause(where, f"Duplicate value: {go_value(name)}", "FieldValueDuplicate"))
        seen.add(name)
        if not isinstance(name, str) or len(name) > 63 or not LABEL_VALUE.match(name):
            out.append(cause(where, f"Invalid value: {go_value(name)}: a valid label must be an empty string or "
                             "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                             "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
                             "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"))
    return out


def _qualified_name_causes(value: Any, path: str) -> list[Cause]:
    prefix, _, name = str(value).rpartition("/")
    if name and len(name) <= 63 and QUALIFIED_NAME.match(name) and (not prefix or not name_causes(prefix)):
        return []
    return [cause(path, f"Invalid value: {go_value(value)}: name part must consist of alphanumeric characters, '-', "
                  "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
                  "'my.name',  or '123-abc', regex used for validation is "
                  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")]


def _ports_causes(ports: list[Any]) -> list[Cause]:
    if len(ports) > MAX_PORTS:
        return [_too_many("ports", len(ports), MAX_PORTS)]
    out: list[Cause] = []
    seen: set[str] = set()
    for i, port in enumerate(ports):
        path = f"ports[{i}]"
        if not isinstance(port, dict):
            out.append(cause(path, f"Invalid value: {go_value(port)}: must be an object"))
            continue
        name = port.get("name") or ""
        if name and not (len(name) <= 63 and DNS1123_LABEL.match(name)):
            out += name_causes(name, f"{path}.name", label=True)
        if name in seen:
            out.append(cause(f"{path}.name", f"Duplicate value: {go_value(name)}", "FieldValueDuplicate"))
        seen.add(name)
        protocol = port.get("protocol")
        if protocol is None:
            out.append(required(f"{path}.protocol"))
        elif protocol not in PROTOCOLS:
            out.append(_not_supported(f"{path}.protocol", protocol, PROTOCOLS))
        if port.get("appProtocol") is not None:
            out += _qualified_name_causes(port["appProtocol"], f"{path}.appProtocol")
    return out


def validate_endpointslice(slice_: Obj) -> list[Cause]:
    out: list[Cause] = []
    address_type = slice_.get("addressType")
    if not address_type:
        out.append(required("addressType"))
    elif address_type not in ADDRESS_TYPES:
        out.append(_not_supported("addressType", address_type, ADDRESS_TYPES))
    endpoints = slice_.get("endpoints") or []
    if len(endpoints) > MAX_ENDPOINTS:
        out.append(_too_many("endpoints", len(endpoints), MAX_ENDPOINTS))
    else:
        for i, endpoint in enumerate(endpoints):
            out += _endpoint_causes(endpoint, address_type, f"endpoints[{i}]")
    return out + _ports_causes(slice_.get("ports") or [])


def validate_endpointslice_update(new: Obj, old: Obj) -> list[Cause]:
    if new.get("addressType") != old.get("addressType"):
        return [cause("addressType", f"Invalid value: {go_value(new.get('addressType'))}: field is immutable")]
    return []


def content_changed(new: Obj, old: Obj) -> bool:
    """The strategy's generation rule: anything but metadata changed."""
    return any(new.get(f) != old.get(f) for f in ("addressType", "endpoints", "ports"))


def _listed(items: list[str], count: int) -> str:
    text = ",".join(items[:_SHOWN])
    if count > _SHOWN:
        return f"{text} + {count - _SHOWN} more..."
    return text or "<unset>"


def endpointslice_cells(slice_: Obj, now: float) -> list[Any]:
    ports = [p for p in slice_.get("ports") or [] if isinstance(p, dict)]
    shown_ports = [str(p["port"]) if p.get("port") is not None else (p.get("name") or "*") for p in ports]
    addresses = [str(a) for e in slice_.get("endpoints") or [] if isinstance(e, dict) for a in e.get("addresses") or []]
    return [slice_["metadata"]["name"], slice_.get("addressType") or "", _listed(shown_ports, len(shown_ports)),
            _listed(addresses, len(addresses)), age(slice_, now)]


ENDPOINTSLICE = Kind(
    group=GROUP, version=VERSION, kind="EndpointSlice", plural="endpointslices", namespaced=True,
    definition="io.k8s.api.discovery.v1.EndpointSlice", defaults=endpointslice_defaults,
    validate=validate_endpointslice, validate_update=validate_endpointslice_update,
    has_spec=True, generation_changed=content_changed,
    columns=(NAME_COLUMN,
             Column("AddressType", description="addressType specifies the type of address carried by this "
                    "EndpointSlice. All addresses in this slice must be the same type. This field is immutable "
                    "after creation."),
             Column("Ports", description="ports specifies the list of network ports exposed by each endpoint in "
                    "this slice. Each port must have a unique name."),
             Column("Endpoints", description="endpoints is a list of unique endpoints in this slice. Each slice "
                    "may include a maximum of 1000 endpoints."),
             AGE_COLUMN),
    cells=endpointslice_cells,
)
