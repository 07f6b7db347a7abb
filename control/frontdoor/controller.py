"""The ingress controller, as a spoke: the maître d' at the front door. It watches IngressClasses,
Ingresses, Services, EndpointSlices, TLS Secrets and Nodes through the hub, serves the Ingresses of
its class over HTTP and HTTPS on node-1's address, and writes their `status.loadBalancer`.

Guarantees:
- Its class is every IngressClass whose `spec.controller` is `CONTROLLER` (the bootstrap class
  `kitchen`); which Ingresses it serves and how it routes are `routing`'s, rebuilt and swapped in
  as one value whenever an Ingress or IngressClass changes (a request reads one routing table).
- It listens as a host-network pod of node-1 would (ingress-nginx's bare-metal hostNetwork
  setup): on node-1's InternalIP (127.0.1.1 where this machine has it, 127.0.0.1 on macOS, as the
  kubelets decide: `control.kubelet.addresses`), at KK_INGRESS_HTTP_PORT (80) and
  KK_INGRESS_HTTPS_PORT (443), falling back to 8080/8443 (an unprivileged user cannot bind ports
  under 1024 on Linux), then to a free port; it records the ports it took in node-1's annotation
  `kubekitchen.dev/ingress-controller-ports` (`http=8080,https=8443`), which is how kube-proxy
  knows that address:port is a host listener (traffic from pods, `control.proxy.hostports`).
- A request goes to a READY endpoint of the backend Service (round-robin, `endpoints`), sent to
  that pod's kubelet (`POST /serve/<ns>/<pod>`, with the node-access secret) as ingress-nginx sends
  to pod endpoints, not the ClusterIP; the answer is what that pod's simulated server gives the
  path (`control.kinds.pod_servers`), with `x-kubekitchen-pod: <ns>/<pod>` naming it. A plain-HTTP
  request for a host an Ingress lists under `spec.tls` is answered 308 to the same URL on HTTPS
  (ingress-nginx's default ssl-redirect; the annotation `nginx.ingress.kubernetes.io/ssl-redirect:
  "false"` keeps HTTP). No route:
  404 with nginx's page (ingress-nginx's default backend); no ready endpoint: 503; a kubelet that
  does not answer within 2 s, or refuses: 502. Before it is sent, node-1's network agent (its
  kube-proxy's `/decide`) is asked whether the NetworkPolicies let node-1 reach that pod: a dropped
  connection hangs CONNECT_TIMEOUT (5 s, ingress-nginx's proxy-connect-timeout) and is answered 504
  Gateway Time-out, as a hostNetwork ingress-nginx behind a CNI sees it; a kube-proxy that cannot
  be asked decides nothing.
- Every Ingress it serves gets `status.loadBalancer.ingress: [{ip: <address>}]` (with `ports` when
  HTTP is not on 80) through the status subresource, written only when different, retried on a
  conflict; an Ingress it serves that is added, or whose spec changed (generation), gets the event
  `Normal Sync "Scheduled for sync"`, as ingress-nginx records it.
- It talks to the hub only, as `ingress-controller` (identity `system:ingress-controller`).
  `python manage.py runcomponent ingress-controller --server URL` calls `run_ingress_controller`.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any
from urllib.parse import quote, urlsplit

from control import config, errors
from control.clock import REAL, Clock
from control.client.annotate import annotate_node
from control.client.component import connect, run_all
from control.client.events import EventRecorder
from control.client.http import HubClient
from control.client.informer import Handlers
from control.client.podserve import KubeletUnreachable, PodServe
from control.client.resources import (
    ENDPOINTSLICES, INGRESSCLASSES, INGRESSES, NODES, SECRETS, SERVICES, key_of,
)
from control.client.shared import SharedInformers
from control.frontdoor import routing
from control.frontdoor.endpoints import PodEndpoint, RoundRobin, endpoints_for, why_none
from control.frontdoor.server import FrontDoorServer
from control.frontdoor.tls import TLS_TYPE, Certificates, redirected_hosts, secret_for, tls_table
from control.kinds.endpointslices import SERVICE_NAME_LABEL
from control.kinds.ingressclasses import KITCHEN_CONTROLLER
from control.kinds.network import (INGRESS_PORTS_ANNOTATION as PORTS_ANNOTATION, kube_proxy_endpoint, kubelet_endpoint,
                                   node_address)
from control.kinds.pod_servers import Listener

log = logging.getLogger(__name__)
Obj = dict[str, Any]
Headers = list[tuple[bytes, bytes]]
CONTROLLER = KITCHEN_CONTROLLER
NODE = "node-1"
FALLBACK = {80: 8080, 443: 8443}
FORWARD_TIMEOUT = 2.0
CONNECT_TIMEOUT = 5.0  # ingress-nginx's proxy-connect-timeout: how long a dropped connection hangs
SERVER = b"nginx"
EVENT_COMPONENT = "ingress-controller"


def nginx_page(status: int, title: str) -> tuple[int, Headers, bytes]:
    """nginx's own error page, as ingress-nginx's default backend and upstream errors answer."""
    body = (f"<html>\r\n<head><title>{status} {title}</title></head>\r\n<body>\r\n<center><h1>{status} {title}"
            f"</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n").encode()
    return status, [(b"server", SERVER), (b"content-type", b"text/html")], body


def listen_ports(port: int) -> list[int]:
    """The ports tried in order for a setting of `port`: it, its unprivileged twin, any free one."""
    plan = [port]
    if port in FALLBACK:
        plan.append(FALLBACK[port])
    return [*plan, 0]


def load_balancer(address: str, http_port: int, https_port: int | None) -> list[Obj]:
    entry: Obj = {"ip": address}
    if http_port != 80:
        entry["ports"] = [{"port": http_port, "protocol": "TCP"}]
        if https_port is not None:
            entry["ports"].append({"port": https_port, "protocol": "TCP"})
    return [entry]


def ports_annotation(http_port: int, https_port: int | None) -> str:
    return f"http={http_port}" + (f",https={https_port}" if https_port is not None else "")


def _slice_service(slice_: Obj) -> list[str]:
    """The index of EndpointSlices by the Service they belong to (`namespace/name`)."""
    meta = slice_.get("metadata") or {}
    name = (meta.get("labels") or {}).get(SERVICE_NAME_LABEL)
    return [f"{meta.get('namespace', '')}/{name}"] if name else []


class IngressController:
    def __init__(self, client: HubClient, *, clock: Clock | None = None, node: str = NODE,
                 http_port: int | None = None, https_port: int | None = None):
        self.client, self.node = client, node
        self.clock = clock or REAL
        self.http_setting = http_port if http_port is not None else config.value("KK_INGRESS_HTTP_PORT")
        self.https_setting = https_port if https_port is not None else config.value("KK_INGRESS_HTTPS_PORT")
        self.informers = SharedInformers(client, clock=self.clock)
        self.classes = self.informers.get(INGRESSCLASSES)
        self.ingresses = self.informers.get(INGRESSES)
        self.services = self.informers.get(SERVICES)
        self.slices = self.informers.get(ENDPOINTSLICES, indexers={"service": _slice_service})
        self.secrets = self.informers.get(SECRETS, field_selector=f"type={TLS_TYPE}")
        self.nodes = self.informers.get(NODES)
        self.recorder = EventRecorder(client, EVENT_COMPONENT, node, clock=self.clock)
        self.routes = routing.EMPTY
        self.tls: dict[str, tuple[str, str]] = {}
        self.redirects: dict[str, tuple[str, str]] = {}
        self.served: set[str] = set()
        self.balancer = RoundRobin()
        self.certificates = Certificates(lambda ns, name: self.secrets.cache.get(f"{ns}/{name}"), lambda: self.tls)
        self.http = FrontDoorServer(self.answer)
        self.https = FrontDoorServer(self.answer, tls=self.certificates.server_context)
        self.address: str | None = None
        self.http_port: int | None = None
        self.https_port: int | None = None
        self.pods = PodServe("ingress-controller", timeout=FORWARD_TIMEOUT)  # the pods' app, via kubelets
        self._dirty: set[str] = set()
        self._wake = asyncio.Event()
        self._node_seen = asyncio.Event()
        self._advertising: asyncio.Future | None = None
        self.ingresses.add_handlers(Handlers(on_add=self._ingress_added, on_update=self._ingress_updated,
                                             on_delete=lambda obj: self.rebuild()))
        self.classes.add_handlers(Handlers(on_add=lambda obj: self.rebuild(all_dirty=True),
                                           on_update=lambda old, new: self.rebuild(all_dirty=True),
                                           on_delete=lambda obj: self.rebuild()))
        self.nodes.add_handlers(Handlers(on_add=self._node_changed, on_update=lambda old, new: self._node_changed(new)))

    # --- what is served --------------------------------------------------------------------------

    def ours(self) -> list[Obj]:
        classes = routing.our_classes(self.classes.cache.list(), CONTROLLER)
        return [ing for ing in self.ingresses.cache.list() if routing.handles(ing, classes)]

    def rebuild(self, *, all_dirty: bool = False) -> None:
        served = self.ours()
        self.routes, self.tls, self.redirects = routing.build(served), tls_table(served), redirected_hosts(served)
        keys = {key_of(ing) for ing in served}
        if all_dirty:
            self._mark(keys - self.served)
        self.served = keys

    def _mark(self, keys: set[str]) -> None:
        if keys:
            self._dirty |= keys
            self._wake.set()

    def _ingress_added(self, ing: Obj) -> None:
        self.rebuild()
        if key_of(ing) in self.served:
            self._record_sync(ing)
            self._mark({key_of(ing)})

    def _ingress_updated(self, old: Obj, new: Obj) -> None:
        self.rebuild()
        key = key_of(new)
        if key not in self.served:
            return
        if (old.get("metadata") or {}).get("generation") != (new.get("metadata") or {}).get("generation") \
                or routing.class_of(old) != routing.class_of(new):
            self._record_sync(new)
        self._mark({key})

    def _record_sync(self, ing: Obj) -> None:
        asyncio.ensure_future(self.recorder.record(ing, "Normal", "Sync", "Scheduled for sync"))

    # --- answering -------------------------------------------------------------------------------

    def slices_of(self, namespace: str, service: str) -> list[Obj]:
        return self.slices.cache.by_index("service", f"{namespace}/{service}")

    def pick(self, backend: routing.Backend) -> PodEndpoint | str:
        """A ready endpoint of the backend, or why there is none."""
        service = self.services.cache.get(backend.key)
        endpoints = endpoints_for(service, self.slices_of(backend.namespace, backend.service), backend.port)
        chosen = self.balancer.choose(f"{backend.key}:{backend.port}", endpoints)
        return chosen if chosen is not None else why_none(service, backend.port)

    async def answer(self, method: str, target: str, host: str, secure: bool = False) -> tuple[int, Headers, bytes]:
        path = urlsplit(target).path or "/"
        name = routing.strip_port(host)
        if not secure and secret_for(name, self.redirects) is not None:  # ingress-nginx's ssl-redirect
            port = "" if self.https_port in (None, 443) else f":{self.https_port}"
            status, headers, body = nginx_page(308, "Permanent Redirect")
            return status, [*headers, (b"location", f"https://{name}{port}{target}".encode())], body
        backend, seen_as = self.routes.route(host, target)  # seen_as: after a rewrite-target, if any
        if backend is None:
            return nginx_page(404, "Not Found")
        chosen = self.pick(backend)
        if isinstance(chosen, str):
            log.info("%s %s%s -> %s: %s", method, host, path, backend.key, chosen)
            return nginx_page(503, "Service Temporarily Unavailable")
        if await self.dropped(chosen.ip, chosen.port):  # a NetworkPolicy drops node-1's packets to the pod
            await self.clock.sleep(CONNECT_TIMEOUT)  # nginx's proxy_connect_timeout runs out
            log.info("%s %s%s -> %s: dropped by a NetworkPolicy", method, host, path, chosen.pod)
            return nginx_page(504, "Gateway Time-out")
        code, served = await self.forward(chosen, backend.namespace)
        if code != 200:
            log.info("%s %s%s -> %s: the kubelet answered %s", method, host, path, chosen.pod, code)
            return nginx_page(502, "Bad Gateway")
        listener = Listener(str(served.get("server") or "json"), str(served.get("pod") or chosen.pod),
                            str(served.get("namespace") or backend.namespace), str(served.get("node") or chosen.node),
                            str(served.get("podIP") or chosen.ip), int(served.get("port") or chosen.port), "")
        status, headers, body = listener.answer(method, seen_as, self.clock.now())
        return status, [*headers, (b"x-kubekitchen-pod", f"{listener.namespace}/{listener.pod}".encode())], body

    async def dropped(self, ip: str, port: int) -> dict | None:
        """What this node's network agent (kube-proxy) says of a connection to a pod: the `dropped`
        fields when a NetworkPolicy drops it, else None."""
        proxy = kube_proxy_endpoint(self.nodes.cache.get(self.node))
        return await self.pods.dropped(proxy, ip, port) if proxy is not None else None

    async def forward(self, endpoint: PodEndpoint, namespace: str) -> tuple[int, Obj]:
        where = kubelet_endpoint(self.nodes.cache.get(endpoint.node))
        if where is None:
            return 502, {"error": f"node {endpoint.node} has no kubelet address"}
        path = (f"/serve/{quote(namespace)}/{quote(endpoint.pod)}?port={endpoint.port}&from={quote(self.node)}"
                if endpoint.pod else f"/serveIP/{quote(endpoint.ip)}?port={endpoint.port}&from={quote(self.node)}")
        try:
            return await self.pods.serve(where, path)
        except KubeletUnreachable as exc:
            return 502, {"error": str(exc)}

    # --- status ----------------------------------------------------------------------------------

    def desired_status(self) -> list[Obj]:
        assert self.address is not None and self.http_port is not None
        return load_balancer(self.address, self.http_port, self.https_port)

    async def write_status(self, key: str) -> bool:
        """Write one Ingress's load balancer status if it differs; False: try again later."""
        ing = self.ingresses.cache.get(key)
        if ing is None or key not in self.served or self.address is None:
            return True
        wanted = self.desired_status()
        if ((ing.get("status") or {}).get("loadBalancer") or {}).get("ingress") == wanted:
            return True
        updated = copy.deepcopy(ing)
        updated["status"] = {**(updated.get("status") or {}), "loadBalancer": {"ingress": wanted}}
        try:
            await self.client.replace_status(INGRESSES, updated)
        except errors.NotFound:
            return True
        except errors.ApiError as exc:
            log.info("status of ingress %s not written: %s", key, exc)
            return False
        return True

    async def status_worker(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            keys, self._dirty = self._dirty, set()
            retry = {key for key in sorted(keys) if not await self.write_status(key)}
            if retry:
                await self.clock.sleep(0.5)
                self._mark(retry)

    # --- listening -------------------------------------------------------------------------------

    def _node_changed(self, node: Obj) -> None:
        if (node.get("metadata") or {}).get("name") != self.node:
            return
        if node_address(node):
            self._node_seen.set()
        shown = ((node.get("metadata") or {}).get("annotations") or {}).get(PORTS_ANNOTATION)
        if self.http_port is not None and shown != ports_annotation(self.http_port, self.https_port) \
                and self._advertising is None:
            self._advertising = asyncio.ensure_future(self.advertise())

    async def wait_for_node(self) -> str:
        while True:
            address = node_address(self.nodes.cache.get(self.node) or {})
            if address:
                return address
            self._node_seen.clear()
            await self._node_seen.wait()

    async def _bind(self, server: FrontDoorServer, address: str, setting: int) -> int:
        last: OSError | None = None
        for port in listen_ports(setting):
            try:
                return await server.start(address, port)
            except OSError as exc:
                last = exc
                log.info("the front door cannot listen on %s:%s (%s)", address, port, exc)
        raise last or OSError("no port")

    async def listen(self) -> None:
        self.address = await self.wait_for_node()
        self.http_port = await self._bind(self.http, self.address, self.http_setting)
        self.https_port = await self._bind(self.https, self.address, self.https_setting)
        log.warning("the front door is open: http://%s:%s/ and https://%s:%s/", self.address, self.http_port,
                    self.address, self.https_port)
        await self.advertise()
        self._mark(set(self.served))

    async def advertise(self) -> None:
        assert self.http_port is not None
        try:
            ports = ports_annotation(self.http_port, self.https_port)
            await annotate_node(self.client, self.node, {PORTS_ANNOTATION: ports}, clock=self.clock,
                                what="the front door's ports", attempts=20)
        finally:
            self._advertising = None

    async def serve_forever(self) -> None:
        await self.listen()
        await self.status_worker()

    async def close(self) -> None:
        await self.http.close()
        await self.https.close()
        await self.pods.close()

    async def run(self) -> None:
        try:
            await run_all(self.client, [*(i.run() for i in self.informers.all()), self.serve_forever()])
        finally:
            await self.close()


async def run_ingress_controller(server: str, *, clock: Clock | None = None) -> None:
    """Run the ingress controller against the hub at `server` until cancelled."""
    client = connect(server, "ingress-controller")
    await IngressController(client, clock=clock).run()
