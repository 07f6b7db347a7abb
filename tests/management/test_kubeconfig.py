"""`manage.py kubeconfig`: the admin's token, and the hub's HTTPS address with the CA when it has one."""

from __future__ import annotations

import base64
import io

import yaml
from django.core.management import call_command

from control import keys
from control.auth import tokenfile
from control.auth.serving import advertise


def kubeconfig(server: str) -> dict:
    out = io.StringIO()
    call_command("kubeconfig", "--server", server, stdout=out, stderr=io.StringIO())
    return yaml.safe_load(out.getvalue())


def test_the_kubeconfig_is_the_admins_over_https_when_the_hub_serves_it(settings, tmp_path):
    settings.DATA_DIR = tmp_path
    plain = kubeconfig("http://127.0.0.1:8000")
    assert plain["clusters"][0]["cluster"] == {"server": "http://127.0.0.1:8000"}
    assert plain["users"][0]["user"] == {"token": tokenfile.admin_token(tmp_path)}
    advertise(tmp_path, "http://127.0.0.1:8000", "https://127.0.0.1:8001")
    secure = kubeconfig("http://127.0.0.1:8000/")["clusters"][0]["cluster"]
    assert secure["server"] == "https://127.0.0.1:8001"
    assert base64.b64decode(secure["certificate-authority-data"]) == keys.ca_certificate(tmp_path)
