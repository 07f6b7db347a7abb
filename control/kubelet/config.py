"""The kubelet's knobs: how its simulated runtime paces itself and what its node offers.

Guarantees: every value has Kubernetes' default (or a workshop's, with KK_PACE=workshop) and can
be overridden one by one from the environment; a malformed value raises ValueError at start-up,
never later.

Environment (names, defaults and meanings in `control.config`'s table, read once at start from
the mapping `from_env` is given, else the process's): KK_START_DELAY, KK_CRASH_BACKOFF,
KK_CRASH_BACKOFF_RESET, KK_TERMINATION_SECONDS, KK_LOG_INTERVAL, KK_NODE_CPU, KK_NODE_MEMORY,
KK_NODE_PODS, KK_SYNC_PERIOD (ConfigMap/Secret changes reach pods at once: the kubelet watches
them), KK_IMAGE_BACKOFF, KK_IMAGE_PULL_SECONDS, KK_KUBELET_DATA_DIR (default `$KK_DATA_DIR/kubelet`)
KK_KUBELET_WORKERS and KK_NODE_ADDRESSES (`control.kubelet.addresses`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from control import config
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
    workers: int = 16  # pods synced at once

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "KubeletConfig":
        env = config.environment() if env is None else dict(env)

        def text(name: str) -> str:
            return config.text(name, env)

        base, cap = _backoff(text("KK_CRASH_BACKOFF"))
        image_base, image_cap = _backoff(text("KK_IMAGE_BACKOFF"))
        data = config.given("KK_DATA_DIR", env)
        return cls(
            start_delay=_range(text("KK_START_DELAY")),
            backoff=BackoffPolicy(base=base, cap=cap, reset_after=float(text("KK_CRASH_BACKOFF_RESET"))),
            termination_seconds=float(text("KK_TERMINATION_SECONDS")),
            log_interval=max(0.05, float(text("KK_LOG_INTERVAL"))),
            cpu=text("KK_NODE_CPU"),
            memory=text("KK_NODE_MEMORY"),
            pods=text("KK_NODE_PODS"),
            sync_seconds=max(0.1, float(text("KK_SYNC_PERIOD"))),
            image_backoff=BackoffPolicy(base=image_base, cap=image_cap),
            pull_seconds=max(0.0, float(text("KK_IMAGE_PULL_SECONDS"))),
            node_addresses=addresses.setting(env),
            workers=config.value("KK_KUBELET_WORKERS", env),
            data_dir=Path(config.given("KK_KUBELET_DATA_DIR", env) or Path(data or default_data_dir()) / "kubelet"),
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
