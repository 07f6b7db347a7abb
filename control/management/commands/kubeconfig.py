"""`python manage.py kubeconfig [--server URL]`: a kubeconfig for kubectl, on stdout, as the cluster
admin (`kubernetes-admin` in `system:masters`, the token file's admin token)."""

from __future__ import annotations

import yaml
from django.core.management.base import BaseCommand


def kubeconfig(server: str, namespace: str = "default", token: str = "") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kube-kitchen", "cluster": {"server": server}}],
        "users": [{"name": "kube-kitchen-user", "user": {"token": token} if token else {}}],
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
        from django.conf import settings

        from control.auth.tokenfile import admin_token

        token = admin_token(settings.DATA_DIR)  # the cluster admin (system:masters), made on first use
        self.stdout.write(yaml.safe_dump(kubeconfig(server.rstrip("/"), namespace, token), sort_keys=False))
