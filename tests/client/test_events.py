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


def test_each_controller_records_under_its_own_source_through_the_one_queue():
    import asyncio

    from control.client.events import EventQueue

    client, rs = FakeClient(), replicaset("web")
    queue = EventQueue(EventRecorder(client, "kube-controller-manager", clock=FakeClock(START)))
    jobs, replicasets = queue.named("job-controller"), queue.named("replicaset-controller")
    assert queue.named("job-controller").recorder is jobs.recorder  # one recorder per component

    async def go() -> None:
        await replicasets.record(rs, "Normal", "SuccessfulCreate", "Created pod: web-0")
        await jobs.record(rs, "Normal", "Completed", "Job completed")
        await replicasets.record(rs, "Normal", "SuccessfulCreate", "Created pod: web-0")
        task = asyncio.create_task(queue.run())
        for _ in range(10):
            await asyncio.sleep(0)
        task.cancel()
    run(go())
    created = client.of("create", "events")
    assert [(e.body["source"]["component"], e.body["reportingComponent"]) for e in created] == [
        ("replicaset-controller", "replicaset-controller"), ("job-controller", "job-controller")]
    assert [p.body["count"] for p in client.of("patch", "events")] == [2]  # counted under its own source


def test_the_controller_manager_names_each_controllers_source_as_upstream():
    from control.controllers.manager import CONTROLLERS, EVENT_SOURCES

    assert set(EVENT_SOURCES) <= set(CONTROLLERS)
    assert EVENT_SOURCES["job"] == "job-controller" and EVENT_SOURCES["deployment"] == "deployment-controller"
    assert EVENT_SOURCES["nodelifecycle"] == "node-controller" and EVENT_SOURCES["disruption"] == "controllermanager"
