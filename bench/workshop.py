"""Workshop: a room of simulated attendees on one hub (or several hubs sharing PostgreSQL and Redis).

    .venv/bin/python bench/workshop.py [--attendees 30] [--minutes 5] [--hubs 1] [--auth on|off]
                                       [--nodes 3] [--loop-connections 4]

A cluster of its own (hub(s), controller-manager, scheduler, `--nodes` kubelets, all processes
talking HTTP), provisioned as `runcluster --attendees N` does (`control.workshop.provision`: a
namespace, a token, RBAC, quota and limits each), plus one more attendee, the runaway. Each of the
N attendees, with their own token and on their own hub (attendee i on hub i mod K, as their
kubeconfig would name it):
- applies a Deployment `web` of 5 pods (busybox) in their namespace and waits for it;
- holds a watch on their namespace's pods and a dashboard websocket (`/ws/live/`, logged in with
  their join code, reading the snapshot, changes and traffic the page would get);
- every 2 s makes a mutating request, in turn: scale `web` (5↔4, the scale subresource), delete one
  of their pods, exec `echo hi` in one (WebSocket, v5.channel.k8s.io, until the Success Status).
The window is `--minutes` long; in its second half the runaway attendee runs a tight loop of lists
of their own pods on `--loop-connections` connections (answers counted by code: 429 is fairness).

Figures (one JSON line on stdout, progress on stderr), with their targets beside them:
- `mutating`: latency of every mutating request (exec: connect to Success), all, before and during
  the loop, per kind; target p99 <= 1000 ms (Kubernetes' SLO), for everyone incl. during the loop.
  Non-2xx answers are counted apart (`mutating_failed`, by code) and their latency is in too.
- `watch_delivery`: for each delete, the time from its response to the arrival of the event with
  the response's resourceVersion on that attendee's watch (0 when it came first); target p99 <= 200
  ms. `watch_missed`: deletes whose event never came.
- `hub_rss_mb`: the hub processes' RSS (summed) with the cluster idle (before any attendee) and at
  the end; `hub_mb_per_attendee` = the growth / N; target <= 20.
- `hub_cpu_ms_per_request`: the hub processes' CPU over each half of the window divided by the
  requests the hubs answered in it (`hub_requests`: their traffic records, spokes' requests too,
  as the first attendee's dashboard receives them), before and during the loop. Authorization's cost is this figure with `--auth on` against
  `--auth off` (target <= 10 % more); `--auth off` runs the hub with KK_AUTHENTICATION=off (then
  every request is one user to fairness, so latencies during the loop are not comparable).
`--hubs K` > 1: K `runhub` processes on a PostgreSQL database of its own (made on
`--postgres`, dropped at the end) and the Redis channel layer (`--redis`, its own database number),
spokes on the first hub.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (SPOKE_ENV, Cluster, Hub, emit, latency_summary, log, memory_kb, proc_cpu_seconds,  # noqa: E402
                    machine_busy_seconds, stop_on_sigterm)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")

import httpx  # noqa: E402
import websocket  # noqa: E402  (websocket-client)

from control import workshop  # noqa: E402
from control.auth import tokenfile  # noqa: E402
from control.client.lean import ConnectionPool  # noqa: E402

TARGETS = {"mutating_p99_ms": 1000, "watch_delivery_p99_ms": 200, "hub_mb_per_attendee": 20,
           "auth_cpu_overhead_pct": 10}
INTERVAL = 2.0
REPLICAS = 5
TIMEOUT = 60.0
AGENT = "kubectl/v1.32.4 (linux/amd64) kubernetes/bench-workshop"
EXEC_PROTOCOL = "v5.channel.k8s.io"
RUNAWAY = "runaway"


def deployment(replicas: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "busybox:1.36"}]}}}}


class Attendee:
    """One attendee's kubectl, watch and dashboard, on their hub, with their token."""

    def __init__(self, name: str, url: str, token: str, code: str, auth: bool):
        self.name, self.url, self.token, self.code, self.auth = name, url, token, code, auth
        self.pool = ConnectionPool(url, AGENT, size=8, token=token)
        self.pods: dict[str, bool] = {}  # name -> terminating, as the watch saw them
        self.arrivals: dict[str, float] = {}  # resourceVersion -> when the watch got it
        self.deletes: list[tuple[str, float]] = []  # (resourceVersion, response time)
        self.latencies: list[tuple[str, str, float, int]] = []  # (kind, phase, seconds, code)
        self.requests = {"quiet": 0, "loop": 0}
        self.dashboard_messages = 0
        self.dashboard_error = ""
        # The first attendee's page also counts the hub's request records (every page gets all of
        # them, from every hub): the hub's own count of requests served, spokes' included.
        self.counts_requests = False
        self.request_times: list[float] = []
        self.turn = 0

    async def call(self, method: str, path: str, body: Any = None,
                   content_type: str = "application/json") -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        code, raw = await self.pool.request(method, path, data, content_type, TIMEOUT)
        try:
            return code, json.loads(raw) if raw else None
        except ValueError:
            return code, None

    async def deploy(self) -> None:
        code, answer = await self.call("POST", f"/apis/apps/v1/namespaces/{self.name}/deployments", deployment(REPLICAS))
        if code not in (201, 409):
            raise RuntimeError(f"{self.name}: Deployment refused: {code} {answer}")

    async def ready(self) -> bool:
        code, answer = await self.call("GET", f"/apis/apps/v1/namespaces/{self.name}/deployments/web")
        return code == 200 and int((answer.get("status") or {}).get("readyReplicas") or 0) >= REPLICAS

    async def watch(self, stop: asyncio.Event) -> None:
        """The attendee's watch on their pods: list, then watch from there (again when it ends)."""
        while not stop.is_set():
            code, listed = await self.call("GET", f"/api/v1/namespaces/{self.name}/pods")
            if code != 200:
                raise RuntimeError(f"{self.name}: list pods answered {code}")
            self.pods = {p["metadata"]["name"]: bool(p["metadata"].get("deletionTimestamp")) for p in listed["items"]}
            rv = listed["metadata"]["resourceVersion"]
            path = f"/api/v1/namespaces/{self.name}/pods?watch=1&resourceVersion={rv}&timeoutSeconds=900"
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
                        self.pods[meta["name"]] = bool(meta.get("deletionTimestamp"))

    def dashboard(self, stop: threading.Event) -> None:
        """A browser's live socket, logged in with the join code; every message read and counted."""
        cookies = ""
        scheme_less = self.url.split("://", 1)[1]
        try:
            if self.auth:
                with httpx.Client(base_url=self.url, follow_redirects=False, timeout=TIMEOUT) as browser:
                    browser.get("/login/", params={"code": self.code, "next": "/"})
                    cookies = "; ".join(f"{k}={v}" for k, v in browser.cookies.items())
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
                if self.counts_requests and isinstance(message, str) and message.startswith('{"t": "traffic"'):
                    self.request_times.extend(r["ts"] for r in json.loads(message)["records"] if r.get("type") == "request")
        except Exception as exc:
            self.dashboard_error = f"{type(exc).__name__}: {exc}"
        finally:
            ws.close()

    def exec_once(self, pod: str) -> int:
        """`echo hi` in the pod over WebSocket, until the Success Status: 101 when it ran."""
        url = f"ws://{self.url.split('://', 1)[1]}/api/v1/namespaces/{self.name}/pods/{pod}/exec" \
              "?command=echo&command=hi&stdout=1&stderr=1"
        header = ["User-Agent: " + AGENT] + ([f"Authorization: Bearer {self.token}"] if self.token else [])
        try:
            ws = websocket.create_connection(url, subprotocols=[EXEC_PROTOCOL], timeout=TIMEOUT, header=header,
                                             suppress_origin=True)
        except websocket.WebSocketBadStatusException as refused:
            return refused.status_code
        try:
            while True:
                message = ws.recv()
                message = message.encode() if isinstance(message, str) else message
                if message and message[0] == 3:
                    return 101 if json.loads(message[1:]).get("status") == "Success" else 500
        finally:
            ws.close()

    def running_pod(self) -> str | None:
        live = sorted(name for name, terminating in self.pods.items() if not terminating)
        return live[self.turn % len(live)] if live else None

    async def mutate(self, phase: str, executor: ThreadPoolExecutor) -> None:
        kind = ("scale", "delete", "exec")[self.turn % 3]
        self.turn += 1
        pod = self.running_pod()
        started = time.perf_counter()
        if kind == "scale":
            replicas = REPLICAS - 1 if self.turn % 2 else REPLICAS
            code, _ = await self.call("PATCH", f"/apis/apps/v1/namespaces/{self.name}/deployments/web/scale",
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
            code = await asyncio.get_running_loop().run_in_executor(executor, self.exec_once, pod)
        self.latencies.append((kind, phase, time.perf_counter() - started, code))
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
            code, _ = await pool.request("GET", f"/api/v1/namespaces/{RUNAWAY}/pods", None, "application/json", TIMEOUT)
            codes[str(code)] = codes.get(str(code), 0) + 1

    await asyncio.gather(*(loop() for _ in range(connections)))
    await pool.close()
    return codes


# --- the hubs ---------------------------------------------------------------------------------------

class Room:
    """The hub processes (one, or K on PostgreSQL + Redis) and the spokes on the first one."""

    def __init__(self, hubs: int, nodes: int, auth: bool, postgres: str, redis: str):
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
        self.first = Cluster(nodes=nodes, env=env, keep=True)
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
            shutil.rmtree(self.data, ignore_errors=True)


# --- the run ------------------------------------------------------------------------------------------

async def run(room: Room, count: int, minutes: float, loop_connections: int, auth: bool) -> dict[str, Any]:
    names = [f"attendee-{i}" for i in range(1, count + 1)]
    idle_rss = room.rss_mb()
    log(f"idle cluster: hub RSS {idle_rss} MB; provisioning {count} attendees and the runaway")
    codes = await asyncio.to_thread(workshop.provision, room.first.url, room.data, [*names, RUNAWAY])
    urls = [hub.url for hub in room.hubs]

    def token(name: str) -> str:
        return tokenfile.token_of(room.data, name, (workshop.ATTENDEES,)) if auth else ""

    attendees = [Attendee(name, urls[i % len(urls)], token(name), codes[name], auth) for i, name in enumerate(names)]
    attendees[0].counts_requests = True
    await asyncio.gather(*(a.deploy() for a in attendees))
    deadline = time.monotonic() + 60 + 3 * count
    while not all(await asyncio.gather(*(a.ready() for a in attendees))):
        if time.monotonic() > deadline:
            raise RuntimeError("the attendees' Deployments did not become ready in time")
        await asyncio.sleep(1.0)
    log("every Deployment ready; watches and dashboards open")
    stop, stop_threads = asyncio.Event(), threading.Event()
    executor = ThreadPoolExecutor(max_workers=2 * count + 8)
    watches = [asyncio.ensure_future(a.watch(stop)) for a in attendees]
    dashboards = [threading.Thread(target=a.dashboard, args=(stop_threads,), daemon=True) for a in attendees]
    for thread in dashboards:
        thread.start()
    await asyncio.sleep(3.0)  # the snapshots are in, the watches open
    window = 60 * minutes
    start, wall_start = time.monotonic(), time.time()
    loop_from, until = start + window / 2, start + window
    marks = (wall_start, wall_start + window / 2, wall_start + window)  # the hub's records carry wall time
    cpu0, machine0 = room.cpu_s(), machine_busy_seconds()
    runaway_task = asyncio.ensure_future(runaway(urls[-1], token(RUNAWAY), loop_connections, loop_from, until))
    acting = asyncio.gather(*(a.act(until, loop_from, executor, INTERVAL * i / count) for i, a in enumerate(attendees)))
    await asyncio.sleep(max(0.0, loop_from - time.monotonic()))
    cpu_half = room.cpu_s()
    log(f"half time: the runaway's loop starts ({loop_connections} connections)")
    await acting
    loop_codes = await runaway_task
    cpu1, machine1 = room.cpu_s(), machine_busy_seconds()
    wall = time.monotonic() - start
    await asyncio.sleep(1.0)  # the last deletes' events
    end_rss = room.rss_mb()
    stop.set()
    stop_threads.set()
    for task in watches:
        task.cancel()
    await asyncio.gather(*watches, return_exceptions=True)
    for thread in dashboards:
        thread.join(5)
    executor.shutdown(wait=True)
    for a in attendees:
        await a.pool.close()
    served = attendees[0].request_times
    hub_requests = (sum(1 for ts in served if marks[0] <= ts < marks[1]), sum(1 for ts in served if marks[1] <= ts < marks[2]))
    return figures(attendees, loop_codes, idle_rss, end_rss, (cpu0, cpu_half, cpu1), wall, machine1 - machine0,
                   count, hub_requests)


def figures(attendees: list[Attendee], loop_codes: dict[str, int], idle_rss: float, end_rss: float,
            cpu: tuple[float, float, float], wall: float, machine_busy: float, count: int,
            hub_requests: tuple[int, int]) -> dict[str, Any]:
    every = [x for a in attendees for x in a.latencies]
    failed: dict[str, int] = {}
    for kind, _, _, code in every:
        if code >= 300 and code != 101:
            failed[f"{kind} {code}"] = failed.get(f"{kind} {code}", 0) + 1
    delivered = [s for a in attendees for s in a.delivery()[0]]
    missed = sum(a.delivery()[1] for a in attendees)
    quiet_requests, loop_requests = hub_requests
    cpu_quiet, cpu_loop = cpu[1] - cpu[0], cpu[2] - cpu[1]
    mutating = {"all": latency_summary([s for _, _, s, _ in every]),
                "quiet": latency_summary([s for _, phase, s, _ in every if phase == "quiet"]),
                "during_loop": latency_summary([s for _, phase, s, _ in every if phase == "loop"]),
                **{kind: latency_summary([s for k, _, s, _ in every if k == kind]) for kind in ("scale", "delete", "exec")}}
    worst_p99 = max((m.get("p99_ms", 0) for m in (mutating["quiet"], mutating["during_loop"])), default=0)
    per_attendee_p99 = [latency_summary([s for _, _, s, _ in a.latencies]).get("p99_ms", 0) for a in attendees]
    delivery = latency_summary(delivered)
    growth = round((end_rss - idle_rss) / count, 2)
    return {
        "mutating": mutating, "mutating_failed": failed,
        "mutating_p99_ms_worst_attendee": max(per_attendee_p99, default=None),
        "watch_delivery": delivery, "watch_missed": missed,
        "runaway_answers": loop_codes,
        "hub_rss_mb": {"idle": idle_rss, "end": end_rss}, "hub_mb_per_attendee": growth,
        "hub_requests": {"quiet": quiet_requests, "during_loop": loop_requests},
        "hub_cpu_ms_per_request": {
            "quiet": round(1000 * cpu_quiet / quiet_requests, 3) if quiet_requests else None,
            "during_loop": round(1000 * cpu_loop / loop_requests, 3) if loop_requests else None},
        "hub_cpu_pct": round(100 * (cpu[2] - cpu[0]) / wall, 1),
        "machine_busy_pct": round(100 * machine_busy / wall, 1),
        "dashboards": {"messages": sum(a.dashboard_messages for a in attendees),
                       "failed": [f"{a.name}: {a.dashboard_error}" for a in attendees if a.dashboard_error][:5]},
        "targets": TARGETS,
        "targets_met": {"mutating_p99": bool(worst_p99 and worst_p99 <= TARGETS["mutating_p99_ms"]),
                        "watch_delivery_p99": bool(delivery.get("p99_ms") is not None
                                                   and delivery["p99_ms"] <= TARGETS["watch_delivery_p99_ms"]),
                        "hub_memory": growth <= TARGETS["hub_mb_per_attendee"]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attendees", type=int, default=30)
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--hubs", type=int, default=1)
    parser.add_argument("--auth", choices=("on", "off"), default="on")
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--loop-connections", type=int, default=4)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres",
                        help="where the --hubs K>1 shape makes (and drops) a database of its own")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13",
                        help="the channel layer of the --hubs K>1 shape (a database number of its own)")
    args = parser.parse_args()
    stop_on_sigterm()
    auth = args.auth == "on"
    result: dict[str, Any] = {"bench": "workshop", "settings": {
        "attendees": args.attendees, "minutes": args.minutes, "hubs": args.hubs, "auth": args.auth,
        "nodes": args.nodes, "loop_connections": args.loop_connections, "interval_s": INTERVAL, "replicas": REPLICAS}}
    room = Room(args.hubs, args.nodes, auth, args.postgres, args.redis)
    try:
        room.start()
        result.update(asyncio.run(run(room, args.attendees, args.minutes, args.loop_connections, auth)))
        dead = room.first.dead_spokes()
        if dead:
            result["dead_spokes"] = dead
    except (Exception, KeyboardInterrupt) as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"
        log(f"error: {result['error']}")
    finally:
        room.stop()
    emit(result)


if __name__ == "__main__":
    main()
