"""What a lesson step's button last answered, per viewer: the check of a step whose action only
reads (a watch that gets 410, a request refused with 403) and so leaves nothing in the cluster to
list.

Guarantees: `remember` and `answered` are keyed by (viewer, lesson, step), so one viewer's button
never turns another viewer's step green; the memory holds at most `LIMIT` entries (the oldest go
first), so a long workshop cannot grow it without bound; an answer is only what the hub (or the
button) answered, never inferred. It lives in the dashboard process: a restart forgets it, and
the step goes back to waiting for its button, as a fresh page would.
"""

from __future__ import annotations

from collections import OrderedDict

LIMIT = 10_000

_answers: OrderedDict[tuple[str, str, int], int] = OrderedDict()


def remember(viewer: str, lesson_id: str, number: int, code: int) -> None:
    key = (viewer, lesson_id, number)
    _answers.pop(key, None)
    _answers[key] = code
    while len(_answers) > LIMIT:
        _answers.popitem(last=False)


def answered(viewer: str, lesson_id: str, number: int) -> int | None:
    """The status code the step's button last answered this viewer, or None before it was pressed."""
    return _answers.get((viewer, lesson_id, number))


def forget_all() -> None:
    _answers.clear()
