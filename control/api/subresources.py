"""Subresources: `*/binding` (the scheduler's one write), `*/scale` (kubectl scale, HPA), and the
ones a kind answers itself (`Kind.actions`: a ServiceAccount's `token`).

Guarantees: binding is one write of what the kind's `bind` does (a pod: `spec.nodeName` and the
PodScheduled condition) once the kind's `validate_binding` accepts the body (else 422), refused with 409 and the kind's reason (already bound, being deleted);
scale reads and writes only the kind's replicas path, with the same optimistic concurrency as the
main resource; a kind's own subresource gets the stored parent, the decoded body and what the hub
lends (`control.kinds.strategy.Lent`), and writes only what it asks for in an `Outcome` (another
object's read-modify-write, the parent's deletion as a DELETE does it), all or nothing.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Callable

from django.conf import settings
from django.db import transaction

from control import errors, keys
from control.storage import store
from control.api.objects import check_preconditions, raise_if_invalid, stored_or_none
from control.api.patching import apply_patch
from control.api.request import PATCH_TYPES, Call, check_type_meta, decode, decode_object
from control.api.responses import Reply, json_response, success_status
from control.api.verbs import checked_delete_options, mark_deleted
from control.kinds import jsonpath
from control.kinds.base import Kind, Obj, cause
from control.kinds.meta import format_time
from control.kinds.strategy import Lent, Outcome

SCALE_DEFINITION = "io.k8s.api.autoscaling.v1.Scale"
ACTION_RETRIES = 5  # reads of the parent an action whose deletion met a conflict gets (upstream retries 20 times)


# --- binding ---------------------------------------------------------------------------------

def bind(call: Call, now: float) -> Reply:
    binder, check, resource = call.kind.bind, call.kind.validate_binding, call.kind.resource
    if binder is None:
        raise errors.NotFound("the server could not find the requested resource")
    body = decode_object(call, into="Binding")
    check_type_meta(call, body, api_version="v1", kind="Binding")
    causes = check(body) if check is not None else []
    if causes:
        raise errors.invalid("Binding", "", call.name, causes)
    node = str(body["target"]["name"])
    name = body["metadata"].get("name") or call.name
    if name != call.name:
        raise errors.BadRequest(f"the name of the object ({name}) does not match the name on the URL ({call.name})")

    def mutate(obj: Obj) -> Obj:
        refusal = binder(obj, node, format_time(now))
        if refusal:
            raise errors.conflict(resource, call.name, refusal)
        return obj

    if call.dry_run:
        mutate(store.object_get(resource=resource, namespace=call.namespace, name=call.name))
    else:
        # shared: the bound pod is handed to the watchers as it is (nothing here reads it again), so
        # a kubelet's spec.nodeName watch need not decode every binding's text once more
        store.object_update_as_stored(resource=resource, namespace=call.namespace, name=call.name, mutate=mutate,
                                      actor=call.actor, shared=True)
    return json_response({**success_status({}), "code": 201}, 201)


# --- scale -----------------------------------------------------------------------------------

def _replicas_at(obj: Obj, path: str) -> Any:
    value = jsonpath.first(obj, path)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def scale_of(call: Call, obj: Obj) -> dict[str, Any]:
    meta = obj["metadata"]
    scale = call.kind.scale
    spec_path, status_path = (scale.spec_replicas_path, scale.status_replicas_path) if scale else (".spec.replicas", ".status.replicas")
    return {
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta},
        "spec": {"replicas": _replicas_at(obj, spec_path)},
        "status": {"replicas": _replicas_at(obj, status_path),
                   "selector": scale.selector(obj) if scale else ""},
    }


def _apply_scale(call: Call, current: Obj, scale: Any) -> Obj:
    if not isinstance(scale, dict):
        raise errors.BadRequest("the body of the request must be a Scale object")
    check_type_meta(call, scale, api_version="autoscaling/v1", kind="Scale")
    rv = scale["metadata"].get("resourceVersion")
    if rv not in (None, "") and rv != current["metadata"]["resourceVersion"]:
        raise errors.conflict(call.kind.resource, call.name)
    spec = scale.get("spec") if scale.get("spec") is not None else {}
    replicas = spec.get("replicas", 0) if isinstance(spec, dict) else None  # Go omits a zero
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise_if_invalid(call.kind, current, [cause("spec.replicas", f"Invalid value: {errors.go_value(replicas)}: must be greater than or equal to 0")])
    result = copy.deepcopy(current)
    path = call.kind.scale.spec_replicas_path if call.kind.scale else ".spec.replicas"
    if jsonpath.first(result, path) != replicas:
        jsonpath.set_value(result, path, replicas)
        result["metadata"]["generation"] = int(result["metadata"].get("generation") or 0) + 1
    # the new value must still satisfy the kind's validation (e.g. a custom schema's maximum)
    raise_if_invalid(call.kind, result, call.kind.validate(result))
    return result


def get_scale(call: Call) -> Reply:
    obj = store.object_get(resource=call.kind.resource, namespace=call.namespace, name=call.name)
    return json_response(scale_of(call, obj))


def update_scale(call: Call) -> Reply:
    body = decode_object(call, into="Scale")
    return _write_scale(call, lambda cur: _apply_scale(call, cur, body))


def _write_scale(call: Call, mutate) -> Reply:
    if call.dry_run:
        current = store.object_get(resource=call.kind.resource, namespace=call.namespace, name=call.name)
        return json_response(scale_of(call, mutate(current)))
    obj = store.object_update(resource=call.kind.resource, namespace=call.namespace, name=call.name,
                              mutate=mutate, actor=call.actor)
    return json_response(scale_of(call, obj))


def patch_scale(call: Call) -> Reply:
    patch_type = PATCH_TYPES.get(call.content_type)
    if patch_type not in ("json", "merge", "strategic"):
        raise errors.UnsupportedMediaType(f"the body of the request was in an unknown format - accepted media types "
                                          f"include: application/json-patch+json, application/merge-patch+json, "
                                          f"application/strategic-merge-patch+json")
    document = decode(call.raw_body, call.content_type, call.decoded)

    def mutate(current: Obj) -> Obj:
        scale = apply_patch(call.kind, scale_of(call, current), patch_type, document, definition=SCALE_DEFINITION)
        return _apply_scale(call, current, scale)

    return _write_scale(call, mutate)


# --- subresources a kind answers itself (a ServiceAccount's token) ------------------------------

def action_handler(kind: Kind, verb: str, subresource: str, now: Callable[[], float]) -> Callable[[Call], Reply] | None:
    """The handler of a POST to a subresource the kind answers itself, if it has one; `now` is the
    hub's time for server-set timestamps."""
    if verb != "create" or subresource not in kind.actions:
        return None
    return lambda call: kind_action(call, now=now(), sign=keys.signer(settings.DATA_DIR))


