"""Where the hub is, and the dashboard's own client of it.

Guarantees:
- The dashboard reaches the hub only over HTTP, so every request it makes is drawn on a spoke of its
  own; it never imports the store or the API server.
- The hub's base URL is `settings.KK_HUB_URL` when set, otherwise the address of the very socket
  the browser's request arrived on (the dashboard is served by the hub's own process), otherwise
  the request's Host header.
- A logged-in browser's requests are made as its user (`Identity`, from the session, see
  `dashboard.login`): with that user's bearer token and the User-Agent `dashboard/<user>`, so RBAC
  applies to them and the hub draws them as that user's own spoke. A view runs `acting_as(identity)`
  (a context variable, so every client made under it, and every task started under it, acts as that
  user); with no identity the client is the dashboard's own identity when authentication is off, and
  anonymous when it is on (it never lends its own rights to a browser that is not logged in).
  `acting_attendee()` names the acting user when they are an attendee (the room's roster).
- One client of the hub per process per hub URL and identity, created on first use and kept: its
  keep-alive connections serve every page, form and websocket of that user; `close_clients` closes it at shutdown. A
  client belongs to the event loop it was made on; a request on another loop (only tests run one
  loop per test) gets a fresh one, so tests stay isolated.
- `stream_lines` and `read_text` reach the hub's two non-JSON answers (the NDJSON of a traffic
  run, the text of a kube-proxy table) as the same client; a refusal raises the hub's error.
"""

from __future__ import annotations

import asyncio
import re
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Iterator
from typing import Any, AsyncIterator
from urllib.parse import urlsplit

from django.conf import settings

from control import roster
from control.client.http import HubClient

AGENT = "dashboard (kube-kitchen)"
WIRE_AGENT = "dashboard/wire (kube-kitchen)"
SECOND_WRITER_AGENT = "dashboard/second-writer (kube-kitchen)"  # the other client of the 409 action
TRAFFIC_READ_SECONDS = 120.0  # a long traffic run answers slowly on purpose

_shared: dict[tuple[str, str, str], tuple[asyncio.AbstractEventLoop, HubClient]] = {}


@dataclass(frozen=True)
class Identity:
    """Who a browser is logged in as: the user's name and bearer token (kept server side)."""

    user: str
    token: str


_acting: ContextVar[Identity | None] = ContextVar("dashboard_identity", default=None)


@contextmanager
def acting_as(identity: Identity | None) -> Iterator[None]:
    """Every client of the hub asked for inside this block acts as `identity`."""
    reset = _acting.set(identity)
    try:
        yield
    finally:
        _acting.reset(reset)


def acting() -> Identity | None:
    return _acting.get()


def acting_attendee() -> str | None:
    """The acting user's name when they are one of the room's attendees (it is their namespace
    too, and their kubeconfig's), else None (the instructor, or no authentication)."""
    identity = _acting.get()
    if identity is None or identity.user not in roster.attendee_codes(settings.DATA_DIR):
        return None
    return identity.user


def agent_for(user: str) -> str:
    """The User-Agent of a user's requests: the hub names the client `dashboard/<user>`."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", user).strip("-")[:60] or "user"
    return f"dashboard/{slug} (kube-kitchen)"


def _authentication_on() -> bool:
    from control.auth import enabled

    return enabled()


def configured_url() -> str:
    return str(getattr(settings, "KK_HUB_URL", "")).rstrip("/")


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
    url = urlsplit(hub_url(scope))
    return url.hostname or "127.0.0.1", url.port or (443 if url.scheme == "https" else 80)


def token() -> str:
    """The dashboard's own identity at the hub (`kubekitchen:dashboard`, from the data folder's token
    file; the dashboard runs in the hub's process), used only while authentication is off: with it
    on, every request acts as the browser's logged-in user (`acting_as`).
    A dashboard served apart from its hub (`KK_HUB_URL`) is given its token as `KK_HUB_TOKEN`."""
    from control.auth.tokenfile import spoke_token

    given = getattr(settings, "KK_HUB_TOKEN", "")
    return given or spoke_token(settings.DATA_DIR, "dashboard")


def current_token() -> str:
    """The bearer token requests made now carry (see `acting_as`)."""
    identity = _acting.get()
    if identity is not None:
        return identity.token
    return "" if _authentication_on() else token()


def client(base_url: str, identity: Identity | None = None) -> HubClient:
    """The process's one client of the hub at `base_url` for `identity` (default: the one acting
    now), made on first use."""
    identity = identity or _acting.get()
    bearer = identity.token if identity else current_token()
    loop = asyncio.get_running_loop()
    agent = agent_for(identity.user) if identity else AGENT
    key = (base_url, bearer, agent)  # the agent too: one token may be used under two names (the login check)
    held = _shared.get(key)
    if held is None or held[0] is not loop:
        held = _shared[key] = (loop, HubClient(base_url, agent=agent, token=bearer, ca=cluster_ca(base_url)))
    return held[1]


def cluster_ca(base_url: str) -> bytes | None:
    """The CA to trust for an HTTPS hub: the cluster's own (it signed the hub's serving certificate;
    a page opened on the HTTPS port calls the hub there)."""
    if not base_url.startswith("https:"):
        return None
    from control import keys

    return keys.ca_certificate(settings.DATA_DIR)


async def close_clients() -> None:
    """Close the shared clients made on this event loop (at shutdown)."""
    loop = asyncio.get_running_loop()
    for key, (owner, held) in list(_shared.items()):
        if owner is loop or owner.is_closed():
            del _shared[key]
            if owner is loop:
                await held.close()


@asynccontextmanager
async def client_for(scope: dict[str, Any]) -> AsyncIterator[HubClient]:
    """The shared client for a request's or websocket's hub (kept open after use)."""
    yield client(hub_url(scope))


async def stream_lines(base_url: str, method: str, path: str, params: dict[str, str], *,
                       read_timeout: float = TRAFFIC_READ_SECONDS) -> AsyncIterator[dict[str, Any]]:
    """Each JSON line of a streamed answer, as it arrives."""
    async for line in client(base_url).stream_lines(method, path, params=params, read_timeout=read_timeout):
        yield line


async def read_text(base_url: str, path: str, params: dict[str, str]) -> str:
    return await client(base_url).text(path, params=params)
