"""Where the hub is, and the dashboard's own client of it.

Guarantees:
- The dashboard reaches the hub only over HTTP, as the client "dashboard" (its User-Agent), so
  every request it makes is drawn on its own spoke; it never imports the store or the API server.
- The hub's base URL is `settings.KK_HUB_URL` when set, otherwise the address of the very socket
  the browser's request arrived on (the dashboard is served by the hub's own process), otherwise
  the request's Host header.
- `stream_lines` and `read_text` reach the hub's two non-JSON answers (the NDJSON of a traffic
  run, the text of a kube-proxy table) as the same client; a refusal raises the hub's error.
"""

from __future__ import annotations

import json
import os
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import httpx
from django.conf import settings

from control import errors
from control.client.http import HubClient, HubUnreachable

AGENT = "dashboard (kube-kitchen)"
WIRE_AGENT = "dashboard/wire (kube-kitchen)"
# Tests put an httpx transport here to stand in for the hub.
transport: httpx.AsyncBaseTransport | None = None


def configured_url() -> str:
    return (getattr(settings, "KK_HUB_URL", "") or os.environ.get("KK_HUB_URL", "")).rstrip("/")


def hub_url(scope: dict[str, Any]) -> str:
    """The hub's base URL for a request or websocket with this ASGI scope."""
    configured = configured_url()
    if configured:
        return configured
    secure = scope.get("scheme") in ("https", "wss")
    scheme = "https" if secure else "http"
    server = scope.get("server")
    if server and server[0] and server[1]:
        host = str(server[0])
        if ":" in host:  # an IPv6 address
            host = f"[{host}]"
        return f"{scheme}://{host}:{server[1]}"
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    return f"{scheme}://{headers.get('host', '127.0.0.1:8000')}"


def scope_of(request: Any) -> dict[str, Any]:
    """The ASGI scope of a Django request (a WSGI request, in some tests, has only its Host)."""
    scope = getattr(request, "scope", None)
    if scope is not None:
        return scope
    return {"scheme": request.scheme, "headers": [(b"host", request.get_host().encode("latin-1"))]}


def hub_address(scope: dict[str, Any]) -> tuple[str, int]:
    """(host, port) of the hub, for the wire view's raw TCP connection."""
    url = httpx.URL(hub_url(scope))
    return url.host, url.port or (443 if url.scheme == "https" else 80)


def connect(base_url: str) -> HubClient:
    return HubClient(base_url, agent=AGENT, transport=transport)


@asynccontextmanager
async def client_for(scope: dict[str, Any]) -> AsyncIterator[HubClient]:
    client = connect(hub_url(scope))
    try:
        yield client
    finally:
        await client.close()


def _raw_client(base_url: str, read_timeout: float) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=base_url, transport=transport, headers={"User-Agent": AGENT},
                             timeout=httpx.Timeout(10.0, read=read_timeout))


async def _raise_for(response: httpx.Response) -> None:
    if response.status_code < 300:
        return
    raise errors.from_status(await response.aread(), response.status_code)


async def stream_lines(base_url: str, method: str, path: str, params: dict[str, str], *,
                       read_timeout: float = 120.0) -> AsyncIterator[dict[str, Any]]:
    """Each JSON line of a streamed answer, as it arrives."""
    try:
        async with _raw_client(base_url, read_timeout) as http:
            async with http.stream(method, path, params=params) as response:
                await _raise_for(response)
                async for line in response.aiter_lines():
                    if line.strip():
                        yield json.loads(line)
    except httpx.HTTPError as exc:
        raise HubUnreachable(f"cannot reach the hub at {base_url}: {exc!r}") from None


async def read_text(base_url: str, path: str, params: dict[str, str]) -> str:
    try:
        async with _raw_client(base_url, 10.0) as http:
            response = await http.get(path, params=params)
            await _raise_for(response)
            return response.text
    except httpx.HTTPError as exc:
        raise HubUnreachable(f"cannot reach the hub at {base_url}: {exc!r}") from None
