"""Who may call a node's servers (the kubelet's and kube-proxy's): whoever proves it holds the
cluster's node-access secret — the hub, and the node components that send each other traffic.

Upstream, a kubelet run with `--anonymous-auth=false` answers 401 to a caller it cannot
authenticate; the API server proves itself with its kubelet-client certificate or a bearer token
the kubelet checks with a TokenReview. The node servers here speak plain HTTP on loopback, so the
proof is one bearer secret, made once in the data folder (`control.keys.node_access_token`, 0600
in a 0700 folder) and read from there by the hub, the kubelets and the kube-proxies, the way they
already read their identities' tokens. It is in no kubeconfig, token file, Secret or pod: a user
of the cluster (an attendee's token included) cannot present it.

Guarantees:
- `token()` is this process's data folder's secret (`KK_DATA_DIR`, the settings' folder), read
  once per folder; `bearer()` the header that carries it.
- `admits(headers, expected)` is true only for `Authorization: Bearer <expected>` (the scheme
  case-insensitive, as upstream's bearer authenticator reads it), compared in constant time
  (`hmac.compare_digest`); an empty `expected` admits no one.
- `UNAUTHORIZED` is the 401 body: the Status kube-apiserver answers an unauthenticated request.
"""

from __future__ import annotations

import hmac
import json
import threading
from pathlib import Path

from control import keys

_lock = threading.Lock()
_tokens: dict[Path, str] = {}

UNAUTHORIZED = json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                           "message": "Unauthorized", "reason": "Unauthorized", "code": 401},
                          separators=(",", ":")).encode()


def token(data_dir: Path | None = None) -> str:
    """The node-access secret of `data_dir` (default: this process's data folder)."""
    folder = Path(data_dir) if data_dir is not None else keys.default_data_dir()
    with _lock:
        if folder not in _tokens:
            _tokens[folder] = keys.node_access_token(folder)
        return _tokens[folder]


def bearer(data_dir: Path | None = None) -> dict[str, str]:
    """The request header a caller of a node server sends."""
    return {"Authorization": f"Bearer {token(data_dir)}"}


def admits(headers: list[tuple[bytes, bytes]], expected: str) -> bool:
    """Whether a request's headers (lowercase names, as h11 gives them) carry the secret."""
    if not expected:
        return False
    presented = [value for name, value in headers if name == b"authorization"]
    if len(presented) != 1:
        return False
    scheme, _, credential = presented[0].strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return False
    return hmac.compare_digest(credential.strip(), expected.encode("latin-1"))
