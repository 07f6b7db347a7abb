"""What every spoke process shares: its identity, its client of the hub, its clock, and a way to
run informers and runners together until it is stopped.

Guarantees: a component's User-Agent is its name (e.g. `kube-scheduler`, `kubelet/node-1`), so
the hub attributes every request; `run_all` runs the given coroutines until one fails or the
process is stopped, then cancels the rest and closes the client.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Iterable

from control import config
from control.client.http import HubClient

log = logging.getLogger(__name__)


def user_agent(name: str) -> str:
    return f"{name} (kube-kitchen)"


def connect(server: str, name: str, **options: Any) -> HubClient:
    """A client of the hub as `name`. Its identity: `KK_TOKEN` (a spoke's parent sets it), else, for a
    program run by the cluster's operator (examples/dish_counter.py), the admin's token from the data
    folder's existing token file."""
    if "token" not in options and not config.given("KK_TOKEN"):
        from control.auth import tokenfile
        from control.keys import default_data_dir

        if tokenfile.path(default_data_dir()).exists():
            options["token"] = tokenfile.admin_token(default_data_dir())
    return HubClient(server, agent=user_agent(name), **options)


async def run_all(client: HubClient, tasks: Iterable[Awaitable[Any]]) -> None:
    running = [asyncio.ensure_future(t) for t in tasks]
    try:
        done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            if task.exception():
                raise task.exception()  # type: ignore[misc]
    finally:
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        await client.close()

