"""Requests to a pod's "app" through its node's kubelet (`POST /serve/...`), as kube-proxy, the
front door (Ingress) and the gateway controller make them: one small pool of kept connections per
kubelet, each holding the node-access secret (`control.client.nodeaccess`), which the kubelet asks of
every caller.

Guarantees:
- `serve(where, path)` is one exchange with the kubelet at `where` (address, port); a kept
  connection the kubelet had closed meanwhile (idle, or a kubelet that restarted) is dropped and the
  request made once more on a fresh one; an answer that does not come within `timeout` seconds, or a
  kubelet that cannot be reached, raises `KubeletUnreachable` naming why (never a hang).
- The answer is decoded as the kubelet writes it: `(status, JSON object)`; a body that is not a
  JSON object is `{"error": <its first 200 characters>}`.
- `dropped(proxy, ip, port)` asks the node's kube-proxy, the node's network agent, whether the
  NetworkPolicies let a connection from this node to `ip:port` through (`GET /decide`): the
  verdict's `dropped` fields when they do not, else None; a kube-proxy that cannot be reached or
  cannot decide yet decides nothing (None), as the hub's DNS path does.
- `close()` closes every pool; a later request opens a new one.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import quote

from control.client import nodeaccess
from control.client.lean import ConnectionPool

Obj = dict[str, Any]
FAILURES = (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError)


class KubeletUnreachable(Exception):
    """The kubelet did not answer; the message is the failure's kind (e.g. TimeoutError)."""


class PodServe:
    def __init__(self, agent: str, *, timeout: float = 2.0, size: int = 16):
        self.agent, self.timeout, self.size = agent, timeout, size
        self._pools: dict[tuple[str, int], ConnectionPool] = {}

    def _pool(self, where: tuple[str, int]) -> ConnectionPool:
        pool = self._pools.get(where)
        if pool is None:
            pool = self._pools[where] = ConnectionPool(f"http://{where[0]}:{where[1]}", self.agent, size=self.size,
                                                       token=nodeaccess.token())
        return pool

    async def serve(self, where: tuple[str, int], path: str) -> tuple[int, Obj]:
        pool = self._pool(where)
        try:
            try:
                code, data = await pool.request("POST", path, None, "application/json", self.timeout)
            except (asyncio.IncompleteReadError, ConnectionError):
                await pool.close()  # a kept connection the kubelet had closed: once more on a fresh one
                code, data = await pool.request("POST", path, None, "application/json", self.timeout)
        except FAILURES as exc:
            raise KubeletUnreachable(type(exc).__name__) from None
        return code, decode(data)

    async def dropped(self, proxy: tuple[str, int], ip: str, port: int) -> Obj | None:
        target = f"/decide?target={quote(ip)}&port={int(port)}&protocol=TCP"
        try:
            code, data = await self._pool(proxy).request("GET", target, None, "application/json", self.timeout)
        except (*FAILURES, ConnectionError):
            return None
        verdict = decode(data) if code == 200 else {}
        return verdict.get("dropped") if verdict.get("allowed") is False and "dropped" in verdict else None

    async def close(self) -> None:
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            await pool.close()


def decode(data: bytes) -> Obj:
    """A kubelet's /serve answer as a JSON object (`{"error": ...}` when it is not one)."""
    try:
        body = json.loads(data) if data else {}
    except ValueError:
        return {"error": data[:200].decode(errors="replace")}
    return body if isinstance(body, dict) else {"error": str(body)[:200]}
