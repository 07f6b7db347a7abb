"""Validation of a container's probes and lifecycle hooks, with the API server's messages
(upstream validation.go: validateProbe, validateHandler, validateLifecycle).

Guarantees: a probe or hook has exactly one handler (`must specify a handler type`, or
`may not specify more than 1 handler type` on each extra one); liveness and startup probes have
successThreshold 1 (`must be 1`); probe numbers are not negative; init containers (other than
sidecars) have no probes or lifecycle; an exec handler has a command. Pure: causes, never raises.
"""

from __future__ import annotations

from typing import Any

from control.errors import go_value
from control.kinds.base import Cause, cause, required

PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
HOOK_HANDLERS = ("exec", "httpGet", "tcpSocket", "sleep")
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
NUMBERS = ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold")


def handler_causes(handler: Any, path: str, kinds: tuple[str, ...]) -> list[Cause]:
    if not isinstance(handler, dict):
        return [cause(path, "Invalid value: must be an object")]
    out: list[Cause] = []
    found = 0
    for kind in kinds:
        if handler.get(kind) is None:
            continue
        if found:
            out.append(cause(f"{path}.{kind}", "Forbidden: may not specify more than 1 handler type",
                             "FieldValueForbidden"))
            continue
        found += 1
        if kind == "exec" and not (handler["exec"] or {}).get("command"):
            out.append(required(f"{path}.exec.command"))
    if not found:
        out.append(required(path) | {"message": "Required value: must specify a handler type"})
    return out


def probe_causes(container: dict[str, Any], path: str, init: bool = False) -> list[Cause]:
    out: list[Cause] = []
    sidecar = container.get("restartPolicy") == "Always"
    for key in PROBES:
        probe = container.get(key)
        if probe is None:
            continue
        if init and not sidecar:
            out.append(cause(f"{path}.{key}", "Forbidden: may not be set for init containers without "
                             "restartPolicy=Always", "FieldValueForbidden"))
            continue
        out += handler_causes(probe, f"{path}.{key}", PROBE_HANDLERS)
        if not isinstance(probe, dict):
            continue
        for number in NUMBERS:
            value = probe.get(number)
            if value is not None and (not isinstance(value, int) or value < 0):
                out.append(cause(f"{path}.{key}.{number}",
                                 f"Invalid value: {go_value(value)}: must be greater than or equal to 0"))
        threshold = probe.get("successThreshold")
        if key != "readinessProbe" and threshold is not None and threshold != 1:
            out.append(cause(f"{path}.{key}.successThreshold", f"Invalid value: {go_value(threshold)}: must be 1"))
    lifecycle = container.get("lifecycle")
    if isinstance(lifecycle, dict):
        if init and not sidecar:
            out.append(cause(f"{path}.lifecycle", "Forbidden: may not be set for init containers without "
                             "restartPolicy=Always", "FieldValueForbidden"))
        else:
            for hook in ("postStart", "preStop"):
                if lifecycle.get(hook) is not None:
                    out += handler_causes(lifecycle[hook], f"{path}.lifecycle.{hook}", HOOK_HANDLERS)
    return out
