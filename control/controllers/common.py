"""Helpers the controllers share: pod predicates, adoption patches, taints, and timed looks again.
Time stamps, conditions, owner references and selectors are the object layer's: controllers import
them from `control.kinds.meta` under their one name.

Guarantees: every function reads its arguments without changing them (cached objects are
read-only), so any controller may call any helper from any handler or `reconcile`; the only I/O
is the writes and events a helper's name says it makes, through the client or recorder given. `Wakeups` is the one stateful helper: at most one timed requeue per key is pending,
so events arriving while a key waits never multiply its timers.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Iterable

from control.client.informer import Informer
from control.client.resources import Resource, key_of
from control.client.runner import DONE, Result, requeue_after
from control.clock import Clock
from control.kinds import meta
from control.kinds.meta import get_condition, is_condition_true, metadata, new_controller_ref, parse_time
from control.kinds.meta import spec_selector
from control.kinds.selectors import LabelSelector

Obj = dict[str, Any]


# --- time and metadata ------------------------------------------------------------------------

def created_at(obj: Obj) -> float:
    """When the object was created; an object without a readable stamp sorts as the oldest."""
    return meta.created_at(obj) or 0.0


def uid_of(obj: Obj) -> str:
    return metadata(obj).get("uid", "")


def terminating(obj: Obj) -> bool:
    return bool(metadata(obj).get("deletionTimestamp"))


def adopt_patch(obj: Obj, owner: Obj) -> Obj:
    """A merge patch that adds `owner` as controller, guarded by the object's resourceVersion."""
    refs = [copy.deepcopy(r) for r in metadata(obj).get("ownerReferences") or [] if r.get("uid") != uid_of(owner)]
    return {"metadata": {"ownerReferences": refs + [new_controller_ref(owner)],
                         "resourceVersion": metadata(obj)["resourceVersion"], "uid": uid_of(obj)}}


def release_patch(obj: Obj, owner_uid: str) -> Obj:
    """A merge patch that drops the reference to `owner_uid`, guarded by the resourceVersion."""
    refs = [copy.deepcopy(r) for r in metadata(obj).get("ownerReferences") or [] if r.get("uid") != owner_uid]
    return {"metadata": {"ownerReferences": refs or None, "resourceVersion": metadata(obj)["resourceVersion"],
                         "uid": uid_of(obj)}}


# --- pods --------------------------------------------------------------------------------------

async def write_status(client: Any, resource: Resource, obj: Obj, status: Obj) -> bool:
    """PUT `status` to `obj`'s status subresource, guarded by the resourceVersion read (a 409 is
    the caller's to retry); nothing is sent when it equals the stored status. Whether it wrote."""
    if status == (obj.get("status") or {}):
        return False
    body = copy.deepcopy(obj)
    body["status"] = status
    await client.replace_status(resource, body)
    return True


async def remove_finalizer(client: Any, resource: Resource, obj: Obj, finalizer: str) -> Result:
    """Drop one finalizer with a resourceVersion precondition (a 409 is retried by the caller's
    queue: someone else wrote first; a 404 means the object is already gone, nothing to do)."""
    from control import errors
    from control.client.runner import retry

    meta_ = metadata(obj)
    rest = [f for f in meta_.get("finalizers") or [] if f != finalizer]
    patch = {"metadata": {"finalizers": rest or None, "resourceVersion": meta_["resourceVersion"]}}
    try:
        await client.patch(resource, meta_["name"], patch, meta_.get("namespace") or None)
    except errors.Conflict as exc:
        return retry(f"{key_of(obj)}: {exc}")
    except errors.NotFound:
        pass
    return DONE


async def delete_pods(client: Any, pods: Resource, expectations: Any, key: str, victims: list[Obj]) -> list[Any]:
    """Delete `victims` at once, each with a uid precondition; one failed delete is forgotten by
    the expectations (its deletion will never be seen). Returns gather's results, exceptions included."""
    import asyncio

    from control import errors

    async def delete(pod: Obj) -> None:
        try:
            await client.delete(pods, metadata(pod)["name"], metadata(pod)["namespace"], preconditions={"uid": uid_of(pod)})
        except errors.ApiError:
            expectations.deleted(key, uid_of(pod))  # we will not see it go; do not wait for it
            raise

    return list(await asyncio.gather(*(delete(p) for p in victims), return_exceptions=True))


