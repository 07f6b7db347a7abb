"""The private names of Twisted, Daphne, autobahn and h2 that `control.serving` replaces or reads,
listed once, so an upgrade that renames one is caught by a test instead of by a workshop.

Guarantees: `missing()` returns every listed name the installed packages no longer have (an empty
list when all are there). Class-level names are looked up on their classes; names a constructor or
`connectionMade` sets are looked up on instances made in memory (no socket, no reactor run). The
HTTP/2 names are checked only when Twisted's HTTP/2 support is importable (without it the adjustments
that use them are not installed). `install()` logs the missing ones; `tests/serving/test_private.py`
fails on them.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

log = logging.getLogger(__name__)

# (module, dotted name) that the adjustments replace or read, and who does.
ATTRIBUTES: list[tuple[str, str]] = [
    # twisted_http
    ("twisted.web.http", "HTTPChannel.MAX_LENGTH"),
    ("twisted.web.http", "HTTPChannel.totalHeadersSize"),
    ("twisted.web.http", "RESPONSES"),
    ("twisted.web.http", "_parseContentType"),
    ("twisted.web.http", "HTTPFactory._logFile"),
    # timeouts (HTTP/1.1)
    ("twisted.web.http", "HTTPChannel.dataReceived"),
    ("twisted.web.http", "HTTPChannel.allHeadersReceived"),
    ("twisted.web.http", "HTTPChannel.allContentReceived"),
    ("twisted.web.http", "HTTPChannel.connectionLost"),
    ("twisted.web.http", "HTTPChannel.timeoutConnection"),
    ("twisted.web.http", "H2_ENABLED"),
    ("daphne.http_protocol", "HTTPFactory.buildProtocol"),
    # websocket_denial, send_backlog, spdy_upgrade
    ("daphne.server", "Server.create_application"),
    ("daphne.server", "Server.protocol_connected"),
    ("daphne.server", "Server.protocol_disconnected"),
    ("daphne.ws_protocol", "WebSocketFactory.protocol"),
    ("daphne.ws_protocol", "WebSocketProtocol.handle_reply"),
    ("daphne.ws_protocol", "WebSocketProtocol.sendHttpErrorResponse"),
    ("daphne.http_protocol", "WebRequest.process"),
    ("autobahn.websocket.types", "ConnectionDeny"),
    # websocket_denial: the decision bound (openHandshakeTimeout and handshake_deferred, set per
    # connection, are checked by tests/serving/test_websocket_denial.py on Daphne's own protocol)
    ("autobahn.websocket.protocol", "WebSocketProtocol.onOpenHandshakeTimeout"),
    ("autobahn.websocket.protocol", "WebSocketProtocol.STATE_CONNECTING"),
    # websocket_denial: a send once the closing handshake began is dropped
    ("autobahn.websocket.protocol", "WebSocketProtocol.STATE_CLOSING"),
    ("autobahn.websocket.protocol", "WebSocketProtocol.STATE_CLOSED"),
    ("daphne.ws_protocol", "WebSocketProtocol.check_timeouts"),
    ("twisted.internet.abstract", "FileDescriptor.dataBuffer"),
    ("twisted.internet.abstract", "FileDescriptor.offset"),
]
H2_ATTRIBUTES: list[tuple[str, str]] = [
    # http2
    ("twisted.web._http2", "H2Stream.flowControlBlocked"),
    ("twisted.web._http2", "H2Connection._handleWindowUpdate"),
    ("twisted.web._http2", "_END_STREAM_SENTINEL"),
    # timeouts (HTTP/2), send_backlog
    ("twisted.web._http2", "H2Connection.dataReceived"),
    ("twisted.web._http2", "H2Connection.timeoutConnection"),
    ("twisted.web._http2", "H2Connection.connectionLost"),
    ("twisted.web._http2", "H2Connection.abortRequest"),
]
# (what the instance is, attribute) set at run time rather than on the class.
INSTANCE_ATTRIBUTES: list[tuple[str, str]] = [
    ("HTTPChannel", "_handlingRequest"),  # timeouts: no header timer while a request is answered
    ("HTTPChannel", "_networkProducer"),  # spdy_upgrade: keep reading after the hand-over
    ("FileDescriptor", "_tempDataLen"),  # send_backlog: bytes not yet in dataBuffer
    ("TLSMemoryBIOProtocol", "_appSendBuffer"),  # send_backlog: cleartext TLS has not taken yet
]
H2_INSTANCE_ATTRIBUTES: list[tuple[str, str]] = [
    ("H2Connection", "_outboundStreamQueues"),  # http2, send_backlog
    ("H2Connection", "_sendingDeferred"),  # http2: wake the sending loop
    ("H2Connection", "_stillProducing"),  # timeouts
    ("H2Connection", "priority"),  # http2: block a stream out of window
    ("H2Connection", "streams"),  # send_backlog, timeouts
    ("H2Stream", "_conn"),  # http2, send_backlog: a stream's connection
    ("H2Stream", "streamID"),
    ("FrameBuffer", "_preamble_len"),  # timeouts: a frame begun and not finished
    ("FrameBuffer", "_data"),
    ("FrameBuffer", "_headers_buffer"),
]


def h2_enabled() -> bool:
    try:
        importlib.import_module("twisted.web._http2")
    except ImportError:
        return False
    return True


def _has(module: str, dotted: str) -> bool:
    try:
        value: Any = importlib.import_module(module)
    except ImportError:
        return False
    for part in dotted.split("."):
        if not hasattr(value, part):
            return False
        value = getattr(value, part)
    return True


def _instances(h2: bool) -> dict[str, Any]:
    """One in-memory object of each kind whose run-time attributes are listed."""
    from twisted.internet.abstract import FileDescriptor
    from twisted.internet.protocol import Factory, Protocol
    from twisted.internet.ssl import optionsForClientTLS
    from twisted.internet.testing import MemoryReactorClock, StringTransport
    from twisted.protocols.tls import TLSMemoryBIOFactory
    from twisted.web import http

    channel = http.HTTPChannel()
    channel.callLater = MemoryReactorClock().callLater  # its idle timer must not reach the real reactor
    channel.makeConnection(StringTransport())
    # a client-side TLS wrapper: its handshake goes into memory, no certificate is needed
    tls = TLSMemoryBIOFactory(optionsForClientTLS("kube-kitchen.invalid"), True,
                              Factory.forProtocol(Protocol)).buildProtocol(None)
    tls.makeConnection(StringTransport())
    made = {"HTTPChannel": channel, "FileDescriptor": FileDescriptor(MemoryReactorClock()), "TLSMemoryBIOProtocol": tls}
    if h2:
        from twisted.web._http2 import H2Connection, H2Stream

        connection = H2Connection(MemoryReactorClock())
        made["H2Connection"] = connection
        made["FrameBuffer"] = connection.conn.incoming_buffer  # before any data: the preface is still awaited
        connection.makeConnection(StringTransport())  # its preface goes to memory; a stream's request reads the peer
        made["H2Stream"] = H2Stream(1, connection, [], http.Request, None, None)
        connection.setTimeout(None)  # the idle timer it started, on the memory clock, is dropped
    return made


def missing() -> list[str]:
    """Every listed private name the installed packages do not have (`module:Name.attribute`)."""
    h2 = h2_enabled()
    listed = ATTRIBUTES + (H2_ATTRIBUTES if h2 else [])
    gone = [f"{module}:{dotted}" for module, dotted in listed if not _has(module, dotted)]
    try:
        made = _instances(h2)
    except Exception as exc:  # a constructor changed its signature: that is a finding too
        return [*gone, f"instances: {type(exc).__name__}: {exc}"]
    for kind, name in INSTANCE_ATTRIBUTES + (H2_INSTANCE_ATTRIBUTES if h2 else []):
        if not hasattr(made[kind], name):
            gone.append(f"{kind}().{name}")
    return gone


def report() -> None:
    """Log what `missing()` finds (at install: the server still starts, the test is the gate)."""
    gone = missing()
    if gone:
        log.warning("control.serving relies on private names these Twisted/Daphne versions lack: %s",
                    ", ".join(gone))
