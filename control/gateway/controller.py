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
- Where: as a host-network proxy of node-1 (Envoy Gateway's proxy on a bare-metal node, the way
  the ingress controller listens): on node-1's InternalIP (127.0.1.1, or 127.0.0.1 in loopback
  mode: `control.kubelet.addresses`), waiting until node-1 has one; `KK_GATEWAY_ADDRESS`, when
  set, is served instead (`0.0.0.0` serves every address, node-1's being the one shown). A
  listener's port is served at the port itself where it can be bound and it is one of the usual
  web ports (`WEB_PORTS`: 80, 443, 8080, 8443), else at `KK_GATEWAY_PORT_OFFSET` + port, else at a
  free port (the ingress controller may hold node-1's 80/443 already); the ports taken are
  recorded in the Gateway's annotation `kubekitchen.dev/listeners` (`http=127.0.1.1:30080,...`)
  and the address in `status.addresses`. A Gateway keeps its ports while it lives (a restart of
  the controller may move them).
- Reach from pods: every port served on node-1's address is announced in node-1's annotation
  `kubekitchen.dev/gateway-listeners` (`http=80,http=30081`; removed when none is), which is how
  kube-proxy knows that address:port is a host listener (`control.proxy.hostports`), so a pod's
  `curl`/`wget` to the Gateway's address reaches it (its NetworkPolicy egress decided as for any
  connection). Not announced when `KK_GATEWAY_ADDRESS` names another address than node-1's.
- Events (`control.gateway.events`): a condition that changes is said once, through the hub's
  events API and client-go's correlator (`control.client.events`): `Normal Programmed` for a
  Gateway served, `Normal Accepted` for a route attached, a `Warning` for a route whose backend is
  not permitted or not found, a route not accepted, a Gateway not programmed.
- Before a request is sent, node-1's network agent (its kube-proxy's `/decide`) is asked whether
  the NetworkPolicies let node-1 reach the chosen pod: a dropped connection hangs
  `dataplane.CONNECT_TIMEOUT` (5 s, Envoy's connect timeout) and is answered 503 "upstream connect
  error ... connection timeout"; a kube-proxy that cannot be asked decides nothing.
- Requests go to a pod through its node's kubelet (`POST /serve/...`, with the node-access secret,
  over keep-alive connections, one small pool per kubelet; 2 s to answer, else 503).
