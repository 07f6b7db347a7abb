"""`python manage.py runcomponent controller-manager|scheduler|kubelet [--node NAME] --server URL`:
one spoke alone, talking to the hub over HTTP only.

Stop the scheduler and pods stay Pending; start it again and they are placed: each component
converges from whatever state it finds, because reconciliation is level-triggered.

A spoke never outlives the process that started it (runcluster, a test, a shell): on Linux the
kernel sends it SIGTERM when its parent dies (`prctl(PR_SET_PDEATHSIG)`), and a watchdog on its
parent's pid stops it within `PARENT_CHECK` seconds on any system. The spoke acts as its real counterpart's identity (`system:kube-scheduler`, `system:node:NODE`,
...): its token is `KK_TOKEN` when the parent set one, else its identity's line of the data folder's
token file (owner-only). With `KK_PARENT_PID` set
(runcluster sets it), a spoke whose parent is already gone when it starts exits at once.

SIGINT or SIGTERM cancels the spoke's work (its servers and connections close in their `finally`)
and the process then ends at once (`os._exit`, after flushing its output), skipping the interpreter's
teardown of a large import graph; a clean-up that hangs is cut short after `EXIT_GRACE` seconds.
Nothing of a spoke lives in its process: its state is in the hub.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys

from django.core.management.base import BaseCommand, CommandError

from control import config, heap
from control.staticpods.manifests import VERSION, refused_flag

# die_with_parent is imported from here by runcluster and the tests (it lived here first)
from control.parentwatch import PARENT_CHECK, die_with_parent, parent_is_gone  # noqa: F401

COMPONENTS = ("controller-manager", "scheduler", "kubelet", "line-cook", "garnish-cook", "kube-proxy",
              "ingress-controller", "gateway-controller")
EXIT_GRACE = 2.0  # seconds a signalled spoke gets to close its servers and connections


def exit_now() -> None:
    """End the process now, its output flushed (no interpreter teardown, no executor joins)."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)


async def stop_when_orphaned(parent: int, task: asyncio.Future, *, every: float = PARENT_CHECK) -> None:
    """Cancel `task` once our parent is gone (the kernel's signal may not come: another OS, or
    the parent thread that forked us ended)."""
    while os.getppid() == parent:
        await asyncio.sleep(every)
    logging.getLogger(__name__).warning("parent %d is gone; stopping", parent)
    task.cancel()


async def _serve(component: str, server: str, node: str | None, options: dict) -> None:
    if component == "controller-manager":
        from control.controllers.manager import run_controller_manager

        await run_controller_manager(server, controllers=options.get("controllers"))
    elif component == "scheduler":
        from control.scheduler.scheduler import run_scheduler

        await run_scheduler(server)
    elif component in ("line-cook", "garnish-cook"):
        from control.restaurant.cooks import run_cook

        await run_cook(server, component)
    elif component == "ingress-controller":
        from control.frontdoor.controller import run_ingress_controller

        await run_ingress_controller(server)
    elif component == "gateway-controller":
        from control.gateway.controller import run_gateway_controller

        await run_gateway_controller(server)
    elif component == "kube-proxy":
        from control.proxy.proxy import run_kube_proxy

        await run_kube_proxy(server, node=node or "node-1", balance=options.get("balance") or "round-robin")
    else:
        from control.kubelet.kubelet import run_kubelet

        await run_kubelet(server, node=node or "node-1")


class Command(BaseCommand):
    help = "Run one spoke (controller-manager, scheduler or a kubelet) against a hub."

    def add_arguments(self, parser):
        parser.add_argument("component", choices=COMPONENTS)
        parser.add_argument("--server", default="http://127.0.0.1:8000", help="the hub's URL")
        parser.add_argument("--node", help="the node name (kubelet and kube-proxy)")
        parser.add_argument("--balance", choices=("round-robin", "random"), default="round-robin",
                            help="how kube-proxy picks an endpoint (kube-proxy only)")
        parser.add_argument("--controllers", help="comma-separated controllers to run (controller-manager only)")
        parser.add_argument("--component-flag", action="append", dest="flags", default=[],
                            help="one of the component's flags from its static pod manifest (control.staticpods), "
                                 "as --component-flag=--leader-elect=true; an unknown one ends the process as "
                                 "upstream's binary would")

    def handle(self, *args, component: str, server: str, node: str | None, controllers: str | None, **options):
        if component in ("kubelet", "kube-proxy") and not node:
            raise CommandError(f"a {component} needs --node NAME")
        verbose = options.get("verbosity", 1) > 1 or bool(config.given("KK_LOG_VERBOSE"))
        logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                            format=f"%(asctime)s {component}{'/' + node if node else ''} %(levelname)s %(message)s")
        if config.given("KK_LOG_VERBOSE"):  # a static pod's log: our own INFO lines, formatted once
            logging.getLogger("control").setLevel(logging.INFO)
            logging.getLogger("control").handlers.clear()
        refusal = refused_flag(component, options.get("flags") or [])
        if refusal:  # what the real binary prints (cobra) before it exits 1
            sys.stderr.write(f"Error: {refusal}\n")
            sys.stderr.flush()
            sys.exit(1)
        if options.get("flags") or config.given("KK_LOG_VERBOSE"):  # a static pod's first log line
            logging.getLogger(component).info('"Starting Kubernetes %s" version="%s" flags="%s"', component,
                                              VERSION, " ".join(options["flags"]))
        wanted = controllers.split(",") if controllers else None
        if not config.given("KK_TOKEN"):  # this spoke's own identity, from the data folder's token file
            from django.conf import settings

            from control.auth.tokenfile import spoke_token

            os.environ["KK_TOKEN"] = spoke_token(settings.DATA_DIR, component, node)
        parent = os.getppid()
        die_with_parent()
        if parent_is_gone(config.given("KK_PARENT_PID"), parent):
            return  # started by a runcluster that has already exited

        signalled = False

        async def main():
            task = asyncio.ensure_future(_serve(component, server, node, {"controllers": wanted,
                                                                          "balance": options.get("balance")}))
            loop = asyncio.get_running_loop()

            def stop() -> None:
                nonlocal signalled
                if not signalled:
                    signalled = True
                    task.cancel()
                    loop.call_later(EXIT_GRACE, exit_now)  # a clean-up that hangs does not hold the stop

            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop)
            watchdog = asyncio.ensure_future(stop_when_orphaned(parent, task))
            try:
                await task
            except asyncio.CancelledError:
                pass
            finally:
                watchdog.cancel()
                # Stopping already: a second signal (the group's Ctrl-C, then the supervisor's
                # SIGTERM) must not reach asyncio's handler once `asyncio.run` has closed the
                # loop's wakeup pipe ("Exception ignored ... signal wakeup fd: Bad file descriptor").
                for sig in (signal.SIGINT, signal.SIGTERM):
                    loop.remove_signal_handler(sig)
                    signal.signal(sig, signal.SIG_IGN)

        heap.settle()  # started: what start-up built is frozen out of the collector's way (control.heap)
        asyncio.run(main())
        if signalled:
            exit_now()
