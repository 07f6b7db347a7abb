"""connect_upgraded (control.client.remotecommand), the hub's exec/attach connection to a kubelet:
a refusal is reported with its status, and an endless refusal body is not read whole."""

from __future__ import annotations

import asyncio

import pytest

from control.client.remotecommand import MAX_REFUSAL_BYTES, UpgradeRefused, connect_upgraded


def test_a_huge_refusal_is_read_only_up_to_its_bound():
    async def scenario():
        async def kubelet(reader, writer):
            await reader.readuntil(b"\r\n\r\n")
            size = 8 * 1024 * 1024
            writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: %d\r\n\r\n" % size)
            for _ in range(size // 65536):
                writer.write(b"x" * 65536)
                try:
                    await writer.drain()
                except ConnectionError:
                    break
            writer.close()

        server = await asyncio.start_server(kubelet, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            with pytest.raises(UpgradeRefused) as refused:
                await connect_upgraded("127.0.0.1", port, "/exec/default/p/c?command=ls")
        finally:
            server.close()
        return refused.value

    refused = asyncio.run(scenario())
    assert refused.status == 400 and 0 < len(refused.message) <= MAX_REFUSAL_BYTES + 65536


def test_the_token_goes_to_the_kubelet_as_a_bearer_credential():
    async def scenario():
        heads = []

        async def kubelet(reader, writer):
            heads.append(await reader.readuntil(b"\r\n\r\n"))
            writer.write(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n")
            writer.close()

        server = await asyncio.start_server(kubelet, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            with pytest.raises(UpgradeRefused) as refused:
                await connect_upgraded("127.0.0.1", port, "/exec/default/p/c?command=ls", token="s3cret")
        finally:
            server.close()
        return heads[0], refused.value

    head, refused = asyncio.run(scenario())
    assert b"\r\nauthorization: Bearer s3cret\r\n" in head
    assert refused.status == 401
