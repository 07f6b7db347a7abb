"""The Pod and Namespace informers kube-proxy needs for NetworkPolicies, run only while some
NetworkPolicy exists: a cluster without one pays no pod or namespace watch per kube-proxy.

Guarantees:
- `policies(count)` is told the number of NetworkPolicies in kube-proxy's policy informer at every
  change. The first policy starts fresh Pod and Namespace informers (`make(resource)`, with the
  `handlers` that keep the `PolicyView`); once no policy is left for `linger` seconds of the clock
  (and none came back meanwhile) they are stopped and `on_stop` is called (the view forgets its
  pods and namespaces). A policy that comes back later starts them anew, from a fresh list.
- `ready` is true when no policy exists (nothing isolates anyone: no peer needs knowing) or when
  every peer informer has synced its first full list since it was started. Until then a decision
  must wait (`wait_ready`): one made on a cold cache could allow what a policy denies or deny what
  it allows. `on_ready` is called once per start when the informers have synced.
- `run()` is the supervisor (one of kube-proxy's tasks): it starts and stops the informers' tasks
  (`spawn(informer)`, by default `informer.run()` on the loop) and cancels them when it ends.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Iterable

from control.client.informer import Handlers, Informer
from control.client.resources import Resource
from control.clock import REAL, Clock

LINGER_SECONDS = 60.0  # with no policy left, the peer informers stop after this long


class PeerWatch:
    def __init__(self, make: Callable[[Resource], Informer], handlers: dict[Resource, Handlers], *,
                 clock: Clock | None = None, linger: float = LINGER_SECONDS,
                 on_ready: Callable[[], None] = lambda: None, on_stop: Callable[[], None] = lambda: None,
                 spawn: Callable[[Informer], Awaitable[Any] | None] | None = None):
        self.make, self.handlers, self.clock, self.linger = make, handlers, clock or REAL, linger
        self.on_ready, self.on_stop = on_ready, on_stop
        self.spawn = spawn or (lambda informer: informer.run())
        self.count = 0  # NetworkPolicies known now
        self.informers: dict[Resource, Informer] = {}  # the running ones ({}: stopped)
        self.tasks: list[asyncio.Future] = []
        self.starts = 0
        self._kick = asyncio.Event()
        self._state = asyncio.Event()  # replaced at each change of readiness

    # --- what kube-proxy tells and asks ---------------------------------------------------------

    def policies(self, count: int) -> None:
        was, self.count = self.count, count
        if (was == 0) != (count == 0):
            self._kick.set()
            self._changed()

    @property
    def running(self) -> bool:
        return bool(self.informers)

    @property
    def ready(self) -> bool:
        return self.count == 0 or (self.running and all(i.has_synced for i in self.informers.values()))

    async def wait_ready(self, timeout: float) -> bool:
        """Whether the peers are ready (waiting for them up to `timeout` seconds)."""
        if self.ready:
            return True
        deadline = self.clock.monotonic() + timeout
        while not self.ready:
            left = deadline - self.clock.monotonic()
            if left <= 0:
                return False
            state = self._state
            waiter = asyncio.ensure_future(state.wait())
            sleeper = asyncio.ensure_future(self.clock.sleep(left))
            try:
                await asyncio.wait((waiter, sleeper), return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
                sleeper.cancel()
        return True

    # --- starting and stopping ------------------------------------------------------------------

    def start(self) -> None:
        """Fresh informers for the peers, their tasks spawned (nothing if they run already)."""
        if self.running:
            return
        self.starts += 1
        for resource, handlers in self.handlers.items():
            informer = self.informers[resource] = self.make(resource)
            informer.add_handlers(handlers)
        for informer in self.informers.values():
            running = self.spawn(informer)
            if running is not None:
                self.tasks.append(asyncio.ensure_future(running))
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # started by hand, outside a loop (a test feeding the informers): `ready` still holds
        self.tasks.append(asyncio.ensure_future(self._synced(self.informers.values(), self.starts)))

    async def _synced(self, informers: Iterable[Informer], start: int) -> None:
        await asyncio.gather(*(i.synced.wait() for i in list(informers)))
        if start == self.starts and self.running:
            self.on_ready()
            self._changed()

    def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        self.tasks, self.informers = [], {}
        self.on_stop()
        self._changed()

    def _changed(self) -> None:
        self._state.set()
        self._state = asyncio.Event()

    async def run(self) -> None:
        """Start the informers when a policy appears, stop them `linger` seconds after the last goes."""
        try:
            while True:
                self._kick.clear()
                if self.count and not self.running:
                    self.start()
                elif not self.count and self.running:
                    if not await self._kicked_within(self.linger) and not self.count:
                        self.stop()
                    continue
                await self._kick.wait()
        finally:
            if self.running:
                self.stop()

    async def _kicked_within(self, seconds: float) -> bool:
        waiter = asyncio.ensure_future(self._kick.wait())
        sleeper = asyncio.ensure_future(self.clock.sleep(seconds))
        try:
            await asyncio.wait((waiter, sleeper), return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            sleeper.cancel()
        return self._kick.is_set()
