"""The gateway controller, as a spoke (`python manage.py runcomponent gateway-controller --server
URL`): it watches the Gateway API kinds, Services, EndpointSlices, Nodes and Namespaces through
the hub, writes the status of what it owns, and serves each of its Gateways' HTTP listeners on
this machine.

Guarantees:
- Level-triggered: every change of anything it watches queues the one key `sync`; `reconcile`
  reads the caches only and makes the world agree — a server for each port of each of our
  Gateways (started, its Router swapped in as a whole, or closed when the port or the Gateway is
  gone), then the statuses (`control.gateway.status`) of our GatewayClasses, Gateways and of the
  HTTPRoutes attached to them, each written only when it differs from the cached one, by PUT to
  the status subresource guarded by the resourceVersion read (a 409 is retried with back-off, as
  any transient error). Acting twice changes nothing the second time.
- A listener's port is served on `KK_GATEWAY_ADDRESS` at the port itself where it can be bound
  and it is one of the usual web ports (`WEB_PORTS`: 80, 443, 8080, 8443), else at `KK_GATEWAY_PORT_OFFSET` + port, else at a free port; the ports taken are recorded in the
  Gateway's annotation `kubekitchen.dev/listeners` (`http=127.0.0.1:30080,...`) and the address in
  `status.addresses`. A Gateway keeps its ports while it lives (a restart of the controller may
  move them).
- Requests go to a pod through its node's kubelet (`POST /serve/...`, with the node-access secret,
  over keep-alive connections, one small pool per kubelet; 2 s to answer, else 503).
- It talks to the hub only, as `system:serviceaccount:kube-system:gateway-controller`.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import random
from typing import Any

from control import config, errors
from control.clock import REAL, Clock
from control.client import nodeaccess
from control.client.component import connect, run_all
from control.client.informer import Handlers
from control.client.lean import ConnectionPool
from control.client.resources import ENDPOINTSLICES, NAMESPACES, NODES, SERVICES, key_of
from control.client.runner import DONE, Result, Runner, requeue_after
from control.client.shared import SharedInformers
from control.client.workqueue import WorkQueue
from control.gateway import status as gwstatus
from control.gateway.dataplane import GatewayServer, Target, decode, ready_endpoints, serve_path
from control.gateway.manifests import GATEWAYCLASSES, GATEWAYS, HTTPROUTES, REFERENCEGRANTS
from control.gateway.routing import Backend, Router
from control.kinds.endpointslices import SERVICE_NAME_LABEL
from control.kinds.network import kubelet_endpoint

log = logging.getLogger(__name__)
WEB_PORTS = frozenset({80, 443, 8080, 8443})
Obj = dict[str, Any]
NAME = "gateway-controller"
PORTS_ANNOTATION = "kubekitchen.dev/listeners"
FORWARD_TIMEOUT = 2.0
SYNC = "sync"
RETRY_LISTEN = 5.0  # seconds before a port that could not be bound is tried again


class GatewayController:
    def __init__(self, client: Any, informers: SharedInformers, *, clock: Clock | None = None,
                 rng: random.Random | None = None, host: str | None = None, port_offset: int | None = None,
                 exact_ports: bool = True):
        self.client, self.clock = client, clock or REAL
        self.rng = rng or random.Random()
        self.host = host if host is not None else config.text("KK_GATEWAY_ADDRESS")
        self.port_offset = port_offset if port_offset is not None else config.value("KK_GATEWAY_PORT_OFFSET")
        self.exact_ports = exact_ports  # False (tests): never the listener's own port, only offset or free
        get = informers.get
        self.classes, self.gateways, self.routes = get(GATEWAYCLASSES), get(GATEWAYS), get(HTTPROUTES)
        self.grants, self.services, self.slices = get(REFERENCEGRANTS), get(SERVICES), get(ENDPOINTSLICES)
        self.nodes, self.namespaces = get(NODES), get(NAMESPACES)
        self.watched = [self.classes, self.gateways, self.routes, self.grants, self.services, self.slices,
                        self.nodes, self.namespaces]
        self.queue = WorkQueue(clock=self.clock)
        for informer in self.watched:
            if informer not in (self.slices, self.nodes):  # endpoints are read per request, not reconciled
                informer.add_handlers(Handlers(on_add=self._changed, on_update=lambda old, new: self._changed(new),
                                               on_delete=self._changed))
        self.servers: dict[tuple[str, int], GatewayServer] = {}
        self.bound: dict[tuple[str, int], int] = {}
        self.failed: dict[tuple[str, int], str] = {}
        self.routers: dict[tuple[str, int], Router] = {}
        self._pools: dict[tuple[str, int], ConnectionPool] = {}

    def _changed(self, _obj: Obj) -> None:
        self.queue.add(SYNC)

    def world(self) -> gwstatus.World:
        cache = lambda informer: (lambda namespace, name: informer.cache.get(f"{namespace}/{name}"))  # noqa: E731
        return gwstatus.World(
            classes=self.classes.cache.get,  # cluster-scoped: keyed by name
            gateways=cache(self.gateways), services=cache(self.services),
            namespaces=self.namespaces.cache.get,
            grants=lambda namespace: self.grants.cache.by_index("namespace", namespace))

    # --- the reconcile ----------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        world = self.world()
        now = self.clock.now()
        routes = self.routes.cache.list()
        for klass in self.classes.cache.list():
            if (klass.get("spec") or {}).get("controllerName") == world.controller:
                await self._write(GATEWAYCLASSES, klass, gwstatus.class_status(klass, now))
        ours = [g for g in self.gateways.cache.list() if world.ours(g)]
        wanted: set[tuple[str, int]] = set()
        for gateway in ours:
            gkey = key_of(gateway)
            for port, router in gwstatus.routers(gateway, routes, world).items():
                wanted.add((gkey, port))
                self.routers[(gkey, port)] = router
                if (gkey, port) not in self.servers:
                    await self._listen(gkey, port)  # a port that could not be bound is tried again
        for gone in [k for k in set(self.servers) | set(self.failed) if k not in wanted]:
            await self._stop(gone)
        for gateway in ours:
            await self._annotate(gateway)
            served = self._served(key_of(gateway))
            await self._write(GATEWAYS, gateway, gwstatus.gateway_status(gateway, routes, world, served, now))
        for route in routes:
            mine = [p for p in (route.get("status") or {}).get("parents") or []
                    if isinstance(p, dict) and p.get("controllerName") == world.controller]
            if mine or gwstatus.attachments(route, world):
                await self._write(HTTPROUTES, route, gwstatus.route_status(route, world, now))
        return requeue_after(RETRY_LISTEN) if self.failed else DONE

    async def _write(self, resource: Any, obj: Obj, status: Obj) -> None:
        if status == (obj.get("status") or {}):
            return
        body = copy.deepcopy(obj)
        body["apiVersion"], body["kind"] = resource.api_version, resource.kind
        body["status"] = status
        try:
            await self.client.replace_status(resource, body)
        except errors.NotFound:
            pass  # deleted meanwhile: its delete event brings us back

    def _served(self, gkey: str) -> gwstatus.Served:
        bound = {port: p for (k, port), p in self.bound.items() if k == gkey}
        failed = {port: why for (k, port), why in self.failed.items() if k == gkey}
        return gwstatus.Served(self.host, bound, failed)

    async def _annotate(self, gateway: Obj) -> None:
        gkey = key_of(gateway)
        names = {}
        for listener in (gateway.get("spec") or {}).get("listeners") or []:
            port = listener.get("port") if isinstance(listener, dict) else None
            if (gkey, port) in self.bound:
                names[str(listener.get("name"))] = f"{self.host}:{self.bound[(gkey, port)]}"
        shown = ",".join(f"{n}={a}" for n, a in sorted(names.items()))
        current = ((gateway.get("metadata") or {}).get("annotations") or {}).get(PORTS_ANNOTATION)
        if (shown or None) == current:
            return
        meta = gateway.get("metadata") or {}
        patch = {"metadata": {"annotations": {PORTS_ANNOTATION: shown or None}}}
        try:
            await self.client.patch(GATEWAYS, meta.get("name"), patch, meta.get("namespace"))
        except errors.NotFound:
            pass

    # --- listening ----------------------------------------------------------------------------------

    def _candidates(self, port: int) -> list[int]:
        # Only the usual web ports are taken as they are: a room's Gateways must not squat any
        # other port of the instructor's machine (a database's, the hub's next start, ...).
        out = [port] if self.exact_ports and port in WEB_PORTS else []
        if self.port_offset and 0 < port + self.port_offset < 65536:
            out.append(port + self.port_offset)
        return out + [0]

    async def _listen(self, gkey: str, port: int) -> None:
        server = GatewayServer(lambda: self.routers.get((gkey, port)) or Router(), endpoints=self.endpoints,
                               forward=self.forward, rng=self.rng, clock=self.clock, name=gkey)
        problem = ""
        for candidate in self._candidates(port):
            if candidate and candidate in {p for p in self.bound.values()}:
                continue
            try:
                self.bound[(gkey, port)] = await server.start(self.host, candidate)
                self.servers[(gkey, port)] = server
                self.failed.pop((gkey, port), None)
                log.info("gateway %s: listener port %d served on %s:%d", gkey, port, self.host,
                         self.bound[(gkey, port)])
                return
            except OSError as exc:
                problem = f"cannot listen on {self.host}: {exc.strerror or exc}"
        self.failed[(gkey, port)] = problem

    async def _stop(self, key: tuple[str, int]) -> None:
        server = self.servers.pop(key, None)
        self.bound.pop(key, None)
        self.failed.pop(key, None)
        self.routers.pop(key, None)
        if server is not None:
            await server.close()

    # --- traffic --------------------------------------------------------------------------------------

    def endpoints(self, backend: Backend) -> list[Target]:
        service = self.services.cache.get(f"{backend.namespace}/{backend.name}")
        if service is None or backend.port is None:
            return []
        slices = [s for s in self.slices.cache.by_index("namespace", backend.namespace)
                  if ((s.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL) == backend.name]
        return ready_endpoints(service, backend.port, slices)

    async def forward(self, target: Target) -> tuple[int, Obj]:
        where = kubelet_endpoint(self.nodes.cache.get(target.node))
        if where is None:
            return 503, {"error": f"node {target.node!r} of pod {target.pod} has no kubelet address"}
        pool = self._pools.get(where)
        if pool is None:
            pool = self._pools[where] = ConnectionPool(f"http://{where[0]}:{where[1]}", NAME, size=16,
                                                       token=nodeaccess.token())
        path = serve_path(target, NAME)
        try:
            try:
                code, data = await pool.request("POST", path, None, "application/json", FORWARD_TIMEOUT)
            except (asyncio.IncompleteReadError, ConnectionError):
                await pool.close()  # a kept connection the kubelet had closed: once more on a fresh one
                code, data = await pool.request("POST", path, None, "application/json", FORWARD_TIMEOUT)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError) as exc:
            return 503, {"error": f"the kubelet of {target.node} did not answer: {type(exc).__name__}"}
        return code, decode(data)

    async def close(self) -> None:
        for key in list(self.servers):
            await self._stop(key)
        for pool in self._pools.values():
            await pool.close()


def build(client: Any, informers: SharedInformers, **options: Any) -> tuple[GatewayController, Runner]:
    controller = GatewayController(client, informers, **options)
    return controller, Runner(NAME, controller.reconcile, controller.queue, controller.watched, workers=1)


async def run_gateway_controller(server: str, *, clock: Clock | None = None) -> None:
    """Run the gateway controller against the hub at `server` until cancelled."""
    client = connect(server, NAME)
    informers = SharedInformers(client, clock=clock or REAL)
    controller, runner = build(client, informers, clock=clock)
    try:
        await run_all(client, [informers.run(), runner.run()])
    finally:
        await controller.close()
