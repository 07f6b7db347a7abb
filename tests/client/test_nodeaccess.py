"""The node-access secret (control.client.nodeaccess): one per data folder, private, and admitted
only when presented exactly as a bearer credential."""

from __future__ import annotations

import stat

from control import keys
from control.client import nodeaccess


def test_the_secret_is_made_once_0600_and_then_read(tmp_path):
    made = nodeaccess.token(tmp_path)
    path = tmp_path / "keys" / keys.NODE_ACCESS
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(made) >= 32 and path.read_text() == made
    assert keys.node_access_token(tmp_path) == made, "read again, never remade"
    assert nodeaccess.token(tmp_path / "other") != made, "each cluster its own"


def test_the_header_carries_the_secret_as_a_bearer_credential(tmp_path):
    assert nodeaccess.bearer(tmp_path) == {"Authorization": f"Bearer {nodeaccess.token(tmp_path)}"}


def test_admits_only_the_exact_secret_as_one_bearer_header():
    secret = "s" * 43
    assert nodeaccess.admits([(b"authorization", b"Bearer " + secret.encode())], secret)
    assert nodeaccess.admits([(b"authorization", b"bearer  " + secret.encode() + b" ")], secret)
    refused = [[], [(b"authorization", b"Bearer " + secret[:-1].encode())],
               [(b"authorization", b"Bearer " + secret.encode() + b"x")], [(b"authorization", secret.encode())],
               [(b"authorization", b"Basic " + secret.encode())], [(b"x-authorization", b"Bearer " + secret.encode())],
               [(b"authorization", b"Bearer " + secret.encode())] * 2]
    for headers in refused:
        assert not nodeaccess.admits(headers, secret), headers
    assert not nodeaccess.admits([(b"authorization", b"Bearer ")], ""), "no expected secret admits no one"
