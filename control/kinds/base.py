"""What the hub knows about one kind: names, scope, subresources, defaults, validation, printing.

Guarantees: a `Kind` is pure data plus pure functions; nothing here touches the store or HTTP,
so spokes may import it for helpers (names, label matching) without reaching past the hub.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from control.errors import go_value
from control.kinds.connect import Connect
from control.kinds.strategy import IMMEDIATE, Action, Allocator, Deletion, FieldReport, Lookup, Policy
from control.kinds.meta import age

Obj = dict[str, Any]
Cause = dict[str, str]

DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


@dataclass(frozen=True)
class Column:
    name: str
    type: str = "string"
    format: str = ""
    description: str = ""
    priority: int = 0

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "format": self.format,
                "description": self.description or self.name, "priority": self.priority}


NAME_COLUMN = Column("Name", format="name", description="Name must be unique within a namespace.")
AGE_COLUMN = Column("Age", description="CreationTimestamp is a timestamp representing the server time "
                    "when this object was created.")


@dataclass(frozen=True)
class ScaleSpec:
    """Where a kind keeps what the `scale` subresource reads and writes."""

    selector: Callable[[Obj], str]
    spec_replicas_path: str = ".spec.replicas"  # custom kinds name their own paths (CRD scale subresource)
    status_replicas_path: str = ".status.replicas"


def _no_defaults(obj: Obj) -> None:
    return None


def _no_causes(obj: Obj) -> list[Cause]:
    return []


def _no_update_causes(new: Obj, old: Obj) -> list[Cause]:
    return []


def _nothing_to_prepare(obj: Obj) -> None:
    return None


def _nothing_to_carry(new: Obj, old: Obj) -> None:
    return None


def spec_changed(new: Obj, old: Obj) -> bool:
    """The ordinary kind's generation rule: only a change of `spec` bumps metadata.generation."""
    return new.get("spec") != old.get("spec")


def subdomain_name(name: Any) -> list[Cause]:
    return name_causes(name)


def label_name(name: Any) -> list[Cause]:
    return name_causes(name, label=True)


def reset_status(obj: Obj) -> None:
    """The usual PrepareForCreate: status is written by controllers, never by the creating client."""
    obj["status"] = {}


def reset_status_to_zero(*fields: str) -> Callable[[Obj], None]:
    """PrepareForCreate for a kind whose status has integer fields Go always renders (no `omitempty`):
    they start at 0, as kube-apiserver answers, and clients that require them (the official Python
    client's models do) can read the object before its controller has written a status."""
    def reset(obj: Obj) -> None:
        obj["status"] = dict.fromkeys(fields, 0)
    return reset


