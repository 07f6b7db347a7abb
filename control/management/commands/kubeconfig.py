"""`python manage.py kubeconfig [--server URL]`: a kubeconfig for kubectl, on stdout, as the cluster
admin (`kubernetes-admin` in `system:masters`, the token file's admin token)."""

from __future__ import annotations

import sys

import yaml
from django.core.management.base import BaseCommand

from control.kubeconfig import kubeconfig


class Command(BaseCommand):
    help = "Print a kubeconfig that points kubectl at the hub."

    def add_arguments(self, parser):
        parser.add_argument("--server", default="http://127.0.0.1:8000", help="the hub's URL")
        parser.add_argument("--namespace", default="default")

    def handle(self, *args, server: str, namespace: str, **options):
        from django.conf import settings

        from control.auth.tokenfile import admin_token

        from control import keys
        from control.auth.serving import secure_url_for

        token = admin_token(settings.DATA_DIR)  # the cluster admin (system:masters), made on first use
        server = server.rstrip("/")
        ca = b""
        if server.startswith("http://"):
            # kubectl sends a token only over HTTPS: point it at the hub's HTTPS address when it has one
            secure = secure_url_for(settings.DATA_DIR, server)
            if secure:
                server, ca = secure, keys.ca_certificate(settings.DATA_DIR)
            else:
                print(f"warning: {server} is plain HTTP and kubectl sends no token over it; start the hub "
                      "with --secure-addr (runcluster does)", file=sys.stderr)
        elif server.startswith("https://"):
            ca = keys.ca_certificate(settings.DATA_DIR)
        self.stdout.write(yaml.safe_dump(kubeconfig(server, namespace, token, ca), sort_keys=False))
