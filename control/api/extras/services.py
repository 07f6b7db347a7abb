"""Services at work, through the hub: cluster DNS, traffic sent through a node's kube-proxy, and
that kube-proxy's forwarding rules.

Routes (under /kubekitchen):
- `GET resolve?name=<name>&namespace=<ns>[&node=<node>&source=<pod IP>]` -> 200 the DNS answer
  (`control.kinds.dns`, from the stored Services and Endpoints); NXDOMAIN -> 404 NotFound; bad
  input -> 400. With a source, the node's kube-proxy first decides the query (`GET /decide`, UDP 53
  to the cluster DNS Service, DNAT then filter as for any Service): a query a NetworkPolicy drops
  answers 200 `{"dropped": {...}}` (the querying pod hears nothing); a kube-proxy that cannot be
  reached decides nothing (the name is answered).
- `POST traffic?node=<node>&target=<name|clusterIP>&namespace=&count=&port=&interval=&source=&path=&host=` -> the
  node's kube-proxy `POST /send` streamed through line by line (application/x-ndjson); every
  request line is also published as a traffic record `{"type": "service.request", ...line}` on
  the channel layer group `kk.traffic` (names from `control.protocol`), so every dashboard draws which pod answered (the line's own
  `seq` is kept as `index`, since records carry the hub's sequence number in `seq`).
- `GET proxyrules?node=<node>[&format=text][&service=ns/name]` -> the node's kube-proxy `/rules`.

Who may send traffic: a node (the `kubekitchen:node-network` rule on the path; with authentication
off, everyone), or anyone else as upstream's service proxy lets them: `create` on the
`services/proxy` of the Service the target names (`control.auth.requestinfo.service_proxy_attributes`;
edit and admin hold it in their namespace). Such a run (`gate.sends_as_service_proxy`) names its
target by a Service name, never an address; it is sent with that Service's namespace and kube-proxy's
`namespaceOnly`, so no request of it reaches another namespace (not through a DNS name, nor an
ExternalName Service pointing out of it: upstream's proxy never follows one); and it is bounded
(`PERSON_MAX_COUNT` requests, one at most every `PERSON_MIN_INTERVAL_MS`, over at most
`PERSON_MAX_RUN_SECONDS`; beyond: 400), so one person's runs cannot hold the hub; how many run at
once is bounded by their flow's seats (`control.api.fairness`). Its traffic records are scoped to
that namespace (`request_record`), so other viewers see them only as far as they may list its Services.

Who may name a `source` (the pod the traffic comes from, whose NetworkPolicies kube-proxy applies):
only the node itself (`system:node:<node>`; with authentication off, anyone, everyone being
system:masters), and only the IP of a pod of that node that is not finished and not on the host's
network; anything else is 403 Forbidden, so no one can send as another pod.

Guarantees: the hub finds a kube-proxy as it finds a kubelet (the Node's InternalIP; the port
kube-proxy advertises in the Node annotation `kubekitchen.dev/kube-proxy-port`, else
KUBE_PROXY_PORT), through `control.api.node_address` (outside the node network: 400, nothing
contacted; answers read up to a bound); an unknown node is 404, an unreachable kube-proxy 503, kube-proxy's own refusal
of bad parameters 400 — each a Kubernetes Status, never a hang or a 500.
"""

from __future__ import annotations

import ipaddress
import json
import re
import uuid
from typing import Any, AsyncIterator

import httpx

from control import auth, errors, protocol
from control.auth import gate, requestinfo
from control.clock import REAL as clock
from control.storage import store
from control.api import node_address, traffic
from control.storage.db import run_db
from control.api.request import Route
from control.api.responses import Reply, Stream, json_response
from control.kinds import dns
from control.kinds.base import DNS1123_LABEL, DNS1123_SUBDOMAIN
from control.kinds.network import CLUSTER_DNS

