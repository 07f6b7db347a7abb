"""`python manage.py resolve NAME [-n NAMESPACE] [--server URL]`: ask the cluster's DNS, as a pod
in NAMESPACE would (`nslookup NAME` inside the cluster), through the hub's /kubekitchen/resolve.

Prints the fully qualified name and its records (A: the cluster IP, or the ready pods' IPs for a
headless Service; CNAME for an ExternalName Service); NXDOMAIN or a refusal exits with status 1.
"""

from __future__ import annotations

from typing import Any

import httpx
from django.core.management.base import BaseCommand, CommandError

USER_AGENT = "kubekitchen-cli/1.0"


def ask(client: httpx.Client, name: str, namespace: str) -> dict[str, Any]:
    """The hub's answer; CommandError with the hub's message when there is none."""
    try:
        response = client.get("/kubekitchen/resolve", params={"name": name, "namespace": namespace})
    except httpx.HTTPError as exc:
        raise CommandError(f"cannot reach the hub at {client.base_url}: {exc}") from None
    body = _json(response)
    if response.status_code == 404:
        raise CommandError(f"** server can't find {name}: {body.get('message') or 'NXDOMAIN'}")
    if response.status_code != 200:
        raise CommandError(body.get("message") or f"the hub answered {response.status_code}")
    return body


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {"message": response.text.strip()}
    return body if isinstance(body, dict) else {}


def answer_lines(answer: dict[str, Any]) -> list[str]:
    """nslookup-like lines for one answer."""
    name, kind, records = answer["name"], answer["type"], answer.get("records") or []
    lines = [f"Name:    {name}", f"Service: {answer.get('service', '')}" + ("  (headless)" if answer.get("headless") else "")]
    if kind == "CNAME":
        lines += [f"{name}  canonical name = {record}" for record in records]
    else:
        lines += [f"Address: {record}" for record in records]
    if not records:
        lines.append("(no addresses: the headless Service has no ready endpoints)")
    return lines


class Command(BaseCommand):
    help = "Resolve a Service's DNS name the way a pod in the cluster would."

    def add_arguments(self, parser):
        parser.add_argument("name", help="a Service name: web, web.shop, web.shop.svc.cluster.local")
        parser.add_argument("-n", "--namespace", default="default", help="the asking pod's namespace")
        parser.add_argument("--server", default="http://127.0.0.1:8000", help="the hub's URL")

    def handle(self, *args, name: str, namespace: str, server: str, **options):
        with httpx.Client(base_url=server.rstrip("/"), headers={"User-Agent": USER_AGENT, **_bearer()}, timeout=10.0) as client:
            answer = ask(client, name, namespace)
        self.stdout.write("\n".join(answer_lines(answer)))


def _bearer() -> dict[str, str]:
    """The operator's identity at the hub (control.auth.tokenfile)."""
    from django.conf import settings

    from control.auth.tokenfile import bearer, operator_token

    return bearer(operator_token(settings.DATA_DIR))
