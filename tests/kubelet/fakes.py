"""Fakes for the kubelet's tests: a hub that keeps objects in memory and records every call, and an
event recorder that remembers what it was told."""

from __future__ import annotations

import copy
import itertools
import uuid
from typing import Any

from control import errors
from control.client.resources import Resource

Obj = dict[str, Any]


class FakeHub:
    """Enough of HubClient for the kubelet: get, create, replace(_status), delete, with
    resourceVersions, 409 on a stale one, 404 on a missing object, and uid preconditions.
    `fail` queues an error for the next call of a verb; `actions` lists (verb, plural, name)."""

    def __init__(self):
        self.objects: dict[tuple[str, str, str], Obj] = {}
        self.actions: list[tuple[str, str, str]] = []
        self.failures: dict[str, list[Exception]] = {}
        self._rv = itertools.count(100)

    def fail(self, verb: str, error: Exception) -> None:
        self.failures.setdefault(verb, []).append(error)

    def _record(self, verb: str, resource: Resource, name: str) -> None:
        self.actions.append((verb, resource.plural, name))
        queued = self.failures.get(verb)
        if queued:
            raise queued.pop(0)

    def put(self, resource: Resource, obj: Obj) -> Obj:
        """Store an object directly (test set-up), stamping uid and resourceVersion."""
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("uid", str(uuid.uuid4()))
        meta["resourceVersion"] = str(next(self._rv))
        self.objects[(resource.plural, meta.get("namespace") or "", meta["name"])] = obj
        return copy.deepcopy(obj)

    def stored(self, resource: Resource, name: str, namespace: str = "") -> Obj | None:
        return copy.deepcopy(self.objects.get((resource.plural, namespace, name)))

    def verbs(self, plural: str | None = None) -> list[str]:
        return [verb for verb, p, _ in self.actions if plural is None or p == plural]

    async def get(self, resource: Resource, name: str, namespace: str | None = None) -> Obj:
        self._record("get", resource, name)
        found = self.objects.get((resource.plural, namespace or "", name))
        if found is None:
            raise errors.NotFound(f'{resource.plural} "{name}" not found')
        return copy.deepcopy(found)

    async def create(self, resource: Resource, obj: Obj, namespace: str | None = None) -> Obj:
        name = obj["metadata"]["name"]
        self._record("create", resource, name)
        key = (resource.plural, namespace or obj["metadata"].get("namespace") or "", name)
        if key in self.objects:
            raise errors.AlreadyExists(f'{resource.plural} "{name}" already exists')
        obj = copy.deepcopy(obj)
        obj["metadata"]["namespace"] = key[1] or obj["metadata"].get("namespace")
        if not obj["metadata"]["namespace"]:
            obj["metadata"].pop("namespace")
        return self.put(resource, obj)

    async def replace(self, resource: Resource, obj: Obj, *, subresource: str | None = None) -> Obj:
        meta = obj["metadata"]
        self._record("replace_status" if subresource == "status" else "replace", resource, meta["name"])
        key = (resource.plural, meta.get("namespace") or "", meta["name"])
        current = self.objects.get(key)
        if current is None:
            raise errors.NotFound(f'{resource.plural} "{meta["name"]}" not found')
        if meta.get("resourceVersion") and meta["resourceVersion"] != current["metadata"]["resourceVersion"]:
            raise errors.Conflict(f'Operation cannot be fulfilled on {resource.plural} "{meta["name"]}": '
                                  "the object has been modified")
        new = copy.deepcopy(current)
        if subresource == "status":
            new["status"] = copy.deepcopy(obj.get("status"))
        else:
            new = {**copy.deepcopy(obj), "status": copy.deepcopy(current.get("status", obj.get("status")))}
            new["metadata"]["uid"] = current["metadata"]["uid"]
        return self.put(resource, new)

    async def replace_status(self, resource: Resource, obj: Obj) -> Obj:
        return await self.replace(resource, obj, subresource="status")

    async def delete(self, resource: Resource, name: str, namespace: str | None = None, *,
                     grace_period: int | None = None, propagation: str | None = None,
                     preconditions: dict[str, str] | None = None) -> Any:
        self._record("delete", resource, name)
        key = (resource.plural, namespace or "", name)
        current = self.objects.get(key)
        if current is None:
            raise errors.NotFound(f'{resource.plural} "{name}" not found')
        if preconditions and preconditions.get("uid") not in (None, current["metadata"]["uid"]):
            raise errors.Conflict("Precondition failed: UID in precondition")
        self.deleted_with = {"grace_period": grace_period, "preconditions": preconditions}
        return self.objects.pop(key)


    async def request(self, method: str, path: str, *, params: dict[str, Any] | None = None, body: Any = None) -> Any:
        """Only TokenRequest (POST .../serviceaccounts/NAME/token): a numbered fake token."""
        self.actions.append((method.lower(), "token", path))
        queued = self.failures.get("token")
        if queued:
            raise queued.pop(0)
        if not path.endswith("/token") or method != "POST":
            raise errors.NotFound(f"no fake for {method} {path}")
        self.tokens = getattr(self, "tokens", 0) + 1
        return {**body, "status": {"token": f"token-{self.tokens}"}}


class FakeEvents:
    def __init__(self):
        self.told: list[tuple[str, str, str, str]] = []

    async def record(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        self.told.append((obj["metadata"]["name"], type_, reason, message))

    def reasons(self) -> list[str]:
        return [reason for _, _, reason, _ in self.told]
