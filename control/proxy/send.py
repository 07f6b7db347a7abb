"""Sending traffic to a Service from one node, as a pod on that node would: resolve the name,
pick an endpoint from kube-proxy's table, and hand the request to the pod's kubelet.

Guarantees:
- Each request reads the proxy's CURRENT table once (`table()`), and resolves, picks and reports
  from that one table: the endpoint is always one of the ready endpoints of the latest Endpoints
  the proxy had seen at that moment, and the answered line carries that Endpoints'
  resourceVersion.
- Names resolve with the cluster DNS rules (`control.kinds.dns.resolve`) against the proxy's own
  informer caches; a ClusterIP or an external IP of a Service is accepted as the target too. An
  ExternalName is followed while it points to a name inside the cluster (at most 5 hops).
- A pod IP (an address no Service has, inside a Node's podCIDR: `pod_node`) goes straight to the
  kubelet of that node (the pod network routes it there, no kube-proxy rule is involved): its
  endpoint has no pod name (`serve_path` asks the kubelet by IP), port `plan.port` or 80, and the
  line names the pod and its namespace (`podNamespace`) from the kubelet's answer, service "".
- A request that cannot be sent (NXDOMAIN, no such port, no ready endpoint, unknown node) is
  still answered, with `"code": 503` and an `"error"`; a kubelet that does not answer gives 503
  with an error too. `SendPlan.parse` turns bad parameters into ValueError (the server's 400).
- With `namespaceOnly=true` (the hub sets it for a run authorized as a Service's proxy, a person's)
  every request stays in the plan's namespace: an address target is not sent (a pod or another
  namespace's Service may have it), nor a request whose name resolves, directly or through an
  ExternalName, to a Service of another namespace (a 503 line saying so, nothing forwarded).
- Requests start `interval` apart (or at once after a slow answer); lines come in order.
- With a `decide` (kube-proxy's NetworkPolicy view), every connection is decided after the
  endpoint is picked (as iptables filters after the DNAT) for the endpoint's address, port and
  the service port's protocol (TCP for a pod IP), from `plan.source` (a pod IP; "" is the node
  itself): a dropped one is never forwarded, its line has `code` 0 and the `dropped` fields, an
  allowed one of an isolated pod `allowedBy` (`control.proxy.policy.line_fields`); one kube-proxy
  cannot decide yet (its pod and namespace caches not synced) is answered 503 and never forwarded.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable
from urllib.parse import quote

from control.clock import REAL, Clock
from control.kinds.dns import Lookup, NameNotFound, resolve
from control.kinds.network import CLUSTER_DOMAIN
from control.proxy.table import Balancer, Endpoint, ServicePort, ServiceRule, Table

Obj = dict[str, Any]
MAX_COUNT = 100_000
MAX_HOPS = 5
# forward(node name, endpoint) -> (status code, decoded JSON body or {})
Forward = Callable[[str, Endpoint, str], Awaitable[tuple[int, Obj]]]
# pod_node(ip) -> the node whose podCIDR holds ip, or None
PodNode = Callable[[str], "str | None"]
# await decide(source ip, endpoint ip, port, protocol) -> the line's policy fields ({} when nothing to
# say; {"refused": why} when it cannot be decided now: the request is answered 503, not sent)
Decide = Callable[[str, str, int, str], Awaitable[Obj]]
HTTP_PORT = 80  # where wget/curl connect when the URL names no port


def _number(query: dict[str, str], name: str, default: float | None, low: float, high: float) -> float | None:
    raw = query.get(name, "")
    if raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, not {raw!r}") from None
    if not low <= value <= high or (value != int(value) and name != "interval"):
        raise ValueError(f"{name} must be between {low:g} and {high:g}, not {raw!r}")
    return value


@dataclass(frozen=True)
class SendPlan:
    target: str
    namespace: str = "default"
    port: int | None = None
    count: int = 1
    interval: float = 0.1  # seconds between request starts
    source: str = ""  # the sending pod's IP ("": the node itself)
    path: str = "/"  # the URL's path, and the Host header, for a host listener (control.proxy.hostports)
    host: str = ""
    namespace_only: bool = False  # no request leaves `namespace` (a person's run, authorized there)

    @classmethod
    def parse(cls, query: dict[str, str]) -> "SendPlan":
        target = query.get("target", "").strip()
        if not target:
            raise ValueError("target is required (a Service's DNS name or its ClusterIP)")
        port = _number(query, "port", None, 1, 65535)
        count = _number(query, "count", 1, 1, MAX_COUNT)
        interval = _number(query, "interval", 100, 0, 60_000)
        assert count is not None and interval is not None
        source = query.get("source", "").strip()
        if source and not _is_ip(source):
            raise ValueError(f"source must be a pod IP, not {source!r}")
        path, host = query.get("path") or "/", query.get("host", "")
        if not path.startswith("/") or len(path) > 2048 or len(host) > 255:
            raise ValueError("path must start with / (at most 2048 characters) and host be at most 255")
        namespace_only = query.get("namespaceOnly", "") in ("1", "true", "True")
        return cls(target, query.get("namespace") or "default", int(port) if port is not None else None,
                   int(count), interval / 1000, source, path, host, namespace_only)


class Unroutable(Exception):
    """This request cannot be sent anywhere (its line gets code 503 and the message)."""


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def find_rule(table: Table, target: str, namespace: str, *, services: Lookup, endpoints: Lookup) -> ServiceRule:
    """The Service a target names, from this table; Unroutable when there is none."""
    if _is_ip(target):
        rule = table.rule_for_ip(target)
        if rule is None:
            raise Unroutable(f"no Service has the address {target}")
        return rule
    name = target
    for _ in range(MAX_HOPS):
        try:
            answer = resolve(name, namespace, services=services, endpoints=endpoints)
        except NameNotFound as exc:
            raise Unroutable(f"NXDOMAIN: {exc}") from None
        if answer.type != "CNAME":
            rule = table.rules.get(answer.service)
            if rule is None:
                raise Unroutable(f"kube-proxy has no rules for {answer.service} yet")
            return rule
        name = answer.records[0] if answer.records else ""
        if not name.rstrip(".").endswith(f".svc.{CLUSTER_DOMAIN}"):
            raise Unroutable(f"{answer.name} is an ExternalName for {name}, outside the cluster")
    raise Unroutable(f"too many ExternalName hops from {target}")


@dataclass(frozen=True)
class Choice:
    rule: ServiceRule | None  # None: a pod IP, no Service involved
    port: ServicePort | None
    endpoint: Endpoint


def choose(table: Table, plan: SendPlan, balancer: Balancer, *, services: Lookup, endpoints: Lookup,
           pod_node: PodNode = lambda ip: None) -> Choice:
    if plan.namespace_only:
        return _choose_within(table, plan, balancer, services=services, endpoints=endpoints)
    if _is_ip(plan.target) and table.rule_for_ip(plan.target) is None:
        node = pod_node(plan.target)
        if node is not None:
            return Choice(None, None, Endpoint(plan.target, plan.port or HTTP_PORT, "", node))
    return _choose_from(find_rule(table, plan.target, plan.namespace, services=services, endpoints=endpoints),
                        plan, balancer)


def _choose_within(table: Table, plan: SendPlan, balancer: Balancer, *, services: Lookup,
                   endpoints: Lookup) -> Choice:
    """`choose` for a run confined to its namespace: a name only, resolved to a Service there."""
    if _is_ip(plan.target):
        raise Unroutable(f"{plan.target} is an address: this run may only name a Service of namespace "
                         f"{plan.namespace}")
    rule = find_rule(table, plan.target, plan.namespace, services=services, endpoints=endpoints)
    if rule.namespace != plan.namespace:
        raise Unroutable(f"{plan.target} leads outside namespace {plan.namespace}")
    return _choose_from(rule, plan, balancer)


def _choose_from(rule: ServiceRule, plan: SendPlan, balancer: Balancer) -> Choice:
    port = rule.port(plan.port)
    if port is None:
        raise Unroutable(f"{rule.key} has no port {plan.port}" if plan.port else f"{rule.key} has no ports")
    endpoint = balancer.choose(f"{rule.key}:{port.name}", rule.endpoints_for(port))
    if endpoint is None:
        raise Unroutable(f"{rule.key} has no ready endpoints")
    return Choice(rule, port, endpoint)


def answer_line(seq: int, plan: SendPlan, node: str, choice: Choice | None, code: int, *, error: str = "",
                rule: ServiceRule | None = None, ms: float | None = None) -> Obj:
    rule = choice.rule if choice else rule
    line: Obj = {"seq": seq, "from": node, "target": plan.target, "service": rule.key if rule else "",
                 "clusterIP": rule.cluster_ip if rule else "", "endpoint": choice.endpoint.address if choice else "",
                 "pod": choice.endpoint.pod if choice else "", "podNode": choice.endpoint.node if choice else "",
                 "code": code, "endpointsResourceVersion": rule.endpoints_rv if rule else ""}
    if error:
        line["error"] = error
    if ms is not None:
        line["ms"] = round(ms, 3)
    return line


async def send(plan: SendPlan, *, node: str, table: Callable[[], Table], balancer: Balancer, services: Lookup,
               endpoints: Lookup, forward: Forward, clock: Clock = REAL,
               pod_node: PodNode = lambda ip: None, decide: Decide | None = None) -> AsyncIterator[Obj]:
    """One line per request as it is answered, then the summary line; paced and timed on `clock`."""
    answered: dict[str, int] = {}
    failed = 0
    start = clock.monotonic()
    for seq in range(plan.count):
        delay = start + seq * plan.interval - clock.monotonic()
        if seq and delay > 0:
            await clock.sleep(delay)
        current = table()  # the one table this request uses
        try:
            choice = choose(current, plan, balancer, services=services, endpoints=endpoints, pod_node=pod_node)
        except Unroutable as exc:
            failed += 1
            yield answer_line(seq, plan, node, None, 503, error=str(exc))
            continue
        decided = await decide(plan.source, choice.endpoint.ip, choice.endpoint.port, protocol_of(choice)) \
            if decide is not None else {}
        if "refused" in decided:  # kube-proxy cannot decide yet: nothing is sent, nothing is decided
            failed += 1
            yield answer_line(seq, plan, node, choice, 503, error=decided["refused"])
            continue
        if "dropped" in decided:
            failed += 1
            line = answer_line(seq, plan, node, choice, 0, error=decided["error"])
            if choice.rule is None:  # a pod IP: the pod the packets were meant for, when it is one
                namespace, _, pod = str(decided["dropped"]["to"]).rpartition("/")
                line["pod"], line["podNamespace"] = pod if namespace else "", namespace
            yield {**line, "dropped": decided["dropped"]}
            continue
        began = clock.monotonic()
        code, body = await forward(choice.endpoint.node, choice.endpoint,
                                   choice.rule.namespace if choice.rule else plan.namespace)
        line = answer_line(seq, plan, node, choice, code, error="" if code == 200 else str(body.get("error") or ""),
                           ms=(clock.monotonic() - began) * 1000)
        if choice.rule is None:  # a pod IP: who answered is the kubelet's to say
            line["pod"], line["podNamespace"] = str(body.get("pod") or ""), str(body.get("namespace") or "")
        if body.get("server"):
            line["server"] = str(body["server"])  # which simulated server answered (wget/curl print its page)
        line.update(decided)
        if code == 200:
            answered[line["pod"]] = answered.get(line["pod"], 0) + 1
        else:
            failed += 1
        yield line
    yield {"done": True, "sent": plan.count, "answered": answered, "failed": failed}


def protocol_of(choice: Choice) -> str:
    """The protocol a connection to this choice uses: the service port's, TCP for a pod IP."""
    return choice.port.protocol if choice.port is not None else "TCP"


def serve_path(endpoint: Endpoint, namespace: str, node: str) -> str:
    """The kubelet's path for one request: by pod name, or by pod IP for an endpoint without one."""
    if not endpoint.pod:
        return f"/serveIP/{quote(endpoint.ip)}?port={endpoint.port}&from={quote(node)}"
    return f"/serve/{quote(namespace)}/{quote(endpoint.pod)}?port={endpoint.port}&from={quote(node)}"
