"""The kubelet's knobs: how its simulated runtime paces itself and what its node offers.

Guarantees: every value has Kubernetes' default (or a workshop's, with KK_PACE=workshop) and can
be overridden one by one from the environment; a malformed value raises ValueError at start-up,
never later.

Environment:
- KK_START_DELAY      seconds a container spends in ContainerCreating: "0.2" or a range "0.1-0.3"
                      (default 0.1-0.3).
- KK_CRASH_BACKOFF    crash-loop back-off: "BASE" or "BASE:CAP" seconds (default 10:300; with
                      KK_PACE=workshop 2:60). A CAP left out is 30 x BASE.
- KK_CRASH_BACKOFF_RESET  seconds of running after which the back-off starts over (default 600).
- KK_TERMINATION_SECONDS  a deleted pod's containers take min(grace period, this) to stop
                      (default 1).
- KK_LOG_INTERVAL     a running container prints a line this often, in seconds (default 2).
- KK_NODE_CPU, KK_NODE_MEMORY, KK_NODE_PODS   the node's capacity (default 4, 8Gi, 110).
- KK_SYNC_PERIOD      seconds between the kubelet's retries of a pod that cannot start yet (a
                      claim not bound, a volume not set up; default 10, with KK_PACE=workshop 2).
                      ConfigMap/Secret changes reach pods at once (the kubelet watches them).
- KK_IMAGE_BACKOFF    image pull back-off: "BASE" or "BASE:CAP" seconds (default 10:300, as
                      upstream; with KK_PACE=workshop 2:60).
- KK_IMAGE_PULL_SECONDS  how long a simulated pull takes (default 0.5; workshop 0.2).
- KK_KUBELET_DATA_DIR the kubelet's state directory (default `$KK_DATA_DIR/kubelet`): a claim's
                      volume is `<it>/volumes/<pv name>/`.
- KK_NODE_ADDRESSES   auto (default), own or loopback: where the kubelet listens
                      (`control.kubelet.addresses`; runcluster decides `auto` for all its nodes).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from control.installation import default_data_dir
from control.kubelet import addresses



@dataclass(frozen=True)
class BackoffPolicy:
    """Crash-loop back-off: base, doubling up to cap; back to base after `reset_after` s running."""

    base: float = 10.0
    cap: float = 300.0
    reset_after: float = 600.0

    def next_delay(self, previous: float, ran_for: float) -> float:
        if previous <= 0 or ran_for >= self.reset_after:
            return self.base
        return min(self.cap, previous * 2)


@dataclass(frozen=True)
class KubeletConfig:
    start_delay: tuple[float, float] = (0.1, 0.3)
    backoff: BackoffPolicy = field(default_factory=BackoffPolicy)
    termination_seconds: float = 1.0
    log_interval: float = 2.0
    cpu: str = "4"
    memory: str = "8Gi"
    pods: str = "110"
    sync_seconds: float = 10.0
    data_dir: Path | None = None  # None: no claim volumes (tests that need none)
    image_backoff: BackoffPolicy = field(default_factory=lambda: BackoffPolicy(10.0, 300.0))
    pull_seconds: float = 0.0
    node_addresses: str = addresses.AUTO

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "KubeletConfig":
        env = dict(os.environ if env is None else env)
        workshop = env.get("KK_PACE", "").lower() == "workshop"
        base, cap = _backoff(env.get("KK_CRASH_BACKOFF") or ("2:60" if workshop else "10:300"))
        reset = float(env.get("KK_CRASH_BACKOFF_RESET") or 600.0)
        image_base, image_cap = _backoff(env.get("KK_IMAGE_BACKOFF") or ("2:60" if workshop else "10:300"))
        return cls(
            start_delay=_range(env.get("KK_START_DELAY") or "0.1-0.3"),
            backoff=BackoffPolicy(base=base, cap=cap, reset_after=reset),
            termination_seconds=float(env.get("KK_TERMINATION_SECONDS") or 1.0),
            log_interval=max(0.05, float(env.get("KK_LOG_INTERVAL") or 2.0)),
            cpu=env.get("KK_NODE_CPU") or "4",
            memory=env.get("KK_NODE_MEMORY") or "8Gi",
            pods=env.get("KK_NODE_PODS") or "110",
            sync_seconds=max(0.1, float(env.get("KK_SYNC_PERIOD") or (2.0 if workshop else 10.0))),
            image_backoff=BackoffPolicy(base=image_base, cap=image_cap),
            pull_seconds=max(0.0, float(env.get("KK_IMAGE_PULL_SECONDS") or (0.2 if workshop else 0.5))),
            node_addresses=addresses.setting(env),
            data_dir=Path(env.get("KK_KUBELET_DATA_DIR") or Path(env.get("KK_DATA_DIR") or default_data_dir()) / "kubelet"),
        )


def _range(text: str) -> tuple[float, float]:
    low, _, high = text.partition("-")
    low_value = float(low)
    high_value = float(high) if high else low_value
    if low_value < 0 or high_value < low_value:
        raise ValueError(f"KK_START_DELAY must be SECONDS or LOW-HIGH, got {text!r}")
    return low_value, high_value


def _backoff(text: str) -> tuple[float, float]:
    base_text, _, cap_text = text.replace(",", ":").partition(":")
    base = float(base_text)
    cap = float(cap_text) if cap_text else base * 30
    if base <= 0 or cap < base:
        raise ValueError(f"KK_CRASH_BACKOFF must be BASE or BASE:CAP with 0 < BASE <= CAP, got {text!r}")
    return base, cap
