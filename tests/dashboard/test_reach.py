"""Where attendees reach the hub: loopback or every address, the LAN address found without a
packet, and the absolute links built on it."""

from __future__ import annotations

import ipaddress
import socket

from django.test import RequestFactory

from dashboard import reach


def test_loopback_and_every_address_are_told_apart(settings):
    for host, loopback, everywhere in [("127.0.0.1", True, False), ("[::1]", True, False), ("localhost", True, False),
                                       ("0.0.0.0", False, True), ("::", False, True), ("192.168.1.20", False, False),
                                       ("kitchen.lan", False, False)]:
        settings.KK_BIND_HOST = host
        assert (reach.loopback_only(), reach.every_address()) == (loopback, everywhere), host
    settings.KK_BIND_HOST = ""
    assert not reach.loopback_only() and not reach.every_address()  # unknown: the browser's address


def test_the_lan_address_is_found_without_sending_anything(monkeypatch):
    sent = []
    real = socket.socket

    class Recording(real):
        def send(self, *args):
            sent.append(args)
            return super().send(*args)

        def sendto(self, *args):
            sent.append(args)
            return super().sendto(*args)

    monkeypatch.setattr(socket, "socket", Recording)
    found = reach.lan_address()
    assert sent == []
    assert found == "" or not ipaddress.ip_address(found).is_loopback


def test_links_carry_the_lan_address_only_when_listening_everywhere_and_opened_on_loopback(settings, monkeypatch):
    monkeypatch.setattr(reach, "lan_address", lambda: "192.168.1.20")
    request = RequestFactory().get("/", HTTP_HOST="127.0.0.1:8000")
    settings.KK_BIND_HOST = "0.0.0.0"
    assert reach.absolute(request, "/join/") == "http://192.168.1.20:8000/join/"
    opened_on_lan = RequestFactory().get("/", HTTP_HOST="kitchen.lan:8000")
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "kitchen.lan"]
    assert reach.absolute(opened_on_lan, "/join/") == "http://kitchen.lan:8000/join/"
    settings.KK_BIND_HOST = "127.0.0.1"
    assert reach.absolute(request, "/join/") == "http://127.0.0.1:8000/join/"
