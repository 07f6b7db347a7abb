"""The change feed: contiguous, gap-filling from the log, 410 past compaction, shared by readers."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from control import errors
from control.storage import store
from control.storage.feed import ChangeFeed
from control.storage.feed import weight as feed_weight

pytestmark = pytest.mark.django_db(transaction=True)


def configmap(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "uid": str(uuid.uuid4())}}


def write(n: int, prefix: str = "cm") -> list[store.Change]:
    start = store.current_revision()
    for i in range(n):
        store.object_create(resource="/configmaps", obj=configmap(f"{prefix}-{i}"), actor="t")
    return store.events_since(start, limit=10_000)


def test_offered_changes_are_read_in_order_and_an_idle_read_times_out():
    changes = write(5)

    async def scenario():
        feed = ChangeFeed(loop=asyncio.get_running_loop(), start=changes[0].revision - 1)
        feed.offer(changes[:3])
        feed.offer(changes[:2])  # repeats are ignored
        feed.offer(changes[3:])
        got = await feed.read_after(changes[0].revision - 1, timeout=0.01)
        idle = await feed.read_after(changes[-1].revision, timeout=0.01)
        return got, idle

    got, idle = asyncio.run(scenario())
    assert [c.revision for c in got] == [c.revision for c in changes]
    assert idle == []


def test_a_gap_is_filled_from_the_log_not_skipped():
    changes = write(6)

    async def scenario():
        feed = ChangeFeed(loop=asyncio.get_running_loop(), start=changes[0].revision - 1)
        feed.offer(changes[:2])
        feed.offer(changes[4:])  # 3rd and 4th were written "by another process"
        assert feed.last == changes[1].revision
        for _ in range(100):
            await asyncio.sleep(0.01)
            if feed.last == changes[-1].revision:
                break
        return await feed.read_after(changes[0].revision - 1, timeout=0.01, limit=100)

    got = asyncio.run(scenario())
    assert [c.revision for c in got] == [c.revision for c in changes]


def test_a_waiting_reader_wakes_on_the_next_offer():
    changes = write(2)

    async def scenario():
        feed = ChangeFeed(loop=asyncio.get_running_loop(), start=changes[0].revision)
        reader = asyncio.create_task(feed.read_after(changes[0].revision, timeout=5))
        await asyncio.sleep(0.01)
        assert not reader.done()
        feed.offer(changes[1:])
        return await asyncio.wait_for(reader, 1)

    assert [c.revision for c in asyncio.run(scenario())] == [changes[1].revision]


def test_reads_older_than_memory_come_from_the_log_and_compacted_ones_are_gone():
    changes = write(8)

    async def scenario():
        feed = ChangeFeed(loop=asyncio.get_running_loop(), start=changes[5].revision)
        feed.offer(changes[6:])
        from_log = await feed.read_after(changes[1].revision, timeout=0.01, limit=100)
        feed.drop_through(changes[3].revision)
        with pytest.raises(errors.Gone):
            await feed.read_after(changes[2].revision, timeout=0.01)
        return from_log

    from_log = asyncio.run(scenario())
    assert [c.revision for c in from_log] == [c.revision for c in changes[2:]]


def test_readers_at_different_positions_do_not_disturb_each_other():
    changes = write(50)

    async def scenario():
        feed = ChangeFeed(loop=asyncio.get_running_loop(), start=changes[0].revision - 1, capacity=1000)
        feed.offer(changes)

        async def reader(batch: int) -> list[int]:
            seen, rev = [], changes[0].revision - 1
            while rev < changes[-1].revision:
                got = await feed.read_after(rev, timeout=0.01, limit=batch)
                seen += [c.revision for c in got]
                rev = got[-1].revision
            return seen

        return await asyncio.gather(reader(1), reader(7), reader(500))

    expected = [c.revision for c in changes]
    assert asyncio.run(scenario()) == [expected, expected, expected]


def test_memory_is_bounded_in_bytes_as_well_as_count():
    """100 updates of a 2.8 MiB object: the feed keeps what fits in its byte bound, not 600 MB."""
    from control.storage.feed import weight

    start = store.current_revision()
    body = '{"data":{"k":"' + "x" * (2800 * 1024) + '"}}'
    changes = [store.Change(start + i, "MODIFIED", "/configmaps", "default", "big", "t", 0.0, body)
               for i in range(1, 101)]

    async def scenario():
        feed = ChangeFeed(loop=asyncio.get_running_loop(), start=start, max_bytes=64 * 1024 * 1024)
        for change in changes:
            feed.offer([change])
        return feed

    feed = asyncio.run(scenario())
    assert feed.bytes <= 64 * 1024 * 1024 and feed.bytes == sum(weight(c) for c in feed.changes)
    assert 5 <= len(feed.changes) < 20
    assert [c.revision for c in feed.changes] == list(range(feed.first, feed.last + 1))
    assert feed.last == start + 100


def test_a_reader_behind_the_byte_bound_reads_the_log():
    start = store.current_revision()
    for i in range(20):
        cm = configmap(f"fat-{i}")
        cm["metadata"]["annotations"] = {"blob": "y" * 10_000}
        store.object_create(resource="/configmaps", obj=cm, actor="t")
    changes = store.events_since(start, limit=100)

    async def scenario():
        feed = ChangeFeed(loop=asyncio.get_running_loop(), start=start, max_bytes=100_000)
        feed.offer(changes)
        assert feed.first > start + 1 and feed.bytes <= 100_000  # the oldest left memory
        got, at = [], start
        while at < changes[-1].revision:
            piece = await feed.read_after(at, timeout=0.01, limit=100)
            got, at = got + piece, piece[-1].revision
        return got

    got = asyncio.run(scenario())
    assert [c.revision for c in got] == [c.revision for c in changes]


def test_a_reader_behind_memory_reads_big_objects_from_the_log_in_small_pieces():
    start = store.current_revision()
    for i in range(12):
        cm = configmap(f"heavy-{i}")
        cm["metadata"]["annotations"] = {"blob": "z" * 20_000}
        store.object_create(resource="/configmaps", obj=cm, actor="t")
    changes = store.events_since(start, limit=100)

    async def scenario():
        feed = ChangeFeed(loop=asyncio.get_running_loop(), start=start, max_bytes=200_000)
        feed.offer(changes)
        first = await feed.read_after(start, timeout=0.01, limit=500)
        rest = await feed.read_after(first[-1].revision, timeout=0.01, limit=500)
        return first, rest

    first, rest = asyncio.run(scenario())
    assert 1 <= len(first) <= 2  # a quarter of 200 kB, at ~40 kB a change
    assert [c.revision for c in first + rest][:len(first) + 1] == [c.revision for c in changes][:len(first) + 1]


def made(revision: int, resource: str) -> store.Change:
    return store.Change(revision=revision, type="ADDED", resource=resource, namespace="default", name=f"o-{revision}",
                        actor="t", created_at=0.0, body="{}")


def test_a_reader_of_one_resource_sleeps_through_other_resources_and_skips_them():
    async def scenario():
        feed = ChangeFeed(loop=asyncio.get_running_loop(), start=100, batch_window=0)
        pods = asyncio.create_task(feed.read_after(100, timeout=5, resource="/pods"))
        anyone = asyncio.create_task(feed.read_after(100, timeout=5))
        await asyncio.sleep(0)  # both are waiting
        feed.offer([made(101, "/leases"), made(102, "/leases")])
        await asyncio.sleep(0.01)
        assert anyone.done() and not pods.done(), "Lease renewals do not wake a watch of Pods"
        assert feed.skip(100, "/pods") == 102 and feed.skip(100, "/leases") == 100
        feed.offer([made(103, "/pods"), made(104, "/leases")])
        got = await asyncio.wait_for(pods, 1)
        assert [c.revision for c in got] == [101, 102, 103, 104]
        assert feed.skip(102, "/pods") == 102, "a change of Pods after 102: nothing is skipped"
        assert feed.skip(103, "/pods") == 104

    asyncio.run(scenario())


def test_nothing_from_before_the_feed_started_is_skipped():
    async def scenario():
        feed = ChangeFeed(loop=asyncio.get_running_loop(), start=100, batch_window=0)
        feed.offer([made(101, "/leases")])
        assert feed.skip(99, "/pods") == 99  # 100 may have been a Pod: read it from the log
        assert feed.skip(100, "/pods") == 101

    asyncio.run(scenario())


def aged(revision: int, created_at: float) -> store.Change:
    return store.Change(revision=revision, type="ADDED", resource="/configmaps", namespace="default",
                        name=f"o-{revision}", actor="t", created_at=created_at, body="{}")


def test_changes_older_than_the_fresh_window_leave_memory_but_the_newest_stay():
    from control.storage.feed import FRESH_SECONDS, MIN_KEPT

    async def scenario():
        feed = ChangeFeed(loop=asyncio.get_running_loop(), start=0, batch_window=0)
        now = 1_800_000_000.0
        burst = [aged(r, now - 1000) for r in range(1, 2001)]  # a burst long ago
        feed.offer(burst + [aged(2001, now - FRESH_SECONDS / 2)])
        feed.drop_stale(now)
        assert len(feed.changes) == MIN_KEPT and feed.first == 2002 - MIN_KEPT
        assert feed.bytes == sum(feed_weight(c) for c in feed.changes)
        feed.offer([aged(r, now) for r in range(2002, 2002 + MIN_KEPT)])
        feed.drop_stale(now)
        assert [c.revision for c in feed.changes] == list(range(2001, 2002 + MIN_KEPT)), "the fresh ones stay"

    asyncio.run(scenario())


def test_a_reader_waiting_at_the_head_is_not_expired_by_what_other_resources_left_behind():
    """A quiet watch of Nodes while Leases move on and the log is compacted: the cordon that wakes
    it is delivered (the Lease changes stepped over), not a 410 that costs a relist."""
    async def scenario():
        feed = ChangeFeed(loop=asyncio.get_running_loop(), start=100, batch_window=0)
        nodes = asyncio.create_task(feed.read_after(100, timeout=5, resource="/nodes"))
        await asyncio.sleep(0)
        feed.offer([made(r, "/leases") for r in range(101, 111)])
        feed.drop_through(108)  # the log's window passed the revision the reader waits at
        feed.offer([made(111, "/nodes")])
        return await asyncio.wait_for(nodes, 1)

    assert [c.revision for c in asyncio.run(scenario())] == [109, 110, 111]


def test_a_change_of_its_own_resource_that_left_memory_is_never_stepped_over():
    async def scenario():
        feed = ChangeFeed(loop=asyncio.get_running_loop(), start=100, batch_window=0)
        feed.offer([made(101, "/leases"), made(102, "/nodes")] + [made(r, "/leases") for r in range(103, 111)])
        feed.drop_through(105)
        assert feed.skip(100, "/nodes") == 100, "102 was a Node: the reader must read it (or hear 410)"
        assert feed.skip(102, "/nodes") == 110
        assert feed.skip(101, "/leases") == 101
        feed.offer([made(111, "/nodes")])
        assert feed.skip(102, "/nodes") == 105, "from memory, after the compacted Leases"
        with pytest.raises(errors.Gone):
            await feed.read_after(100, timeout=0.01, resource="/nodes")

    asyncio.run(scenario())
