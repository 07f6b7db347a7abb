"""The kubelet of one simulated node, wired together: its HTTP server (logs, traffic to its pods,
the Summary API, exec and attach into its containers, port-forward to them), Node registration, Lease and status heartbeats, and the pod worker fed by an
informer on `spec.nodeName=<node>`, with the ConfigMap, Secret and Service informers its runtime reads.

Guarantees: the HTTP server listens before the Node is registered (the Node names its port),
on the node's InternalIP at port 10250 when it can (each node has its own address, as real nodes
do), else on a free port; with KK_NODE_ADDRESSES=loopback (`control.kubelet.addresses`: macOS, or
asked for) on a free port of 127.0.0.1, which the Node reports;
pods are run only once the Node is registered (the pod CIDR comes from it); the process talks to
the hub only, as `kubelet/<node>`; stopping it cancels every loop and closes the client.
`python manage.py runcomponent kubelet --node NAME --server URL` calls `run_kubelet`.
"""

from __future__ import annotations

import logging
import random
from pathlib import Path
from typing import Any

from control.clock import REAL, Clock
from control.client.component import connect, run_all
from control.client.events import EventQueue, EventRecorder
from control.client.http import HubClient
from control.client.informer import Handlers, Informer
from control.client.resources import CONFIGMAPS, NODES, PODS, SECRETS, SERVICES, key_of
from control.client.runner import Runner
from control.client.timings import Timings
from control.client.workqueue import WorkQueue
from control.kubelet.addresses import listen_plan
from control.kubelet.config import KubeletConfig
from control.kubelet.exec import ExecServer
from control.kubelet.heartbeat import NodeAgent
from control.kubelet.images import builtin
from control.kubelet.logs import LogServer
from control.kubelet.node import IpPool, internal_ip
from control.kubelet.envvars import NodeFacts
from control.kubelet.podstate import scripts_of
from control.kubelet.pods import PodWorker
from control.kubelet.projection import referenced
from control.kubelet.runtime import Runtime
from control.kubelet.portforward import PortForwardServer, flavour_for
from control.kubelet.network import NetworkHandle
from control.kubelet.server import Answer, KubeletServer, serve_answer
from control.kinds.staticpods import log_path as static_log_path
from control.kubelet.usage import PodView, UsageMeter, summary

log = logging.getLogger(__name__)
KUBELET_PORT = 10250


