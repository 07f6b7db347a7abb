"""The embedded channel layer hands a group message to every member without a copy each."""

from __future__ import annotations

import asyncio

import pytest
from django.conf import settings

from control.serving.channel_layer import InProcessChannelLayer


def _run(coro):
    return asyncio.run(coro)


def test_every_member_of_a_group_gets_the_same_message_object():
    async def scenario():
        layer = InProcessChannelLayer()
        first, second = await layer.new_channel(), await layer.new_channel()
        await layer.group_add("traffic", first)
        await layer.group_add("traffic", second)
        records = [{"who": "kubectl", "code": 200}]
        await layer.group_send("traffic", {"type": "traffic.batch", "records": records})
        got = [await layer.receive(first), await layer.receive(second)]
        return records, got

    records, got = _run(scenario())
    assert [m["records"] for m in got] == [records, records]
    assert got[0] is got[1]  # one object for the whole group: no per-member copy
    assert got[0]["records"] is records


def test_a_plain_send_is_still_a_copy():
    async def scenario():
        layer = InProcessChannelLayer()
        channel = await layer.new_channel()
        message = {"type": "x", "payload": [1, 2]}
        await layer.send(channel, message)
        return message, await layer.receive(channel)

    sent, received = _run(scenario())
    assert received == sent and received is not sent and received["payload"] is not sent["payload"]


def test_the_embedded_default_uses_it():
    if settings.CHANNEL_LAYERS["default"]["BACKEND"].startswith("channels_redis"):
        pytest.skip("the scale-out shape: Redis serializes, nothing to share")
    assert settings.CHANNEL_LAYERS["default"]["BACKEND"] == "control.serving.channel_layer.InProcessChannelLayer"
