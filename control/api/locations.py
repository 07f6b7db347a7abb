"""Where a connect request (log, exec, attach, portforward) goes: the HTTP face asks the object's
kind (`Kind.connect`, see `control.kinds.connect`) and never knows which kind hosts which.

Guarantees: runs on the database thread; reads the object (404 when missing) and the host it
names (a missing host is given to the kind as None), lets the kind's locator decide (its 400/503
Statuses pass through), and returns only a target `control.api.node_address` accepted (400 for
an address outside the node network): the one gate to a node.
"""

from __future__ import annotations

from dataclasses import dataclass

from control import errors
from control.api import node_address
from control.kinds.base import Kind
from control.kinds.connect import Query
from control.storage import store


@dataclass(frozen=True)
class Located:
    target: node_address.NodeTarget
    path: str  # on the target, query included


def locate(kind: Kind, namespace: str, name: str, subresource: str, query: Query) -> Located:
    connect = kind.connect
    if connect is None or subresource not in connect.locations:
        raise errors.NotFound(errors.NOT_FOUND)
    obj = store.object_get(resource=kind.resource, namespace=namespace, name=name)
    host_name = connect.host(obj)
    host = None
    if host_name:
        try:
            host = store.object_get(resource=connect.host_resource, namespace="", name=host_name)
        except errors.NotFound:
            host = None
    location = connect.location(subresource, obj, host, query)
    return Located(node_address.located(location), location.path)
