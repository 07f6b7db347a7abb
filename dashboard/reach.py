"""Where attendees can reach this hub: the address the join QR code and the kubeconfig one-liner
carry, and whether there is one at all.

Guarantees:
- `bind_host()` is where the hub listens (`settings.KK_BIND_HOST`, set by `runhub --addr`; empty
  when unknown, e.g. under the test client).
- `loopback_only()` is True when the hub listens on a loopback address only (127.0.0.0/8, ::1,
  localhost): no other machine can reach it, and the join panel says so and how to start on the LAN.
- `absolute(request, path)` is `path` on the address others use: when the hub listens on every
  address (0.0.0.0 or ::) and the page was opened on a loopback name, the machine's LAN address
  (`lan_address()`) with the port the browser used; otherwise the address the browser used.
- `lan_address()` finds the machine's outgoing IPv4 address without contacting anything: a UDP
  socket's connect() sends no packet, it only picks the route (to a TEST-NET address, RFC 5737);
  "" when there is no route.
"""

from __future__ import annotations

import ipaddress
import socket

from django.conf import settings
from django.http import HttpRequest
from django.http.request import split_domain_port

NO_PACKET_SENT_TO = ("192.0.2.1", 9)  # TEST-NET-1: routable in principle, never contacted


def bind_host() -> str:
    return str(getattr(settings, "KK_BIND_HOST", "") or "").strip("[]")


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None  # a name


def is_loopback(host: str) -> bool:
    address = _address(host)
    return address.is_loopback if address else host == "localhost" or host.endswith(".localhost")


def is_every_address(host: str) -> bool:
    address = _address(host)
    return bool(address and address.is_unspecified)


def loopback_only() -> bool:
    host = bind_host()
    return bool(host) and is_loopback(host)


def every_address() -> bool:
    host = bind_host()
    return bool(host) and is_every_address(host)


def lan_address() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(NO_PACKET_SENT_TO)
            address = probe.getsockname()[0]
        except OSError:
            return ""
    return "" if address.startswith("127.") or address == "0.0.0.0" else address


def absolute(request: HttpRequest, path: str) -> str:
    host, port = split_domain_port(request.get_host())
    if every_address() and is_loopback(host):
        lan = lan_address()
        if lan:
            return f"{request.scheme}://{lan}:{port or request.get_port()}{path}"
    return request.build_absolute_uri(path)
