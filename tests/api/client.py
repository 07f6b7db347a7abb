"""A synchronous in-process client of the hub's ASGI app, for fast API tests (no sockets)."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit

from control.api.app import hub_app, shutdown, startup


def admin_authorization() -> tuple[bytes, bytes]:
    """The header that makes a hand-built ASGI scope the cluster admin's request."""
    from django.conf import settings

    from control.auth.tokenfile import admin_token

    return (b"authorization", f"Bearer {admin_token(settings.DATA_DIR)}".encode())


class Answer:
    def __init__(self, status: int, headers: dict[str, str], content: bytes):
        self.status_code, self.headers, self.content = status, headers, content

    def __getitem__(self, name: str) -> str:
        return self.headers[name.lower()]


class ApiClient:
    """`get/post/put/patch/delete(path, data=..., content_type=..., QUERY_STRING=..., HTTP_X=...)`,
    the call shape of Django's test client, served by `hub_app` on one persistent event loop, which
    starts and stops the hub (feed, CRD follower) as a server's lifespan does."""

    def __init__(self, user_agent: str = "pytest/1.0", token: str | None = None):
        """`token`: the bearer token every request carries (default the cluster admin's; "" for none)."""
        from django.conf import settings

        from control.auth.tokenfile import admin_token

        self.user_agent = user_agent
        self.token = admin_token(settings.DATA_DIR) if token is None else token
        self.runner = asyncio.Runner()
        self.runner.run(startup())

    def close(self) -> None:
        try:
            self.runner.run(shutdown())
        finally:
            self.runner.close()

    def request(self, method: str, path: str, data: bytes | str = b"", content_type: str = "application/json",
                **extra: str) -> Answer:
        parts = urlsplit(path)
        query = extra.pop("QUERY_STRING", parts.query)
        body = data.encode() if isinstance(data, str) else data
        headers = [(b"user-agent", self.user_agent.encode()), (b"host", b"testserver")]
        if self.token and "HTTP_AUTHORIZATION" not in extra:
            headers.append((b"authorization", f"Bearer {self.token}".encode()))
        if body:
            headers += [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
        headers += [(k[5:].replace("_", "-").lower().encode(), v.encode()) for k, v in extra.items() if k.startswith("HTTP_")]
        scope = {"type": "http", "method": method.upper(), "path": parts.path, "query_string": query.encode(),
                 "headers": headers}
        return self.runner.run(self._call(scope, body))

    async def _call(self, scope: dict, body: bytes) -> Answer:
        sent: list[dict] = []
        delivered = False

        async def receive():
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.sleep(3600)

        async def send(message):
            sent.append(message)

        await hub_app(scope, receive, send)
        start = sent[0]
        headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
        return Answer(start["status"], headers, b"".join(m.get("body", b"") for m in sent[1:]))

    def get(self, path: str, data="", content_type="application/json", **extra) -> Answer:
        return self.request("GET", path, data, content_type, **extra)

    def post(self, path: str, data="", content_type="application/json", **extra) -> Answer:
        return self.request("POST", path, data, content_type, **extra)

    def put(self, path: str, data="", content_type="application/json", **extra) -> Answer:
        return self.request("PUT", path, data, content_type, **extra)

    def patch(self, path: str, data="", content_type="application/json", **extra) -> Answer:
        return self.request("PATCH", path, data, content_type, **extra)

    def delete(self, path: str, data="", content_type="application/json", **extra) -> Answer:
        return self.request("DELETE", path, data, content_type, **extra)

    def add_node_at(self, name: str, address: str, kubelet_port: int) -> None:
        """Create Node `name` whose kubelet answers at `address:kubelet_port` (what the hub dials)."""
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}
        assert self.post("/api/v1/nodes", json.dumps(node)).status_code == 201
        node["status"] = {"addresses": [{"type": "InternalIP", "address": address}],
                          "daemonEndpoints": {"kubeletEndpoint": {"Port": kubelet_port}}}
        node["metadata"]["resourceVersion"] = json.loads(self.get(f"/api/v1/nodes/{name}").content)["metadata"][
            "resourceVersion"]
        assert self.put(f"/api/v1/nodes/{name}/status", json.dumps(node)).status_code == 200
