"""Draining a node from the dashboard, as `kubectl drain NODE --ignore-daemonsets
--delete-emptydir-data --force` does it, in the background, with its progress readable at any time.

Guarantees:
- `drain` first cordons the node (spec.unschedulable), then lists the pods bound to it and asks the
  hub to evict each one through its `eviction` subresource (policy/v1 Eviction), so every
  PodDisruptionBudget is honoured by the hub, never by us. DaemonSet pods (their controller would
  put them straight back) and mirror pods (the kubelet's own, annotation `kubernetes.io/config.mirror`)
  are left in place and counted; every other pod is evicted, with or without a controller or an
  emptyDir (`--force`, `--delete-emptydir-data`).
- An eviction answered 429 (a budget allows no disruption now) is retried, with a back-off from
  `RETRY_FIRST` doubling to `RETRY_CAP` (kubectl waits 5 s), while the others go on; the budget's
  name (from the hub's cause) is kept on the progress. 404 means the pod is already gone (done).
  Any other refusal is kept as the pod's error and that pod is not retried.
- Once every pod is evicted it waits until they have left the node (gone, or a new pod with
  another uid), polling every `POLL_SECONDS`. The whole drain stops at `timeout` seconds of the
  injected clock, saying so; it never raises: whatever happens is on the `Progress`.
- `Drains` runs at most one drain per user and node at a time (a second click shows the running
  one); it holds the asyncio tasks so they finish even after the request that started them has
  answered. Progress is kept per user (the user the dashboard acts as, `hub.acting()`): another
  user asking for the same node's drain gets None, never someone else's progress.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.utils.translation import gettext_lazy, ngettext_lazy

from control import errors
from control.clock import REAL, Clock
from control.client.resources import NODES, PODS
from dashboard import hub

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
RETRY_FIRST = 1.0
RETRY_CAP = 5.0  # kubectl drain's wait after a 429
POLL_SECONDS = 1.0
TIMEOUT_SECONDS = 120.0
BUDGET = re.compile(r"The disruption budget (\S+)")


class Client(Protocol):
    async def patch(self, resource: Any, name: str, patch: Any, namespace: str | None = None) -> Any: ...
    async def list(self, resource: Any, namespace: str | None = None, *, field_selector: str = "") -> Any: ...
    async def request(self, method: str, path: str, *, body: Any = None) -> Any: ...


@dataclass
class Progress:
    """What a drain has done so far; `line()` says it in the active language."""

    node: str
    state: str = "cordoning"  # cordoning, evicting, waiting, done, timed-out, failed
    pods: list[str] = field(default_factory=list)  # "ns/name" of the pods to evict
    evicted: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  # DaemonSet and mirror pods, left in place
    blocked: dict[str, str] = field(default_factory=dict)  # pod -> budget that refused it (429)
    failed: dict[str, str] = field(default_factory=dict)  # pod -> the hub's message
    remaining: int = 0  # evicted pods still on the node (while waiting)
    error: str = ""
    timeout: float = TIMEOUT_SECONDS

    @property
    def finished(self) -> bool:
        return self.state in ("done", "timed-out", "failed")

    @property
    def ok(self) -> bool:
        return self.state != "failed" and not self.failed and self.state != "timed-out"

    def line(self, kitchen: bool = False) -> str:
        """The progress in the active language: as kubectl says it, or with `kitchen` in the
        restaurant's words (the node a stove being cleared, its pods dishes moved off, a
        PodDisruptionBudget a staffing rule, DaemonSet pods the bread baskets that stay)."""
        say = KITCHEN if kitchen else KUBERNETES
        values = {"node": self.node, "total": len(self.pods), "done": len(self.evicted), "n": self.remaining,
                  "seconds": int(self.timeout), "error": self.error}
        if self.state in ("cordoning", "failed"):
            return say[self.state] % values
        parts = []
        if self.state == "evicting":
            parts.append(say["evicting"] % values)
            for pod, budget in sorted(self.blocked.items()):
                parts.append(say["blocked"] % {"pod": pod.split("/")[-1], "budget": budget})
        elif self.state == "waiting":
            parts.append(say["waiting"] % values)
        elif self.state == "done":
            parts.append(say["done"] % {"node": self.node, "n": len(self.evicted)})
        else:  # timed-out
            parts.append(say["timed-out"] % values)
            budgets = ", ".join(sorted(set(self.blocked.values())))
            if budgets:
                parts.append(say["still-blocked"] % {"budgets": budgets})
        for pod, message in sorted(self.failed.items()):
            parts.append(f"{pod.split('/')[-1]}: {message}")  # the hub's own words, in either mode
        if self.left:
            parts.append(say["left"] % {"n": len(self.left)})
        return " · ".join(parts)


# Each line of a drain twice (lazy: translated when a line is made, in the language active then).
KUBERNETES: dict[str, Any] = {
    "cordoning": gettext_lazy("Draining %(node)s: cordoning it…"),
    "failed": gettext_lazy("Draining %(node)s failed: %(error)s"),
    "evicting": gettext_lazy("Draining %(node)s: %(done)d of %(total)d evicted"),
    "blocked": gettext_lazy("%(pod)s blocked by budget %(budget)s, retrying"),
    "waiting": gettext_lazy("Draining %(node)s: %(done)d of %(total)d evicted, waiting for %(n)d to leave"),
    "done": ngettext_lazy("node/%(node)s drained: %(n)d pod evicted", "node/%(node)s drained: %(n)d pods evicted", "n"),
    "timed-out": gettext_lazy("Draining %(node)s gave up after %(seconds)d s: %(done)d of %(total)d evicted"),
    "still-blocked": gettext_lazy("still blocked by budget %(budgets)s"),
    "left": ngettext_lazy("%(n)d DaemonSet pod left in place", "%(n)d DaemonSet pods left in place", "n"),
}
KITCHEN: dict[str, Any] = {
    "cordoning": gettext_lazy("Clearing stove %(node)s: closing it to new dishes…"),
    "failed": gettext_lazy("Clearing stove %(node)s failed: %(error)s"),
    "evicting": gettext_lazy("Clearing stove %(node)s: %(done)d of %(total)d dishes moved off"),
    "blocked": gettext_lazy("%(pod)s held back by staffing rule %(budget)s, trying again"),
    "waiting": gettext_lazy("Clearing stove %(node)s: %(done)d of %(total)d dishes moved off, "
                            "waiting for %(n)d to leave"),
    "done": ngettext_lazy("Stove %(node)s cleared: %(n)d dish moved off", "Stove %(node)s cleared: %(n)d dishes moved off",
                          "n"),
    "timed-out": gettext_lazy("Clearing stove %(node)s gave up after %(seconds)d s: %(done)d of %(total)d dishes "
                              "moved off"),
    "still-blocked": gettext_lazy("still held back by staffing rule %(budgets)s"),
    "left": ngettext_lazy("%(n)d bread basket left on the stove", "%(n)d bread baskets left on the stove", "n"),
}


def _key(pod: dict[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def stays(pod: dict[str, Any]) -> bool:
    """A pod drain leaves in place: a DaemonSet's (--ignore-daemonsets) or a mirror pod."""
    meta = pod.get("metadata") or {}
    if MIRROR_ANNOTATION in (meta.get("annotations") or {}):
        return True
    refs = [r for r in meta.get("ownerReferences") or [] if isinstance(r, dict)]
    return any(r.get("controller") and r.get("kind") == "DaemonSet" for r in refs)


