"""Every OpenAPI v3 component schema the hub publishes and decodes against, by Kubernetes name.

Guarantees: `DEFINITIONS` maps names such as "io.k8s.api.core.v1.Pod" to schemas in the Kubernetes
OpenAPI v3 shape; each name is defined by exactly one module; no two schemas share a dict (callers may
not mutate them, but a slip in one cannot leak into another); every `$ref` points at a name in
`DEFINITIONS` (checked by the tests).
"""

from __future__ import annotations

import copy
from typing import Any

from control.kinds.schemas import (
    apiextensions, apiregistration, apps, autoscaling, autoscaling_v1, batch, certificates, container,
    controllerrevisions, core, daemonsets, discovery, events, meta, networking, networkpolicy, node, pod, pod_status,
    policy, quota, rbac, replicationcontroller, scheduling, secret, serviceaccount, statefulset, storage, volume,
)

_MODULES = (meta, container, pod, pod_status, volume, node, core, secret, serviceaccount, apps, autoscaling, batch,
            policy, apiextensions, daemonsets, controllerrevisions, storage, statefulset, rbac, quota,
            replicationcontroller, apiregistration, scheduling, certificates, networking, discovery)
_MODULES += (networkpolicy,)
_MODULES += (autoscaling_v1, events)  # the other served versions of built-in kinds


def _merge() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for module in _MODULES:
        for name, schema in module.DEFINITIONS.items():
            if name in out:
                raise RuntimeError(f"schema {name} defined twice")
            out[name] = copy.deepcopy(schema)
    return dict(sorted(out.items()))


DEFINITIONS: dict[str, dict[str, Any]] = _merge()

__all__ = ["DEFINITIONS"]
