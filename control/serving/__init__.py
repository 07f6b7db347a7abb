"""How a request is served: the ASGI dispatcher (`asgi`), the names the server answers to (`hosts`),
the channel layer (`channel_layer`), and every adjustment of Daphne and Twisted the hub needs
(`twisted_http`, `websocket_denial`, `send_backlog`, `reaping`, `spdy_upgrade`, `http2`, `timeouts`,
`client_certs`).

Guarantees: `install()` applies every adjustment, in one order, exactly once per process (a second
call does nothing), with the slow-client bounds from settings (KK_HTTP_HEADER_TIMEOUT,
KK_HTTP_IDLE_TIMEOUT) and the bound on the hub's own websocket decision (KK_WEBSOCKET_DECISION_TIMEOUT).
It is called from one place, the ASGI entry point `control.asgi`, which `runhub`, `daphne control.asgi:application` and Django's `runserver` (ASGI_APPLICATION) all import:
each server gets all of them. Before installing it logs any private name of Twisted/Daphne the
adjustments rely on that the installed versions lack (`private`; a test fails on the same list).
Importing this package applies nothing and imports neither Django's app nor Twisted.
"""

from __future__ import annotations

_installed = False


def install() -> None:
    """Adjust Daphne and Twisted for the hub (see the module); idempotent."""
    global _installed
    if _installed:
        return
    # Daphne installs its asyncio reactor when daphne.server is imported: before any Twisted module
    # below can ask for the default one.
    import daphne.server  # noqa: F401
    from django.conf import settings

    from control.serving import (client_certs, http2, private, reaping, send_backlog, spdy_upgrade, timeouts,
                                 twisted_http, websocket_denial)

    private.report()
    twisted_http.install()  # long request lines, 422/429 phrases, a cheap Content-Type parse, no unread access log
    # a refused websocket gets a 404 Status, not Daphne's bodyless 403; one the hub is slow to decide a
    # 429, not a TCP reset
    websocket_denial.install(decision=settings.KK_WEBSOCKET_DECISION_TIMEOUT)
    send_backlog.install()  # the hub sees how far a watcher is behind in reading (control.api.app)
    reaping.install()  # an answered request leaves Daphne's books at once, not at its next sweep
    spdy_upgrade.install()  # kubectl's port-forward over SPDY without WebSocket reaches serve_portforward
    http2.install()  # a stuck HTTP/2 watcher must not spin Twisted's sending loop
    client_certs.install()  # the HTTPS port's client certificates reach the x509 authenticator
    # Slow clients cannot hold connections: header and idle bounds (watches are not cut by them).
    timeouts.install(header=settings.KK_HTTP_HEADER_TIMEOUT, idle=settings.KK_HTTP_IDLE_TIMEOUT)
    _installed = True


def installed() -> bool:
    return _installed
