"""The actors of bench/workshop.py: an attendee (their kubectl, watch, dashboard socket and exec, with
their own token, on their own hub), the runaway attendee's loop, and the room of hub processes
(one, or K sharing PostgreSQL and the Redis channel layer) with the spokes on the first.

Guarantees: nothing an attendee does raises out of the measured loop for an answer the hub gives
(codes and messages are recorded; a refused dashboard socket is reported); `Room.stop` stops every
process it started and drops the PostgreSQL database it made.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from common import SPOKE_ENV, Cluster, Hub, memory_kb, proc_cpu_seconds

import websocket  # websocket-client

from control.client.lean import ConnectionPool, ServerUnreachable

INTERVAL = 2.0
REPLICAS = 3  # beside the lessons' pods (pasta 4, toast 1, waiter 1) within the quota of 10
TIMEOUT = 60.0
AGENT = "kubectl/v1.32.4 (linux/amd64) kubernetes/bench-workshop"
EXEC_PROTOCOL = "v5.channel.k8s.io"
TRAFFIC = ('{"t":"traffic"', '{"t": "traffic"')  # a traffic batch as the page gets it (compact since jsontext)
RUNAWAY = "runaway"


def deployment(replicas: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "busybox:1.36"}]}}}}


def usable(pod: dict[str, Any]) -> bool:
    """A pod to delete or exec into: running, and not on its way out (what a person would pick)."""
    return (pod.get("status") or {}).get("phase") == "Running" and not pod["metadata"].get("deletionTimestamp")


class Attendee:
    """One attendee's kubectl, watch and dashboard, on their hub, with their token."""

    def __init__(self, name: str, url: str, token: str, code: str, auth: bool):
        self.name, self.url, self.token, self.code, self.auth = name, url, token, code, auth
        self.pool = ConnectionPool(url, AGENT, size=8, token=token)
        self.pods: dict[str, bool] = {}  # name -> running and not terminating, as the watch saw them
        self.arrivals: dict[str, float] = {}  # resourceVersion -> when the watch got it
        self.deletes: list[tuple[str, float]] = []  # (resourceVersion, response time)
        self.latencies: list[tuple[str, str, float, int]] = []  # (kind, phase, seconds, code)
        self.requests = {"quiet": 0, "loop": 0}
        self.dashboard_messages = 0
        self.dashboard_error = ""
        self.watch_breaks = 0
        # The first attendee's page also counts the hub's request records (every page gets all of
        # them, from every hub): the hub's own count of requests served, spokes' included.
        self.counts_requests = False
        self.request_times: list[float] = []
        self.request_mix: dict[str, int] = {}  # "client verb resource" -> requests, as the records name them
        self.turn = 0
        self.refusals: list[str] = []  # "kind code: message" of failed mutations (the first few)
        self.cookies: dict[str, str] = {}  # the dashboard session (logged in by the confirm form), set by the run

    async def call(self, method: str, path: str, body: Any = None,
                   content_type: str = "application/json") -> tuple[int, Any]:
        """(code, decoded answer); code 0 when no answer came (the connection broke: counted, as
        kubectl would show the error, not raised)."""
        data = None if body is None else json.dumps(body).encode()
        try:
            code, raw = await self.pool.request(method, path, data, content_type, TIMEOUT)
        except ServerUnreachable as broken:
            return 0, {"message": f"no answer: {broken}"}
        try:
            return code, json.loads(raw) if raw else None
        except ValueError:
            return code, None

    async def deploy(self) -> None:
        """Apply the Deployment; a 403 is asked again for a while: a hub's RBAC cache follows the
        store a moment behind (kube-apiserver's informers do too), and their binding is new."""
        deadline = time.monotonic() + 30
        while True:
            code, answer = await self.call("POST", f"/apis/apps/v1/namespaces/{self.name}/deployments",
                                           deployment(REPLICAS))
            if code in (201, 409):
                return
            if code != 403 or time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: Deployment refused: {code} {answer}")
            await asyncio.sleep(0.5)

    async def ready(self) -> bool:
        code, answer = await self.call("GET", f"/apis/apps/v1/namespaces/{self.name}/deployments/web")
        return code == 200 and int((answer.get("status") or {}).get("readyReplicas") or 0) >= REPLICAS

    async def watch(self, stop: asyncio.Event) -> None:
        """The attendee's watch on their `web` pods (the lessons' pods are the lesson bar's, not
        deleted or exec'd into here): list, then watch from there (again when it ends or
        breaks, as an informer does; each break counted)."""
        while not stop.is_set():
            try:
                await self._list_and_watch()
            except ServerUnreachable:
                self.watch_breaks += 1
                await asyncio.sleep(0.5)

    async def _list_and_watch(self) -> None:
        code, listed = await self.call("GET", f"/api/v1/namespaces/{self.name}/pods?labelSelector=app%3Dweb")
        if code == 0:
            raise ServerUnreachable(listed["message"])
        if code != 200:
            raise RuntimeError(f"{self.name}: list pods answered {code}")
        self.pods = {p["metadata"]["name"]: usable(p) for p in listed["items"]}
        rv = listed["metadata"]["resourceVersion"]
        path = f"/api/v1/namespaces/{self.name}/pods?labelSelector=app%3Dweb&watch=1&resourceVersion={rv}&timeoutSeconds=900"
        async with self.pool.stream("GET", path) as answer:
            if answer.status != 200:
                raise RuntimeError(f"{self.name}: watch answered {answer.status}")
            async for line in answer.lines():
                now = time.perf_counter()
                event = json.loads(line)
                meta = (event.get("object") or {}).get("metadata") or {}
                if meta.get("resourceVersion"):
                    self.arrivals.setdefault(meta["resourceVersion"], now)
                if event.get("type") == "DELETED":
                    self.pods.pop(meta.get("name"), None)
                elif event.get("type") in ("ADDED", "MODIFIED"):
                    self.pods[meta["name"]] = usable(event["object"])

    def dashboard(self, stop: threading.Event) -> None:
        """A browser's live socket, logged in with the join code; every message read and counted."""
        cookies = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        scheme_less = self.url.split("://", 1)[1]
        try:
            ws = websocket.create_connection(f"ws://{scheme_less}/ws/live/", timeout=1.0, origin=self.url,
                                             header=[f"Cookie: {cookies}"] if cookies else [])
        except Exception as exc:  # counted and reported, never raised: the figure says it
            self.dashboard_error = f"{type(exc).__name__}: {exc}"
            return
        try:
            ws.send(json.dumps({"op": "watch", "revision": None}))
            while not stop.is_set():
                try:
                    message = ws.recv()
                except websocket.WebSocketTimeoutException:
                    continue
                if message:
                    self.dashboard_messages += 1
                if self.counts_requests and isinstance(message, str) and message.startswith(TRAFFIC):
                    for record in json.loads(message)["records"]:
                        if record.get("type") == "request":
                            self.request_times.append(record["ts"])
                            self.count_request(record)
        except Exception as exc:
            self.dashboard_error = f"{type(exc).__name__}: {exc}"
        finally:
            ws.close()

    def count_request(self, record: dict[str, Any]) -> None:
        """One more request of its kind: its client (a node's kubelet as `kubelet`, a person's
        client without the person), verb and resource."""
        client = str(record.get("who", "")).split(" · ")[0].split("/")[0]
        key = f"{client} {record.get('verb', '')} {record.get('resource', '')}"
        self.request_mix[key] = self.request_mix.get(key, 0) + 1

    def exec_once(self, pod: str) -> tuple[int, str]:
        """`echo hi` in the pod over WebSocket, until the Success Status: (101, "") when it ran, else
        (the refusal's code, or 500 for a session that failed, and the Status message)."""
        url = f"ws://{self.url.split('://', 1)[1]}/api/v1/namespaces/{self.name}/pods/{pod}/exec" \
              "?command=echo&command=hi&stdout=1&stderr=1"
        header = ["User-Agent: " + AGENT] + ([f"Authorization: Bearer {self.token}"] if self.token else [])
        try:
            ws = websocket.create_connection(url, subprotocols=[EXEC_PROTOCOL], timeout=TIMEOUT, header=header,
                                             suppress_origin=True)
        except (OSError, websocket.WebSocketConnectionClosedException) as broken:
            return 0, f"no answer: {type(broken).__name__}: {broken}"[:200]
        except websocket.WebSocketBadStatusException as refused:
            try:
                return refused.status_code, str(json.loads(refused.resp_body).get("message"))[:200]
            except (TypeError, ValueError, AttributeError):
                return refused.status_code, str(refused)[:200]
        try:
            while True:
                try:
                    message = ws.recv()
                except (OSError, websocket.WebSocketException) as broken:
                    return 0, f"the session broke: {type(broken).__name__}: {broken}"[:200]
                message = message.encode() if isinstance(message, str) else message
                if not message:
                    return 500, "the stream closed before its Status"
                if message[0] == 3:
                    status = json.loads(message[1:])
                    return (101, "") if status.get("status") == "Success" else (500, str(status.get("message"))[:200])
        finally:
            ws.close()

    def running_pod(self) -> str | None:
        live = sorted(name for name, running in self.pods.items() if running)
        return live[self.turn % len(live)] if live else None

    async def mutate(self, phase: str, executor: ThreadPoolExecutor) -> None:
        kind = ("scale", "delete", "exec")[self.turn % 3]
        self.turn += 1
        pod = self.running_pod()
        started = time.perf_counter()
        if kind == "scale":
            replicas = REPLICAS - 1 if self.turn % 2 else REPLICAS
            code, answer = await self.call("PATCH", f"/apis/apps/v1/namespaces/{self.name}/deployments/web/scale",
                                           {"spec": {"replicas": replicas}}, "application/merge-patch+json")
        elif pod is None:
            return  # nothing running to delete or exec into this turn (the watch will say when)
        elif kind == "delete":
            code, answer = await self.call("DELETE", f"/api/v1/namespaces/{self.name}/pods/{pod}")
            done = time.perf_counter()
            rv = ((answer or {}).get("metadata") or {}).get("resourceVersion")
            if code == 200 and rv:
                self.deletes.append((rv, done))
        else:
            code, message = await asyncio.get_running_loop().run_in_executor(executor, self.exec_once, pod)
            answer = {"message": message}
        self.latencies.append((kind, phase, time.perf_counter() - started, code))
        if (code >= 300 or code == 0) and code != 101 and len(self.refusals) < 3:
            self.refusals.append(f"{kind} {code}: {((answer or {}) if isinstance(answer, dict) else {}).get('message', '')}")
        self.requests[phase] += 1

    async def act(self, until: float, loop_from: float, executor: ThreadPoolExecutor, offset: float) -> None:
        next_at = time.monotonic() + offset
        while next_at < until:
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            await self.mutate("loop" if time.monotonic() >= loop_from else "quiet", executor)
            next_at += INTERVAL

    def delivery(self) -> tuple[list[float], int]:
        seen = [max(0.0, self.arrivals[rv] - done) for rv, done in self.deletes if rv in self.arrivals]
        return seen, len(self.deletes) - len(seen)


