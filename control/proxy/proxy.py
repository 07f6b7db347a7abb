"""kube-proxy of one node, as a spoke: it watches Services, EndpointSlices and Nodes through the hub
and keeps its own forwarding table; its HTTP server shows the table and sends traffic through it.

Guarantees:
- The table is rebuilt in the informers' handlers, for the one Service whose Service or one of
  whose EndpointSlices (label `kubernetes.io/service-name`) changed, and swapped in as a whole (one assignment): a request in progress keeps the
  table it started with, the next one reads the new table. The version goes up by one with each
  change and wakes everyone waiting for it (`wait_past`).
- It listens on its node's InternalIP (read from the Node the kubelet registers; it waits for
  it) at KUBE_PROXY_PORT, or on a free port of that address when that one is taken (another
  cluster on the same machine); either way it records the port in the Node's annotation
  `kubekitchen.dev/kube-proxy-port`, so the hub can find it, and records it again whenever it
  sees its Node without it (a Node deleted and registered again).
- A pod IP is sent to the kubelet of the Node whose podCIDR holds it (`pod_node`).
- Requests to pods go to their node's kubelet (`POST /serve/...`) over keep-alive connections,
  one small pool per kubelet; a kubelet that does not answer within 2 s is reported as 503.
- Endpoints are watched too, for the names it resolves only (a headless Service's pod hostnames,
  as the cluster DNS answers them); traffic follows the EndpointSlices alone.
- It is its node's NetworkPolicy agent too (a CNI's part): it watches NetworkPolicies, and Pods and
  Namespaces only while some NetworkPolicy exists (`control.proxy.peers.PeerWatch`: a cluster
  without one pays no pod watch per node), into `control.proxy.policy.PolicyView`, and decides
  every connection it sends (`send`) or is asked about (`decide`, the cluster DNS's queries) from
  the view as it is then. A decision waits until the pods and namespaces are synced after the first
  policy appeared (PEER_SYNC_SECONDS at most; past that the connection is refused with a 503 line,
  neither allowed nor dropped): a cold cache never decides.
- A target address:port that a Node announces as a host-network listener (on node-1: the ingress
  controller, annotation `kubekitchen.dev/ingress-controller-ports`, and the gateway controller's
  Gateway listeners, `kubekitchen.dev/gateway-listeners`) is no Service: the request goes to that
  listener with the plan's path and Host header (`hostports`).
- It talks to the hub only, as `kube-proxy/<node>`. `python manage.py runcomponent kube-proxy
  --node NAME --server URL [--balance round-robin|random]` calls `run_kube_proxy`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import random
from typing import Any, AsyncIterator

from control.clock import REAL, Clock
from control.client.annotate import annotate_node
from control.client.component import connect, run_all
from control.client.http import HubClient
from control.client.informer import Handlers, Informer
from control.client.podserve import KubeletUnreachable, PodServe
from control.client.resources import (
    ENDPOINTS, ENDPOINTSLICES, NAMESPACES, NETWORKPOLICIES, NODES, PODS, SERVICES, key_of,
)
from control.client.shared import SharedInformers
from control.kinds.endpointslices import SERVICE_NAME_LABEL
from control.kinds.network import KUBE_PROXY_PORT, KUBE_PROXY_PORT_ANNOTATION, kubelet_endpoint, node_address
from control.proxy.peers import PeerWatch
from control.proxy.policy import PolicyView, line_fields
from control.proxy.send import Choice, SendPlan, Unroutable, choose, protocol_of, send, serve_path
from control.proxy import hostports
from control.proxy.server import ProxyServer
from control.proxy.table import Balancer, Endpoint, Table, service_rule

log = logging.getLogger(__name__)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
Obj = dict[str, Any]
FORWARD_TIMEOUT = 2.0
PEER_SYNC_SECONDS = 5.0  # a decision waits this long at most for the pods and namespaces to sync
UNSYNCED = "NetworkPolicy peers (pods, namespaces) not synced yet: connection not decided"


class KubeProxy:
    def __init__(self, client: HubClient, node: str, *, balance: str = "round-robin", clock: Clock | None = None,
                 rng: random.Random | None = None, port: int = KUBE_PROXY_PORT):
        self.client, self.node, self.port = client, node, port
        self.clock = clock or REAL
        self.balancer = Balancer(balance, rng)
        self.informers = SharedInformers(client, clock=self.clock)
        self.services = self.informers.get(SERVICES)
        self.endpoints = self.informers.get(ENDPOINTS)
        self.slices = self.informers.get(ENDPOINTSLICES)
        self.nodes = self.informers.get(NODES)
        self.policies = PolicyView()
        self._policy_changed = asyncio.Event()
        view = self.policies
        handlers = {resource: Handlers(on_add=self._watched(changed),
                                       on_update=self._watched(lambda old, new, fn=changed: fn(new)),
                                       on_delete=self._watched(deleted))
                    for resource, changed, deleted in ((NETWORKPOLICIES, view.policy_changed, view.policy_deleted),
                                                       (PODS, view.pod_changed, view.pod_deleted),
                                                       (NAMESPACES, view.namespace_changed, view.namespace_deleted))}
        self.policy_informer = self.informers.get(NETWORKPOLICIES)
        self.policy_informer.add_handlers(handlers.pop(NETWORKPOLICIES))
        self.policy_informer.add_handlers(Handlers(on_add=self._count_policies, on_delete=self._count_policies))
        self.peers = PeerWatch(lambda resource: Informer(client, resource, clock=self.clock), handlers,
                               clock=self.clock, on_ready=self._watched(view.peers_synced),
                               on_stop=self._watched(view.forget_peers))
        self.table = Table()
        self._changed = asyncio.Event()
        self._node_seen = asyncio.Event()
        self.pods = PodServe(f"kube-proxy/{node}", timeout=FORWARD_TIMEOUT)  # the pods' app, via kubelets
        self.server = ProxyServer(self)
        self.address: str | None = None
        self.bound_port: int | None = None
        self._advertising: asyncio.Future | None = None
        self.services.add_handlers(Handlers(on_add=self.refresh, on_update=lambda old, new: self.refresh(new),
                                            on_delete=self.refresh))
        self.slices.add_handlers(Handlers(on_add=self._slice_changed, on_update=self._slice_moved,
                                          on_delete=self._slice_changed))
        self.nodes.add_handlers(Handlers(on_add=self._node_changed, on_update=lambda old, new: self._node_changed(new)))

    def _watched(self, handler: Any) -> Any:
        def run(*args: Any) -> None:
            version = self.policies.version
            handler(*args)
            if self.policies.version != version:
                self._policy_changed.set()
                self._policy_changed = asyncio.Event()
        return run

    def _count_policies(self, _: Obj) -> None:
        self.peers.policies(len(self.policy_informer.cache.items))

    @property
    def balance(self) -> str:
        return self.balancer.mode

    # --- the table -----------------------------------------------------------------------------

    def refresh(self, service: Obj) -> None:
        """Rebuild the rule of the Service `service` names, and swap."""
        self.refresh_key(key_of(service))

    def refresh_key(self, key: str) -> None:
        service = self.services.cache.get(key)
        rule = service_rule(service, self.slices_of(key)) if service is not None else None
        table = self.table.with_rule(key, rule)
        if table is not self.table:
            self.table = table
            self._changed.set()
            self._changed = asyncio.Event()

    def _slice_changed(self, slice_: Obj) -> None:
        meta = slice_.get("metadata") or {}
        name = (meta.get("labels") or {}).get(SERVICE_NAME_LABEL)
        if name:
            self.refresh_key(f"{meta.get('namespace', '')}/{name}")

    def _slice_moved(self, old: Obj, new: Obj) -> None:
        if ((old.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL) != \
                ((new.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL):
            self._slice_changed(old)  # a slice relabelled to another Service leaves the first one
        self._slice_changed(new)

    def slices_of(self, key: str) -> list[Obj]:
        namespace, name = key.split("/", 1)
        return [s for s in self.slices.cache.by_index("namespace", namespace)
                if ((s.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL) == name]

    async def wait_past(self, version: int, timeout: float) -> None:
        """Return once the table's version is above `version`, or after `timeout` seconds."""
        deadline = self.clock.now() + timeout
        while self.table.version <= version:
            left = deadline - self.clock.now()
            if left <= 0:
                return
            try:
                await asyncio.wait_for(self._changed.wait(), left)
            except asyncio.TimeoutError:
                return

    def rules(self, service: str | None = None) -> Obj:
        return self.table.to_dict(node=self.node, balance=self.balance, service=service)

    # --- traffic -------------------------------------------------------------------------------

    def _lookup(self, informer: Any):
        return lambda namespace, name: informer.cache.get(f"{namespace}/{name}")

    def send(self, plan: SendPlan) -> AsyncIterator[Obj]:
        # a run confined to a namespace names Services only: never a node's host listener
        listener = None if plan.namespace_only else hostports.listener_at(self.nodes.cache.list(), plan.target,
                                                                          plan.port)
        if listener is not None:  # a host-network listener (the front door): no Service rule involved
            return hostports.send_to_listener(plan, node=self.node, where=listener, clock=self.clock,
                                              decide=self.decide_fields)
        return send(plan, node=self.node, table=lambda: self.table, balancer=self.balancer,
                    services=self._lookup(self.services), endpoints=self._lookup(self.endpoints),
                    forward=self.forward, clock=self.clock, pod_node=self.pod_node, decide=self.decide_fields)

    async def decide_fields(self, source: str, target: str, port: int, protocol: str) -> Obj:
        """The NetworkPolicy fields of one connection's line (`control.proxy.policy.line_fields`);
        `{"refused": why}` when the peers did not sync in time."""
        if not await self.peers.wait_ready(PEER_SYNC_SECONDS):
            return {"refused": UNSYNCED}
        self.policies.node_ip = self.policies.node_ip or node_address(self.nodes.cache.get(self.node) or {}) or ""
        verdict = self.policies.decide(source, target, port, protocol)
        return line_fields(verdict, source=source or self.policies.node_ip, target=target, port=port,
                           protocol=protocol, shown=self.policies.shown)

    async def decide(self, plan: SendPlan, protocol: str) -> Obj:
        """The verdict on one connection `plan` describes, without sending it: the endpoint kube-proxy
        would pick (`endpoint`, `pod`), and `allowed` with the policy fields; `error` when there is
        nowhere to send it."""
        try:
            choice = self._choose_for(plan, protocol)
        except Unroutable as exc:
            if not _is_ip(plan.target):  # nowhere to send it: nothing to decide, say why
                return {"allowed": False, "error": str(exc), "policyVersion": self.policies.version}
            # an address no Service has: decided as it is (a pod's, or one outside)
            choice = Choice(None, None, Endpoint(plan.target, plan.port or 0, "", ""))
        fields = await self.decide_fields(plan.source, choice.endpoint.ip, choice.endpoint.port,
                                          protocol_of(choice) if choice.port else protocol)
        if "refused" in fields:
            return {"allowed": False, "error": fields["refused"], "policyVersion": self.policies.version}
        return {"allowed": "dropped" not in fields, "endpoint": choice.endpoint.address, "pod": choice.endpoint.pod,
                "policyVersion": self.policies.version, **fields}

    def _choose_for(self, plan: SendPlan, protocol: str) -> Choice:
        """As `choose`, the service port matched by number AND protocol (DNS: UDP 53 before TCP 53)."""
        choice = choose(self.table, plan, self.balancer, services=self._lookup(self.services),
                        endpoints=self._lookup(self.endpoints), pod_node=self.pod_node)
        if choice.rule is None or choice.port is None or choice.port.protocol == protocol:
            return choice
        port = next((p for p in choice.rule.ports if p.port == choice.port.port and p.protocol == protocol), None)
        endpoints = choice.rule.endpoints_for(port) if port is not None else ()
        if port is None or not endpoints:
            return choice
        return Choice(choice.rule, port, self.balancer.choose(f"{choice.rule.key}:{port.name}", endpoints) or
                      choice.endpoint)

    async def wait_policies_past(self, version: int, timeout: float) -> None:
        """Return once the policy view's version is above `version`, or after `timeout` seconds."""
        deadline = self.clock.now() + timeout
        while self.policies.version <= version:
            left = deadline - self.clock.now()
            if left <= 0:
                return
            try:
                await asyncio.wait_for(self._policy_changed.wait(), left)
            except asyncio.TimeoutError:
                return

    def pod_node(self, ip: str) -> str | None:
        """The node whose podCIDR holds `ip` (where the pod network routes a pod IP), or None."""
        try:
            address = ipaddress.ip_address(ip)
        except ValueError:
            return None
        for node in self.nodes.cache.list():
            spec = node.get("spec") or {}
            cidrs = spec.get("podCIDRs") or ([spec["podCIDR"]] if spec.get("podCIDR") else [])
            for cidr in cidrs:
                try:
                    if address in ipaddress.ip_network(str(cidr), strict=False):
                        return str((node.get("metadata") or {}).get("name") or "") or None
                except ValueError:
                    continue  # a malformed podCIDR routes nothing
        return None

    async def forward(self, node: str, endpoint: Endpoint, namespace: str) -> tuple[int, Obj]:
        """One request to the pod behind `endpoint`, through its node's kubelet."""
        where = kubelet_endpoint(self.nodes.cache.get(node))
        if where is None:
            return 503, {"error": f"node \"{node}\" of pod {endpoint.pod} is unknown or has no kubelet address"}
        try:
            return await self.pods.serve(where, serve_path(endpoint, namespace, self.node))
        except KubeletUnreachable as exc:
            return 503, {"error": f"the kubelet of {node} did not answer: {exc}"}

    # --- listening -----------------------------------------------------------------------------

    def _node_changed(self, node: Obj) -> None:
        meta = node.get("metadata") or {}
        if meta.get("name") != self.node:
            return
        if node_address(node):
            self._node_seen.set()
        shown = (meta.get("annotations") or {}).get(KUBE_PROXY_PORT_ANNOTATION)
        if self.bound_port and shown != str(self.bound_port) and self._advertising is None:
            self._advertising = asyncio.ensure_future(self.advertise(self.bound_port))

    async def wait_for_node(self) -> str:
        """The node's InternalIP, once the kubelet has registered the Node."""
        while True:
            address = node_address(self.nodes.cache.get(self.node) or {})
            if address:
                return address
            self._node_seen.clear()
            await self._node_seen.wait()

    async def listen(self) -> int:
        self.address = await self.wait_for_node()
        self.policies.node_ip = self.address  # what this node's own traffic comes from
        try:
            bound = await self.server.start(self.address, self.port)
        except OSError as exc:
            log.warning("kube-proxy of %s cannot listen on %s:%s (%s); taking a free port", self.node,
                        self.address, self.port, exc)
            bound = await self.server.start(self.address, 0)
        self.bound_port = bound
        await self.advertise(bound)
        return bound

    async def advertise(self, port: int) -> None:
        try:
            await annotate_node(self.client, self.node, {KUBE_PROXY_PORT_ANNOTATION: str(port)}, clock=self.clock,
                                what="the kube-proxy port")
        finally:
            self._advertising = None

    async def serve_forever(self) -> None:
        await self.listen()
        await asyncio.Event().wait()

    async def close(self) -> None:
        if self._advertising is not None:
            self._advertising.cancel()
        await self.server.close()
        await self.pods.close()

    async def run(self) -> None:
        try:
            await run_all(self.client, [*(i.run() for i in self.informers.all()), self.peers.run(),
                                        self.serve_forever()])
        finally:
            await self.close()


async def run_kube_proxy(server: str, *, node: str, balance: str = "round-robin", clock: Clock | None = None) -> None:
    """Run the kube-proxy of `node` against the hub at `server` until cancelled."""
    client = connect(server, f"kube-proxy/{node}")
    await KubeProxy(client, node, balance=balance, clock=clock).run()
