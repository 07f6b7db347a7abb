"""The ephemeral port range is this machine's: Linux's /proc, the BSDs' and macOS's sysctl, else IANA's."""

import ctypes
import socket

from control import ephemeral


def test_a_port_the_kernel_hands_out_is_in_the_range():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        assert sock.getsockname()[1] in ephemeral.ephemeral_ports()


def test_macos_reads_the_range_with_sysctlbyname(monkeypatch):
    values = {b"net.inet.ip.portrange.first": 49152, b"net.inet.ip.portrange.last": 65535}

    class Libc:
        @staticmethod
        def sysctlbyname(name, value, size, new, new_size):
            if name not in values:
                return -1
            ctypes.cast(value, ctypes.POINTER(ctypes.c_int)).contents.value = values[name]
            return 0

    monkeypatch.setattr(ephemeral.sys, "platform", "darwin")
    monkeypatch.setattr(ephemeral.ctypes, "CDLL", lambda *a, **k: Libc())
    assert ephemeral.ephemeral_ports() == range(49152, 65536)
    values[b"net.inet.ip.portrange.first"] = 10000
    assert ephemeral.ephemeral_ports() == range(10000, 65536)
    del values[b"net.inet.ip.portrange.last"]
    assert ephemeral.ephemeral_ports() == ephemeral.IANA, "unreadable: IANA's range"


def test_without_proc_or_sysctl_it_is_ianas_range(monkeypatch):
    monkeypatch.setattr(ephemeral, "_linux", lambda: None)
    monkeypatch.setattr(ephemeral.sys, "platform", "linux")
    assert ephemeral.ephemeral_ports() == ephemeral.IANA, "a Linux without /proc mounted"
    monkeypatch.setattr(ephemeral.sys, "platform", "win32")
    monkeypatch.setattr(ephemeral.ctypes, "CDLL", lambda *a, **k: object())  # no sysctlbyname
    assert ephemeral.ephemeral_ports() == range(49152, 65536)
