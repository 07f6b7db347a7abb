"""`python manage.py runcluster [--addr 127.0.0.1:8000] [--nodes N] [--data DIR] [--attendees N |
--attendees-file FILE] [--node-addresses auto|own|loopback]`: the whole cluster, and a workshop's attendees provisioned on it
(`control.workshop`, idempotent: a restart with the same names changes nothing).

With authentication on, the `dashboard:` address printed at start-up is the only one to open: it
carries a fresh one-time code that logs the first browser to open it in as the cluster admin (as
Jupyter's tokenised start URL). With attendees it also prints the join URL at the address others can
reach (the LAN address when the hub listens on every address; on loopback, that attendees cannot
reach it and how to listen on the LAN) and each attendee's code. `--join names|codes` chooses whether
the join page lists the names (each claimed once) or only takes a code.

Where the nodes listen (`control.kubelet.addresses`): each on its own 127.0.1.N where this machine
can bind those (Linux), else (macOS, or `--node-addresses loopback` / `KK_NODE_ADDRESSES=loopback`)
all on 127.0.0.1 with ports of their own; decided once here, before any spoke starts, and handed to
every spoke as `KK_NODE_ADDRESSES`.

Guarantees: the data folder holds the SQLite file (unless DATABASE_URL is set); the schema is
migrated before anything serves; the hub runs in its own process and is up (its /healthz
answers) before this command reports the URLs; the cluster admin's kubeconfig is written to
`admin.kubeconfig` in the data folder (0600) before the `kubectl:` line names it.

Stopping stops everything, however it comes: SIGINT or SIGTERM to this process or to its whole
process group (a terminal's Ctrl-C), or the hub exiting. From the first signal on the supervisor
starts nothing (a spoke the group's Ctrl-C already ended stays ended); every spoke and the hub
are terminated together (`Supervisor.stop`: SIGTERM to all at once, SIGKILL to whoever is left
after 3 s) and this process then exits without Python's teardown, so no process of the cluster
remains 5 s after the signal. Should this process itself die abruptly, the children follow:
the hub and the spokes get SIGTERM from the kernel when their parent dies (PR_SET_PDEATHSIG, Linux),
and each of them also watches its parent's pid (`control.parentwatch`: the spokes in `runcomponent`,
the hub in `runhub`), which is what ends them on macOS.
"""

from __future__ import annotations

import logging
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
from control import config, datafolder, roster, workshop
from control.installation import manage_command
from control.kubeconfig import admin as admin_kubeconfig, write_private
from control.kinds.spokes import NAME as SPOKES_NAME, NAMESPACE as SPOKES_NAMESPACE
from control.auth import enabled as auth_enabled
from control.auth.tokenfile import admin_token
from control.kubelet import addresses as nodeaddr
from control.kubelet.node import internal_ip
from control.staticpods import manifests as staticpods
from control.staticpods.runner import StaticPodRunner
from control.supervisor import Supervisor

ADMIN_KUBECONFIG = "admin.kubeconfig"  # the cluster admin's, in the data folder


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
    spokes["ingress-controller"] = ["ingress-controller", "--server", url]  # the maître d' (control/frontdoor)
    spokes["gateway-controller"] = ["gateway-controller", "--server", url]  # the Gateway API (control/gateway)
    for i in range(1, nodes + 1):
        spokes[f"kubelet/node-{i}"] = ["kubelet", "--node", f"node-{i}", "--server", url]
        spokes[f"kube-proxy/node-{i}"] = ["kube-proxy", "--node", f"node-{i}", "--server", url]
    return spokes


def static_pod_runner(url: str, data_dir: Path, supervisor: Supervisor, hub: subprocess.Popen,
                      address_mode: str, env: dict[str, str]) -> StaticPodRunner:
    """node-1's kubelet for the control plane's static pods (`control.staticpods.runner`)."""
    import httpx

    from control.auth.tokenfile import bearer, spoke_token
    from control.kubelet.config import KubeletConfig

    crash = KubeletConfig.from_env(env).backoff  # the kubelets' own crash back-off, at this cluster's pace
    from control.staticpods import addons

    def node_ip(node: str) -> str:
        return "127.0.0.1" if address_mode == nodeaddr.LOOPBACK else internal_ip(node)

    with httpx.Client(base_url=url, timeout=10, headers=bearer(admin_token(data_dir))) as admin:
        for problem in addons.install(admin):  # kubeadm's addon phase: kube-proxy and CoreDNS
            sys.stderr.write(f"an addon was not installed: {problem}\n")
    kube_proxies = addons.KubeProxyPods(url, lambda node: spoke_token(data_dir, "kubelet", node), supervisor,
                                        node_ip, time.time, data_dir / "kubelet", hub_running=lambda: hub.poll() is None,
                                        hub_started=time.time())
    return StaticPodRunner(url, spoke_token(data_dir, "kubelet", "node-1"), data_dir, "node-1", supervisor,
                           hub_running=lambda: hub.poll() is None, hub_started=time.time(),
                           node_ip=lambda: node_ip("node-1"), backoff=(crash.base, crash.cap),
                           kube_proxies=kube_proxies)


