"""A stand-in for the hub in the dashboard's unit tests: a real loopback HTTP server (on its own
thread and event loop, framed by the node servers' `control.client.serving`) that answers the few
paths the dashboard uses from canned objects and a canned version log, and records every request.
The dashboard reaches it with its production client; `running(fake)` points KK_HUB_URL at it."""

from __future__ import annotations

import asyncio
import json
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator
from urllib.parse import parse_qs, urlsplit

from control.client.framing import header
from control.client.resources import ALL, Resource
from control.client.serving import Exchange, NodeServer, Request


def pod(name: str, *, node: str = "node-1", phase: str = "Running", ready: bool = True) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                       "containerStatuses": [{"name": "c", "restartCount": 0, "state": {"running": {}}}]}}


def status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


# What the fake hub's discovery lists by default: the client's built-in kinds and a few more a
# manifest may hold (the dashboard must find them from discovery, not from a list of its own).
SERVED = (*ALL, Resource("", "v1", "secrets", "Secret"), Resource("", "v1", "serviceaccounts", "ServiceAccount"),
          Resource("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler"),
          Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition",
                   namespaced=False))


def discovery(served: list[Resource], path: str) -> dict[str, Any] | None:
    """The discovery document at `path` for these resources (None: not a discovery path, or not served)."""
    versions: dict[str, list[Resource]] = {}
    for resource in served:
        versions.setdefault(resource.api_version, []).append(resource)
    if path == "/api":
        return {"kind": "APIVersions", "versions": sorted({r.version for r in served if not r.group})}
    if path == "/apis":
        groups: dict[str, list[str]] = {}
        for resource in served:
            if resource.group and resource.version not in groups.setdefault(resource.group, []):
                groups[resource.group].append(resource.version)
        return {"kind": "APIGroupList", "groups": [
            {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in vs]} for g, vs in groups.items()]}
    api_version = path.removeprefix("/api/") if path.startswith("/api/") else path.removeprefix("/apis/")
    if path.startswith(("/api/", "/apis/")) and api_version in versions:
        entries = []
        for r in versions[api_version]:
            entries += [{"name": r.plural, "namespaced": r.namespaced, "kind": r.kind, "verbs": ["get", "patch"]},
                        {"name": f"{r.plural}/status", "namespaced": r.namespaced, "kind": r.kind, "verbs": ["get"]}]
        return {"kind": "APIResourceList", "groupVersion": api_version, "resources": entries}
    return None


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    content_type: str
    body: Any
    agent: str
    authorization: str = ""


