"""The replication manager: keeps exactly `spec.replicas` active pods for every ReplicationController.

Guarantees: everything the ReplicaSet controller guarantees (`control.controllers.replicaset`:
adoption and release, expectations, slow-start creates, the deletion order, the status it writes),
for ReplicationControllers: it is that controller run with the RC's flavor, as upstream's
`pkg/controller/replication` wraps the ReplicaSet controller. The only differences are the
owner's resource (core/v1 `replicationcontrollers`, so its pods' controller reference reads
`v1 ReplicationController`) and its selector, a plain label map read as `matchLabels`.
"""

from __future__ import annotations

from typing import Any

from control.client.resources import REPLICATIONCONTROLLERS
from control.client.runner import Runner
from control.clock import Clock
from control.controllers.replicaset import Flavor, build_for
from control.kinds.replicationcontrollers import rc_selector

NAME = "replicationcontroller"  # as kube-controller-manager's --controllers names it
REPLICATIONCONTROLLER = Flavor(REPLICATIONCONTROLLERS, rc_selector, NAME)


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    return build_for(REPLICATIONCONTROLLER, client=client, informers=informers, clock=clock, recorder=recorder)
