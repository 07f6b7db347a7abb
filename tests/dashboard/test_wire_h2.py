"""dashboard.wire_h2 against a real hub's HTTPS port: the watch arrives as HTTP/2 frames — SETTINGS,
then HEADERS with :status 200 on stream 1, then one DATA frame per watch event (its length that of the
JSON line, no chunk size) — and the consumer says plainly when the hub serves no HTTPS."""

from __future__ import annotations

import asyncio
import json
import ssl

import httpx
import pytest
from channels.testing import WebsocketCommunicator

from dashboard import wire_h2
from dashboard.consumers import WireH2Consumer

pytestmark = pytest.mark.e2e


def test_the_watch_arrives_as_headers_then_one_data_frame_per_event(hub):
    records: list[dict] = []
    context = ssl.create_default_context(cafile=str(hub.dir / "keys" / "ca.crt"))
    context.set_alpn_protocols(["h2"])
    names = ["wire-h2-a", "wire-h2-b"]

    async def scenario():
        headers_seen = asyncio.Event()

        async def forward(record: dict) -> None:
            records.append(record)
            if record["type"] == "HEADERS":
                headers_seen.set()

        relay = asyncio.ensure_future(wire_h2.relay("127.0.0.1", hub.secure_port, forward, token=hub.token,
                                                    context=context))
        await asyncio.wait_for(headers_seen.wait(), 20)
        async with httpx.AsyncClient(base_url=hub.url, headers=hub.auth) as client:
            for name in names:  # one change at a time (changes committed together share a write)
                pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"containers": [{"name": "app", "image": "busybox:1.36"}]}}
                assert (await client.post("/api/v1/namespaces/default/pods", json=pod)).status_code == 201
                for _ in range(200):
                    if any(r["type"] == "DATA" and f'"name":"{name}"' in r["text"] for r in records):
                        break
                    await asyncio.sleep(0.1)
        relay.cancel()
        await asyncio.gather(relay, return_exceptions=True)

    asyncio.run(scenario())
    assert records[0]["type"] == "SETTINGS" and records[0]["stream"] == 0
    head = next(r for r in records if r["type"] == "HEADERS")
    assert head["stream"] == 1 and "END_HEADERS" in head["flags"]
    assert [":status", "200"] in head["headers"]
    # the opening (synthetic ADDED for pods already there) is one write; ours came one per frame
    data = [r for r in records if r["type"] == "DATA" and any(f'"name":"{n}"' in r["text"] for n in names)]
    assert [json.loads(r["text"])["object"]["metadata"]["name"] for r in data] == names
    for frame in data:
        assert frame["stream"] == 1 and frame["flags"] == []  # the stream stays open
        assert frame["length"] == len(frame["text"].encode()) and frame["text"].count("\n") == 1  # one event, no sizes


def test_a_hub_without_https_gets_a_note(settings, tmp_path):
    settings.KK_HUB_URL = "http://127.0.0.1:9"  # no HTTPS recorded for it in the data folder
    settings.DATA_DIR = tmp_path

    async def scenario():
        communicator = WebsocketCommunicator(WireH2Consumer.as_asgi(), "/ws/wire/h2/")
        ok, _ = await communicator.connect()
        assert ok
        message = await communicator.receive_json_from(timeout=5)
        assert "serves no HTTPS" in message["note"]
        assert (await communicator.receive_output(timeout=5))["type"] == "websocket.close"

    asyncio.run(asyncio.wait_for(scenario(), 10))