METHODS = {"resolve": "GET", "traffic": "POST", "proxyrules": "GET"}
# Where kube-proxy says it listens when KUBE_PROXY_PORT was taken (control/proxy/proxy.py writes it).
SEND_PARAMS = ("target", "namespace", "port", "count", "interval", "source", "path", "host")
DNS_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?\.?$")
CONNECT_TIMEOUT = 5.0
LINE_TIMEOUT = 60.0  # the longest wait for the next answer of a traffic run
# A run sent through a Service's proxy (a person's, not a node's): the traffic form's and lesson 11's
# largest (dashboard.network.MAX_COUNT), at most 20 requests a second, over at most five minutes.
PERSON_MAX_COUNT = 1000
PERSON_MIN_INTERVAL_MS = 50
PERSON_MAX_RUN_SECONDS = 300
DEFAULT_INTERVAL_MS = 100  # kube-proxy's (control.proxy.send.SendPlan)


async def serve(request: Any, what: str) -> Reply | Stream:
    """One /kubekitchen/<what> request (`what` in METHODS)."""
    if request.method not in ({"GET", "HEAD"} if METHODS[what] == "GET" else {"POST"}):
        raise errors.MethodNotAllowed(f"the server does not allow {request.method} on /kubekitchen/{what}")
    request.tag = {"verb": "get" if METHODS[what] == "GET" else "create", "resource": what}
    if what == "resolve":
        return await resolve(request.query, getattr(request, "user", None))
    if what == "traffic":
        return await send_traffic(request.query, request.actor, request.user)
    return await proxy_rules(request.query)


ROUTES = (Route(r"/kubekitchen/(?P<what>resolve|traffic|proxyrules)", serve, None),)


# --- resolve ---------------------------------------------------------------------------------

