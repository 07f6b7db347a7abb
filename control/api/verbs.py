"""The verbs on a resource: get, list, create, update, patch, delete, deletecollection.

Guarantees: each verb is one call into `control.storage.store` (so one transaction); every failure is
an ApiError; every page of a list is read at the revision of the first (`control.api.listing`);
deletion follows Kubernetes (the kind's grace period, its own holds, finalizers and foreground/orphan
propagation keep an object until cleared) and a DELETE answers as the kind says: the object, or a
Status once it is gone. No verb knows a particular kind: each asks the `Kind`.
"""

from __future__ import annotations

import json
from typing import Any


from control.clock import REAL as clock
from control import errors
from control.storage import store
from control.api import admission, tables
from control.api.allocation import serialised
from control.api.listing import encode_continue, list_revision, read_list
from control.api.listing import FutureRevision, require_revision  # noqa: F401  (callers know them as verbs.*)
from control.api.objects import (
    check_preconditions, deletion_if_done, prepare_create, prepare_update, status_details, stored_or_none,
)
from control.api.patching import apply_patch
from control.api.request import PATCH_TYPES, Call, decode, decode_object, int_param
from control.api.responses import Reply, json_response, raw_json_response, success_status
from control.api.selection import Selection
from control.kinds.base import Kind, Obj
from control.kinds.meta import format_time

def now() -> float:
    """The hub's time for server-set timestamps: the module's `clock`, which a test may replace."""
    return clock.now()


def warning_header(warnings: list[str]) -> str:
    """RFC 7234 warn-codes 299, with the text quoted as kubectl expects."""
    return ", ".join('299 - "{}"'.format(w.replace("\\", "\\\\").replace('"', '\\"')) for w in warnings)


def _warning_headers(call: Call) -> dict[str, str] | None:
    return {"Warning": warning_header(call.warnings)} if call.warnings else None


def _object_response(call: Call, obj: Obj, status: int = 200, stored: str | None = None) -> Reply:
    """The object as the answer to a request; `stored`: its JSON text as just written (the same
    bytes `json_response` would encode again), answered as it is when the client asked for JSON."""
    headers = _warning_headers(call)
    if call.kind.on_read is not None:  # a custom kind: shown in the requested version, with defaults
        obj, stored = call.kind.on_read(obj), None
    if tables.wants_table(call.accept):
        table = tables.table(call.kind, [obj], resource_version=obj["metadata"].get("resourceVersion", ""),
                             include=call.query.get("includeObject", "Metadata"))
        return json_response(table, status, headers=headers)
    if stored is not None:
        return raw_json_response(stored, status, headers=headers)
    return json_response(obj, status, headers=headers)


def _shareable(call: Call) -> bool:
    """Whether the object a write stores may be handed to the watchers as it is: the verb only reads
    it to answer, unless a served version's `on_read` renders it (that may fill in defaults)."""
    return call.kind.on_read is None


def get(call: Call) -> Reply:
    text = store.object_text(resource=call.kind.resource, namespace=call.namespace, name=call.name)
    if call.kind.on_read is None and not tables.wants_table(call.accept):
        # the stored text is the answer's JSON byte for byte: no decoding and encoding it again
        return raw_json_response(text, headers=_warning_headers(call))
    return _object_response(call, json.loads(text))


# --- list ------------------------------------------------------------------------------------

def list_objects(call: Call, selection: Selection) -> tuple[list[Obj], int, str, int | None]:
    """The selected objects, the list revision, the continue token and the remaining count. Every
    page is read at the revision of the first (its token carries it): the pages form one snapshot."""
    query = call.query
    limit = int_param(query, "limit")
    revision, after = list_revision(query, limit, query.get("continue", ""))
    bodies, revision = read_list(call, revision, after, selection.exact_name())
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
        next_token = encode_continue(revision, (last.get("namespace", ""), last["name"]))
    return items, revision, next_token, (remaining or None)


def list_(call: Call) -> Reply:
    selection = Selection.from_query(call.kind, call.query)
    table = tables.wants_table(call.accept)
    limit, token = int_param(call.query, "limit"), call.query.get("continue", "")
    if selection.everything and not table and not limit and not token and call.kind.on_read is None:
        # The common case (informers' relists, plain gets): the stored JSON goes out as it is.
        revision, _ = list_revision(call.query, limit, token)
        bodies, revision = read_list(call, revision, None)
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

# kube-apiserver's maxNameGenerationCreateAttempts (the RetryGenerateName feature, on by default
# since 1.31 and GA in 1.32): a create whose generated name is taken is tried again with a new one.
GENERATE_NAME_ATTEMPTS = 8


