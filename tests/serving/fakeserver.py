"""Daphne's Server as its protocols use it, for the serving tests: the connections it was told of
and one application queue (a list)."""

from __future__ import annotations


class FakeServer:
    def __init__(self):
        self.connected, self.disconnected, self.queue = [], [], []

    def protocol_connected(self, protocol):
        self.connected.append(protocol)

    def protocol_disconnected(self, protocol):
        self.disconnected.append(protocol)

    def create_application(self, protocol, scope):
        self.scope = scope
        return self

    def put_nowait(self, message):
        self.queue.append(message)
