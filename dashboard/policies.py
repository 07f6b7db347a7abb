"""NetworkPolicies (networking.k8s.io/v1) as the page draws them: which pods a policy applies to,
its policy types, and each rule's peers and ports, small enough for the Services panel.

Guarantees:
- `networkpolicy_vm` is a pure function of one object, never raises on a malformed or partial
  object (missing fields read as empty), and carries only what the panel draws.
- Policy types are upstream's defaulting when the object names none: Ingress always, Egress when
  the policy has egress rules (kube-apiserver stores them defaulted; an older object may lack them).
- A selector is written as kubectl writes one (`role=waiter,tier in (a,b),!legacy`); "" is the
  empty selector (every pod, or every namespace). A rule with no peers is "" peers: anyone.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
OPERATORS = {"In": "in", "NotIn": "notin"}


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def selector_text(selector: Any) -> str:
    """A LabelSelector as kubectl prints one: matchLabels, then matchExpressions."""
    selector = _dict(selector)
    parts = [f"{k}={v}" for k, v in sorted(_dict(selector.get("matchLabels")).items())]
    for expression in _list(selector.get("matchExpressions")):
        expression = _dict(expression)
        key, operator = str(expression.get("key", "")), str(expression.get("operator", ""))
        values = ",".join(str(v) for v in _list(expression.get("values")))
        if operator in OPERATORS:
            parts.append(f"{key} {OPERATORS[operator]} ({values})")
        elif operator == "Exists":
            parts.append(key)
        elif operator == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


def _peer(peer: Any) -> Obj:
    """One `from`/`to` entry: pods (a selector), namespaces (a selector, None: the policy's own),
    or an ipBlock."""
    peer = _dict(peer)
    block = _dict(peer.get("ipBlock"))
    if block:
        return {"cidr": str(block.get("cidr", "")), "except": [str(c) for c in _list(block.get("except"))]}
    pods = selector_text(peer["podSelector"]) if "podSelector" in peer else None
    namespaces = selector_text(peer["namespaceSelector"]) if "namespaceSelector" in peer else None
    return {"pods": pods, "namespaces": namespaces}


def _port(port: Any) -> str:
    """`80/TCP`, `http/TCP` (a named port), `8000-9000/TCP` (endPort), `all/TCP` (no port)."""
    port = _dict(port)
    protocol = str(port.get("protocol") or "TCP")
    number = port.get("port")
    if number is None or number == "":
        return f"all/{protocol}"
    end = port.get("endPort")
    return f"{number}-{end}/{protocol}" if end else f"{number}/{protocol}"


def _rules(rules: Any, peers: str) -> list[Obj]:
    return [{"peers": [_peer(p) for p in _list(_dict(rule).get(peers))],
             "ports": [_port(p) for p in _list(_dict(rule).get("ports"))]} for rule in _list(rules)]


def policy_types(spec: Obj) -> list[str]:
    """The policy's types as stored, else upstream's default."""
    named = [str(t) for t in _list(spec.get("policyTypes")) if t in ("Ingress", "Egress")]
    if named:
        return named
    return ["Ingress", "Egress"] if _list(spec.get("egress")) else ["Ingress"]


def networkpolicy_vm(policy: Obj) -> Obj:
    meta = _dict(policy.get("metadata"))
    spec = _dict(policy.get("spec"))
    namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
    return {"key": f"{namespace}/{name}", "ns": namespace, "name": name,
            "podSelector": selector_text(spec.get("podSelector")), "types": policy_types(spec),
            "ingress": _rules(spec.get("ingress"), "from"), "egress": _rules(spec.get("egress"), "to")}
