"""Workshop: a room of simulated attendees on one hub (or several hubs sharing PostgreSQL and Redis).

    .venv/bin/python bench/workshop.py [--attendees 30] [--minutes 5] [--hubs 1] [--auth on|off|both]
                                       [--lessons on|off] [--nodes 3] [--loop-connections 4]
                                       [--profile FILE] [--keep]

A cluster of its own (hub(s), controller-manager, scheduler, `--nodes` kubelets, all processes
talking HTTP), provisioned as `runcluster --attendees N` does (`control.workshop.provision`: a
namespace, a token, RBAC, quota and limits each), plus one more attendee, the runaway. Each of the
N attendees, with their own token and on their own hub (attendee i on hub i mod K, as their
kubeconfig would name it):
- applies a Deployment `web` of 5 pods (busybox) in their namespace and waits for it;
- holds a watch on their namespace's pods and a dashboard websocket (`/ws/live/`, logged in with
  their join code, reading the snapshot, changes and traffic the page would get);
- every 2 s makes a mutating request, in turn: scale `web` (3↔2, the scale subresource), delete one
  of its pods, exec `echo hi` in one (WebSocket, v5.channel.k8s.io, until the Success Status);
- with `--lessons on` (the default, with authentication on) also walks the lessons in their browser
  through the dashboard's own endpoints, logged in with their join code on the login form's confirm
  (`workshop_lessons`: each step, its check polled every 3 s, its "Do it"), while the instructor's
  page is open: an admin websocket on `/ws/live/` reading everything and the Attendees board asking
  `/lessons/progress/` every 3 s.
The window is `--minutes` long; in its second half the runaway attendee runs a tight loop of lists
of their own pods on `--loop-connections` connections (answers counted by code: 429 is fairness).

Figures (one JSON line on stdout, progress on stderr), with their targets beside them:
- `mutating`: latency of every mutating request (exec: connect to Success), all, before and during
  the loop, per kind; target p99 <= 1000 ms (Kubernetes' SLO), for everyone incl. during the loop.
  Non-2xx answers are counted apart (`mutating_failed`, by code) and their latency is in too.
- `watch_delivery`: for each delete, the time from its response to the arrival of the event with
  the response's resourceVersion on that attendee's watch (0 when it came first); target p99 <= 200
  ms. `watch_missed`: deletes whose event never came.
- `dashboard_lessons`: latency and count per kind of dashboard call (step, check, "Do it",
  progress), `errors` by kind and code apart from `intended_refusals` (the code a step's button is
  meant to answer, e.g. lesson 18's 403, 8's 410, 7's 409); target: no unintended errors; the "Do
  it" posts count in the mutating p99 target. `do_slowest_steps`: the five "Do it" steps (lesson/
  step) with the slowest answers, each with its latencies.
- `hub_cpu_pct_per_attendee`: hub CPU seconds / wall seconds / N as % of one core (the whole window,
  runaway included; `_quiet`: its first half, before the runaway), and `cores_for_100` from it.
  `--profile FILE`: py-spy's raw (collapsed) profile of the first hub during the window.
- `hub_rss_mb`: the hub processes' RSS (summed) with the cluster idle (before any attendee) and at
  the end; `hub_mb_per_attendee` = the growth / N; target <= 20.
- `hub_cpu_ms_per_request`: the hub processes' CPU over each half of the window divided by the
  requests the hubs answered in it (`hub_requests`: their traffic records, spokes' requests too,
  as the instructor's dashboard receives them: an attendee's gets only their own), before and during the loop;
  `hub_requests_top`: the most frequent (client, verb, resource) of those records over the whole run;
  `hub_rules_reviews`: how many of them were SelfSubjectRulesReviews (the dashboard's pages asking
  what their viewer may see: once per namespace met, again only when the traffic says RBAC changed).
  Authorization's cost is `hub_cpu_ms_per_request` with `--auth on` against `--auth off` (`--auth
  both` runs the room twice and prints `auth_cpu_overhead_pct`; target <= 10 %). `--auth off` runs the hub with
  KK_AUTHENTICATION=off (then every request is one user to fairness, so latencies during the loop
  are not comparable).
`--hubs K` > 1: K `runhub` processes on a PostgreSQL database of its own (made on
`--postgres`, dropped at the end) and the Redis channel layer (`--redis`, its own database number),
spokes on the first hub.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import emit, latency_summary, log, machine_busy_seconds, stop_on_sigterm  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")

from control import roster, workshop  # noqa: E402
from control.auth import tokenfile  # noqa: E402
from workshop_lessons import POLL, Walker, login, summary  # noqa: E402
from workshop_room import INTERVAL, REPLICAS, RUNAWAY, Attendee, Room, runaway  # noqa: E402

TARGETS = {"mutating_p99_ms": 1000, "watch_delivery_p99_ms": 200, "hub_mb_per_attendee": 20,
           "auth_cpu_overhead_pct": 10}


# --- the run ------------------------------------------------------------------------------------------

async def run(room: Room, count: int, minutes: float, loop_connections: int, auth: bool,
              lessons: bool = True) -> dict[str, Any]:
    names = [f"attendee-{i}" for i in range(1, count + 1)]
    idle_rss = room.rss_mb()
    log(f"idle cluster: hub RSS {idle_rss} MB; provisioning {count} attendees and the runaway")
    codes = await asyncio.to_thread(workshop.provision, room.first.url, room.data, [*names, RUNAWAY])
    urls = [hub.url for hub in room.hubs]

    def token(name: str) -> str:
        return tokenfile.token_of(room.data, name, (workshop.ATTENDEES,)) if auth else ""

    attendees = [Attendee(name, urls[i % len(urls)], token(name), codes[name], auth) for i, name in enumerate(names)]
    # The hub's requests are counted on the instructor's page: an attendee's receives only their own.
    instructor = Attendee("instructor", urls[0], tokenfile.admin_token(room.data) if auth else "",
                          roster.instructor_code(room.data) if auth else "", auth)
    instructor.counts_requests = True
    await asyncio.gather(*(a.deploy() for a in attendees))
    deadline = time.monotonic() + 60 + 3 * count
    while not all(await asyncio.gather(*(a.ready() for a in attendees))):
        if time.monotonic() > deadline:
            raise RuntimeError("the attendees' Deployments did not become ready in time")
        await asyncio.sleep(1.0)
    log("every Deployment ready; browsers log in; watches and dashboards open")
    if auth:
        for person in (*attendees, instructor):
            person.cookies = await asyncio.to_thread(login, person.url, person.code)
    walkers = [Walker(a.name, a.url, a.cookies) for a in attendees] if lessons else []
    board = Walker("instructor", instructor.url, instructor.cookies)
    stop, stop_threads = asyncio.Event(), threading.Event()
    executor = ThreadPoolExecutor(max_workers=2 * count + 8)
    watches = [asyncio.ensure_future(a.watch(stop)) for a in attendees]
    dashboards = [threading.Thread(target=a.dashboard, args=(stop_threads,), daemon=True)
                  for a in (*attendees, instructor)]
    for thread in dashboards:
        thread.start()
    await asyncio.sleep(3.0)  # the snapshots are in, the watches open
    window = 60 * minutes
    start, wall_start = time.monotonic(), time.time()
    loop_from, until = start + window / 2, start + window
    marks = (wall_start, wall_start + window / 2, wall_start + window)  # the hub's records carry wall time
    cpu0, machine0 = room.cpu_s(), machine_busy_seconds()
    spy = profiler(room.first.pid, window) if PROFILE else None
    runaway_task = asyncio.ensure_future(runaway(urls[-1], token(RUNAWAY), loop_connections, loop_from, until))
    acting = asyncio.gather(*(a.act(until, loop_from, executor, INTERVAL * i / count) for i, a in enumerate(attendees)),
                            *(w.walk(until, POLL * i / count) for i, w in enumerate(walkers)),
                            *([board.board(until)] if lessons else []))
    await asyncio.sleep(max(0.0, loop_from - time.monotonic()))
    cpu_half = room.cpu_s()
    log(f"half time: the runaway's loop starts ({loop_connections} connections)")
    await acting
    loop_codes = await runaway_task
    cpu1, machine1 = room.cpu_s(), machine_busy_seconds()
    if spy is not None:
        await asyncio.to_thread(spy.wait)
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
    for w in (*walkers, board):
        await w.close()
    served = instructor.request_times
    hub_requests = (sum(1 for ts in served if marks[0] <= ts < marks[1]), sum(1 for ts in served if marks[1] <= ts < marks[2]))
    out = figures(attendees, loop_codes, idle_rss, end_rss, (cpu0, cpu_half, cpu1), wall, machine1 - machine0,
                  count, hub_requests, instructor.request_mix)
    if lessons:
        out["dashboard_lessons"] = summary([*walkers, board], latency_summary)
        do = out["dashboard_lessons"]["calls"].get("lesson_do", {})
        out["targets_met"]["mutating_p99"] &= do.get("p99_ms", 0) <= TARGETS["mutating_p99_ms"]
        out["targets_met"]["no_unintended_errors"] = not out["dashboard_lessons"]["errors"] and not out["mutating_failed"]
    return out


PROFILE = ""  # --profile: where py-spy writes the first hub's profile of the window (raw, collapsed stacks)


def profiler(pid: int, seconds: float) -> subprocess.Popen:
    """py-spy sampling the first hub for the window (it may read another process's memory: root)."""
    spy = Path(sys.executable).with_name("py-spy")
    return subprocess.Popen([str(spy), "record", "--pid", str(pid), "--duration", str(int(seconds)), "--rate", "50",
                             "--format", "raw", "--nonblocking", "-o", PROFILE],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def figures(attendees: list[Attendee], loop_codes: dict[str, int], idle_rss: float, end_rss: float,
            cpu: tuple[float, float, float], wall: float, machine_busy: float, count: int,
            hub_requests: tuple[int, int], request_mix: dict[str, int] | None = None) -> dict[str, Any]:
    every = [x for a in attendees for x in a.latencies]
    request_mix = request_mix or {}
    failed: dict[str, int] = {}
    for kind, _, _, code in every:
        if (code >= 300 or code == 0) and code != 101:  # 0: no answer (a broken connection)
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
        "mutating_failed_samples": [r for a in attendees for r in a.refusals][:8],
        "mutating_p99_ms_worst_attendee": max(per_attendee_p99, default=None),
        "watch_delivery": delivery, "watch_missed": missed, "watch_breaks": sum(a.watch_breaks for a in attendees),
        "runaway_answers": loop_codes,
        "hub_rss_mb": {"idle": idle_rss, "end": end_rss}, "hub_mb_per_attendee": growth,
        "hub_requests": {"quiet": quiet_requests, "during_loop": loop_requests},
        "hub_requests_top": dict(sorted(request_mix.items(), key=lambda kv: -kv[1])[:15]),
        "hub_rules_reviews": sum(n for key, n in request_mix.items() if key.endswith(" selfsubjectrulesreviews")),
        "hub_cpu_ms_per_request": {
            "quiet": round(1000 * cpu_quiet / quiet_requests, 3) if quiet_requests else None,
            "during_loop": round(1000 * cpu_loop / loop_requests, 3) if loop_requests else None},
        "hub_cpu_pct": round(100 * (cpu[2] - cpu[0]) / wall, 1),
        # what one attendee costs the hub, as a share of one core, and what a room of 100 needs
        "hub_cpu_pct_per_attendee": round(100 * (cpu[2] - cpu[0]) / wall / count, 2),
        "hub_cpu_pct_per_attendee_quiet": round(100 * cpu_quiet / (wall / 2) / count, 2),  # before the runaway
        "cores_for_100": round((cpu[2] - cpu[0]) / wall / count * 100, 2),
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
    parser.add_argument("--auth", choices=("on", "off", "both"), default="on",
                        help="both: the run with authorization on, then off, and its CPU overhead per request")
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--loop-connections", type=int, default=4)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres",
                        help="where the --hubs K>1 shape makes (and drops) a database of its own")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13",
                        help="the channel layer of the --hubs K>1 shape (a database number of its own)")
    parser.add_argument("--lessons", choices=("on", "off"), default="on",
                        help="attendees also walk the lessons in their browser, the instructor's board open (needs --auth on)")
    parser.add_argument("--profile", default="", help="py-spy's raw profile of the first hub during the window, to this file")
    parser.add_argument("--keep", action="store_true", help="keep the data folder (the hubs' and spokes' logs)")
    args = parser.parse_args()
    stop_on_sigterm()
    global PROFILE
    PROFILE = args.profile
    result: dict[str, Any] = {"bench": "workshop", "settings": {
        "attendees": args.attendees, "minutes": args.minutes, "hubs": args.hubs, "auth": args.auth,
        "nodes": args.nodes, "lessons": args.lessons, "loop_connections": args.loop_connections, "interval_s": INTERVAL, "replicas": REPLICAS}}
    if args.auth != "both":
        result.update(one_room(args, args.auth == "on"))
    else:  # the same room twice, authorization on then off: what it costs per request
        runs = {mode: one_room(args, mode == "on") for mode in ("on", "off")}
        result.update({f"auth_{mode}": figures for mode, figures in runs.items()})
        per = {mode: figures.get("hub_cpu_ms_per_request") or {} for mode, figures in runs.items()}
        overhead = {phase: round(100 * (per["on"][phase] / per["off"][phase] - 1), 1)
                    for phase in ("quiet", "during_loop") if per["on"].get(phase) and per["off"].get(phase)}
        result["auth_cpu_overhead_pct"] = overhead
        result["auth_cpu_overhead_met"] = bool(overhead) and max(overhead.values()) <= TARGETS["auth_cpu_overhead_pct"]
    emit(result)


def one_room(args: argparse.Namespace, auth: bool) -> dict[str, Any]:
    """Start the room, run the attendees, stop everything: the figures (or the error)."""
    out: dict[str, Any] = {}
    room = Room(args.hubs, args.nodes, auth, args.postgres, args.redis, args.keep)
    try:
        room.start()
        out.update(asyncio.run(run(room, args.attendees, args.minutes, args.loop_connections, auth,
                                   args.lessons == "on" and auth)))
        dead = room.first.dead_spokes()
        if dead:
            out["dead_spokes"] = dead
    except (Exception, KeyboardInterrupt) as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
        log(f"error: {out['error']}")
    finally:
        room.stop()
    return out


if __name__ == "__main__":
    main()
