"""A fake hub client for reconcile tests: records binds, events and status patches."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from control import errors
from control.clock import FakeClock
from control.client.resources import EVENTS, PERSISTENTVOLUMECLAIMS, PODS
from control.client.shared import SharedInformers
from control.scheduler.scheduler import Scheduler
from tests.scheduler.objects import next_rv


class FakeClient:
    def __init__(self):
        self.binds: list[tuple[str, str]] = []
        self.events: list[dict[str, Any]] = []
        self.event_patches: list[dict[str, Any]] = []
        self.status_patches: list[tuple[str, Any, str]] = []
        self.claim_patches: list[tuple[str, Any]] = []
        self.bind_errors: dict[str, Exception] = {}
        self.deletes: list[str] = []

    async def bind(self, namespace: str, pod: str, node: str) -> None:
        key = f"{namespace}/{pod}"
        if key in self.bind_errors:
            raise self.bind_errors[key]
        if any(k == key for k, _ in self.binds):
            raise errors.Conflict(f'pod {pod} is already assigned to node "{node}"')
        self.binds.append((key, node))

    async def delete(self, resource, name, namespace=None, **options):
        assert resource is PODS
        self.deletes.append(f"{namespace}/{name}")

    async def create(self, resource, obj, namespace=None):
        assert resource is EVENTS
        self.events.append(obj)
        return obj

    async def patch(self, resource, name, patch, namespace=None, *, patch_type="merge", subresource=None):
        if resource is EVENTS:
            self.event_patches.append(patch)
            return patch
        if resource is PERSISTENTVOLUMECLAIMS:
            self.claim_patches.append((f"{namespace}/{name}", patch))
            return patch
        assert resource is PODS and subresource == "status"
        self.status_patches.append((f"{namespace}/{name}", patch, patch_type))
        return patch

    def reasons(self) -> list[str]:
        return [e["reason"] for e in self.events]


class Harness:
    """A Scheduler on a fake client and fake clock; objects enter through its informers."""

    def __init__(self, **options: Any):
        self.client = FakeClient()
        self.clock = FakeClock()
        self._echoed = 0
        self.scheduler = Scheduler(self.client, SharedInformers(self.client, clock=self.clock), clock=self.clock, **options)

    def informer_of(self, obj: dict):
        return {"Node": self.scheduler.nodes, "PersistentVolumeClaim": self.scheduler.claims,
                "StorageClass": self.scheduler.classes}.get(obj.get("kind"), self.scheduler.pods)

    def add(self, *objects: dict) -> None:
        for obj in objects:
            self.informer_of(obj).apply({"type": "ADDED", "object": obj})

    def modify(self, obj: dict) -> dict:
        obj = copy.deepcopy(obj)
        obj["metadata"]["resourceVersion"] = next_rv()
        self.informer_of(obj).apply({"type": "MODIFIED", "object": obj})
        return obj

    def delete(self, obj: dict) -> None:
        self.informer_of(obj).apply({"type": "DELETED", "object": obj})

    def confirm_binds(self) -> None:
        """The watch catches up: every bound pod comes back with its nodeName."""
        for key, node in self.client.binds:
            cached = self.scheduler.pods.cache.get(key)
            if cached and not cached["spec"].get("nodeName"):
                bound = copy.deepcopy(cached)
                bound["spec"]["nodeName"] = node
                self.modify(bound)

    def echo_status_patches(self) -> None:
        """The watch catches up with our PodScheduled patches (conditions merge by type)."""
        while self.client.status_patches[self._echoed:]:
            key, patch, _ = self.client.status_patches[self._echoed]
            self._echoed += 1
            cached = self.scheduler.pods.cache.get(key)
            if cached:
                pod = copy.deepcopy(cached)
                new = patch["status"].get("conditions") or []
                kept = [c for c in pod["status"].get("conditions") or [] if c["type"] not in {n["type"] for n in new}]
                pod["status"]["conditions"] = kept + new
                if "nominatedNodeName" in patch["status"]:
                    pod["status"]["nominatedNodeName"] = patch["status"]["nominatedNodeName"]
                self.modify(pod)

    def queued(self) -> list[str]:
        return list(self.scheduler.queue._queue)

    def run(self, coro):
        """Run a coroutine, then let the background event sender finish."""
        async def main():
            result = await coro
            await self.scheduler.events.flush()
            return result
        return asyncio.run(main())

    async def drain(self) -> list:
        """Reconcile every queued key once, as a worker would."""
        results = []
        while len(self.scheduler.queue):
            key = await self.scheduler.queue.get()
            try:
                results.append((key, await self.scheduler.runner.process(key)))
            finally:
                self.scheduler.queue.done(key)
        await self.scheduler.events.flush()
        return results

    def placement(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for _, node in self.client.binds:
            counts[node] = counts.get(node, 0) + 1
        return counts
