"""Shell commands run on virtual time: a container's main command replayed into its files, and
one-off commands (exec probes, lifecycle hooks) with a timeout.

A simulated container's exit, readiness and log come from its script (`behaviour`); what its
command does to its files comes from here: the command runs through the simulated shell on a
clock of its own whose `sleep` hands control back to the driver, so `advance(now)` runs exactly
the commands that had started by `now` (`touch /tmp/healthy; sleep 30; rm -f /tmp/healthy`: the
file is there from the start and gone from second 30), never waiting on the real clock.

Guarantees:
- `MainProcess.advance(t)` is monotonic and idempotent: it runs every command due at or before
  `t` once, in order; asking for an earlier moment changes nothing. The process's clock reads the
  moment each command ran, so `date > /tmp/when` writes that moment.
- A command that waits on anything but its clock (real I/O) ends the replay there; a line that
  runs more than MAX_STEPS commands without sleeping is stopped there (a busy loop never hangs
  the kubelet).
- What the main command prints (stdout and stderr, as a container runtime logs both) is kept in
  `MainProcess.output`, each line with the moment it was printed: it is the container's log
  (`logs`). The last MAX_LOG_LINES lines are kept (older ones are "rotated away").
- `kill 1` in the main command ends the replay there (PID 1 is the process being replayed; its
  exit is the script's, `behaviour`): nothing after it runs. In a one-off command it is the exec'd
  kill's business (exec sets the handle), and without one it is `No such process`.
- `run_once` runs a command (an exec probe's, a hook's) from its start moment; it fails with
  `TimedOut` when its sleeps pass the timeout, as upstream's exec prober does.
- A main command given a network (`MainProcess(network=..., host=...)`, the kubelet's
  `NetworkHandle`) reaches the cluster as exec does: each call (`nslookup`, `wget`, ...) is made
  for real on the event loop while the replay waits at that moment, then the replay goes on from
  the call's answer, in the present (`host`'s clock: a call is never made for a moment ahead of
  it, and one met while replaying the past brings the replay to the present) and at least
  MIN_CALL_SECONDS after it began, so even a loop that never sleeps makes at most one call per
  MIN_CALL_SECONDS. A command that has made a call (or, from its start, one that names a network
  tool: `names_network`) is "live": it is stepped by `host`'s timers as its sleeps come due, so
  its calls are made when they are due, paced by its own sleeps and timeouts. A command that never
  reaches the network makes no call, sets no timer and is replayed lazily as before. `quiet()`
  (its run ended) stops the timers; `stop()` also cancels a call under way.
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Coroutine, Generator

from control.clock import Clock
from control.kubelet.filesystem import Filesystem
from control.userland import SHELLS, Shell, Streams

MAX_STEPS = 10_000
MAX_LOG_LINES = 10_000
MIN_CALL_SECONDS = 0.1  # a network call takes at least this long on the process's clock
NETWORK_TOOLS = re.compile(r"(?<![\w.-])(wget|curl|nslookup|dig|nc|ping|telnet)(?![\w.-])")


def names_network(argv: list[str] | tuple[str, ...]) -> bool:
    """Whether a command names a program that reaches the network (it is stepped live from its start)."""
    return bool(NETWORK_TOOLS.search(" ".join(argv)))


class _Wake:
    """What a sleeping command yields to its driver: the moment it wants to go on."""

    def __init__(self, until: float):
        self.until = until

    def __await__(self) -> Generator["_Wake", None, None]:
        yield self


class _Step:
    """Yielded before every command, so the driver can count them (and stop a busy loop)."""

    def __await__(self) -> Generator["_Step", None, None]:
        yield self


class _Call:
    """What a command reaching the network yields to its driver: the call to make on the event loop
    (`make()` gives its coroutine) and what it answers when it cannot be made."""

    def __init__(self, make: Callable[[], Coroutine[Any, Any, Any]], fallback: Any):
        self.make, self.fallback = make, fallback

    def __await__(self) -> Generator["_Call", Any, Any]:
        answer = yield self
        return answer


class ReplayNetwork:
    """The shell's `Network` for a replayed command: each call is handed to the driver (`_Call`)."""

    def __init__(self, network: Any):
        self.network = network

    async def resolve(self, name: str) -> Any:
        return await _Call(lambda: self.network.resolve(name), None)

    async def send(self, target: str, port: int | None) -> Any:
        return await _Call(lambda: self.network.send(target, port), {"code": 503, "error": "no network"})

    def answer(self, line: Any, path: str, now: float) -> Any:
        return self.network.answer(line, path, now)


