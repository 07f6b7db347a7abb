"""What a container's log costs the kubelet: replaying a main command's history on virtual time
(`control.kubelet.process.MainProcess`), the work the first `kubectl logs` of a long-running pod
asks for (later requests only replay what is new).

    .venv/bin/python bench/userland_replay.py [--seconds 3600]

The command is kubernetes.io's counter pod (`i=0; while true; do echo "$i: $(date)"; i=$((i+1));
sleep 1; done`), replayed over `--seconds` of virtual time from a standing start, three times.
Figures (one JSON line): the median wall and CPU seconds of a replay (on a busy machine the wall
time says more about the others), CPU microseconds per loop turn, and the lines it logged.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from control.kubelet.filesystem import Filesystem  # noqa: E402
from control.kubelet.process import MainProcess  # noqa: E402

COUNTER = 'i=0; while true; do echo "$i: $(date)"; i=$((i+1)); sleep 1; done'


def replay(seconds: float) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, lines logged) of one replay."""
    fs = Filesystem.for_container(pod_name="counter", namespace="default", pod_ip="10.244.1.2")
    process = MainProcess(fs, ["/bin/sh", "-c", COUNTER], {}, "counter", 0.0)
    started, cpu = time.perf_counter(), time.process_time()
    process.advance(seconds)
    return time.perf_counter() - started, time.process_time() - cpu, len(process.output.lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3600.0)
    options = parser.parse_args()
    runs = [replay(options.seconds) for _ in range(3)]
    wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
    print(json.dumps({"bench": "userland_replay", "virtual_seconds": options.seconds, "replay_wall_s": round(wall, 3),
                      "replay_cpu_s": round(cpu, 3), "cpu_us_per_turn": round(cpu / options.seconds * 1e6, 1),
                      "lines": runs[0][2]}))


if __name__ == "__main__":
    main()