- It talks to the hub only, as `system:serviceaccount:kube-system:gateway-controller`.
"""

from __future__ import annotations

import copy
import logging
import random
from typing import Any

from control import config, errors
from control.clock import REAL, Clock
from control.client.component import connect, run_all
from control.client.events import EventRecorder
from control.client.informer import Handlers
from control.client.podserve import KubeletUnreachable, PodServe
from control.client.resources import ENDPOINTSLICES, NAMESPACES, NODES, SERVICES, key_of
from control.client.runner import DONE, Result, Runner, requeue_after
from control.client.shared import SharedInformers
from control.client.workqueue import WorkQueue
from control.gateway import events as gwevents
from control.gateway import status as gwstatus
from control.gateway.dataplane import GatewayServer, Target, ready_endpoints, serve_path
from control.gateway.manifests import GATEWAYCLASSES, GATEWAYS, HTTPROUTES, REFERENCEGRANTS
from control.gateway.routing import Backend, Router
from control.kinds.endpointslices import SERVICE_NAME_LABEL
from control.kinds.network import GATEWAY_PORTS_ANNOTATION, kube_proxy_endpoint, kubelet_endpoint, node_address

log = logging.getLogger(__name__)
WEB_PORTS = frozenset({80, 443, 8080, 8443})
Obj = dict[str, Any]
NAME = "gateway-controller"
PORTS_ANNOTATION = "kubekitchen.dev/listeners"
FORWARD_TIMEOUT = 2.0
SYNC = "sync"
RETRY_LISTEN = 5.0  # seconds before a port that could not be bound is tried again
NODE = "node-1"  # whose address the listeners are served on, as host-network pods of it
WILDCARDS = ("0.0.0.0", "::")


class GatewayController:
    def __init__(self, client: Any, informers: SharedInformers, *, clock: Clock | None = None,
                 rng: random.Random | None = None, host: str | None = None, port_offset: int | None = None,
                 exact_ports: bool = True, node: str = NODE, recorder: Any = None):
        self.client, self.clock = client, clock or REAL
        self.rng = rng or random.Random()
        # an address to serve instead of node-1's ("" or None from the setting: node-1's own)
        self.override = host if host is not None else config.text("KK_GATEWAY_ADDRESS")
        self.node = node
        self.host = ""  # the address shown (status, annotation); set by each reconcile
        self.listening_on: str | None = None  # the address the servers are bound on
        self.recorder = recorder if recorder is not None else EventRecorder(client, NAME, clock=self.clock)
        self.said = gwevents.Said()
        self._node_ip: str | None = None
        self._announce_failed = False
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
        # node-1 matters for its address and the announcement of our ports only (not its heartbeats)
        self.nodes.add_handlers(Handlers(on_add=self._node_changed,
                                         on_update=lambda old, new: self._node_changed(new)))
        self.servers: dict[tuple[str, int], GatewayServer] = {}
        self.bound: dict[tuple[str, int], int] = {}
        self.failed: dict[tuple[str, int], str] = {}
        self.routers: dict[tuple[str, int], Router] = {}
        self.pods = PodServe(NAME, timeout=FORWARD_TIMEOUT)  # the pods' app, via kubelets

    def _changed(self, _obj: Obj) -> None:
        self.queue.add(SYNC)

    def _node_changed(self, node: Obj) -> None:
        if (node.get("metadata") or {}).get("name") != self.node:
            return
        shown = ((node.get("metadata") or {}).get("annotations") or {}).get(GATEWAY_PORTS_ANNOTATION)
        if node_address(node) != self._node_ip or shown != self.announcement():
            self.queue.add(SYNC)

    # --- where ------------------------------------------------------------------------------------

    def node_ip(self) -> str | None:
        return node_address(self.nodes.cache.get(self.node) or {}) or None

    def addresses(self) -> tuple[str | None, str | None]:
        """(the address to bind, the address to show), None while node-1's is not known yet."""
        ip = self.node_ip()
        if not self.override:
            return ip, ip
        if self.override in WILDCARDS:
            return (self.override, ip) if ip else (None, None)
        return self.override, self.override

    def announcement(self) -> str | None:
        """node-1's `kubekitchen.dev/gateway-listeners`: the ports served on its address."""
        ip = self.node_ip()
        if not ip or self.listening_on is None or (self.listening_on != ip and self.listening_on not in WILDCARDS):
            return None
        return ",".join(f"http={port}" for port in sorted(set(self.bound.values()))) or None

    async def _announce(self) -> None:
        node = self.nodes.cache.get(self.node)
        if node is None:
            return
        wanted = self.announcement()
        if ((node.get("metadata") or {}).get("annotations") or {}).get(GATEWAY_PORTS_ANNOTATION) == wanted:
            self._announce_failed = False
            return
        try:
            await self.client.patch(NODES, self.node, {"metadata": {"annotations": {GATEWAY_PORTS_ANNOTATION: wanted}}})
            self._announce_failed = False
        except errors.ApiError as exc:
            log.info("announcing the gateway ports on %s failed: %s", self.node, exc)
            self._announce_failed = True

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
        self._node_ip = self.node_ip()
        bind, shown = self.addresses()
        if bind != self.listening_on:  # node-1's address came (or changed): serve there
            for old in set(self.servers) | set(self.failed):
                await self._stop(old)
            self.listening_on = bind
        self.host = shown or ""
        for klass in self.classes.cache.list():
            if (klass.get("spec") or {}).get("controllerName") == world.controller:
                await self._write(GATEWAYCLASSES, klass, gwstatus.class_status(klass, now))
        ours = [g for g in self.gateways.cache.list() if world.ours(g)]
        wanted: set[tuple[str, int]] = set()
        for gateway in ours:
            gkey = key_of(gateway)
            for port, router in gwstatus.routers(gateway, routes, world).items():
                self.routers[(gkey, port)] = router
                if bind is None:
                    continue  # node-1's address is not known yet: its arrival brings us back
                wanted.add((gkey, port))
                if (gkey, port) not in self.servers:
                    await self._listen(gkey, port)  # a port that could not be bound is tried again
        for gone in [k for k in set(self.servers) | set(self.failed) | set(self.routers) if k not in wanted]:
            await self._stop(gone)
        await self._announce()
        for gateway in ours:
            await self._annotate(gateway)
            served = self._served(key_of(gateway))
            status = gwstatus.gateway_status(gateway, routes, world, served, now)
            if await self._write(GATEWAYS, gateway, status):
                await self._say(GATEWAYS, gateway, gwevents.gateway_events(gateway.get("status"), status))
        for route in routes:
            mine = [p for p in (route.get("status") or {}).get("parents") or []
                    if isinstance(p, dict) and p.get("controllerName") == world.controller]
            if mine or gwstatus.attachments(route, world):
                status = gwstatus.route_status(route, world, now)
                if await self._write(HTTPROUTES, route, status):
                    namespace = str((route.get("metadata") or {}).get("namespace") or "")
                    said = gwevents.route_events(route.get("status"), status, world.controller, namespace)
                    await self._say(HTTPROUTES, route, said)
        return requeue_after(RETRY_LISTEN) if self.failed or self._announce_failed else DONE

    async def _write(self, resource: Any, obj: Obj, status: Obj) -> bool:
        """PUT the status if it differs; True when it was written."""
        if status == (obj.get("status") or {}):
            return False
        body = copy.deepcopy(obj)
        body["apiVersion"], body["kind"] = resource.api_version, resource.kind
        body["status"] = status
        try:
            await self.client.replace_status(resource, body)
        except errors.NotFound:
            return False  # deleted meanwhile: its delete event brings us back
        return True

    async def _say(self, resource: Any, obj: Obj, said: list[gwevents.Event]) -> None:
        """Record the events of a status just written, each change once (`events.Said`)."""
        uid = str((obj.get("metadata") or {}).get("uid") or "")
        about = {**obj, "apiVersion": resource.api_version, "kind": resource.kind}
        for event in self.said.fresh(uid, said):
            await self.recorder.record(about, event.type, event.reason, event.message)

    def _served(self, gkey: str) -> gwstatus.Served:
        bound = {port: p for (k, port), p in self.bound.items() if k == gkey}
        failed = {port: why for (k, port), why in self.failed.items() if k == gkey}
        if self.listening_on is None:
            gateway = self.gateways.cache.get(gkey) or {}
            failed = {listener.get("port"): f"Waiting for the address of {self.node}"
                      for listener in (gateway.get("spec") or {}).get("listeners") or [] if isinstance(listener, dict)}
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
                               forward=self.forward, rng=self.rng, clock=self.clock, name=gkey,
                               dropped=self.dropped)
        problem = ""
        for candidate in self._candidates(port):
            if candidate and candidate in {p for p in self.bound.values()}:
                continue
            try:
                self.bound[(gkey, port)] = await server.start(str(self.listening_on), candidate)
                self.servers[(gkey, port)] = server
                self.failed.pop((gkey, port), None)
                log.info("gateway %s: listener port %d served on %s:%d", gkey, port, self.listening_on,
                         self.bound[(gkey, port)])
                return
            except OSError as exc:
                problem = f"cannot listen on {self.listening_on}: {exc.strerror or exc}"
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

    async def dropped(self, ip: str, port: int) -> Obj | None:
        """What this node's network agent (kube-proxy) says of a connection to a pod: the `dropped`
        fields when a NetworkPolicy drops it, else None."""
        proxy = kube_proxy_endpoint(self.nodes.cache.get(self.node))
        return await self.pods.dropped(proxy, ip, port) if proxy is not None else None

    async def forward(self, target: Target) -> tuple[int, Obj]:
        where = kubelet_endpoint(self.nodes.cache.get(target.node))
        if where is None:
            return 503, {"error": f"node {target.node!r} of pod {target.pod} has no kubelet address"}
        try:
            return await self.pods.serve(where, serve_path(target, NAME))
        except KubeletUnreachable as exc:
            return 503, {"error": f"the kubelet of {target.node} did not answer: {exc}"}

    async def close(self) -> None:
        for key in list(self.servers):
            await self._stop(key)
        await self.pods.close()


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
