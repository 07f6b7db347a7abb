"""Turning an HTTP request into checked values: body, options, selectors, client identity.

Guarantees: every malformed input becomes a BadRequest / UnsupportedMediaType /
RequestEntityTooLarge carrying a clear message; nothing here raises anything else. `Request` is
what the router sees of an HTTP request, `Route` one entry of the hub's routing table. A body is
never decoded over KK_MAX_BODY_BYTES, and YAML only within `control.api.decoding`'s budget (depth,
nodes, aliasing) and without implicit timestamps, so what it yields is always plain JSON; a body
the app decoded off the loop (`control.api.bodies`) is not decoded again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qsl

from django.conf import settings

from control import errors, protocol
from control.api import bodies, decoding, gojson
from control.kinds.base import Kind

PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+cbor": None,
}
FIELD_VALIDATION = ("Strict", "Warn", "Ignore")


@dataclass
class Call:
    """One API request, parsed: what it targets and who makes it."""

    method: str
    kind: Kind
    namespace: str
    name: str
    subresource: str
    query: dict[str, str]
    actor: str
    user: Any = None  # who makes it (control.auth.rbac.User): the traffic record of its watch names them
    accept: str = ""
    content_type: str = ""
    raw_body: bytes = b""
    warnings: list[str] = field(default_factory=list)
    body_dry_run: str = ""  # DeleteOptions carry dryRun in the body
    decoded: Any = None  # the body as control.api.bodies decoded it off the loop (None: decode here)
    # Admission that must see the object as stored when the write changes it (NodeRestriction:
    # the pod's node, as upstream's plugins see `GetOldObject()`), run by the handler on what it
    # read inside the write's transaction; `stored_checked` says it did (control.api.app undoes a
    # write whose handler did not: it fails closed).
    check_stored: Callable[[Any], None] | None = None
    stored_checked: bool = False

    def admit_stored(self, current: Any) -> None:
        """Run `check_stored` on the object this write changes (None: the write would create it)."""
        if self.check_stored is not None:
            self.stored_checked = True
            self.check_stored(current)

    @property
    def dry_run(self) -> bool:
        value = self.query.get("dryRun", "") or self.body_dry_run
        if value not in ("", "All"):
            raise errors.invalid("CreateOptions", "meta.k8s.io", "", [{
                "reason": "FieldValueNotSupported", "field": "dryRun",
                "message": f'Unsupported value: "{value}": supported values: "All"'}])
        return value == "All"

    @property
    def field_validation(self) -> str:
        value = self.query.get("fieldValidation", "Strict") or "Strict"
        if value not in FIELD_VALIDATION:
            raise errors.invalid("CreateOptions", "meta.k8s.io", "", [{
                "reason": "FieldValueNotSupported", "field": "fieldValidation",
                "message": f'Unsupported value: "{value}": supported values: "Ignore", "Strict", "Warn"'}])
        return value

    def check_options(self) -> None:
        """Refuse unsupported write options before anything else happens."""
        self.dry_run, self.field_validation, self.field_manager  # noqa: B018 - each property validates

    @property
    def field_manager(self) -> str:
        manager = self.query.get("fieldManager", "")
        if len(manager) > 128:
            raise errors.Invalid("fieldManager: Too long: may not be longer than 128 characters")
        # the client's name, not the spoke it is drawn on ("kubectl · alice" manages as "kubectl")
        return manager or self.actor.split(protocol.SPOKE_SEPARATOR)[0].split("/")[0] or "unknown"


class Request:
    """The parts of an HTTP request the hub looks at, and the traffic tag its handler fills in."""

    def __init__(self, scope: dict[str, Any], body: bytes):
        self.method: str = scope["method"]
        self.path: str = scope["path"]
        self.query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        self.headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        self.body = body
        self.actor = client_name(self.headers.get("user-agent", ""))
        self.user: Any = None  # who makes it (control.auth.rbac.User), once the gate let it in
        self.flow: Any = None  # its FlowSchema, priority level and flow (control.api.fairness)
        self.scope_headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
        self.address = str((scope.get("client") or ("",))[0])  # the peer's host, as the server saw it
        self.extensions: dict[str, Any] = scope.get("extensions") or {}
        self.decoded: Any = None  # the body, decoded off the loop (control.api.bodies.predecode)
        self.check_stored: Callable[[Any], None] | None = None  # admission's look at the stored object (the gate's)
        self.tag: dict[str, str] = {"verb": self.method.lower(), "resource": self.path}

    def identified(self, user: Any) -> None:
        """The gate names who asks (before it may refuse them): the traffic record names them too."""
        self.user = user

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()


Handler = Callable[..., Awaitable[Any]]  # (request, **the pattern's named groups) -> Reply | Stream
READS = frozenset({"GET", "HEAD"})


@dataclass(frozen=True)
class Route:
    """One entry of the routing table: a regular expression the whole path must match (its named
    groups become the handler's keyword arguments), the handler, and the methods it answers (any
    other is a 405 Status; None: the handler decides)."""

    pattern: str
    handler: Handler
    methods: frozenset[str] | None = READS

    def __post_init__(self) -> None:
        object.__setattr__(self, "_regex", re.compile(self.pattern))

    def match(self, path: str) -> dict[str, str] | None:
        found = self._regex.fullmatch(path)  # type: ignore[attr-defined]
        return found.groupdict() if found else None


class _Undecodable(Exception):
    """A body that is not the JSON (or YAML) it claims to be; the text is Go's wording."""


