"""The dashboard page under load for a long time: 1,000 pods and 200 changes/s with the timeline
recording, event→paint latency and the tab's memory over `--minutes` (issue 14's target: p95 ≤
100 ms, memory flat over 30 minutes).

    .venv/bin/python bench/page.py [--minutes 30] [--pods 1000] [--rate 200] [--sample-seconds S]

Starts its own hub (temp data dir), opens the dashboard in headless Chromium (Debian's
/usr/bin/chromium through Playwright) at 1280x720 logged in as the cluster admin (a one-time
code, as `runcluster` prints), shows every change in the version log (quiet off), and feeds the
page a synthetic load through the live path the websocket's messages take
(`window.kubeKitchen.timeline.offer`: the stage bar's playback, which also keeps the traffic for a
recording, then the model and every renderer): a snapshot of `--pods` pods on 3 nodes, then every
50 ms a batch of `--rate`/20 pod changes and the requests that wrote them. Revisions start far above
the hub's, so the idle hub's own changes are ignored meanwhile, as in the browser test.

Figures:
- event→paint: from handing a batch to the page to the end of the animation frame that drew it
  (a message posted from a requestAnimationFrame callback registered after the batch arrived is
  handled after that frame's draw and paint), p50/p95/max over the whole run, and the p95 of
  each interval between two samples (a page that slows down over time shows it there).
- memory: every `--sample-seconds`, the load pauses (no batch in flight), a full GC is forced
  (CDP HeapProfiler.collectGarbage), and CDP Performance.getMetrics gives the JS heap in use,
  DOM nodes (attached or not), event listeners and documents; the attached elements are counted
  in the page, and the renderer process's resident memory read from /proc. Slopes are least
  squares in MB (or nodes) per 10 minutes, over every sample and over the steady part (after
  the page's bounded buffers are full: the version log's ring and the timeline's traffic kept
  for a recording); "flat" is the steady slope against `target_heap_slope_mb_per_10min`.
- beside them: the share of the page's main thread spent in tasks, scripts, style and layout
  (CDP metrics), the pace achieved, and the machine's load average (a busy machine is slower).

Prints one JSON line on stdout, targets beside figures; progress on stderr. The hub and the
browser are stopped on every exit.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Hub, emit, log, memory_kb, percentile, stop_on_sigterm  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
TARGET_P95_MS = 100
TARGET_SLOPE_MB = 1.0  # "flat": the steady heap grows less than this per 10 minutes
TARGET_NODES_SLOPE = 100  # and the DOM keeps its size (a few hundred nodes churn with the dots)
# Where the page's main thread spent its time (seconds, cumulative; CDP Performance.getMetrics).
BUSY = ("TaskDuration", "ScriptDuration", "RecalcStyleDuration", "LayoutDuration")

# The load, installed once; runs until stopped. `hold` pauses it for a sample (no batch in flight).
LOAD = """({pods, rate}) => {
  const kk = window.kubeKitchen;
  const base = 1e9;  // far above the hub's revisions: the real feed's changes are ignored meanwhile
  const vm = (i, rv) => ({key: `load/p-${i}`, ns: "load", name: `p-${i}`, node: `node-${(i % 3) + 1}`,
    phase: "Running", status: "Running", ready: rv % 2 === 0, restarts: rv % 5, terminating: false, ip: "",
    owner: "", crashing: false});
  const objects = {pods: [], nodes: [1, 2, 3].map((n) => ({key: `node-${n}`, ns: "", name: `node-${n}`,
    ready: true, unschedulable: false})), deployments: [], replicasets: [], services: [], endpoints: []};
  for (let i = 0; i < pods; i += 1) objects.pods.push(vm(i, 0));
  kk.timeline.offer({t: "snapshot", revision: base, objects, spokes: {}});
  const perBatch = Math.max(1, Math.round(rate / 20));
  const state = {latencies: [], sent: 0, changes: 0, hold: false, inFlight: 0, stopped: false, lagged: 0};
  // One channel for every measure: a message posted in a frame's rAF callback runs after that frame painted.
  const channel = new MessageChannel();
  const started = [];
  channel.port1.onmessage = () => { state.latencies.push(performance.now() - started.shift()); state.inFlight -= 1; };
  let rv = base;
  const batch = () => {
    const items = [];
    for (let j = 0; j < perBatch; j += 1) {
      rv += 1;
      const i = (rv * 7919) % pods;
      items.push({rv, type: "MODIFIED", resource: "pods", kind: "Pod", ns: "load", name: `p-${i}`,
                  actor: "kubelet/node-1", vm: vm(i, rv)});
    }
    const t0 = performance.now();
    kk.timeline.offer({t: "changes", items, revision: rv});
    kk.timeline.offer({t: "traffic", records: items.map((item) => ({type: "request", who: "kubelet/node-1",
      verb: "update", resource: "pods", code: 200, latency_ms: 1, ts: 0, seq: item.rv}))});
    state.inFlight += 1;
    started.push(t0);
    requestAnimationFrame(() => channel.port2.postMessage(0));
    state.sent += 1;
    state.changes += items.length;
  };
  // Paced by the clock, not by the timer: a late timer sends the batches it owes (at most 5 at once).
  let due = performance.now();
  const tick = () => {
    if (state.stopped) return;
    const now = performance.now();
    if (state.hold) due = now;
    let owed = 0;
    while (!state.hold && due <= now && owed < 5) { batch(); due += 50; owed += 1; }
    if (due < now - 1000) { state.lagged += Math.floor((now - due) / 50); due = now; }  // fell behind: counted
    setTimeout(tick, Math.max(0, due - performance.now()));
  };
  tick();
  window.__pageBench = {
    state,
    drain() { const out = state.latencies; state.latencies = []; return out; },
    stop() { state.stopped = true; },
  };
}"""

# What the page keeps, read at each sample (the bounded buffers, and what is drawn).
SIZES = """() => {
  const kk = window.kubeKitchen;
  return {chips: document.querySelectorAll(".pod").length, logRows: document.querySelectorAll("#log-list li").length,
    ring: kk.versionLog.ring.length, ringCapacity: kk.versionLog.ring.capacity,
    trafficKept: kk.timeline.traffic.length, dots: document.querySelectorAll("#dots circle").length,
    elements: document.getElementsByTagName("*").length, stories: kk.storyLine.narrator.stories.size,
    failures: kk.failures.items.length, revision: kk.model.revision};
}"""


def renderer_pids(root: int) -> list[int]:
    """Chromium's renderer processes started under this process (Playwright's driver, then the browser)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            todo.append(child)
            try:
                if b"--type=renderer" in (Path("/proc") / str(child) / "cmdline").read_bytes():
                    found.append(child)
            except OSError:
                pass
    return found


