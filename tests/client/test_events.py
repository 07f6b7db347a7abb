"""The event recorder against a fake hub: identical events counted on the first one; the queue
that records them in the background."""

from __future__ import annotations

from control.client.events import EventRecorder
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
