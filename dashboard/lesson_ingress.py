"""The lesson button `front-door`: a guest at the front door, as `curl -H 'Host: HOST'
http://<the Ingress's address>/PATH` from a node does it: the Ingress's address and port are read
from its `status.loadBalancer` (the ingress controller wrote them), then the hub's
`/kubekitchen/traffic` sends `count` requests from the node to that address with the path and Host
header, through the node's kube-proxy (which knows the front door as node-1's host listener), so the
stage draws each answer as it draws Service traffic.

A viewer the hub does not let send traffic from a node (an attendee: `/kubekitchen/traffic` is the
cluster's own) is a guest from this machine instead, as the step's `curl` is: the requests go from
the dashboard straight to the front door, only to the IP address and port the ingress controller
wrote in the Ingress's status (which its editors cannot write), and only the answer's status and
its `x-kubekitchen-pod` header are read.

Guarantees: the form is checked before any request (an `ActionError` names the bad field); an
Ingress without an address yet (or one that is not an IP address) is an `ActionError` saying so; the answer sums up who answered,
by HTTP status: all answered 2xx -> the line; none reached a pod but the front door answered (its
404 default backend, 503 without endpoints) -> a refusal with that code; nobody answered -> 503.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from typing import AsyncIterator

import httpx

from control import errors

from control.client.http import HubClient
from control.client.resources import INGRESSES
from dashboard import hub
from dashboard.actions import NAME, ActionError, Answer, form_int

PATH = re.compile(r"^/[A-Za-z0-9._~/%-]{0,200}$")
MAX_COUNT = 100
TIMEOUT = 10.0  # a request a NetworkPolicy drops hangs the front door's 5 s connect timeout first


class Refused(Answer):
    def __new__(cls, line: str, code: int) -> "Refused":
        refused = super().__new__(cls, line)
        refused.code = code
        return refused


def front_door_params(form: dict[str, str]) -> dict[str, str]:
    fields = {key: (form.get(key) or default).strip() for key, default in
              (("ingress", ""), ("namespace", "default"), ("node", "node-1"), ("host", ""), ("path", "/"))}
    for key in ("ingress", "namespace", "node"):
        if not NAME.match(fields[key]):
            raise ActionError(f"{key}: {fields[key]!r} is not a valid name")
    if fields["host"] and not NAME.match(fields["host"]):
        raise ActionError(f"host: {fields['host']!r} is not a host name")
    if not PATH.match(fields["path"]):
        raise ActionError(f"path: {fields['path']!r} is not a path")
    fields["count"] = str(form_int(form, "count", default="5", low=1, high=MAX_COUNT))
    return fields


def address_of(ingress: dict) -> tuple[str, int] | None:
    entries = ((ingress.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    if not entries or not entries[0].get("ip"):
        return None
    try:
        ip = str(ipaddress.ip_address(str(entries[0]["ip"])))
    except ValueError:
        return None
    ports = entries[0].get("ports") or []
    port = ports[0].get("port") if ports and isinstance(ports[0], dict) else 80
    return (ip, port) if isinstance(port, int) and 0 < port < 65536 else None


def _tally(status: int, pod: str, answered: Counter, statuses: Counter) -> int:
    """Count one answer (its HTTP status, the pod that gave it); 1 when nobody answered."""
    if not status:
        return 1
    statuses[status] += 1
    if 200 <= status < 300:
        answered[pod or "?"] += 1
    return 0


async def _through_the_hub(client: HubClient, params: dict[str, str]) -> AsyncIterator[tuple[int, str]]:
    async for line in hub.stream_lines(client.server, "POST", "/kubekitchen/traffic", params):
        if "seq" in line:
            status = int((line.get("response") or {}).get("status") or 0) if line.get("code") == 200 else 0
            yield status, str(line.get("pod") or "")


async def _from_this_machine(ip: str, port: int, fields: dict[str, str]) -> AsyncIterator[tuple[int, str]]:
    host = f"[{ip}]" if ":" in ip else ip
    headers = {"Host": fields["host"]} if fields["host"] else {}
    async with httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False, trust_env=False) as http:
        for _ in range(int(fields["count"])):
            try:
                answer = await http.get(f"http://{host}:{port}{fields['path']}", headers=headers)
            except httpx.HTTPError:
                yield 0, ""
                continue
            yield answer.status_code, answer.headers.get("x-kubekitchen-pod", "").rpartition("/")[2]


async def front_door(client: HubClient, form: dict[str, str]) -> str:
    fields = front_door_params(form)
    ingress = await client.get(INGRESSES, fields["ingress"], fields["namespace"])
    where = address_of(ingress)
    if where is None:
        raise ActionError(f"ingress {fields['ingress']} has no address yet: the ingress controller writes it "
                          "in status.loadBalancer")
    ip, port = where
    params = {"node": fields["node"], "target": ip, "port": str(port), "path": fields["path"],
              "host": fields["host"], "namespace": fields["namespace"], "count": fields["count"]}
    answered: Counter = Counter()
    statuses: Counter = Counter()
    failed = 0
    try:
        async for status, pod in _through_the_hub(client, params):
            failed += _tally(status, pod, answered, statuses)
    except errors.Forbidden:  # not the viewer's to send from a node: a guest from this machine
        answered.clear()
        statuses.clear()
        failed = 0
        async for status, pod in _from_this_machine(ip, port, fields):
            failed += _tally(status, pod, answered, statuses)
    shown = f"{fields['count']} request(s) to http://{ip}:{port}{fields['path']} (Host: {fields['host'] or ip}): "
    shown += ", ".join(f"{pod} {n}" for pod, n in sorted(answered.items())) or "no pod"
    others = {code: n for code, n in statuses.items() if not 200 <= code < 300}
    if others:
        shown += "; " + ", ".join(f"HTTP {code} × {n}" for code, n in sorted(others.items()))
    if failed:
        shown += f"; {failed} not answered"
    if answered:
        return shown
    return Refused(shown, min(others) if others else 503)
