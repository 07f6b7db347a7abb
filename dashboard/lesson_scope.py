"""Where a lesson runs: the viewer's namespace, and a lesson step rewritten into it at run time.

Lesson files stay namespace-agnostic ("default", or a namespace of the lesson's own such as the
quota lesson's `diner`); this module moves a step into the viewer's namespace when it is shown,
checked or done.

Guarantees (pure: no I/O, the same input gives the same output):
- `Scope.target(ns)` is where a namespace a lesson names goes: "default" (or none) is always the
  viewer's namespace; a lesson's own namespace is kept only when the viewer may keep it
  (`own_namespaces`, the instructor), else it is the viewer's too (an attendee has one namespace).
- `scoped_check` moves a namespaced check; a check without a namespace (nodes) is left alone.
- `scoped_action` moves an action's namespace and its form's `namespace`, and the namespace a
  Service's DNS name in its form's `target` names (`pasta.default.svc.cluster.local`).
- `scoped_documents` moves every object that names a namespace, and a ServiceAccount subject of a
  (Cluster)RoleBinding; a Namespace object is dropped when the viewer cannot keep the lesson's
  own namespaces (the attendee's namespace already exists and they may not create another).
- `scoped_command` rewrites each `kubectl` of a command line: `-n X`/`--namespace X`,
  `/namespaces/X/` and `system:serviceaccount:X:` go to their target, and when the viewer's
  kubectl would not default to the viewer's namespace (`Scope.kubeconfig_namespace`) a
  `-n <namespace>` is added to every kubectl that names none (and is not `-A`). Text that is not a
  kubectl invocation (another program's own `-n`) is never touched, but for `manage.py traffic`:
  its target's DNS name is moved as the button's is, and a short Service name gets
  `--namespace <namespace>` when the viewer's is not `default` (the command's own default).
- A lesson's example host (`menu.example`, RFC 2606's `.example`) is the viewer's own outside
  `default` (`menu.<namespace>.example`, `scoped_host`): in an Ingress's rules and tls, an
  HTTPRoute's hostnames, a Gateway listener's hostname, a button's form `host` and a command's
  `Host:` header alike; other hosts are never touched.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from dashboard.lessons import Action, Check

DEFAULT = "default"
_SEPARATORS = re.compile(r"(&&|\|\||[|;]|\$\(|\))")  # a command substitution is an invocation of its own
_NAMESPACE_FLAG = re.compile(r"(?P<flag>(?<!\S)(?:-n|--namespace))(?P<sep>[ =])(?P<ns>[a-z0-9][a-z0-9-]*)")
_ALL_NAMESPACES = re.compile(r"(?<!\S)(?:-A|--all-namespaces)(?:=true)?(?!\S)")
_PATH_NAMESPACE = re.compile(r"/namespaces/(?P<ns>[a-z0-9][a-z0-9-]*)/")
_SERVICE_ACCOUNT = re.compile(r"system:serviceaccount:(?P<ns>[a-z0-9][a-z0-9-]*):")
_KUBECTL = re.compile(r"(?<![\w/.-])kubectl(?=\s)")
_TRAFFIC = re.compile(r"(?<![\w/.-])manage\.py\s+traffic\s+(?P<target>\S+)")
# A Service's DNS name: service.namespace, service.namespace.svc, service.namespace.svc.cluster.local
# A lesson's example host (RFC 2606's reserved `.example`), and one named in a Host header.
_EXAMPLE_HOST = re.compile(r"^(?P<name>[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?)\.example$")
_HOST_HEADER = re.compile(r"(?P<head>Host:\s*)(?P<host>[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?\.example)\b")
_SERVICE_DNS = re.compile(r"^(?P<service>[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)\.(?P<ns>[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)"
                          r"(?P<rest>\.svc(?:\.cluster\.local)?)?$")


@dataclass(frozen=True)
class Scope:
    """The viewer's namespace; whether they keep a lesson's own namespaces; the namespace their
    kubectl uses when given none (an attendee's kubeconfig names theirs, the admin's none)."""

    namespace: str = DEFAULT
    own_namespaces: bool = True
    kubeconfig_namespace: str = DEFAULT

    def target(self, namespace: str) -> str:
        if not namespace or namespace == DEFAULT or not self.own_namespaces:
            return self.namespace
        return namespace


def scoped_check(check: Check, scope: Scope) -> Check:
    """A check that names no namespace looks in the viewer's (a lesson file names none); a kind
    that lives at the cluster scope ignores it (`lesson_checks.run_check`)."""
    return dataclasses.replace(check, namespace=scope.target(check.namespace))


def scoped_service(target: str, scope: Scope) -> str:
    """A Service's DNS name with its namespace moved into the scope; a short name or an IP as it is."""
    match = _SERVICE_DNS.match(target)
    if match is None:
        return target
    return f"{match['service']}.{scope.target(match['ns'])}{match['rest'] or ''}"


