"""Daphne forgets an answered request at once, not on its next sweep.

Daphne keeps every request and connection in `Server.connections` until `application_checker`,
once a second, walks all of them and drops those whose application is done and whose client is
gone. A hub answering a thousand requests a second walked a thousand finished ones each second,
and `timeout_checker` (every 2 s) asked each of them for timeouts too: about 2 % of the hub's CPU
in the 1,000-pod ramp.

Guarantees, after `install()`:
- An HTTP request (Daphne's WebRequest) whose client is gone (answered, or disconnected) and whose
  application instance ended without an exception is removed from `Server.connections` the moment
  the later of the two happens.
- Everything else stays for Daphne's sweep as before: an application that raised (Daphne logs it
  there and answers 500 if it can), was cancelled, or is still running (Daphne cancels it after
  `application_close_timeout`), websockets, and a request that never made an application.
- `Server.protocol_disconnected` of a request already removed does nothing (Daphne calls it from
  both `finish` and `connectionLost`, which Twisted may both call for one request).
Installing twice is harmless.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any


def _done_cleanly(instance: Any) -> bool:
    return instance.done() and not instance.cancelled() and instance.exception() is None


def _reap(server: Any, protocol: Any) -> None:
    details = server.connections.get(protocol)
    if details is None or "disconnected" not in details:
        return
    instance = details.get("application_instance")
    if instance is not None and _done_cleanly(instance):
        del server.connections[protocol]


def install() -> None:
    """Reap Daphne's finished HTTP requests as they finish (see the module)."""
    from daphne import http_protocol, server

    if getattr(server.Server.protocol_disconnected, "_kk_reaping", False):
        return
    create, disconnected = server.Server.create_application, server.Server.protocol_disconnected

    @functools.wraps(create)  # keeps the marks of the adjustments installed before (send_backlog's)
    def create_application(self: Any, protocol: Any, scope: dict[str, Any]) -> Any:
        queue = create(self, protocol, scope)
        if isinstance(protocol, http_protocol.WebRequest):
            instance = (self.connections.get(protocol) or {}).get("application_instance")
            if isinstance(instance, asyncio.Future):
                instance.add_done_callback(lambda _: _reap(self, protocol))
        return queue

    def protocol_disconnected(self: Any, protocol: Any) -> None:
        if protocol not in self.connections:
            return  # reaped already: its request ended before this second notice
        disconnected(self, protocol)
        if isinstance(protocol, http_protocol.WebRequest):
            _reap(self, protocol)

    protocol_disconnected._kk_reaping = True  # type: ignore[attr-defined]
    server.Server.create_application = create_application
    server.Server.protocol_disconnected = protocol_disconnected