def _parse(raw: bytes, content_type: str, decoded: bodies.Decoded | None = None) -> Any:
    """The body's value: the one `bodies.predecode` made off the loop when there is one, else
    decoded here (small JSON; a body that reached a handler without the app's predecoding)."""
    limit = settings.KK_MAX_BODY_BYTES
    if len(raw) > limit:
        raise errors.RequestEntityTooLarge(f"Request entity too large: limit is {limit}")
    if decoded is not None and decoded.media == (content_type or "application/json"):
        if decoded.problem is not None:
            raise _Undecodable(decoded.problem)
        value = decoded.take()
    else:
        outcome = decoding.decode_text(raw, content_type, bodies.budget())
        if outcome.verdict == "too_large":
            raise errors.RequestEntityTooLarge(f"Request entity too large: {outcome.value}")
        if outcome.verdict != "ok":
            raise _Undecodable(outcome.value)
        value = outcome.value
    if "yaml" in content_type:
        if len(value) != 1:
            raise _Undecodable("error converting YAML to JSON: yaml: expected exactly one document, "
                               f"found {len(value)}")
        return value[0]
    return value


def decode(raw: bytes, content_type: str, decoded: bodies.Decoded | None = None) -> Any:
    """Parse a request body (a patch, DeleteOptions) as JSON, or YAML for yaml media types, or
    protobuf: kubectl drain falls back to DELETE with a protobuf DeleteOptions when it cannot evict."""
    if content_type == PROTOBUF and raw:
        return _decode_protobuf(raw)
    if not raw.strip():
        raise errors.BadRequest("the request body is empty")
    try:
        return _parse(raw, content_type, decoded)
    except _Undecodable as exc:
        raise errors.BadRequest(f"the body of the request could not be decoded: {exc}") from None


def decode_object(call: Call, into: str | None = None) -> dict[str, Any]:
    """The object of a create or update; an undecodable body is refused as kube-apiserver refuses
    it (`the object provided is unrecognized (must be of type Pod): ...`). `into` names the type
    when it is not the endpoint's kind (a Scale, a Binding)."""
    media = call.content_type or "application/json"
    if media == PROTOBUF and call.method in ("POST", "PUT"):
        return _decode_protobuf(call.raw_body)
    if media not in ("application/json", "application/yaml", "*/*") and call.method in ("POST", "PUT"):
        raise errors.UnsupportedMediaType('the body of the request was in an unknown format - accepted media types include: application/json, application/yaml')
    try:
        body = _parse(call.raw_body, media, call.decoded)
        if body is None:
            why = f"Object 'Kind' is missing in '{call.raw_body.decode('utf-8', errors='replace')}'"
        elif not isinstance(body, dict):
            why = f"couldn't get version/kind; json parse error: {gojson.unmarshal_error(body)}"
        else:
            return body
    except _Undecodable as exc:
        why = str(exc) if "yaml" in media else f"couldn't get version/kind; {exc}"
    raise errors.BadRequest(f"the object provided is unrecognized (must be of type {into or call.kind.kind}): "
                            f"{why} ({gojson.summary(call.raw_body)})")


