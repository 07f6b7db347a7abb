"""Watch matching per change: the hub's own watch loop over its change feed, in one process.

    .venv/bin/python bench/watch_index.py [--changes 20000] [--kubelets 10] [--namespaces 30] [--all 3]

The watches of a workshop room: one per kubelet (pods, all namespaces, `spec.nodeName=<node>`),
one per attendee (pods of the attendee's namespace), and a few controllers watching every pod.
`--changes` pod changes (status updates spread over the nodes and namespaces) are offered to a
`ChangeFeed` (held in memory, no database) and every watch runs `control.api.watch.change_stream`
with the hub's own renderer (`_renderer`: resource, namespace, selector translation, event line).

Two modes, same code, same sitting: "scan" runs the streams without an index (each watch of Pods
reads and translates every Pod change: what main does) and "index" with the watcher index
(`control.storage.watchers`: each change is handed only to the watches it can concern). Figures:
CPU microseconds per change (all watches together), translations per change (changes a watch
looked at), and events sent (equal in both modes, checked). One JSON line on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import emit, log  # noqa: E402


def setup() -> None:
    os.environ["KK_DATA_DIR"] = tempfile.mkdtemp(prefix="kk-bench-watch-index-")
    os.environ["DJANGO_SETTINGS_MODULE"] = "control.settings"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def changes(count: int, nodes: int, namespaces: int):
    from control.storage.store import Change

    out = []
    for revision in range(1, count + 1):
        namespace, node = f"attendee-{revision % namespaces}", f"node-{revision % nodes}"
        obj = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": f"pod-{revision % 997}", "namespace": namespace, "labels": {"app": "soup"},
                            "resourceVersion": str(revision)},
               "spec": {"nodeName": node, "containers": [{"name": "c", "image": "soup:1"}]},
               "status": {"phase": "Running", "podIP": f"10.0.{revision % 250}.{revision % 200}"}}
        out.append(Change(revision=revision, type="MODIFIED", resource="/pods", namespace=namespace,
                          name=obj["metadata"]["name"], actor="kubelet", created_at=0.0,
                          body=json.dumps(obj, separators=(",", ":"))))
    return out


async def run_mode(indexed: bool, batch: list, args) -> dict:
    from control import kinds as registry
    from control.api import watch as watch_module
    from control.api.request import Call
    from control.api.selection import Selection
    from control.clock import FakeClock
    from control.storage.feed import ChangeFeed

    pods = registry.by_resource("", "v1", "pods")
    feed = ChangeFeed(loop=asyncio.get_running_loop(), start=0, capacity=len(batch) + 1, batch_window=0,
                      max_bytes=1 << 40)
    looked = [0]
    specs = ([("", {"fieldSelector": f"spec.nodeName=node-{i}"}) for i in range(args.kubelets)]
             + [(f"attendee-{i}", {}) for i in range(args.namespaces)] + [("", {})] * args.all)
    counts: list[int] = []
    tasks = []
    for index, (namespace, query) in enumerate(specs):
        call = Call(method="GET", kind=pods, namespace=namespace, name="", subresource="", query=query, actor="t")
        selection = Selection.from_query(pods, query)
        keep = watch_module._Filter(selection, set())
        inner = watch_module._renderer(call, keep, watch_module._Encoder(call))

        def render(cs, inner=inner):
            looked[0] += len(cs)
            return inner(cs)

        options = {}
        if indexed:
            options["interest"] = watch_module.Interest(namespace, watch_module.trigger_of(selection),
                                                        lambda keep=keep: keep.visible)
        stream = watch_module.change_stream(0, render=render, timeout=10**6, feed=feed, clock=FakeClock(),
                                            resource="/pods", **options)
        counts.append(0)

        async def consume(stream=stream, slot=index):
            async for chunk in stream:
                counts[slot] += chunk.count(b"\n")

        tasks.append(asyncio.ensure_future(consume()))
    for _ in range(5):
        await asyncio.sleep(0)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    step = 100
    for start in range(0, len(batch), step):
        feed.offer(batch[start:start + step])
        for _ in range(6):
            await asyncio.sleep(0)
    expected = len(batch) * (1 + args.all) + len(batch) * 1  # each change: its node, its namespace, the all-watchers
    for _ in range(10_000):
        if sum(counts) >= expected:
            break
        await asyncio.sleep(0)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return {"cpu_us_per_change": round(1e6 * cpu / len(batch), 1), "wall_s": round(wall, 3),
            "translations_per_change": round(looked[0] / len(batch), 2), "events_sent": sum(counts),
            "events_expected": expected}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--changes", type=int, default=20000)
    parser.add_argument("--kubelets", type=int, default=10)
    parser.add_argument("--namespaces", type=int, default=30)
    parser.add_argument("--all", type=int, default=3, help="controllers watching every pod")
    args = parser.parse_args()
    setup()
    from control.api import watch as watch_module

    batch = changes(args.changes, args.kubelets, args.namespaces)
    figures = {"bench": "watch_index", "changes": args.changes, "kubelet_watches": args.kubelets,
               "namespace_watches": args.namespaces, "all_pod_watches": args.all, "cpus": os.cpu_count(),
               "loadavg_at_start": os.getloadavg()[0]}
    modes = ["scan"] + (["index"] if "interest" in inspect.signature(watch_module.change_stream).parameters else [])
    for mode in modes:
        for change in batch:
            change.forget_parsed()
        figures[mode] = asyncio.run(run_mode(mode == "index", batch, args))
        log(mode, figures[mode])
    if "index" in figures:
        figures["speedup"] = round(figures["scan"]["cpu_us_per_change"] / figures["index"]["cpu_us_per_change"], 2)
    emit(figures)


if __name__ == "__main__":
    main()
