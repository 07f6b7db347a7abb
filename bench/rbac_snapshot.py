"""What keeping the authorizer's RBAC snapshot current costs per RBAC change (issue 20 item 11).

    .venv/bin/python bench/rbac_snapshot.py [--attendees 30] [--lesson-objects 4] [--rounds 200]

In this process, on a SQLite file of its own (migrated, bootstrapped as a hub's): the room's RBAC
objects as `runcluster --attendees N` provisions them (`control.workshop`), plus `--lesson-objects`
Roles/RoleBindings per attendee (what walking the lessons adds). Then, each median over `--rounds`:
- `full_read_ms`: what a hub paid per RBAC change before (every role and binding read and decoded,
  `Policy.of` rebuilt), split into `sql_ms` (the rows), `decode_ms` (json.loads) and `policy_of_ms`;
- `incremental_ms`: what it pays now (`control.auth.policystore`): a committed RoleBinding's
  Change heard by the cache's listener (its body decoded) and applied to the objects held, and the
  next `current()` building the Policy from them; `rebuild_ms`: that build alone (sorting the held
  objects, `Policy.of`). The bench's own bindings accumulate (`--rounds` more in `default`).
One JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
_tmp = tempfile.mkdtemp(prefix="kk-bench-rbac-")
atexit.register(shutil.rmtree, _tmp, ignore_errors=True)
os.environ["KK_SQLITE_PATH"] = str(Path(_tmp) / "cluster.sqlite3")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from control import workshop  # noqa: E402
from control.auth import policystore  # noqa: E402
from control.auth.rbac import Policy  # noqa: E402
from control.bootstrap import cluster_bootstrap  # noqa: E402
from control.storage import store  # noqa: E402

RBAC = policystore.GROUP


def _create(resource: str, obj: dict) -> None:
    meta = obj["metadata"]
    meta.setdefault("uid", f"{meta.get('namespace', '')}/{meta['name']}")
    meta.setdefault("creationTimestamp", "2026-01-01T00:00:00Z")
    store.object_create(resource=resource, obj=obj, actor="bench")


def provision(attendees: int, lesson_objects: int) -> None:
    call_command("migrate", verbosity=0)
    cluster_bootstrap()
    for path, obj in workshop.cluster_objects():
        _create(f"{RBAC}/{path.rsplit('/', 1)[1]}", obj)
    for name in workshop.attendee_names(attendees):
        for path, obj in workshop.attendee_objects(name):
            if RBAC in path:
                _create(f"{RBAC}/{path.rsplit('/', 1)[1]}", obj)
        for i in range(lesson_objects // 2):
            role = {"apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": {"name": f"lesson-{i}", "namespace": name},
                    "rules": [{"apiGroups": [""], "resources": ["pods", "configmaps"], "verbs": ["get", "list"]}]}
            _create(f"{RBAC}/roles", role)
            _create(f"{RBAC}/rolebindings", workshop._binding("RoleBinding", f"lesson-{i}", name, "Role", f"lesson-{i}",
                                                             {"kind": "ServiceAccount", "name": "default"}))


def _ms(seconds: list[float]) -> float:
    return round(statistics.median(seconds) * 1000, 4)


def full_read(rounds: int) -> dict[str, float]:
    sql, decode, build = [], [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        rows = [store.object_list(resource=resource)[0] for resource in policystore.RESOURCES]
        t1 = time.perf_counter()
        loaded = [[json.loads(body) for body in bodies] for bodies in rows]
        t2 = time.perf_counter()
        Policy.of(*loaded)
        t3 = time.perf_counter()
        sql.append(t1 - t0)
        decode.append(t2 - t1)
        build.append(t3 - t2)
    return {"sql_ms": _ms(sql), "decode_ms": _ms(decode), "policy_of_ms": _ms(build),
            "full_read_ms": _ms([a + b + c for a, b, c in zip(sql, decode, build)])}


async def incremental(rounds: int, revision: int) -> dict[str, float]:
    cache = policystore.PolicyCache()
    await cache.current()
    resource, applied, rebuild = f"{RBAC}/rolebindings", [], []
    for i in range(rounds):
        binding = workshop._binding("RoleBinding", f"b-{i}", "default", "ClusterRole", "view",
                                    {"kind": "User", "name": "x"})
        binding["metadata"]["resourceVersion"] = str(revision + i + 1)
        change = store.Change(revision + i + 1, store.ADDED, resource, "default", f"b-{i}", "bench", 0.0,
                              json.dumps(binding, separators=(",", ":")))
        t0 = time.perf_counter()
        cache._changed([change])  # as the store's listener calls it after the commit
        policy = await cache.current()
        applied.append(time.perf_counter() - t0)
        assert policy.role_bindings["default"][-1]["metadata"]["name"] == f"b-{i}" or any(
            b["metadata"]["name"] == f"b-{i}" for b in policy.role_bindings["default"])
        t0 = time.perf_counter()
        policystore.policy_of(cache._objects)  # type: ignore[arg-type]
        rebuild.append(time.perf_counter() - t0)
    return {"incremental_ms": _ms(applied), "rebuild_ms": _ms(rebuild)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attendees", type=int, default=30)
    parser.add_argument("--lesson-objects", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    provision(args.attendees, args.lesson_objects)
    counts = {resource.rsplit("/", 1)[1]: len(store.object_list(resource=resource)[0])
              for resource in policystore.RESOURCES}
    figures = {"attendees": args.attendees, "objects": counts, **full_read(args.rounds)}
    figures.update(asyncio.run(incremental(args.rounds, store.current_revision())))
    print(json.dumps(figures, separators=(",", ":")), flush=True)


if __name__ == "__main__":
    main()
