"""Scrubbing the timeline: how long the page takes to draw the cluster as it was at a past revision
of a 10,000-entry version log.

    .venv/bin/python bench/timeline.py [--entries 10000] [--pods 300] [--positions 20]

Starts its own hub (temp data dir, a log window large enough to keep every entry), fills the log
with `--entries` writes (`--pods` pods created, then status-like label patches and a few deletes
and re-creates, so each revision holds a few hundred pods), opens the dashboard in headless
Chromium (Debian's /usr/bin/chromium through Playwright) at 1280x720, and scrubs to `--positions`
revisions spread over the whole window in shuffled order (logged in as the cluster admin with
a one-time code, as `runcluster` prints). Each figure is from the scrubber asking
for revision N (`window.kubeKitchen.timeline.goTo(N)`) to the end of the animation frame that drew
every panel at N: the dashboard's request to the hub, the hub's read at N from the log, the view
models, the page's model and its renderers. It checks each drawn state (the page's revision is N,
its pod count is what the hub's read at N holds).

Prints one JSON line on stdout (`scrub_p50_ms`, `scrub_p95_ms`, `scrub_max_ms`, `target_ms`: 300,
`window`, the pods drawn); progress on stderr. The hub and the browser are stopped on every exit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Connection, Hub, emit, http_json, latency_summary, log, percentile  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
PODS = "/api/v1/namespaces/default/pods"


def pod(name: str) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "pasta"}},
                       "spec": {"containers": [{"name": "c", "image": "nginx"}]}}).encode()


async def fill(hub: Hub, entries: int, pods: int, clients: int = 8) -> None:
    """`entries` writes: `pods` creates, then patches (and every 50th a delete and re-create)."""
    names = [f"pasta-{i:04d}" for i in range(pods)]
    plan: list[tuple[str, str, bytes, str, int]] = [("POST", PODS, pod(n), "application/json", i) for i, n in enumerate(names)]
    step = 0
    while len(plan) < entries:
        index = step % pods
        name = names[index]
        if step % 50 == 49:
            plan += [("DELETE", f"{PODS}/{name}", b"", "application/json", index),
                     ("POST", PODS, pod(name), "application/json", index)]
        else:
            patch = json.dumps({"metadata": {"labels": {"step": str(step)}}}).encode()
            plan.append(("PATCH", f"{PODS}/{name}", patch, "application/merge-patch+json", index))
        step += 1
    plan = plan[:entries]
    creates, rest = plan[:pods], plan[pods:]

    async def run(part: list, connection: Connection) -> None:
        for method, path, body, content_type, _ in part:
            code, answer = await connection.request(method, path, body, content_type)
            if code >= 300:
                raise RuntimeError(f"{method} {path}: {code} {answer[:200]!r}")

    connections = [await Connection(hub.host, hub.port).open() for _ in range(clients)]
    try:
        await asyncio.gather(*(run(creates[i::clients], c) for i, c in enumerate(connections)))
        # A pod's writes stay in order: each pod's patches go through one connection.
        by_client: list[list] = [[] for _ in range(clients)]
        for item in rest:
            by_client[item[4] % clients].append(item)
        await asyncio.gather(*(run(part, c) for part, c in zip(by_client, connections)))
    finally:
        for connection in connections:
            connection.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--pods", type=int, default=300)
    parser.add_argument("--positions", type=int, default=20)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    env = {"KK_LOG_MAX_ENTRIES": str(args.entries * 2), "KK_LOG_MAX_AGE": "86400"}
    with Hub(env=env) as hub:
        log(f"filling the log with {args.entries} writes ({args.pods} pods)…")
        asyncio.run(fill(hub, args.entries, args.pods))
        window = http_json(f"{hub.url}/kubekitchen/snapshot")["window"]
        log(f"window {window}")
        positions = [window["oldest"] + round(i * (window["newest"] - window["oldest"]) / (args.positions - 1))
                     for i in range(args.positions)]
        positions = [max(p, window["oldest"] + args.pods) for p in positions]  # every pod created
        random.Random(14).shuffle(positions)
        expected = {p: len(http_json(f"{hub.url}/kubekitchen/snapshot?resourceVersion={p}")["objects"]["pods"])
                    for p in positions}
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                page.goto(hub.login_url("/"))  # the dashboard needs a login (authentication is on)
                page.wait_for_function("() => window.kubeKitchen.model.revision !== null", timeout=60_000)
                page.evaluate(f"window.kubeKitchen.timeline.goTo({positions[0]})")  # warm: code paths, connections
                seconds, drawn = [], []
                for position in positions:
                    took = page.evaluate("""async (n) => {
                        const t0 = performance.now();
                        await window.kubeKitchen.timeline.goTo(n);
                        return performance.now() - t0; }""", position)
                    state = page.evaluate("""() => ({ revision: window.kubeKitchen.model.revision,
                        pods: document.querySelectorAll('.pod[data-name]').length })""")
                    if state["revision"] != position or state["pods"] != expected[position]:
                        raise RuntimeError(f"at {position}: drew {state}, the hub holds {expected[position]} pods")
                    seconds.append(took / 1000)
                    drawn.append(state["pods"])
                    log(f"rv {position}: {took:.0f} ms, {state['pods']} pods")
            finally:
                browser.close()
    summary = latency_summary(seconds, "scrub_")
    summary["scrub_p95_ms"] = round(percentile(sorted(seconds), 95) * 1000, 3)
    emit({"benchmark": "timeline_scrub", "entries": args.entries, "window": window, "positions": len(positions),
          **summary, "target_ms": 300, "pods_drawn_min": min(drawn), "pods_drawn_max": max(drawn)})


if __name__ == "__main__":
    main()
