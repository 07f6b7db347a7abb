"""The node's heartbeats: registering the Node, renewing its Lease, posting its status.

Guarantees:
- `register` creates the Node, or takes over an existing one (adding labels and a missing
  podCIDR, keeping the rest), then posts a full status with Ready=True; a node the lifecycle
  controller had marked Unknown is Ready again once its kubelet is back.
- The Lease `kube-node-lease/<node>` is renewed every `timings.lease_renew` s with the last
  Lease the kubelet wrote (one PUT per renewal); a conflict or a missing Lease makes the next
  attempt start from a fresh GET, after a short back-off (200 ms doubling up to lease_renew).
- The status is looked at every `timings.status_check` s (upstream's nodeStatusUpdateFrequency)
  and at once when the Node is seen not Ready or deleted (`poke`), against the newest Node the
  kubelet has seen (its informer's copy; a GET only when it has none). It is written only when it
  changed beyond its heartbeat times (kubelet_node_status.go nodeStatusHasChanged) or when
  `timings.status_report` s (nodeStatusReportFrequency) have passed since the last write: an idle
  node costs the hub one Lease write per renewal and one status write per report interval. A
  deleted Node is registered again; a conflict makes the next look start from a fresh GET.
- Each loop is a few lines around one-shot methods (`renew_lease`, `sync_status`, `report_status`) that tests
  call directly; time comes from the injected clock.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from control import errors
from control.client.resources import LEASES, NODES
from control.client.timings import Timings
from control.clock import Clock
from control.kinds.meta import is_node_ready
from control.kubelet.config import KubeletConfig
from control.kubelet.node import LEASE_NAMESPACE, lease_object, node_status, pod_cidr, registered_node

log = logging.getLogger(__name__)
Obj = dict[str, Any]


class NodeAgent:
    def __init__(self, client: Any, node: str, *, ip: str, port: int, clock: Clock, timings: Timings,
                 config: KubeletConfig):
        self.client, self.node, self.ip, self.port = client, node, ip, port
        self.clock, self.timings, self.config = clock, timings, config
        self.node_uid = ""
        self.pod_cidr = pod_cidr(node, _pod_count(config))
        self.lease: Obj | None = None
        self.seen: Obj | None = None  # the newest Node the kubelet knows of (its informer's, or a write's answer)
        self.reported_at: float | None = None  # when the status was last written
        self._poked = asyncio.Event()

    # --- one-shot steps ------------------------------------------------------------------------

    async def register(self) -> Obj:
        try:
            existing: Obj | None = await self.client.get(NODES, self.node)
        except errors.NotFound:
            existing = None
        desired = registered_node(existing, self.node, _pod_count(config=self.config))
        if existing is None:
            saved = await self.client.create(NODES, desired)
        elif desired != existing:
            saved = await self.client.replace(NODES, desired)
        else:
            saved = existing
        self.pod_cidr = (saved.get("spec") or {}).get("podCIDR") or self.pod_cidr
        return await self.report_status(saved)

    async def report_status(self, node: Obj | None = None) -> Obj:
        node = node or await self.client.get(NODES, self.node)
        status = node_status(node.get("status"), node=self.node, ip=self.ip, port=self.port, config=self.config,
                             now=self.clock.now())
        try:
            saved = await self.client.replace_status(NODES, {**node, "apiVersion": "v1", "kind": "Node", "status": status})
        except (errors.Conflict, errors.NotFound):
            self.seen = None  # our copy was stale: the next look starts from a fresh GET
            raise
        self.node_uid = saved["metadata"].get("uid", "")
        self.reported_at = self.clock.now()
        self._remember(saved)
        return saved

    async def sync_status(self) -> Obj | None:
        """Write the status if it changed or the report interval is up; the written Node, or None."""
        node = self.seen or await self.client.get(NODES, self.node)
        self._remember(node)
        now = self.clock.now()
        due = self.reported_at is None or now - self.reported_at >= self.timings.status_report
        desired = node_status(node.get("status"), node=self.node, ip=self.ip, port=self.port, config=self.config,
                              now=now)
        if not due and not status_changed(node.get("status"), desired):
            return None
        return await self.report_status(node)

    async def renew_lease(self) -> Obj:
        now = self.clock.now()
        if self.lease is None:
            try:
                self.lease = await self.client.get(LEASES, self.node, LEASE_NAMESPACE)
            except errors.NotFound:
                body = lease_object(None, node=self.node, node_uid=self.node_uid,
                                    duration=self.timings.lease_duration, now=now)
                self.lease = await self.client.create(LEASES, body, LEASE_NAMESPACE)
                return self.lease
        body = lease_object(self.lease, node=self.node, node_uid=self.node_uid,
                            duration=self.timings.lease_duration, now=now)
        try:
            self.lease = await self.client.replace(LEASES, body)
        except (errors.Conflict, errors.NotFound):
            self.lease = None
            raise
        return self.lease

    def poke(self) -> None:
        """Post the status soon (the Node was seen not Ready, or deleted)."""
        self._poked.set()

    def on_node_seen(self, node: Obj) -> None:
        self._remember(node)
        if not is_node_ready(node):
            self.poke()

    def on_node_deleted(self) -> None:
        self.seen = None
        self.poke()

    def _remember(self, node: Obj) -> None:
        """Keep `node` unless we already hold a newer version (an informer event may trail a write's answer)."""
        if self.seen is None or _version(node) >= _version(self.seen):
            self.seen = node

    # --- loops ---------------------------------------------------------------------------------

    async def register_until_done(self) -> Obj:
        delay = 0.2
        while True:
            try:
                return await self.register()
            except errors.ApiError as exc:
                log.warning("registering node %s failed: %s; again in %.1fs", self.node, exc, delay)
                await self.clock.sleep(delay)
                delay = min(delay * 2, 5.0)

    async def lease_loop(self) -> None:
        delay = 0.0
        while True:
            try:
                await self.renew_lease()
                delay = 0.0
            except errors.ApiError as exc:
                delay = min(self.timings.lease_renew, delay * 2 if delay else 0.2)
                log.info("renewing lease of %s failed: %s", self.node, exc)
            await self.clock.sleep(delay or self.timings.lease_renew)

    async def status_loop(self) -> None:
        while True:
            await self._sleep_or_poke(self.timings.status_check)
            try:
                await self.sync_status()
            except errors.NotFound:
                await self.register_until_done()
            except errors.ApiError as exc:
                log.info("posting status of %s failed: %s", self.node, exc)
                await self.clock.sleep(0.2)
                self.poke()

    async def _sleep_or_poke(self, seconds: float) -> None:
        sleeper = asyncio.ensure_future(self.clock.sleep(seconds))
        poked = asyncio.ensure_future(self._poked.wait())
        try:
            await asyncio.wait({sleeper, poked}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            poked.cancel()
            self._poked.clear()


def status_changed(old: Obj | None, new: Obj) -> bool:
    """Whether a node status differs beyond its conditions' heartbeat times."""
    return _without_heartbeats(old or {}) != _without_heartbeats(new)


def _without_heartbeats(status: Obj) -> Obj:
    conditions = [{k: v for k, v in c.items() if k != "lastHeartbeatTime"} if isinstance(c, dict) else c
                  for c in status.get("conditions") or []]
    return {**status, "conditions": conditions}


def _version(node: Obj) -> int:
    try:
        return int((node.get("metadata") or {}).get("resourceVersion") or 0)
    except (TypeError, ValueError):
        return 0


def _pod_count(config: KubeletConfig) -> int:
    try:
        return int(config.pods)
    except (TypeError, ValueError):
        return 110