def create(call: Call) -> Reply:
    """Create the request's object; with `generateName` (and no name) a generated name that is
    already taken is drawn again, up to GENERATE_NAME_ATTEMPTS attempts in all, each from the
    request's body afresh, with whatever an attempt admitted (a quota's charge) undone with it."""
    for _ in range(GENERATE_NAME_ATTEMPTS - 1):
        try:
            return _create_once(call)
        except errors.AlreadyExists:
            # the body is read again only on this rare path: a name of the client's own is final
            if not _wants_generated_name(decode_object(call)):
                raise
    return _create_once(call)  # the last attempt: its AlreadyExists is the answer


def _create_once(call: Call) -> Reply:
    # `serialised` is the attempt's scope: a Service's addresses chosen and a quota charged in one
    # transaction with the write, and rolled back with an attempt that fails.
    with serialised(call.kind, dry_run=call.dry_run):
        obj = prepare_create(call, decode_object(call), now())
        if call.dry_run:
            # kube-apiserver's DryRunnableStorage.Create reads the key: a taken name is refused as
            # the write would be
            meta = obj["metadata"]
            if stored_or_none(call.kind.resource, meta.get("namespace", ""), meta["name"]) is not None:
                raise errors.already_exists(call.kind.resource, meta["name"])
            return _object_response(call, obj, 201)
        created, stored = store.object_create_as_stored(resource=call.kind.resource, obj=obj, actor=call.actor,
                                                        shared=_shareable(call))
    return _object_response(call, created, 201, stored)


def _wants_generated_name(body: Any) -> bool:
    """upstream's needsNameGeneration: no name, and a generateName to make one from."""
    meta = body.get("metadata") if isinstance(body, dict) else None
    return isinstance(meta, dict) and not meta.get("name") and bool(meta.get("generateName"))


def update(call: Call, subresource: str = "") -> Reply:
    body = decode_object(call)
    creates = call.kind.allow_create_on_update and not subresource
    if call.dry_run or creates:
        try:
            current = store.object_get(resource=call.kind.resource, namespace=call.namespace, name=call.name)
        except errors.NotFound:
            if creates:
                call.admit_stored(None)
                return create(call)
            raise
    # Otherwise object_update reads the object itself, and answers the same NotFound when it is missing.
    if call.dry_run:
        call.admit_stored(current)
        result = prepare_update(call, current, body, subresource=subresource, now=now())
        return _object_response(call, result.final if isinstance(result, store.Delete) else result)

    def mutate(cur: Obj) -> Obj | store.Delete:
        call.admit_stored(cur)
        return prepare_update(call, cur, dict(body), subresource=subresource, now=now())

    obj, stored = store.object_update_as_stored(
        resource=call.kind.resource, namespace=call.namespace, name=call.name, mutate=mutate, actor=call.actor,
        shared=_shareable(call))
    return _object_response(call, obj, stored=stored)


