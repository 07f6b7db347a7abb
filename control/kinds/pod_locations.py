"""Where a pod's log, exec, attach and port-forward requests go: kube-apiserver's `LogLocation`,
`ExecLocation`, `AttachLocation` and `PortForwardLocation` (pkg/registry/core/pod/strategy.go),
as pure functions of the pod, its Node and the request's query.

Guarantees: the checks come in upstream's order and with its messages (400): an exec without a
command, no stream asked for, a container not named on a multi-container pod or not in it, a pod
not yet on a node; a Node that does not exist or publishes no kubelet endpoint is a 503. The
kubelet path is the kubelet's own (`/containerLogs/...`, `/exec/...`, `/attach/...`,
`/portForward/...`), its query what the kubelet reads.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from control import errors
from control.kinds.connect import Connect, Location, Obj, Query
from control.kinds.network import node_address

NODES = "/nodes"  # the store key of the kind pods run on (control.kinds.core.NODE.resource)
LOG_PARAMS = ("follow", "tailLines", "previous", "timestamps", "sinceSeconds", "limitBytes")
STREAM_FLAGS = ("stdin", "stdout", "stderr", "tty")
TRUE = ("1", "true", "True")


def pod_host(pod: Obj) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def _last(query: Query, key: str) -> str:
    return (query.get(key) or [""])[-1]


def _names(pod: Obj, key: str) -> list[str]:
    return [c.get("name", "") for c in (pod.get("spec") or {}).get(key) or [] if isinstance(c, dict)]


def kubelet_endpoint(node: Obj | None, node_name: str) -> tuple[Any, Any]:
    """The Node's kubelet as it publishes it (InternalIP, daemonEndpoints.kubeletEndpoint.Port),
    unchecked; 503 when there is no Node or it publishes nothing (upstream's GetConnectionInfo)."""
    if node is not None:
        port = (((node.get("status") or {}).get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")
        address = node_address(node)
        if address and port not in (None, 0):
            return address, port
    raise errors.ServiceUnavailable(f"the kubelet of node {node_name} publishes no endpoint")


def _at_kubelet(pod: Obj, node: Obj | None, path: str, no_host: str) -> Location:
    host = pod_host(pod)
    if not host:
        raise errors.BadRequest(no_host)
    address, port = kubelet_endpoint(node, host)
    return Location(host, address, port, path)


def _path(*parts: str) -> str:
    return "/" + "/".join(quote(part, safe="") for part in parts)


def log_location(pod: Obj, node: Obj | None, query: Query) -> Location:
    """LogLocation: the one container of a single-container pod unless one is named."""
    name = pod["metadata"]["name"]
    containers = _names(pod, "containers") + _names(pod, "initContainers")
    container = _last(query, "container")
    if not container:
        if len(_names(pod, "containers")) != 1:
            raise errors.BadRequest(f"a container name must be specified for pod {name}, choose one of: "
                                    f"[{' '.join(c for c in containers if c)}]")
        container = containers[0]
    if container not in containers:
        raise errors.BadRequest(f"container {container} is not valid for pod {name}")
    params = urlencode([(k, _last(query, k)) for k in LOG_PARAMS if k in query])
    path = _path("containerLogs", pod["metadata"].get("namespace", ""), name, container)
    return _at_kubelet(pod, node, f"{path}?{params}" if params else path,
                       f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating')


def stream_container(pod: Obj, wanted: str) -> str:
    """The container an exec or attach means (streamLocation's refusals)."""
    name = pod["metadata"]["name"]
    containers, init = _names(pod, "containers"), _names(pod, "initContainers")
    if not wanted:
        if len(containers) == 1:
            return containers[0]
        message = f"a container name must be specified for pod {name}"
        if containers:
            message += f", choose one of: [{' '.join(containers)}]"
        if init:
            message += f" or one of the init containers: [{' '.join(init)}]"
        raise errors.BadRequest(message)
    if wanted not in containers + init:
        raise errors.BadRequest(f"container {wanted} is not valid for pod {name}")
    return wanted


def _stream_location(action: str) -> Any:
    def locate(pod: Obj, node: Obj | None, query: Query) -> Location:
        command = query.get("command") or []
        if action == "exec" and not command:
            raise errors.BadRequest("you must specify at least one command for the container")
        flags = {f: _last(query, f) in TRUE for f in STREAM_FLAGS}
        if not (flags["stdin"] or flags["stdout"] or flags["stderr"]):
            raise errors.BadRequest("you must specify at least 1 of stdin, stdout, stderr")
        name = pod["metadata"]["name"]
        container = stream_container(pod, _last(query, "container"))
        params = urlencode([("command", c) for c in command] + [(f, "1" if v else "0") for f, v in flags.items()])
        path = _path(action, pod["metadata"].get("namespace", ""), name, container)
        return _at_kubelet(pod, node, f"{path}?{params}", f"pod {name} does not have a host assigned")
    return locate


def portforward_location(pod: Obj, node: Obj | None, query: Query) -> Location:
    """PortForwardLocation: the pod's kubelet; each forwarded connection adds its `?port=N`."""
    name = pod["metadata"]["name"]
    return _at_kubelet(pod, node, _path("portForward", pod["metadata"].get("namespace", ""), name),
                       f"pod {name} does not have a host assigned")


POD_CONNECT = Connect(host_resource=NODES, host=pod_host, locations={
    "log": log_location, "exec": _stream_location("exec"), "attach": _stream_location("attach"),
    "portforward": portforward_location,
})
