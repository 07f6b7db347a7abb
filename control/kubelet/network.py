"""The cluster network as a simulated container's shell reaches it, through the hub, the only door:
`NetworkHandle` is the userland's `Network` (`control.userland.network`: nslookup, dig, wget, curl)
for a container on this node. DNS is the hub's `GET /kubekitchen/resolve` for the pod's namespace, a
request is the hub's `POST /kubekitchen/traffic?node=<this node>&count=1`, answered by kube-proxy's
choice of a ready endpoint, so the dashboard draws it. Both name the pod's IP as `source` (when the
pod has one), so that this node's kube-proxy decides them with the NetworkPolicies of the pod and
of the destination; the hub lets only this node name a pod of this node.

Guarantees: a hub that cannot be reached or refuses is an NXDOMAIN (resolve) or a 503 line (send),
never an exception; a DNS query a NetworkPolicy dropped is `{"dropped": {...}}` (not an NXDOMAIN),
a dropped request kube-proxy's line with `dropped`; `response` is what the answering pod's
simulated server gives that URL's path,
the same as port-forward serves (`control.kinds.pod_servers.Listener`: nginx's "Welcome to nginx!" page or its
404, httpd's "It works!", else the JSON `{"pod", "namespace", "node", "podIP", "port"}`), with
`x-kubekitchen-pod: <namespace>/<pod>` naming who answered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from control import errors
from control.client.http import HubClient, HubUnreachable
from control.kinds.pod_servers import REASONS, Listener
from control.userland.network import Response

Obj = dict[str, Any]
MORE_REASONS = {308: b"Permanent Redirect", 500: b"Internal Server Error", 502: b"Bad Gateway",
                503: b"Service Temporarily Unavailable", 504: b"Gateway Time-out"}


@dataclass(frozen=True)
class NetworkHandle:
    """What the shell of a container on `node`, in `namespace`, reaches through the hub."""

    hub: HubClient
    node: str
    namespace: str
    pod_ip: str = ""  # the sending pod's address ("": none known, the request is the node's own)

    async def resolve(self, name: str) -> Obj | None:
        """The DNS answer (`control.kinds.dns.Answer.to_dict`), or None: NXDOMAIN."""
        params: Obj = {"name": name, "namespace": self.namespace}
        if self.pod_ip:
            params.update(node=self.node, source=self.pod_ip)
        try:
            return await self.hub.request("GET", "/kubekitchen/resolve", params=params)
        except (errors.ApiError, HubUnreachable):
            return None

    async def send(self, target: str, port: int | None, path: str = "/", host: str = "") -> Obj:
        """kube-proxy's line for one request (`code` 200 answered, else `error`)."""
        params: Obj = {"node": self.node, "target": target, "namespace": self.namespace, "count": 1}
        if port is not None:
            params["port"] = port
        if self.pod_ip:
            params["source"] = self.pod_ip
        if path != "/":
            params["path"] = path
        if host:
            params["host"] = host
        try:
            async for line in self.hub.stream_lines("POST", "/kubekitchen/traffic", params=params, read_timeout=30):
                if "seq" in line:
                    return line
        except (errors.ApiError, HubUnreachable) as exc:
            return {"code": 503, "error": str(exc)}
        return {"code": 503, "error": "no answer"}

    def answer(self, line: Obj, path: str, now: float) -> Response:
        return response(line, path, now)


def response(line: Obj, path: str, now: float) -> Response:
    """What the answering pod's simulated server sends for `path` (the line kube-proxy reported);
    a listener that answered itself (the front door: `line["response"]`) is printed as it came."""
    given = line.get("response")
    if isinstance(given, dict):
        status = int(given.get("status") or 0)
        headers = [(str(k).encode("latin-1", "replace"), str(v).encode("latin-1", "replace"))
                   for k, v in given.get("headers") or []]
        return Response(status, REASONS.get(status) or MORE_REASONS.get(status, b""), headers,
                        str(given.get("body") or "").encode())
    endpoint = str(line.get("endpoint") or "")
    ip, _, port = endpoint.rpartition(":")
    namespace = str(line.get("podNamespace") or str(line.get("service", "")).split("/")[0])
    flavour = str(line.get("server") or "json")
    listener = Listener(flavour if flavour in ("nginx", "httpd") else "json", str(line.get("pod", "")), namespace,
                        str(line.get("podNode", "")), ip or endpoint, int(port) if port.isdigit() else 0, "")
    status, headers, body = listener.answer("GET", path, now)
    headers = [*headers, (b"content-length", str(len(body)).encode()),
               (b"x-kubekitchen-pod", f"{namespace}/{line.get('pod', '')}".encode())]
    return Response(status, REASONS.get(status, b""), headers, body)
