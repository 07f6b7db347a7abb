"""Node and pod objects for the scheduler tests, shaped as the hub returns them."""

from __future__ import annotations

import itertools
from typing import Any

_rv = itertools.count(100)


def next_rv() -> str:
    return str(next(_rv))


def node(name: str, *, cpu: str = "4", memory: str = "8Gi", pods: int | str = 110, ready: str = "True",
         taints: list[dict] | None = None, labels: dict[str, str] | None = None, unschedulable: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {"kind": "Node", "apiVersion": "v1",
            "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": next_rv(),
                         "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": spec,
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": str(pods)},
                       "capacity": {"cpu": cpu, "memory": memory, "pods": str(pods)},
                       "conditions": [{"type": "Ready", "status": ready}]}}


def pod(name: str, *, cpu: str | None = None, memory: str | None = None, node_name: str = "", owner: str = "",
        namespace: str = "default", phase: str = "Pending", **spec: Any) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}",
                            "resourceVersion": next_rv()}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner,
                                    "uid": f"uid-rs-{owner}", "controller": True}]
    body: dict[str, Any] = {"containers": [{"name": "main", "image": "nginx",
                                             "resources": {"requests": requests} if requests else {}}],
                            "schedulerName": "default-scheduler", **spec}
    if node_name:
        body["nodeName"] = node_name
    return {"metadata": meta, "spec": body, "status": {"phase": phase}}


def unreachable(effect: str = "NoSchedule") -> dict[str, str]:
    return {"key": "node.kubernetes.io/unreachable", "effect": effect}
