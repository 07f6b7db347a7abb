"""The rules every write follows before it reaches the store.

Guarantees:
- `prepare_create` turns a client's object into a storable one: type meta, namespace and name
  (incl. generateName) checked, server metadata set (uid, creationTimestamp, generation), then the
  kind's strategy: prepare for create (status reset), defaults, generic admission (the
  namespace exists and is not terminating: `control.api.admission`), the kind's admission (which may read the store; 403 on refusal), the policies' mutating admission (LimitRange
  defaults), name rule and validation (422 with causes), the policies' validating admission
  (LimitRange bounds, ResourceQuota), allocation; a kind that records its requester (a CSR) is
  told the request's user before defaulting.
- `prepare_update` merges a client's new object onto the stored one: optimistic concurrency
  (409 on a stale resourceVersion), server metadata kept, status kept on main-resource writes
  and spec kept on status writes (shared with the stored object, never changed in place), or the
  kind's own rule for that subresource, then the kind's strategy: defaults, prepare for update,
  generation (bumped when the kind says the write changed it), validation, allocation.
- Nothing here knows a particular kind: every per-kind rule is asked of the `Kind`.
- Unknown fields are refused (fieldValidation=Strict, our default), warned about or dropped, as
  decoding against the kind's schema finds them.
"""

from __future__ import annotations

import copy
import random
import uuid
from typing import Any

from control import errors
from control.storage import store
from control.api import admission, allocation
from control.api.request import Call, check_type_meta
from control.api.patching import patch_meta
from control.api.updates import record_update
from control.auth.authenticate import MASTER, user_info
from control.kinds.base import Kind, Obj, label_causes
from control.kinds.meta import format_time

GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
SERVER_METADATA = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")


def generate_name(base: str) -> str:
    return base[:58] + "".join(random.choice(GENERATE_ALPHABET) for _ in range(5))


def check_fields(call: Call, kind: Kind, obj: Obj) -> Obj:
    """Apply the request's fieldValidation to what decoding as the kind's schema found: a wrong
    type is always a 400; unknown fields are refused (Strict), warned about (Warn) or dropped."""
    report = kind.field_report(obj)
    if report.type_error:
        raise errors.BadRequest(report.type_error)
    if not report.unknown:
        return report.obj
    mode = call.field_validation
    if mode == "Strict":
        if call.content_type == "application/apply-patch+yaml":
            text = (f"failed to create typed patch object ({kind.group}/{kind.version}, Kind={kind.kind}): "
                    + ", ".join(f".{path}: field not declared in schema" for path in report.unknown))
        else:
            text = "strict decoding error: " + ", ".join(f'unknown field "{path}"' for path in report.unknown)
            if call.method in ("POST", "PUT"):
                text = f'{kind.kind} in version "{kind.version}" cannot be handled as a {kind.kind}: {text}'
        raise errors.BadRequest(text)
    if mode == "Warn":
        call.warnings += [f'unknown field "{path}"' for path in report.unknown]
    return report.pruned()


def _check_update_fields(call: Call, kind: Kind, current: Obj, new: Obj, subresource: str) -> Obj:
    """`check_fields` for an update. A status write keeps the stored spec whatever it sends; when
    what it sends is the stored spec itself (a kubelet sends back the pod it read, status changed),
    that spec passed this check when it was stored and would pass it again: only the rest of the
    object is walked (the spec is most of a pod). The metadata likewise, when it is the stored
    metadata unchanged (its managedFields are most of what is left). Anything else is checked as always."""
    spec = new.get("spec")
    if (subresource != "status" or "status" in kind.subresource_updates or kind.to_storage is not None
            or kind.fields is not None
            or not isinstance(spec, dict) or spec != current.get("spec")):
        return check_fields(call, kind, new)
    kept = {"spec": spec}
    if isinstance(new.get("metadata"), dict) and new["metadata"] == current.get("metadata"):
        kept["metadata"] = new["metadata"]
    rest = check_fields(call, kind, {key: value for key, value in new.items() if key not in kept})
    return {**rest, **kept}


def stored_version(kind: Kind, obj: Obj) -> Obj:
    """A written object, decoded in the version it was sent in, as the kind stores it (a served
    version's `to_storage`); defaults, validation and admission then see the stored version."""
    return kind.to_storage(obj) if kind.to_storage is not None else obj


