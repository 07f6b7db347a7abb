"""`python manage.py kubeconfig [--server URL]`: a kubeconfig for kubectl, on stdout, as the cluster
admin (`kubernetes-admin` in `system:masters`, the token file's admin token)."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml
from django.core.management.base import BaseCommand

from control.kubeconfig import admin


class Command(BaseCommand):
    help = "Print a kubeconfig that points kubectl at the hub."

    def add_arguments(self, parser):
        parser.add_argument("--server", default="http://127.0.0.1:8000", help="the hub's URL")
        parser.add_argument("--namespace", default="default")

    def handle(self, *args, server: str, namespace: str, **options):
        from django.conf import settings

        document, warning = admin(Path(settings.DATA_DIR), server, namespace)
        if warning:
            print(f"warning: {warning}", file=sys.stderr)
        self.stdout.write(yaml.safe_dump(document, sort_keys=False))
