"""The lesson button that sends guests through a Gateway's front door, as `curl` from this machine
would: `gateway-traffic` reads the Gateway, finds where its listener is served (the address the
gateway controller wrote in `status.addresses` and the port in the annotation
`kubekitchen.dev/listeners`), sends `count` GET requests there (`AT_ONCE` in flight) and sums up which backend Service
answered each (the `x-kubekitchen-backend` header the gateway adds), with its share in percent.

Guarantees: the form is checked before anything is sent (names, 1 ≤ count ≤ `MAX_COUNT`, a path
starting with `/`); requests go only to an IP address the controller itself wrote in the
Gateway's status, at the port named for the listener, and only the gateway's own header is read
from an answer (nothing of a body is shown). A Gateway not served yet is an `ActionError` saying
so; a run where no request was answered by a backend is a refusal (503).
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections import Counter
from typing import Any

import httpx

from control.client.http import HubClient
from control.client.resources import Resource
from dashboard.actions import NAME, ActionError, Answer, form_int

GATEWAYS = Resource("gateway.networking.k8s.io", "v1", "gateways", "Gateway")
LISTENERS = "kubekitchen.dev/listeners"  # "http=127.0.0.1:30080,...", written by the gateway controller
MAX_COUNT = 1000
AT_ONCE = 8  # guests in flight at once
TIMEOUT = 5.0


class Refused(Answer):
    def __new__(cls, line: str, code: int) -> "Refused":
        refused = super().__new__(cls, line)
        refused.code = code
        return refused


def _name(form: dict[str, str], field: str) -> str:
    value = (form.get(field) or "").strip()
    if not NAME.match(value):
        raise ActionError(f"{field}: {value!r} is not a valid name")
    return value


def listener_address(gateway: dict[str, Any], listener: str = "") -> str | None:
    """"host:port" of the listener (the first one when unnamed), only at an address in the status."""
    meta = gateway.get("metadata") or {}
    served = dict(part.split("=", 1) for part in ((meta.get("annotations") or {}).get(LISTENERS) or "").split(",")
                  if "=" in part)
    where = served.get(listener) if listener else next(iter(served.values()), None)
    if not where or ":" not in where:
        return None
    host, _, port = where.rpartition(":")
    addresses = {a.get("value") for a in (gateway.get("status") or {}).get("addresses") or [] if isinstance(a, dict)}
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return None
    return where if host in addresses and port.isdigit() and 0 < int(port) < 65536 else None


async def gateway_traffic(client: HubClient, form: dict[str, str]) -> str:
    namespace, name = _name(form, "namespace"), _name(form, "gateway")
    listener = (form.get("listener") or "").strip()
    count = form_int(form, "count", default="100", low=1, high=MAX_COUNT)
    path = (form.get("path") or "/").strip()
    if not path.startswith("/") or any(c.isspace() for c in path):
        raise ActionError(f"path: {path!r} must start with /")
    gateway = await client.get(GATEWAYS, name, namespace)
    where = listener_address(gateway, listener)
    if where is None:
        raise ActionError(f"gateway/{name} is not served yet: no address in its status")
    answered: Counter[str] = Counter()
    failed = 0
    guests = iter(range(count))

    async def door(http: httpx.AsyncClient) -> None:
        # a few guests at a time (as many browsers would), so a thousand take seconds, not a minute
        nonlocal failed
        for _ in guests:  # one shared line of guests: each is sent once, by whichever door is free
            try:
                response = await http.get(path)
            except httpx.HTTPError:
                failed += 1
                continue
            backend = response.headers.get("x-kubekitchen-backend", "")
            if response.status_code < 400 and backend:
                answered[backend.rsplit("/", 1)[-1]] += 1
            else:
                failed += 1

    limits = httpx.Limits(max_connections=AT_ONCE, max_keepalive_connections=AT_ONCE)
    async with httpx.AsyncClient(base_url=f"http://{where}", timeout=TIMEOUT, limits=limits) as http:
        await asyncio.gather(*(door(http) for _ in range(min(AT_ONCE, count))))
    shares = ", ".join(f"{backend} {n} ({100 * n / count:.1f}%)" for backend, n in sorted(answered.items()))
    line = f"{count} guest(s) through gateway/{name} at http://{where}{path}: {shares or 'nobody answered'}"
    line += f"; {failed} failed" if failed else ""
    return line if answered else Refused(line, 503)
