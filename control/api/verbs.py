"""The verbs on a resource: get, list, create, update, patch, delete, deletecollection.

Guarantees: each verb is one call into `control.storage.store` (so one transaction); every failure is
an ApiError; list pages keep the list's resourceVersion; deletion follows Kubernetes (pods are
deleted gracefully, finalizers and foreground/orphan propagation hold an object until cleared).
"""

from __future__ import annotations

import base64
import json
from typing import Any


from control.clock import REAL as clock
from control import errors
from control.storage import store
from control.api import tables
from control.api.allocation import serialised
from control.api.objects import (
    check_preconditions, deletion_if_done, prepare_create, prepare_update, status_details,
)
from control.api.patching import apply_patch
from control.api.request import PATCH_TYPES, Call, decode, decode_object, int_param, parse_revision
from control.api.responses import Reply, json_response, raw_json_response, success_status
from control.api.selection import Selection
from control.kinds.base import Kind, Obj
from control.kinds.meta import format_time
from control.kinds.coordination import LEASE
from control.kinds.core import CONFIGMAP, ENDPOINTS, EVENT, NAMESPACE
from control.kinds.crd import RESOURCE as CRD_RESOURCE
from control.kinds.pods import POD

def now() -> float:
    """The hub's time for server-set timestamps: the module's `clock`, which a test may replace."""
    return clock.now()


def warning_header(warnings: list[str]) -> str:
    """RFC 7234 warn-codes 299, with the text quoted as kubectl expects."""
    return ", ".join('299 - "{}"'.format(w.replace("\\", "\\\\").replace('"', '\\"')) for w in warnings)


def _object_response(call: Call, obj: Obj, status: int = 200) -> Reply:
    headers = {"Warning": warning_header(call.warnings)} if call.warnings else None
    if call.kind.on_read is not None:  # a custom kind: shown in the requested version, with defaults
        obj = call.kind.on_read(obj)
    if tables.wants_table(call.accept):
        table = tables.table(call.kind, [obj], resource_version=obj["metadata"].get("resourceVersion", ""),
                             include=call.query.get("includeObject", "Metadata"))
        return json_response(table, status, headers=headers)
    return json_response(obj, status, headers=headers)


def get(call: Call) -> Reply:
    obj = store.object_get(resource=call.kind.resource, namespace=call.namespace, name=call.name)
    return _object_response(call, obj)


# --- list ------------------------------------------------------------------------------------

def _encode_continue(revision: int, after: tuple[str, str]) -> str:
    raw = json.dumps({"v": "kk.1", "rv": revision, "ns": after[0], "name": after[1]})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        return int(data["rv"]), (str(data["ns"]), str(data["name"]))
    except (ValueError, KeyError, TypeError):
        raise errors.BadRequest("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)") from None


class FutureRevision(errors.Timeout):
    """A read asked for a revision this hub has not seen yet. The async layer waits for it (up to
    3 s, like the real server) and retries; only then does the client get this 504."""

    def __init__(self, revision: int, current: int):
        super().__init__(f"Too large resource version: {revision}, current: {current}",
                         details={"causes": [{"reason": "ResourceVersionTooLarge",
                                              "message": "Too large resource version"}], "retryAfterSeconds": 1})
        self.revision = revision


def require_revision(revision: int) -> None:
    current = store.current_revision()
    if current < revision:
        raise FutureRevision(revision, current)


def _check_resource_version(query: dict[str, str], limit: int | None, token: str) -> None:
    """resourceVersion / resourceVersionMatch of a list: refused, expired (410) or waited for."""
    requested = query.get("resourceVersion", "")
    match = query.get("resourceVersionMatch", "")
    if match not in ("", "Exact", "NotOlderThan"):
        raise errors.BadRequest(f'resourceVersionMatch: Unsupported value: "{match}"')
    if token and requested not in ("", "0"):
        raise errors.BadRequest("specifying resource version is not allowed when using continue")
    if requested and requested != "0":
        wanted = parse_revision(requested)
        if (match == "Exact" or limit) and wanted < store.compacted_revision():
            raise errors.expired(f"too old resource version: {wanted} ({store.compacted_revision()})")
        require_revision(wanted)


def list_objects(call: Call, selection: Selection) -> tuple[list[Obj], int, str, int | None]:
    """The selected objects, the list revision, the continue token and the remaining count."""
    kind, query = call.kind, call.query
    limit = int_param(query, "limit")
    token = query.get("continue", "")
    _check_resource_version(query, limit, token)
    after: tuple[str, str] | None = None
    if token:
        revision_of_token, after = _decode_continue(token)
        if revision_of_token < store.compacted_revision():
            raise errors.expired("The provided continue parameter is too old to display a consistent list result. "
                                 "You can start a new list without the continue parameter, or use the continue token "
                                 "in this response to retrieve the remainder of the results.")
    bodies, revision = store.object_list(resource=kind.resource, namespace=call.namespace or None,
                                         name=selection.exact_name())
    if token:
        revision = revision_of_token
    items: list[Obj] = []
    remaining = 0
    next_token = ""
    for body in bodies:
        obj = json.loads(body)
        meta = obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        if after is not None and key <= after:
            continue
        if not selection.matches(obj):
            continue
        if limit and len(items) >= limit:
            remaining += 1
            continue
        items.append(obj)
    if remaining:
        last = items[-1]["metadata"]
        next_token = _encode_continue(revision, (last.get("namespace", ""), last["name"]))
    return items, revision, next_token, (remaining or None)


