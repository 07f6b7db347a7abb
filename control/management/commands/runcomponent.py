"""`python manage.py runcomponent controller-manager|scheduler|kubelet [--node NAME] --server URL`:
one spoke alone, talking to the hub over HTTP only.

Stop the scheduler and pods stay Pending; start it again and they are placed: each component
converges from whatever state it finds, because reconciliation is level-triggered.
"""

from __future__ import annotations

import asyncio
import logging
import signal

from django.core.management.base import BaseCommand, CommandError

COMPONENTS = ("controller-manager", "scheduler", "kubelet", "line-cook", "garnish-cook", "kube-proxy")


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

    def handle(self, *args, component: str, server: str, node: str | None, controllers: str | None, **options):
        if component in ("kubelet", "kube-proxy") and not node:
            raise CommandError(f"a {component} needs --node NAME")
        logging.basicConfig(level=logging.INFO if options.get("verbosity", 1) > 1 else logging.WARNING,
                            format=f"%(asctime)s {component}{'/' + node if node else ''} %(levelname)s %(message)s")
        wanted = controllers.split(",") if controllers else None

        async def main():
            task = asyncio.ensure_future(_serve(component, server, node, {"controllers": wanted,
                                                                          "balance": options.get("balance")}))
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, task.cancel)
            try:
                await task
            except asyncio.CancelledError:
                pass

        asyncio.run(main())
