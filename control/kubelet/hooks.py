"""Lifecycle hooks (upstream kuberuntime's runner.go): `postStart` runs as a run starts, `preStop`
as the pod's deletion stops it, each an `exec` command through the simulated shell in the run's
files (an `httpGet`/`tcpSocket` hook is checked against the simulated server, as a probe is).

Guarantees: `hook_failures` answers, for the runs that just started (or are being stopped), the
Event upstream records when a hook fails (`FailedPostStartHook` / `FailedPreStopHook`, with
upstream's message) and, for postStart, that the run must be killed (upstream kills a container
whose postStart hook failed; it then restarts as the pod's restartPolicy says). A hook that
succeeds changes only the run's files (`echo hi > /usr/share/message` is there for exec).
"""

from __future__ import annotations

from typing import Any, Callable

Obj = dict[str, Any]
Runner = Callable[[str, list[str], float], tuple[int | None, str]]  # (container, argv, at) -> (code, output)


def hook_of(spec: Obj, which: str) -> Obj | None:
    hook = (spec.get("lifecycle") or {}).get(which) if isinstance(spec.get("lifecycle"), dict) else None
    return hook if isinstance(hook, dict) and hook else None


def failure_message(pod: Obj, container: str, argv: list[str], code: int | None, output: str) -> str:
    meta = pod.get("metadata") or {}
    error = f"command '{' '.join(argv)}' exited with {code}: {output}" if code is not None else \
        f"command '{' '.join(argv)}' timed out"
    return (f"Exec lifecycle hook ([{' '.join(argv)}]) for Container \"{container}\" in Pod "
            f"\"{meta.get('name')}_{meta.get('namespace')}({meta.get('uid')})\" failed - error: {error}, "
            f"message: \"{output}\"")


def run_hook(pod: Obj, spec: Obj, which: str, at: float, runner: Runner) -> str | None:
    """None when the hook succeeded (or there is none); else the failure's Event message."""
    hook = hook_of(spec, which)
    if hook is None or "exec" not in hook:
        return None
    argv = [str(word) for word in (hook.get("exec") or {}).get("command") or []]
    code, output = runner(spec.get("name", ""), argv, at)
    return None if code == 0 else failure_message(pod, spec.get("name", ""), argv, code, output)
