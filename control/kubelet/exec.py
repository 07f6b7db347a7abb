"""The kubelet's exec and attach endpoints: `POST /exec/<ns>/<pod>/<container>?command=..&stdin=1
&stdout=1&stderr=1&tty=1` (and `/attach/...`) with `Upgrade: kubekitchen.dev/remotecommand`,
answered `101 Switching Protocols`, then a `terminal.Session` over frames.

Guarantees:
- Before switching protocols the request is checked: a malformed path or flag is 400, no
  command for exec 400 (`you must specify at least one command for the container`), a pod this
  kubelet does not run 404 `pod does not exist`, a container that is not running now 404
  `container not found ("<name>")` (upstream's `GetExec`); a request without the upgrade 400.
- A container's files live as long as its run does: every exec into the same run sees what an
  earlier one wrote; a restart (a new container ID) starts from fresh files.
- The environment is the one the run started with (`runtime`: env, envFrom, valueFrom, `$(VAR)`)
  with `HOSTNAME`, `HOME` and `PATH`; the files are the run's, with the pod's volumes mounted;
  `attach` runs the container's (expanded) command (or its image's shell for busybox-like images)
  the same way exec does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import parse_qs, unquote, urlsplit

import h11

from control.client.framing import header
from control.client.remotecommand import UPGRADE, FrameReader
from control.client.serving import Exchange, HttpError, Request
from control.clock import Clock
from control.kubelet.containers import Container
from control.kubelet.filesystem import pod_hostname
from control.kubelet.behaviour import script_for
from control.kubelet.images import image_facts
from control.kubelet.loads import StressHandle
from control.kubelet.runtime import Runtime, source_ip
from control.userland import SHELLS, Shell
from control.kubelet.terminal import BUSYBOX_IMAGES, Session

Found = tuple[dict[str, Any], Any, tuple[Container, ...]]  # (pod, its record, containers now)
TRUE = ("1", "true", "True")
SHELL_IMAGES = BUSYBOX_IMAGES + ("ubuntu", "debian", "centos", "fedora")


@dataclass(frozen=True)
class ExecRequest:
    action: str  # exec | attach
    namespace: str
    pod: str
    container: str
    command: tuple[str, ...]
    stdin: bool
    stdout: bool
    stderr: bool
    tty: bool


@dataclass(frozen=True)
class ExecTarget:
    container_id: str
    image: str
    pod_name: str
    namespace: str
    pod_ip: str
    env: dict[str, str]
    command: tuple[str, ...]  # what the container runs (attach joins it)
    pod: dict[str, Any]
    container: str
    started_at: float = 0.0  # the run's start: its main command is replayed from there (`process`)


def parse_exec(target: str) -> ExecRequest:
    url = urlsplit(target)
    parts = [unquote(p) for p in url.path.split("/") if p]
    if len(parts) != 4 or parts[0] not in ("exec", "attach") or not all(parts):
        raise HttpError(404, f"no such path: {url.path}")
    query = parse_qs(url.query, keep_blank_values=True)
    flags = {name: (query.get(name) or [""])[-1] in TRUE for name in ("stdin", "stdout", "stderr", "tty")}
    command = tuple(query.get("command") or [])
    if parts[0] == "exec" and not command:
        raise HttpError(400, "you must specify at least one command for the container")
    if not any(flags[name] for name in ("stdin", "stdout", "stderr")):
        raise HttpError(400, "you must specify at least 1 of stdin, stdout, stderr")
    return ExecRequest(parts[0], parts[1], parts[2], parts[3], command, **flags)


def image_command(image: str) -> tuple[str, ...]:
    """What `attach` runs when the pod gives no command: a shell image's shell (its catalogue CMD)."""
    name = image.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
    facts = image_facts(image)
    if facts is not None and facts.shell:
        return facts.cmd or ("sh",)
    return ("sh",) if name in SHELL_IMAGES else ()


def find_target(found: Found | None, request: ExecRequest, runtime: Runtime) -> ExecTarget:
    """The running container a request means, or the HttpError the kubelet answers."""
    if found is None:
        raise HttpError(404, "pod does not exist")
    pod, record, containers = found
    container = next((c for c in containers if c.name == request.container), None)
    if container is None or container.state != "running" or container.current is None:
        raise HttpError(404, f'container not found ("{request.container}")')
    spec = next((c for c in (pod.get("spec") or {}).get("containers") or [] if c.get("name") == container.name), {})
    meta = pod.get("metadata") or {}
    pod_ip = getattr(record, "pod_ip", "") or ""
    made = runtime.config(pod, container.name, container.current.container_id, getattr(record, "host_ip", ""), pod_ip)
    image = spec.get("image") or container.image
    command = made.command + made.args or image_command(image)
    return ExecTarget(container.current.container_id, image, meta.get("name", ""), meta.get("namespace", ""),
                      pod_ip, dict(made.env), command, pod, container.name, container.current.started_at)


class ExecServer:
    """Answers exec/attach requests for the kubelet's node server."""

    def __init__(self, lookup: Callable[[str, str], Found | None], *, clock: Clock,
                 live_ids: Callable[[], set[str]] = set, runtime: Runtime | None = None,
                 network: Callable[[str, str], Any] | None = None):
        self.lookup, self.clock, self.live_ids = lookup, clock, live_ids
        self.runtime = runtime or Runtime(None, clock=clock)
        self.network = network  # (namespace, pod IP) -> the shell's `network.NetworkHandle` (None: no network)

    @staticmethod
    def serves(path: str) -> bool:
        return path.startswith(("/exec/", "/attach/"))

    async def answer(self, request: Request, exchange: Exchange) -> None:
        if request.method != "POST":
            raise HttpError(405, f"method {request.method} not allowed")
        wanted = parse_exec(request.target)
        if header(request.headers, b"upgrade").lower() != UPGRADE.decode():
            raise HttpError(400, "exec needs an upgraded connection (Upgrade: kubekitchen.dev/remotecommand)")
        target = find_target(self.lookup(wanted.namespace, wanted.pod), wanted, self.runtime)
        self.runtime.keep_only(self.live_ids() | {target.container_id})
        argv = list(wanted.command) if wanted.action == "exec" else list(target.command)
        files = self.runtime.replayed(target.pod, target.container, target.container_id, target.pod_ip,
                                      target.started_at, self.clock.now())
        shell = Shell(files, clock=self.clock, hostname=pod_hostname(target.pod)[0] or target.pod_name, env=target.env,
                      name=next((n for n in [argv[0].rsplit("/", 1)[-1]] if n in SHELLS), "sh") if argv else "sh")
        spec = next((c for c in (target.pod.get("spec") or {}).get("containers") or []
                     if c.get("name") == target.container), {})
        shell.resources = StressHandle(self.runtime.loads, target.container_id,
                                       f"{target.namespace}/{target.pod_name}", script_for(target.pod, spec))
        shell.network = (self.network(target.namespace, source_ip(target.pod, target.pod_ip))
                         if self.network is not None else None)
        wire = exchange.wire
        wire.send(h11.InformationalResponse(status_code=101, headers=[(b"connection", b"Upgrade"),
                                                                     (b"upgrade", UPGRADE)]))
        await wire.writer.drain()
        leftover, _ = wire.h11.trailing_data
        session = Session(shell, argv, image=target.image, stdin=wanted.stdin, stdout=wanted.stdout,
                          stderr=wanted.stderr, tty=wanted.tty, send=wire.writer.write)
        try:
            await session.run(FrameReader(wire.reader, bytes(leftover)))
            await wire.writer.drain()
        except ConnectionError:
            pass  # the hub went away: the command was cancelled with it
