"""Shared informers: one list+watch per resource (and selector) per process, however many
controllers in that process read it — as kube-controller-manager's SharedInformerFactory.

Guarantees: `get` returns the same informer for the same (resource, namespace, selectors);
indexers asked for by different controllers are all kept; `run` runs every informer created.
"""

from __future__ import annotations

import asyncio

from control.client.http import HubClient
from control.client.informer import Indexer, Informer
from control.client.resources import Resource
from control.clock import Clock


class SharedInformers:
    def __init__(self, client: HubClient, *, clock: Clock | None = None):
        self.client, self.clock = client, clock
        self._informers: dict[tuple, Informer] = {}

    def get(self, resource: Resource, *, namespace: str | None = None, label_selector: str = "",
            field_selector: str = "", indexers: dict[str, Indexer] | None = None) -> Informer:
        key = (resource, namespace, label_selector, field_selector)
        informer = self._informers.get(key)
        if informer is None:
            informer = self._informers[key] = Informer(
                self.client, resource, namespace=namespace, label_selector=label_selector,
                field_selector=field_selector, clock=self.clock)
        for name, fn in (indexers or {}).items():
            informer.cache.add_indexer(name, fn)
        return informer

    def all(self) -> list[Informer]:
        return list(self._informers.values())

    async def run(self) -> None:
        await asyncio.gather(*(informer.run() for informer in self._informers.values()))