PROTOBUF = "application/vnd.kubernetes.protobuf"


def _decode_protobuf(raw: bytes) -> dict[str, Any]:
    """kubectl's typed commands (create namespace/deployment/configmap/service/job, autoscale) and
    drain's DELETE send protobuf."""
    from control.api.protobuf import ProtobufError, ProtobufUnsupported, decode_kubernetes_protobuf

    limit = settings.KK_MAX_BODY_BYTES
    if len(raw) > limit:
        raise errors.RequestEntityTooLarge(f"Request entity too large: limit is {limit}")
    try:
        return decode_kubernetes_protobuf(raw)
    except ProtobufUnsupported as exc:
        raise errors.UnsupportedMediaType(str(exc)) from None
    except ProtobufError as exc:
        raise errors.BadRequest(f"the body of the request could not be decoded: protobuf: {exc}") from None


def check_type_meta(call: Call, obj: dict[str, Any], *, api_version: str | None = None, kind: str | None = None) -> None:
    """apiVersion/kind in a body must match the endpoint; missing ones are filled in."""
    expected_version = api_version or call.kind.api_version
    expected_kind = kind or call.kind.kind
    got_version, got_kind = obj.get("apiVersion"), obj.get("kind")
    for field, value in (("apiVersion", got_version), ("kind", got_kind)):
        if value is not None and not isinstance(value, str):  # Go fails to decode it, so does the hub
            go_type = gojson.unmarshal_error(value, "string").replace("Go value", f"Go struct field .{field}")
            raise errors.BadRequest(f"the object provided is unrecognized (must be of type {expected_kind}): "
                                    f"couldn't get version/kind; json parse error: {go_type} "
                                    f"({gojson.summary(call.raw_body)})")
    if got_version not in (None, "") and got_version != expected_version:
        raise errors.BadRequest(f"the API version in the data ({got_version}) does not match the expected "
                                f"API version ({expected_version})")
    if got_kind not in (None, "") and got_kind != expected_kind:
        raise errors.BadRequest(f"the kind in the data ({got_kind}) does not match the expected kind ({expected_kind})")
    obj["apiVersion"], obj["kind"] = expected_version, expected_kind
    if not isinstance(obj.get("metadata"), dict):
        if obj.get("metadata") is not None:
            raise errors.BadRequest("metadata must be an object")
        obj["metadata"] = {}


_PRODUCT_VERSION = re.compile(r"^v?\d")


def client_name(user_agent: str) -> str:
    """Who is calling, from the User-Agent product: "kubectl", "kube-scheduler", "kubelet/node-1"."""
    first = (user_agent or "").strip().split(" ")[0]
    if not first:
        return "unknown"
    product, _, rest = first.partition("/")
    if product == "OpenAPI-Generator":
        return "python-client"
    if product in ("kubectl", "kubectl.exe", "kubectl-dispatcher"):
        return "kubectl"
    if rest and not _PRODUCT_VERSION.match(rest):
        return f"{product}/{rest}"[:100]
    return product[:100]


def parse_revision(requested: str) -> int:
    """A resourceVersion the client sent, as the revision it names; anything else is a 400."""
    try:
        return int(requested)
    except ValueError:
        raise errors.BadRequest(errors.field_invalid("resourceVersion", requested, "must be an integer")) from None


def int_param(query: dict[str, str], key: str, *, minimum: int = 0) -> int | None:
    value = query.get(key)
    if value in (None, ""):
        return None
    try:
        number = int(value)
    except ValueError:
        raise errors.BadRequest(f'invalid value for {key}: "{value}" is not an integer') from None
    if number < minimum:
        raise errors.BadRequest(f"invalid value for {key}: must be at least {minimum}")
    return number


def bool_param(query: dict[str, str], key: str) -> bool:
    return query.get(key, "").lower() in ("1", "true", "yes")
