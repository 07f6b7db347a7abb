"""What a request asks, as upstream's `RequestInfoFactory` (apiserver/pkg/endpoints/request) reads
it from the method and path alone: the authorizer's attributes.

Guarantees: `/api/v1/...` and `/apis/GROUP/VERSION/...` are resource requests (namespace, resource,
name, subresource; `namespaces/NS/status|finalize` are the namespace's own subresources); the verb
is get/list/watch (GET with `watch=true`, or a list or get filtered to one name by `fieldSelector`
is a watch/list as upstream), create/update/patch/delete/deletecollection; everything else
(`/healthz`, `/api`, `/apis/apps`, `/kubekitchen/...`) is a non-resource request whose verb is the
method in lower case (`get` for HEAD). The answer depends on the method, the path and two query
values (`watch`, `fieldSelector`) alone; it is immutable and kept for the paths met lately (a
request asks for it up to four times: authorization, its body checks, fairness, its traffic record).

`service_proxy_attributes` names the second question the gate asks of one kitchen path: sending
Service traffic (`POST /kubekitchen/traffic` without a `source`) is, for anyone but a node, what
upstream's `POST /api/v1/namespaces/NS/services/NAME/proxy` is (verb `create`, resource `services`,
subresource `proxy`): it is asked only of a target that names one Service (`name`, or its DNS name
`name.ns`, `name.ns.svc`, `name.ns.svc.cluster.local`: the namespace is the one the name says), never
of an address, which names no Service of any one namespace.
"""

from __future__ import annotations

import functools
import re

from control.auth.rbac import Attributes
from control.kinds.network import CLUSTER_DOMAIN

NAMESPACE_SUBRESOURCES = ("status", "finalize")
WATCH = ("1", "true", "True")
_BY_METHOD = {"POST": "create", "PUT": "update", "PATCH": "patch"}
TRAFFIC_PATH = "/kubekitchen/traffic"
_LABEL = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
# A Service's name and, when the target says it, its namespace: the DNS names kube-proxy resolves
# to that Service (control.kinds.dns.split_name); a trailing dot as a resolver allows it.
_SERVICE_TARGET = re.compile(rf"^(?P<name>[a-z]([-a-z0-9]{{0,61}}[a-z0-9])?)"
                             rf"(\.(?P<namespace>{_LABEL})(\.svc(\.{re.escape(CLUSTER_DOMAIN)})?)?)?\.?$")


def attributes(method: str, path: str, query: dict[str, str]) -> Attributes:
    return _attributes(method, path, query.get("watch"), query.get("fieldSelector", ""))


@functools.lru_cache(maxsize=4096)
def _attributes(method: str, path: str, watch: str | None, selector: str) -> Attributes:
    parts = [p for p in path.strip("/").split("/") if p]
    non_resource = Attributes(verb="get" if method == "HEAD" else method.lower(), resource_request=False, path=path)
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, rest = parts[1], parts[3:]
    else:
        return non_resource
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if method in ("GET", "HEAD"):
        verb = "get" if name else "list"
        if watch in WATCH:
            verb = "watch"
    elif method == "DELETE":
        verb = "delete" if name else "deletecollection"
    else:
        verb = _BY_METHOD.get(method, method.lower())
    if verb in ("list", "watch") and not name:
        for term in selector.split(","):
            key, _, value = term.partition("=")
            if key.strip() == "metadata.name" and value and not value.startswith("="):
                name = value.strip()
    return Attributes(verb=verb, resource_request=True, api_group=group, resource=resource, subresource=subresource,
                      namespace=namespace, name=name, path=path)


def service_proxy_attributes(method: str, path: str, query: dict[str, str]) -> Attributes | None:
    """The resource attributes of a traffic run sent to one Service: `create` on the
    `services/proxy` subresource of the Service its `target` names, in the namespace the target's
    DNS name says, else the `namespace` parameter (default "default") — as upstream authorizes
    `POST .../namespaces/NS/services/NAME/proxy`, whose editors (edit, admin) hold it. None for any
    other request: another path or method, a run that names a `source` pod (only that pod's node
    may, `control.api.extras.services.check_source`), or a target that is an address or no Service
    name (an IP may be another namespace's Service, or a pod: only the node's right covers it)."""
    if method != "POST" or path.rstrip("/") != TRAFFIC_PATH or query.get("source"):
        return None
    match = _SERVICE_TARGET.match(query.get("target", "").strip().lower())
    if match is None:
        return None
    namespace = match["namespace"] or query.get("namespace") or "default"
    return Attributes(verb="create", resource_request=True, resource="services", subresource="proxy",
                      namespace=namespace, name=match["name"], path=path)
