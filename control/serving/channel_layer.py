"""The embedded channel layer: Channels' in-memory layer, without a copy per receiver.

Guarantees: `group_send` hands every member of the group the same message object (Channels'
`InMemoryChannelLayer` deep-copies it once per member, to behave like a layer that serializes);
a plain `send` still copies. Receivers must treat a group message as read-only, as ours do (the
dashboard's `LiveConsumer.traffic_batch` filters a batch into a new list and forwards it).

Why: the hub publishes its traffic records to one group that every open dashboard joins; with a
room of 30 pages, copying each batch 30 times was a sixth of the hub's CPU (bench/workshop.py).
The Redis layer (scale-out shape) serializes anyway and is not affected.
"""

from __future__ import annotations

from typing import Any

from channels.layers import InMemoryChannelLayer


class SharedMessage(dict):
    """A message that `copy.deepcopy` returns as is (it is never changed after it is sent)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> "SharedMessage":
        return self


class InProcessChannelLayer(InMemoryChannelLayer):
    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        await super().group_send(group, SharedMessage(message))
