"""The ConfigMap that says which spokes should run: `kube-system/kubekitchen-spokes`, written by
`runcluster`'s supervisor and the dashboard, watched by the supervisor, readable by every logged-in
user (RBAC's `kubekitchen:spokes-viewer`), drawn by the dashboard.

Guarantees: its namespace and name are spelled here only; `spoke_key` is a spoke's key in its data
(a ConfigMap key cannot hold "/": `kubelet/node-1` -> `kubelet.node-1`) and `spoke_name` the
inverse for the per-node spokes (kubelet, kube-proxy), whose node name may itself hold dots; a
spoke without a node (`scheduler`, `line-cook`) is its own key.
"""

from __future__ import annotations

NAMESPACE, NAME = "kube-system", "kubekitchen-spokes"
PER_NODE_SPOKES = ("kubelet", "kube-proxy")


def spoke_key(spoke: str) -> str:
    component, _, node = spoke.partition("/")
    return f"{component}.{node}" if node else spoke


def spoke_name(key: str) -> str:
    component, _, node = key.partition(".")
    return f"{component}/{node}" if node and component in PER_NODE_SPOKES else key
