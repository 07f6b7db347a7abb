"""The hub's front door: authenticate, impersonate, authorize and restrict one request, before any
handler runs — kube-apiserver's filter chain (WithAuthentication, WithImpersonation,
WithAuthorization) and the RBAC and NodeRestriction admission checks it needs.

Guarantees: `admit(...)` returns the request's user or raises the Status error kube-apiserver
would answer: 401 `Unauthorized` for a token no authenticator accepts, 403 Forbidden with the
apiserver's message when RBAC denies (anonymous requests included, as upstream with anonymous
auth on), when impersonation is not allowed, when a Role/binding write would escalate, when a
node writes another node's Node or pods, and when a CSR is approved or signed by someone the
signer's rights do not name (`control.auth.signers`). Sending Service traffic through the hub
(`POST /kubekitchen/traffic`) is the nodes' own path, and also what upstream's service proxy is for
everyone else: a request RBAC refuses as a path is asked again as `create` on the `services/proxy`
of the Service its target names (`requestinfo.service_proxy_attributes`), and refused with that
question's message. With authentication off (`control.auth.enabled`) every
request is `system:admin` in `system:masters` and nothing is checked.
"""

from __future__ import annotations

import base64
from typing import Any, Callable

from django.conf import settings

from control import errors
from control.auth import enabled, impersonation, signers
from control.auth.authenticate import MASTER, Authenticator
from control.auth.policystore import cache
from control.auth.rbac import Attributes, Policy, User, escalation_message, forbidden_message, missing_rules, qualified
from control.auth.requestinfo import attributes, service_proxy_attributes
from control.storage import store
from control.storage.db import run_db

_authenticator: Authenticator | None = None
RBAC_GROUP = "rbac.authorization.k8s.io"
ROLE_RESOURCES = ("roles", "clusterroles")
BINDING_RESOURCES = ("rolebindings", "clusterrolebindings")
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def authenticator() -> Authenticator:
    global _authenticator
    if _authenticator is None or _authenticator.folder != settings.DATA_DIR:
        _authenticator = Authenticator(settings.DATA_DIR)
    return _authenticator


def _lookup(resource: str, namespace: str, name: str) -> dict[str, Any] | None:
    try:
        return store.object_get(resource=resource, namespace=namespace, name=name)
    except errors.NotFound:
        return None


def forbidden(user: User, attrs: Attributes) -> errors.Forbidden:
    details: dict[str, Any] = {}
    if attrs.resource_request:
        details = {"group": attrs.api_group, "kind": attrs.resource} if not attrs.name else \
            {"name": attrs.name, "group": attrs.api_group, "kind": attrs.resource}
    return errors.Forbidden(forbidden_message(user, attrs), details=details or None)


def _values(headers: list[tuple[bytes, bytes]], name: bytes) -> list[str]:
    return [v.decode("latin-1").strip() for k, v in headers if k.lower() == name]


BEARER_PROTOCOL = "base64url.bearer.authorization.k8s.io."


def websocket_bearer(headers: list[tuple[bytes, bytes]]) -> str:
    """upstream's websocket protocol authenticator (apiserver/pkg/authentication/request/websocket):
    a browser cannot set Authorization on a WebSocket, so it offers the subprotocol
    `base64url.bearer.authorization.k8s.io.<base64url(token)>`; "" when none is offered."""
    for value in _values(headers, b"sec-websocket-protocol"):
        for offered in value.split(","):
            offered = offered.strip()
            if offered.startswith(BEARER_PROTOCOL):
                encoded = offered[len(BEARER_PROTOCOL):]
                try:
                    token = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
                except (ValueError, UnicodeDecodeError):
                    return "Bearer invalid"  # an undecodable token is refused (401), never ignored
                return f"Bearer {token}"
    return ""


async def authenticate(headers: list[tuple[bytes, bytes]], client_chain: tuple[str, ...] = ()) -> User:
    """`client_chain`: the TLS client's certificates (PEM, leaf first), when it sent any."""
    authorization = (_values(headers, b"authorization") or [""])[0] or websocket_bearer(headers)
    if "." in authorization:  # maybe a ServiceAccount JWT: its bound objects are read from the store
        return await run_db(authenticator().user, authorization, _lookup, client_chain)
    return authenticator().user(authorization, _lookup, client_chain)


async def impersonate(user: User, headers: list[tuple[bytes, bytes]], policy: Policy) -> User:
    """upstream filters/impersonation.go (`control.auth.impersonation`)."""
    return impersonation.act_as(user, headers, policy.allowed)


