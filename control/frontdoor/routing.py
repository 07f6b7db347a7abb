"""Which backend answers a request at the front door: the Ingresses of one class as ingress-nginx
turns them into nginx servers and locations, as values.

Guarantees (pure: no I/O, no clock):
- `handles(ingress, classes, controller)` is ingress-nginx's class filter: an Ingress is ours when
  `spec.ingressClassName` (or, without one, the `kubernetes.io/ingress.class` annotation) names an
  IngressClass whose `spec.controller` is `controller`; one that names no class at all is ours
  when one of our classes is the default (`ingressclass.kubernetes.io/is-default-class: "true"`).
- `build(ingresses)` merges the rules of every Ingress given (oldest first, then namespace/name,
  so the first writer of a host+path keeps it as ingress-nginx does) into one `Routes` value:
  one server per host, the catch-all server `_` for rules without a host.
- `Routes.match(host, path)`: the host is compared without its port and case-insensitively; an
  exact host server wins over a wildcard one (`*.example.com` matches exactly one more DNS label,
  as the Ingress API defines it); a host no server has goes to the catch-all server. Inside a
  server the longest matching path wins; on equal length Exact beats Prefix beats
  ImplementationSpecific. `Exact` is string equality; `Prefix` matches element-wise (`/soup`
  matches `/soup`, `/soup/` and `/soup/x`, never `/soups`; a trailing `/` of the rule is
  ignored; `/` matches everything); `ImplementationSpecific` is nginx's plain location prefix
  (regex-less ingress-nginx): a string prefix (`/soup` matches `/soups`). No path matching: the
  server's default backend — the `spec.defaultBackend` of the Ingress that made the server (for
  the catch-all server: of the oldest Ingress with one) — else None (the controller's own 404).
- `Routes.route(host, target)` is `match` plus the request target the backend sees: the same,
  unless the Ingress has ingress-nginx's `nginx.ingress.kubernetes.io/rewrite-target` annotation:
  then the rule's path is a case-insensitive regular expression (as ingress-nginx's implied
  use-regex: an ImplementationSpecific path also matches as one) searched from the start of the path, and the path becomes the annotation's value with
  `$1`…`$9` replaced by its groups (kubernetes.io's minimal-ingress: `/testpath` and
  `/testpath/x` reach the backend as `/`); the query string is kept. A path that is not a valid
  regular expression is passed unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from control.kinds.ingressclasses import DEFAULT_CLASS_ANNOTATION
from control.kinds.ingresses import CLASS_ANNOTATION
from control.kinds.meta import parse_time

Obj = dict[str, Any]
CATCH_ALL = "_"  # nginx's name of the default server
# on equal path length, the kind of match that wins (nginx's `location =` before prefix locations)
PATH_RANK = {"Exact": 0, "Prefix": 1, "ImplementationSpecific": 2}
REWRITE_ANNOTATION = "nginx.ingress.kubernetes.io/rewrite-target"
_GROUP = re.compile(r"\$(\d)")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


@dataclass(frozen=True)
class Backend:
    """A Service port an Ingress names: `port` is a number or a port name."""
    namespace: str
    service: str
    port: int | str
    ingress: str = ""  # namespace/name of the Ingress that chose it

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.service}"


@dataclass(frozen=True)
class PathRule:
    path: str
    path_type: str
    backend: Backend
    rewrite: str = ""  # the Ingress's rewrite-target annotation, if any

    def rewritten(self, path: str) -> str:
        """The path the backend sees (ingress-nginx's `rewrite "(?i)<path>" <target> break;`)."""
        if not self.rewrite:
            return path
        try:
            found = re.match("(?i)" + self.path, path)
        except re.error:
            return path
        if found is None:
            return path
        groups = found.groups()
        return _GROUP.sub(lambda m: (groups[int(m.group(1)) - 1] or "") if 0 < int(m.group(1)) <= len(groups) else "",
                          self.rewrite)

    def matches(self, path: str) -> bool:
        if self.path_type == "Exact":
            return path == self.path
        if self.path_type == "Prefix":
            rule = self.path.rstrip("/")
            return rule == "" or path == rule or path.startswith(rule + "/")
        if self.rewrite:  # ingress-nginx's implied use-regex: the location is `~* "^<path>"`
            try:
                return re.match("(?i)" + self.path, path) is not None
            except re.error:
                pass
        return path.startswith(self.path)

    def order(self) -> tuple[int, int]:
        """Sort key: the longest path first, then Exact, Prefix, ImplementationSpecific."""
        length = len(self.path.rstrip("/")) if self.path_type == "Prefix" else len(self.path)
        return -length, PATH_RANK.get(self.path_type, 3)


@dataclass
class Server:
    host: str
    paths: list[PathRule] = field(default_factory=list)
    default: Backend | None = None

    def match(self, path: str) -> Backend | None:
        rule = self.rule_for(path)
        return rule.backend if rule is not None else self.default

    def rule_for(self, path: str) -> PathRule | None:
        for rule in self.paths:  # kept sorted: the first match is the longest
            if rule.matches(path):
                return rule
        return None


@dataclass(frozen=True)
class Routes:
    servers: Mapping[str, Server]

    def server_for(self, host: str) -> Server | None:
        host = strip_port(host).lower()
        server = self.servers.get(host)
        if server is None and "." in host:
            server = self.servers.get("*." + host.split(".", 1)[1])
        return server or self.servers.get(CATCH_ALL)

    def match(self, host: str, path: str) -> Backend | None:
        server = self.server_for(host)
        return server.match(path or "/") if server is not None else None

    def route(self, host: str, target: str) -> tuple[Backend | None, str]:
        """The backend for a request target (path and query) and the target it sees (`rewritten`)."""
        path, mark, query = target.partition("?")
        server = self.server_for(host)
        if server is None:
            return None, target
        rule = server.rule_for(path or "/")
        if rule is None:
            return server.default, target
        return rule.backend, rule.rewritten(path or "/") + mark + query

    def hosts(self) -> list[str]:
        return sorted(h for h in self.servers if h != CATCH_ALL)


EMPTY = Routes({})


def strip_port(host: str) -> str:
    """`menu.example:8080` -> `menu.example`; an IPv6 literal keeps its brackets off."""
    host = host.strip()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def backend_of(value: Any, namespace: str, ingress: str) -> Backend | None:
    service = _dict(_dict(value).get("service"))
    port = _dict(service.get("port"))
    name = service.get("name")
    number, port_name = port.get("number"), port.get("name")
    if not isinstance(name, str) or not name:
        return None  # a resource backend: nothing the front door can send to
    if isinstance(number, int) and not isinstance(number, bool):
        return Backend(namespace, name, number, ingress)
    if isinstance(port_name, str) and port_name:
        return Backend(namespace, name, port_name, ingress)
    return None


def _age_key(ing: Obj) -> tuple[float, str, str]:
    meta = _dict(ing.get("metadata"))
    return parse_time(meta.get("creationTimestamp")) or 0.0, str(meta.get("namespace", "")), str(meta.get("name", ""))


def build(ingresses: Iterable[Obj]) -> Routes:
    servers: dict[str, Server] = {}
    seen: set[tuple[str, str, str]] = set()
    for ing in sorted(ingresses, key=_age_key):
        meta, spec = _dict(ing.get("metadata")), _dict(ing.get("spec"))
        namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
        key = f"{namespace}/{name}"
        default = backend_of(spec.get("defaultBackend"), namespace, key)
        rewrite = _dict(meta.get("annotations")).get(REWRITE_ANNOTATION)
        rewrite = rewrite if isinstance(rewrite, str) else ""
        for rule in _list(spec.get("rules")):
            rule = _dict(rule)
            host = str(rule.get("host") or CATCH_ALL).lower()
            server = servers.get(host)
            if server is None:
                server = servers[host] = Server(host, default=default)
            for item in _list(_dict(rule.get("http")).get("paths")):
                item = _dict(item)
                backend = backend_of(item.get("backend"), namespace, key)
                path_type = str(item.get("pathType") or "ImplementationSpecific")
                path = str(item.get("path") or "/")
                if backend is None or (host, path, path_type) in seen:
                    continue
                seen.add((host, path, path_type))
                server.paths.append(PathRule(path, path_type, backend, rewrite))
        if default is not None:
            catch_all = servers.setdefault(CATCH_ALL, Server(CATCH_ALL))
            if catch_all.default is None:
                catch_all.default = default
    for server in servers.values():
        server.paths.sort(key=PathRule.order)
    return Routes(servers)


def class_of(ing: Obj) -> str | None:
    """The class an Ingress names: `spec.ingressClassName`, else the old annotation, else None."""
    named = _dict(ing.get("spec")).get("ingressClassName")
    if isinstance(named, str) and named:
        return named
    annotated = _dict(_dict(ing.get("metadata")).get("annotations")).get(CLASS_ANNOTATION)
    return annotated if isinstance(annotated, str) and annotated else None


def our_classes(classes: Iterable[Obj], controller: str) -> dict[str, Obj]:
    return {str(_dict(c.get("metadata")).get("name")): c for c in classes
            if _dict(c.get("spec")).get("controller") == controller}


def handles(ing: Obj, classes: Mapping[str, Obj]) -> bool:
    """Whether an Ingress is served by the controller whose classes are `classes` (`our_classes`)."""
    named = class_of(ing)
    if named is not None:
        return named in classes
    return any(_dict(_dict(c.get("metadata")).get("annotations")).get(DEFAULT_CLASS_ANNOTATION) == "true"
               for c in classes.values())
