"""`python manage.py runhub --addr HOST:PORT`: the API server alone, served by Daphne.

Several of these may run against one PostgreSQL database (the scale-out shape).

Guarantees: the hub's change feed, log compaction and CRD follower are started (the ASGI lifespan's
startup, which Daphne does not send, so it is driven here) before the port is opened, on the loop
Daphne serves on; they are stopped (lifespan shutdown) when Daphne stops. A hub that cannot start
exits with an error instead of serving. A client that sends nothing, or its request line and
headers too slowly, is disconnected (`control.serving.timeouts`: KK_HTTP_IDLE_TIMEOUT,
KK_HTTP_HEADER_TIMEOUT); a watch that streams is not.
Both ports listen with the backlog Go's net package gives kube-apiserver's listener (`listen_backlog`:
the system's somaxconn), not Twisted's 50: while the loop is busy a burst of connections (a room
opening its watches and dashboards at once) waited for the kernel's SYN retransmission (1 s, then
3 s) once 50 were queued.
Started by runcluster (`KK_PARENT_PID`), the hub stops (SIGTERM to itself, Twisted's orderly stop)
once that parent is gone, also where the kernel's parent-death signal does not exist (macOS).
With `--secure-addr` the HTTPS port asks clients for a certificate of the cluster CA without
requiring one (`control.serving.client_certs`: kube-apiserver's x509 authentication) and offers ALPN `h2` and `http/1.1`, as kube-apiserver does: Daphne's
HTTPFactory names both to TLS (Twisted's IProtocolNegotiationFactory) once Twisted's HTTP/2 support
(the `h2` and `priority` packages) is importable, so kubectl's requests and watches are HTTP/2
streams there, while its exec/attach/port-forward upgrades (which ask for http/1.1) still work. A hub
without that support says so at start and serves HTTP/1.1 only.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from control import config, heap


def split_addr(addr: str) -> tuple[str, int]:
    host, _, port = addr.rpartition(":")
    if not host or not port.isdigit():
        raise CommandError(f"--addr must be HOST:PORT, not {addr!r}")
    return host.strip("[]"), int(port)


SOMAXCONN = Path("/proc/sys/net/core/somaxconn")
DEFAULT_BACKLOG = 4096  # Linux's SOMAXCONN since 5.4, Go's fallback there
MAX_BACKLOG = 65535  # Go caps it (the kernel keeps it in 16 bits before Linux 4.1)


def listen_backlog(somaxconn: Path = SOMAXCONN) -> int:
    """The accept queue Go's net.Listen asks for (net/sock_linux.go maxListenerBacklog): the
    system's somaxconn, capped, or DEFAULT_BACKLOG where the system does not say (macOS)."""
    try:
        value = int(somaxconn.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return DEFAULT_BACKLOG
    return max(1, min(value, MAX_BACKLOG))


def _follow_parent() -> None:
    """Stop with the runcluster that started us, on any system (see the module's guarantees)."""
    import os
    import signal

    from control.parentwatch import parent_is_gone, watch_parent_in_thread

    expected = config.given("KK_PARENT_PID")
    if not expected.isdigit():
        return  # started by hand or by a test: no parent to follow
    parent = os.getppid()
    if parent_is_gone(expected, parent):
        os.kill(os.getpid(), signal.SIGTERM)
        return
    watch_parent_in_thread(parent, lambda: os.kill(os.getpid(), signal.SIGTERM))


class Command(BaseCommand):
    help = "Serve the hub (the Kubernetes-compatible API server) with Daphne."

    def add_arguments(self, parser):
        parser.add_argument("--addr", default="127.0.0.1:8000")
        parser.add_argument("--secure-addr", default="",
                            help="also serve HTTPS here (HOST:PORT), with a certificate of the data folder's CA: "
                                 "kubectl sends its token only over HTTPS")

    def handle(self, *args, addr: str, secure_addr: str = "", **options):
        from daphne.endpoints import build_endpoint_description_strings
        from daphne.server import Server, twisted_loop
        from twisted.internet import defer, reactor
        from twisted.web import http

        from django.conf import settings

        # The entry point installs every Daphne/Twisted adjustment (control.serving.install), as it
        # does for `daphne control.asgi:application`.
        from control.asgi import ServedLifespan, application

        from control.bootstrap import KubernetesServiceKeeper, advertise_address
        from control.storage.db import submit

        host, port = split_addr(addr)
        from control.serving.hosts import allow_bind_address

        from control.auth.tokenfile import ensure
        from control import keys

        ensure(settings.DATA_DIR)  # the token file (admin and spoke identities) before the first request
        # The service-account signing key too, as kube-apiserver reads its --service-account-key-file
        # at start: made on the first TokenRequest, a 2048-bit RSA key cost that request (and every
        # write queued behind it on the database thread) up to a second in a burst of new pods.
        keys.signer(settings.DATA_DIR)
        allow_bind_address(host)
        settings.KK_BIND_HOST = host  # where attendees can reach the join page (dashboard.reach)
        backlog = listen_backlog()
        endpoints = [f"{endpoint}:backlog={backlog}"
                     for endpoint in build_endpoint_description_strings(host=host, port=port)]
        secure: tuple[str, int, object] | None = None
        if secure_addr:
            from control.auth.serving import advertise, serving_files

            secure_host, secure_port = split_addr(secure_addr)
            allow_bind_address(secure_host)
            key, cert = serving_files(settings.DATA_DIR, [host, secure_host])
            from control.keys import CA_CERT, ca_certificate
            from control.serving import client_certs

            ca_certificate(settings.DATA_DIR)  # made already with the serving certificate; named here
            secure = (secure_host, secure_port,
                      client_certs.tls_options(key, cert, Path(settings.DATA_DIR) / "keys" / CA_CERT))
            if not http.H2_ENABLED:
                self.stderr.write("HTTP/2 is off on the HTTPS port: Twisted's HTTP/2 support is not installed "
                                  "(pip install 'twisted[http2,tls]')")
            shown = f"[{secure_host}]" if ":" in secure_host else secure_host
            advertise(settings.DATA_DIR, f"http://{host}:{port}", f"https://{shown}:{secure_port}")  # ALLOWED_HOSTS: the address we serve on, besides localhost and KK_ALLOWED_HOSTS
        lifespan = ServedLifespan(application)
        try:
            twisted_loop.run_until_complete(lifespan.startup())
        except Exception as exc:
            raise CommandError(f"the hub did not start: {exc}") from exc
        reactor.addSystemEventTrigger(
            "before", "shutdown", lambda: defer.Deferred.fromFuture(asyncio.ensure_future(lifespan.shutdown())))
        # kube-apiserver's kubernetesservice controller: default/kubernetes and this hub's endpoint
        keeper = KubernetesServiceKeeper(advertise_address(host), port, submit=submit)
        keeper.start()
        _follow_parent()
        server = Server(
            application=application,
            endpoints=endpoints,
            http_timeout=None,
            websocket_timeout=-1,
            application_close_timeout=5,
            server_name="kube-kitchen",
        )
        if secure is not None:  # asks for client certificates: an endpoint string cannot say so
            from control.serving import client_certs

            client_certs.listen(server, *secure, backlog=backlog)
        # Daphne logs a port it could not listen on and stops the reactor, and run() returns as after
        # a clean stop: keep the reason, so that the hub then exits non-zero (runcluster, a test
        # harness or a service manager can tell "could not listen" from "stopped")
        listen_failures: list[str] = []
        logged = server.listen_error

        def listen_error(failure):
            listen_failures.append(failure.getErrorMessage())
            return logged(failure)

        server.listen_error = listen_error
        heap.settle()  # started: what start-up built is frozen out of the collector's way (control.heap)
        try:
            server.run()
        finally:
            keeper.stop()
        if listen_failures:
            raise CommandError(f"the hub could not listen: {listen_failures[0]}")