@dataclass
class FakeHub:
    revision: int = 10
    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    log: list[dict[str, Any]] = field(default_factory=list)  # change lines, revision order
    compacted_through: int = 0
    answers: dict[tuple[str, str], tuple[int, Any]] = field(default_factory=dict)
    # answers that are not one JSON document (NDJSON streams, text): (code, bytes, content type)
    raw: dict[tuple[str, str], tuple[int, bytes, str]] = field(default_factory=dict)
    requests: list[Seen] = field(default_factory=list)
    connections: int = 0  # TCP connections the dashboard opened to it
    served: list[Resource] = field(default_factory=lambda: list(SERVED))  # what discovery lists
    at: dict[int, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)  # objects at a past revision

    def change(self, kind: str, obj: dict[str, Any], revision: int, *, type_: str = "ADDED",
               actor: str = "kubectl") -> None:
        meta = obj["metadata"]
        self.log.append({"type": type_, "revision": revision, "resource": kind, "group": "",
                         "namespace": meta.get("namespace", ""), "name": meta["name"], "actor": actor,
                         "object": obj})

    async def answer(self, request: Request, exchange: Exchange) -> None:
        url = urlsplit(request.target)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        body = json.loads(request.body) if request.body else None
        path, method = url.path, request.method
        self.requests.append(Seen(method, path, query, header(request.headers, b"content-type"), body,
                                  header(request.headers, b"user-agent"),
                                  header(request.headers, b"authorization") or ""))
        if (method, path) in self.raw:
            code, content, content_type = self.raw[(method, path)]
            return await exchange.respond(code, content_type, content)
        if (method, path) in self.answers:
            code, answer = self.answers[(method, path)]
            return await exchange.respond(code, "application/json", json.dumps(answer).encode())
        listed = discovery(self.served, path) if method == "GET" else None
        if listed is not None:
            return await exchange.respond(200, "application/json", json.dumps(listed).encode())
        if path == "/kubekitchen/snapshot":
            code, snapshot = self._snapshot(query.get("resourceVersion", ""))
            return await exchange.respond(code, "application/json", json.dumps(snapshot).encode())
        if path == "/kubekitchen/changes" and "watch" not in query:
            code, page = self._changes_page(int(query["resourceVersion"]), int(query.get("limit") or 1000))
            return await exchange.respond(code, "application/json", json.dumps(page).encode())
        if path == "/kubekitchen/changes":
            await exchange.start(200, "application/json")
            async for line in self._changes(int(query.get("resourceVersion") or self.revision)):
                await exchange.send(line)
            return await exchange.end()
        await exchange.respond(404, "application/json", json.dumps(status(404, "NotFound", f"{path} not found")).encode())

    def window(self) -> dict[str, int]:
        return {"oldest": self.compacted_through, "newest": self.revision}

    def _snapshot(self, requested: str) -> tuple[int, dict[str, Any]]:
        """The snapshot, or (with a revision) the objects of `at` at that revision, as the hub answers."""
        if requested == "":
            return 200, {"revision": self.revision, "window": self.window(), "objects": self.objects}
        revision = int(requested)
        if revision < self.compacted_through:
            return 410, status(410, "Expired", f"too old resource version: {revision} ({self.compacted_through})")
        return 200, {"revision": revision, "window": self.window(), "time": 1000.0 + revision,
                     "objects": self.at.get(revision, self.objects)}

    def _changes_page(self, after: int, limit: int) -> tuple[int, dict[str, Any]]:
        if after < self.compacted_through:
            return 410, status(410, "Expired", f"too old resource version: {after} ({self.compacted_through})")
        later = [{**line, "time": 1000.0 + line["revision"]} for line in self.log if line["revision"] > after]
        page = later[:limit]
        return 200, {"revision": page[-1]["revision"] if page else after, "window": self.window(),
                     "more": len(later) > limit, "items": page}

    async def _changes(self, after: int):
        if after < self.compacted_through:
            gone = status(410, "Expired", f"too old resource version: {after} ({self.compacted_through})")
            yield (json.dumps({"type": "ERROR", "object": gone}) + "\n").encode()
            return
        for line in self.log:
            if line["revision"] > after:
                yield (json.dumps(line) + "\n").encode()
        await asyncio.Event().wait()  # a watch stays open (until the client leaves or the server stops)

    def writes(self) -> list[Seen]:
        """Requests that would store something (not GETs, not dry runs)."""
        return [r for r in self.requests if r.method != "GET" and r.query.get("dryRun") != "All"]


class _Server(NodeServer):
    def __init__(self, fake: FakeHub):
        self.fake = fake

    def admits(self, request: Request) -> bool:
        return True  # it stands in for the hub, which authenticates its callers itself: not a node server

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.fake.connections += 1
        await super().handle(reader, writer)

    async def answer(self, request: Request, exchange: Exchange) -> None:
        await self.fake.answer(request, exchange)


@contextmanager
def running(fake: FakeHub) -> Iterator[str]:
    """Serve `fake` on a loopback port from a thread of its own; yields its base URL."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="fake-hub", daemon=True)
    thread.start()
    server = _Server(fake)
    try:
        port = asyncio.run_coroutine_threadsafe(server.start("127.0.0.1", 0), loop).result(10)
        yield f"http://127.0.0.1:{port}"
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