def scoped_host(host: str, scope: Scope) -> str:
    """A lesson's example host (`menu.example`) made the viewer's own (`menu.<namespace>.example`)
    outside `default`: the front door routes by host, and two attendees' Ingresses for one host
    would be one server (the oldest Ingress answering both). Other hosts are kept."""
    match = _EXAMPLE_HOST.match(host)
    if match is None or scope.namespace == DEFAULT:
        return host
    return f"{match['name']}.{scope.namespace}.example"


def _scoped_hosts(document: dict[str, Any], scope: Scope) -> None:
    """The example hosts of an Ingress (rules, tls) or of a Gateway API route/listener, in place."""
    spec = document.get("spec")
    if not isinstance(spec, dict):
        return
    for rule in spec.get("rules") or [] if document.get("kind") == "Ingress" else []:
        if isinstance(rule, dict) and isinstance(rule.get("host"), str):
            rule["host"] = scoped_host(rule["host"], scope)
    for entry in spec.get("tls") or [] if document.get("kind") == "Ingress" else []:
        if isinstance(entry, dict) and isinstance(entry.get("hosts"), list):
            entry["hosts"] = [scoped_host(h, scope) if isinstance(h, str) else h for h in entry["hosts"]]
    if isinstance(spec.get("hostnames"), list):  # HTTPRoute
        spec["hostnames"] = [scoped_host(h, scope) if isinstance(h, str) else h for h in spec["hostnames"]]
    for listener in spec.get("listeners") or [] if document.get("kind") == "Gateway" else []:
        if isinstance(listener, dict) and isinstance(listener.get("hostname"), str):
            listener["hostname"] = scoped_host(listener["hostname"], scope)


def scoped_action(action: Action, scope: Scope) -> Action:
    def moved(key: str, value: str) -> str:
        if key == "namespace":
            return scope.target(value)
        if key == "host":
            return scoped_host(value, scope)
        return scoped_service(value, scope) if key == "target" else value

    form = tuple((key, moved(key, value)) for key, value in action.form)
    return dataclasses.replace(action, namespace=scope.target(action.namespace), form=form)


def scoped_documents(documents: list[dict[str, Any]], scope: Scope) -> list[dict[str, Any]]:
    """Copies of the manifest's objects, moved into the scope (the input is not changed)."""
    out = []
    for document in documents:
        if document.get("kind") == "Namespace" and document.get("apiVersion") == "v1":
            if scope.own_namespaces:
                out.append(copy.deepcopy(document))
            continue
        moved = copy.deepcopy(document)
        meta = moved.get("metadata")
        if isinstance(meta, dict) and meta.get("namespace"):
            meta["namespace"] = scope.target(str(meta["namespace"]))
        _scoped_hosts(moved, scope)
        if moved.get("kind") in ("RoleBinding", "ClusterRoleBinding"):
            for subject in moved.get("subjects") or []:
                if isinstance(subject, dict) and subject.get("kind") == "ServiceAccount" and subject.get("namespace"):
                    subject["namespace"] = scope.target(str(subject["namespace"]))
        out.append(moved)
    return out


def scoped_command(command: str, scope: Scope) -> str:
    """The command line with each kubectl invocation moved into the scope."""
    if not command:
        return command
    parts = _SEPARATORS.split(command)
    command = "".join(part if _SEPARATORS.fullmatch(part) else _scoped_invocation(part, scope) for part in parts)
    return _HOST_HEADER.sub(lambda m: m["head"] + scoped_host(m["host"], scope), command)


def _scoped_traffic(found: re.Match, scope: Scope) -> str:
    target = scoped_service(found["target"], scope)
    short = _SERVICE_DNS.match(target) is None and not target[:1].isdigit()
    extra = f" --namespace {scope.namespace}" if short and scope.namespace != DEFAULT else ""
    return found[0][:found.start("target") - found.start()] + target + extra


def _scoped_invocation(part: str, scope: Scope) -> str:
    found = _KUBECTL.search(part)
    if found is None:
        return _TRAFFIC.sub(lambda m: _scoped_traffic(m, scope), part) if "--namespace" not in part else part
    head, rest = part[:found.end()], part[found.end():]
    rest = _NAMESPACE_FLAG.sub(lambda m: f"{m['flag']}{m['sep']}{scope.target(m['ns'])}", rest)
    rest = _PATH_NAMESPACE.sub(lambda m: f"/namespaces/{scope.target(m['ns'])}/", rest)
    rest = _SERVICE_ACCOUNT.sub(lambda m: f"system:serviceaccount:{scope.target(m['ns'])}:", rest)
    names_one = _NAMESPACE_FLAG.search(rest) or _ALL_NAMESPACES.search(rest)
    if not names_one and scope.namespace != scope.kubeconfig_namespace:
        head += f" -n {scope.namespace}"
    return head + rest