class Kubelet:
    def __init__(self, client: HubClient, node: str, *, clock: Clock | None = None, timings: Timings | None = None,
                 config: KubeletConfig | None = None, address: str | None = None, port: int = KUBELET_PORT,
                 workers: int | None = None, rng: random.Random | None = None):
        self.client, self.node = client, node
        self.clock = clock or REAL
        self.timings = timings or Timings.from_env()
        self.config = config or KubeletConfig.from_env()
        self.address, self.port = address or internal_ip(node), port
        self.workers = workers if workers is not None else self.config.workers
        self.rng = rng
        self.pod_informer = Informer(client, PODS, field_selector=f"spec.nodeName={node}", clock=self.clock)
        self.node_informer = Informer(client, NODES, field_selector=f"metadata.name={node}", clock=self.clock)
        # The kubelet's ConfigMap and Secret managers (upstream's watch-based strategy): env and
        # volumes are made from these caches, and a change re-syncs the pods that use the object.
        self.configmap_informer = Informer(client, CONFIGMAPS, clock=self.clock)
        self.secret_informer = Informer(client, SECRETS, clock=self.clock)
        self.service_informer = Informer(client, SERVICES, clock=self.clock)  # service-link env vars
        self.runtime = Runtime(client, clock=self.clock, configmaps=self.configmap_informer.cache,
                               secrets=self.secret_informer.cache, services=self.service_informer.cache,
                               data_dir=self.config.data_dir,
                               facts=NodeFacts(cpu=self.config.cpu, memory=self.config.memory),
                               image_backoff=self.config.image_backoff, pull_seconds=self.config.pull_seconds,
                               network=lambda namespace, source: NetworkHandle(client, node, namespace, source))
        self.queue = WorkQueue(clock=self.clock)
        self.runtime.loads.poke = self.queue.add  # an exec'd stress changed a pod's use: look at it
        self.worker: PodWorker | None = None
        self.logs = LogServer(self._log_target, clock=self.clock, interval=self.config.log_interval,
                              static_log=self._static_log)
        self.meter = UsageMeter(self.timings.cpu_window)
        self.streams = ExecServer(lambda namespace, name: self.worker.current(namespace, name) if self.worker else None,
                                  clock=self.clock, live_ids=self._live_container_ids, runtime=self.runtime,
                                  network=self.runtime.network)
        self.forwards = PortForwardServer(lambda namespace, name: self.worker.current(namespace, name)
                                          if self.worker else None, node=node, clock=self.clock,
                                          count=lambda uid: self.meter.record_request(uid, self.clock.now()))
        self.server = KubeletServer(self.logs, serve=self.serve, stats=self.stats, streams=self.streams,
                                    forwards=self.forwards, serve_ip=self.serve_ip)
        self.started_at = self.clock.now()
        self.agent: NodeAgent | None = None

    def _log_target(self, namespace: str, pod: str, container: str) -> Any:
        return self.worker.log_target(namespace, pod, container) if self.worker else None

    def _static_log(self, namespace: str, pod: str, container: str) -> Path | None:
        """Where a static pod of this node writes its output (`control.staticpods`)."""
        return static_log_path(self.config.data_dir, namespace, pod, container) if self.config.data_dir else None

    def serve(self, namespace: str, name: str, port: int | None, sender: str) -> Answer:
        """One request to a pod's app (from kube-proxy on node `sender`); a 200 counts for its CPU."""
        found = self.worker.current(namespace, name) if self.worker else None
        record = found[1] if found else None
        answer = serve_answer(node=self.node, namespace=namespace, name=name, port=port,
                              pod_ip=record.pod_ip if record and record.sandbox_ready else None,
                              containers=found[2] if found else None,
                              server=flavour_for(found[0], port) if found else "json")
        if answer[0] == 200 and record is not None:
            self.meter.record_request(record.uid, self.clock.now())
        return answer

    def serve_ip(self, ip: str, port: int | None, sender: str) -> Answer:
        """One request to the pod of this node whose IP is `ip` (a pod IP sent to directly)."""
        for pod, record, _ in self.worker.all_current() if self.worker else []:
            if record.pod_ip == ip and record.sandbox_ready:
                meta = pod.get("metadata") or {}
                return self.serve(str(meta.get("namespace") or ""), str(meta.get("name") or ""), port, sender)
        return 404, {"error": f"no pod of node {self.node} has the IP {ip}"}

    def _live_container_ids(self) -> set[str]:
        """The IDs of the container runs going on now (exec keeps their files, forgets the rest)."""
        return {c.current.container_id for _, _, containers in (self.worker.all_current() if self.worker else [])
                for c in containers if c.current is not None and c.current.running}

    def stats(self) -> dict[str, Any]:
        views = [PodView(pod, record.started_at, containers, self.runtime.loads.with_loads(scripts_of(pod), containers))
                 for pod, record, containers in (self.worker.all_current() if self.worker else [])]
        return summary(self.meter, node=self.node, node_started_at=self.started_at, pods=views, now=self.clock.now())

    async def start_log_server(self) -> int:
        """Listen on the node's own address at the kubelet's usual port (stable across restarts),
        else on a free port; without 127.0.1.x on this machine (or in loopback mode), on a free
        port of 127.0.0.1."""
        for address, port in listen_plan(self.config.node_addresses, self.address, self.port):
            try:
                bound = await self.server.start(address, port)
            except OSError as exc:
                log.info("cannot listen on %s:%s (%s)", address, port, exc)
                continue
            self.address = address
            return bound
        raise OSError(f"the kubelet of {self.node} cannot listen anywhere")

    async def setup(self) -> None:
        builtin()  # the image catalogue is read now, not on the first pod's admission in a burst of them
        port = await self.start_log_server()
        self.agent = NodeAgent(self.client, self.node, ip=self.address, port=port, clock=self.clock,
                               timings=self.timings, config=self.config)
        await self.agent.register_until_done()
        self.events = EventQueue(EventRecorder(self.client, "kubelet", self.node, clock=self.clock))
        self.worker = PodWorker(self.client, self.pod_informer.cache, node=self.node, host_ip=self.address,
                                pool=IpPool(self.agent.pod_cidr), config=self.config, clock=self.clock,
                                events=self.events, rng=self.rng, runtime=self.runtime)
        enqueue = self.queue.add
        self.pod_informer.add_handlers(Handlers(on_add=lambda o: enqueue(key_of(o)),
                                                on_update=lambda old, new: enqueue(key_of(new)),
                                                on_delete=lambda o: enqueue(key_of(o))))
        pods = self.pod_informer.cache
        for kind, informer in (("configmap", self.configmap_informer), ("secret", self.secret_informer)):
            pods.add_indexer(kind, lambda pod, kind=kind: [f"{pod['metadata'].get('namespace')}/{name}"
                                                           for name in referenced(pod, kind)])

            def users(obj: dict[str, Any], kind: str = kind) -> None:
                for pod in pods.by_index(kind, key_of(obj)):
                    enqueue(key_of(pod))
            informer.add_handlers(Handlers(on_add=users, on_update=lambda old, new, users=users: users(new),
                                           on_delete=users))
        agent = self.agent
        self.node_informer.add_handlers(Handlers(on_add=agent.on_node_seen,
                                                 on_update=lambda old, new: agent.on_node_seen(new),
                                                 on_delete=lambda o: agent.on_node_deleted()))

    async def run(self) -> None:
        try:
            await self.setup()
            assert self.agent is not None and self.worker is not None
            informers = [self.pod_informer, self.configmap_informer, self.secret_informer, self.service_informer]
            runner = Runner(f"kubelet/{self.node}", self.worker.reconcile, self.queue, informers, workers=self.workers)
            await run_all(self.client, [*(informer.run() for informer in informers), self.node_informer.run(), runner.run(),
                                        self.agent.lease_loop(), self.agent.status_loop(), self.events.run()])
        finally:
            await self.server.close()
            await self.client.close()


async def run_kubelet(server: str, *, node: str, clock: Clock | None = None, timings: Timings | None = None) -> None:
    """Run the kubelet of `node` against the hub at `server` until cancelled."""
    client = connect(server, f"kubelet/{node}")
    await Kubelet(client, node, clock=clock, timings=timings).run()
