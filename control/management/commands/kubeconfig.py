"""`python manage.py kubeconfig [--server URL]`: a kubeconfig for kubectl, on stdout."""

from __future__ import annotations

import yaml
from django.core.management.base import BaseCommand


def kubeconfig(server: str, namespace: str = "default") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kube-kitchen", "cluster": {"server": server}}],
        "users": [{"name": "kube-kitchen-user", "user": {}}],
        "contexts": [{"name": "kube-kitchen",
                      "context": {"cluster": "kube-kitchen", "user": "kube-kitchen-user", "namespace": namespace}}],
        "current-context": "kube-kitchen",
        "preferences": {},
    }


class Command(BaseCommand):
    help = "Print a kubeconfig that points kubectl at the hub."

    def add_arguments(self, parser):
        parser.add_argument("--server", default="http://127.0.0.1:8000", help="the hub's URL")
        parser.add_argument("--namespace", default="default")

    def handle(self, *args, server: str, namespace: str, **options):
        self.stdout.write(yaml.safe_dump(kubeconfig(server.rstrip("/"), namespace), sort_keys=False))
