"""Where each attendee is in the lessons, for the instructor's board: the newest step shown wins,
a verdict counts only for the step the user is on, the time on a step survives re-showing it,
only the names asked for are answered, memory is bounded."""

from __future__ import annotations

from dashboard.lesson_progress import Position, Progress


class Clock:
    def __init__(self):
        self.now = 5000.0

    def __call__(self) -> float:
        return self.now


def at(lesson: str, step: int, **more) -> Position:
    return Position(lesson=lesson, title="Drop a plate", step=step, steps=2, step_title="Drop one", check=None, **more)


def test_the_board_sees_the_step_and_its_verdict_and_how_long_they_have_been_on_it():
    clock = Clock()
    progress = Progress(clock=clock)
    assert progress.snapshot(["alice", "bob"]) == {"alice": None, "bob": None}
    progress.showing("alice", at("02-self-healing", 1))
    clock.now += 10
    progress.checked("alice", "02-self-healing", 1, False)
    clock.now += 50
    progress.showing("alice", at("02-self-healing", 1))  # the same step again (a reload): time on it kept
    progress.checked("alice", "02-self-healing", 1, False)
    seen = progress.snapshot(["alice"])["alice"]
    assert (seen["lesson"], seen["step"], seen["check"], seen["on_step"], seen["age"]) == ("02-self-healing", 1, False, 60.0, 0.0)
    clock.now += 5
    progress.showing("alice", at("02-self-healing", 2))
    progress.checked("alice", "02-self-healing", 1, True)  # a late poll of the step she left
    seen = progress.snapshot(["alice"])["alice"]
    assert (seen["step"], seen["check"], seen["on_step"]) == (2, None, 0.0)
    progress.checked("alice", "02-self-healing", 2, True)
    assert progress.snapshot(["alice"])["alice"]["check"] is True


def test_a_watching_step_and_only_the_names_asked_for():
    progress = Progress(clock=Clock())
    progress.showing("alice", at("09-scheduler-stopped", 1, watching=True))
    progress.showing("kubernetes-admin", at("01-declarative", 1))
    assert progress.snapshot(["alice"]) == {"alice": {**progress.snapshot(["alice"])["alice"], "watching": True}}
    assert list(progress.snapshot(["alice", "bob"])) == ["alice", "bob"]


def test_memory_is_bounded():
    progress = Progress(clock=Clock(), max_users=2)
    for name in ("a", "b", "c"):
        progress.showing(name, at("01-declarative", 1))
    assert progress.snapshot(["a", "b", "c"])["a"] is None and progress.snapshot(["c"])["c"] is not None
