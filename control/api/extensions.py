"""The ASGI scope extensions the hub's app reads (`scope["extensions"]`), named once.

The server adjustments in `control.serving` provide them under Daphne; under another server (uvicorn,
the in-process tests) they may be absent, and the hub then behaves as that server allows.

Guarantees: these names are the only spelling of the extensions; both sides import them from here
(the HTTP face does not import the serving package, which sits above it).
"""

# ASGI's Websocket Denial Response: a handshake may be answered with an HTTP status and body.
WEBSOCKET_DENIAL = "websocket.http.response"
# ASGI's TLS extension: on the HTTPS port, `client_cert_chain` holds the certificates (PEM, leaf
# first) the client presented, for the x509 authenticator (`control.serving.client_certs`).
TLS = "tls"
# How many bytes of an HTTP answer the client has not taken yet, and a way to drop them.
SEND_BACKLOG = "kk.send.backlog"
# On a websocket scope: an object whose `status()` is the HTTP status the server itself already
# answered the handshake with (429: the hub's decision bound passed, `control.serving.websocket_denial`),
# else None; an application that decides later must not act for a client told to try again.
HANDSHAKE_ANSWERED = "kk.handshake.answered"


def client_chain(extensions: dict) -> tuple[str, ...]:
    """The client certificates a request's TLS connection presented (none over plain HTTP), from
    its scope's `extensions`."""
    tls = (extensions or {}).get(TLS) or {}
    return tuple(tls.get("client_cert_chain") or ())
