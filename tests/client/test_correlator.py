"""client-go's event correlator on a fake clock: counting, "(combined from similar events)", the
per-object spam filter, and the recorder sending what it decides."""

from __future__ import annotations

from control import errors
from control.client.correlator import COMBINED, EventCorrelator, TokenBucket
from control.client.events import EventRecorder
from control.clock import FakeClock
from tests.controllers.fakes import START, FakeClient, replicaset, run


def pod(name: str = "web-0", uid: str = "u-1") -> dict:
    return {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": "default", "uid": uid}}


def event(message: str, *, reason: str = "BackOff", obj: dict | None = None, component: str = "kubelet") -> dict:
    recorder = EventRecorder(FakeClient(), component, "node-1", clock=FakeClock(START))
    return recorder.make_event(obj or pod(), "Warning", reason, message)


def test_an_identical_event_becomes_a_patch_of_count_last_timestamp_and_message():
    clock = FakeClock(START)
    correlator = EventCorrelator(clock)
    first = correlator.correlate(event("Back-off restarting failed container web"))
    assert first.patch is None and not first.skip
    correlator.update_state({**first.event, "metadata": {**first.event["metadata"], "resourceVersion": "7"}})
    clock.t += 30
    again = event("Back-off restarting failed container web")
    again["lastTimestamp"] = "2030-01-01T00:00:30Z"
    second = correlator.correlate(again)
    assert second.patch == {"count": 2, "lastTimestamp": "2030-01-01T00:00:30Z",
                            "message": "Back-off restarting failed container web"}
    assert second.event["metadata"]["name"] == first.event["metadata"]["name"]
    assert second.event["metadata"]["resourceVersion"] == "7"
    assert second.event["firstTimestamp"] == first.event["firstTimestamp"]


def test_the_tenth_similar_event_in_ten_minutes_is_combined_and_later_ones_count_it_up():
    clock = FakeClock(START)
    correlator = EventCorrelator(clock)
    sent = []
    for i in range(12):
        clock.t += 10
        sent.append(correlator.correlate(event(f"0/3 nodes are available: attempt {i}")))
    assert all(r.patch is None and not r.event["message"].startswith(COMBINED) for r in sent[:9])
    combined = sent[9]
    assert combined.patch is None and combined.event["message"] == COMBINED + "0/3 nodes are available: attempt 9"
    assert combined.event["count"] == 1 and combined.event["reason"] == "BackOff"
    assert [r.patch["count"] for r in sent[10:]] == [2, 3]
    assert {r.event["metadata"]["name"] for r in sent[9:]} == {combined.event["metadata"]["name"]}
    assert sent[11].patch["message"] == COMBINED + "0/3 nodes are available: attempt 11"


def test_after_ten_quiet_minutes_similar_events_are_told_apart_again():
    clock = FakeClock(START)
    correlator = EventCorrelator(clock)
    for i in range(10):
        correlator.correlate(event(f"message {i}"))
    clock.t += 601
    fresh = correlator.correlate(event("message new"))
    assert fresh.patch is None and fresh.event["message"] == "message new"


def test_other_objects_reasons_and_sources_are_separate_groups():
    correlator = EventCorrelator(FakeClock(START))
    for i in range(9):
        correlator.correlate(event(f"m{i}"))
    assert correlator.correlate(event("m9", reason="Failed")).event["message"] == "m9"
    assert correlator.correlate(event("m9", obj=pod("web-1", "u-2"))).event["message"] == "m9"
    assert correlator.correlate(event("m9", component="scheduler")).event["message"] == "m9"
    assert correlator.correlate(event("m9")).event["message"] == COMBINED + "m9"


def test_a_source_gets_25_events_about_an_object_then_one_every_five_minutes():
    clock = FakeClock(START)
    correlator = EventCorrelator(clock)
    results = [correlator.correlate(event("same")) for _ in range(27)]
    assert [r.skip for r in results] == [False] * 25 + [True, True]
    assert not correlator.correlate(event("same", obj=pod("other", "u-9"))).skip, "per object"
    clock.t += 299
    assert correlator.correlate(event("same")).skip
    clock.t += 1
    allowed = correlator.correlate(event("same"))
    assert not allowed.skip and allowed.patch["count"] == 29, "the skipped ones were still counted"


def test_the_token_bucket_refills_up_to_its_burst():
    bucket = TokenBucket(qps=1.0, burst=2, now=0.0)
    assert bucket.try_accept(0.0) and bucket.try_accept(0.0) and not bucket.try_accept(0.0)
    assert bucket.try_accept(1.0) and not bucket.try_accept(1.0)
    assert bucket.try_accept(100.0) and bucket.try_accept(100.0) and not bucket.try_accept(100.0)


def test_the_recorder_patches_strategically_and_creates_again_when_the_event_was_deleted():
    client, rs = FakeClient(), replicaset("web")
    recorder = EventRecorder(client, "replicaset-controller", clock=FakeClock(START))

    async def go() -> None:
        await recorder.record(rs, "Warning", "FailedCreate", "no")
        await recorder.record(rs, "Warning", "FailedCreate", "no")
        client.fail("patch", "events", errors.not_found("/events", "gone"))
        await recorder.record(rs, "Warning", "FailedCreate", "no")
        await recorder.record(rs, "Warning", "FailedCreate", "no")
    run(go())
    creates, patches = client.of("create", "events"), client.of("patch", "events")
    assert [c.body["count"] for c in creates] == [1, 3], "re-created with the count it had reached"
    assert [p.body["count"] for p in patches] == [2, 3, 4]
    assert "resourceVersion" not in creates[1].body["metadata"]
    assert len({c.body["metadata"]["name"] for c in creates}) == 1


def test_a_crash_looping_pod_no_longer_adds_an_event_each_retry():
    # the kubelet's BackOff for 200 restarts (back-off doubling from 10 s to its 5-minute cap)
    client, clock = FakeClient(), FakeClock(START)
    recorder = EventRecorder(client, "kubelet", "node-1", clock=clock)

    async def go() -> None:
        for i in range(200):
            clock.t += min(300, 10 * 2 ** i)
            await recorder.record(pod(), "Warning", "BackOff", "Back-off restarting failed container web in pod "
                                  "web-0_default(u-1)")
    run(go())
    assert len(client.of("create", "events")) == 1
    assert client.of("patch", "events")[-1].body["count"] == 200


def test_an_unschedulable_pod_whose_message_changes_is_combined_and_then_throttled():
    client, clock = FakeClient(), FakeClock(START)
    recorder = EventRecorder(client, "default-scheduler", clock=clock)

    async def go() -> None:
        for i in range(100):
            clock.t += 1
            await recorder.record(pod(), "Warning", "FailedScheduling",
                                  f"0/{i % 20 + 1} nodes are available: {i % 20 + 1} Insufficient cpu.")
    run(go())
    creates, patches = client.of("create", "events"), client.of("patch", "events")
    assert len(creates) == 10 and creates[-1].body["message"].startswith(COMBINED)
    assert len(creates) + len(patches) == 25, "then the spam filter holds the rest back"
