"""Termination messages (upstream kuberuntime's getTerminationMessage): when a run ends on its own
(or is killed by a probe), its `terminationMessagePath` file, as its command left it, becomes
`state.terminated.message`; with `terminationMessagePolicy: FallbackToLogsOnError` an empty file
of a failed run falls back to the last 80 lines (at most 2048 bytes) of its log.

Guarantees: the message is read once, at the moment the run ended, and kept in the record; at
most 4096 bytes of the file are used (upstream's limit); a missing or unreadable file is no
message, never an error.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from control.kubelet.containers import Container, Happening, Run
from control.kubelet.filesystem import FsError
from control.kubelet.podstate import PodRecord

Obj = dict[str, Any]
MAX_MESSAGE = 4096
FALLBACK_LINES, FALLBACK_BYTES = 80, 2048
DEFAULT_PATH = "/dev/termination-log"
Files = Callable[[Container, Run], Any]  # the run's files as they were when it ended
LogText = Callable[[Container, Run], list[str]]  # the run's log lines


def message_of(spec: Obj, run: Run, files: Any, log_lines: Callable[[], list[str]]) -> str:
    path = str(spec.get("terminationMessagePath") or DEFAULT_PATH)
    text = ""
    try:
        if files is not None and files.is_file(path):
            text = files.read(path)[:MAX_MESSAGE].decode(errors="replace")
    except FsError:
        text = ""
    if not text and spec.get("terminationMessagePolicy") == "FallbackToLogsOnError" and run.exit_code:
        text = "\n".join(log_lines()[-FALLBACK_LINES:])[-FALLBACK_BYTES:]
    return text


def with_messages(pod: Obj, record: PodRecord, happenings: tuple[Happening, ...], files: Files,
                  log_text: LogText) -> PodRecord:
    """The record with the termination message of every run that just ended on its own."""
    ended = {(h.container, h.run) for h in happenings if h.kind == "exited"}
    if not ended:
        return record
    spec = pod.get("spec") or {}
    specs = {c.get("name"): c for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])
             if isinstance(c, dict)}

    def fill(c: Container) -> Container:
        for field in ("current", "previous"):
            run = getattr(c, field)
            if run is not None and (c.name, run.number) in ended and run.finished_at is not None and not run.message:
                message = message_of(specs.get(c.name) or {}, run, files(c, run), lambda: log_text(c, run))
                c = replace(c, **{field: replace(run, message=message)}) if message else c
        return c

    return replace(record, containers=tuple(fill(c) for c in record.containers),
                   init_containers=tuple(fill(c) for c in record.init_containers))
