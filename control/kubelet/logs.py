"""Simulated container logs, and the kubelet's small HTTP server that hands them to the hub.

A container's log is what its main command printed (stdout and stderr), as the simulated
userland ran it on the run's own virtual time (`process`): kubernetes.io's counter pod logs
`0: Mon Jan  1 ...` once a second, `printenv HOSTNAME` logs the hostname; a container running its
image's own command logs what that prints at start (the catalogue's `log`: nginx's entrypoint
lines, redis's banner; `images.image_log`). Nothing else is in it:
the kitchen's narration (a start-up line naming the image, a ready line when readiness turns true,
a tick every `interval` seconds while it runs, and a last line when it exits: the crash, the
completion or the SIGTERM line) is added only for a pod that asks for it
(`kubekitchen.dev/narrate: "true"`, `behaviour`). A run's log only grows.

Guarantees:
- `GET /containerLogs/<ns>/<pod>/<container>?tailLines=&follow=&timestamps=&previous=&sinceSeconds=
  &limitBytes=` answers text/plain: the current run's lines (the last ended run while waiting out
  a back-off), or the previous run's with previous=true. Unknown pod or container: 404; a
  container still being created, or no previous run: 400 with Kubernetes' wording. Malformed
  parameters: 400. Other paths: 404; other methods: 405. `GET /healthz` answers "ok".
- follow=true streams (chunked) every new line as its moment comes and ends when the run ends,
  the pod goes, or the client leaves.
- Request parsing (`parse_request`) and rendering (`run_lines`, `render_log`) are pure; the
  server only moves bytes and waits on the injected clock. Before it renders, a target's
  `catch_up` replays a long history in turns (the kubelet's other work goes on in between).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Awaitable, Callable
from urllib.parse import parse_qs, unquote, urlsplit

from control.client.serving import Exchange, HttpError, NodeServer, Request
from control.clock import Clock
from control.kinds.meta import format_nano_time
from control.kubelet.behaviour import Script
from control.kubelet.containers import Container, Run

log = logging.getLogger(__name__)
MAX_TICKS = 10_000  # older ticks of a long run are "rotated away"


LogError = HttpError  # the node servers' one error class


@dataclass(frozen=True)
class LogRequest:
    namespace: str
    pod: str
    container: str
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    since_seconds: float | None = None
    limit_bytes: int | None = None


@dataclass(frozen=True)
class LogTarget:
    """What the log server needs of one container: its record, its script, its image and what a
    run of it printed by a moment (`Printed`)."""

    container: Container
    script: Script
    image: str
    printed: "Printed" = lambda run, until: []
    catch_up: "CatchUp | None" = None  # replays a long history in turns before `printed` reads it


@dataclass(frozen=True)
class LogLine:
    at: float
    text: str


def _flag(query: dict[str, list[str]], name: str) -> bool:
    value = (query.get(name) or ["false"])[-1].lower()
    if value not in ("true", "false", "1", "0", ""):
        raise LogError(400, f"invalid {name}: {value!r}")
    return value in ("true", "1")


def _number(query: dict[str, list[str]], name: str) -> int | None:
    raw = (query.get(name) or [None])[-1]
    if raw in (None, ""):
        return None
    try:
        value = int(raw)
    except ValueError:
        raise LogError(400, f"invalid {name}: {raw!r}") from None
    if value < 0:
        raise LogError(400, f"invalid {name}: must be non-negative")
    return value


def parse_request(method: str, target: str) -> LogRequest | None:
    """The log request in a request line; None for `/healthz`. Raises LogError otherwise."""
    url = urlsplit(target)
    parts = [unquote(p) for p in url.path.split("/") if p]
    if method != "GET":
        raise LogError(405, f"method {method} not allowed")
    if parts == ["healthz"]:
        return None
    if len(parts) != 4 or parts[0] != "containerLogs" or not all(parts):
        raise LogError(404, f"no such path: {url.path}")
    query = parse_qs(url.query, keep_blank_values=True)
    since = _number(query, "sinceSeconds")
    return LogRequest(parts[1], parts[2], parts[3], follow=_flag(query, "follow"), previous=_flag(query, "previous"),
                      timestamps=_flag(query, "timestamps"), tail_lines=_number(query, "tailLines"),
                      since_seconds=float(since) if since is not None else None,
                      limit_bytes=_number(query, "limitBytes"))


Printed = Callable[[Run, float], "list[tuple[float, str]]"]  # (run, until) -> [(moment, line)]
CatchUp = Callable[[Run, float], Awaitable[None]]  # (run, until)


def run_lines(name: str, image: str, run: Run, script: Script, now: float, interval: float,
              printed: list[tuple[float, str]] = ()) -> list[LogLine]:  # type: ignore[assignment]
    """Every line the run has printed by `now` (`printed`: its command's output), in order; with
    the kitchen's narration when the script asks for it."""
    start = run.started_at
    end = min(now, run.finished_at) if run.finished_at is not None else now
    if end < start:
        return []
    output = [LogLine(at, text) for at, text in printed if start <= at <= end]
    if not script.narrate:
        return output
    lines = [LogLine(start, f"kitchen: starting container {name} from image {image} (run {run.number})"), *output]
    ready_at = start + script.ready_after
    if not script.never_ready and script.ready_after > 0 and ready_at <= end and \
            (run.finished_at is None or ready_at < run.finished_at):
        lines.append(LogLine(ready_at, f"kitchen: {name} is ready to serve"))
    total = int((end - start) / interval)
    for tick in range(max(1, total - MAX_TICKS + 1), total + 1):
        at = start + tick * interval
        if run.finished_at is None or at < run.finished_at:
            lines.append(LogLine(at, f"kitchen: {name} is cooking (tick {tick})"))
    if run.finished_at is not None and run.finished_at <= now:
        if run.stopped:
            text = f"kitchen: {name} received SIGTERM, shutting down gracefully"
        elif run.exit_code:
            text = f"kitchen: {name} crashed: exiting with code {run.exit_code}"
        else:
            text = f"kitchen: {name} finished its work: exiting with code 0"
        lines.append(LogLine(run.finished_at, text))
    return sorted(lines, key=lambda line: line.at)


def select_run(target: LogTarget | None, request: LogRequest) -> Run:
    """The run the request asks about, or LogError with Kubernetes' wording."""
    if target is None:
        raise LogError(404, f'container "{request.container}" in pod "{request.pod}" not found on this node')
    c = target.container
    if request.previous:
        if c.previous is None:
            raise LogError(400, f'previous terminated container "{c.name}" in pod "{request.pod}" not found')
        return c.previous
    run = c.current or c.previous
    if run is None:
        raise LogError(400, f'container "{c.name}" in pod "{request.pod}" is waiting to start: ContainerCreating')
    return run


def format_lines(lines: list[LogLine], request: LogRequest, now: float) -> str:
    if request.since_seconds is not None:
        lines = [line for line in lines if line.at >= now - request.since_seconds]
    if request.tail_lines is not None:
        lines = lines[-request.tail_lines:] if request.tail_lines else []
    text = "".join(f"{format_nano_time(line.at) + ' ' if request.timestamps else ''}{line.text}\n" for line in lines)
    if request.limit_bytes is not None:
        text = text.encode()[:request.limit_bytes].decode(errors="ignore")
    return text


def render_log(target: LogTarget | None, request: LogRequest, now: float, interval: float) -> str:
    run = select_run(target, request)
    assert target is not None
    lines = run_lines(target.container.name, target.image, run, target.script, now, interval, target.printed(run, now))
    return format_lines(lines, request, now)


Lookup = Callable[[str, str, str], "LogTarget | None"]
TEXT = "text/plain; charset=utf-8"


class LogServer(NodeServer):
    """The kubelet's HTTP endpoint for logs (what the hub's pods/NAME/log proxies to)."""

    def __init__(self, lookup: Lookup, *, clock: Clock, interval: float, poll: float = 0.25,
                 static_log: Callable[[str, str, str], Path | None] | None = None):
        self.lookup, self.clock, self.interval, self.poll = lookup, clock, interval, poll
        self.static_log = static_log  # a static pod's container log file, by namespace, pod and container

    def error_body(self, error: HttpError) -> tuple[str, bytes]:
        return TEXT, (error.message + "\n").encode()

    async def answer(self, request: Request, exchange: Exchange) -> None:
        """Answer one request and close the connection after it, as log answers always have."""
        try:
            log_request = parse_request(request.method, request.target)
            if log_request is None:
                return await exchange.respond(200, TEXT, b"ok\n", close=True)
            found = self.lookup(log_request.namespace, log_request.pod, log_request.container)
            path = self.static_log(log_request.namespace, log_request.pod, log_request.container) \
                if found is None and self.static_log is not None else None
            if path is not None and path.exists():
                return await self.answer_file(log_request, path, exchange)
            now = self.clock.now()
            if found is not None and found.catch_up is not None:
                await found.catch_up(select_run(found, log_request), now)
            text = render_log(found, log_request, now, self.interval)
        except LogError as exc:
            return await exchange.respond(exc.status, TEXT, (exc.message + "\n").encode(), close=True)
        if not log_request.follow:
            return await exchange.respond(200, TEXT, text.encode(), close=True)
        await exchange.start(200, TEXT, close=True)
        await exchange.send(text.encode())
        await self.follow(log_request, select_run(found, log_request).container_id, now, exchange)
        await exchange.end()

    async def answer_file(self, request: LogRequest, path: Path, exchange: Exchange) -> None:
        """A static pod's log: what its process wrote to its file (the previous run's with previous=true)."""
        if request.previous:
            path = path.with_suffix(".previous")
            if not path.exists():
                raise LogError(400, f'previous terminated container "{request.container}" in pod "{request.pod}" not found')
        data = path.read_bytes()
        lines = data.decode(errors="replace").splitlines(keepends=True)
        if request.tail_lines is not None:
            lines = lines[-request.tail_lines:] if request.tail_lines else []
        text = "".join(lines).encode()
        if request.limit_bytes is not None:
            text = text[:request.limit_bytes]
        if not request.follow:
            return await exchange.respond(200, TEXT, text, close=True)
        await exchange.start(200, TEXT, close=True)
        await exchange.send(text)
        offset = len(data)
        while True:  # until the client leaves or the file is replaced (the process restarted)
            await self.clock.sleep(self.poll)
            try:
                with path.open("rb") as handle:
                    handle.seek(offset)
                    fresh = handle.read()
            except OSError:
                break
            if not fresh:
                if path.stat().st_size < offset:
                    break
                continue
            offset += len(fresh)
            try:
                await exchange.send(fresh)
            except Exception:  # noqa: BLE001 - the client went away
                return
        await exchange.end()

    async def follow(self, request: LogRequest, container_id: str, seen_until: float, exchange: Exchange) -> None:
        """Send lines newer than `seen_until` as they come, until the run ends or the pod goes."""
        while True:
            await self.clock.sleep(self.poll)
            found = self.lookup(request.namespace, request.pod, request.container)
            c = found.container if found else None
            runs = (c.current, c.previous) if c else ()
            run = next((r for r in runs if r and r.container_id == container_id), None)
            if c is None or found is None or run is None:
                return
            now = self.clock.now()
            every = run_lines(c.name, found.image, run, found.script, now, self.interval, found.printed(run, now))
            fresh = [line for line in every if seen_until < line.at <= now]
            seen_until = now
            await exchange.send(format_lines(fresh, LogRequest("", "", "", timestamps=request.timestamps), now).encode())
            if run.finished_at is not None and run.finished_at <= now:
                return
