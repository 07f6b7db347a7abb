"""Which resource an apiVersion and kind name, as kubectl's RESTMapper finds it: from the hub's own
discovery documents (`/api`, `/api/v1`, `/apis`, `/apis/<group>/<version>`), never from a list kept
here, so every kind the hub serves — built-in, custom (a CustomResourceDefinition's kind) or added
to the hub later — is found without a change to the dashboard.

Guarantees:
- `resource_for(client, apiVersion, kind)` returns the `Resource` (group, version, plural, kind,
  namespaced as discovery says) or None when the hub does not serve that kind in that version.
- The mapping is cached per process and per hub (one `Discovery` per base URL); a kind that is not
  in the cache makes it read that group-version again (a CRD created since is then found, one
  deleted since is forgotten), as kubectl's deferred mapper resets on a miss. Known kinds cost no
  request, and callers that miss the same group-version at once share one reading of it.
- It asks only for what the hub lists: a group-version that `/api` or `/apis` does not name is not
  requested, so an unknown apiVersion makes no 404 on the hub.
- Subresources (`pods/status`, `deployments/scale`) are never mapped.
"""

from __future__ import annotations

import asyncio
from typing import Any

from control.client.http import HubClient
from control.client.resources import Resource


def _split(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def _resources(group: str, version: str, body: dict[str, Any]) -> dict[str, Resource]:
    """{kind: Resource} of one APIResourceList (its main resources only)."""
    found: dict[str, Resource] = {}
    for entry in body.get("resources") or []:
        name, kind = str(entry.get("name") or ""), str(entry.get("kind") or "")
        if not name or "/" in name or not kind:
            continue
        found.setdefault(kind, Resource(group, version, name, kind, namespaced=bool(entry.get("namespaced"))))
    return found


class Discovery:
    """The hub's kinds, by (apiVersion, kind), read from discovery on demand."""

    def __init__(self) -> None:
        self._by_version: dict[str, dict[str, Resource]] = {}  # apiVersion -> {kind: Resource}
        self._reading: dict[str, asyncio.Future[None]] = {}  # apiVersion -> its reading under way

    def cached(self, api_version: str, kind: str) -> Resource | None:
        return self._by_version.get(api_version, {}).get(kind)

    async def resource_for(self, client: HubClient, api_version: str, kind: str) -> Resource | None:
        found = self.cached(api_version, kind)
        if found is None:
            await self.refresh(client, api_version)
            found = self.cached(api_version, kind)
        return found

    async def refresh(self, client: HubClient, api_version: str) -> None:
        """Read one group-version's resources again (forgotten when the hub no longer serves it);
        a caller that comes while it is being read waits for that reading instead of its own."""
        under_way = self._reading.get(api_version)
        if under_way is not None and under_way.get_loop() is asyncio.get_running_loop():
            await asyncio.shield(under_way)
            return
        reading = self._reading[api_version] = asyncio.ensure_future(self._read(client, api_version))
        try:
            await asyncio.shield(reading)
        finally:
            if self._reading.get(api_version) is reading:
                del self._reading[api_version]

    async def _read(self, client: HubClient, api_version: str) -> None:
        group, version = _split(api_version)
        if not version or not await self._served(client, group, version):
            self._by_version.pop(api_version, None)
            return
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        self._by_version[api_version] = _resources(group, version, await client.request("GET", path) or {})

    @staticmethod
    async def _served(client: HubClient, group: str, version: str) -> bool:
        if not group:
            return version in ((await client.request("GET", "/api") or {}).get("versions") or [])
        groups = (await client.request("GET", "/apis") or {}).get("groups") or []
        return any(g.get("name") == group and any(v.get("version") == version for v in g.get("versions") or [])
                   for g in groups)


_per_hub: dict[str, Discovery] = {}


def for_hub(client: HubClient) -> Discovery:
    """The process's discovery cache of the hub this client talks to."""
    return _per_hub.setdefault(client.server, Discovery())


async def resource_for(client: HubClient, api_version: str, kind: str) -> Resource | None:
    return await for_hub(client).resource_for(client, api_version, kind)