def _lookup(resource: str):
    def get(namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return store.object_get(resource=resource, namespace=namespace, name=name)
        except errors.NotFound:
            return None
    return get


def _answer(name: str, namespace: str) -> dict[str, Any]:
    try:
        answer = dns.resolve(name, namespace, services=_lookup("/services"), endpoints=_lookup("/endpoints"))
    except dns.NameNotFound as exc:
        raise errors.NotFound(str(exc), details={"name": name, "kind": "services"}) from None
    return answer.to_dict()


async def resolve(query: dict[str, str], user: Any = None) -> Reply:
    name, namespace = query.get("name", "").strip(), query.get("namespace", "default") or "default"
    if not name:
        raise errors.BadRequest("name is required: /kubekitchen/resolve?name=<service>[&namespace=<namespace>]")
    if len(name) > 253 or not DNS_NAME.match(name):
        raise errors.BadRequest(f"name: Invalid value: {errors.go_value(name)}: not a DNS name")
    if not DNS1123_LABEL.match(namespace):
        raise errors.BadRequest(f"namespace: Invalid value: {errors.go_value(namespace)}: not a namespace name")
    if query.get("source"):
        node = _node_name(query)
        await check_source(node, query["source"], user)
        verdict = await _dns_verdict(node, query["source"])
        if verdict.get("dropped"):
            return json_response({"dropped": verdict["dropped"]})
    return json_response(await run_db(_answer, name, namespace))


async def _dns_verdict(node: str, source: str) -> dict[str, Any]:
    """The node's kube-proxy's verdict on a DNS query from `source` ({} when it cannot say)."""
    proxy = await _proxy(node)
    params = {"target": CLUSTER_DNS, "port": "53", "protocol": "UDP", "source": source, "namespace": "kube-system"}
    try:
        async with node_address.client(httpx.Timeout(10.0, connect=CONNECT_TIMEOUT)) as client:
            async with client.stream("GET", proxy.url("/decide"), params=params) as upstream:
                content = await node_address.read_bounded(upstream, 64 * 1024)
        answer = json.loads(content) if upstream.status_code == 200 else {}
    except (httpx.HTTPError, node_address.AnswerTooLarge, ValueError):
        return {}
    return answer if isinstance(answer, dict) else {}


# --- who may name a source -------------------------------------------------------------------

FINISHED = ("Succeeded", "Failed")


def _pod_of_node(node: str, ip: str) -> bool:
    """Whether a pod of `node` that is running (not finished, not on the host's network) has `ip`."""
    bodies, _ = store.object_list(resource="/pods")
    needle = json.dumps(ip)
    for body in bodies:
        if needle not in body:  # most pods never mention the address: no decoding for them
            continue
        pod = json.loads(body)
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        if status.get("podIP") == ip and spec.get("nodeName") == node and not spec.get("hostNetwork") \
                and status.get("phase") not in FINISHED:
            return True
    return False


async def check_source(node: str, source: str, user: Any) -> None:
    """403 unless `user` is the node itself and `source` the IP of one of its running pods."""
    try:
        ipaddress.ip_address(source)
    except ValueError:
        raise errors.BadRequest(f"source: Invalid value: {errors.go_value(source)}: must be a pod IP") from None
    name = getattr(user, "name", "")
    if auth.enabled() and (name != f"system:node:{node}" or "system:nodes" not in getattr(user, "groups", ())):
        raise errors.Forbidden(f'User "{name}" cannot send traffic as a pod of node "{node}": only the node itself '
                               "may name a source")
    if not await run_db(_pod_of_node, node, source):
        raise errors.Forbidden(f'source {source} is not the address of a running pod of node "{node}"')


# --- reaching a node's kube-proxy ------------------------------------------------------------

def _node_name(query: dict[str, str]) -> str:
    node = query.get("node", "")
    if not node:
        raise errors.BadRequest("node is required")
    if len(node) > 253 or not DNS1123_SUBDOMAIN.match(node):
        raise errors.BadRequest(f"node: Invalid value: {errors.go_value(node)}: not a node name")
    return node


def _node(name: str) -> dict[str, Any]:
    return store.object_get(resource="/nodes", namespace="", name=name)


async def _proxy(node_name: str) -> node_address.NodeTarget:
    """The node's kube-proxy, checked by the one gate to nodes (400 outside the node network)."""
    return node_address.kube_proxy(await run_db(_node, node_name), node_name)


def _refusal(node: str, status: int, body: bytes) -> errors.ApiError:
    """kube-proxy's non-200 answer as a Status: its 400 stays a 400, anything else is a 503."""
    try:
        message = json.loads(body).get("error") or ""
    except (ValueError, AttributeError):
        message = body.decode(errors="replace").strip()
    if status == 400:
        return errors.BadRequest(message or "kube-proxy refused the request")
    return errors.ServiceUnavailable(f"the kube-proxy of node {node} answered {status}: {message}".rstrip(": "))


# --- traffic ---------------------------------------------------------------------------------

def request_record(line: dict[str, Any], *, who: str, node: str, run: str, user: str = "",
                   namespace: str = "default", source: str = "") -> dict[str, Any]:
    """The traffic record of one answered request, as the dashboard draws it; like every record it
    names its `user` and its `scope`: the Service's namespace (from the line's `ns/name`), or for a
    request sent to a pod IP the answering pod's (`podNamespace`) and resource "pods". A request a
    pod sent names that pod's IP as `source` (the dashboard draws its line from the pod's chip)."""
    record = {**line, "type": protocol.RECORD_SERVICE_REQUEST, "who": who, "node": node, "run": run, "ts": clock.now()}
    if source:
        record["source"] = source
    record["index"] = record.pop("seq", None)
    service = str(line.get("service") or "")
    record["user"] = user
    if not service and line.get("podNamespace"):
        record["scope"] = {"namespace": str(line["podNamespace"]), "group": "", "resource": "pods"}
    else:
        record["scope"] = {"namespace": service.partition("/")[0] if "/" in service else namespace, "group": "",
                           "resource": "services"}
    return record


def _whole_number(query: dict[str, str], name: str, default: int) -> int:
    raw = query.get(name, "")
    if raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise errors.BadRequest(f"{name}: Invalid value: {errors.go_value(raw)}: must be a whole number") from None


def person_run(query: dict[str, str]) -> dict[str, str]:
    """kube-proxy's parameters for a run sent through a Service's proxy: the namespace it was
    authorized in (the target's DNS name's, else the `namespace` parameter), `namespaceOnly`, and
    the person's bounds checked (400 beyond them)."""
    attrs = requestinfo.service_proxy_attributes("POST", requestinfo.TRAFFIC_PATH, query)
    if attrs is None:  # the gate let it in by this question only: it cannot be None here
        raise errors.Forbidden("only a node may send traffic to an address or as a pod")
    if not DNS1123_LABEL.match(attrs.namespace):
        raise errors.BadRequest(f"namespace: Invalid value: {errors.go_value(attrs.namespace)}: not a namespace name")
    count = _whole_number(query, "count", 1)
    interval = _whole_number(query, "interval", DEFAULT_INTERVAL_MS)
    if not 1 <= count <= PERSON_MAX_COUNT:
        raise errors.BadRequest(f"count: Invalid value: {count}: must be between 1 and {PERSON_MAX_COUNT} "
                                "for a run sent through a Service's proxy")
    if interval < PERSON_MIN_INTERVAL_MS or count * interval > PERSON_MAX_RUN_SECONDS * 1000:
        raise errors.BadRequest(f"interval: Invalid value: {interval}: must be at least {PERSON_MIN_INTERVAL_MS} ms "
                                f"and count × interval at most {PERSON_MAX_RUN_SECONDS} s for a run sent through a "
                                "Service's proxy")
    return {"namespace": attrs.namespace, "count": str(count), "interval": str(interval), "namespaceOnly": "true"}


async def send_traffic(query: dict[str, str], actor: str, user: Any = None) -> Stream:
    node = _node_name(query)
    if not query.get("target"):
        raise errors.BadRequest("target is required: a Service name or a cluster IP")
    if query.get("source"):
        await check_source(node, query["source"], user)
    params = {k: query[k] for k in SEND_PARAMS if query.get(k, "") != ""}
    if user is not None and await gate.sends_as_service_proxy(user, "POST", requestinfo.TRAFFIC_PATH, query):
        params.update(person_run(query))
    proxy = await _proxy(node)
    client = node_address.client(httpx.Timeout(LINE_TIMEOUT, connect=CONNECT_TIMEOUT))
    try:
        upstream = await client.send(client.build_request("POST", proxy.url("/send"), params=params), stream=True)
    except httpx.HTTPError as exc:
        await client.aclose()
        raise errors.ServiceUnavailable(f"cannot reach the kube-proxy of node {node}: {exc}") from None
    if upstream.status_code != 200:
        try:
            body = await node_address.read_bounded(upstream, 64 * 1024)
        except (node_address.AnswerTooLarge, httpx.HTTPError):
            body = b""
        await upstream.aclose()
        await client.aclose()
        raise _refusal(node, upstream.status_code, body)
    run = uuid.uuid4().hex[:12]
    user_name = user.name if user is not None else ""

    async def lines() -> AsyncIterator[bytes]:
        try:
            async for text in node_address.bounded_lines(upstream):
                if not text.strip():
                    continue
                try:
                    line = json.loads(text)
                except ValueError:
                    line = None
                if isinstance(line, dict) and not line.get("done"):
                    traffic.publish(request_record(line, who=actor, node=node, run=run, user=user_name,
                                                   namespace=params.get("namespace") or "default",
                                                   source=query.get("source") or ""))
                yield text.encode() + b"\n"
        except (httpx.HTTPError, node_address.AnswerTooLarge) as exc:  # kube-proxy went away or rambled: say so
            yield json.dumps({"done": True, "error": f"the kube-proxy of node {node} stopped answering: {exc}"}).encode() + b"\n"
        finally:
            await upstream.aclose()
            await client.aclose()

    return Stream(lines(), content_type="application/x-ndjson")


# --- rules -----------------------------------------------------------------------------------

async def proxy_rules(query: dict[str, str]) -> Reply:
    node = _node_name(query)
    proxy = await _proxy(node)
    params = {k: query[k] for k in ("format", "service") if query.get(k)}
    try:
        async with node_address.client(httpx.Timeout(10.0, connect=CONNECT_TIMEOUT)) as client:
            async with client.stream("GET", proxy.url("/rules"), params=params) as upstream:
                content = await node_address.read_bounded(upstream)
    except httpx.HTTPError as exc:
        raise errors.ServiceUnavailable(f"cannot reach the kube-proxy of node {node}: {exc}") from None
    except node_address.AnswerTooLarge as exc:
        raise errors.ServiceUnavailable(f"the kube-proxy of node {node} answered too much: {exc}") from None
    if upstream.status_code != 200:
        raise _refusal(node, upstream.status_code, content)
    if params.get("format") == "text":
        return Reply(200, content, "text/plain; charset=utf-8")
    return Reply(200, content, "application/json")