async def runaway(url: str, token: str, connections: int, start: float, until: float) -> dict[str, int]:
    """The attendee whose loop never waits: lists of their pods, answered or refused, back to back."""
    pool = ConnectionPool(url, "runaway/1.0", size=connections, token=token)
    codes: dict[str, int] = {}
    await asyncio.sleep(max(0.0, start - time.monotonic()))

    async def loop() -> None:
        while time.monotonic() < until:
            try:
                code, _ = await pool.request("GET", f"/api/v1/namespaces/{RUNAWAY}/pods", None, "application/json",
                                             TIMEOUT)
            except ServerUnreachable:
                code = 0  # no answer: the connection broke
            codes[str(code)] = codes.get(str(code), 0) + 1

    await asyncio.gather(*(loop() for _ in range(connections)))
    await pool.close()
    return codes


# --- the hubs ---------------------------------------------------------------------------------------

class Room:
    """The hub processes (one, or K on PostgreSQL + Redis) and the spokes on the first one."""

    def __init__(self, hubs: int, nodes: int, auth: bool, postgres: str, redis: str, keep: bool = False):
        self.keep = keep
        self.data = Path(tempfile.mkdtemp(prefix="kk-bench-workshop-"))
        self.nodes = nodes
        self.database = ""
        env = {**SPOKE_ENV, "KK_DATA_DIR": str(self.data), "KK_NODE_CPU": "64", "KK_NODE_MEMORY": "256Gi",
               "KK_NODE_PODS": "1000", "KK_AUTHENTICATION": "on" if auth else "off"}
        if hubs > 1:
            self.database = f"kk_bench_workshop_{os.getpid()}"
            self.postgres = postgres
            self._database("CREATE")
            parts = urlsplit(postgres)
            env["DATABASE_URL"] = f"{parts.scheme}://{parts.netloc}/{self.database}"
            env["REDIS_URL"] = redis
        # the first hub is stopped last: it removes the shared folder (unless kept); the others leave it
        self.first = Cluster(nodes=nodes, env=env, keep=keep)
        self.others = [Hub(env=env, keep=True) for _ in range(hubs - 1)]
        for hub in (self.first, *self.others):
            shutil.rmtree(hub.dir, ignore_errors=True)  # each made a folder of its own: they share one
            hub.dir = self.data
            hub.env.update({k: v for k, v in env.items() if k in ("DATABASE_URL", "REDIS_URL")})
            hub.log_path = self.data / f"hub-{hub.port}.log"

    def _database(self, verb: str) -> None:
        import psycopg

        with psycopg.connect(self.postgres, autocommit=True) as connection:
            if verb == "CREATE":
                connection.execute(f'CREATE DATABASE "{self.database}"')
            else:
                connection.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')

    @property
    def hubs(self) -> list[Hub]:
        return [self.first, *self.others]

    def start(self) -> None:
        self.first.start()
        for hub in self.others:
            hub.start()
        self.first.wait_nodes_ready(self.nodes, timeout=120)

    def rss_mb(self) -> float:
        return round(sum(memory_kb(hub.pid).get("VmRSS", 0) for hub in self.hubs) / 1024, 1)

    def cpu_s(self) -> float:
        return sum(proc_cpu_seconds(hub.pid) for hub in self.hubs)

    def stop(self) -> None:
        try:
            for hub in reversed(self.others):
                hub.stop()
            self.first.stop()
        finally:
            if self.database:
                self._database("DROP")
            if not self.keep:
                shutil.rmtree(self.data, ignore_errors=True)
