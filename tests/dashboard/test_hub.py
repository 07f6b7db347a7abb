"""The dashboard's one client of the hub: made on first use and shared by every page, form and
websocket of the process (one kept connection for sequential requests), closed by
`close_clients`, and fresh on another event loop so tests stay apart."""

from __future__ import annotations

import asyncio


from dashboard import hub


def test_requests_of_a_process_share_one_client_and_its_kept_connection(fake):
    scope = {"type": "http", "headers": []}

    async def scenario():
        async with hub.client_for(scope) as first:
            await first.request("GET", "/kubekitchen/snapshot")
        async with hub.client_for(scope) as second:
            await second.request("GET", "/kubekitchen/snapshot")
        assert first is second is hub.client(hub.hub_url(scope))
        await hub.close_clients()
        assert hub.client(hub.hub_url(scope)) is not first, "closed at shutdown, a new one after"
        await hub.close_clients()
        return first

    made = asyncio.run(scenario())
    assert [r.path for r in fake.requests] == ["/kubekitchen/snapshot"] * 2
    assert fake.connections == 1, "the second request reused the first one's connection"
    assert made._pool._idle == [], "close_clients closed its connections"


def test_another_event_loop_gets_its_own_client(fake):
    async def one() -> object:
        client = hub.client(hub.configured_url())
        await client.request("GET", "/kubekitchen/snapshot")
        return client

    assert asyncio.run(one()) is not asyncio.run(one())


def test_the_acting_attendee_is_named_only_for_a_user_of_the_rooms_roster(settings, tmp_path):
    from control import roster

    settings.DATA_DIR = tmp_path
    roster.join_code(tmp_path, "attendee-1")
    roster.instructor_code(tmp_path)
    assert hub.acting_attendee() is None, "nobody logged in"
    with hub.acting_as(hub.Identity("attendee-1", "t1")):
        assert hub.acting_attendee() == "attendee-1"
    with hub.acting_as(hub.Identity("admin", "t0")):
        assert hub.acting_attendee() is None, "the instructor's code is not a seat in the room"
