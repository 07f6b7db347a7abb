"""`python manage.py traffic TARGET --from NODE [-n COUNT] [--namespace NS] [--port P]
[--interval MS] [--server URL]`: send COUNT requests to a Service from a node, through that
node's kube-proxy (by way of the hub's /kubekitchen/traffic), and show who answered.

Prints one line per request as it is answered (the pod, its node, the endpoint, the Endpoints
version kube-proxy chose from), then how many requests each pod answered. A refusal (unknown node,
kube-proxy unreachable, bad parameters) exits with status 1 and the hub's message.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Iterator

import httpx
from django.core.management.base import BaseCommand, CommandError

from control import errors
from control.management.commands.resolve import USER_AGENT


def stream(client: httpx.Client, params: dict[str, str]) -> Iterator[dict[str, Any]]:
    """The answers, one dict per line, as they arrive."""
    try:
        with client.stream("POST", "/kubekitchen/traffic", params=params) as response:
            if response.status_code != 200:
                response.read()
                raise CommandError(errors.from_status(response.content, response.status_code).message)
            for text in response.iter_lines():
                if text.strip():
                    yield json.loads(text)
    except httpx.HTTPError as exc:
        raise CommandError(f"cannot reach the hub at {client.base_url}: {exc}") from None


def answer_line(line: dict[str, Any]) -> str:
    head = f"#{line.get('seq', '?'):<4} {line.get('from', '?')} -> {line.get('service') or line.get('target', '?')}"
    if line.get("code") == 200:
        return (f"{head}  {line.get('code')}  {line.get('pod')} on {line.get('podNode')} "
                f"({line.get('endpoint')}, endpoints rv {line.get('endpointsResourceVersion')})")
    return f"{head}  {line.get('code')}  {line.get('error') or 'no answer'}"


def summary_lines(answered: Counter, sent: int, failed: int) -> list[str]:
    lines = [f"{sent} sent, {sum(answered.values())} answered, {failed} failed"]
    width = max((len(pod) for pod in answered), default=0)
    for pod, count in sorted(answered.items()):
        share = count / sent if sent else 0
        lines.append(f"  {pod:<{width}}  {count:>5}  {share:>4.0%}  {'#' * round(share * 40)}")
    return lines


class Command(BaseCommand):
    help = "Send requests to a Service from a node through its kube-proxy and show which pods answer."

    def add_arguments(self, parser):
        parser.add_argument("target", help="a Service name (web, web.shop.svc.cluster.local) or a cluster IP")
        parser.add_argument("--from", dest="node", required=True, help="the node whose kube-proxy sends")
        parser.add_argument("-n", "--count", type=int, default=10)
        parser.add_argument("--namespace", default="default", help="the sending pod's namespace")
        parser.add_argument("--port", help="the Service port (default: its first)")
        parser.add_argument("--interval", type=int, help="milliseconds between requests (kube-proxy's default: 100)")
        parser.add_argument("--server", default="http://127.0.0.1:8000", help="the hub's URL")

    def handle(self, *args, target: str, node: str, count: int, namespace: str, port: str | None,
               interval: int | None, server: str, **options):
        params = {"node": node, "target": target, "namespace": namespace, "count": str(count)}
        if port:
            params["port"] = port
        if interval is not None:
            params["interval"] = str(interval)
        answered: Counter = Counter()
        sent = failed = 0
        timeout = httpx.Timeout(10.0, read=None)  # a long run answers slowly on purpose
        with httpx.Client(base_url=server.rstrip("/"), headers={"User-Agent": USER_AGENT, **_bearer()}, timeout=timeout) as client:
            for line in stream(client, params):
                if line.get("done"):
                    sent = int(line.get("sent") or sent)
                    if line.get("error"):
                        self.stderr.write(line["error"])
                    continue
                sent += 1
                if line.get("code") == 200 and line.get("pod"):
                    answered[line["pod"]] += 1
                else:
                    failed += 1
                self.stdout.write(answer_line(line))
                self.stdout.flush()
        self.stdout.write("\n".join(summary_lines(answered, sent, failed)))


def _bearer() -> dict[str, str]:
    """The operator's identity at the hub (control.auth.tokenfile)."""
    from django.conf import settings

    from control.auth.tokenfile import bearer, operator_token

    return bearer(operator_token(settings.DATA_DIR))
