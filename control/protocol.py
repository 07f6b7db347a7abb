"""The names the hub and the dashboard share, in one place: both sides of the wire import them, and
the page receives them from the server (`page_protocol`, as data attributes), never from a copy.

Guarantees: nothing here imports anything of the project, so the hub (`control.api`), the
dashboard (which may not import the hub) and the spokes can all depend on it.

- The hub publishes its traffic records on the channel-layer group `TRAFFIC_GROUP`, in messages
  of type `TRAFFIC_BATCH` (`{"type": TRAFFIC_BATCH, "records": [...], "source": "<hub process>"}`;
  Channels hands them to the consumer method `traffic_batch`). Each record's `type` is one of
  `RECORD_TYPES`; its `seq` numbers the records of one `source` 1, 2, ... with no gap, so a reader
  can tell when some never reached it.
- `/kubekitchen/snapshot` holds the built-in kinds of `SNAPSHOT_KINDS` (keyed by plural) and every
  custom kind (keyed "<group>/<plural>").
- The restaurant's own kinds live in the API group `KITCHEN_GROUP`; a Dish names its Order in the
  label `ORDER_LABEL`.
"""

from __future__ import annotations

import json

TRAFFIC_GROUP = "kk.traffic"
TRAFFIC_BATCH = "traffic.batch"
RECORD_REQUEST = "request"  # one answered HTTP request (who, user, verb, resource, code, latency)
RECORD_WATCH = "watch"  # watch events delivered to one client since the last flush
RECORD_SERVICE_REQUEST = "service.request"  # one request sent through a node's kube-proxy
RECORD_TYPES = (RECORD_REQUEST, RECORD_WATCH, RECORD_SERVICE_REQUEST)
SPOKE_SEPARATOR = " · "  # a person's client is their own spoke: "kubectl · alice"

SNAPSHOT_KINDS = ("pods", "nodes", "deployments", "replicasets", "services", "endpoints",
                  "horizontalpodautoscalers", "customresourcedefinitions", "jobs", "cronjobs", "events",
                  "daemonsets", "statefulsets", "persistentvolumeclaims", "persistentvolumes", "poddisruptionbudgets",
                  "replicationcontrollers", "configmaps", "secrets", "networkpolicies")

KITCHEN_GROUP = "kitchen.kubekitchen.dev"
ORDER_LABEL = f"{KITCHEN_GROUP}/order"


def page_protocol() -> dict[str, str]:
    """The shared names the page needs, as `data-*` attribute values of its <body>."""
    return {"snapshot_kinds": json.dumps(list(SNAPSHOT_KINDS)), "kitchen_group": KITCHEN_GROUP,
            "order_label": ORDER_LABEL,
            "record_types": json.dumps({"request": RECORD_REQUEST, "watch": RECORD_WATCH,
                                        "serviceRequest": RECORD_SERVICE_REQUEST})}