def kind_action(call: Call, *, now: float, sign: Callable[[dict[str, Any]], str]) -> Reply:
    """Decode the body as the action's type, read the parent, and answer what the kind builds
    (201), lending it read-only lookups, the time and the hub's signer; when the kind asks for
    writes (an `Outcome`), do them first, all in one transaction."""
    action = call.kind.actions[call.subresource]
    body = decode_object(call, into=action.kind)
    check_type_meta(call, body, api_version=action.api_version, kind=action.kind)
    lent = Lent(lookup=stored_or_none, now=now, sign=sign, list=stored_in)
    for attempt in range(ACTION_RETRIES):
        parent = store.object_get(resource=call.kind.resource, namespace=call.namespace, name=call.name)
        answer = action.create(parent, copy.deepcopy(body), lent)
        if not isinstance(answer, Outcome):
            break
        try:
            _carry_out(call, answer, now)
        except errors.Conflict:
            if not answer.retry_on_conflict or attempt == ACTION_RETRIES - 1:
                raise
            continue
        answer = answer.answer
        break
    return json_response(answer, 201)


def stored_in(resource: str, namespace: str) -> list[Obj]:
    """The list lent to a kind's actions: every stored object of a kind in a namespace."""
    bodies, _ = store.object_list(resource=resource, namespace=namespace)
    return [json.loads(body) for body in bodies]


def _carry_out(call: Call, outcome: Outcome, now: float) -> None:
    """The writes, then the parent's deletion, in one transaction: a refusal anywhere (a budget
    spent meanwhile, a precondition) leaves the store as it was. A dry run checks and writes nothing."""
    options = outcome.delete_parent
    if options is not None:
        if not isinstance(options, dict):
            raise errors.BadRequest("DeleteOptions must be a JSON object")
        options = checked_delete_options(dict(options))
    dry = call.dry_run or (options is not None and options.get("dryRun") == ["All"])
    with transaction.atomic():
        for write in outcome.writes:
            if dry:
                write.mutate(store.object_get(resource=write.resource, namespace=write.namespace, name=write.name))
            else:
                store.object_update(resource=write.resource, namespace=write.namespace, name=write.name,
                                    mutate=write.mutate, actor=call.actor)
        if options is None:
            return
        def delete(current: Obj) -> Any:
            try:
                check_preconditions(call.kind.resource, current, options.get("preconditions"))
                if outcome.before_delete is not None:
                    outcome.before_delete(current)
                return mark_deleted(call.kind, current, options, now)
            except errors.Conflict:
                if outcome.on_conflict is not None:
                    raise outcome.on_conflict from None
                raise

        if dry:
            delete(store.object_get(resource=call.kind.resource, namespace=call.namespace, name=call.name))
        else:
            store.object_update(resource=call.kind.resource, namespace=call.namespace, name=call.name,
                                mutate=delete, actor=call.actor)
