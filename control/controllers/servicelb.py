"""servicelb: a simulated cloud load balancer for `type: LoadBalancer` Services.

Guarantees (what a cloud provider's service controller does, with addresses from
the load-balancer pool, `network.load_balancer_pool()`, instead of a cloud):
- Every LoadBalancer Service gets `status.loadBalancer.ingress: [{ip, ipMode: VIP}]`, written
  through the status subresource with its resourceVersion (409 → retry); a free `spec.loadBalancerIP`
  inside the pool is honoured, otherwise the lowest free address is taken.
- No address is given to two Services: the addresses in use are the ones the cache shows plus
  the ones this controller wrote and the cache has not shown yet (expectations); one worker, so
  no two choices race. Should two Services ever show the same address, the older one keeps it.
- An address is free again when its Service goes or stops being a LoadBalancer (its status is
  then cleared); Services waiting for an address look again whenever one is freed.
- A full pool leaves the Service `<pending>` with a Warning event, never a wrong address.
"""

from __future__ import annotations

import copy
import ipaddress
from typing import Any

from control import errors
from control.client.informer import Handlers, Informer
from control.client.resources import SERVICES, key_of
from control.client.runner import DONE, Result, Runner
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj, created_at
from control.kinds.meta import metadata
from control.kinds.network import Network, load_balancer_pool

INGRESS_MODE = "VIP"


def is_load_balancer(svc: Obj | None) -> bool:
    return bool(svc) and (svc.get("spec") or {}).get("type") == "LoadBalancer"


def ingress_ips(svc: Obj) -> list[str]:
    ingress = (((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress")) or []
    return [i["ip"] for i in ingress if isinstance(i, dict) and i.get("ip")]


class ServiceLBController:
    def __init__(self, client: Any, services: Informer, *, clock: Clock, recorder: Any = None,
                 pool: Network | None = None):
        self.client, self.services, self.recorder = client, services, recorder
        self.pool = pool or load_balancer_pool()
        self.queue = WorkQueue(clock=clock)
        # key -> (address written, resourceVersion the cache showed then): our expectations, kept
        # until the cache shows a newer version of that Service
        self.written: dict[str, tuple[str, str]] = {}
        services.add_handlers(Handlers(on_add=self._enqueue, on_update=self._updated, on_delete=self._deleted))

    def _enqueue(self, svc: Obj) -> None:
        if is_load_balancer(svc) or ingress_ips(svc):
            self.queue.add(key_of(svc))

    def _updated(self, old: Obj, new: Obj) -> None:
        self._enqueue(new)
        if is_load_balancer(old) and not is_load_balancer(new):
            self.queue.add(key_of(new))

    def _deleted(self, svc: Obj) -> None:
        self.queue.add(key_of(svc))
        if ingress_ips(svc):
            self._wake_waiting()

    def _wake_waiting(self) -> None:
        for svc in self.services.cache.list():
            if is_load_balancer(svc) and not ingress_ips(svc):
                self.queue.add(key_of(svc))

    # --- which address -----------------------------------------------------------------------

    def _owners(self) -> dict[str, str]:
        """address -> the key of the Service that holds it (the older one when two claim it)."""
        claims: dict[str, tuple[float, str]] = {}
        for svc in self.services.cache.list():
            if not is_load_balancer(svc):
                continue
            for ip in ingress_ips(svc):
                claim = (created_at(svc), key_of(svc))
                if ip not in claims or claim < claims[ip]:
                    claims[ip] = claim
        owners = {ip: key for ip, (_, key) in claims.items()}
        for key, (ip, _) in self.written.items():
            owners.setdefault(ip, key)
        return owners

    def _in_pool(self, ip: Any) -> bool:
        try:
            return ipaddress.ip_address(ip) in self.pool
        except (TypeError, ValueError):
            return False

    def _choose(self, key: str, svc: Obj, owners: dict[str, str]) -> str | None:
        mine = [ip for ip in ingress_ips(svc) if self._in_pool(ip) and owners.get(ip) == key]
        if mine:
            return mine[0]
        if key in self.written:
            return self.written[key][0]
        wanted = (svc.get("spec") or {}).get("loadBalancerIP")
        if wanted and self._in_pool(wanted) and owners.get(wanted, key) == key:
            return wanted
        for address in self.pool.hosts():
            if str(address) not in owners:
                return str(address)
        return None

    # --- reconcile ---------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        svc = self.services.cache.get(key)
        if svc is None:
            if self.written.pop(key, None):
                self._wake_waiting()
            return DONE
        if not is_load_balancer(svc):
            self.written.pop(key, None)
            if any(self._in_pool(ip) for ip in ingress_ips(svc)):
                await self._write(svc, [])
                self._wake_waiting()
            return DONE
        version = metadata(svc).get("resourceVersion", "")
        if key in self.written and self.written[key][1] != version:
            del self.written[key]  # the cache caught up with our write (or someone wrote after it)
        elif key in self.written:
            return DONE  # our write is on its way to the cache
        address = self._choose(key, svc, self._owners())
        if address is None:
            if self.recorder is not None:
                await self.recorder.record(svc, "Warning", "AllocationFailed",
                                           f"no free address left in the load balancer pool {self.pool}")
            return DONE  # woken again when an address is freed
        if ingress_ips(svc) == [address]:
            return DONE
        await self._write(svc, [{"ip": address, "ipMode": INGRESS_MODE}])
        self.written[key] = (address, version)
        if self.recorder is not None:
            await self.recorder.record(svc, "Normal", "IPAllocated", f"Assigned IP [\"{address}\"]")
        return DONE

    async def _write(self, svc: Obj, ingress: list[dict[str, str]]) -> None:
        body = copy.deepcopy(svc)
        load_balancer = {"ingress": ingress} if ingress else {}
        body.setdefault("status", {})["loadBalancer"] = load_balancer
        try:
            await self.client.replace_status(SERVICES, body)
        except errors.NotFound:
            pass  # gone meanwhile: its delete event frees the address


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    services = informers.get(SERVICES)
    controller = ServiceLBController(client, services, clock=clock, recorder=recorder)
    # One worker: choices are made one at a time against the cache plus what was just written.
    return Runner("servicelb", controller.reconcile, controller.queue, [services], workers=1)
