"""How many wrong codes the front door takes before it says "wait": the brake on guessing join and
login codes, as a login form should have one.

Guarantees:
- `Failures.retry_after(client)` is 0 while `client` (a remote address) may try, else the whole
  seconds until it may try again (at least 1): a client that failed `per_client` times in the last
  `window` seconds waits, and so does everyone once `overall` failures happened in the window (a
  guesser spread over many addresses is slowed down too). Only failures count: a right code costs
  nothing, and a client that waits is not counted again for being refused.
- `failed(client)` records one failure now. Time comes from the injected clock (`control.clock`),
  so tests step it instead of sleeping. Memory is bounded: failures older than the window are
  dropped, and at most `overall` are kept per window.
- `FRONT_DOOR` is the one counter of this process shared by `POST /join/`, `POST /login/`, the
  start address's `?code=` and `GET /join/<code>/kubeconfig`; `refusal(seconds)` is the plain 429
  answer (with `Retry-After`) for a request that is not a page.
"""

from __future__ import annotations

import math
from collections import deque

from django.http import HttpRequest, HttpResponse

from control.clock import REAL, Clock

PER_CLIENT = 10  # wrong codes a minute from one address: plenty for typos
OVERALL = 100  # wrong codes a minute from everyone: a room of thirty mistyping at once still gets in
WINDOW = 60.0


class Failures:
    def __init__(self, *, clock: Clock = REAL, per_client: int = PER_CLIENT, overall: int = OVERALL,
                 window: float = WINDOW):
        self.clock, self.per_client, self.overall, self.window = clock, per_client, overall, window
        self._all: deque[tuple[float, str]] = deque()
        self._by_client: dict[str, deque[float]] = {}

    def _forget_old(self, now: float) -> None:
        while self._all and self._all[0][0] <= now - self.window:
            _, client = self._all.popleft()
            mine = self._by_client.get(client)
            if mine:
                mine.popleft()
                if not mine:
                    del self._by_client[client]

    def retry_after(self, client: str) -> int:
        now = self.clock.monotonic()
        self._forget_old(now)
        waits = []
        if len(self._all) >= self.overall:
            waits.append(self._all[-self.overall][0] + self.window - now)
        mine = self._by_client.get(client) or ()
        if len(mine) >= self.per_client:
            waits.append(mine[-self.per_client] + self.window - now)
        return max(1, math.ceil(max(waits))) if waits else 0

    def failed(self, client: str) -> None:
        now = self.clock.monotonic()
        self._forget_old(now)
        self._all.append((now, client))
        self._by_client.setdefault(client, deque()).append(now)
        if len(self._all) > self.overall:  # what is beyond the limit says nothing more
            _, oldest = self._all.popleft()
            self._by_client[oldest].popleft()
            if not self._by_client[oldest]:
                del self._by_client[oldest]


FRONT_DOOR = Failures()


def client_of(request: HttpRequest) -> str:
    return str(request.META.get("REMOTE_ADDR") or "unknown")


def refusal(seconds: int, text: str) -> HttpResponse:
    answer = HttpResponse(text, status=429, content_type="text/plain; charset=utf-8")
    answer["Retry-After"] = str(seconds)
    return answer
