"""YAML flood: one attendee loops ~3 MB YAML bodies at the hub; another attendee's reads are timed.

    .venv/bin/python bench/yaml_flood.py [--senders 2] [--duration 15] [--quiet 3] [--max-bodies 200]

Starts its own hub (`manage.py runhub` on a loopback port, authentication on) and provisions two
attendees as `runcluster --attendees` does (`control.workshop.provision`: a namespace, a token,
RBAC and a join code each). The sender, `attendee-2`, in a process of its own, runs `--senders`
loops, each sending, in turn, the same YAML ConfigMap of 40,000 keys (~2.9 MB, under the 3 MiB
body limit, so it is decoded):
  - `configmap`: POST /api/v1/namespaces/attendee-2/configmaps (application/yaml);
  - `rolebinding`: the same YAML POSTed as a RoleBinding (refused: it names no role);
  - `form`: the dashboard's manifest form (/apply/), logged in with its join code.
It stops after `--duration` seconds or `--max-bodies` bodies, whichever comes first, and reports
its answers by target and status code. Meanwhile the measured attendee, `attendee-1`, sends
GET /api/v1/namespaces/attendee-1/configmaps and, on its own connection, GET /healthz, each
sequentially: their p50/p99/max, with the hub quiet (`--quiet` seconds) and during the flood.
Targets: during the flood, GET p99 <= 100 ms and /healthz p99 <= 50 ms. One JSON line on stdout,
progress on stderr; every process it starts is stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Hub, emit, latency_summary, log, stop_process  # noqa: E402

from control import config  # noqa: E402
from front_door import CSRF  # noqa: E402  (the login form's token, as the front-door bench reads it)

import httpx  # noqa: E402

TARGETS = {"get_p99_ms": 100, "healthz_p99_ms": 50}
SENDER, MEASURED = "attendee-2", "attendee-1"
KEYS = 40_000


def big_configmap_yaml(name: str = "flood") -> str:
    """The issue's body: a ConfigMap of 40,000 keys, ~2.9 MB of YAML (in the sender's namespace,
    which the form needs: it applies to `default` otherwise)."""
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata:", f"  name: {name}", f"  namespace: {SENDER}", "data:"]
    lines += [f"  key-{i:05d}: \"{'v' * 56}\"" for i in range(KEYS)]
    return "\n".join(lines) + "\n"


def as_rolebinding(text: str) -> str:
    return text.replace("apiVersion: v1\nkind: ConfigMap",
                        "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding", 1)


# --- the measured attendee -----------------------------------------------------------------------

async def timed_loop(client: httpx.AsyncClient, path: str, until: float) -> tuple[list[float], dict[str, int]]:
    times: list[float] = []
    codes: dict[str, int] = {}
    while time.perf_counter() < until:
        started = time.perf_counter()
        try:
            code = str((await client.get(path)).status_code)
        except httpx.HTTPError as exc:
            code = type(exc).__name__
        times.append(time.perf_counter() - started)
        codes[code] = codes.get(code, 0) + 1
    return times, codes


async def measure(url: str, token: str, seconds: float) -> dict[str, Any]:
    headers = {"User-Agent": "kubectl/v1.32.0", "Authorization": f"Bearer {token}"}
    until = time.perf_counter() + seconds
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as reads, \
            httpx.AsyncClient(base_url=url, headers={"User-Agent": "probe/1.0"}, timeout=60) as probes:
        (gets, get_codes), (healthz, healthz_codes) = await asyncio.gather(
            timed_loop(reads, f"/api/v1/namespaces/{MEASURED}/configmaps", until),
            timed_loop(probes, "/healthz", until))
    return {"get": {**latency_summary(gets), "codes": get_codes},
            "healthz": {**latency_summary(healthz), "codes": healthz_codes}}


# --- the sender (a process of its own) -----------------------------------------------------------

def logged_in_browser(url: str, code: str) -> tuple[httpx.AsyncClient, str]:
    """A dashboard session for the sender: its join code logs it in on the login form's confirm
    (a CSRF-checked POST, as a browser sends it); the CSRF token from its cookie."""
    with httpx.Client(base_url=url, timeout=60, follow_redirects=True) as browser:
        form = browser.get("/login/", params={"code": code, "next": "/"})
        token = CSRF.search(form.text)
        page = browser.post("/login/", data={"csrfmiddlewaretoken": token.group(1) if token else "", "code": code,
                                             "next": "/"}, headers={"Referer": f"{url}/login/"})
        if page.status_code != 200 or "/login/" in str(page.url):
            raise RuntimeError(f"login with the join code answered {page.status_code} at {page.url}")
        cookies = dict(browser.cookies.items())
    return httpx.AsyncClient(base_url=url, cookies=cookies, timeout=120), cookies.get("csrftoken", "")


async def send(url: str, token: str, code: str, senders: int, seconds: float, max_bodies: int) -> dict[str, Any]:
    text = big_configmap_yaml()
    bodies = {"configmap": (f"/api/v1/namespaces/{SENDER}/configmaps", text.encode()),
              "rolebinding": (f"/apis/rbac.authorization.k8s.io/v1/namespaces/{SENDER}/rolebindings",
                              as_rolebinding(text).encode())}
    api = httpx.AsyncClient(base_url=url, timeout=120, headers={
        "User-Agent": "flood/1.0", "Authorization": f"Bearer {token}", "Content-Type": "application/yaml"})
    browser, csrf = logged_in_browser(url, code)
    answers: dict[str, dict[str, int]] = {}
    latencies: dict[str, list[float]] = {}
    sent = 0
    until = time.perf_counter() + seconds

    async def loop(first: int) -> None:
        nonlocal sent
        turn = first
        while time.perf_counter() < until and sent < max_bodies:
            sent += 1
            target = ("configmap", "rolebinding", "form")[turn % 3]
            turn += 1
            started = time.perf_counter()
            try:
                if target == "form":
                    answer = await browser.post("/apply/", data={"manifest": text}, headers={"X-CSRFToken": csrf})
                else:
                    path, body = bodies[target]
                    answer = await api.post(path, content=body)
                code = str(answer.status_code)
            except httpx.HTTPError as exc:  # the server dropped the connection: counted, not fatal
                code = type(exc).__name__
            latencies.setdefault(target, []).append(time.perf_counter() - started)
            by_code = answers.setdefault(target, {})
            by_code[code] = by_code.get(code, 0) + 1

    try:
        await asyncio.gather(*(loop(i) for i in range(senders)))
    finally:
        await api.aclose()
        await browser.aclose()
    return {"bodies": sent, "body_bytes": len(text.encode()), "answers": answers,
            "latency": {k: latency_summary(v) for k, v in latencies.items()}}


# --- the run -------------------------------------------------------------------------------------

def run(hub: Hub, args: argparse.Namespace) -> dict[str, Any]:
    from control import workshop
    from control.auth import tokenfile

    codes = workshop.provision(hub.url, hub.dir, [MEASURED, SENDER])
    tokens = {name: tokenfile.token_of(hub.dir, name, (workshop.ATTENDEES,)) for name in (MEASURED, SENDER)}
    log("quiet hub: measuring")
    quiet = asyncio.run(measure(hub.url, tokens[MEASURED], args.quiet))
    # the sender's token in its environment, not on its command line (ps shows that)
    sender = subprocess.Popen([sys.executable, __file__, "--send", hub.url, "--senders", str(args.senders),
                               "--duration", str(args.duration), "--max-bodies", str(args.max_bodies)],
                              stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "KK_BENCH_TOKEN": tokens[SENDER], "KK_BENCH_CODE": codes[SENDER]})
    try:
        time.sleep(1.0)  # the first bodies are on their way
        log("flood under way: measuring")
        during = asyncio.run(measure(hub.url, tokens[MEASURED], max(1.0, args.duration - 2.0)))
        out, _ = sender.communicate(timeout=args.duration + 300)
    finally:
        stop_process(sender)
    flood = json.loads(out)
    return {"quiet": quiet, "during_flood": during, "flood": flood,
            "targets": TARGETS,
            "met": {"get_p99_ms": during["get"].get("p99_ms", 1e9) <= TARGETS["get_p99_ms"],
                    "healthz_p99_ms": during["healthz"].get("p99_ms", 1e9) <= TARGETS["healthz_p99_ms"]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--senders", type=int, default=2)
    parser.add_argument("--duration", type=float, default=15.0)
    parser.add_argument("--quiet", type=float, default=3.0)
    parser.add_argument("--max-bodies", type=int, default=200)
    parser.add_argument("--send", default="", help=argparse.SUPPRESS)  # the sender process's role
    args = parser.parse_args()
    if args.send:
        figures = asyncio.run(send(args.send, config.given("KK_BENCH_TOKEN"), config.given("KK_BENCH_CODE"),
                                   args.senders, args.duration, args.max_bodies))
        print(json.dumps(figures), flush=True)
        return
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")
    figures: dict[str, Any] = {"bench": "yaml_flood", "settings": {
        "senders": args.senders, "duration": args.duration, "quiet": args.quiet, "max_bodies": args.max_bodies,
        "sender": SENDER, "measured": MEASURED}}
    with Hub() as hub:
        figures.update(run(hub, args))
    emit(figures)


if __name__ == "__main__":
    main()