def list_(call: Call) -> Reply:
    selection = Selection.from_query(call.kind, call.query)
    table = tables.wants_table(call.accept)
    limit, token = int_param(call.query, "limit"), call.query.get("continue", "")
    if selection.everything and not table and not limit and not token and call.kind.on_read is None:
        # The common case (informers' relists, plain gets): the stored JSON goes out as it is.
        _check_resource_version(call.query, limit, token)
        bodies, revision = store.object_list(resource=call.kind.resource, namespace=call.namespace or None)
        return raw_json_response(f'{{"kind":"{call.kind.list_kind}","apiVersion":"{call.kind.api_version}",'
                                 f'"metadata":{{"resourceVersion":"{revision}"}},"items":[{",".join(bodies)}]}}')
    items, revision, token, remaining = list_objects(call, selection)
    if call.kind.on_read is not None:
        items = [call.kind.on_read(item) for item in items]
    if table:
        table = tables.table(call.kind, items, resource_version=str(revision), cont=token,
                             include=call.query.get("includeObject", "Metadata"))
        return json_response(table)
    meta: dict[str, Any] = {"resourceVersion": str(revision)}
    if token:
        meta["continue"] = token
        meta["remainingItemCount"] = remaining
    return json_response({"kind": call.kind.list_kind, "apiVersion": call.kind.api_version,
                          "metadata": meta, "items": items})


# --- writes ----------------------------------------------------------------------------------

def create(call: Call) -> Reply:
    with serialised(call.kind, dry_run=call.dry_run):  # a Service's addresses: chosen and stored in one transaction
        obj = prepare_create(call, decode_object(call), now())
        if call.dry_run:
            return _object_response(call, obj, 201)
        created = store.object_create(resource=call.kind.resource, obj=obj, actor=call.actor)
    return _object_response(call, created, 201)


CREATE_ON_UPDATE = {k.resource for k in (ENDPOINTS, EVENT, LEASE, CONFIGMAP)}


def update(call: Call, subresource: str = "") -> Reply:
    body = decode_object(call)
    try:
        current = store.object_get(resource=call.kind.resource, namespace=call.namespace, name=call.name)
    except errors.NotFound:
        if call.kind.resource in CREATE_ON_UPDATE and not subresource:
            return create(call)
        raise
    if call.dry_run:
        result = prepare_update(call, current, body, subresource=subresource, now=now())
        return _object_response(call, result.final if isinstance(result, store.Delete) else result)
    obj = store.object_update(resource=call.kind.resource, namespace=call.namespace, name=call.name,
                              mutate=lambda cur: prepare_update(call, cur, dict(body), subresource=subresource, now=now()),
                              actor=call.actor)
    return _object_response(call, obj)