def metadata_causes(kind: Kind, obj: Obj) -> list[dict[str, str]]:
    meta = obj["metadata"]
    out = kind.validate(obj)
    if not any(c["field"] == "metadata.name" for c in out):
        out = kind.name_rule(meta.get("name")) + out
    out += label_causes(meta.get("labels"), "metadata.labels")
    annotations = meta.get("annotations")
    if annotations is not None and (not isinstance(annotations, dict) or
                                    not all(isinstance(v, str) for v in annotations.values())):
        out.append({"reason": "FieldValueInvalid", "field": "metadata.annotations",
                    "message": "Invalid value: annotations must be a map of strings"})
    elif annotations and sum(len(k) + len(v) for k, v in annotations.items()) > 256 * 1024:
        out.append({"reason": "FieldValueTooLong", "field": "metadata.annotations",
                    "message": "Too long: must have at most 262144 bytes"})
    return out


def raise_if_invalid(kind: Kind, obj: Obj, causes: list[dict[str, str]]) -> None:
    if causes:
        raise errors.invalid(kind.kind, kind.group, errors.go_text(obj["metadata"].get("name")), causes)


def _namespace_of(call: Call, obj: Obj) -> str:
    meta = obj["metadata"]
    if not call.kind.namespaced:
        meta.pop("namespace", None)
        return ""
    given = meta.get("namespace")
    if given not in (None, "") and call.namespace and given != call.namespace:
        raise errors.BadRequest("the namespace of the provided object does not match the namespace sent on the request")
    namespace = call.namespace or given or "default"
    meta["namespace"] = namespace
    return namespace


def track_fields(call: Call, old: Obj, new: Obj, now: float) -> Obj:
    """Record an ordinary write's field ownership in metadata.managedFields ("Update")."""
    kind = call.kind.stored_as or call.kind  # a served version's write is recorded as the fields it became
    return record_update(old, new, manager=call.field_manager, now=format_time(now),
                         api_version=kind.api_version, meta=patch_meta(kind.definition))


def prepare_create(call: Call, obj: Obj, now: float, *, applied: bool = False) -> Obj:
    """`applied`: the object comes from server-side apply and already carries its managedFields."""
    kind = call.kind
    check_type_meta(call, obj)
    obj = stored_version(kind, check_fields(call, kind, obj))
    meta = obj["metadata"]
    namespace = _namespace_of(call, obj)
    if not meta.get("name") and isinstance(meta.get("generateName"), str) and meta["generateName"]:
        meta["name"] = generate_name(meta["generateName"])
    if call.name and meta.get("name") != call.name:
        raise errors.BadRequest(f"the name of the object ({errors.go_text(meta.get('name'))}) does not match the name on the URL ({call.name})")
    for key in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
        meta.pop(key, None)
    if not applied:
        meta.pop("managedFields", None)
    meta["uid"] = str(uuid.uuid4())
    meta["creationTimestamp"] = format_time(now)
    if kind.has_spec:
        meta["generation"] = 1
    kind.prepare_for_create(obj)
    if kind.requester is not None:
        kind.requester(obj, requester_info(call))
    kind.defaults(obj)
    # The namespace lifecycle comes first among upstream's admission steps, then the kind's own.
    admission.admit_create(kind, obj, namespace)
    admit(kind, obj)
    admission.mutate_by_policies(kind, obj)
    raise_if_invalid(kind, obj, metadata_causes(kind, obj))
    admission.validate_by_policies(kind, obj, None, dry_run=call.dry_run, actor=call.actor)
    allocation.allocate(kind, obj)
    return obj if applied else track_fields(call, {}, obj, now)


def requester_info(call: Call) -> dict[str, Any]:
    """The request's user as authentication.k8s.io UserInfo (the cluster admin with auth off)."""
    return user_info(call.user if call.user is not None else MASTER)


def stored_or_none(resource: str, namespace: str, name: str) -> Obj | None:
    """The read-only lookup lent to a kind's admission and actions: a stored object or None."""
    try:
        return store.object_get(resource=resource, namespace=namespace, name=name)
    except errors.NotFound:
        return None


def admit(kind: Kind, obj: Obj) -> None:
    """The kind's admission (may change `obj`, may read the store); a refusal is 403 Forbidden."""
    if kind.admit is None:
        return
    refusal = kind.admit(obj, stored_or_none)
    if refusal:
        name = str(obj["metadata"].get("name") or "")
        details = errors.ordered_details({"name": name, "group": kind.group, "kind": kind.plural})
        raise errors.Forbidden(f'{errors.qualified_resource(kind.resource)} "{name}" is forbidden: {refusal}',
                               details=details)


