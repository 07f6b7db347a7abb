"""The order of kube-scheduler's active queue (its default QueueSort plugin, PrioritySort): pods of
higher `spec.priority` leave first; among equals, the one queued first leaves first.

Guarantees: `PriorityOrder` is a `control.client.workqueue.Order`: a key's priority is read when
it is queued (from `priority_of(key)`: 0 for a key no longer known), so a pod waiting behind a
burst of lower-priority pods is the next one a worker takes.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Callable, Iterator


class PriorityOrder:
    def __init__(self, priority_of: Callable[[str], int]):
        self.priority_of = priority_of
        self._heap: list[tuple[int, int, str]] = []
        self._sequence = itertools.count()

    def append(self, key: str) -> None:
        heapq.heappush(self._heap, (-self.priority_of(key), next(self._sequence), key))

    def popleft(self) -> str:
        return heapq.heappop(self._heap)[2]

    def __len__(self) -> int:
        return len(self._heap)

    def __iter__(self) -> Iterator[str]:
        return (key for _, _, key in sorted(self._heap))
