"""Server-side apply (`application/apply-patch+yaml`) as a verb: create-or-merge with field owners.

Guarantees: a fieldManager is required (422 otherwise); a missing object is created (201);
conflicts with other managers are 409 unless `force=true`; the write is one store transaction.
"""

from __future__ import annotations


from control import errors
from control.storage import store
from control.api.allocation import serialised
from control.api.objects import prepare_create, prepare_update
from control.api.patching import patch_meta
from control.api.request import Call, bool_param, check_type_meta
from control.api.responses import Reply, json_response
from control.kinds.base import Obj
from control.kinds.meta import format_time


def server_side_apply_call(call: Call, document: object, subresource: str) -> Reply:
    from control.api.apply import server_side_apply
    from control.api import verbs

    if not call.query.get("fieldManager"):
        raise errors.invalid("PatchOptions", "meta.k8s.io", "", [
            {"reason": "FieldValueRequired", "message": "Required value: is required for apply patch",
             "field": "fieldManager"}])
    if not isinstance(document, dict):
        raise errors.BadRequest("an apply patch must be a single object")
    check_type_meta(call, document)
    manager, force = call.field_manager, bool_param(call.query, "force")
    meta = patch_meta(call.kind.definition)
    stamp = format_time(verbs.now())

    def applied_to(live: Obj | None) -> Obj:
        return server_side_apply(live, document, manager=manager, force=force, meta=meta, now=stamp,
                                 api_version=call.kind.api_version)

    try:
        store.object_get(resource=call.kind.resource, namespace=call.namespace, name=call.name)
    except errors.NotFound:
        if subresource:
            raise
        call.admit_stored(None)
        with serialised(call.kind, dry_run=call.dry_run):  # a Service's addresses: chosen and stored in one transaction
            obj = prepare_create(call, applied_to(None), verbs.now(), applied=True)
            if call.dry_run:
                return json_response(obj, 201)
            return json_response(store.object_create(resource=call.kind.resource, obj=obj, actor=call.actor), 201)

    def mutate(current: Obj):
        call.admit_stored(current)
        return prepare_update(call, current, applied_to(current), subresource=subresource, now=verbs.now(),
                              applied=True)

    if call.dry_run:
        result = mutate(store.object_get(resource=call.kind.resource, namespace=call.namespace, name=call.name))
        return json_response(result.final if isinstance(result, store.Delete) else result)
    return json_response(store.object_update(resource=call.kind.resource, namespace=call.namespace,
                                             name=call.name, mutate=mutate, actor=call.actor))
