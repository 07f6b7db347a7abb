"""An async HTTP client of the hub, for spokes (httpx underneath).

Guarantees:
- Every non-2xx answer raises the `control.errors` class of its Status reason (NotFound,
  Conflict, AlreadyExists, Invalid, Gone, ...), so the two ends share one vocabulary.
- A hub that cannot be reached raises `HubUnreachable` (one meaning: try again later).
- Every request carries the component's User-Agent, so the hub attributes its traffic.
- `watch` yields decoded events one by one as lines arrive; an ERROR event is raised as its
  Status error (a 410 as `Gone`), so the caller relists.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncIterator
from urllib.parse import urlencode

import httpx

from control import errors
from control.client.lean import ConnectionPool
from control.client.resources import PODS, Resource


class HubUnreachable(errors.ServiceUnavailable):
    """The hub did not answer (connection refused, reset, timed out)."""


error_from_status = errors.from_status  # the one Status decoder, under the toolkit's old name


class HubClient:
    def __init__(self, server: str, *, agent: str, timeout: float = 10.0, transport: httpx.AsyncBaseTransport | None = None):
        self.server = server.rstrip("/")
        self.agent = agent
        self.timeout = timeout
        # Ordinary requests take the lean pool; watches (and tests that inject a transport) use httpx.
        self._lean = ConnectionPool(self.server, agent) if transport is None else None
        self._http = httpx.AsyncClient(
            base_url=self.server, transport=transport, headers={"User-Agent": agent, "Accept": "application/json"},
            timeout=httpx.Timeout(timeout), limits=httpx.Limits(max_connections=50, max_keepalive_connections=20))

    async def close(self) -> None:
        if self._lean is not None:
            await self._lean.close()
        await self._http.aclose()

    async def request(self, method: str, path: str, *, params: dict[str, Any] | None = None, body: Any = None,
                      content_type: str = "application/json") -> Any:
        content = None if body is None else json.dumps(body).encode()
        if self._lean is not None:
            return await self._lean_request(method, path, params, content, content_type)
        headers = {"Content-Type": content_type} if content is not None else None
        try:
            response = await self._http.request(method, path, params=params, content=content, headers=headers)
        except httpx.HTTPError as exc:
            raise HubUnreachable(f"cannot reach the hub at {self.server}: {exc!r}") from None
        if response.status_code >= 300:
            raise errors.from_status(response.content, response.status_code)
        if not response.content:
            return None
        return response.json()

    async def _lean_request(self, method: str, path: str, params: dict[str, Any] | None, content: bytes | None,
                            content_type: str) -> Any:
        target = path + ("?" + urlencode(params) if params else "")
        try:
            code, data = await self._lean.request(method, target, content, content_type, self.timeout)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            raise HubUnreachable(f"cannot reach the hub at {self.server}: {exc!r}") from None
        if code >= 300:
            raise errors.from_status(data, code)
        return json.loads(data) if data else None

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
        timeout = httpx.Timeout(10.0, read=timeout_seconds + 30)
        try:
            async with self._http.stream("GET", resource.path(namespace), params=params, timeout=timeout) as response:
                if response.status_code >= 300:
                    raise errors.from_status(await response.aread(), response.status_code)
                async for line in response.aiter_lines():
                    if not line.strip():
                        continue
                    event = json.loads(line)
                    if event.get("type") == "ERROR":
                        status = event.get("object") or {}
                        raise errors.from_status(status, int(status.get("code") or 500))
                    yield event
        except httpx.HTTPError as exc:
            raise HubUnreachable(f"watch of {resource.plural} broke: {exc!r}") from None


def _selectors(label_selector: str, field_selector: str) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if label_selector:
        params["labelSelector"] = label_selector
    if field_selector:
        params["fieldSelector"] = field_selector
    return params