@dataclass(frozen=True)
class Kind:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    definition: str  # OpenAPI component name, e.g. "io.k8s.api.core.v1.Pod"
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()  # of "status", "scale", "binding", "log", and the names in `actions`
    defaults: Callable[[Obj], None] = _no_defaults
    validate: Callable[[Obj], list[Cause]] = _no_causes
    validate_update: Callable[[Obj, Obj], list[Cause]] = _no_update_causes
    columns: tuple[Column, ...] = (NAME_COLUMN, AGE_COLUMN)
    cells: Callable[[Obj, float], list[Any]] | None = None
    field_getters: dict[str, Callable[[Obj], str]] = field(default_factory=dict)
    scale: ScaleSpec | None = None
    has_spec: bool = False  # whether the kind keeps metadata.generation (bumped by spec changes)
    # Custom kinds (served from a CustomResourceDefinition): the CRD's name, the version's
    # openAPIV3Schema, names the CRD may choose, and how a stored object is shown on reads
    # (apiVersion of the requested version, schema defaults).
    crd: str = ""
    schema: dict[str, Any] | None = None
    singular_name: str = ""
    list_kind_name: str = ""
    on_read: Callable[[Obj], Obj] | None = None
    # The write strategy (kube-apiserver's RESTCreateStrategy/RESTUpdateStrategy/RESTDeleteStrategy),
    # asked by the hub's write path instead of it knowing any kind:
    # - `name_rule`: the causes for a bad metadata.name (DNS-1123 subdomain unless the kind says so);
    # - `prepare_for_create`: what a create resets before defaulting (status users may not set);
    # - `prepare_for_update(new, old)`: what an update keeps or derives from the stored object;
    # - `generation_changed(new, old)`: whether a write bumps metadata.generation (with `has_spec`);
    # - `allow_create_on_update`: a PUT of a missing object creates it;
    # - `deletion`, `allocator`, `bind`: see control.kinds.strategy; `bind(pod, node, stamp)`
    #   assigns the object to a node (the binding subresource) or returns why it cannot (409).
    name_rule: Callable[[Any], list[Cause]] = subdomain_name
    prepare_for_create: Callable[[Obj], None] = _nothing_to_prepare
    prepare_for_update: Callable[[Obj, Obj], None] = _nothing_to_carry
    generation_changed: Callable[[Obj, Obj], bool] = spec_changed
    allow_create_on_update: bool = False
    deletion: Deletion = IMMEDIATE
    allocator: Allocator | None = None
    bind: Callable[[Obj, str, str], str] | None = None
    # the binding subresource's body check (a Binding's target), the kind's own rules
    validate_binding: Callable[[Obj], list[Cause]] | None = None
    # where its connect subresources (log, exec, attach, portforward) go: see control.kinds.connect
    connect: Connect | None = None
    # the `finalize` subresource (a Namespace's spec.finalizers): copies what it may change from
    # the written object onto a copy of the stored one
    finalize: Callable[[Obj, Obj], None] | None = None
    # Subresources written with PUT/PATCH whose strategy is the kind's own (a CSR's `status` and
    # `approval`): `update(stored, written, now)` returns the object to store (made from a copy of
    # the stored one and the written one; `now` is the write's time, RFC 3339) and its validation
    # causes, which stand in for `validate_update` on that subresource.
    subresource_updates: dict[str, Callable[[Obj, Obj, str], tuple[Obj, list[Cause]]]] = \
        field(default_factory=dict)
    # Records on create who asks, as a CSR's spec.username/uid/groups/extra (`requester(obj, user)`,
    # `user` the authentication.k8s.io UserInfo of the request's user).
    requester: Callable[[Obj, dict[str, Any]], None] | None = None
    # Admission (kube-apiserver's mutating admission plugins for this kind): `admit(obj, lookup)`
    # runs on create once the object is defaulted, may change it and may read other stored objects
    # through `lookup`; it returns why the object is refused (403 Forbidden) or "".
    admit: Callable[[Obj, Lookup], str] | None = None
    # Admission this kind's objects impose on writes of every kind (see `control.kinds.strategy.Policy`).
    policy: Policy | None = None
    # Subresources the kind answers itself on POST (see `control.kinds.strategy.Action`).
    actions: dict[str, Action] = field(default_factory=dict)
    # How a request's object is decoded: by the built-in schema named `definition` unless the kind
    # brings its own (a custom kind: its version's openAPIV3Schema); and whether it takes strategic
    # merge patches (custom kinds do not, as upstream).
    fields: Callable[[Obj], FieldReport] | None = None
    merges_strategically: bool = True
    # Served versions (kube-apiserver's conversion to and from the storage version): a kind lists
    # the other versions it is served in (`other_versions`: each a Kind of the same plural, in its
    # group or another one as events.k8s.io serves core Events, whose `on_read` converts a stored
    # object to it and `to_storage` a written one back, kept where `stored_as` keeps them). The
    # registry serves them; everything else (controllers, snapshot, RBAC) sees the stored kind.
    other_versions: tuple["Kind", ...] = ()
    to_storage: Callable[[Obj], Obj] | None = None
    stored_as: "Kind | None" = None

    def served_as(self, version: str, definition: str, *, on_read: Callable[[Obj], Obj],
                  to_storage: Callable[[Obj], Obj], **changes: Any) -> "Kind":
        """This kind served in another version (of its group unless `group` is among the changes),
        converted on the way in and out, its objects kept as this kind keeps them."""
        return dataclasses.replace(self, version=version, definition=definition, on_read=on_read,
                                   to_storage=to_storage, stored_as=self, other_versions=(), **changes)

    @property
    def custom(self) -> bool:
        return bool(self.crd)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.singular_name or self.kind.lower()

    @property
    def resource(self) -> str:
        """The store's key for this kind: "<group>/<plural>" (a served version's: its stored kind's)."""
        return self.stored_as.resource if self.stored_as is not None else f"{self.group}/{self.plural}"

    @property
    def list_kind(self) -> str:
        return self.list_kind_name or f"{self.kind}List"

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    def field_report(self, obj: Obj) -> FieldReport:
        if self.fields is not None:
            return self.fields(obj)
        from control.kinds import structure  # its schemas import this module's helpers

        decoded = structure.without_nulls(obj)
        problems = structure.check(decoded, self.definition)
        type_errors = [p for p in problems if p.kind == "type"]
        return FieldReport(decoded, structure.message(type_errors, self.kind, self.version) if type_errors else "",
                           [p.path for p in problems if p.kind == "unknown"],
                           lambda: structure.prune(decoded, self.definition))

    def row(self, obj: Obj, now: float) -> list[Any]:
        if self.cells is None:
            return [obj["metadata"]["name"], age(obj, now)]
        return self.cells(obj, now)


