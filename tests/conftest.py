"""Shared fixtures: a real hub on a free loopback port, and kubectl pointed at it."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from control.auth.tokenfile import admin_token
from control.ephemeral import ephemeral_ports

ROOT = Path(__file__).resolve().parent.parent
KUBECTL = "/usr/bin/kubectl"


def free_port() -> int:
    """A free loopback port from the kernel (its ephemeral range: where a fake kubelet's port must
    be, as the hub's node-address gate allows only the usual ports and that range)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def free_server_port() -> int:
    """A free loopback port for a hub, below the kernel's ephemeral range, with the next one free
    too (`runcluster` serves HTTPS there): a port from the ephemeral range may be taken again,
    before the hub binds it, as the local port of any outgoing connection (a spoke's to its hub),
    which ends in "Address already in use"."""
    low = ephemeral_ports().start  # this machine's range, also where there is no /proc
    for _ in range(200):
        port = random.randint(max(1024, low - 12_000), low - 2)
        with socket.socket() as sock, socket.socket() as after:
            try:
                sock.bind(("127.0.0.1", port))
                after.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
            return port
    raise RuntimeError("no free loopback port below the ephemeral range")


DATA_DIRS: dict[str, Path] = {}  # hub URL -> its data folder, for `login_url`


def login_url(url: str, next_path: str = "/") -> str:
    """A link that logs a browser into the dashboard of the hub at `url` as the cluster admin (the
    start address `runcluster` prints: a page with a one-time code); the hub's own URL when this
    test run did not start it."""
    from control import roster

    folder = DATA_DIRS.get(url.rstrip("/"))
    if folder is None:
        return f"{url}{next_path}"
    return f"{url}{next_path}{'&' if '?' in next_path else '?'}code={roster.instructor_code(folder)}"


class Hub:
    """A real API server process (migrate + runhub) on its own data folder."""

    def __init__(self, env: dict[str, str] | None = None):
        self.dir = Path(tempfile.mkdtemp(prefix="kk-hub-"))
        self.port = free_server_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "KK_DATA_DIR": str(self.dir), **(env or {})}
        self.env.pop("KK_SQLITE_PATH", None)
        self.process: subprocess.Popen | None = None
        self.log = self.dir / "hub.log"

    def start(self) -> "Hub":
        manage = [sys.executable, str(ROOT / "manage.py")]
        subprocess.run([*manage, "migrate", "--no-input", "-v", "0"], env=self.env, check=True, cwd=ROOT)
        for _ in range(3):
            if self._serve(manage):
                break
            # A port found free was taken before the hub bound it (another test process's server,
            # between our probe and its bind): other ports, as a person would start it again.
            self.port = free_server_port()
            self.url = f"http://127.0.0.1:{self.port}"
        else:
            raise RuntimeError(f"hub exited: {self.log.read_text()[-2000:]}")
        self.kubeconfig = self.dir / "kubeconfig"
        out = subprocess.run([*manage, "kubeconfig", "--server", self.url], env=self.env, cwd=ROOT,
                             check=True, capture_output=True, text=True).stdout
        self.kubeconfig.write_text(out)
        self.token = admin_token(self.dir)
        DATA_DIRS[self.url] = self.dir
        return self

    def _serve(self, manage: list[str]) -> bool:
        """Start runhub on this hub's ports and wait for /healthz; False when it could not listen
        (the port was taken meanwhile), raises for any other end."""
        self.secure_port = free_server_port()
        self.process = subprocess.Popen([*manage, "runhub", "--addr", f"127.0.0.1:{self.port}",
                                         "--secure-addr", f"127.0.0.1:{self.secure_port}"], env=self.env,
                                        cwd=ROOT, stdout=self.log.open("wb"), stderr=subprocess.STDOUT)
        up = until_up(self.process, self.log, lambda: _healthy(self.url), 60, "the hub")  # CI starts Python slowly
        if up is None:
            self.stop()  # never leave the process behind a test that could not use it
            raise RuntimeError("hub did not come up")
        return up

    @property
    def auth(self) -> dict[str, str]:
        """The header that makes a request the cluster admin's."""
        return {"Authorization": f"Bearer {self.token}"}

    def python_client(self):
        """The official Python client's ApiClient for this hub, as the cluster admin."""
        from kubernetes import client

        configuration = client.Configuration(host=self.url)
        configuration.api_key = {"authorization": self.token}
        configuration.api_key_prefix = {"authorization": "Bearer"}
        return client.ApiClient(configuration)

    def kubeconfig_for(self, url: str) -> str:
        """A kubeconfig naming `url` (a plain-HTTP relay in front of the hub: kubectl sends no token
        over HTTP, so the relay adds `auth`)."""
        import yaml

        from control.kubeconfig import kubeconfig

        return yaml.safe_dump(kubeconfig(url), sort_keys=False)

    def urlopen(self, request: "str | urllib.request.Request", timeout: float = 10):
        """urllib's urlopen of a path (or Request) on this hub, as the cluster admin."""
        if isinstance(request, str):
            request = urllib.request.Request(request if "://" in request else self.url + request)
        request.add_header("Authorization", f"Bearer {self.token}")
        return urllib.request.urlopen(request, timeout=timeout)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def kubectl(self, *args: str, input: str | None = None, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        cmd = [KUBECTL, "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.dir / "kube-cache"), *args]
        result = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def ready_nodes(self) -> list[str]:
        """The nodes whose Ready condition is True, as kubectl lists them."""
        nodes = json.loads(self.kubectl("get", "nodes", "-o", "json").stdout)["items"]
        return [n["metadata"]["name"] for n in nodes
                if any(c["type"] == "Ready" and c["status"] == "True" for c in n.get("status", {}).get("conditions", []))]


@pytest.fixture(scope="session")
def hub():
    server = Hub().start()
    yield server
    server.stop()


class Spoke:
    """One `manage.py runcomponent` process against a hub, logging into the hub's folder."""

    def __init__(self, hub: Hub, component: str, node: str | None = None, env: dict[str, str] | None = None):
        self.hub, self.component, self.node = hub, component, node
        self.env = {**hub.env, **(env or {})}
        self.name = f"{component}/{node}" if node else component
        self.process: subprocess.Popen | None = None

    def start(self) -> "Spoke":
        args = [sys.executable, str(ROOT / "manage.py"), "runcomponent", self.component, "--server", self.hub.url]
        if self.node:
            args += ["--node", self.node]
        log = (self.hub.dir / f"{self.name.replace('/', '-')}.log").open("ab")
        self.process = subprocess.Popen(args, env=self.env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        return self

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Cluster(Hub):
    """A hub plus its spokes (controller-manager, scheduler, one kubelet per node), each its own
    process, at the workshop's pace so healing takes seconds."""

    def __init__(self, nodes: int = 3, env: dict[str, str] | None = None):
        super().__init__({"KK_PACE": "workshop", "KK_CRASH_BACKOFF": "1:4", "KK_START_DELAY": "0.05",
                          **(env or {})})
        self.nodes = nodes
        self.spokes: dict[str, Spoke] = {}

    def start(self) -> "Cluster":
        super().start()
        self.start_spoke("controller-manager")
        self.start_spoke("scheduler")
        for i in range(1, self.nodes + 1):
            self.start_spoke("kubelet", node=f"node-{i}")
        return self

    def start_spoke(self, component: str, node: str | None = None) -> None:
        spoke = Spoke(self, component, node).start()
        self.spokes[spoke.name] = spoke

    def stop_spoke(self, name: str) -> None:
        self.spokes.pop(name).stop()

    def stop(self) -> None:
        for name in list(self.spokes):
            self.stop_spoke(name)
        super().stop()


@contextmanager
def hub_with_kubelet(node: str, kubelet_env: dict[str, str], *, scheduler: bool = False,
                     hub_env: dict[str, str] | None = None):
    """A workshop-pace hub (with `hub_env` added to its environment) with one kubelet for `node` (and a
    scheduler if asked), as `.kubelet` and `.scheduler`; every process is stopped on leaving, also
    when a start fails half-way."""
    server = Hub(env={"KK_PACE": "workshop", **(hub_env or {})}).start()
    started: list[Spoke] = []
    try:
        server.kubelet = Spoke(server, "kubelet", node=node, env=kubelet_env).start()
        started.append(server.kubelet)
        if scheduler:
            server.scheduler = Spoke(server, "scheduler").start()
            started.append(server.scheduler)
        yield server
    finally:
        for spoke in reversed(started):
            spoke.stop()
        server.stop()


def ready_cluster(nodes: int, env: dict[str, str] | None = None):
    """For a module-scoped fixture (`yield from ready_cluster(2)`): a Cluster whose nodes are all
    Ready, stopped (with every spoke) when the module is done."""
    running = Cluster(nodes=nodes, env=env).start()
    try:
        wait_for(lambda: len(running.ready_nodes()) == nodes, what=f"{nodes} Ready node(s)")
        yield running
    finally:
        running.stop()


def wait_for(predicate, *, timeout: float = 30.0, interval: float = 0.2, what: str = "condition"):
    """Poll until predicate() returns something truthy; return it (end-to-end tests only)."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")


def start_runcluster(args: list[str], log: Path, *, env: dict[str, str] | None = None, timeout: float = 90,
                     **popen) -> tuple[int, subprocess.Popen]:
    """`manage.py runcluster --addr 127.0.0.1:PORT ARGS`, its output in `log`, waited for until it
    says it is up: (PORT, the process). A port found free may be taken by another test process's
    server before the hub binds it; runcluster then exits saying "Address already in use", and it is
    started again on other ports, up to three times. Any other end before it is up raises."""
    for _ in range(3):
        port = free_server_port()
        with log.open("wb") as out:
            process = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "runcluster",
                                        "--addr", f"127.0.0.1:{port}", *args], cwd=ROOT,
                                       env=env if env is not None else {**os.environ}, stdout=out,
                                       stderr=subprocess.STDOUT, **popen)
        up = until_up(process, log, lambda: "Kube Kitchen is up" in log.read_text(errors="replace"), timeout,
                      "runcluster")
        if up:
            return port, process
        if up is None:
            process.send_signal(signal.SIGINT)  # never leave a cluster behind a test that cannot use it
            process.wait(timeout=30)
            raise RuntimeError(f"runcluster did not come up within {timeout:.0f} s: {log.read_text()[-2000:]}")
    raise RuntimeError("runcluster found its port taken three times")


def until_up(process: subprocess.Popen, log: Path, up, timeout: float, what: str) -> bool | None:
    """Wait for a server `process` (its output in `log`) until `up()`: True then; False when it
    ended saying its port was taken ("Address already in use": a port found free was bound by
    another test process before it, so start it again on another); None when `timeout` passed
    first. Any other end raises, with the end of its log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if up():
            return True
        if process.poll() is not None:
            said = log.read_text(errors="replace")
            if "Address already in use" in said:
                return False
            raise RuntimeError(f"{what} exited with {process.returncode}: {said[-2000:]}")
        time.sleep(0.1)
    return None


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def fast_compacting_hub():
    """A hub whose log keeps two seconds (compacted every 0.2 s, bookmarks every 0.5 s): a watcher
    that does not follow the informer's rules falls into 410s at once."""
    server = Hub(env={"KK_LOG_MAX_AGE": "2", "KK_COMPACT_INTERVAL": "0.2", "KK_BOOKMARK_INTERVAL": "0.5"}).start()
    yield server
    server.stop()
