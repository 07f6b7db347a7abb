"""Where each kind lives on the hub: group, version, plural, scope. Paths are built here only.

Guarantees: `Resource.path` returns the exact Kubernetes REST path for a collection, an object or
a subresource, in a namespace or cluster-wide. A Resource restates a served Kind's names, so it is
derived from it (`Resource.of`); `BY_KIND` holds one for every built-in kind (a new kind needs no
line here); the named constants below are the ones spokes import, each equal to its kind's (tested).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @classmethod
    def of(cls, kind: Any) -> "Resource":
        """The Resource of a served `control.kinds.base.Kind` (duck-typed: spokes need not load it)."""
        return cls(kind.group, kind.version, kind.plural, kind.kind, kind.namespaced)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name:
            base += f"/{name}"
            if subresource:
                base += f"/{subresource}"
        return base


NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
NODES = Resource("", "v1", "nodes", "Node", namespaced=False)
PODS = Resource("", "v1", "pods", "Pod")
SERVICES = Resource("", "v1", "services", "Service")
ENDPOINTS = Resource("", "v1", "endpoints", "Endpoints")
EVENTS = Resource("", "v1", "events", "Event")
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap")
SECRETS = Resource("", "v1", "secrets", "Secret")
SERVICEACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount")
PERSISTENTVOLUMECLAIMS = Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim")
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease")
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment")
REPLICASETS = Resource("apps", "v1", "replicasets", "ReplicaSet")
JOBS = Resource("batch", "v1", "jobs", "Job")
CRONJOBS = Resource("batch", "v1", "cronjobs", "CronJob")
PODDISRUPTIONBUDGETS = Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget")
DAEMONSETS = Resource("apps", "v1", "daemonsets", "DaemonSet")
CONTROLLERREVISIONS = Resource("apps", "v1", "controllerrevisions", "ControllerRevision")
STATEFULSETS = Resource("apps", "v1", "statefulsets", "StatefulSet")
PERSISTENTVOLUMES = Resource("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False)
REPLICATIONCONTROLLERS = Resource("", "v1", "replicationcontrollers", "ReplicationController")
CERTIFICATESIGNINGREQUESTS = Resource("certificates.k8s.io", "v1", "certificatesigningrequests",
                                      "CertificateSigningRequest", namespaced=False)
STORAGECLASSES = Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass", namespaced=False)
PRIORITYCLASSES = Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", namespaced=False)
INGRESSES = Resource("networking.k8s.io", "v1", "ingresses", "Ingress")
INGRESSCLASSES = Resource("networking.k8s.io", "v1", "ingressclasses", "IngressClass", namespaced=False)
ENDPOINTSLICES = Resource("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice")
NETWORKPOLICIES = Resource("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy")

ALL = (NAMESPACES, NODES, PODS, SERVICES, ENDPOINTS, EVENTS, CONFIGMAPS, LEASES, DEPLOYMENTS, REPLICASETS)
ALL += (JOBS, CRONJOBS)
ALL += (PODDISRUPTIONBUDGETS,)
ALL += (DAEMONSETS, CONTROLLERREVISIONS)
ALL += (STATEFULSETS, PERSISTENTVOLUMES, PERSISTENTVOLUMECLAIMS, STORAGECLASSES)
ALL += (REPLICATIONCONTROLLERS,)
ALL += (PRIORITYCLASSES,)
ALL += (INGRESSES, INGRESSCLASSES)
ALL += (ENDPOINTSLICES,)
ALL += (NETWORKPOLICIES,)


def _every_kind() -> dict[tuple[str, str], Resource]:
    from control.kinds import SERVED  # the registry; imported late, as a spoke needs it only here

    return {(k.api_version, k.kind): Resource.of(k) for k in SERVED}


BY_KIND = {**_every_kind(), **{(r.api_version, r.kind): r for r in ALL}}


def key_of(obj: dict) -> str:
    """The cache/queue key of an object: "namespace/name" or "name"."""
    meta = obj.get("metadata") or {}
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta.get("name", "")


def split_key(key: str) -> tuple[str, str]:
    namespace, _, name = key.rpartition("/")
    return namespace, name
