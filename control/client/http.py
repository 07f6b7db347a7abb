"""An async HTTP client of the hub, for spokes and the dashboard: one transport, the lean
keep-alive pool of `control.client.lean` (h11 framing), for requests and streams alike — tests
talk to a real loopback server through it too, so they run the path production runs.

Guarantees:
- Every non-2xx answer raises the `control.errors` class of its Status reason (NotFound,
  Conflict, AlreadyExists, Invalid, Gone, ...), so the two ends share one vocabulary.
- A hub that cannot be reached, or that breaks an answer off, raises `HubUnreachable` (one
  meaning: try again later); its connection is never reused.
- Every request carries the component's User-Agent, so the hub attributes its traffic, and its
  bearer token (given, or `KK_TOKEN` from the environment its parent set), so the hub knows who
  it is.
- `watch` yields decoded events one by one as lines arrive (however chunks cut them); an ERROR
  event is raised as its Status error (a 410 as `Gone`), so the caller relists. `stream_lines`
  does the same for any NDJSON answer, `text` reads a plain-text one.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator
from urllib.parse import urlencode

from control import config, errors, jsontext
from control.client.lean import Answer, ConnectionPool, ServerUnreachable
from control.client.resources import PODS, Resource

CONNECT_TIMEOUT = 10.0
STREAM_GRACE = 30.0  # a watch is dead when silent this long past its own timeout


class HubUnreachable(errors.ServiceUnavailable):
    """The hub did not answer (connection refused, reset, closed mid-answer, timed out)."""




TOKEN_ENV = "KK_TOKEN"  # how a spoke's parent hands it its identity's token


class HubClient:
    def __init__(self, server: str, *, agent: str, timeout: float = 10.0, pool_size: int = 32,
                 token: str | None = None, ca: bytes | None = None):
        self.server = server.rstrip("/")
        self.agent = agent
        self.timeout = timeout
        token = config.given(TOKEN_ENV) if token is None else token
        self._pool = ConnectionPool(self.server, agent, size=pool_size, connect_timeout=CONNECT_TIMEOUT, token=token,
                                    ca=ca)

    async def close(self) -> None:
        await self._pool.close()

    async def request(self, method: str, path: str, *, params: dict[str, Any] | None = None, body: Any = None,
                      content_type: str = "application/json") -> Any:
        """The decoded JSON answer (None for an empty one)."""
        data = await self.request_bytes(method, path, params=params,
                                        body=None if body is None else jsontext.dumps(body).encode(),
                                        content_type=content_type)
        return jsontext.loads(data) if data else None

    async def request_coded(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                            body: Any = None, content_type: str = "application/json") -> tuple[int, Any]:
        """`request`, with the 2xx code it answered (a server-side apply: 201 when it created)."""
        code, data = await self._exchange(method, path, params,
                                          None if body is None else jsontext.dumps(body).encode(), content_type)
        return code, jsontext.loads(data) if data else None

    async def request_bytes(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                            body: bytes | None = None, content_type: str = "application/json") -> bytes:
        """The raw body of a 2xx answer."""
        return (await self._exchange(method, path, params, body, content_type))[1]

    async def _exchange(self, method: str, path: str, params: dict[str, Any] | None, body: bytes | None,
                        content_type: str) -> tuple[int, bytes]:
        target = path + ("?" + urlencode(params) if params else "")
        try:
            code, data = await self._pool.request(method, target, body, content_type, self.timeout)
        except ServerUnreachable as exc:
            raise HubUnreachable(f"cannot reach the hub at {self.server}: {exc}") from None
        if code >= 300:
            raise errors.from_status(data, code)
        return code, data

    async def text(self, path: str, *, params: dict[str, Any] | None = None) -> str:
        return (await self.request_bytes("GET", path, params=params)).decode(errors="replace")

    @asynccontextmanager
    async def _streamed(self, method: str, path: str, params: dict[str, Any], read_timeout: float | None,
                        what: str) -> AsyncIterator[Answer]:
        target = path + ("?" + urlencode(params) if params else "")
        try:
            async with self._pool.stream(method, target, read_timeout=read_timeout) as answer:
                if answer.status >= 300:
                    raise errors.from_status(await answer.read(), answer.status)
                yield answer
        except ServerUnreachable as exc:
            raise HubUnreachable(f"{what} broke: {exc}") from None

    async def stream_lines(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                           read_timeout: float | None = 120.0) -> AsyncIterator[dict[str, Any]]:
        """Each JSON line of a streamed (NDJSON) answer, as it arrives."""
        async with self._streamed(method, path, params or {}, read_timeout, f"the stream of {path}") as answer:
            async for line in answer.lines():
                yield jsontext.loads(line)

    # --- verbs ---------------------------------------------------------------------------------

    async def get(self, resource: Resource, name: str, namespace: str | None = None) -> dict[str, Any]:
        return await self.request("GET", resource.path(namespace, name))

    async def list(self, resource: Resource, namespace: str | None = None, *, label_selector: str = "",
                   field_selector: str = "", resource_version: str = "") -> dict[str, Any]:
        params = _selectors(label_selector, field_selector)
        if resource_version:
            params["resourceVersion"] = resource_version
        return await self.request("GET", resource.path(namespace), params=params)

    async def create(self, resource: Resource, obj: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
        namespace = namespace or (obj.get("metadata") or {}).get("namespace")
        return await self.request("POST", resource.path(namespace), body=obj)

    async def replace(self, resource: Resource, obj: dict[str, Any], *, subresource: str | None = None) -> dict[str, Any]:
        meta = obj["metadata"]
        return await self.request("PUT", resource.path(meta.get("namespace"), meta["name"], subresource), body=obj)

    async def replace_status(self, resource: Resource, obj: dict[str, Any]) -> dict[str, Any]:
        return await self.replace(resource, obj, subresource="status")

    async def patch(self, resource: Resource, name: str, patch: Any, namespace: str | None = None, *,
                    patch_type: str = "merge", subresource: str | None = None) -> dict[str, Any]:
        content_type = {"merge": "application/merge-patch+json", "json": "application/json-patch+json",
                        "strategic": "application/strategic-merge-patch+json"}[patch_type]
        return await self.request("PATCH", resource.path(namespace, name, subresource), body=patch,
                                  content_type=content_type)

    async def delete(self, resource: Resource, name: str, namespace: str | None = None, *,
                     grace_period: int | None = None, propagation: str | None = None,
                     preconditions: dict[str, str] | None = None) -> Any:
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if grace_period is not None:
            options["gracePeriodSeconds"] = grace_period
        if propagation:
            options["propagationPolicy"] = propagation
        if preconditions:
            options["preconditions"] = preconditions
        return await self.request("DELETE", resource.path(namespace, name), body=options)

    async def bind(self, namespace: str, pod: str, node: str) -> None:
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod, "namespace": namespace},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        await self.request("POST", PODS.path(namespace, pod, "binding"), body=body)

    async def watch(self, resource: Resource, namespace: str | None = None, *, resource_version: str = "",
                    label_selector: str = "", field_selector: str = "", timeout_seconds: int = 300,
                    bookmarks: bool = True) -> AsyncIterator[dict[str, Any]]:
        params = {**_selectors(label_selector, field_selector), "watch": "1", "timeoutSeconds": str(timeout_seconds)}
        if resource_version:
            params["resourceVersion"] = resource_version
        if bookmarks:
            params["allowWatchBookmarks"] = "true"
        async with self._streamed("GET", resource.path(namespace), params, timeout_seconds + STREAM_GRACE,
                                  f"watch of {resource.plural}") as answer:
            async for line in answer.lines():
                event = jsontext.loads(line)
                if event.get("type") == "ERROR":
                    status = event.get("object") or {}
                    raise errors.from_status(status, int(status.get("code") or 500))
                yield event


def _selectors(label_selector: str, field_selector: str) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if label_selector:
        params["labelSelector"] = label_selector
    if field_selector:
        params["fieldSelector"] = field_selector
    return params