def node_address_mode(wanted: str, nodes: int) -> str:
    """`own` or `loopback` for this cluster's `nodes` nodes (`auto`: own where this machine binds them)."""
    return nodeaddr.decide(wanted, [internal_ip(f"node-{i}") for i in range(1, nodes + 1)])


def node_address_line(mode: str, nodes: int) -> str:
    if mode == nodeaddr.LOOPBACK:
        return (f"  nodes:     {nodes} on 127.0.0.1, each kubelet and kube-proxy on a port of its own "
                f"(in each Node's status)")
    last = f"..{internal_ip(f'node-{nodes}')}" if nodes > 1 else ""
    return f"  nodes:     {nodes} on their own addresses {internal_ip('node-1')}{last} (kubelet 10250, kube-proxy 10256, or a free port where those are taken)"


def install_kitchen(url: str, err, token: str | None = None) -> None:
    """The restaurant's kinds (Order, Dish) and the Gateway API's (GatewayClass, Gateway, HTTPRoute,
    ReferenceGrant, with the GatewayClass `kube-kitchen`) on every fresh cluster; a refusal is
    reported, not fatal."""
    from control.gateway.manifests import CRDS as GATEWAY_CRDS
    from control.restaurant.install import InstallError, install_crds

    from control.gateway.install import install_objects

    for what, crds in (("the restaurant's kinds", None), ("the Gateway API's kinds", GATEWAY_CRDS)):
        try:
            install_crds(url, token=token, **({"crds": crds} if crds else {}))
        except (InstallError, OSError) as exc:
            err.write(f"{what} were not installed: {exc}")
            continue
        if crds is GATEWAY_CRDS:  # the aggregated roles and the bootstrap GatewayClass `kube-kitchen`
            for problem in install_objects(url, token or install_token()):
                err.write(f"a Gateway API object was not installed: {problem}")


def install_token() -> str:
    from control.auth.tokenfile import operator_token

    return operator_token(settings.DATA_DIR)


def _reachable(url: str) -> tuple[str, str]:
    """(the address to open on this machine, the join address for others or "" on loopback)."""
    import ipaddress

    from control.serving.hosts import machine_names  # the primary address, found without sending a packet

    host, port = split_addr(url.removeprefix("http://"))
    bare = host.strip("[]")
    if bare in ("0.0.0.0", "::"):
        lan = ""
        for name in machine_names():
            try:
                lan = str(ipaddress.ip_address(name))
            except ValueError:
                continue
        return f"http://127.0.0.1:{port}", f"http://{lan or host}:{port}/join/"
    if bare == "localhost" or bare.startswith("127.") or bare == "::1":
        return url, ""
    return url, f"{url}/join/"


def write_admin_kubeconfig(url: str, data_dir: Path) -> Path:
    """The cluster admin's kubeconfig for this hub, `admin.kubeconfig` in its data folder (0600),
    written again at every start (the token, CA and HTTPS address are the folder's)."""
    document, _ = admin_kubeconfig(data_dir, url)
    return write_private(data_dir / ADMIN_KUBECONFIG, document)