def _decoded(body: bytes, content_type: str, decoded: Any = None) -> Any:
    """The object a write carries, for the checks that read it: the one `control.api.bodies`
    decoded off the loop, else (a small JSON body) decoded here; None when undecodable (the
    handler answers the 400)."""
    from control.api import bodies, request  # the hub's own bounded decoding

    if decoded is not None:
        return bodies.single_object(decoded)
    try:
        return request.decode(body, content_type or "application/json")
    except errors.ApiError:
        return None


def check_escalation(user: User, attrs: Attributes, obj: Any, policy: Policy, whole: bool | None = None) -> None:
    """upstream's role and binding strategies: a Role's rules must be held by the writer unless it
    may `escalate`; a binding's role must be held unless the writer may `bind` it. `whole`: the body
    states the object's rules or roleRef as they will be (a create, an update, a server-side apply,
    whose `rules` list is atomic); a merge or JSON patch does not, and needs `escalate`/`bind`."""
    if whole is None:
        whole = attrs.verb != "patch"
    if attrs.api_group != RBAC_GROUP or attrs.subresource or attrs.verb not in ("create", "update", "patch"):
        return
    if attrs.resource not in ROLE_RESOURCES + BINDING_RESOURCES or "system:masters" in user.groups:
        return
    namespace = attrs.namespace
    name = attrs.name or (obj.get("metadata") or {}).get("name", "") if isinstance(obj, dict) else attrs.name
    if attrs.resource in ROLE_RESOURCES:
        if policy.allowed(user, Attributes("escalate", True, RBAC_GROUP, attrs.resource, namespace=namespace,
                                           name=name)):
            return
        wanted = (obj.get("rules") or []) if isinstance(obj, dict) and whole else None
    else:
        ref = obj.get("roleRef") if isinstance(obj, dict) else None
        if not isinstance(ref, dict):
            ref = None
        if ref and policy.allowed(user, Attributes("bind", True, RBAC_GROUP, "clusterroles" if ref.get("kind") ==
                                                   "ClusterRole" else "roles", namespace=namespace,
                                                   name=ref.get("name", ""))):
            return
        wanted = policy.role_rules(ref, namespace) if ref and whole else None
    held = list(policy.rules_for(user, namespace))
    missing = missing_rules(held, wanted) if isinstance(wanted, list) else [
        {"apiGroups": [RBAC_GROUP], "resources": [attrs.resource], "verbs": ["escalate" if attrs.resource in
                                                                             ROLE_RESOURCES else "bind"]}]
    if missing:
        raise errors.Forbidden(f"{qualified(attrs.resource, attrs.api_group, name)} is forbidden: "
                               + escalation_message(user, missing),
                               details={"name": name, "group": attrs.api_group, "kind": attrs.resource})


def _node_restricted(user: User, attrs: Attributes) -> bool:
    """Whether NodeRestriction looks at this request at all: a node's write of a core resource."""
    return "system:nodes" in user.groups and user.name.startswith("system:node:") and attrs.resource_request \
        and not attrs.api_group and attrs.verb in ("create", "update", "patch", "delete")


def node_reads_object(user: User, attrs: Attributes) -> bool:
    """Whether `check_node` reads the written object for this request (a Node named only in its
    body, a pod a node creates); for every other request it decides from the URL and the store."""
    if not _node_restricted(user, attrs):
        return False
    if attrs.resource == "nodes":
        return not attrs.name
    return attrs.resource == "pods" and attrs.subresource in ("", "status") and attrs.verb == "create"


StoredCheck = Callable[[Any], None]  # the stored object a write changes (None: it creates one) -> raise to refuse


def check_node(user: User, attrs: Attributes, obj: Any) -> StoredCheck | None:
    """The NodeRestriction admission plugin: a node writes only its own Node and its own pods.
    `obj` is read only where `node_reads_object` says so. A write of an existing pod is judged by
    the pod as stored, which only its handler reads, in the write's transaction (upstream looks
    at the update's old object): that check is returned, for the handler to run."""
    if not _node_restricted(user, attrs):
        return None
    node = user.name.removeprefix("system:node:")

    def refuse(why: str) -> errors.Forbidden:
        return errors.Forbidden(f"{qualified(attrs.resource, '', attrs.name)} is forbidden: {why}",
                                details={"name": attrs.name, "kind": attrs.resource})

    if attrs.resource == "nodes":
        target = attrs.name or (obj.get("metadata") or {}).get("name", "") if isinstance(obj, dict) else attrs.name
        if target != node:
            raise refuse(f'node "{node}" is not allowed to modify node "{target}"')
    elif attrs.resource == "pods" and attrs.subresource in ("", "status"):
        if attrs.verb == "create":
            spec = (obj or {}).get("spec") if isinstance(obj, dict) else None
            annotations = ((obj or {}).get("metadata") or {}).get("annotations") or {} if isinstance(obj, dict) else {}
            if MIRROR_ANNOTATION not in annotations:
                raise refuse(f'pod does not have "{MIRROR_ANNOTATION}" annotation, node "{node}" can only '
                             "create mirror pods")
            if not isinstance(spec, dict) or spec.get("nodeName") != node:
                raise refuse(f'node "{node}" can only create pods with spec.nodeName set to itself')
            return None
        if not attrs.name:
            return None

        def own_pod(stored: Any) -> None:
            if stored is None:  # an apply that would create it: only a create may, by the rules above
                raise refuse(f'node "{node}" can only create pods with spec.nodeName set to itself')
            if (stored.get("spec") or {}).get("nodeName") != node:
                action = "delete pods" if attrs.verb == "delete" else "update pod status for pods"
                raise refuse(f'node "{node}" can only {action} with spec.nodeName set to itself')
        return own_pod
    return None


