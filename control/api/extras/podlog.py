"""`pods/NAME/log`: the hub asks the pod's kubelet for the container's log, as the real one does.

Guarantees: the container is checked against the pod (400 with Kubernetes' messages when it is
ambiguous, unknown or not started); the kubelet is found through its Node's address and
`daemonEndpoints.kubeletEndpoint.Port`; the answer streams through as text/plain; an unreachable
kubelet is a 503 Status, never a hang or a 500.
"""

from __future__ import annotations

from typing import Any, AsyncIterator

import httpx

from control import errors
from control.storage import store
from control.storage.db import run_db
from control.api.request import Call, bool_param, int_param
from control.api.responses import Reply, Stream
from control.kinds.network import kubelet_endpoint

LOG_PARAMS = ("follow", "tailLines", "previous", "timestamps", "sinceSeconds", "limitBytes")


def _target(call: Call) -> tuple[str, str]:
    """(container, kubelet base URL) for this request."""
    pod = store.object_get(resource="/pods", namespace=call.namespace, name=call.name)
    containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
    containers += [c.get("name") for c in (pod.get("spec") or {}).get("initContainers") or []]
    container = call.query.get("container", "")
    if not container:
        if len((pod.get("spec") or {}).get("containers") or []) != 1:
            raise errors.BadRequest(f"a container name must be specified for pod {call.name}, choose one of: "
                                    f"[{' '.join(c for c in containers if c)}]")
        container = containers[0]
    if container not in containers:
        raise errors.BadRequest(f"container {container} is not valid for pod {call.name}")
    node_name = (pod.get("spec") or {}).get("nodeName")
    if not node_name:
        raise errors.BadRequest(f'container "{container}" in pod "{call.name}" is waiting to start: ContainerCreating')
    endpoint = kubelet_endpoint(store.object_get(resource="/nodes", namespace="", name=node_name))
    if endpoint is None:
        raise errors.ServiceUnavailable(f"the kubelet of node {node_name} publishes no endpoint for logs")
    address, port = endpoint
    return container, f"http://{address}:{port}/containerLogs/{call.namespace}/{call.name}/{container}"


async def pod_log(call: Call) -> Reply | Stream:
    int_param(call.query, "tailLines")
    int_param(call.query, "sinceSeconds")
    int_param(call.query, "limitBytes")
    container, url = await run_db(_target, call)
    params: dict[str, Any] = {k: call.query[k] for k in LOG_PARAMS if k in call.query}
    client = httpx.AsyncClient(timeout=httpx.Timeout(10.0, read=None))
    try:
        upstream = await client.send(client.build_request("GET", url, params=params), stream=True)
    except httpx.HTTPError as exc:
        await client.aclose()
        raise errors.ServiceUnavailable(f"cannot reach the kubelet for pod {call.name}: {exc}") from None
    if upstream.status_code != 200:
        text = (await upstream.aread()).decode(errors="replace")
        await upstream.aclose()
        await client.aclose()
        raise errors.BadRequest(text.strip() or f"the kubelet answered {upstream.status_code}")

    async def chunks() -> AsyncIterator[bytes]:
        try:
            async for chunk in upstream.aiter_raw():
                yield chunk
        finally:
            await upstream.aclose()
            await client.aclose()

    if not bool_param(call.query, "follow"):
        body = b"".join([chunk async for chunk in chunks()])
        return Reply(200, body, "text/plain")
    return Stream(chunks(), content_type="text/plain")
