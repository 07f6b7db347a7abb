"""`pods/NAME/log`: the hub asks the pod's kubelet for the container's log, as the real one does.

Guarantees: the container is checked against the pod (400 with Kubernetes' messages when it is
ambiguous, unknown or not started); the kubelet is found through its Node's address and
`daemonEndpoints.kubeletEndpoint.Port`, checked by `control.api.node_address` (an address outside
the node network is a 400 and is never contacted); the answer streams through as text/plain (a
non-follow answer is sent in one piece when it is small, streamed otherwise, never held whole); an
unreachable kubelet is a 503 Status, never a hang or a 500.
"""

from __future__ import annotations

from typing import Any, AsyncIterator
from urllib.parse import quote

import httpx

from control import errors
from control.storage import store
from control.storage.db import run_db
from control.api.request import Call, bool_param, int_param
from control.api.responses import Reply, Stream
from control.api import node_address

INLINE_BYTES = 1024 * 1024  # a longer log is streamed, never held whole in the hub's memory
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
    target = node_address.kubelet(store.object_get(resource="/nodes", namespace="", name=node_name), node_name)
    path = "/".join(quote(part, safe="") for part in ("containerLogs", call.namespace, call.name, container))
    return container, target.url(f"/{path}")


async def pod_log(call: Call) -> Reply | Stream:
    int_param(call.query, "tailLines")
    int_param(call.query, "sinceSeconds")
    int_param(call.query, "limitBytes")
    container, url = await run_db(_target, call)
    params: dict[str, Any] = {k: call.query[k] for k in LOG_PARAMS if k in call.query}
    client = node_address.client(httpx.Timeout(10.0, read=None))
    try:
        upstream = await client.send(client.build_request("GET", url, params=params), stream=True)
    except httpx.HTTPError as exc:
        await client.aclose()
        raise errors.ServiceUnavailable(f"cannot reach the kubelet for pod {call.name}: {exc}") from None
    if upstream.status_code != 200:
        try:
            text = (await node_address.read_bounded(upstream, 64 * 1024)).decode(errors="replace")
        except (node_address.AnswerTooLarge, httpx.HTTPError):
            text = ""
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

    if bool_param(call.query, "follow"):
        return Stream(chunks(), content_type="text/plain")
    return await _small_or_streamed(chunks())


async def _small_or_streamed(chunks: AsyncIterator[bytes]) -> Reply | Stream:
    """A log that fits in INLINE_BYTES as one reply; a longer one streamed on from where it is."""
    head, size = [], 0
    async for chunk in chunks:
        head.append(chunk)
        size += len(chunk)
        if size > INLINE_BYTES:
            async def rest() -> AsyncIterator[bytes]:
                try:
                    for part in head:
                        yield part
                    async for part in chunks:
                        yield part
                finally:
                    await chunks.aclose()  # type: ignore[attr-defined]  # the kubelet's answer and client
            return Stream(rest(), content_type="text/plain")
    return Reply(200, b"".join(head), "text/plain")
