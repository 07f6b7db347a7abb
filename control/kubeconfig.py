"""The one kubeconfig shape Kube Kitchen hands out (the `kubeconfig` command's, runcluster's, an
attendee's).

Guarantees:
- `kubeconfig(server, namespace, token, ca_pem)` is a kubeconfig document (a dict, for
  yaml.safe_dump) with one cluster `kube-kitchen` at `server` (the CA inlined as
  `certificate-authority-data` when given), one user with the bearer `token` (none when empty) and
  one current context joining them in `namespace`. Pure: no files, no settings.
- `admin(folder, server)` is the cluster admin's document for the hub at `server`, read from that
  hub's data `folder` (the token file's admin token; for a plain-HTTP address, the hub's HTTPS
  address and CA, because kubectl sends a token only over HTTPS), with a warning when there is none.
- `write_private(path, document)` writes a document owner-only (created 0600, never looser, swapped
  in whole: `datafolder.replace_file`), so a file kubectl reads twice can be named on its command
  line (a `<(...)` pipe reads empty the second time: kubectl 1.32 loads its kubeconfig more than
  once).
"""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from control.datafolder import replace_file


def kubeconfig(server: str, namespace: str = "default", token: str = "", ca_pem: bytes = b"") -> dict:
    cluster: dict = {"server": server}
    if ca_pem:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kube-kitchen", "cluster": cluster}],
        "users": [{"name": "kube-kitchen-user", "user": {"token": token} if token else {}}],
        "contexts": [{"name": "kube-kitchen",
                      "context": {"cluster": "kube-kitchen", "user": "kube-kitchen-user", "namespace": namespace}}],
        "current-context": "kube-kitchen",
        "preferences": {},
    }


def admin(folder: Path, server: str, namespace: str = "default") -> tuple[dict, str]:
    """The cluster admin's kubeconfig for the hub at `server` whose data folder is `folder`, and a
    warning ("" when none) for an address kubectl would send no token to."""
    from control import keys
    from control.auth.serving import secure_url_for
    from control.auth.tokenfile import admin_token

    token = admin_token(folder)  # the cluster admin (system:masters), made on first use
    server, ca, warning = server.rstrip("/"), b"", ""
    if server.startswith("http://"):
        secure = secure_url_for(folder, server)
        if secure:
            server, ca = secure, keys.ca_certificate(folder)
        else:
            warning = (f"{server} is plain HTTP and kubectl sends no token over it; start the hub "
                       "with --secure-addr (runcluster does)")
    elif server.startswith("https://"):
        ca = keys.ca_certificate(folder)
    return kubeconfig(server, namespace, token, ca), warning


def write_private(path: Path, document: dict) -> Path:
    """`document` as YAML at `path`, owner-only from its creation (`datafolder.replace_file`: an
    older file is replaced, never half-written under a reader)."""
    return replace_file(path, yaml.safe_dump(document, sort_keys=False).encode())
