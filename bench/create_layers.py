"""Where a pod create's server time goes, layer by layer, all in this one process (no sockets).

    .venv/bin/python bench/create_layers.py [--count 2000]

On a fresh temp SQLite database (KK_DATA_DIR set before django.setup(), then migrate; same
settings as the hub: WAL, synchronous=FULL), creates --count pods sequentially through each layer
and reports wall and CPU microseconds per create:

  store   control.storage.store.object_create with a ready object (the etcd role alone)
  verb    control.api.verbs.create(Call) (decode, prepare_create incl. ensure_namespace and
          managedFields, validation, store, JSON response)
  asgi    the Django ASGI application (control.asgi.application) called with an http scope:
          middleware (authentication: the admin's bearer token), URL resolving, views.resource,
          sync_to_async hand-off (Django opens a ThreadSensitiveContext per request: a new
          executor thread, so a new DB connection)

The difference between `asgi` and create_throughput's per-request server CPU is Daphne/Twisted
(HTTP parsing and writing). Prints one JSON line on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, emit, latency_summary, log, machine_busy_seconds  # noqa: E402

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"app": "bench"}},
       "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}


def body(name: str) -> bytes:
    pod = json.loads(json.dumps(POD))
    pod["metadata"]["name"] = name
    return json.dumps(pod, separators=(",", ":")).encode()


def measure(label: str, n: int, fn) -> dict:
    """fn(i) once per create; wall and CPU per op."""
    lat = []
    m0, c0, t0 = machine_busy_seconds(), time.process_time(), time.perf_counter()
    for i in range(n):
        s = time.perf_counter()
        fn(i)
        lat.append(time.perf_counter() - s)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    other = machine_busy_seconds() - m0 - cpu
    out = {"creates_per_s": round(n / wall, 1), "wall_us_per_op": round(1e6 * wall / n, 1),
           "cpu_us_per_op": round(1e6 * cpu / n, 1), **latency_summary(lat, "latency_"),
           "other_processes_cpu_pct": round(max(0.0, 100 * other / wall), 1)}
    log(f"{label}: {out['creates_per_s']}/s, {out['wall_us_per_op']} us wall, {out['cpu_us_per_op']} us CPU per create")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=2000)
    args = parser.parse_args()
    n = args.count

    data_dir = tempfile.mkdtemp(prefix="kk-bench-layers-")
    os.environ["KK_DATA_DIR"] = data_dir
    for key in ("KK_SQLITE_PATH", "DATABASE_URL"):
        os.environ.pop(key, None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "control.settings"
    sys.path.insert(0, str(ROOT))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)
    from control import kinds as registry
    from control.storage import store
    from control.api import verbs
    from control.api.request import Call
    from control.asgi import application
    from control.auth.tokenfile import admin_token

    # the asgi layer goes through authentication like every client: the admin's bearer token
    authorization = f"Bearer {admin_token(Path(data_dir))}".encode()

    pods = registry.by_resource("", "v1", "pods")
    figures: dict = {"bench": "create_layers", "count": n, "cpus": os.cpu_count(), "loadavg_at_start": os.getloadavg()[0]}
    try:
        # verb first: it gives us a realistic stored object to feed the store layer with
        def verb(i: int) -> None:
            call = Call(method="POST", kind=pods, namespace="default", name="", subresource="", query={},
                        actor="bench", accept="application/json", content_type="application/json",
                        raw_body=body(f"verb-{i}"))
            response = verbs.create(call)
            assert response.status == 201, response.body[:300]
            verb.last = response.body

        verb.last = b""
        figures["verb"] = measure("verb", n, verb)
        template = json.loads(verb.last)
        template["metadata"].pop("resourceVersion", None)
        objects = []
        for i in range(n):
            obj = json.loads(json.dumps(template))
            obj["metadata"]["name"] = f"store-{i}"
            obj["metadata"]["uid"] = str(uuid.uuid4())
            objects.append(obj)
        figures["store"] = measure("store", n, lambda i: store.object_create(resource="/pods", obj=objects[i], actor="bench"))

        loop = asyncio.new_event_loop()

        async def asgi_create(i: int) -> None:
            raw = body(f"asgi-{i}")
            scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
                     "method": "POST", "scheme": "http", "path": "/api/v1/namespaces/default/pods",
                     "raw_path": b"/api/v1/namespaces/default/pods", "query_string": b"", "root_path": "",
                     "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                                 (b"content-length", str(len(raw)).encode()), (b"user-agent", b"kk-bench-layers"),
                                 (b"accept", b"application/json"),
                                 (b"authorization", authorization)],
                     "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 80)}
            sent = []
            never = loop.create_future()
            first = True

            async def receive():
                nonlocal first
                if first:
                    first = False
                    return {"type": "http.request", "body": raw, "more_body": False}
                await never  # no disconnect
                return {"type": "http.disconnect"}

            async def send(message):
                sent.append(message)

            await application(scope, receive, send)
            status = sent[0].get("status")
            assert status == 201, (status, sent[1:2])

        figures["asgi"] = measure("asgi", n, lambda i: loop.run_until_complete(asgi_create(i)))
        loop.close()
        figures["asgi_minus_verb_cpu_us"] = round(figures["asgi"]["cpu_us_per_op"] - figures["verb"]["cpu_us_per_op"], 1)
        figures["verb_minus_store_cpu_us"] = round(figures["verb"]["cpu_us_per_op"] - figures["store"]["cpu_us_per_op"], 1)
    finally:
        from django.db import connections
        connections.close_all()
        shutil.rmtree(data_dir, ignore_errors=True)
    emit(figures)


if __name__ == "__main__":
    main()