def cause(field_path: str, message: str, reason: str = "FieldValueInvalid") -> Cause:
    return {"reason": reason, "message": message, "field": field_path}


def required(field_path: str) -> Cause:
    return cause(field_path, "Required value", "FieldValueRequired")


def name_causes(name: Any, field_path: str = "metadata.name", *, label: bool = False) -> list[Cause]:
    """DNS-1123 subdomain (or label) name rules, with Kubernetes' messages."""
    if not name:
        return [cause(field_path, "Required value: name or generateName is required", "FieldValueRequired")]
    if not isinstance(name, str):
        return [cause(field_path, f"Invalid value: {go_value(name)}: must be a string")]
    limit, pattern, what = (63, DNS1123_LABEL, "RFC 1123 label") if label else (253, DNS1123_SUBDOMAIN, "RFC 1123 subdomain")
    out = []
    if len(name) > limit:
        out.append(cause(field_path, f'Invalid value: {go_value(name)}: must be no more than {limit} characters'))
    if not pattern.match(name):
        example = "'my-name',  or '123-abc'" if label else "'example.com'"
        allowed = "alphanumeric characters or '-'," if label else "alphanumeric characters, '-' or '.',"
        out.append(cause(
            field_path,
            f'Invalid value: {go_value(name)}: a lowercase {what} must consist of lower case {allowed} and must '
            f"start and end with an alphanumeric character (e.g. {example}, regex used for validation is "
            f"'{pattern.pattern[1:-1]}')",
        ))
    return out


def label_causes(labels: Any, field_path: str) -> list[Cause]:
    if labels is None:
        return []
    if not isinstance(labels, dict):
        return [cause(field_path, "Invalid value: must be a map of strings")]
    out = []
    for key, value in labels.items():
        prefix, _, name = key.rpartition("/")
        if (prefix and not DNS1123_SUBDOMAIN.match(prefix)) or not name or len(name) > 63 or not QUALIFIED_NAME.match(name):
            out.append(cause(f"{field_path}", f'Invalid value: {go_value(key)}: name part must consist of alphanumeric '
                             "characters, '-', '_' or '.', and must start and end with an alphanumeric character"))
        if not isinstance(value, str) or len(value) > 63 or not LABEL_VALUE.match(value):
            out.append(cause(f"{field_path}", f'Invalid value: {go_value(value)}: a valid label must be an empty string '
                             "or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                             "with an alphanumeric character"))
    return out


def selector_string(selector: dict[str, Any] | None) -> str:
    """A LabelSelector as the string form Scale.status.selector uses."""
    if not selector:
        return ""
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        op, key, values = expr.get("operator"), expr.get("key"), expr.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


def field_value(obj: Obj, *path: str) -> str:
    """A field as the string a field selector compares against ("" when absent)."""
    value: Any = obj
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)
