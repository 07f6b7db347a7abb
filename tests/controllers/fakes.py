"""A fake hub client that records every action, and builders for the objects controllers read.

Controllers are tested the sample-controller way: fill the informer caches directly, call
`reconcile(key)`, and assert on the recorded actions (never on timing, never over the network).
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import uuid
from dataclasses import dataclass, field
from typing import Any

from control import errors
from control.clock import FakeClock
from control.client.informer import Informer
from control.client.resources import Resource
from control.client.shared import SharedInformers
from control.kinds.meta import format_time

Obj = dict[str, Any]
START = 1_800_000_000.0


@dataclass
class Action:
    verb: str
    plural: str
    namespace: str | None
    name: str
    body: Any = None
    options: dict[str, Any] = field(default_factory=dict)


def merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge(out.get(key), value)
    return out


class FakeClient:
    """Answers like the hub for what the controllers send; `objects` is what GET and LIST see."""

    def __init__(self) -> None:
        self.actions: list[Action] = []
        self.objects: dict[tuple[str, str, str], Obj] = {}
        self.errors: dict[tuple[str, str], list[Exception]] = {}
        self.responses: dict[tuple[str, str], Any] = {}
        self._rv = itertools.count(1000)
        self._names = itertools.count(1)

    # --- setup and inspection -------------------------------------------------------------------

    def store(self, resource: Resource, obj: Obj) -> Obj:
        meta = obj["metadata"]
        self.objects[(resource.plural, meta.get("namespace", ""), meta["name"])] = obj
        return obj

    def fail(self, verb: str, plural: str, *exceptions: Exception) -> None:
        self.errors.setdefault((verb, plural), []).extend(exceptions)

    def of(self, verb: str, plural: str | None = None) -> list[Action]:
        return [a for a in self.actions if a.verb == verb and (plural is None or a.plural == plural)]

    def summary(self) -> list[tuple[str, str, str]]:
        return [(a.verb, a.plural, a.name) for a in self.actions if a.verb not in ("get", "list", "discover")]

    def _record(self, verb: str, resource: Resource | str, namespace: str | None, name: str, body: Any = None,
                **options: Any) -> None:
        plural = resource if isinstance(resource, str) else resource.plural
        self.actions.append(Action(verb, plural, namespace, name, copy.deepcopy(body), options))
        queued = self.errors.get((verb, plural))
        if queued:
            raise queued.pop(0)

    def _stamp(self, obj: Obj) -> Obj:
        obj = copy.deepcopy(obj)
        obj["metadata"]["resourceVersion"] = str(next(self._rv))
        return obj

    # --- verbs ----------------------------------------------------------------------------------

    async def get(self, resource: Resource, name: str, namespace: str | None = None) -> Obj:
        self._record("get", resource, namespace, name)
        obj = self.objects.get((resource.plural, namespace or "", name))
        if obj is None:
            raise errors.not_found(f"{resource.group}/{resource.plural}", name)
        return copy.deepcopy(obj)

    async def list(self, resource: Resource, namespace: str | None = None, **_: Any) -> Obj:
        self._record("list", resource, namespace, "")
        items = [copy.deepcopy(o) for (plural, ns, _name), o in sorted(self.objects.items())
                 if plural == resource.plural and (namespace is None or ns == namespace)]
        return {"metadata": {"resourceVersion": "1"}, "items": items}

    async def create(self, resource: Resource, obj: Obj, namespace: str | None = None) -> Obj:
        meta = obj["metadata"]
        self._record("create", resource, namespace or meta.get("namespace"), meta.get("name") or meta.get("generateName", ""), obj)
        out = self._stamp(obj)
        if not out["metadata"].get("name"):
            out["metadata"]["name"] = f"{meta['generateName']}{next(self._names):05d}"
        out["metadata"].setdefault("uid", str(uuid.uuid4()))
        return out

    async def replace(self, resource: Resource, obj: Obj, *, subresource: str | None = None) -> Obj:
        verb = f"replace/{subresource}" if subresource else "replace"
        self._record(verb, resource, obj["metadata"].get("namespace"), obj["metadata"]["name"], obj)
        return self._stamp(obj)

    async def replace_status(self, resource: Resource, obj: Obj) -> Obj:
        return await self.replace(resource, obj, subresource="status")

    async def patch(self, resource: Resource, name: str, patch: Any, namespace: str | None = None, *,
                    patch_type: str = "merge", subresource: str | None = None) -> Obj:
        self._record("patch", resource, namespace, name, patch)
        base = self.objects.get((resource.plural, namespace or "", name)) or {"metadata": {"name": name, "namespace": namespace}}
        return self._stamp(merge(base, patch))

    async def delete(self, resource: Resource, name: str, namespace: str | None = None, *, grace_period: int | None = None,
                     propagation: str | None = None, preconditions: dict[str, str] | None = None) -> Any:
        self._record("delete", resource, namespace, name, grace_period=grace_period, propagation=propagation,
                     preconditions=preconditions)
        return {"kind": "Status", "status": "Success"}

    async def request(self, method: str, path: str, *, params: Any = None, body: Any = None, **_: Any) -> Any:
        if method == "GET":
            self._record("discover", "", None, path)
            return copy.deepcopy(self.responses.get(("GET", path), {}))
        self._record(method.lower() + "collection", path.rsplit("/", 1)[-1], None, path, body)
        return {}


class Recorder:
    """Keeps the events a controller records, as (object name, type, reason, message)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str, str]] = []

    async def record(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        self.events.append((obj["metadata"]["name"], type_, reason, message))


def quota_refusal(pod_name: str = "web-x") -> errors.Forbidden:
    """The 403 the hub's ResourceQuota admission answers a pod create with, as the client raises it."""
    return errors.Forbidden(f'pods "{pod_name}" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, '
                            "limited: pods=2", details={"name": pod_name, "kind": "pods"})


def terminating_refusal(namespace: str = "default") -> errors.Forbidden:
    """The 403 NamespaceLifecycle answers a create in a namespace being deleted (with its cause)."""
    return errors.Forbidden(f'pods "x" is forbidden: unable to create new content in namespace {namespace} because '
                            "it is being terminated",
                            details={"name": "x", "kind": "pods",
                                     "causes": [{"reason": "NamespaceTerminating", "field": "metadata.namespace",
                                                 "message": f"namespace {namespace} is being terminated"}]})


# --- caches ------------------------------------------------------------------------------------

def informers(clock: FakeClock | None = None) -> SharedInformers:
    return SharedInformers(None, clock=clock or FakeClock(START))  # type: ignore[arg-type]


def fill(informer: Informer, *objs: Obj) -> None:
    """Put objects in the cache without telling the handlers (a cache that is simply there)."""
    for obj in objs:
        informer.cache.put(obj)


def observe(informer: Informer, *objs: Obj) -> None:
    """Deliver objects as watch events (ADDED/MODIFIED), so the handlers run."""
    for obj in objs:
        informer.apply({"type": "MODIFIED", "object": obj})


def vanish(informer: Informer, *objs: Obj) -> None:
    for obj in objs:
        informer.apply({"type": "DELETED", "object": obj})


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# --- objects -----------------------------------------------------------------------------------

_rv = itertools.count(1)


def metadata(name: str, namespace: str | None = "default", *, uid: str | None = None, labels: dict | None = None,
             created: float = START - 3600, owners: list[Obj] | None = None, **extra: Any) -> Obj:
    out: Obj = {"name": name, "uid": uid or f"uid-{name}", "resourceVersion": str(next(_rv)),
                "creationTimestamp": format_time(created)}
    if namespace:
        out["namespace"] = namespace
    if labels is not None:
        out["labels"] = dict(labels)
    if owners:
        out["ownerReferences"] = [ref(o) for o in owners]
    out.update(extra)
    return out


def ref(owner: Obj, *, controller: bool = True, block: bool = True) -> Obj:
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": controller, "blockOwnerDeletion": block}


def template(labels: dict[str, str], image: str = "nginx:1.25") -> Obj:
    return {"metadata": {"labels": dict(labels)},
            "spec": {"containers": [{"name": "app", "image": image, "ports": [{"name": "http", "containerPort": 8080,
                                                                                 "protocol": "TCP"}]}],
                     "restartPolicy": "Always", "terminationGracePeriodSeconds": 30}}


def replicaset(name: str = "web", replicas: int = 3, *, labels: dict | None = None, owners: list[Obj] | None = None,
               status: Obj | None = None, generation: int = 1, min_ready: int = 0, image: str = "nginx:1.25",
               annotations: dict | None = None, created: float = START - 3600) -> Obj:
    labels = labels or {"app": "web"}
    extra = {"annotations": dict(annotations)} if annotations else {}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": metadata(name, labels=labels, owners=owners, generation=generation, created=created, **extra),
            "spec": {"replicas": replicas, "minReadySeconds": min_ready, "selector": {"matchLabels": dict(labels)},
                     "template": template(labels, image)},
            "status": status or {}}


def pod(name: str, *, labels: dict | None = None, owners: list[Obj] | None = None, phase: str = "Pending",
        ready: bool = False, node: str = "", ip: str = "", restarts: int = 0, created: float = START - 600,
        deleting: str | None = None, ready_since: float = START - 600, tolerations: list[Obj] | None = None) -> Obj:
    status: Obj = {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                                   "lastTransitionTime": format_time(ready_since)}],
                   "containerStatuses": [{"name": "app", "restartCount": restarts}]}
    if ip:
        status["podIP"] = ip
    extra = {"deletionTimestamp": deleting, "deletionGracePeriodSeconds": 30} if deleting else {}
    spec: Obj = {"containers": [{"name": "app", "image": "nginx", "ports": [{"name": "http", "containerPort": 8080,
                                                                           "protocol": "TCP"}]}]}
    if node:
        spec["nodeName"] = node
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": metadata(name, labels=labels if labels is not None else {"app": "web"}, owners=owners,
                                 created=created, **extra),
            "spec": spec, "status": status}
