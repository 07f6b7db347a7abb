"""How far a code guesser gets at the front door: wrong codes fired as fast as one client can at
`POST /join/`, `POST /login/` and `GET /join/<code>/kubeconfig` of a real hub with one provisioned
attendee, each endpoint from its own loopback address (127.0.0.11, .12, .13: the throttle counts
per address). Then the right code from a guesser's address, and from a fresh one.

One command: `.venv/bin/python bench/front_door.py [--guesses 900]`; one JSON line: per endpoint
the guesses sent, how many were refused as wrong (401/404), held back (429, with the first
`Retry-After`) or other, the attempt the first 429 came at, guesses per second; and the status of
the right code from the flooding address and from an untouched one.
"""

from __future__ import annotations

import argparse
import re
import time
from collections import Counter
from typing import Any, Callable

import httpx

from common import Hub, emit, log

CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def client_from(address: str, base: str) -> httpx.Client:
    return httpx.Client(base_url=base, transport=httpx.HTTPTransport(local_address=address), timeout=30)


def form(client: httpx.Client, page: str) -> Callable[[dict[str, str]], httpx.Response]:
    """A poster for the form on `page` with this client's CSRF token (a browser's cookie and field)."""
    token = CSRF.search(client.get(page).text).group(1)

    def post(fields: dict[str, str]) -> httpx.Response:
        return client.post(page, data={"csrfmiddlewaretoken": token, **fields}, headers={"Referer": str(client.base_url) + page})
    return post


def flood(name: str, attempt: Callable[[int], httpx.Response], guesses: int) -> dict[str, Any]:
    statuses: Counter[str] = Counter()
    first_429, retry_after = None, None
    started = time.perf_counter()
    for n in range(1, guesses + 1):
        answer = attempt(n)
        kind = "wrong" if answer.status_code in (401, 404) else "held" if answer.status_code == 429 else str(answer.status_code)
        statuses[kind] += 1
        if kind == "held" and first_429 is None:
            first_429, retry_after = n, answer.headers.get("Retry-After")
    seconds = time.perf_counter() - started
    log(f"{name}: {dict(statuses)} in {seconds:.1f} s")
    return {"sent": guesses, "wrong": statuses["wrong"], "held_429": statuses["held"],
            "other": sum(v for k, v in statuses.items() if k not in ("wrong", "held")),
            "first_429_at": first_429, "retry_after": retry_after, "per_second": round(guesses / seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--guesses", type=int, default=900)
    args = parser.parse_args()
    from control import roster, workshop
    from control.auth import tokenfile

    with Hub() as hub:
        tokenfile.token_of(hub.dir, "alice", (workshop.ATTENDEES,))
        roster.write_kubeconfig(hub.dir, "alice", hub.url, "unused", b"")
        code = roster.join_code(hub.dir, "alice")
        figures: dict[str, Any] = {"guesses": args.guesses}
        with client_from("127.0.0.11", hub.url) as guesser:
            post = form(guesser, "/join/")
            figures["join_post"] = flood("POST /join/", lambda n: post({"code": f"WRONG{n:04d}"[-6:]}), args.guesses)
            figures["right_code_from_guesser"] = post({"code": code}).status_code
        with client_from("127.0.0.12", hub.url) as guesser:
            post = form(guesser, "/login/")
            figures["login_post"] = flood("POST /login/", lambda n: post({"code": f"WRONG{n:04d}"[-6:]}), args.guesses)
        with client_from("127.0.0.13", hub.url) as guesser:
            figures["kubeconfig_get"] = flood("GET /join/<code>/kubeconfig",
                                              lambda n: guesser.get(f"/join/W{n:05d}/kubeconfig"), args.guesses)
        with client_from("127.0.0.14", hub.url) as newcomer:
            figures["right_code_from_newcomer"] = form(newcomer, "/join/")({"code": code}).status_code
        emit(figures)


if __name__ == "__main__":
    main()
