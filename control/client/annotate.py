"""A spoke records where it listens in an annotation of its Node (kube-proxy's port, the front
door's ports), retrying as the hub allows.

Guarantees: `annotate_node` sends one merge patch of the Node's annotations and returns once the
hub took it; a refusal or an unreachable hub (`errors.ApiError`) is logged at INFO with `what` and
retried after 0.2 s, doubling up to 5 s, on the injected clock; with `attempts` it gives up (returns
False) after that many tries, without it tries until it succeeds or is cancelled.
"""

from __future__ import annotations

import logging
from typing import Any

from control import errors
from control.clock import Clock
from control.client.resources import NODES

log = logging.getLogger(__name__)
FIRST_DELAY, MAX_DELAY = 0.2, 5.0


async def annotate_node(client: Any, node: str, annotations: dict[str, str | None], *, clock: Clock, what: str,
                        attempts: int | None = None) -> bool:
    patch = {"metadata": {"annotations": annotations}}
    delay, tried = FIRST_DELAY, 0
    while attempts is None or tried < attempts:
        tried += 1
        try:
            await client.patch(NODES, node, patch)
            return True
        except errors.ApiError as exc:
            log.info("recording %s on node %s failed: %s", what, node, exc)
            await clock.sleep(delay)
            delay = min(delay * 2, MAX_DELAY)
    return False