class VirtualClock:
    """A command's own clock: reads the moment the replay has reached; `sleep` yields to the driver."""

    def __init__(self, start: float):
        self.t = start

    def now(self) -> float:
        return self.t

    def monotonic(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        await _Wake(self.t + max(0.0, float(seconds)))

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> Any:
        raise RuntimeError("a replayed command cannot schedule callbacks")


class CountingShell(Shell):
    """The simulated shell, yielding to its driver before each command."""

    async def run_command(self, command: Any, io: Streams) -> int:
        await _Step()
        return await super().run_command(command, io)


class TimedOut(Exception):
    pass


class _MainEnded(Exception):
    """The replayed main process signalled itself (`kill 1`)."""

    def __init__(self, exit_code: int):
        super().__init__(exit_code)
        self.exit_code = exit_code


class _OwnPid1:
    """The shell `resources` handle of a replayed main process: it is PID 1, so `kill 1` ends it;
    `stress` holds nothing here (its load is the script's, `resources`)."""

    def hold(self, stress: Any) -> None:
        return None

    def release(self, token: Any) -> None:
        pass

    def over_limit(self) -> bool:
        return False

    def signal_main(self, exit_code: int) -> None:
        raise _MainEnded(exit_code)


class _Driver:
    """Steps a shell coroutine through virtual time (and, with a `host` clock, through its network calls)."""

    def __init__(self, coro: Coroutine[Any, Any, int], clock: VirtualClock, host: Clock | None = None):
        self.coro, self.clock, self.host = coro, clock, host
        self.wake_at: float = clock.t
        self.exit_code: int | None = None
        self.stopped = False  # ended without an exit code (blocked on real I/O, or busy)
        self.target = clock.t  # the furthest moment asked for
        self.pending: asyncio.Task | None = None  # a network call under way: the replay waits for it
        self.fallback: Any = None  # what that call answers if it fails
        self.value: Any = None  # sent into the command when it goes on (a call's answer)
        self.live = False  # stepped by the host's timers as its sleeps come due
        self.quieted = False  # its run ended: never live again
        self.calls = 0
        self._timer_at: float | None = None

    @property
    def done(self) -> bool:
        return self.exit_code is not None or self.stopped

    def advance(self, until: float) -> None:
        self.target = max(self.target, until)
        if self.pending is not None:
            return  # goes on when the call answers
        self._run(until)
        self._schedule()

    def _run(self, until: float) -> None:
        steps = 0
        while not self.done and self.wake_at <= until:
            self.clock.t = max(self.clock.t, self.wake_at)
            value, self.value = self.value, None
            try:
                yielded = self.coro.send(value)
            except StopIteration as finished:
                self.exit_code = int(finished.value or 0)
                return
            except _MainEnded as ended:
                self.exit_code = ended.exit_code
                return
            except Exception:  # a program's bug must not take the kubelet down: the replay ends
                self.stopped = True
                return
            if isinstance(yielded, _Wake):
                self.wake_at, steps = yielded.until, 0
            elif isinstance(yielded, _Call):
                if self._call(yielded):
                    return  # the replay waits here for the answer
                steps += 1
            elif yielded is None or isinstance(yielded, _Step):  # a command, or a loop's turn (`asyncio.sleep(0)`)
                steps += 1
                if steps > MAX_STEPS:
                    self.stop()
            else:  # waits on real I/O, which virtual time cannot drive
                self.stop()

    def _call(self, call: _Call) -> bool:
        """Start a network call on the running loop (True); without one it answers its fallback."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.value = call.fallback
            return False
        self.live, self.calls, self.fallback = not self.quieted, self.calls + 1, call.fallback
        self.pending = task = loop.create_task(call.make())
        task.add_done_callback(self._answered)
        return True

    def _answered(self, task: asyncio.Task) -> None:
        if task is not self.pending:
            return  # stopped meanwhile
        self.pending = None
        try:
            self.value = task.result()
        except (asyncio.CancelledError, Exception):
            self.value = self.fallback
        now = self.host.now() if self.host is not None else self.clock.t
        self.wake_at = max(self.clock.t + MIN_CALL_SECONDS, now)
        self.advance(self.target)

    def _schedule(self) -> None:
        """A live command waiting on its clock is woken by the host's timer when its sleep is due."""
        if not self.live or self.done or self.pending is not None or self.host is None:
            return
        if self._timer_at is not None and self._timer_at <= self.wake_at:
            return
        self._timer_at = at = self.wake_at
        self.host.call_later(at - self.host.now(), self._tick, at)

    def _tick(self, at: float) -> None:
        if self._timer_at == at:
            self._timer_at = None
        if self.live and not self.done and self.host is not None:
            self.advance(max(self.target, self.host.now()))

    def quiet(self) -> None:
        """No more timers (the run ended): the command goes on only as far as it is asked."""
        self.live, self.quieted = False, True

    def stop(self) -> None:
        self.live = False
        if self.pending is not None:
            pending, self.pending = self.pending, None
            pending.cancel()
        if not self.done:
            self.stopped = True
            self.coro.close()


def _shell(fs: Filesystem, clock: VirtualClock, hostname: str, env: dict[str, str], argv: list[str]) -> Shell:
    name = argv[0].rsplit("/", 1)[-1] if argv and argv[0].rsplit("/", 1)[-1] in SHELLS else "sh"
    return CountingShell(fs, clock=clock, hostname=hostname, env=env, name=name)


class Output:
    """What a process printed, line by line, each line stamped with the moment its first byte was
    printed (a line still being written counts: a runtime logs it too)."""

    def __init__(self, clock: VirtualClock):
        self.clock = clock
        self.lines: deque[tuple[float, str]] = deque(maxlen=MAX_LOG_LINES)
        self.partial, self.partial_at = b"", 0.0

    def write(self, data: bytes) -> None:
        while data:
            if not self.partial:
                self.partial_at = self.clock.t
            line, newline, data = data.partition(b"\n")
            self.partial += line
            if not newline:
                return
            self.lines.append((self.partial_at, self.partial.decode(errors="replace")))
            self.partial = b""

    def until(self, moment: float) -> list[tuple[float, str]]:
        """The lines printed at or before `moment`, oldest first."""
        printed = [line for line in self.lines if line[0] <= moment]
        if self.partial and self.partial_at <= moment:
            printed.append((self.partial_at, self.partial.decode(errors="replace")))
        return printed


class MainProcess:
    """A run's main command (its expanded command + args), replayed into its files and its log."""

    def __init__(self, fs: Filesystem, argv: list[str], env: dict[str, str], hostname: str, started_at: float,
                 network: Any = None, host: Clock | None = None):
        clock = VirtualClock(started_at)
        shell = _shell(fs, clock, hostname, env, argv)
        shell.resources = _OwnPid1()
        shell.network = ReplayNetwork(network) if network is not None else None
        self.output = Output(clock)
        coro = shell.run_argv(list(argv), Streams(self.output.write, self.output.write)) if argv else _nothing()
        self.driver = _Driver(coro, clock, host)
        self.driver.live = network is not None and host is not None and names_network(argv)

    @property
    def reached(self) -> float:
        """The moment the replay has run to."""
        return self.driver.clock.t

    def advance(self, until: float) -> None:
        self.driver.advance(until)

    @property
    def calls(self) -> int:
        """How many network calls the command has made."""
        return self.driver.calls

    def quiet(self) -> None:
        self.driver.quiet()

    def stop(self) -> None:
        self.driver.stop()


async def _nothing() -> int:
    return 0


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    output: str  # stdout and stderr, as they came


def run_once(fs: Filesystem, argv: list[str], env: dict[str, str], hostname: str, at: float,
             timeout: float) -> Outcome:
    """Run `argv` (not through a shell unless it names one, as exec does) starting at `at`."""
    out = bytearray()
    clock = VirtualClock(at)
    shell = _shell(fs, clock, hostname, env, argv)
    driver = _Driver(shell.run_argv(list(argv), Streams(out.extend, out.extend)), clock)
    driver.advance(at + timeout)
    if driver.exit_code is None:
        driver.stop()
        raise TimedOut(f"command {_quote(' '.join(argv))} timed out")
    return Outcome(driver.exit_code, out.decode(errors="replace"))


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