def _budget(exc: errors.ApiError) -> str:
    for cause in (exc.details or {}).get("causes") or []:
        match = BUDGET.match(str((cause or {}).get("message") or ""))
        if match:
            return match.group(1)
    return "?"


async def _evict(client: Client, pod: str, progress: Progress) -> bool:
    """One eviction; True when it is settled (evicted, gone or refused for good)."""
    namespace, name = pod.split("/", 1)
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace}}
    try:
        await client.request("POST", PODS.path(namespace, name, "eviction"), body=body)
    except errors.TooManyRequests as exc:
        progress.blocked[pod] = _budget(exc)
        return False
    except errors.NotFound:
        pass  # already gone: nothing left to evict
    except errors.ApiError as exc:
        progress.blocked.pop(pod, None)
        progress.failed[pod] = exc.message
        return True
    progress.blocked.pop(pod, None)
    progress.evicted.append(pod)
    return True


async def drain(client: Client, progress: Progress, *, clock: Clock = REAL, timeout: float = TIMEOUT_SECONDS) -> None:
    """Cordon, evict, wait (see the module's guarantees); the outcome is left on `progress`."""
    deadline, progress.timeout = clock.monotonic() + timeout, timeout
    try:
        await client.patch(NODES, progress.node, {"spec": {"unschedulable": True}})
        listed = await client.list(PODS, field_selector=f"spec.nodeName={progress.node}")
        pods = [p for p in listed.get("items") or [] if isinstance(p, dict)]
        progress.left = [_key(p) for p in pods if stays(p)]
        uids = {_key(p): (p.get("metadata") or {}).get("uid") for p in pods if not stays(p)}
        progress.pods = list(uids)
        progress.state = "evicting"
        pending, delay = list(progress.pods), RETRY_FIRST
        while pending:
            pending = [pod for pod in pending if not await _evict(client, pod, progress)]
            if not pending:
                break
            if clock.monotonic() + delay > deadline:
                progress.state = "timed-out"
                return
            await clock.sleep(delay)
            delay = min(RETRY_CAP, delay * 2)
        progress.state = "waiting"
        while True:
            listed = await client.list(PODS, field_selector=f"spec.nodeName={progress.node}")
            still = {_key(p) for p in listed.get("items") or []
                     if isinstance(p, dict) and uids.get(_key(p)) == (p.get("metadata") or {}).get("uid")}
            progress.remaining = len(still & set(progress.evicted))
            if not progress.remaining:
                break
            if clock.monotonic() + POLL_SECONDS > deadline:
                progress.state = "timed-out"
                return
            await clock.sleep(POLL_SECONDS)
        progress.state = "done"
    except errors.ApiError as exc:  # the cordon or a list refused, or the hub went away
        progress.state, progress.error = "failed", exc.message
    except Exception as exc:  # noqa: BLE001 - a background task has no caller: the page must hear of it
        progress.state, progress.error = "failed", f"{type(exc).__name__}: {exc}"


def _acting_user() -> str:
    identity = hub.acting()
    return identity.user if identity else ""  # "" = the dashboard's own identity (authentication off)


class Drains:
    """The drains of one process, per user: one per user and node at a time, each an asyncio task
    held until it ends."""

    def __init__(self, *, clock: Clock = REAL, timeout: float = TIMEOUT_SECONDS):
        self.clock, self.timeout = clock, timeout
        self.progress: dict[tuple[str, str], Progress] = {}
        self.tasks: set[asyncio.Task[None]] = set()

    def start(self, client: Client, node: str, owner: str | None = None) -> Progress:
        """The owner's running drain of the node, or a new one started in the background."""
        key = (_acting_user() if owner is None else owner, node)
        held = self.progress.get(key)
        if held is not None and not held.finished:
            return held
        progress = self.progress[key] = Progress(node)
        task = asyncio.get_running_loop().create_task(drain(client, progress, clock=self.clock, timeout=self.timeout))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return progress

    def get(self, node: str, owner: str | None = None) -> Progress | None:
        return self.progress.get((_acting_user() if owner is None else owner, node))


DRAINS = Drains()
