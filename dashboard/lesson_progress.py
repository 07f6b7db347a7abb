"""Where each viewer is in the lessons, for the instructor's board: their lesson, step and whether
that step's check is green, as their own page last reported it (by showing a step or polling its
check), per user.

Guarantees:
- `record` keeps one entry per user (the newest report wins); a check verdict for a step other
  than the user's current one (a late poll from a step they left) does not overwrite it.
- `snapshot(names)` answers, for each name in order, its entry with its age (since the last
  report) and how long they have been on that step, in seconds of the injected clock, or None for a user who has reported nothing since the server started; it holds
  only the names asked for (an attendee's page cannot learn of another: the view serves it only
  to a user who may list pods everywhere).
- Memory is bounded: at most `MAX_USERS` entries, the least recently reporting dropped first.
- Kept in the serving process (the dashboard's pages and their polls reach the one Daphne process
  of `runcluster`); a restart forgets it, and pages report again on their next poll.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import asdict, dataclass, replace
from typing import Any, Callable

from control.clock import REAL

MAX_USERS = 2000


@dataclass(frozen=True)
class Position:
    lesson: str
    title: str
    step: int
    steps: int
    step_title: str
    check: bool | None  # None: the step has no check, or its verdict is not in yet
    watching: bool = False  # the step needs rights the viewer lacks: they watch the instructor
    at: float = 0.0  # the last report
    since: float = 0.0  # when they came to this step


class Progress:
    def __init__(self, clock: Callable[[], float] = REAL.now, max_users: int = MAX_USERS):
        self.clock, self.max_users = clock, max_users
        self._positions: OrderedDict[str, Position] = OrderedDict()

    def showing(self, user: str, position: Position) -> None:
        """The user's page shows this step (its check not yet evaluated); showing the same step
        again keeps the time they came to it and its last verdict."""
        now, current = self.clock(), self._positions.get(user)
        if current is not None and (current.lesson, current.step) == (position.lesson, position.step):
            self._put(user, replace(position, at=now, since=current.since, check=current.check))
        else:
            self._put(user, replace(position, at=now, since=now))

    def checked(self, user: str, lesson: str, step: int, ok: bool) -> None:
        """The user's page polled this step's check; kept only if it is the step they are on."""
        current = self._positions.get(user)
        if current is None or (current.lesson, current.step) != (lesson, step):
            return
        self._put(user, replace(current, check=ok, at=self.clock()))

    def _put(self, user: str, position: Position) -> None:
        self._positions[user] = position
        self._positions.move_to_end(user)
        while len(self._positions) > self.max_users:
            self._positions.popitem(last=False)

    def snapshot(self, names: list[str]) -> dict[str, dict[str, Any] | None]:
        now = self.clock()
        out: dict[str, dict[str, Any] | None] = {}
        for name in names:
            position = self._positions.get(name)
            out[name] = None if position is None else {**asdict(position), "age": max(0.0, round(now - position.at, 1)),
                                                       "on_step": max(0.0, round(now - position.since, 1))}
        return out


PROGRESS = Progress()
