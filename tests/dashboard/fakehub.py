"""A stand-in for the hub in the dashboard's unit tests: an httpx transport that answers the few
paths the dashboard uses from canned objects and a canned version log, and records every request."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import httpx


def pod(name: str, *, node: str = "node-1", phase: str = "Running", ready: bool = True) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                       "containerStatuses": [{"name": "c", "restartCount": 0, "state": {"running": {}}}]}}


def status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    content_type: str
    body: Any
    agent: str


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

    def change(self, kind: str, obj: dict[str, Any], revision: int, *, type_: str = "ADDED",
               actor: str = "kubectl") -> None:
        meta = obj["metadata"]
        self.log.append({"type": type_, "revision": revision, "resource": kind, "group": "",
                         "namespace": meta.get("namespace", ""), "name": meta["name"], "actor": actor,
                         "object": obj})

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    async def handle(self, request: httpx.Request) -> httpx.Response:
        query = {k: v[-1] for k, v in parse_qs(request.url.query.decode(), keep_blank_values=True).items()}
        body = json.loads(request.content) if request.content else None
        path = request.url.path
        self.requests.append(Seen(request.method, path, query, request.headers.get("content-type", ""), body,
                                  request.headers.get("user-agent", "")))
        if (request.method, path) in self.raw:
            code, content, content_type = self.raw[(request.method, path)]
            return httpx.Response(code, content=content, headers={"Content-Type": content_type})
        if (request.method, path) in self.answers:
            code, answer = self.answers[(request.method, path)]
            return httpx.Response(code, json=answer)
        if path == "/kubekitchen/snapshot":
            return httpx.Response(200, json={"revision": self.revision, "objects": self.objects})
        if path == "/kubekitchen/changes":
            return httpx.Response(200, content=self._changes(int(query.get("resourceVersion") or self.revision)))
        return httpx.Response(404, json=status(404, "NotFound", f"{path} not found"))

    async def _changes(self, after: int):
        if after < self.compacted_through:
            gone = status(410, "Expired", f"too old resource version: {after} ({self.compacted_through})")
            yield (json.dumps({"type": "ERROR", "object": gone}) + "\n").encode()
            return
        for line in self.log:
            if line["revision"] > after:
                yield (json.dumps(line) + "\n").encode()
        await asyncio.Event().wait()  # a watch stays open

    def writes(self) -> list[Seen]:
        """Requests that would store something (not GETs, not dry runs)."""
        return [r for r in self.requests if r.method != "GET" and r.query.get("dryRun") != "All"]
