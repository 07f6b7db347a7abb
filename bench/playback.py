"""Back to live: how long the page takes to show the live state again after slow motion or a pause
(issue 21 item 1: after x1/10 for a minute then x1, or Pause then Resume, live within 2 s).

    .venv/bin/python bench/playback.py [--slow-seconds 60] [--pause-seconds 20] [--rate 6] [--js-from REV]

Starts its own hub (temp data dir), opens the dashboard in headless Chromium (Debian's
/usr/bin/chromium through Playwright) at 1280x720 logged in as the cluster admin (a one-time code,
as `runcluster` prints), and feeds the page a workshop's pace through the live path the
websocket's messages take (`window.kubeKitchen.timeline.offer`): `--rate` pod changes a second,
each with the request that wrote it, and a Lease heartbeat every second. Revisions start far above
the hub's, so the idle hub's own changes are ignored meanwhile.

Figures: the changes held after `--slow-seconds` at x1/10 and the seconds from choosing x1 until
the page is live (nothing held, the badge says live); the same for Pause, `--pause-seconds`,
Resume; `null` when it was not live within `--limit` seconds, with what still waited then.
`--js-from REV` serves the stage bar's modules (playback.js, timeline.js) as they were at git
revision REV: the previous code's figures beside the current ones.

Prints one JSON line on stdout; progress on stderr. The hub and the browser are stopped on every exit.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Hub, emit, log, stop_on_sigterm  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
TARGET_S = 2.0
STAGE_MODULES = ("playback", "timeline")

# The load, installed once: `rate` pod changes a second and a Lease renewal every second.
LOAD = """({rate}) => {
  const kk = window.kubeKitchen;
  let rv = 1e9;  // far above the hub's revisions: the real feed's changes are ignored meanwhile
  let n = 0;
  const pod = (i) => ({rv: ++rv, type: "MODIFIED", resource: "pods", kind: "Pod", ns: "load", name: `p-${i % 30}`,
    actor: "kube-controller-manager", vm: {key: `load/p-${i % 30}`, ns: "load", name: `p-${i % 30}`, node: "node-1",
      phase: "Running", status: "Running", ready: i % 2 === 0, restarts: 0}});
  setInterval(() => {
    const item = pod(n++);
    kk.timeline.offer({t: "changes", items: [item], revision: item.rv});
    kk.timeline.offer({t: "traffic", records: [{type: "request", who: "kube-controller-manager", verb: "update",
      resource: "pods", namespace: "load", name: item.name, code: 200, latency_ms: 1, ts: Date.now() / 1000}]});
  }, 1000 / rate);
  setInterval(() => {
    const lease = {rv: ++rv, type: "MODIFIED", resource: "leases", kind: "Lease", ns: "kube-node-lease", name: "node-1",
      actor: "kubelet/node-1", vm: null};
    kk.timeline.offer({t: "changes", items: [lease], revision: lease.rv});
  }, 1000);
}"""

LIVE = "window.kubeKitchen.timeline.badge().state === 'live' && window.kubeKitchen.timeline.live.held.length === 0"


def seconds_until_live(page: Any, limit: float) -> float | None:
    started = time.monotonic()
    while time.monotonic() - started < limit:
        if page.evaluate(LIVE):
            return round(time.monotonic() - started, 2)
        time.sleep(0.05)
    return None


def waiting(page: Any) -> int:
    return page.evaluate("window.kubeKitchen.timeline.live.waiting")


def serve_stage_from(page: Any, revision: str) -> None:
    """Serve the stage bar's modules as they were at `revision` (the previous code)."""
    for name in STAGE_MODULES:
        body = subprocess.run(["git", "-C", str(ROOT), "show", f"{revision}:static/dashboard/{name}.js"],
                              check=True, capture_output=True, text=True).stdout
        page.route(f"**/static/dashboard/{name}.js*",
                   (lambda text: lambda route, *_: route.fulfill(body=text, content_type="text/javascript"))(body))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--slow-seconds", type=float, default=60)
    parser.add_argument("--pause-seconds", type=float, default=20)
    parser.add_argument("--rate", type=float, default=6)
    parser.add_argument("--limit", type=float, default=30, help="give up waiting for live after this many seconds")
    parser.add_argument("--js-from", default="", help="git revision whose stage-bar modules the page runs")
    args = parser.parse_args()
    stop_on_sigterm()
    from playwright.sync_api import sync_playwright

    figures: dict[str, Any] = {"bench": "playback", "rate_changes_per_s": args.rate, "target_s": TARGET_S,
                               "js_from": args.js_from or "working tree"}
    with Hub() as hub, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
            if args.js_from:
                serve_stage_from(page, args.js_from)
            page.goto(hub.login_url("/"))
            page.wait_for_function("() => window.kubeKitchen && window.kubeKitchen.model.revision !== null")
            page.evaluate(LOAD, {"rate": args.rate})

            log(f"x1/10 for {args.slow_seconds} s…")
            page.select_option("#tl-speed", "0.1")
            time.sleep(args.slow_seconds)
            figures["slow_waiting"] = waiting(page)
            page.select_option("#tl-speed", "1")
            figures["slow_then_x1_live_s"] = seconds_until_live(page, args.limit)
            figures["slow_then_x1_waiting_after"] = waiting(page)

            log(f"paused for {args.pause_seconds} s…")
            page.click("#tl-pause")
            time.sleep(args.pause_seconds)
            figures["pause_waiting"] = waiting(page)
            page.click("#tl-pause")
            figures["resume_live_s"] = seconds_until_live(page, args.limit)
            figures["resume_waiting_after"] = waiting(page)
        finally:
            browser.close()
    emit(figures)


if __name__ == "__main__":
    main()
