"""How a long-running process of the cluster (the hub, each spoke) keeps Python's cycle collector cheap.

CPython's collector (3.11, 3.12: `Modules/gcmodule.c`) walks every tracked container of the
generations it collects. With its defaults (700, 10, 10) a process that holds many objects pays
for them again and again: the oldest generation is walked whole whenever what was promoted since
the last full collection reaches a quarter of it, and every young collection promotes what is still
in flight (requests, watch events, informer caches). Measured on the hub:
- bringing 1,000 pods up (`bench/scale.py`) it spent ~1.3 s of its ~5 CPU-s collecting, 0.9 s of
  it in nine full collections of ~100 ms each;
- with 30 attendees (`bench/workshop.py --minutes 2`) 18 s of its 111 CPU-s (16 %), 11 s of it in
  53 full collections of ~210 ms, each one a pause of the whole hub, GIL held.

Guarantees, once `settle()` has run (call it once the process has started, before it serves):
- everything that survived start-up (modules, Django, the kinds' schemas and tables) is in the
  permanent generation (`gc.freeze`), which no collection walks again;
- the youngest generation is collected after `YOUNG` net new containers instead of 700, so an
  object that lives for one request or one watch event is freed by its reference count before a
  collection ever sees it, and far fewer in-flight objects are promoted to be walked again later;
- the older generations keep the interpreter's own thresholds (their meaning changed in 3.14's
  incremental collector), and nothing is disabled: reference cycles are still collected, only
  less often (a young collection walks at most YOUNG objects: a few tens of milliseconds).
Calling it again changes nothing but freezing what has survived since.
"""

from __future__ import annotations

import gc

YOUNG = 50_000


def settle(young: int = YOUNG) -> None:
    """Freeze what start-up left behind and raise the youngest generation's threshold (above)."""
    gc.collect()  # start-up's own cycles go now rather than live forever in the permanent generation
    gc.freeze()
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], young), *threshold[1:])
