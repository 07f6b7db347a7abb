"""The Service network seen from the dashboard: sending traffic to a Service from a node, and
reading a node's kube-proxy table — both through the hub (the dashboard talks to nothing else).

Guarantees:
- `send_traffic` checks the form before any request, then POSTs the hub's
  `/kubekitchen/traffic` once and reads the answers to the end; the hub publishes each answer to
  every page itself (traffic records), so this only sums them up: a `TrafficSummary` with how many
  requests each pod answered, how many failed, and of those how many a NetworkPolicy dropped
  (and which policies).
- `proxy_rules` returns the node's forwarding table as iptables-save text
  (`/kubekitchen/proxyrules?node=<node>&format=text`); `rule_lines` tags each line with what it
  does (table or chain declaration, service match, node port, balancing, endpoint DNAT) for
  colouring.
- The hub's refusals (unknown node, kube-proxy unreachable) are raised as `control.errors`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from dashboard import hub
from dashboard.actions import NAME, ActionError, form_int

MAX_COUNT = 1000
TARGET = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


@dataclass
class TrafficSummary:
    sent: int = 0
    failed: int = 0
    answered: Counter = field(default_factory=Counter)
    error: str = ""  # why the run ended early, when it did (kube-proxy stopped answering)
    dropped: int = 0  # of the failed, those a NetworkPolicy dropped (they timed out)
    policies: set[str] = field(default_factory=set)  # the policies that dropped them

    @property
    def policy_names(self) -> str:
        return ", ".join(sorted(self.policies))

    @property
    def pods(self) -> list[tuple[str, int]]:
        """(pod, requests answered), by pod name."""
        return sorted(self.answered.items())


def traffic_params(form: dict[str, str]) -> dict[str, str]:
    target, node = (form.get("target") or "").strip(), (form.get("node") or "").strip()
    namespace = (form.get("namespace") or "default").strip()
    if not TARGET.match(target):
        raise ActionError(f"service: {target!r} is not a service name")
    if not NAME.match(node):
        raise ActionError(f"node: {node!r} is not a node name")
    if not NAME.match(namespace):
        raise ActionError(f"namespace: {namespace!r} is not a namespace name")
    count = form_int(form, "count", default="10", low=1, high=MAX_COUNT)
    return {"node": node, "target": target, "namespace": namespace, "count": str(count)}


async def send_traffic(base_url: str, form: dict[str, str]) -> TrafficSummary:
    params = traffic_params(form)
    summary = TrafficSummary()
    async for line in hub.stream_lines(base_url, "POST", "/kubekitchen/traffic", params):
        if line.get("done"):
            summary.sent = int(line.get("sent") or summary.sent)
            summary.error = str(line.get("error") or "")
            continue
        summary.sent += 1
        if line.get("code") == 200 and line.get("pod"):
            summary.answered[str(line["pod"])] += 1
        else:
            summary.failed += 1
            dropped = line.get("dropped")
            if isinstance(dropped, dict):
                summary.dropped += 1
                summary.policies.update(str(p) for p in dropped.get("policies") or [])
    return summary


async def proxy_rules(base_url: str, node: str) -> str:
    if not NAME.match(node):
        raise ActionError(f"node: {node!r} is not a node name")
    return await hub.read_text(base_url, "/kubekitchen/proxyrules", {"node": node, "format": "text"})


def _rule_class(line: str) -> str:
    if line.startswith(":"):
        return "chain"
    if not line.startswith("-A "):
        return "declaration"
    if "DNAT" in line:
        return "dnat"
    if line.startswith("-A KUBE-NODEPORTS"):
        return "nodeport"
    if line.startswith("-A KUBE-SVC-"):
        return "balance"
    return "service"


def rule_lines(text: str) -> list[dict[str, str]]:
    return [{"cls": _rule_class(line), "text": line} for line in text.splitlines() if line.strip()]
