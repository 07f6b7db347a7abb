"""The event recorder against a fake hub: identical events counted on the first one, similar
events (same object, type and reason, other messages) combined after ten, as client-go does."""

from __future__ import annotations

from control.client.events import COMBINED, SIMILAR, EventRecorder
from control.clock import FakeClock
from tests.controllers.fakes import START, FakeClient, replicaset, run


def record_all(recorder: EventRecorder, rs: dict, messages: list[str]) -> None:
    async def go() -> None:
        for message in messages:
            await recorder.record(rs, "Warning", "FailedCreate", message)
    run(go())


def test_an_identical_event_counts_up_on_the_first_one():
    client, rs = FakeClient(), replicaset("web")
    recorder = EventRecorder(client, "replicaset-controller", clock=FakeClock(START))
    record_all(recorder, rs, ["Error creating: no"] * 3)
    [created] = client.of("create", "events")
    assert created.body["message"] == "Error creating: no" and created.body["count"] == 1
    assert [p.body["count"] for p in client.of("patch", "events")] == [2, 3]
    assert all(p.name == created.body["metadata"]["name"] for p in client.of("patch", "events"))


def test_similar_events_are_combined_after_the_limit_and_the_combined_one_counts_up():
    client, rs = FakeClient(), replicaset("web")
    recorder = EventRecorder(client, "replicaset-controller", clock=FakeClock(START))
    messages = [f'Error creating: pods "web-{i}" is forbidden' for i in range(SIMILAR + 2)]
    record_all(recorder, rs, messages)
    created = client.of("create", "events")
    assert [c.body["message"] for c in created] == messages[:SIMILAR - 1] + [COMBINED + messages[SIMILAR - 1]]
    patches = client.of("patch", "events")
    assert [p.name for p in patches] == [created[-1].body["metadata"]["name"]] * 2
    assert [(p.body["count"], p.body["message"]) for p in patches] == [(2, COMBINED + messages[SIMILAR]),
                                                                       (3, COMBINED + messages[SIMILAR + 1])]


def test_similar_events_start_afresh_after_the_window_and_other_reasons_are_apart():
    clock = FakeClock(START)
    client, rs = FakeClient(), replicaset("web")
    recorder = EventRecorder(client, "replicaset-controller", clock=clock, window=600)
    record_all(recorder, rs, [f"m{i}" for i in range(SIMILAR - 1)])
    run(recorder.record(rs, "Normal", "SuccessfulCreate", "Created pod"))
    clock.t += 601
    record_all(recorder, rs, ["later"])
    assert not any(c.body["message"].startswith(COMBINED) for c in client.of("create", "events"))


def test_the_queue_answers_at_once_and_records_in_the_background_in_order():
    import asyncio

    from control.client.events import EventQueue

    client, rs = FakeClient(), replicaset("web")
    queue = EventQueue(EventRecorder(client, "controller-manager", clock=FakeClock(START)), limit=2)

    async def go() -> None:
        for i in range(3):
            await queue.record(rs, "Normal", "SuccessfulCreate", f"Created pod: web-{i}")
        assert client.actions == [], "recording waits for no request"
        assert queue.dropped == 1, "past the limit an event is dropped, as client-go's broadcaster does"
        task = asyncio.create_task(queue.run())
        for _ in range(10):
            await asyncio.sleep(0)
        task.cancel()
    run(go())
    assert [a.body["message"] for a in client.of("create", "events")] == ["Created pod: web-0", "Created pod: web-1"]