def namespace_terminating(exc: BaseException) -> bool:
    """The create was refused because its namespace is being deleted (upstream's
    `apierrors.HasStatusCause(err, NamespaceTerminatingCause)`): every later create fails too, so
    controllers neither report it nor retry it."""
    details = getattr(exc, "details", None) or {}
    causes = details.get("causes") if isinstance(details, dict) else None
    return any(isinstance(c, dict) and c.get("reason") == "NamespaceTerminating" for c in causes or [])


async def record_failed_create(recorder: Any, owner: Obj, exc: BaseException) -> None:
    """The Warning event upstream's pod control records on the owner when a pod create is refused
    (`FailedCreate`, "Error creating: <the API's message>"), so `kubectl describe` shows why the
    replicas are missing (a quota, a LimitRange); none for a terminating namespace."""
    if recorder is not None and not namespace_terminating(exc):
        await recorder.record(owner, "Warning", "FailedCreate", f"Error creating: {exc}")


async def record_creates(recorder: Any, owner: Obj, results: Iterable[Any]) -> None:
    """Upstream pod control's events for a batch of pod creates, in order: `SuccessfulCreate`
    "Created pod: NAME" for each pod made, `FailedCreate` (`record_failed_create`) for each refusal."""
    for result in results:
        if isinstance(result, BaseException):
            await record_failed_create(recorder, owner, result)
        elif recorder is not None:
            await recorder.record(owner, "Normal", "SuccessfulCreate", f"Created pod: {metadata(result).get('name', '')}")


async def record_deletes(recorder: Any, owner: Obj, victims: list[Obj], results: list[Any]) -> None:
    """`SuccessfulDelete` "Deleted pod: NAME" for each victim whose delete was not refused."""
    for pod, result in zip(victims, results):
        if recorder is not None and not isinstance(result, BaseException):
            await recorder.record(owner, "Normal", "SuccessfulDelete", f"Deleted pod: {metadata(pod)['name']}")


def pod_ready(pod: Obj) -> bool:
    return is_condition_true(pod, "Ready")


def pod_available(pod: Obj, min_ready_seconds: int, now: float) -> bool:
    """Ready, and Ready for at least `min_ready_seconds` (Kubernetes' IsPodAvailable)."""
    if not pod_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    since = parse_time((get_condition(pod, "Ready") or {}).get("lastTransitionTime"))
    return since is not None and since + min_ready_seconds <= now


def pod_active(pod: Obj) -> bool:
    """Counts towards a ReplicaSet: not terminating and not finished."""
    return not terminating(pod) and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def restarts(pod: Obj) -> int:
    return sum(int(c.get("restartCount") or 0) for c in (pod.get("status") or {}).get("containerStatuses") or [])


# --- handler plumbing --------------------------------------------------------------------------

def enqueue_keys(add: Callable[[str], None], objs: Iterable[Obj]) -> None:
    for obj in objs:
        add(key_of(obj))


def matching_in_namespace(informer: Informer, namespace: str, labels: dict[str, str],
                          selector: Callable[[Obj], LabelSelector] = spec_selector) -> list[Obj]:
    """The objects in `namespace` whose selector matches `labels` (e.g. ReplicaSets for an orphan pod)."""
    return [o for o in informer.cache.by_index("namespace", namespace) if selector(o).matches(labels)]


# --- timed looks again -------------------------------------------------------------------------

class Wakeups:
    """Per key, the earliest pending `requeue_after`; a later one is not asked for twice."""

    SLACK = 0.05  # event-loop timers may fire a hair early

    def __init__(self, clock: Clock):
        self.clock = clock
        self.pending: dict[str, float] = {}

    def after(self, key: str, delay: float) -> Result:
        now = self.clock.now()
        at = self.pending.get(key)
        if at is not None and at <= now + self.SLACK:
            del self.pending[key]  # that timer has fired (this may be its pass)
            at = None
        if at is not None and at <= now + delay + self.SLACK:
            return DONE  # an earlier (or equal) look is already on its way
        self.pending[key] = now + delay
        return requeue_after(delay)

    def forget(self, key: str) -> None:
        self.pending.pop(key, None)
