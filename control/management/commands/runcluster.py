"""`python manage.py runcluster [--addr 127.0.0.1:8000] [--nodes N] [--data DIR] [--attendees N |
--attendees-file FILE]`: the whole cluster, and a workshop's attendees provisioned on it
(`control.workshop`, idempotent: a restart with the same names changes nothing).

With authentication on, the start-up lines print a one-time link that logs the instructor's
browser in as the cluster admin, and, with attendees, the join URL and each attendee's code.

Guarantees: the data folder holds the SQLite file (unless DATABASE_URL is set); the schema is
migrated before anything serves; the hub runs in its own process and is up (its /healthz
answers) before this command reports the URLs.

Stopping stops everything, however it comes: SIGINT or SIGTERM to this process or to its whole
process group (a terminal's Ctrl-C), or the hub exiting. From the first signal on the supervisor
starts nothing (a spoke the group's Ctrl-C already ended stays ended); every spoke and the hub
are terminated together (`Supervisor.stop`: SIGTERM to all at once, SIGKILL to whoever is left
after 3 s), so no process of the cluster remains 5 s after the signal. Should this process itself die abruptly, the children follow:
the hub and the spokes get SIGTERM from the kernel when their parent dies (PR_SET_PDEATHSIG), and
each spoke also watches its parent's pid (`runcomponent`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from control.management.commands.runcomponent import die_with_parent
from control.management.commands.runhub import split_addr
from control import workshop
from control.auth import enabled as auth_enabled
from control.auth.tokenfile import admin_token
from control.supervisor import Supervisor


def wait_until_up(url: str, *, seconds: float = 60.0, process: subprocess.Popen | None = None,
                  stopping=lambda: False) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not stopping():
        if process is not None and process.poll() is not None:
            raise CommandError(f"the hub exited with code {process.returncode} before it came up")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    if not stopping():
        raise CommandError(f"the hub did not answer at {url} within {seconds:.0f} s")


def spoke_commands(url: str, nodes: int) -> dict[str, list[str]]:
    """The runcomponent arguments of every spoke of a cluster with `nodes` nodes, by spoke name."""
    spokes = {"controller-manager": ["controller-manager", "--server", url], "scheduler": ["scheduler", "--server", url]}
    spokes["line-cook"] = ["line-cook", "--server", url]  # the restaurant's two cooks (control/restaurant)
    spokes["garnish-cook"] = ["garnish-cook", "--server", url]
    for i in range(1, nodes + 1):
        spokes[f"kubelet/node-{i}"] = ["kubelet", "--node", f"node-{i}", "--server", url]
        spokes[f"kube-proxy/node-{i}"] = ["kube-proxy", "--node", f"node-{i}", "--server", url]
    return spokes


def install_kitchen(url: str, err, token: str | None = None) -> None:
    """The restaurant's kinds (Order, Dish) on every fresh cluster; a refusal is reported, not fatal."""
    from control.restaurant.install import InstallError, install_crds

    try:
        install_crds(url, token=token)
    except (InstallError, OSError) as exc:
        err.write(f"the restaurant's kinds were not installed: {exc}")


