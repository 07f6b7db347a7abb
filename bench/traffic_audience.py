"""The cost of filtering traffic records per viewer (dashboard.audience), in process, no hub.

    .venv/bin/python bench/traffic_audience.py [--attendees 30] [--batch 500] [--rounds 200]

Builds batches of `--batch` request records spread over `--attendees` namespaces and kinds, then
times `Audience.visible` on them for an attendee (admin in their own namespace, nodes cluster-wide:
every other namespace is a decision) and for a cluster admin (everything passes), after the rules
were read once. Prints one JSON line: microseconds per batch and per record for each, and how many
rules reviews each asked (one per namespace met for the attendee, one for the admin).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import emit  # noqa: E402

from dashboard.audience import Audience  # noqa: E402

KINDS = (("", "pods"), ("", "configmaps"), ("apps", "deployments"), ("", "services"))
ATTENDEE = [{"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["nodes"]}]
OWN = [{"verbs": ["*"], "apiGroups": ["", "apps"], "resources": ["*"]}]
ADMIN = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]


def records(attendees: int, batch: int) -> list[dict]:
    out = []
    for i in range(batch):
        user = f"attendee-{i % attendees}"
        group, resource = KINDS[i % len(KINDS)]
        out.append({"type": "request", "who": f"kubectl · {user}", "verb": "list", "resource": resource, "code": 200,
                    "user": user, "scope": {"namespace": user, "group": group, "resource": resource}})
    return out


async def timed(viewer: str, cluster: list, own: list, batch: list[dict], rounds: int) -> dict:
    asked: list[str] = []

    async def review(namespace: str) -> list:
        asked.append(namespace)
        return cluster + (own if namespace == viewer else [])

    audience = Audience(viewer, review)
    shown = len(await audience.visible(batch))  # the rules are read once
    started = time.perf_counter()
    for _ in range(rounds):
        await audience.visible(batch)
    per_batch = (time.perf_counter() - started) / rounds * 1e6
    return {"us_per_batch": round(per_batch, 1), "us_per_record": round(per_batch / len(batch), 3),
            "records_shown": shown, "rules_reviews": len(asked)}


async def main(args: argparse.Namespace) -> None:
    batch = records(args.attendees, args.batch)
    emit({"bench": "traffic_audience", "attendees": args.attendees, "batch": args.batch, "rounds": args.rounds,
          "attendee": await timed("attendee-0", ATTENDEE, OWN, batch, args.rounds),
          "admin": await timed("kubernetes-admin", ADMIN, [], batch, args.rounds)})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attendees", type=int, default=30)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=200)
    asyncio.run(main(parser.parse_args()))
