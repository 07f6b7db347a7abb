"""What exists from the start: the revision counter and the system namespaces.

Guarantees: idempotent; goes through `control.storage.store` like every other write, attributed to
"kube-apiserver"; runs after every migrate (so fresh test databases have it too).
"""

from __future__ import annotations

import uuid

from control.clock import REAL
from control import errors
from control.storage import store
from control.kinds.meta import format_time
from control.kinds.core import namespace_defaults

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def cluster_bootstrap() -> None:
    store.ensure_counter()
    for name in SYSTEM_NAMESPACES:
        namespace = {"apiVersion": "v1", "kind": "Namespace",
                     "metadata": {"name": name, "uid": str(uuid.uuid4()), "creationTimestamp": format_time(REAL.now())}}
        namespace_defaults(namespace)
        try:
            store.object_create(resource="/namespaces", obj=namespace, actor="kube-apiserver")
        except errors.AlreadyExists:
            pass


def on_post_migrate(sender, **kwargs) -> None:
    if kwargs.get("using", "default") == "default":
        cluster_bootstrap()
