"""The lessons part of bench/workshop.py: a browser logged in with a join code as a person does it
(the confirm form of `GET /login/?code=`, then its CSRF-checked POST), an attendee walking lessons
through the dashboard's own endpoints as the lesson bar calls them (htmx), and the instructor's
Attendees board asking `/lessons/progress/` every 3 s as `board.js` does.

The walk, per step, as the page does it: GET the step (`/lessons/<id>/<n>/`, its `since`), GET its
check once ("load"), press "Do it" when the page draws the button (POST `/do/` with the CSRF header
htmx sends), then poll the check every 3 s (the page's `POLL_WAITING`) until it is green or
`STEP_PATIENCE` has passed, and go on to the next step, as an attendee who waits a while and then
clicks Next. A lesson's intended refusals are told apart from real errors: the code a step's
button is meant to answer (its `answer:`, e.g. lesson 18's 403, lesson 8's 410) and the 409 of a
`stale-write` button (lesson 7) are `intended`; every other answer >= 400 is an error.

Guarantees: no answer of the hub raises out of a walk (codes are recorded, a broken connection is
code 0); `login` raises only when the login itself fails (the figures would mean nothing then).
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import httpx

from dashboard import lessons

CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
SINCE = re.compile(r'check/\?since=(\d+)')
# Lessons an attendee can walk in their own namespace within the quota of 10 pods beside the
# bench's own Deployment (3 pods): pasta (3 then 4), burnt toast (1), the waiter (1), the RBAC
# trainee; 08's old watch answers its intended 410, 07's stale write its intended 409, 18 its 403.
WALK = ("01-declarative", "02-self-healing", "03-crash-loop", "07-conflict", "08-gone", "13-config", "18-rbac")
POLL = 3.0  # the lesson bar's POLL_WAITING
STEP_PATIENCE = 30.0
BOARD_EVERY = 3.0  # board.js's PROGRESS_MS
TIMEOUT = 60.0


def login(url: str, code: str) -> dict[str, str]:
    """The cookies of a browser logged in with `code` (session and CSRF), by the confirm form."""
    with httpx.Client(base_url=url, timeout=TIMEOUT, follow_redirects=False) as browser:
        form = browser.get("/login/", params={"code": code, "next": "/"})
        token = CSRF_FIELD.search(form.text)
        answer = browser.post("/login/", data={"csrfmiddlewaretoken": token.group(1) if token else "",
                                               "code": code, "next": "/"}, headers={"Referer": f"{url}/login/"})
        if answer.status_code != 302 or "/login/" in answer.headers.get("location", ""):
            raise RuntimeError(f"login with the code answered {answer.status_code}")
        return dict(browser.cookies.items())


class Walker:
    """One browser's lesson bar (or the instructor's board): every answer timed and counted."""

    def __init__(self, name: str, url: str, cookies: dict[str, str]):
        self.name = name
        self.browser = httpx.AsyncClient(base_url=url, cookies=cookies, timeout=TIMEOUT,
                                         headers={"HX-Request": "true", "X-CSRFToken": cookies.get("csrftoken", "")})
        self.calls: list[tuple[str, float, int, bool]] = []  # (kind, seconds, code, intended refusal)
        self.samples: list[str] = []  # "kind code path: text" of the first unintended errors
        self.green = 0
        self.steps = 0
        self.do_by_step: dict[str, list[float]] = {}  # "lesson/step" -> seconds of each "Do it"

    async def call(self, kind: str, method: str, path: str, intended: tuple[int, ...] = ()) -> tuple[int, str]:
        started = time.perf_counter()
        try:
            answer = await self.browser.request(method, path)
            code, text = answer.status_code, answer.text
        except httpx.HTTPError as broken:
            code, text = 0, f"no answer: {type(broken).__name__}"
        wanted = code in intended
        self.calls.append((kind, time.perf_counter() - started, code, wanted))
        if (code >= 400 or code == 0) and not wanted and len(self.samples) < 3:
            words = re.sub(r"<[^>]+>|\s+", " ", text)[:160].strip()
            self.samples.append(f"{kind} {code} {path}: {words}")
        return code, text

    async def walk(self, until: float, offset: float) -> None:
        """The lessons in WALK, one step after another, until the window ends."""
        await asyncio.sleep(offset)
        catalogue = lessons.load_all()
        for lesson_id in WALK:
            lesson = catalogue.get(lesson_id)
            for number, step in enumerate(lesson.steps if lesson else (), 1):
                if time.monotonic() >= until:
                    return
                await self.step(lesson_id, number, step, until)

    async def step(self, lesson_id: str, number: int, step: lessons.Step, until: float) -> None:
        base = f"/lessons/{lesson_id}/{number}/"
        code, page = await self.call("lesson_step", "GET", base)
        if code != 200:
            return
        self.steps += 1
        since = SINCE.search(page)
        check = f"{base}check/" + (f"?since={since.group(1)}" if since else "")
        has_check = "lesson-check" in page
        if has_check:
            await self.call("lesson_check", "GET", check)
        if "lesson-act" in page and step.action is not None:
            intended = ((step.answer,) if step.answer is not None else ()) + \
                       ((409,) if step.action.do == "stale-write" else ())
            await self.call("lesson_do", "POST", f"{base}do/", intended)
            self.do_by_step.setdefault(f"{lesson_id}/{number}", []).append(self.calls[-1][1])
        if not has_check:
            return
        patience = min(until, time.monotonic() + STEP_PATIENCE)
        while time.monotonic() < patience:
            await asyncio.sleep(POLL)
            code, verdict = await self.call("lesson_check", "GET", check)
            if code == 200 and 'class="lesson-check done"' in verdict:
                self.green += 1
                return

    async def board(self, until: float) -> None:
        """The instructor's Attendees board, open the whole window."""
        while time.monotonic() < until:
            await self.call("progress", "GET", "/lessons/progress/")
            await asyncio.sleep(BOARD_EVERY)

    async def close(self) -> None:
        await self.browser.aclose()


def summary(walkers: list[Walker], latency_summary: Any) -> dict[str, Any]:
    """Per kind of dashboard call: latency and codes; errors and intended refusals apart."""
    calls = [c for w in walkers for c in w.calls]
    kinds = sorted({kind for kind, *_ in calls})
    errors: dict[str, int] = {}
    intended: dict[str, int] = {}
    for kind, _, code, wanted in calls:
        if code >= 400 or code == 0:
            into = intended if wanted else errors
            into[f"{kind} {code}"] = into.get(f"{kind} {code}", 0) + 1
    by_step: dict[str, list[float]] = {}
    for walker in walkers:
        for step, seconds in walker.do_by_step.items():
            by_step.setdefault(step, []).extend(seconds)
    slowest = sorted(by_step, key=lambda step: -max(by_step[step]))[:5]
    return {"calls": {kind: {**latency_summary([s for k, s, _, _ in calls if k == kind]),
                             "count": sum(1 for k, *_ in calls if k == kind)} for kind in kinds},
            "do_slowest_steps": {step: latency_summary(by_step[step]) for step in slowest},
            "errors": errors, "intended_refusals": intended,
            "error_samples": [s for w in walkers for s in w.samples][:8],
            "steps_shown": sum(w.steps for w in walkers), "checks_green": sum(w.green for w in walkers)}
