"""control.serving.install through the entry point control.asgi: importing it (as runhub, `daphne
control.asgi:application` and Django's runserver do) applies every Daphne/Twisted adjustment, once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from daphne import http_protocol, server, ws_protocol
from twisted.web import _http2, http

import control.asgi
from control import serving
from control.serving import twisted_http


def adjusted() -> dict[str, bool]:
    return {
        "request line": http.HTTPChannel.MAX_LENGTH == 1 << 20,
        "headers": http.HTTPChannel.totalHeadersSize == 1 << 20,
        "phrases": http.RESPONSES[422] == b"Unprocessable Entity" and http.RESPONSES[429] == b"Too Many Requests",
        "content type": http._parseContentType is twisted_http.media_type,
        "quiet access log": http_protocol.HTTPFactory.startFactory is twisted_http.start_factory,
        "websocket denial": getattr(ws_protocol.WebSocketFactory.protocol, "denial_response", False),
        "send backlog": getattr(server.Server.create_application, "_kk_backlog", False),
        "reaping": getattr(server.Server.protocol_disconnected, "_kk_reaping", False),
        "spdy upgrade": getattr(http_protocol.WebRequest.process, "spdy_upgrade", False),
        "http2 window": getattr(_http2.H2Stream, "_kk_blocks_when_out_of_window", False),
        "timeouts": getattr(http.HTTPChannel, "_kk_bounded", False),
        "client certificates": getattr(server.Server.create_application, "_kk_client_certs", False),
    }


def test_the_entry_point_installs_every_adjustment():
    assert control.asgi.application is control.serving.asgi.application
    assert serving.installed()
    assert all(adjusted().values()), adjusted()


def test_install_is_idempotent():
    wrapped = (server.Server.create_application, http_protocol.WebRequest.process,
               http_protocol.HTTPFactory.buildProtocol, _http2.H2Connection._handleWindowUpdate)
    serving.install()
    assert (server.Server.create_application, http_protocol.WebRequest.process,
            http_protocol.HTTPFactory.buildProtocol, _http2.H2Connection._handleWindowUpdate) == wrapped


def test_daphne_cli_gets_the_same_adjustments_as_runhub():
    """What `daphne control.asgi:application` does: Daphne imports its server, then the application."""
    root = Path(__file__).resolve().parents[2]
    script = ("import daphne.server, daphne.cli, importlib; daphne.cli.CommandLineInterface()\n"
              "from daphne.utils import import_by_path; import_by_path('control.asgi:application')\n"
              "from tests.serving.test_install import adjusted; print(sorted(k for k, v in adjusted().items() if not v))")
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root)})  # the session's own data folder
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_media_type_is_the_lowercased_type_alone():
    assert twisted_http.media_type(b" Application/JSON ; charset=utf-8") == b"application/json"
    assert twisted_http.media_type(b"application/apply-patch+yaml") == b"application/apply-patch+yaml"


@pytest.mark.parametrize("verbosity, logged", [(0, False), (1, False), (2, True)])
def test_the_access_log_line_is_made_only_when_daphne_keeps_twisteds_log(verbosity, logged):
    from types import SimpleNamespace

    from twisted.python import log

    factory = http_protocol.HTTPFactory(SimpleNamespace(verbosity=verbosity))
    factory.startFactory()
    try:
        assert (factory._logFile is log.logfile) is logged
    finally:
        factory.stopFactory()
