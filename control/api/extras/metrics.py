"""metrics.k8s.io/v1beta1 on the hub: NodeMetrics and PodMetrics as metrics-server serves them, so
`kubectl top nodes|pods` and the horizontal pod autoscaler work.

Guarantees:
- Paths: `/apis/metrics.k8s.io/v1beta1/nodes[/<name>]`, `.../pods` (every namespace),
  `.../namespaces/<ns>/pods[/<name>]`; verbs get and list only (other methods: 405 Status);
  `labelSelector` (on the Node's or Pod's labels) and `fieldSelector` (metadata.name,
  metadata.namespace) as on any list; unknown names are 404 Statuses worded like metrics-server's.
- Data comes from the `/stats/summary` of every Ready Node's kubelet (its InternalIP and
  `daemonEndpoints.kubeletEndpoint.Port`, when `control.api.node_address` allows them), asked concurrently with a short timeout; a node that
  does not answer in time is left out, never waited on. Scrapes younger than `FRESH_SECONDS` are
  shared by all callers (the dashboard, `kubectl top` and the HPA ask often).
- Items look like metrics-server's: metadata (name, namespace, labels, creationTimestamp = now),
  `timestamp` (when the kubelet measured), `window`, usage with CPU in nanocores ("123456n") and
  memory in KiB ("16384Ki"). A pod is listed only if the store still knows it and every one of its
  running containers has a measurement.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import httpx

from control.clock import REAL as clock
from control import errors
from control.storage import store
from control.storage.db import run_db
from control.api import node_address
from control.api.discovery import View
from control.api.request import Route
from control.api.responses import Reply, json_response
from control.kinds.meta import format_time, is_node_ready
from control.kinds.selectors import SelectorError, parse_field_selector, parse_label_selector

GROUP = "metrics.k8s.io"
VERSION = "v1beta1"
API_VERSION = f"{GROUP}/{VERSION}"
RESOURCES = [
    {"name": "nodes", "singularName": "", "namespaced": False, "kind": "NodeMetrics", "verbs": ["get", "list"]},
    {"name": "pods", "singularName": "", "namespaced": True, "kind": "PodMetrics", "verbs": ["get", "list"]},
]
VIEW = View(GROUP, VERSION, lambda: [dict(entry) for entry in RESOURCES])
SCRAPE_TIMEOUT = 2.0
FRESH_SECONDS = 0.5
NOT_FOUND = errors.NOT_FOUND

Obj = dict[str, Any]


def window_seconds() -> float:
    """The kubelet's CPU window (10 s, or 3 s at the workshop's pace) is what each figure averages over."""
    from control.client.timings import Timings

    return Timings.from_env().cpu_window


# --- scraping the kubelets -------------------------------------------------------------------

def _summary_url(node: Obj) -> str | None:
    """Only a kubelet inside the node network is scraped (`control.api.node_address`)."""
    target = node_address.kubelet_or_none(node)
    return target.url("/stats/summary") if target else None


async def _fetch(client: httpx.AsyncClient, url: str) -> Obj | None:
    try:
        async with client.stream("GET", url) as response:
            if response.status_code != 200:
                return None
            data = json.loads(await node_address.read_bounded(response))
        return data if isinstance(data, dict) else None
    except (httpx.HTTPError, ValueError, node_address.AnswerTooLarge):
        return None


async def scrape(nodes: list[Obj], *, timeout: float = SCRAPE_TIMEOUT) -> dict[str, Obj]:
    """{node name: its kubelet's summary} for the Ready nodes that answered within `timeout`."""
    targets = [(n["metadata"]["name"], _summary_url(n)) for n in nodes if is_node_ready(n)]
    targets = [(name, url) for name, url in targets if url]
    if not targets:
        return {}
    async with node_address.client(httpx.Timeout(timeout)) as client:
        answers = await asyncio.gather(*(_fetch(client, url) for _, url in targets))
    return {name: summary for (name, _), summary in zip(targets, answers) if summary is not None}


def _read_store(namespace: str | None, with_pods: bool) -> tuple[list[Obj], list[Obj]]:
    nodes, _ = store.object_list(resource="/nodes")
    pods, _ = store.object_list(resource="/pods", namespace=namespace) if with_pods else ([], 0)
    return [json.loads(n) for n in nodes], [json.loads(p) for p in pods]


_last: dict[str, Any] = {"at": 0.0, "summaries": None}
_scrape_lock: asyncio.Lock | None = None


async def _summaries(nodes: list[Obj]) -> dict[str, Obj]:
    """One scrape shared by every caller within FRESH_SECONDS (and by callers that wait on it)."""
    global _scrape_lock
    if _scrape_lock is None:
        _scrape_lock = asyncio.Lock()
    async with _scrape_lock:
        if _last["summaries"] is not None and clock.monotonic() - _last["at"] < FRESH_SECONDS:
            return _last["summaries"]
        summaries = await scrape(nodes)
        _last.update(at=clock.monotonic(), summaries=summaries)
        return summaries


# --- shaping the answers ---------------------------------------------------------------------

def cpu_text(nanocores: Any) -> str:
    return f"{max(0, int(nanocores or 0))}n"


def memory_text(size: Any) -> str:
    return f"{max(0, int(size or 0)) // 1024}Ki"


def _window_text(seconds: float) -> str:
    return f"{seconds:g}s"


def _stamp(summary_time: Any, fallback: float) -> str:
    return summary_time if isinstance(summary_time, str) and summary_time else format_time(fallback)


def node_metrics(node: Obj, summary: Obj, now: float, window: float) -> Obj | None:
    usage = summary.get("node") or {}
    cpu, memory = usage.get("cpu") or {}, usage.get("memory") or {}
    if cpu.get("usageNanoCores") is None:
        return None
    meta = node.get("metadata") or {}
    return {"kind": "NodeMetrics", "apiVersion": API_VERSION,
            "metadata": {"name": meta["name"], "creationTimestamp": format_time(now),
                         **({"labels": meta["labels"]} if meta.get("labels") else {})},
            "timestamp": _stamp(cpu.get("time"), now), "window": _window_text(window),
            "usage": {"cpu": cpu_text(cpu.get("usageNanoCores")),
                      "memory": memory_text(memory.get("workingSetBytes"))}}


def pod_metrics(pod: Obj, entry: Obj, now: float, window: float) -> Obj | None:
    containers = []
    stamp = None
    for container in entry.get("containers") or []:
        cpu, memory = container.get("cpu") or {}, container.get("memory") or {}
        if cpu.get("usageNanoCores") is None:
            return None  # metrics-server leaves out a pod with a container it could not measure
        stamp = stamp or cpu.get("time")
        containers.append({"name": container.get("name", ""),
                           "usage": {"cpu": cpu_text(cpu.get("usageNanoCores")),
                                     "memory": memory_text(memory.get("workingSetBytes"))}})
    if not containers:
        return None
    meta = pod.get("metadata") or {}
    return {"kind": "PodMetrics", "apiVersion": API_VERSION,
            "metadata": {"name": meta["name"], "namespace": meta.get("namespace", ""),
                         "creationTimestamp": format_time(now),
                         **({"labels": meta["labels"]} if meta.get("labels") else {})},
            "timestamp": _stamp(stamp, now), "window": _window_text(window), "containers": containers}


def collect(nodes: list[Obj], pods: list[Obj], summaries: dict[str, Obj], *, plural: str, now: float,
            window: float) -> list[Obj]:
    """Every NodeMetrics (plural "nodes") or PodMetrics ("pods") the summaries allow, sorted by key."""
    if plural == "nodes":
        by_name = {n["metadata"]["name"]: n for n in nodes}
        items = [node_metrics(by_name[name], summary, now, window)
                 for name, summary in summaries.items() if name in by_name]
    else:
        known = {(p["metadata"].get("namespace", ""), p["metadata"]["name"]): p for p in pods}
        items = []
        for node_name, summary in summaries.items():
            for entry in summary.get("pods") or []:
                ref = entry.get("podRef") or {}
                pod = known.get((ref.get("namespace", ""), ref.get("name", "")))
                if pod is None or (ref.get("uid") and pod["metadata"].get("uid") not in (None, ref["uid"])):
                    continue
                if (pod.get("spec") or {}).get("nodeName") not in (None, node_name):
                    continue
                items.append(pod_metrics(pod, entry, now, window))
    found = [i for i in items if i is not None]
    return sorted(found, key=lambda i: (i["metadata"].get("namespace", ""), i["metadata"]["name"]))


def _select(items: list[Obj], query: dict[str, str]) -> list[Obj]:
    try:
        labels = parse_label_selector(query.get("labelSelector", ""))
        fields = parse_field_selector(query.get("fieldSelector", ""))
    except SelectorError as exc:
        raise errors.BadRequest(f"unable to parse requirement: {exc}") from None
    for field in fields.fields():
        if field not in ("metadata.name", "metadata.namespace"):
            raise errors.BadRequest(f'field label not supported: {field}')

    def getter(item: Obj):
        return lambda f: (item["metadata"].get(f.split(".", 1)[1], ""))

    return [i for i in items if labels.matches(i["metadata"].get("labels") or {}) and fields.matches(getter(i))]


# --- the HTTP face ---------------------------------------------------------------------------

def _parse(rest: str) -> tuple[str, str | None, str]:
    """(plural, namespace or None for all, name) from the path after /apis/metrics.k8s.io/v1beta1/."""
    parts = [p for p in rest.split("/") if p]
    namespace = None
    if len(parts) >= 3 and parts[0] == "namespaces":
        namespace, parts = parts[1], parts[2:]
        if parts[0] != "pods":
            raise errors.NotFound(NOT_FOUND)
    if not parts or len(parts) > 2 or parts[0] not in ("nodes", "pods") or (parts[0] == "pods" and len(parts) == 2
                                                                            and namespace is None):
        raise errors.NotFound(NOT_FOUND)
    return parts[0], namespace, parts[1] if len(parts) == 2 else ""


async def serve(method: str, version: str, rest: str, query: dict[str, str], tag: dict[str, str]) -> Reply:
    if version != VERSION:
        raise errors.NotFound(NOT_FOUND)
    plural, namespace, name = _parse(rest)
    tag.update({"verb": "get" if name else "list", "resource": f"{plural}.{GROUP}", "namespace": namespace or "",
                "name": name})
    if method not in ("GET", "HEAD"):
        raise errors.MethodNotAllowed("the server does not allow this method on the requested resource")
    nodes, pods = await run_db(_read_store, namespace, plural == "pods")
    summaries = await _summaries(nodes)
    now = clock.now()
    items = collect(nodes, pods, summaries, plural=plural, now=now, window=window_seconds())
    kind = "NodeMetrics" if plural == "nodes" else "PodMetrics"
    if name:
        for item in items:
            if item["metadata"]["name"] == name:
                return json_response(item)
        shown = f"{namespace}/{name}" if namespace else name
        raise errors.NotFound(f'{kind.lower()}.{GROUP} "{shown}" not found',
                              details={"name": shown, "group": GROUP, "kind": plural})
    return json_response({"kind": f"{kind}List", "apiVersion": API_VERSION, "metadata": {},
                          "items": _select(items, query)})


async def serve_request(request: Any, version: str, rest: str) -> Reply:
    return await serve(request.method, version, rest, request.query, request.tag)


ROUTES = (Route(rf"/apis/{re.escape(GROUP)}/(?P<version>[^/]+)/(?P<rest>.+)", serve_request, None),)
