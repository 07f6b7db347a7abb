"""The names the server answers to (control.serving.hosts) and their enforcement in control.asgi: a foreign
Host is a 400 Status on every path (DNS rebinding), a foreign Origin cannot open the dashboard's
websockets, and the dashboard's forms need the CSRF token while the Kubernetes API paths do not."""

from __future__ import annotations

import asyncio
import json

import pytest

from control.serving import hosts, websocket_denial
from control.serving.asgi import application


def serve(scope: dict, body: bytes = b"") -> list[dict]:
    sent: list[dict] = []
    messages = [{"type": "http.request", "body": body, "more_body": False}] if scope["type"] == "http" \
        else [{"type": "websocket.connect"}]

    async def receive():
        if messages:
            return messages.pop(0)
        await asyncio.sleep(3600)

    async def send(message):
        sent.append(message)

    async def run():
        await asyncio.wait_for(application(scope, receive, send), 10)

    asyncio.run(run())
    return sent


def http(path: str, host: str, method: str = "GET") -> list[dict]:
    return serve({"type": "http", "method": method, "path": path, "query_string": b"", "http_version": "1.1",
                  "headers": [(b"host", host.encode())], "scheme": "http", "server": ("127.0.0.1", 8000),
                  "client": ("127.0.0.1", 5000)})


@pytest.mark.parametrize("path", ["/healthz", "/api/v1/namespaces", "/", "/static/dashboard/app.js",
                                  "/kubekitchen/proxyrules"])
def test_a_foreign_host_is_refused_on_every_path(path):
    start, body = http(path, "evil.example")
    assert start["status"] == 400
    status = json.loads(body["body"])
    assert status["kind"] == "Status" and status["reason"] == "BadRequest" and "evil.example" in status["message"]


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost", "localhost:8000", "[::1]:8000", "kitchen.localhost"])
def test_local_names_are_served(host):
    assert http("/static/dashboard/app.js", host)[0]["status"] == 200


def test_a_foreign_host_cannot_open_any_websocket():
    for path in ("/ws/live/", "/api/v1/namespaces/default/pods/p/exec"):
        sent = serve({"type": "websocket", "path": path, "query_string": b"", "subprotocols": [],
                      "headers": [(b"host", b"evil.example"), (b"origin", b"http://evil.example")],
                      "extensions": {websocket_denial.EXTENSION: {}}})
        assert sent[0]["type"] == "websocket.http.response.start" and sent[0]["status"] == 400


@pytest.mark.parametrize("origin", [b"http://evil.example", b"http://127.0.0.1.evil.example:8000", b"null", None])
def test_a_foreign_origin_cannot_open_the_dashboard_socket(origin):
    from control.serving.asgi import websocket_app

    headers = [(b"host", b"127.0.0.1:8000")] + ([(b"origin", origin)] if origin else [])
    sent: list[dict] = []
    inbox = [{"type": "websocket.connect"}, {"type": "websocket.disconnect", "code": 1006}]

    async def receive():
        return inbox.pop(0)

    async def send(message):
        sent.append(message)

    scope = {"type": "websocket", "path": "/ws/live/", "query_string": b"", "subprotocols": [], "headers": headers}
    asyncio.run(websocket_app(scope, receive, send))
    assert sent == [{"type": "websocket.close"}]  # Daphne answers the handshake with 403


def test_the_bind_address_and_configured_names_are_added():
    assert hosts.for_bind_address("10.1.2.3", ["localhost"]) == ["localhost", "10.1.2.3"]
    assert hosts.for_bind_address("::1", []) == ["[::1]"]
    everywhere = hosts.for_bind_address("0.0.0.0", [])
    assert everywhere[0] == "0.0.0.0" and len(everywhere) >= 2  # and the machine's name / address
    assert hosts.configured(" kitchen.lan, .example.org ,,") == ["kitchen.lan", ".example.org"]


def test_settings_hold_no_wildcard():
    from django.conf import settings

    assert "*" not in settings.ALLOWED_HOSTS


def test_allow_bind_address_takes_effect_at_once(settings):
    assert not hosts.host_allowed({"headers": [(b"host", b"192.0.2.7:8000")]})
    hosts.allow_bind_address("192.0.2.7")
    assert hosts.host_allowed({"headers": [(b"host", b"192.0.2.7:8000")]})
    assert not hosts.host_allowed({"headers": [(b"host", b"192.0.2.8:8000")]})
    assert hosts.host_allowed({"headers": []})  # no Host header: not a rebinding request


def test_made_up_host_names_are_refused_and_do_not_grow_the_memo(settings):
    for i in range(3 * hosts._DECIDED_MAX):
        assert not hosts.host_allowed({"headers": [(b"host", f"rebind-{i}.example:8000".encode())]})
        assert len(hosts._DECIDED) <= hosts._DECIDED_MAX
    assert hosts.host_allowed({"headers": [(b"host", b"localhost:8000")]})


# --- CSRF on the dashboard, none on the API ------------------------------------------------------

@pytest.mark.django_db
def test_the_dashboard_forms_need_the_csrf_token(client, settings):
    from django.test import Client

    settings.KK_AUTHENTICATION = "off"  # the forms themselves (the login form's CSRF: tests/dashboard/test_login.py)

    strict = Client(enforce_csrf_checks=True)
    assert strict.post("/apply/", {"manifest": ""}).status_code == 403
    page = strict.get("/")
    token = page.cookies["csrftoken"].value
    assert 'name="csrfmiddlewaretoken"' in page.content.decode() and "X-CSRFToken" in page.content.decode()
    answer = strict.post("/apply/", {"manifest": ""}, HTTP_X_CSRFTOKEN=token)
    assert answer.status_code != 403
    assert page["X-Frame-Options"] == "DENY" and page["X-Content-Type-Options"] == "nosniff"


def test_the_login_form_needs_the_csrf_token_too(settings):
    from django.test import Client

    settings.KK_AUTHENTICATION = "on"
    strict = Client(enforce_csrf_checks=True)
    assert strict.post("/login/", {"token": "anything"}).status_code == 403
    page = strict.get("/login/")
    assert page.status_code == 200 and 'name="csrfmiddlewaretoken"' in page.content.decode()