def slope_per_10min(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of (seconds, value) points, in value per 10 minutes."""
    if len(points) < 3:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if not sxx:
        return None
    return round(sum((x - mx) * (y - my) for x, y in points) / sxx * 600, 3)


def summary_ms(values: list[float]) -> dict[str, Any]:
    ordered = sorted(values)
    if not ordered:
        return {"n": 0}
    return {"n": len(ordered), "p50_ms": round(percentile(ordered, 50), 1), "p95_ms": round(percentile(ordered, 95), 1),
            "max_ms": round(ordered[-1], 1)}


def sample(page, cdp, started: float) -> dict[str, Any]:
    """Pause the load, wait for its last batch to be painted, force a GC, read the metrics, resume."""
    page.evaluate("window.__pageBench.state.hold = true")
    page.wait_for_function("() => window.__pageBench.state.inFlight === 0", timeout=30_000)
    cdp.send("HeapProfiler.collectGarbage")
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    sizes = page.evaluate(SIZES)
    latencies = page.evaluate("window.__pageBench.drain()")
    page.evaluate("window.__pageBench.state.hold = false")
    busy = {key: round(metrics[key], 3) for key in BUSY}
    # The tab's processes as the system sees them (the page's renderer; an extension-free headless
    # browser runs one per page here).
    rss_kb = sum(memory_kb(pid).get("VmRSS", 0) for pid in renderer_pids(os.getpid()))
    return {"t_s": round(time.monotonic() - started, 1), "heap_mb": round(metrics["JSHeapUsedSize"] / 2**20, 2),
            "busy": busy, "renderer_rss_mb": round(rss_kb / 1024, 1),
            "dom_nodes": int(metrics["Nodes"]), "listeners": int(metrics["JSEventListeners"]),
            "documents": int(metrics["Documents"]), **sizes, "latencies": latencies}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--rate", type=int, default=200, help="pod changes per second")
    parser.add_argument("--sample-seconds", type=float, default=None,
                        help="between memory samples (default: the run / 20, at least 10 s)")
    args = parser.parse_args()
    every = args.sample_seconds or max(10.0, args.minutes * 60 / 20)
    stop_on_sigterm()
    from playwright.sync_api import sync_playwright

    samples: list[dict[str, Any]] = []
    latencies: list[float] = []
    with Hub() as hub, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(hub.login_url("/"))
            page.wait_for_selector("#connection[data-state=connected]", timeout=60_000)
            page.wait_for_function("() => window.kubeKitchen.model.revision !== null", timeout=60_000)
            page.uncheck("#log-quiet")  # every change in the version log, as in the browser test
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")
            page.evaluate(LOAD, {"pods": args.pods, "rate": args.rate})
            started = time.monotonic()
            load_before = os.getloadavg()[0]  # the machine's load: figures on a busy machine are slower
            end = started + args.minutes * 60
            log(f"load on: {args.pods} pods, {args.rate} changes/s for {args.minutes} min, "
                f"a sample every {every:.0f} s")
            next_at = started
            while True:
                now = time.monotonic()
                if now < next_at:
                    time.sleep(min(next_at, end) - now)
                taken = sample(page, cdp, started)
                interval = taken.pop("latencies")
                taken["p95_ms"] = summary_ms(interval).get("p95_ms")
                latencies += interval
                samples.append(taken)
                log(f"{taken['t_s']:7.1f} s heap {taken['heap_mb']:.1f} MB (renderer {taken['renderer_rss_mb']} MB), "
                    f"{taken['dom_nodes']} nodes "
                    f"({taken['elements']} elements attached), {taken['listeners']} listeners, ring {taken['ring']}, "
                    f"traffic kept {taken['trafficKept']}, p95 so far {summary_ms(latencies).get('p95_ms')} ms")
                if time.monotonic() >= end:
                    break
                next_at = max(next_at + every, time.monotonic())
            state = page.evaluate("window.__pageBench.state.stopped = true, "
                                  "({sent: window.__pageBench.state.sent, changes: window.__pageBench.state.changes,"
                                  " lagged: window.__pageBench.state.lagged})")
            seconds = time.monotonic() - started
        finally:
            browser.close()
    print_figures(args, samples, latencies, state, seconds, errors, load_before, os.getloadavg()[0])


def print_figures(args, samples: list[dict[str, Any]], latencies: list[float], state: dict[str, Any],
                  seconds: float, errors: list[str], load_before: float, load_after: float) -> None:
    traffic_full = max((s["trafficKept"] for s in samples), default=0)
    # Steady: the ring and the timeline's traffic buffer stopped growing (both bounded).
    steady = [s for s in samples if s["ring"] >= s["ringCapacity"] and s["trafficKept"] >= traffic_full]
    heap = [(s["t_s"], s["heap_mb"]) for s in samples]
    nodes = [(s["t_s"], s["dom_nodes"]) for s in samples]
    step = max(1, len(samples) // 10)
    steady_slope = slope_per_10min([(s["t_s"], s["heap_mb"]) for s in steady])
    wall = samples[-1]["t_s"] - samples[0]["t_s"] or 1.0
    # The main thread's share of each second spent on tasks, scripts, style and layout.
    busy = {f"main_thread_{key[:-8].lower()}_pct":
            round(100 * (samples[-1]["busy"][key] - samples[0]["busy"][key]) / wall, 1) for key in BUSY}
    emit({
        "benchmark": "page_under_load", "minutes": args.minutes, "pods": args.pods, "rate_per_s": args.rate,
        "changes_sent": state["changes"], "achieved_rate_per_s": round(state["changes"] / seconds, 1),
        "batches_lagged": state["lagged"], "page_errors": errors[:5], **busy,
        "machine_load_1min": [round(load_before, 2), round(load_after, 2)], "cpus": os.cpu_count(),
        "event_to_paint": summary_ms(latencies), "target_p95_ms": TARGET_P95_MS,
        "heap_start_mb": samples[0]["heap_mb"], "heap_end_mb": samples[-1]["heap_mb"],
        "heap_max_mb": max(s["heap_mb"] for s in samples),
        "heap_slope_mb_per_10min": slope_per_10min(heap),
        "steady_from_s": steady[0]["t_s"] if steady else None, "steady_samples": len(steady),
        "heap_steady_slope_mb_per_10min": steady_slope,
        "target_heap_slope_mb_per_10min": TARGET_SLOPE_MB,
        "heap_flat": steady_slope is not None and steady_slope < TARGET_SLOPE_MB,
        "renderer_rss_start_mb": samples[0]["renderer_rss_mb"], "renderer_rss_end_mb": samples[-1]["renderer_rss_mb"],
        "renderer_rss_steady_slope_mb_per_10min": slope_per_10min([(s["t_s"], s["renderer_rss_mb"]) for s in steady]),
        "dom_nodes_start": samples[0]["dom_nodes"], "dom_nodes_end": samples[-1]["dom_nodes"],
        "dom_nodes_slope_per_10min": slope_per_10min(nodes),
        "dom_nodes_steady_slope_per_10min": slope_per_10min([(s["t_s"], s["dom_nodes"]) for s in steady]),
        "target_dom_nodes_slope_per_10min": TARGET_NODES_SLOPE,
        "listeners_start": samples[0]["listeners"], "listeners_end": samples[-1]["listeners"],
        "chips": samples[-1]["chips"], "log_rows": samples[-1]["logRows"], "ring": samples[-1]["ring"],
        "traffic_kept": samples[-1]["trafficKept"],
        "samples": [{k: s[k] for k in ("t_s", "p95_ms", "heap_mb", "renderer_rss_mb", "dom_nodes", "elements",
                                        "listeners", "trafficKept")}
                    for s in samples[::step] + ([samples[-1]] if (len(samples) - 1) % step else [])],
    })


if __name__ == "__main__":
    main()
