"""The names this server answers to (`ALLOWED_HOSTS`), checked on every request before any path is
served: the defence against DNS rebinding, where a foreign page makes a browser on the attendee's
laptop talk to the hub under a name the attacker controls.

Guarantees:
- `ALLOWED_HOSTS` is the localhost names, the names in `KK_ALLOWED_HOSTS` (comma-separated, Django's
  syntax: `.example.org` for a domain and its subdomains) and, once `runhub --addr` knows it, the
  bind address (for 0.0.0.0 or ::, the machine's name and primary address too). There is no `*`
  unless someone writes it in `KK_ALLOWED_HOSTS`.
- `host_allowed(scope)` says whether an HTTP or websocket request's Host header is one of them (a
  request without a Host header cannot be a rebinding one and passes); `control.serving.asgi` answers any
  other with a 400 Status, on every path (API, dashboard, websockets).
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

from django.conf import settings
from django.http.request import split_domain_port, validate_host

LOCAL_NAMES = ("localhost", ".localhost", "127.0.0.1", "[::1]")


def configured(text: str) -> list[str]:
    """KK_ALLOWED_HOSTS's names."""
    return [name.strip() for name in text.split(",") if name.strip()]


def _literal(host: str) -> str:
    """How a host appears in a Host header (IPv6 in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def machine_names() -> list[str]:
    """The names and address others reach this machine by (for a server bound to every interface)."""
    names = [socket.gethostname()]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # a UDP "connect" sends nothing: it picks the outgoing address
            names.append(probe.getsockname()[0])
        except OSError:
            pass
    return [n for n in names if n]


def for_bind_address(host: str, current: list[str]) -> list[str]:
    """`current` plus what serving on `host` adds: the host itself, and for an unspecified address
    (0.0.0.0, ::) the machine's name and primary address."""
    added = [_literal(host.strip("[]"))]
    try:
        if ipaddress.ip_address(host.strip("[]")).is_unspecified:
            added += machine_names()
    except ValueError:
        pass
    return list(dict.fromkeys([*current, *added]))


def allow_bind_address(host: str) -> None:
    """Called by the command that knows where the server listens (`runhub --addr`)."""
    settings.ALLOWED_HOSTS = for_bind_address(host, list(settings.ALLOWED_HOSTS))


def host_header(scope: dict[str, Any]) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == b"host":
            return value.decode("latin-1")
    return None


# (Host header, ALLOWED_HOSTS) -> allowed: a room sends a handful of distinct Host headers, and
# Django's parsing and matching cost ~2 % of the hub's CPU asked again on every request. Bounded:
# a client making up names only makes the memo start over.
_DECIDED: dict[tuple[str, tuple[str, ...]], bool] = {}
_DECIDED_MAX = 256


def host_allowed(scope: dict[str, Any]) -> bool:
    host = host_header(scope)
    if host is None:
        return True
    key = (host, tuple(settings.ALLOWED_HOSTS))
    known = _DECIDED.get(key)
    if known is None:
        domain, _ = split_domain_port(host)
        known = bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)
        if len(_DECIDED) >= _DECIDED_MAX:
            _DECIDED.clear()
        _DECIDED[key] = known
    return known