async def admit(method: str, path: str, query: dict[str, str], headers: list[tuple[bytes, bytes]],
                body: bytes = b"", content_type: str = "",
                identified: Callable[[User], None] | None = None, check_object: bool = True,
                client_chain: tuple[str, ...] = ()) -> User:
    """The user a request is made by, once every check passed. `identified` hears who is asking as
    soon as that is known (the authenticated user, then the user it acts as), also when a later
    check refuses the request: the traffic record of a 403 names its user. With `check_object`
    False the checks that need the body are left to a later `check_body` (the app decodes the body
    off the loop first, and only for a request RBAC let in). `client_chain`: the certificates the
    TLS client presented (ASGI's `tls` extension), for the x509 authenticator."""
    if not enabled():
        return MASTER
    user = await authenticate(headers, client_chain)
    if identified is not None:
        identified(user)
    policy = await cache().current()
    user = await impersonate(user, headers, policy)
    if identified is not None:
        identified(user)
    attrs = attributes(method, path, query)
    if not policy.allowed(user, attrs):
        # One path, two doors: the nodes' non-resource rule (kubekitchen:node-network), and for a
        # person the Service's own `services/proxy`, as upstream's service proxy is authorized; a
        # refusal then names the resource question, the one the person could be granted.
        attrs = service_proxy_attributes(method, path, query) or attrs
        if not attrs.resource_request or not policy.allowed(user, attrs):
            raise forbidden(user, attrs)
    if check_object and await check_body(user, method, path, query, body, content_type) is not None:
        # only the API's handlers run a check of the stored object (control.api.app): fail closed
        raise errors.InternalError("this write needs a check of the stored object that nothing here makes")
    return user


async def check_body(user: User, method: str, path: str, query: dict[str, str], body: bytes, content_type: str,
                     decoded: Any = None) -> StoredCheck | None:
    """The checks that need the object a write carries (RBAC escalation, NodeRestriction), once
    `admit` let the request in: the hub decodes a body only after the checks that need none passed.
    `decoded` is the body as `control.api.bodies` decoded it, when it did. Returns the check the
    handler must make on the stored object it writes (`check_node`'s), if there is one."""
    if not enabled() or getattr(decoded, "problem", None) is not None:
        return None  # an undecodable body: the handler answers its 400, as kube-apiserver decodes before admission
    attrs = attributes(method, path, query)
    if attrs.resource_request and attrs.verb in ("create", "update", "patch", "delete"):
        reads_object = (attrs.api_group == RBAC_GROUP and attrs.resource in ROLE_RESOURCES + BINDING_RESOURCES) \
            or node_reads_object(user, attrs) or (attrs.resource == signers.RESOURCE and attrs.subresource == "status")
        # only these checks read it: no other body is unpacked here (a kubelet's pod status, event
        # or token request is decoded once, by its handler)
        obj = _decoded(body, content_type, decoded) if body and reads_object and attrs.verb != "delete" else None
        policy = await cache().current()
        applied = (content_type or "").split(";")[0].strip().lower() == "application/apply-patch+yaml"
        check_escalation(user, attrs, obj, policy, whole=attrs.verb != "patch" or applied)
        stored_check = check_node(user, attrs, obj)
        await signers.check(user, attrs, obj, policy,
                            lambda name: run_db(_lookup, signers.STORE_RESOURCE, "", name))
        return stored_check
    return None


async def sends_as_service_proxy(user: User, method: str, path: str, query: dict[str, str]) -> bool:
    """Whether an admitted traffic run came in through the service proxy's door alone (the user
    may not use the path itself, as a node or a cluster admin may): such a run must stay in the
    namespace it was authorized for, and within the bounds a person's run gets
    (`control.api.extras.services`)."""
    if not enabled():
        return False
    return not (await cache().current()).allowed(user, attributes(method, path, query))


async def allowed(user: User, attrs: Attributes) -> bool:
    """For the access reviews: what RBAC says of `attrs` for `user`."""
    return (await cache().current()).allowed(user, attrs)
