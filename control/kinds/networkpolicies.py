"""networking.k8s.io/v1 NetworkPolicy, as kube-apiserver serves it (pkg/apis/networking/validation's
ValidateNetworkPolicy, pkg/apis/networking/v1 defaults, pkg/printers' NetworkPolicy table).

Guarantees:
- Defaults as SetDefaults_NetworkPolicy and SetDefaults_NetworkPolicyPort: a port without a
  protocol gets TCP; a policy without policyTypes gets ["Ingress"], plus "Egress" when it has
  egress rules.
- Validation is upstream's with its messages and field paths: label selectors (the pod selector
  and each peer's), each port (protocol TCP, UDP or SCTP; a numbered port 1..65535 "must be between
  1 and 65535, inclusive"; a named port an IANA service name; endPort only with a numbered port,
  not below it, itself in range), each peer (at least one of podSelector, namespaceSelector,
  ipBlock; ipBlock alone), each ipBlock (cidr required and a CIDR: "must be a valid CIDR value,
  (e.g. 10.9.8.0/24 or 2001:db8::/64)"; each except a CIDR and a strict subset of cidr), at most two
  policyTypes, each Ingress or Egress. An update keeps accepting the CIDRs the stored policy
  already had (upstream's AllowCIDRsEvenIfInvalid) and a pod selector that was already invalid.
- metadata.generation starts at 1 and goes up when the spec changes.
- `kubectl get networkpolicies` (`netpol`) shows NAME, POD-SELECTOR (`<none>` for the empty
  selector, which selects every pod of the namespace), AGE.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from control.errors import go_value
from control.kinds.base import AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause, required, selector_string
from control.kinds.disruption import _selector_causes as label_selector_causes
from control.kinds.ingresses import GROUP, VERSION, port_name_problems
from control.kinds.meta import age

RESOURCE = f"{GROUP}/networkpolicies"
PROTOCOLS = ("TCP", "UDP", "SCTP")  # upstream's order in its NotSupported message
POLICY_TYPES = ("Ingress", "Egress")
CIDR_EXAMPLE = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
PORT_RANGE = "must be between 1 and 65535, inclusive"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def networkpolicy_defaults(policy: Obj) -> None:
    spec = policy.get("spec")
    if not isinstance(spec, dict):
        return
    for direction in ("ingress", "egress"):
        for rule in _list(spec.get(direction)):
            for port in _list(_dict(rule).get("ports")):
                if isinstance(port, dict) and port.get("protocol") is None:
                    port["protocol"] = "TCP"
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]


def parse_cidr(text: Any) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """A CIDR as netutils.ParseCIDRSloppy reads it (host bits allowed), or None."""
    if not isinstance(text, str) or "/" not in text:
        return None
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        return None


def _in_range(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535


def port_causes(port: dict[str, Any], path: str) -> list[Cause]:
    """ValidateNetworkPolicyPort."""
    out: list[Cause] = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in PROTOCOLS:
        supported = ", ".join(f'"{p}"' for p in PROTOCOLS)
        out.append(cause(f"{path}.protocol", f"Unsupported value: {go_value(protocol)}: supported values: "
                         f"{supported}", "FieldValueNotSupported"))
    number, end = port.get("port"), port.get("endPort")
    if number is None:
        if end is not None:
            out.append(cause(f"{path}.endPort", f"Invalid value: {go_value(end)}: may not be specified when `port` "
                             "is not specified"))
    elif isinstance(number, int) and not isinstance(number, bool):
        if not _in_range(number):
            out.append(cause(f"{path}.port", f"Invalid value: {go_value(number)}: {PORT_RANGE}"))
        if end is not None:
            if isinstance(end, int) and end < number:
                out.append(cause(f"{path}.endPort", f"Invalid value: {go_value(end)}: must be greater than or equal "
                                 "to `port`"))
            if not _in_range(end):
                out.append(cause(f"{path}.endPort", f"Invalid value: {go_value(end)}: {PORT_RANGE}"))
    else:
        if end is not None:
            out.append(cause(f"{path}.endPort", f"Invalid value: {go_value(end)}: may not be specified when `port` "
                             "is non-numeric"))
        out += [cause(f"{path}.port", f"Invalid value: {go_value(number)}: {problem}")
                for problem in port_name_problems(str(number))]
    return out


def ip_block_causes(block: dict[str, Any], path: str, allowed: frozenset[str] = frozenset()) -> list[Cause]:
    """ValidateIPBlock: a CIDR, and excepts that are strict subsets of it."""
    text = block.get("cidr")
    if not text:
        return [required(f"{path}.cidr")]
    out: list[Cause] = []
    network = parse_cidr(text)
    if network is None:
        if text not in allowed:
            out.append(cause(f"{path}.cidr", f"Invalid value: {go_value(text)}: {CIDR_EXAMPLE}"))
        return out
    for i, except_text in enumerate(_list(block.get("except"))):
        where = f"{path}.except[{i}]"
        excepted = parse_cidr(except_text)
        if excepted is None:
            if except_text not in allowed:
                out.append(cause(where, f"Invalid value: {go_value(except_text)}: {CIDR_EXAMPLE}"))
            continue
        if excepted.version != network.version or excepted.network_address not in network \
                or network.prefixlen >= excepted.prefixlen:
            out.append(cause(where, f"Invalid value: {go_value(except_text)}: must be a strict subset of `cidr`"))
    return out


def peer_causes(peer: dict[str, Any], path: str, allowed: frozenset[str] = frozenset()) -> list[Cause]:
    """ValidateNetworkPolicyPeer."""
    out: list[Cause] = []
    present = 0
    for key in ("podSelector", "namespaceSelector"):
        if peer.get(key) is not None:
            present += 1
            out += label_selector_causes(peer[key], f"{path}.{key}")
    if peer.get("ipBlock") is not None:
        present += 1
        out += ip_block_causes(_dict(peer["ipBlock"]), f"{path}.ipBlock", allowed)
    if present == 0:
        out.append(cause(path, "Required value: must specify a peer", "FieldValueRequired"))
    elif present > 1 and peer.get("ipBlock") is not None:
        out.append(cause(path, "Forbidden: may not specify both ipBlock and another peer", "FieldValueForbidden"))
    return out


def _spec_causes(policy: Obj, allowed: frozenset[str] = frozenset(), lenient_selector: bool = False) -> list[Cause]:
    """ValidateNetworkPolicySpec."""
    spec = _dict(policy.get("spec"))
    out = [] if lenient_selector else label_selector_causes(spec.get("podSelector") or {}, "spec.podSelector")
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(_list(spec.get(direction))):
            rule, where = _dict(rule), f"spec.{direction}[{i}]"
            for j, port in enumerate(_list(rule.get("ports"))):
                out += port_causes(_dict(port), f"{where}.ports[{j}]")
            for j, peer in enumerate(_list(rule.get(peers))):
                out += peer_causes(_dict(peer), f"{where}.{peers}[{j}]", allowed)
    types = _list(spec.get("policyTypes"))
    if len(types) > len(POLICY_TYPES):
        shown = ", ".join(f'"{t}"' for t in types)
        return out + [cause("spec.policyTypes", f"Invalid value: []networking.PolicyType{{{shown}}}: may not "
                            "specify more than two policyTypes")]
    supported = ", ".join(f'"{t}"' for t in POLICY_TYPES)
    out += [cause(f"spec.policyTypes[{i}]", f"Unsupported value: {go_value(t)}: supported values: {supported}",
                  "FieldValueNotSupported") for i, t in enumerate(types) if t not in POLICY_TYPES]
    return out


def validate_networkpolicy(policy: Obj) -> list[Cause]:
    return _spec_causes(policy)


def _stored_cidrs(policy: Obj) -> frozenset[str]:
    spec = _dict(policy.get("spec"))
    out: set[str] = set()
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for rule in _list(spec.get(direction)):
            for peer in _list(_dict(rule).get(peers)):
                block = _dict(_dict(peer).get("ipBlock"))
                if block:
                    out.add(str(block.get("cidr")))
                    out.update(str(e) for e in _list(block.get("except")))
    return frozenset(out)


def validate_networkpolicy_update(new: Obj, old: Obj) -> list[Cause]:
    lenient = bool(label_selector_causes(_dict(old.get("spec")).get("podSelector") or {}, "spec.podSelector"))
    return _spec_causes(new, _stored_cidrs(old), lenient)


def networkpolicy_cells(policy: Obj, now: float) -> list[Any]:
    selector = _dict(policy.get("spec")).get("podSelector")
    return [policy["metadata"]["name"], selector_string(_dict(selector)) or "<none>", age(policy, now)]


NETWORKPOLICY = Kind(
    group=GROUP, version=VERSION, kind="NetworkPolicy", plural="networkpolicies", namespaced=True,
    definition="io.k8s.api.networking.v1.NetworkPolicy", short_names=("netpol",),
    defaults=networkpolicy_defaults, validate=validate_networkpolicy, validate_update=validate_networkpolicy_update,
    has_spec=True,
    columns=(NAME_COLUMN,
             Column("Pod-Selector", description="Selects the pods to which this NetworkPolicy object applies. The "
                    "array of ingress rules is applied to any pods selected by this field. Selects the pods to "
                    "which this NetworkPolicy object applies. The array of ingress rules is applied to any pods "
                    "selected by this field."),
             AGE_COLUMN),
    cells=networkpolicy_cells,
)