def patch(call: Call, subresource: str = "") -> Reply:
    patch_type = PATCH_TYPES.get(call.content_type)
    if patch_type is None:
        raise errors.UnsupportedMediaType(
            f"the body of the request was in an unknown format - accepted media types include: "
            f"{', '.join(t for t, v in PATCH_TYPES.items() if v)}")
    if patch_type == "strategic" and call.kind.custom:
        raise errors.UnsupportedMediaType(
            f"the body of the request was in an unknown format - accepted media types include: "
            f"application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
    document = decode(call.raw_body, call.content_type)
    if patch_type == "apply":
        from control.api.applying import server_side_apply_call

        return server_side_apply_call(call, document, subresource)

    def mutate(current: Obj):
        return prepare_update(call, current, apply_patch(call.kind, current, patch_type, document),
                              subresource=subresource, now=now())

    if call.dry_run:
        current = store.object_get(resource=call.kind.resource, namespace=call.namespace, name=call.name)
        result = mutate(current)
        return _object_response(call, result.final if isinstance(result, store.Delete) else result)
    obj = store.object_update(resource=call.kind.resource, namespace=call.namespace, name=call.name,
                              mutate=mutate, actor=call.actor)
    return _object_response(call, obj)


# --- delete ----------------------------------------------------------------------------------

def delete_options(call: Call) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if call.raw_body.strip():
        body = decode(call.raw_body, call.content_type or "application/json")
        if not isinstance(body, dict):
            raise errors.BadRequest("DeleteOptions must be a JSON object")
        options = body
        dry = body.get("dryRun")
        if dry not in (None, [], ""):
            if not isinstance(dry, list) or any(v != "All" for v in dry):
                raise errors.invalid("DeleteOptions", "meta.k8s.io", "", [{
                    "reason": "FieldValueNotSupported", "field": "dryRun",
                    "message": f'Unsupported value: {dry!r}: supported values: "All"'}])
            call.body_dry_run = "All"
    grace = int_param(call.query, "gracePeriodSeconds", minimum=-1)
    if grace is not None:
        options["gracePeriodSeconds"] = grace
    if call.query.get("propagationPolicy"):
        options["propagationPolicy"] = call.query["propagationPolicy"]
    if call.query.get("orphanDependents"):
        options["orphanDependents"] = call.query["orphanDependents"].lower() == "true"
    policy = options.get("propagationPolicy")
    if policy not in (None, "Orphan", "Background", "Foreground"):
        raise errors.BadRequest(f'propagationPolicy: Unsupported value: "{policy}": supported values: '
                                '"Foreground", "Background", "Orphan"')
    if policy is None and options.get("orphanDependents") is True:
        options["propagationPolicy"] = "Orphan"
    grace = options.get("gracePeriodSeconds")
    if grace is not None and (not isinstance(grace, int) or isinstance(grace, bool)):
        raise errors.BadRequest("gracePeriodSeconds must be an integer")
    return options


def _pod_grace(pod: Obj, options: dict[str, Any]) -> int:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
        return 0
    grace = options.get("gracePeriodSeconds")
    if grace is None:
        grace = spec.get("terminationGracePeriodSeconds", 30)
    return max(0, int(grace if grace >= 0 else 1))


def mark_deleted(kind: Kind, current: Obj, options: dict[str, Any], at: float) -> Obj | store.Delete:
    """What a delete does to `current`: remove it now, or mark it and let finalizers/grace run."""
    check_preconditions(kind.resource, current, options.get("preconditions"))
    meta = current["metadata"]
    finalizers = list(meta.get("finalizers") or [])
    policy = options.get("propagationPolicy")
    for wanted, finalizer in (("Foreground", "foregroundDeletion"), ("Orphan", "orphan")):
        if policy == wanted and finalizer not in finalizers and not meta.get("deletionTimestamp"):
            finalizers.append(finalizer)
    grace = _pod_grace(current, options) if kind is POD else 0
    if kind is NAMESPACE and (current.get("spec") or {}).get("finalizers"):
        current.setdefault("status", {})["phase"] = "Terminating"
        grace = 0
        if not meta.get("deletionTimestamp"):
            meta["deletionTimestamp"] = format_time(at)
            meta["deletionGracePeriodSeconds"] = 0
        return current
    if finalizers:
        meta["finalizers"] = finalizers
    if meta.get("deletionTimestamp"):
        previous = meta.get("deletionGracePeriodSeconds") or 0
        if grace < previous:  # a shorter grace period (e.g. the kubelet's final delete) wins
            meta["deletionGracePeriodSeconds"] = grace
            meta["deletionTimestamp"] = format_time(at + grace)
        return deletion_if_done(current)
    if grace == 0 and not finalizers:
        return store.Delete(current)
    meta["deletionTimestamp"] = format_time(at + grace)
    meta["deletionGracePeriodSeconds"] = grace
    return current


def delete_one(call: Call, name: str, options: dict[str, Any]) -> tuple[Obj, bool]:
    """Delete (or mark) one object; returns its last state and whether it is gone. Deleting a
    CustomResourceDefinition deletes its objects in the same transaction (control.api.crds)."""
    if call.kind.resource == CRD_RESOURCE:
        from control.api.crds import delete_definition

        return delete_definition(_delete_one, call, name, options)
    return _delete_one(call, name, options)


def _delete_one(call: Call, name: str, options: dict[str, Any]) -> tuple[Obj, bool]:
    removed = {"gone": False}

    def mutate(current: Obj):
        result = mark_deleted(call.kind, current, options, now())
        removed["gone"] = isinstance(result, store.Delete)
        return result

    if call.dry_run:
        current = store.object_get(resource=call.kind.resource, namespace=call.namespace, name=name)
        result = mutate(current)
        return (result.final if isinstance(result, store.Delete) else result), removed["gone"]
    obj = store.object_update(resource=call.kind.resource, namespace=call.namespace, name=name,
                              mutate=mutate, actor=call.actor)
    return obj, removed["gone"]


def delete(call: Call) -> Reply:
    obj, gone = delete_one(call, call.name, delete_options(call))
    if gone and call.kind is not POD:
        return json_response(success_status(status_details(call.kind, obj)))
    return json_response(obj)


def deletecollection(call: Call) -> Reply:
    options = delete_options(call)
    selection = Selection.from_query(call.kind, call.query)
    bodies, revision = store.object_list(resource=call.kind.resource, namespace=call.namespace or None)
    items = []
    for body in bodies:
        obj = json.loads(body)
        if not selection.matches(obj):
            continue
        scoped = Call(**{**call.__dict__, "namespace": obj["metadata"].get("namespace", "")})
        try:
            final, _ = delete_one(scoped, obj["metadata"]["name"], options)
        except errors.NotFound:
            continue
        items.append(final)
    return json_response({"kind": call.kind.list_kind, "apiVersion": call.kind.api_version,
                          "metadata": {"resourceVersion": str(store.current_revision())}, "items": items})
