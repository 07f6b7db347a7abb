"""kube-proxy's HTTP server: health, its rules, and traffic sent through it.

Routes:
- `GET /healthz` -> `ok`.
- `GET /rules` -> JSON `{"node", "balance", "version", "services": [...], "iptables": [...]}`;
  `format=text` -> the iptables-save text; `wait=<version>` waits (up to `timeoutSeconds`,
  default 30, at most 300) until the table's version is above it; `service=<ns>/<name>` shows
  that Service only.
- `POST /send?target=&namespace=&port=&count=&interval=` -> chunked `application/x-ndjson`, one
  line per request as it is answered, then `{"done": true, ...}` (see `send`).

Guarantees: bad parameters answer 400 `{"error"}`, unknown paths 404, wrong methods 405, never a
crash of the server; plain answers keep the connection open (keep-alive), a /send stream closes
it when done; a client that leaves mid-stream stops the sending.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlsplit

from control.client.serving import LAST_CHUNK, NodeServer, chunk, read_request, response_head, wants_close
from control.proxy.send import SendPlan
from control.proxy.table import iptables_save

if TYPE_CHECKING:
    from control.proxy.proxy import KubeProxy

MAX_WAIT = 300.0


class HttpError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _wait_params(query: dict[str, str]) -> tuple[int | None, float]:
    try:
        wait = int(query["wait"]) if query.get("wait") not in (None, "") else None
        timeout = float(query.get("timeoutSeconds") or 30)
    except ValueError:
        raise HttpError(400, "wait must be an integer version and timeoutSeconds a number") from None
    if timeout < 0:
        raise HttpError(400, "timeoutSeconds must not be negative")
    return wait, min(timeout, MAX_WAIT)


class ProxyServer(NodeServer):
    def __init__(self, proxy: "KubeProxy"):
        self.proxy = proxy

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                method, target, headers = await read_request(reader)
                close = wants_close(headers)
                if not await self.answer(method, target, writer, close=close) or close:
                    return
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, ConnectionError,
                ValueError):
            pass
        finally:
            writer.close()

    async def answer(self, method: str, target: str, writer: asyncio.StreamWriter, *, close: bool) -> bool:
        """Answer one request; False when the connection must close afterwards."""
        url = urlsplit(target)
        query = dict(parse_qsl(url.query, keep_blank_values=True))
        try:
            routes = {"/healthz": "GET", "/rules": "GET", "/send": "POST"}
            if url.path not in routes:
                raise HttpError(404, f"no such path: {url.path}")
            if method != routes[url.path]:
                raise HttpError(405, f"method {method} not allowed on {url.path}")
            if url.path == "/healthz":
                return await self._send(writer, 200, "text/plain; charset=utf-8", b"ok\n", close)
            if url.path == "/rules":
                return await self.rules(query, writer, close)
            plan = SendPlan.parse(query)
        except (HttpError, ValueError) as exc:
            status = exc.status if isinstance(exc, HttpError) else 400
            return await self._send(writer, status, "application/json", json.dumps({"error": str(exc)}).encode(), close)
        await self.stream(plan, writer)
        return False

    async def rules(self, query: dict[str, str], writer: asyncio.StreamWriter, close: bool) -> bool:
        wait, timeout = _wait_params(query)
        if wait is not None:
            await self.proxy.wait_past(wait, timeout)
        rules = self.proxy.rules(query.get("service") or None)
        if query.get("format") == "text":
            return await self._send(writer, 200, "text/plain; charset=utf-8", iptables_save(rules["iptables"]).encode(),
                                    close)
        return await self._send(writer, 200, "application/json", json.dumps(rules, separators=(",", ":")).encode(),
                                close)

    async def stream(self, plan: SendPlan, writer: asyncio.StreamWriter) -> None:
        writer.write(response_head(200, "application/x-ndjson", length=None, close=True))
        lines = self.proxy.send(plan)
        try:
            async for line in lines:
                data = json.dumps(line, separators=(",", ":")).encode() + b"\n"
                writer.write(chunk(data))
                await writer.drain()
            writer.write(LAST_CHUNK)
            await writer.drain()
        finally:
            await lines.aclose()  # type: ignore[attr-defined]

    async def _send(self, writer: asyncio.StreamWriter, status: int, content_type: str, data: bytes,
                    close: bool) -> bool:
        writer.write(response_head(status, content_type, length=len(data), close=close) + data)
        await writer.drain()
        return not close
