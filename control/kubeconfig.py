"""The one kubeconfig shape Kube Kitchen hands out (the `kubeconfig` command's, an attendee's).

Guarantees: `kubeconfig(server, namespace, token, ca_pem)` is a kubeconfig document (a dict, for
yaml.safe_dump) with one cluster `kube-kitchen` at `server` (the CA inlined as
`certificate-authority-data` when given), one user with the bearer `token` (none when empty) and one
current context joining them in `namespace`. Pure: no files, no settings.
"""

from __future__ import annotations

import base64


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
