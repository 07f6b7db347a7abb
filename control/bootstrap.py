"""What exists from the start: the revision counter, the system namespaces, and — while a hub
serves — the `default/kubernetes` Service and its Endpoints.

Guarantees:
- The bootstrap RBAC policy (`control.auth.policy`) is created with the namespaces, each object
  only when missing.
- The default StorageClass `standard` (annotated as the default class) is created with the
  namespaces, and not reset when it exists; so are the two system PriorityClasses
  (`system-cluster-critical`, `system-node-critical`, upstream's post-start hook), the default
  IngressClass `kitchen` (controller `kubekitchen.dev/ingress`) and a Local
  APIService for every group version the hub serves (`apiservice_bootstrap`, as kube-apiserver's autoregister controller).
- Idempotent; every write goes through `control.storage.store` like any other, attributed to
  "kube-apiserver"; the counter and namespaces are made after every migrate (so fresh test
  databases have them too).
- The `kubernetes` Service is kube-apiserver's kubernetesservice controller's
  (pkg/controlplane/controller/kubernetesservice): ClusterIP, the first address of the service
  range (10.96.0.1, which `api.allocation` never hands out), port 443 named `https` to the hub's
  own port as targetPort (upstream: 443 → the secure port, 6443), no selector, labels
  `component=apiserver`, `provider=kubernetes`. It is created when missing (also after a delete)
  and, as upstream since 1.17, not reset when it exists.
- Its Endpoints list every serving hub's (address, port), each hub adding its own at every pass
  and removing it when it stops (upstream's endpoint reconciler: RemoveEndpoints on Stop); the
  endpoints controller leaves them alone because the Service has no selector. Several hubs on one
  PostgreSQL therefore share one Endpoints object instead of overwriting each other.
- `KubernetesServiceKeeper` runs those passes every `ENDPOINT_INTERVAL` seconds on the process's
  database thread (`storage.db`), so a hub's writes never race each other for SQLite's lock.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import threading
import uuid
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable

from control.clock import REAL, Clock
from control import errors
from control.kinds.apiservices import APISERVICE, local_apiservice
from control.kinds.core import ENDPOINTS, SERVICE, namespace_defaults, service_defaults
from control.kinds.ingressclasses import INGRESSCLASS, kitchen_ingress_class
from control.kinds.meta import format_time
from control.kinds.network import service_cidr
from control.kinds.priorityclasses import PRIORITYCLASS, SYSTEM_CLASSES, system_priority_class
from control.kinds.storageclasses import STORAGECLASS, default_storage_class
from control.storage import store

log = logging.getLogger(__name__)

Obj = dict[str, Any]
ACTOR = "kube-apiserver"
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

KUBERNETES_NAMESPACE, KUBERNETES_NAME = "default", "kubernetes"
KUBERNETES_SERVICE_PORT = 443
PORT_NAME = "https"
# kube-apiserver's --endpoint-reconciler interval (EndpointInterval, 10 s).
ENDPOINT_INTERVAL = 10.0
# What upstream's reconcilers put on the Endpoints: the EndpointSlice mirroring controller skips them.
SKIP_MIRROR = {"endpointslice.kubernetes.io/skip-mirror": "true"}


def cluster_bootstrap() -> None:
    store.ensure_counter()
    for name in SYSTEM_NAMESPACES:
        namespace = {"apiVersion": "v1", "kind": "Namespace",
                     "metadata": {"name": name, "uid": str(uuid.uuid4()), "creationTimestamp": format_time(REAL.now())}}
        namespace_defaults(namespace)
        try:
            store.object_create(resource="/namespaces", obj=namespace, actor=ACTOR)
        except errors.AlreadyExists:
            pass
    # The default StorageClass a fresh cluster has (kind and minikube ship `standard`), whose
    # claims the persistentvolume-binder spoke provisions.
    storage_class = default_storage_class(str(uuid.uuid4()), format_time(REAL.now()))
    try:
        store.object_create(resource=STORAGECLASS.resource, obj=storage_class, actor=ACTOR)
    except errors.AlreadyExists:
        pass
    # upstream's scheduling/bootstrap-system-priority-classes post-start hook
    for name in SYSTEM_CLASSES:
        try:
            store.object_create(resource=PRIORITYCLASS.resource, actor=ACTOR,
                                obj=system_priority_class(name, str(uuid.uuid4()), format_time(REAL.now())))
        except errors.AlreadyExists:
            pass
    # The default IngressClass, as the default StorageClass: Ingresses naming no class get it.
    try:
        store.object_create(resource=INGRESSCLASS.resource, actor=ACTOR,
                            obj=kitchen_ingress_class(str(uuid.uuid4()), format_time(REAL.now())))
    except errors.AlreadyExists:
        pass
    rbac_bootstrap()
    apiservice_bootstrap()


def apiservice_bootstrap() -> None:
    """kube-apiserver's autoregister controller: a Local APIService (Available, reason Local) for
    every group version the hub serves, as discovery lists it; created when missing, never reset."""
    from control.api.discovery import api_group_list  # what the hub serves, views included

    served = [("", "v1")] + [(group["name"], entry["version"]) for group in api_group_list()["groups"]
                             for entry in group["versions"]]
    for group, version in served:
        obj = local_apiservice(group, version, str(uuid.uuid4()), format_time(REAL.now()))
        try:
            store.object_create(resource=APISERVICE.resource, obj=obj, actor=ACTOR)
        except errors.AlreadyExists:
            pass


def rbac_bootstrap() -> None:
    """kube-apiserver's rbac/bootstrap-roles post-start hook: the default ClusterRoles,
    ClusterRoleBindings and the few namespaced Roles and RoleBindings, created when missing and never reset (as upstream with autoupdate, the
    roles' rules are not reconciled here)."""
    from control.auth import policy

    group = policy.RBAC_VERSION.split("/")[0]
    for obj, resource in [*((r, f"{group}/clusterroles") for r in policy.cluster_roles()),
                          *((b, f"{group}/clusterrolebindings") for b in policy.cluster_role_bindings()),
                          *((r, f"{group}/roles") for r in policy.namespace_roles()),
                          *((b, f"{group}/rolebindings") for b in policy.namespace_role_bindings())]:
        obj["metadata"].update(uid=str(uuid.uuid4()), creationTimestamp=format_time(REAL.now()))
        try:
            store.object_create(resource=resource, obj=obj, actor=ACTOR)
        except errors.AlreadyExists:
            pass


def on_post_migrate(sender, **kwargs) -> None:
    if kwargs.get("using", "default") == "default":
        cluster_bootstrap()


# --- the kubernetes Service and its Endpoints --------------------------------------------------

def kubernetes_service_ip() -> str:
    """The first host of the service range, as kube-apiserver gives the `kubernetes` Service."""
    return str(service_cidr().network_address + 1)


def kubernetes_service(target_port: int, now: float) -> Obj:
    """The Service as kube-apiserver creates it, with the defaults any created Service gets."""
    address = kubernetes_service_ip()
    svc = {"apiVersion": "v1", "kind": "Service",
           "metadata": {"name": KUBERNETES_NAME, "namespace": KUBERNETES_NAMESPACE, "uid": str(uuid.uuid4()),
                        "creationTimestamp": format_time(now),
                        "labels": {"component": "apiserver", "provider": "kubernetes"}},
           "spec": {"ports": [{"name": PORT_NAME, "protocol": "TCP", "port": KUBERNETES_SERVICE_PORT,
                               "targetPort": target_port}],
                    "clusterIP": address, "clusterIPs": [address],
                    "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "type": "ClusterIP"}}
    service_defaults(svc)
    return svc


def subsets_with(subsets: list[Obj], ip: str, port: int, *, present: bool) -> list[Obj]:
    """`subsets` with (ip, port) added (present) or removed, one subset per port, sorted, so the
    same set of hubs always gives the same text (and an unchanged pass writes nothing)."""
    by_port: dict[int, set[str]] = {}
    for subset in subsets or []:
        numbers = [p.get("port") for p in subset.get("ports") or [] if isinstance(p.get("port"), int)]
        for number in numbers:
            by_port.setdefault(number, set()).update(
                a["ip"] for a in subset.get("addresses") or [] if isinstance(a, dict) and a.get("ip"))
    if present:
        by_port.setdefault(port, set()).add(ip)
    else:
        by_port.get(port, set()).discard(ip)
    return [{"addresses": [{"ip": address} for address in sorted(ips, key=ipaddress.ip_address)],
             "ports": [{"name": PORT_NAME, "port": number, "protocol": "TCP"}]}
            for number, ips in sorted(by_port.items()) if ips]


def kubernetes_endpoints(ip: str, port: int, now: float) -> Obj:
    return {"apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": KUBERNETES_NAME, "namespace": KUBERNETES_NAMESPACE, "uid": str(uuid.uuid4()),
                         "creationTimestamp": format_time(now), "labels": dict(SKIP_MIRROR)},
            "subsets": subsets_with([], ip, port, present=True)}


def _set_address(ip: str, port: int, *, present: bool) -> Callable[[Obj], Obj]:
    def mutate(current: Obj) -> Obj:
        current["subsets"] = subsets_with(current.get("subsets") or [], ip, port, present=present)
        return current
    return mutate


def ensure_kubernetes_service(ip: str, port: int, now: float) -> None:
    """One pass of the kubernetesservice controller for the hub serving at (ip, port)."""
    try:  # read first: a pass that finds the Service never takes the revision row (the write lock)
        store.object_get(resource=SERVICE.resource, namespace=KUBERNETES_NAMESPACE, name=KUBERNETES_NAME)
    except errors.NotFound:
        try:
            store.object_create(resource=SERVICE.resource, obj=kubernetes_service(port, now), actor=ACTOR)
        except errors.AlreadyExists:
            pass  # another hub made it meanwhile; either way it is not reconciled once it exists, as upstream
    add = _set_address(ip, port, present=True)
    try:
        store.object_update(resource=ENDPOINTS.resource, namespace=KUBERNETES_NAMESPACE, name=KUBERNETES_NAME,
                            mutate=add, actor=ACTOR)
    except errors.NotFound:
        try:
            store.object_create(resource=ENDPOINTS.resource, obj=kubernetes_endpoints(ip, port, now), actor=ACTOR)
        except errors.AlreadyExists:  # another hub made them meanwhile: add this one to theirs
            store.object_update(resource=ENDPOINTS.resource, namespace=KUBERNETES_NAMESPACE, name=KUBERNETES_NAME,
                                mutate=add, actor=ACTOR)


def forget_hub(ip: str, port: int) -> None:
    """A stopping hub takes its address out of the Endpoints (the others keep theirs)."""
    try:
        store.object_update(resource=ENDPOINTS.resource, namespace=KUBERNETES_NAMESPACE, name=KUBERNETES_NAME,
                            mutate=_set_address(ip, port, present=False), actor=ACTOR)
    except errors.NotFound:
        pass


def advertise_address(host: str) -> str:
    """The address other parts of the cluster reach this hub at (kube-apiserver's
    --advertise-address): the bind address itself, the machine's primary address when bound to
    all interfaces, a resolved name otherwise."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        try:
            return socket.gethostbyname(host)
        except OSError:
            return "127.0.0.1"
    if not address.is_unspecified:
        return str(address)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # a UDP "connect" sends nothing: it only picks the outgoing address
            return probe.getsockname()[0]
        except OSError:
            return "127.0.0.1"


class KubernetesServiceKeeper:
    """Runs `ensure_kubernetes_service` now and every `interval` seconds until `stop()`, which
    removes this hub's address. `submit` puts a call on the database thread and returns a Future."""

    def __init__(self, ip: str, port: int, *, submit: Callable[..., Any], interval: float = ENDPOINT_INTERVAL,
                 clock: Clock = REAL):
        self.ip, self.port, self.submit, self.interval, self.clock = ip, port, submit, interval, clock
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def pass_once(self) -> None:
        try:
            self.submit(ensure_kubernetes_service, self.ip, self.port, self.clock.now()).result(timeout=self.interval)
        except (errors.ApiError, FutureTimeout, OSError) as exc:
            log.warning("kubernetes service: pass failed, next in %.0f s: %s", self.interval, exc)
        except Exception:  # a bug must not end the loop that keeps the Service
            log.exception("kubernetes service: pass failed")

    def _run(self) -> None:
        self.pass_once()  # at once, even when stopped at once: a hub that served had its Service
        while not self._stopped.wait(self.interval):
            self.pass_once()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="kubernetes-service", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout)
        try:
            self.submit(forget_hub, self.ip, self.port).result(timeout=timeout)
        except Exception as exc:  # the hub is stopping: never block or fail its exit over this
            log.warning("kubernetes service: could not remove this hub's endpoint: %s", exc)
