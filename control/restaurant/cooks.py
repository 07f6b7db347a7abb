"""The cooks as spokes: `python manage.py runcomponent line-cook|garnish-cook --server URL`.

Guarantees: each cook is its own process with its own client of the hub, identified by its
User-Agent (`line-cook`, `garnish-cook`), with its own informers on Orders and Dishes; neither
knows the other exists. A cook started before the kinds are installed waits (its informers back
off on 404 and list again), so the order of starting never matters.
"""

from __future__ import annotations


from control.clock import REAL, Clock
from control.client.component import connect, run_all
from control.client.events import EventRecorder
from control.client.shared import SharedInformers
from control.restaurant import garnishcook, linecook

COOKS = {linecook.NAME: linecook.build, garnishcook.NAME: garnishcook.build}


async def run_cook(server: str, name: str, *, clock: Clock | None = None) -> None:
    if name not in COOKS:
        raise ValueError(f"unknown cook \"{name}\"; choose from {', '.join(COOKS)}")
    clock = clock or REAL
    client = connect(server, name)
    informers = SharedInformers(client, clock=clock)
    recorder = EventRecorder(client, name, clock=clock)
    runner = COOKS[name](client=client, informers=informers, clock=clock, recorder=recorder)
    await run_all(client, [informers.run(), runner.run()])