def start_lines(url: str, data_dir: Path, codes: dict[str, str]) -> list[str]:
    """The start-up lines after the first: the one address to open, kubectl, the join page."""
    here, join_url = _reachable(url)
    lines = []
    if auth_enabled():
        # a fresh one-time code at every start: the first browser to open the address is the instructor
        code = roster.instructor_code(data_dir)
        lines.append(f"  dashboard: {here}/?code={code}  (open this: it logs you in as the cluster admin, once; "
                     f"later ones log in with the admin token in {data_dir / 'tokens.csv'})")
    else:
        lines.append(f"  dashboard: {here}/")
    # a file, not `<(manage.py kubeconfig)`: kubectl reads its kubeconfig more than once, a pipe once
    kubeconfig = write_admin_kubeconfig(url, data_dir)
    lines.append(f"  kubectl:   kubectl --kubeconfig {kubeconfig} get pods  (the cluster admin; "
                 f"or export KUBECONFIG={kubeconfig})")
    if codes:
        where = join_url or (f"{url}/join/ (this computer only: attendees cannot reach it; "
                             "start with --addr 0.0.0.0:8000 to serve the LAN)")
        lines.append(f"  join:      {where}  ({len(codes)} attendees; kubeconfigs in "
                     f"{roster.folder_of(data_dir)}; codes: "
                     + ", ".join(f"{name} {code}" for name, code in codes.items()) + ")")
    return lines


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
        parser.add_argument("--pace", choices=("kubernetes", "workshop"), default=config.text("KK_PACE"),
                            help="node heartbeat/eviction timings: Kubernetes' own, or seconds for a workshop")
        parser.add_argument("--no-spokes", action="store_true", help="run the hub alone")
        parser.add_argument("--secure-addr", default="", help="where the hub serves HTTPS for kubectl "
                            "(default: the --addr host, the next port)")
        parser.add_argument("--join", choices=("names", "codes"), default="names",
                            help="the join page lists the attendees' names (each claimed once) or only takes a code")
        parser.add_argument("--node-addresses", choices=nodeaddr.MODES,
                            default=config.text("KK_NODE_ADDRESSES"),
                            help="where the nodes listen: their own 127.0.1.N (own), all on 127.0.0.1 with ports "
                                 "of their own (loopback, as on macOS), or own where this machine can bind them (auto)")
        who = parser.add_mutually_exclusive_group()
        who.add_argument("--attendees", type=int, default=0, help="provision N workshop attendees "
                         "(attendee-1..N): namespace, user, admin there, kubeconfig, join code")
        who.add_argument("--attendees-file", default="", help="provision the attendees named in FILE, one a line")

    def handle(self, *args, addr: str, nodes: int, data: str, pace: str, no_spokes: bool, secure_addr: str = "",
               attendees: int = 0, attendees_file: str = "", join: str = "names",
               node_addresses: str = nodeaddr.AUTO, **options):
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
        datafolder.prepare(data_dir)  # owner-only (0700), a looser one tightened with a warning
        env = {**os.environ, "KK_DATA_DIR": str(data_dir), "DJANGO_SETTINGS_MODULE": "control.settings", "KK_PACE": pace,
               "KK_PARENT_PID": str(os.getpid()), "KK_JOIN": join}
        try:
            address_mode = node_address_mode((node_addresses or "auto").lower(), nodes)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        env["KK_NODE_ADDRESSES"] = address_mode
        env.pop("KK_SQLITE_PATH", None)
        env.pop("KK_TOKEN", None)  # each spoke takes its own identity from the data folder's token file
        manage = manage_command()  # manage.py in a checkout, `python -m control` when installed
        migrated = subprocess.run([*manage, "migrate", "--no-input", "-v", "0"], env=env)
        if stopping:
            return  # the terminal's Ctrl-C reached the migration too
        if migrated.returncode != 0:
            raise CommandError(f"the migration failed (exit code {migrated.returncode})")
        url = f"http://{host}:{port}"
        supervisor = Supervisor(url, [*manage, "runcomponent"], env, {} if no_spokes else spoke_commands(url, nodes))
        staticpods.write_defaults(data_dir)  # as `kubeadm init` writes /etc/kubernetes/manifests
        # Forked before any thread of ours exists, so preexec_fn is safe here.
        secure_addr = secure_addr or (f"[{host}]:{port + 1}" if ":" in host else f"{host}:{port + 1}")
        hub = subprocess.Popen([*manage, "runhub", "--addr", addr, "--secure-addr", secure_addr], env=env,
                               preexec_fn=die_with_parent)
        static_pods: StaticPodRunner | None = None
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
                if not no_spokes:  # made once the hub is up: its token file is the hub's
                    static_pods = static_pod_runner(url, data_dir, supervisor, hub, address_mode, env)
                    static_pods.desired()  # the manifests' flags decide the components' first start
                supervisor.tick()
                if static_pods is not None:
                    static_pods.start()
                threading.Thread(target=supervisor.watch_forever, name="supervisor", daemon=True).start()
            self.stdout.write(self.style.SUCCESS(f"Kube Kitchen is up: {url}  (data in {data_dir}, pace {pace})"))
            for line in start_lines(url, data_dir, codes):
                self.stdout.write(line)
            if not no_spokes:
                self.stdout.write(f"  spokes:    controller-manager, scheduler, {nodes} kubelet(s) and kube-proxies, line-cook, garnish-cook, "
                                  f"ingress-controller, gateway-controller, "
                                  f"each its own process; "
                                  f"desired states in ConfigMap {SPOKES_NAMESPACE}/{SPOKES_NAME}")
                self.stdout.write(node_address_line(address_mode, nodes))
            self.stdout.flush()
            while not stopping and hub.poll() is None:
                time.sleep(0.2)
                for name in supervisor.tick():
                    self.stderr.write(f"spoke {name} exited")
        finally:
            if static_pods is not None:
                static_pods.stop()
            supervisor.stop(also=[hub])
        if stopping:
            # Every process of the cluster is gone: leave at once. Python's own teardown of this
            # process (the hub's modules imported here, freed one by one) took another 2-4 s after
            # a 10-node cluster's Ctrl-C on a busy machine, past the 5 s in which nothing may remain.
            self.stdout.flush()
            self.stderr.flush()
            logging.shutdown()
            os._exit(0)
        if not stopping and hub.returncode not in (0, -signal.SIGTERM):
            raise CommandError(f"the hub exited with code {hub.returncode}")