def prepare_update(call: Call, current: Obj, new: Obj, *, subresource: str = "", now: float,
                   applied: bool = False) -> Obj | store.Delete:
    """The object to store for an update (PUT or the result of a PATCH) of `current`.
    `applied`: `new` comes from server-side apply, which already recorded its field ownership."""
    kind = call.kind
    check_type_meta(call, new)
    new = stored_version(kind, _check_update_fields(call, kind, current, new, subresource))
    meta, old_meta = new["metadata"], current["metadata"]
    if meta.get("name") not in (None, "", old_meta["name"]):
        raise errors.BadRequest(f"the name of the object ({errors.go_text(meta.get('name'))}) does not match the name on the URL ({old_meta['name']})")
    if kind.namespaced and meta.get("namespace") not in (None, "", old_meta.get("namespace")):
        raise errors.BadRequest("the namespace of the provided object does not match the namespace sent on the request")
    given_rv = meta.get("resourceVersion")
    if given_rv not in (None, "") and str(given_rv) != old_meta["resourceVersion"]:
        raise errors.conflict(kind.resource, old_meta["name"])
    if given_rv is not None and not isinstance(given_rv, str):
        raise errors.BadRequest("metadata.resourceVersion must be a string")
    uid = meta.get("uid")
    if uid not in (None, "") and uid != old_meta.get("uid"):
        raise errors.conflict(kind.resource, old_meta["name"], f"Precondition failed: UID in precondition: {errors.go_text(uid)}, "
                              f"UID in object meta: {errors.go_text(old_meta.get('uid'))}")
    own_causes: list[dict[str, str]] | None = None
    if subresource in kind.subresource_updates:
        result, own_causes = kind.subresource_updates[subresource](copy.deepcopy(current), new, format_time(now))
    elif subresource == "status":
        # Everything but status is kept as stored: shared with `current` rather than copied (a
        # kubelet's status write sends the whole pod); only metadata is written to from here on.
        result = {**current, "metadata": dict(old_meta), "status": new.get("status", {})}
    elif subresource == "finalize":
        if kind.finalize is None:
            raise errors.NotFound("the server could not find the requested resource")
        result = copy.deepcopy(current)
        kind.finalize(result, new)
    else:
        result = new
        for key in SERVER_METADATA:
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
        meta["name"] = old_meta["name"]
        if kind.namespaced:
            meta["namespace"] = old_meta["namespace"]
        if kind.has_status and "status" in current:
            result["status"] = current["status"]
        elif kind.has_status:
            result.pop("status", None)
        kind.defaults(result)
        kind.prepare_for_update(result, current)
        if kind.has_spec and kind.generation_changed(result, current):
            meta["generation"] = int(old_meta.get("generation") or 0) + 1
    causes = metadata_causes(kind, result) + (kind.validate_update(result, current) if own_causes is None
                                              else own_causes)
    raise_if_invalid(kind, result, causes)
    if not subresource:
        admission.validate_by_policies(kind, result, current, dry_run=call.dry_run, actor=call.actor)
        allocation.allocate(kind, result, current)
    if not applied:
        result = track_fields(call, current, result, now)
    return deletion_if_done(kind, result)


def deletion_if_done(kind: Kind, obj: Obj) -> Obj | store.Delete:
    """An object marked for deletion goes once its finalizers (the kind's own too) are gone and
    no grace period remains."""
    meta = obj["metadata"]
    if kind.deletion.held(obj):
        return obj
    if meta.get("deletionTimestamp") and not meta.get("finalizers") and not meta.get("deletionGracePeriodSeconds"):
        return store.Delete(obj)
    return obj


def check_preconditions(resource: str, current: Obj, preconditions: Any) -> None:
    if not preconditions:
        return
    if not isinstance(preconditions, dict):
        raise errors.BadRequest("preconditions must be an object")
    meta = current["metadata"]
    uid, rv = preconditions.get("uid"), preconditions.get("resourceVersion")
    if uid and uid != meta.get("uid"):
        raise errors.conflict(resource, meta["name"],
                              f"Precondition failed: UID in precondition: {errors.go_text(uid)}, "
                              f"UID in object meta: {errors.go_text(meta.get('uid'))}")
    if rv and rv != meta.get("resourceVersion"):
        raise errors.conflict(resource, meta["name"], f"Precondition failed: ResourceVersion in precondition: {errors.go_text(rv)}, "
                              f"ResourceVersion in object meta: {errors.go_text(meta.get('resourceVersion'))}")


def status_details(kind: Kind, obj: Obj) -> dict[str, Any]:
    return errors.ordered_details({"name": obj["metadata"]["name"], "group": kind.group, "kind": kind.plural,
                                   "uid": obj["metadata"].get("uid", "")})
