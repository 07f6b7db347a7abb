"""What a simulated container does, read from its pod's manifest: the workshop's remote control.

Guarantees: `script_for(pod, container)` is a pure function of the manifest (a stored pod's is
read once per resourceVersion); a value that cannot be read (e.g. `crash-after: "soon"`) is
ignored, never an error; annotations win over the image and command conventions, and a
container-specific annotation wins over the pod-wide one.

Annotations (on the pod; add `.<container>` to the key to aim at one container, e.g.
`kubekitchen.dev/crash-after.sidecar: "4"`):
- `kubekitchen.dev/start-delay: "S"`  the container spends S seconds in ContainerCreating
  (default: the kubelet's KK_START_DELAY, 0.1-0.3 s).
- `kubekitchen.dev/crash-after: "S"`  every run of the container exits S seconds after it
  started, with exit code 1 unless `exit-code` says otherwise.
- `kubekitchen.dev/exit-code: "N"`    the code the container exits with when it exits (0 reads
  as Completed, anything else as Error). On its own it does not make the container exit.
- `kubekitchen.dev/ready-after: "S"`  readiness turns true S seconds after each start.
- `kubekitchen.dev/never-ready: "true"`  readiness never turns true (Unhealthy events).
- `kubekitchen.dev/unready: "true"`  readiness fails while the annotation says so; set it on a
  running pod and its Ready condition turns False (the Endpoints controller moves it to
  notReadyAddresses), remove it (or set "false") and the pod is Ready again.
- `kubekitchen.dev/cpu: "300m"`  extra simulated CPU the container burns (see `usage`).
- `kubekitchen.dev/memory: "200Mi"`  extra simulated memory the container uses; above its
  `limits.memory` it is OOMKilled (see `resources`, which also reads `stress` in the command).
- `kubekitchen.dev/cpu-per-request: "10m"`  simulated CPU per request-per-second it serves
  (default 10m).
- `kubekitchen.dev/narrate: "true"`  the container's log also carries the kitchen's narration lines
  (`kitchen: starting container ...`, `... is cooking (tick N)`, how it ended); without it the log
  is only what the container's command printed.

Conventions, used when no annotation decides (the image's name is its last path segment without
tag or digest, e.g. `ghcr.io/x/crashy:1.0` -> `crashy`; the command is `command` + `args` joined
by spaces):
1. An image name containing `crash` exits with code 1 three seconds after each start.
2. A command containing `exit N` exits with code N after the sum of its `sleep S` values
   (1 s when there is none), e.g. `sh -c "sleep 5; exit 1"`. A command that signals its own PID 1
   (`kill 1`, `kill -9 1`, `kill -s KILL 1`, before any `exit`) ends as `kubectl exec POD --
   kill 1` ends it: with 128 + the signal (TERM: 143, KILL: 137) after the sum of the `sleep S`
   values before the kill (1 s when there is none), e.g. `sh -c "sleep 5; kill 1"`; `kill -STOP 1`
   and unknown signals end nothing.
3. A shell image (busybox, alpine, ubuntu, debian, or `shell: true` in the image catalogue
   `data/images.yaml`) or a tool image (`server: false`: python, node, perl) given a command
   without `exit` runs it and
   exits 0 after the sum of its `sleep S` values (1 s when there is none), unless the command
   loops (`while`, `sleep infinity`, `tail -f`): then it runs forever. Without a command it runs
   forever (a simplification: real busybox would exit at once). A bare shell (`sh`, `bash`) with
   `stdin: true` runs forever too: it waits on its terminal (`kubectl run -it t --image=busybox
   -- sh`, which then attaches to it). A tool image without a command ends at once (exit 0, after
   1 s): `kubectl run py --image=python` completes, then crash-loops, as it does on a real cluster.
   A server image (`server: true`, or an image the catalogue does not know) runs until stopped.
4. What the container prints is what its command prints, run through the simulated userland
   (`process`, `control.userland`), or, without a command of its own, what its image's command
   prints at start (`images.image_log`): that is its log. The kitchen's narration (starting, ready,
   cooking ticks, the ending) is not the container's: it shows in the log only when the pod asks
   for it with `kubekitchen.dev/narrate: "true"` (`logs`).
5. `readinessProbe.initialDelaySeconds` delays readiness when no `ready-after` is given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from control.kinds.quantity import parse_quantity
from control.kubelet.images import image_facts
from control.kubelet.resources import limit_script

PREFIX = "kubekitchen.dev/"
SHELL_IMAGES = ("busybox", "alpine", "ubuntu", "debian")
CRASH_IMAGE_SECONDS = 3.0
DEFAULT_RUN_SECONDS = 1.0
DEFAULT_CPU_PER_REQUEST = 10.0  # millicores per request per second

_EXIT = re.compile(r"\bexit\s+(\d+)")
_SLEEP = re.compile(r"\bsleep\s+(\d+(?:\.\d+)?)\b")
_FOREVER = re.compile(r"\bwhile\b|\bsleep\s+inf|\btail\s+-f\b|\buntil\b")
# kill [-s SIG | -SIG] [--] 1: the container's own main process (PID 1)
_KILL_1 = re.compile(r"\bkill\s+(?:-s\s+(\w+)\s+|-(\w+)\s+)?(?:--\s+)?1(?![\w.])")
KILL_SIGNALS = {"HUP": 1, "INT": 2, "QUIT": 3, "ABRT": 6, "KILL": 9, "USR1": 10, "USR2": 12, "PIPE": 13,
                "ALRM": 14, "TERM": 15}  # the fatal ones of `signals.SIGNALS` (STOP only pauses)
_BARE_SHELL = re.compile(r"(/bin/)?(sh|bash|ash|zsh)( -i)?")


@dataclass(frozen=True)
class Script:
    """The simulated behaviour of one container, for every run of it."""

    start_delay: float | None = None  # None: the kubelet's default
    exit_after: float | None = None  # None: runs until stopped
    exit_code: int = 0
    ready_after: float = 0.0
    never_ready: bool = False
    unready: bool = False  # the readiness knob: fails readiness while set
    narrate: bool = False  # the log carries the kitchen's narration lines too (opt-in)
    cpu: float = 0.0  # extra millicores burnt (the CPU knob)
    cpu_per_request: float = DEFAULT_CPU_PER_REQUEST  # millicores per request per second served
    memory: float = 0.0  # extra bytes used (stress --vm-bytes, the memory knob: `resources`)
    cpu_limit: float | None = None  # millicores: CPU use is throttled here
    memory_limit: float | None = None  # bytes: use above it is OOMKilled
    oom: bool = False  # its exits are the OOM killer's (reason OOMKilled)

    @property
    def exits(self) -> bool:
        return self.exit_after is not None


def image_name(image: str) -> str:
    """`registry:5000/team/app:1.2@sha256:..` -> `app`."""
    last = image.split("@", 1)[0].rsplit("/", 1)[-1]
    return last.split(":", 1)[0]


def command_text(container: dict[str, Any]) -> str:
    parts = [str(p) for p in (container.get("command") or []) + (container.get("args") or [])]
    return " ".join(parts)


def annotation(pod: dict[str, Any], name: str, container: str) -> str | None:
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    specific = annotations.get(f"{PREFIX}{name}.{container}")
    return specific if specific is not None else annotations.get(f"{PREFIX}{name}")


def _seconds(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(str(text).strip().rstrip("s"))
    except ValueError:
        return None
    return value if value >= 0 else None


def _integer(text: str | None) -> int | None:
    try:
        return int(str(text).strip()) if text is not None else None
    except ValueError:
        return None


def _flag(text: str | None) -> bool:
    return str(text or "").strip().lower() in ("true", "1", "yes")


def _millicores(text: str | None) -> float | None:
    """A CPU quantity ("300m", "0.3", "1") in millicores; None when unreadable or negative."""
    if text is None:
        return None
    try:
        cores = parse_quantity(str(text))
    except ValueError:
        return None
    return cores * 1000 if cores >= 0 else None


def _bytes(text: str | None) -> float | None:
    """A memory quantity ("200Mi") in bytes; None when unreadable or negative."""
    if text is None:
        return None
    try:
        value = parse_quantity(str(text))
    except ValueError:
        return None
    return value if value >= 0 else None


def _kill_signal(match: re.Match[str]) -> int | None:
    """The fatal signal a `kill ... 1` sends (TERM when it names none); None: it ends nothing."""
    wanted = match.group(1) or match.group(2)
    if wanted is None:
        return KILL_SIGNALS["TERM"]
    if wanted.isdigit():
        return int(wanted) if int(wanted) in KILL_SIGNALS.values() else None
    return KILL_SIGNALS.get(wanted.upper().removeprefix("SIG"))


def _by_convention(container: dict[str, Any]) -> tuple[float | None, int]:
    """(exit_after, exit_code) from the image and command conventions."""
    command = command_text(container)
    sleeps = sum(float(s) for s in _SLEEP.findall(command))
    exit_match = _EXIT.search(command)
    kills = [(m, signal) for m in _KILL_1.finditer(command) if (signal := _kill_signal(m)) is not None]
    if kills and (exit_match is None or kills[0][0].start() < exit_match.start()):
        before = sum(float(s) for s in _SLEEP.findall(command[:kills[0][0].start()]))
        return (before or DEFAULT_RUN_SECONDS), 128 + kills[0][1]
    if exit_match:
        return (sleeps or DEFAULT_RUN_SECONDS), int(exit_match.group(1))
    name = image_name(container.get("image") or "")
    if "crash" in name:
        return CRASH_IMAGE_SECONDS, 1
    facts = image_facts(container.get("image") or "")
    shell = name in SHELL_IMAGES or bool(facts and facts.shell)
    tool = shell or bool(facts and not facts.server)  # its process ends when its command does
    if shell and container.get("stdin") and _BARE_SHELL.fullmatch(command):
        return None, 0
    if tool and command and not _FOREVER.search(command):
        return (sleeps or DEFAULT_RUN_SECONDS), 0
    if tool and not shell and not command:  # python, node, hello-world: the default command ends
        return DEFAULT_RUN_SECONDS, 0
    return None, 0


# What a container of a stored pod does, per (uid, resourceVersion, container name): the kubelet
# asks several times per pod sync (the step, the enforcement, the loads, the runs), ~30 us each
# time, and a stored version's manifest never changes. Kept for as many versions as a node's pods
# have; emptied when full (nothing here is expensive to read again).
_SCRIPTS: dict[tuple[str, str, str], Script] = {}
_SCRIPTS_MAX = 4096


def script_for(pod: dict[str, Any], container: dict[str, Any]) -> Script:
    """What `container` of `pod` does. A pod read from the hub (with a uid and a resourceVersion)
    is read once per version; a manifest without them (a dry run, a test's dict) every time."""
    meta = pod.get("metadata") or {}
    uid, version = meta.get("uid"), meta.get("resourceVersion")
    if not uid or not version:
        return _read_script(pod, container)
    key = (uid, version, container.get("name") or "")
    script = _SCRIPTS.get(key)
    if script is None:
        if len(_SCRIPTS) >= _SCRIPTS_MAX:
            _SCRIPTS.clear()
        script = _SCRIPTS[key] = _read_script(pod, container)
    return script


def _read_script(pod: dict[str, Any], container: dict[str, Any]) -> Script:
    name = container.get("name") or ""
    exit_after, exit_code = _by_convention(container)
    crash_after = _seconds(annotation(pod, "crash-after", name))
    if crash_after is not None:
        exit_after, exit_code = crash_after, 1
    code = _integer(annotation(pod, "exit-code", name))
    if code is not None:
        exit_code = code
    ready_after = _seconds(annotation(pod, "ready-after", name))
    if ready_after is None:
        probe = container.get("readinessProbe") or {}
        ready_after = _seconds(probe.get("initialDelaySeconds")) if isinstance(probe, dict) else None
    cpu = _millicores(annotation(pod, "cpu", name))
    per_request = _millicores(annotation(pod, "cpu-per-request", name))
    script = Script(start_delay=_seconds(annotation(pod, "start-delay", name)), exit_after=exit_after,
                  exit_code=exit_code, ready_after=ready_after or 0.0,
                  never_ready=_flag(annotation(pod, "never-ready", name)),
                  unready=_flag(annotation(pod, "unready", name)), narrate=_flag(annotation(pod, "narrate", name)),
                  cpu=cpu or 0.0, cpu_per_request=DEFAULT_CPU_PER_REQUEST if per_request is None else per_request)
    knob_exits = code is not None or crash_after is not None  # a knob's exit wins over the OOM killer
    return limit_script(script, _bytes(annotation(pod, "memory", name)) or 0.0, container, oom=not knob_exits)