def patch(call: Call, subresource: str = "") -> Reply:
    patch_type = PATCH_TYPES.get(call.content_type)
    if patch_type is None:
        raise errors.UnsupportedMediaType(
            f"the body of the request was in an unknown format - accepted media types include: "
            f"{', '.join(t for t, v in PATCH_TYPES.items() if v)}")
    if patch_type == "strategic" and not call.kind.merges_strategically:
        raise errors.UnsupportedMediaType(
            f"the body of the request was in an unknown format - accepted media types include: "
            f"application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
    if patch_type == "apply" and call.kind.to_storage is not None:
        raise errors.UnsupportedMediaType(  # server-side apply is served in the stored version only
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json")
    document = decode(call.raw_body, call.content_type, call.decoded)
    if patch_type == "apply":
        from control.api.applying import server_side_apply_call

        return server_side_apply_call(call, document, subresource)

    def mutate(current: Obj):
        call.admit_stored(current)
        # a served version is patched as the client sees it, then converted back (prepare_update)
        seen = call.kind.on_read(current) if call.kind.to_storage is not None and call.kind.on_read else current
        return prepare_update(call, current, apply_patch(call.kind, seen, patch_type, document),
                              subresource=subresource, now=now())

    if call.dry_run:
        current = store.object_get(resource=call.kind.resource, namespace=call.namespace, name=call.name)
        result = mutate(current)
        return _object_response(call, result.final if isinstance(result, store.Delete) else result)
    obj, stored = store.object_update_as_stored(resource=call.kind.resource, namespace=call.namespace,
                                                name=call.name, mutate=mutate, actor=call.actor,
                                                shared=_shareable(call))
    return _object_response(call, obj, stored=stored)


# --- delete ----------------------------------------------------------------------------------

def delete_options(call: Call) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if call.raw_body.strip():
        body = decode(call.raw_body, call.content_type or "application/json", call.decoded)
        if not isinstance(body, dict):
            raise errors.BadRequest("DeleteOptions must be a JSON object")
        options = body
        if body.get("dryRun") not in (None, [], ""):
            check_dry_run(body["dryRun"])
            call.body_dry_run = "All"
    grace = int_param(call.query, "gracePeriodSeconds", minimum=-1)
    if grace is not None:
        options["gracePeriodSeconds"] = grace
    if call.query.get("propagationPolicy"):
        options["propagationPolicy"] = call.query["propagationPolicy"]
    if call.query.get("orphanDependents"):
        options["orphanDependents"] = call.query["orphanDependents"].lower() == "true"
    return checked_delete_options(options)


def check_dry_run(dry: Any) -> None:
    if not isinstance(dry, list) or any(v != "All" for v in dry):
        raise errors.invalid("DeleteOptions", "meta.k8s.io", "", [{
            "reason": "FieldValueNotSupported", "field": "dryRun",
            "message": f'Unsupported value: {errors.go_strings(dry)}: supported values: "All"'}])


def checked_delete_options(options: dict[str, Any]) -> dict[str, Any]:
    """DeleteOptions as a delete honours them (from a DELETE, or inside an Eviction): refused
    when a value is not one Kubernetes takes; orphanDependents becomes propagationPolicy Orphan."""
    if options.get("dryRun") not in (None, [], ""):
        check_dry_run(options["dryRun"])
    policy = options.get("propagationPolicy")
    if policy not in (None, "Orphan", "Background", "Foreground"):
        raise errors.BadRequest(f'propagationPolicy: Unsupported value: {errors.go_value(policy)}: supported values: '
                                '"Foreground", "Background", "Orphan"')
    if policy is None and options.get("orphanDependents") is True:
        options["propagationPolicy"] = "Orphan"
    grace = options.get("gracePeriodSeconds")
    if grace is not None and (not isinstance(grace, int) or isinstance(grace, bool)):
        raise errors.BadRequest("gracePeriodSeconds must be an integer")
    return options


def mark_deleted(kind: Kind, current: Obj, options: dict[str, Any], at: float) -> Obj | store.Delete:
    """What a delete does to `current`: remove it now, or mark it and let finalizers/grace run."""
    check_preconditions(kind.resource, current, options.get("preconditions"))
    meta = current["metadata"]
    finalizers = list(meta.get("finalizers") or [])
    policy = options.get("propagationPolicy")
    for wanted, finalizer in (("Foreground", "foregroundDeletion"), ("Orphan", "orphan")):
        if policy == wanted and finalizer not in finalizers and not meta.get("deletionTimestamp"):
            finalizers.append(finalizer)
    grace = kind.deletion.grace_period(current, options.get("gracePeriodSeconds"))
    if kind.deletion.held(current):
        kind.deletion.on_hold(current)
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
        return deletion_if_done(kind, current)
    if grace == 0 and not finalizers:
        return store.Delete(current)
    meta["deletionTimestamp"] = format_time(at + grace)
    meta["deletionGracePeriodSeconds"] = grace
    return current


def delete_one(call: Call, name: str, options: dict[str, Any]) -> tuple[Obj, bool]:
    """Delete (or mark) one object; returns its last state and whether it is gone. Deleting a
    CustomResourceDefinition deletes its objects in the same transaction (control.api.crds)."""
    if call.kind.deletion.removes_served_objects:
        from control.api.crds import delete_definition

        return delete_definition(_delete_one, call, name, options)
    return _delete_one(call, name, options)


def _delete_one(call: Call, name: str, options: dict[str, Any]) -> tuple[Obj, bool]:
    removed = {"gone": False}

    def mutate(current: Obj):
        call.admit_stored(current)
        admission.admit_delete(call.kind, current)
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
    if gone and not call.kind.deletion.returns_object:
        return json_response(success_status(status_details(call.kind, obj)))
    return json_response(obj)


def deletecollection(call: Call) -> Reply:
    options = delete_options(call)
    selection = Selection.from_query(call.kind, call.query)
    bodies, revision = store.object_list(resource=call.kind.resource, namespace=call.namespace or None)
    items, refused = [], None
    for body in bodies:
        obj = json.loads(body)
        if not selection.matches(obj):
            continue
        scoped = Call(**{**call.__dict__, "namespace": obj["metadata"].get("namespace", "")})
        try:
            final, _ = delete_one(scoped, obj["metadata"]["name"], options)
        except errors.NotFound:
            continue
        except errors.Forbidden as exc:  # upstream deletes the others, then answers the first refusal
            refused = refused or exc
            continue
        items.append(final)
    if refused is not None:
        raise refused
    return json_response({"kind": call.kind.list_kind, "apiVersion": call.kind.api_version,
                          "metadata": {"resourceVersion": str(store.current_revision())}, "items": items})