class Command(BaseCommand):
    @staticmethod
    def attendee_names(count: int, names_file: str) -> list[str]:
        try:
            if names_file:
                return workshop.read_names(Path(names_file).read_text())
            return workshop.attendee_names(count) if count else []
        except (OSError, workshop.WorkshopError) as exc:
            raise CommandError(str(exc)) from None

    help = "Run the whole cluster: the hub (API server + dashboard) and its spokes."

    def add_arguments(self, parser):
        parser.add_argument("--addr", default="127.0.0.1:8000", help="where the hub listens (default loopback)")
        parser.add_argument("--nodes", type=int, default=3, help="how many simulated nodes")
        parser.add_argument("--data", default=str(settings.DATA_DIR), help="folder for the SQLite file")
        parser.add_argument("--pace", choices=("kubernetes", "workshop"), default=os.environ.get("KK_PACE", "kubernetes"),
                            help="node heartbeat/eviction timings: Kubernetes' own, or seconds for a workshop")
        parser.add_argument("--no-spokes", action="store_true", help="run the hub alone")
        parser.add_argument("--secure-addr", default="", help="where the hub serves HTTPS for kubectl "
                            "(default: the --addr host, the next port)")
        who = parser.add_mutually_exclusive_group()
        who.add_argument("--attendees", type=int, default=0, help="provision N workshop attendees "
                         "(attendee-1..N): namespace, user, admin there, kubeconfig, join code")
        who.add_argument("--attendees-file", default="", help="provision the attendees named in FILE, one a line")

    def handle(self, *args, addr: str, nodes: int, data: str, pace: str, no_spokes: bool, secure_addr: str = "",
               attendees: int = 0, attendees_file: str = "", **options):
        stopping = False
        supervisor: Supervisor | None = None

        def stop(*_):
            nonlocal stopping
            stopping = True
            if supervisor is not None:
                supervisor.begin_stop()  # at once: the same Ctrl-C may be ending the spokes right now

        # First of all: a signal during the migration must not be lost (nor kill us half-way).
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        host, port = split_addr(addr)
        names = self.attendee_names(attendees, attendees_file)  # a bad name stops us before anything starts
        data_dir = Path(data).resolve()
        data_dir.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "KK_DATA_DIR": str(data_dir), "DJANGO_SETTINGS_MODULE": "control.settings", "KK_PACE": pace,
               "KK_PARENT_PID": str(os.getpid())}
        env.pop("KK_SQLITE_PATH", None)
        env.pop("KK_TOKEN", None)  # each spoke takes its own identity from the data folder's token file
        manage = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py")]
        migrated = subprocess.run([*manage, "migrate", "--no-input", "-v", "0"], env=env)
        if stopping:
            return  # the terminal's Ctrl-C reached the migration too
        if migrated.returncode != 0:
            raise CommandError(f"the migration failed (exit code {migrated.returncode})")
        url = f"http://{host}:{port}"
        supervisor = Supervisor(url, [*manage, "runcomponent"], env, {} if no_spokes else spoke_commands(url, nodes))
        # Forked before any thread of ours exists, so preexec_fn is safe here.
        secure_addr = secure_addr or (f"[{host}]:{port + 1}" if ":" in host else f"{host}:{port + 1}")
        hub = subprocess.Popen([*manage, "runhub", "--addr", addr, "--secure-addr", secure_addr], env=env,
                               preexec_fn=die_with_parent)
        try:
            wait_until_up(url, process=hub, stopping=lambda: stopping)
            if not stopping:
                install_kitchen(url, self.stderr, admin_token(data_dir))
            try:
                codes = workshop.provision(url, data_dir, names) if names and not stopping else {}
            except workshop.WorkshopError as exc:
                raise CommandError(f"the attendees were not provisioned: {exc}") from None
            if not stopping:
                supervisor.publish_desired()
                supervisor.tick()
                threading.Thread(target=supervisor.watch_forever, name="supervisor", daemon=True).start()
            self.stdout.write(self.style.SUCCESS(f"Kube Kitchen is up: {url}  (data in {data_dir}, pace {pace})"))
            self.stdout.write(f"  dashboard: {url}/")
            if auth_enabled():
                # a fresh one-time code at every start: the link logs one browser in as the cluster admin
                code = workshop.instructor_code(data_dir)
                self.stdout.write(f"  instructor: {url}/login/?code={code}  (once; or log in with the admin "
                                  f"token in {data_dir / 'tokens.csv'})")
            # the kubeconfig reads the admin token and the HTTPS address from this cluster's data folder
            folder = "" if data_dir == Path(settings.DATA_DIR).resolve() else f"KK_DATA_DIR={data_dir} "
            self.stdout.write(f"  kubectl:   kubectl --kubeconfig <({folder}{sys.executable} manage.py kubeconfig "
                              f"--server {url}) get pods")
            if codes:
                self.stdout.write(f"  join:      {url}/join/  ({len(codes)} attendees; kubeconfigs in "
                                  f"{workshop.folder_of(data_dir)}; codes: "
                                  + ", ".join(f"{name} {code}" for name, code in codes.items()) + ")")
            if not no_spokes:
                self.stdout.write(f"  spokes:    controller-manager, scheduler, {nodes} kubelet(s) and kube-proxies, line-cook, garnish-cook, "
                                  f"each its own process; "
                                  f"desired states in ConfigMap kube-system/kubekitchen-spokes")
            self.stdout.flush()
            while not stopping and hub.poll() is None:
                time.sleep(0.2)
                for name in supervisor.tick():
                    self.stderr.write(f"spoke {name} exited")
        finally:
            supervisor.stop(also=[hub])
        if not stopping and hub.returncode not in (0, -signal.SIGTERM):
            raise CommandError(f"the hub exited with code {hub.returncode}")
