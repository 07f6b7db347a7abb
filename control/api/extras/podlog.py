"""`<kind>/NAME/log` (a pod's): the hub asks the object's kubelet for the container's log, as the real one does.

Guarantees: which container and which kubelet is the kind's `log` location (`Kind.connect`: for a
pod `control.kinds.pod_locations.log_location`, 400 with Kubernetes' messages when the container
is ambiguous, unknown or not started); the endpoint is checked by `control.api.node_address` (an
address outside the node network is a 400 and is never contacted); the answer streams through
as text/plain (a non-follow answer is sent in one piece when it is small, streamed otherwise,
never held whole); an unreachable kubelet is a 503 Status, never a hang or a 500.
"""

from __future__ import annotations

from typing import AsyncIterator

import httpx

from control import errors
from control.storage.db import run_db
from control.api.request import Call, bool_param, int_param
from control.api.responses import Reply, Stream
from control.api import locations, node_address

INLINE_BYTES = 1024 * 1024  # a longer log is streamed, never held whole in the hub's memory


def _target(call: Call) -> str:
    """The kubelet URL for this request (the kind's LogLocation, through the node gate)."""
    query = {key: [value] for key, value in call.query.items()}
    located = locations.locate(call.kind, call.namespace, call.name, call.subresource or "log", query)
    return located.target.url(located.path)


async def pod_log(call: Call) -> Reply | Stream:
    int_param(call.query, "tailLines")
    int_param(call.query, "sinceSeconds")
    int_param(call.query, "limitBytes")
    url = await run_db(_target, call)
    client = node_address.client(httpx.Timeout(10.0, read=None))
    try:
        upstream = await client.send(client.build_request("GET", url), stream=True)
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
