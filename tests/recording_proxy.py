"""A recording proxy in front of a test hub, for checking what the real kubectl sends.

Guarantees: every request to `RecordingProxy.url` is forwarded to the hub on `upstream_port` (with the
hub's own credentials added) and answered with the hub's answer; each one is kept, in arrival order,
in `requests` as (method, path, content type, body). `close()` stops the server; nothing outlives it.
"""

from __future__ import annotations

import http.client
import http.server
import threading
from typing import Any, NamedTuple

HOP_BY_HOP = ("transfer-encoding", "content-length", "connection")


class Recorded(NamedTuple):
    method: str
    path: str
    content_type: str
    body: bytes


class RecordingProxy:
    def __init__(self, upstream_port: int, auth: dict[str, str]):
        self.requests: list[Recorded] = []
        handler = type("Handler", (_Forwarder,), {"upstream": upstream_port, "auth": auth, "seen": self.requests})
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def bodies(self, *, method: str = "", path_suffix: str = "", content_type: str = "") -> list[bytes]:
        """The bodies of the kept requests that match every given filter."""
        return [r.body for r in self.requests if (not method or r.method == method)
                and r.path.endswith(path_suffix) and content_type in r.content_type]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Forwarder(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    upstream = 0
    auth: dict[str, str] = {}
    seen: list[Recorded] = []

    def _forward(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(size) if size else b""
        self.seen.append(Recorded(self.command, self.path, self.headers.get("Content-Type") or "", data))
        conn = http.client.HTTPConnection("127.0.0.1", self.upstream, timeout=30)
        skip = {"host", "content-length", "connection"}
        conn.request(self.command, self.path, body=data or None,
                     headers={**{k: v for k, v in self.headers.items() if k.lower() not in skip}, **self.auth})
        response = conn.getresponse()
        payload = response.read()
        conn.close()
        self.send_response(response.status)
        for key, value in response.getheaders():
            if key.lower() not in HOP_BY_HOP:
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

    def log_message(self, *args: Any) -> None:
        pass
