"""networking.k8s.io/v1 Ingress as kube-apiserver serves it (pkg/apis/networking/validation,
pkg/registry/networking/ingress) and kubectl prints it.

Guarantees:
- Validation is upstream's ValidateIngressCreate/Update with its messages: a spec needs rules or a
  defaultBackend; a rule's host is a DNS subdomain or a wildcard one (`*.example.com`), never an
  IP; an `http` rule has paths, each with a pathType (Exact, Prefix or ImplementationSpecific);
  Exact and Prefix paths are absolute and hold no `//`, `/./`, `/../`, `%2f`, nor end in `/.` or
  `/..`; a backend is a service (DNS-1035 name and a port name or number, not both) or a resource,
  never both; tls hosts are (wildcard) subdomains and secretName a subdomain; ingressClassName a
  subdomain, and on create it matches a `kubernetes.io/ingress.class` annotation when both are given.
  On update, a stored wildcard-host rule or tls secretName that was already invalid is let stand
  (upstream's backwards compatibility).
- The status is the controller's: a create resets it, the `status` subresource writes it.
- `kubectl get ingress` (`ing`) shows NAME, CLASS (`<none>` without one), HOSTS (`*` for none, at
  most three then "+ N more..."), ADDRESS (IPs or hostnames, sorted, unique), PORTS ("80", or
  "80, 443" with tls), AGE.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from control.errors import go_value
from control.kinds.apiservices import path_segment_name
from control.kinds.base import (
    AGE_COLUMN, DNS1123_SUBDOMAIN, NAME_COLUMN, Cause, Column, Kind, Obj, cause, name_causes, required,
)
from control.kinds.core import dns1035_name
from control.kinds.meta import age

GROUP, VERSION = "networking.k8s.io", "v1"
CLASS_ANNOTATION = "kubernetes.io/ingress.class"  # the class before ingressClassName (networking/v1beta1)
PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")  # sorted, as upstream's message lists them
INVALID_PATH_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
INVALID_PATH_SUFFIXES = ("/..", "/.")
WILDCARD_SUBDOMAIN = re.compile(r"^\*\." + DNS1123_SUBDOMAIN.pattern[1:])
PORT_NAME_CHARSET = re.compile(r"^[-a-z0-9]+$")
LOAD_BALANCER_WIDTH = 16  # kubectl's loadBalancerWidth: longer addresses are cut with "..."


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _at(causes: list[Cause], path: str) -> list[Cause]:
    """Causes written for metadata.name, moved to the field they are about."""
    return [{**c, "field": path} for c in causes]


def subdomain_causes(value: Any, path: str) -> list[Cause]:
    """IsDNS1123Subdomain on a field (an empty value fails the pattern, as upstream's)."""
    if value == "":
        return [{**c, "field": path, "message": c["message"].replace('"."', '""', 1)}
                for c in name_causes(".", path)]
    return name_causes(value, path)


def wildcard_causes(host: str, path: str) -> list[Cause]:
    """IsWildcardDNS1123Subdomain."""
    out = []
    if len(host) > 253:
        out.append(cause(path, f"Invalid value: {go_value(host)}: must be no more than 253 characters"))
    if not WILDCARD_SUBDOMAIN.match(host):
        out.append(cause(path, f"Invalid value: {go_value(host)}: a wildcard DNS-1123 subdomain must start with "
                         "'*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric "
                         "characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', "
                         "regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]"
                         "([-a-z0-9]*[a-z0-9])?)*')"))
    return out


def _host_causes(host: str, path: str) -> list[Cause]:
    return wildcard_causes(host, path) if "*" in host else subdomain_causes(host, path)


def port_name_problems(name: str) -> list[str]:
    """IsValidPortName (an IANA_SVC_NAME)."""
    out = []
    if len(name) > 15:
        out.append("must be no more than 15 characters")
    if not PORT_NAME_CHARSET.match(name):
        out.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", name):
        out.append("must contain at least one letter (a-z)")
    if "--" in name:
        out.append("must not contain consecutive hyphens")
    if name.startswith("-") or name.endswith("-"):
        out.append("must not begin or end with a hyphen")
    return out


def _service_backend_causes(service: dict[str, Any], path: str) -> list[Cause]:
    name = service.get("name")
    out = [required(f"{path}.service.name")] if not name else _at(dns1035_name(name), f"{path}.service.name")
    port = _dict(service.get("port"))
    port_name, number = port.get("name") or "", port.get("number") or 0
    if port_name and number:
        out.append(cause(path, 'Invalid value: "": cannot set both port name & port number'))
    elif port_name:
        out += [cause(f"{path}.service.port.name", f"Invalid value: {go_value(port_name)}: {problem}")
                for problem in port_name_problems(str(port_name))]
    elif number:
        if not isinstance(number, int) or not 1 <= number <= 65535:
            out.append(cause(f"{path}.service.port.number", f"Invalid value: {go_value(number)}: must be between "
                             "1 and 65535, inclusive"))
    else:
        out.append(cause(path, "Required value: port name or number is required", "FieldValueRequired"))
    return out


def _reference_causes(reference: dict[str, Any], path: str) -> list[Cause]:
    """validateIngressTypedLocalObjectReference (a resource backend)."""
    out: list[Cause] = []
    if reference.get("apiGroup") is not None:
        out += subdomain_causes(reference.get("apiGroup"), f"{path}.apiGroup")
    for key in ("kind", "name"):
        value = reference.get(key)
        out += [required(f"{path}.{key}")] if not value else _at(path_segment_name(value), f"{path}.{key}")
    return out


def backend_causes(backend: Any, path: str) -> list[Cause]:
    """validateIngressBackend: a service or a resource, not both, not neither."""
    backend = _dict(backend)
    service, resource = backend.get("service"), backend.get("resource")
    if service is not None and resource is not None:
        return [cause(path, 'Invalid value: "": cannot set both resource and service backends')]
    if resource is not None:
        return _reference_causes(_dict(resource), f"{path}.resource")
    if service is not None:
        return _service_backend_causes(_dict(service), path)
    return [cause(path, 'Invalid value: "": resource or service backend is required')]


def _path_causes(http_path: dict[str, Any], path: str) -> list[Cause]:
    """validateHTTPIngressPath."""
    path_type, value = http_path.get("pathType"), _text(http_path.get("path"))
    if path_type is None:
        return [cause(f"{path}.pathType", "Required value: pathType must be specified", "FieldValueRequired")]
    out: list[Cause] = []
    bad = f"Invalid value: {go_value(value)}: "
    if path_type in ("Exact", "Prefix"):
        if not value.startswith("/"):
            out.append(cause(f"{path}.path", bad + "must be an absolute path"))
        out += [cause(f"{path}.path", bad + f"must not contain '{seq}'") for seq in INVALID_PATH_SEQUENCES
                if seq in value]
        out += [cause(f"{path}.path", bad + f"cannot end with '{suffix}'") for suffix in INVALID_PATH_SUFFIXES
                if value.endswith(suffix)]
    elif path_type == "ImplementationSpecific":
        if value and not value.startswith("/"):
            out.append(cause(f"{path}.path", bad + "must be an absolute path"))
    else:
        supported = ", ".join(f'"{t}"' for t in PATH_TYPES)
        out.append(cause(f"{path}.pathType", f"Unsupported value: {go_value(path_type)}: supported values: "
                         f"{supported}", "FieldValueNotSupported"))
    return out + backend_causes(http_path.get("backend"), f"{path}.backend")


def _rule_value_causes(rule: dict[str, Any], path: str) -> list[Cause]:
    http = rule.get("http")
    if http is None:
        return []
    paths = _list(_dict(http).get("paths"))
    out = [required(f"{path}.http.paths")] if not paths else []
    for i, http_path in enumerate(paths):
        out += _path_causes(_dict(http_path), f"{path}.http.paths[{i}]")
    return out


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _rules_causes(rules: list[Any], allow_invalid_wildcard_rule: bool) -> list[Cause]:
    out: list[Cause] = []
    for i, rule in enumerate(rules):
        rule, path = _dict(rule), f"spec.rules[{i}]"
        host = _text(rule.get("host"))
        if host and _is_ip(host):
            out.append(cause(f"{path}.host", f"Invalid value: {go_value(host)}: must be a DNS name, not an IP address"))
        if host:
            out += _host_causes(host, f"{path}.host")
        if "*" not in host or not allow_invalid_wildcard_rule:
            out += _rule_value_causes(rule, path)
    return out


def _tls_causes(tls: list[Any], allow_invalid_secret_name: bool) -> list[Cause]:
    out: list[Cause] = []
    for i, entry in enumerate(tls):
        entry = _dict(entry)
        for j, host in enumerate(_list(entry.get("hosts"))):
            out += _host_causes(str(host), f"spec.tls[{i}].hosts[{j}]")
        secret = _text(entry.get("secretName"))
        if secret and not allow_invalid_secret_name:
            out += subdomain_causes(secret, f"spec.tls[{i}].secretName")
    return out


def _spec_causes(ing: Obj, old: Obj | None) -> list[Cause]:
    """ValidateIngressSpec, with the leniencies an update of a stored Ingress keeps."""
    spec = ing.get("spec")
    if not isinstance(spec, dict):
        spec = {}
    rules, backend = spec.get("rules"), spec.get("defaultBackend")
    out: list[Cause] = []
    if not rules and backend is None:
        shown = "[]networking.IngressRule(nil)" if rules is None else "[]networking.IngressRule{}"
        out.append(cause("spec", f"Invalid value: {shown}: either `defaultBackend` or `rules` must be specified"))
    if backend is not None:
        out += backend_causes(backend, "spec.defaultBackend")
    out += _rules_causes(_list(rules), _has_invalid_wildcard_rule(old))
    out += _tls_causes(_list(spec.get("tls")), _has_invalid_secret_name(old))
    if spec.get("ingressClassName") is not None:
        out += subdomain_causes(spec["ingressClassName"], "spec.ingressClassName")
    return out


def _has_invalid_wildcard_rule(old: Obj | None) -> bool:
    rules = _list(_dict((old or {}).get("spec")).get("rules"))
    return any("*" in _text(_dict(r).get("host")) and _rule_value_causes(_dict(r), "") for r in rules)


def _has_invalid_secret_name(old: Obj | None) -> bool:
    tls = _list(_dict((old or {}).get("spec")).get("tls"))
    return any(_dict(t).get("secretName") and subdomain_causes(_dict(t)["secretName"], "") for t in tls)


def validate_ingress(ing: Obj) -> list[Cause]:
    out = _spec_causes(ing, None)
    annotation = _dict(ing["metadata"].get("annotations")).get(CLASS_ANNOTATION)
    class_name = _dict(ing.get("spec")).get("ingressClassName")
    if annotation is not None and class_name is not None and annotation != class_name:
        out.append(cause(f"annotations.{CLASS_ANNOTATION}", f"Invalid value: {go_value(annotation)}: must match "
                         "`ingressClassName` when both are specified"))
    return out


def validate_ingress_update(new: Obj, old: Obj) -> list[Cause]:
    return _spec_causes(new, old)


def reset_status(ing: Obj) -> None:
    """PrepareForCreate: the load balancer's addresses are the controller's to write."""
    ing["status"] = {"loadBalancer": {}}


def _hosts(rules: list[Any]) -> str:
    """kubectl's formatHosts: the first three hosts, then how many rules more."""
    shown = [h for h in (_text(_dict(r).get("host")) for r in rules[:3]) if h]
    if not shown:
        return "*"
    return ",".join(shown) + (f" + {len(rules) - 3} more..." if len(rules) > 3 else "")


def _address(ing: Obj) -> str:
    points = _list(_dict(_dict(ing.get("status")).get("loadBalancer")).get("ingress"))
    found = sorted({_text(_dict(p).get("ip")) or _text(_dict(p).get("hostname")) for p in points} - {""})
    text = ",".join(found)
    return text[:LOAD_BALANCER_WIDTH - 3] + "..." if len(text) > LOAD_BALANCER_WIDTH else text


def ingress_cells(ing: Obj, now: float) -> list[Any]:
    spec = _dict(ing.get("spec"))
    return [ing["metadata"]["name"], spec.get("ingressClassName") or "<none>", _hosts(_list(spec.get("rules"))),
            _address(ing), "80, 443" if spec.get("tls") else "80", age(ing, now)]


INGRESS = Kind(
    group=GROUP, version=VERSION, kind="Ingress", plural="ingresses", namespaced=True,
    definition="io.k8s.api.networking.v1.Ingress", short_names=("ing",), subresources=("status",),
    prepare_for_create=reset_status, validate=validate_ingress, validate_update=validate_ingress_update,
    has_spec=True,
    columns=(NAME_COLUMN,
             Column("Class", description="The name of the IngressClass resource that should be used for this "
                    "Ingress."),
             Column("Hosts", description="Hosts that incoming requests are matched against before the ingress "
                    "rule"),
             Column("Address", description="Address is a list containing ingress points for the load-balancer"),
             Column("Ports", description="Ports of TLS configurations that open"),
             AGE_COLUMN),
    cells=ingress_cells,
)
