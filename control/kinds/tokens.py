"""The claims of a ServiceAccount token, as kube-apiserver's `pkg/serviceaccount/claims.go` writes
them, and the TokenRequest rules of `ValidateTokenRequest`.

Guarantees: pure functions (the caller passes the time and the ids); `token_claims` gives the
registered claims `iss`, `sub` (`system:serviceaccount:NS:NAME`), `aud`, `exp`, `iat`, `nbf`, a
`jti`, and the private `kubernetes.io` claim with the namespace, the ServiceAccount {name, uid} and,
when the token is bound, the Pod or Secret {name, uid} (and a bound pod's node); the lifetime is
validated as upstream (at least 10 minutes, at most 2^32 seconds).
"""

from __future__ import annotations

from typing import Any

from control.kinds.base import Cause, Obj, cause

ISSUER = "https://kubernetes.default.svc.cluster.local"
AUDIENCES = (ISSUER,)  # the hub's own audience: what a token without requested audiences is for
DEFAULT_EXPIRATION_SECONDS = 3600
MIN_EXPIRATION_SECONDS = 600
MAX_EXPIRATION_SECONDS = 1 << 32
BINDABLE_KINDS = ("Pod", "Secret", "Node")


def subject(namespace: str, name: str) -> str:
    return f"system:serviceaccount:{namespace}:{name}"


def expiration_causes(seconds: Any) -> list[Cause]:
    """`ValidateTokenRequest`'s causes for spec.expirationSeconds."""
    if not isinstance(seconds, int) or isinstance(seconds, bool):
        return [cause("spec.expirationSeconds", "Invalid value: must be an integer")]
    if seconds < MIN_EXPIRATION_SECONDS:
        return [cause("spec.expirationSeconds", f"Invalid value: {seconds}: may not specify a duration less than 10 minutes")]
    if seconds > MAX_EXPIRATION_SECONDS:
        return [cause("spec.expirationSeconds", f"Invalid value: {seconds}: may not specify a duration larger than 2^32 seconds")]
    return []


def _ref(obj: Obj) -> dict[str, str]:
    meta = obj["metadata"]
    return {"name": meta["name"], "uid": meta.get("uid", "")}


def token_claims(account: Obj, *, audiences: list[str], now: int, expiration_seconds: int, token_id: str,
                 bound: Obj | None = None, node: Obj | None = None) -> dict[str, Any]:
    """The JWT claims of a token for ServiceAccount `account`, issued at `now` (whole seconds).
    `bound`: the Pod or Secret the token is bound to; `node`: the node a bound pod runs on."""
    meta = account["metadata"]
    private: dict[str, Any] = {"namespace": meta["namespace"], "serviceaccount": _ref(account)}
    if bound is not None:
        private[bound.get("kind", "Pod").lower()] = _ref(bound)
    if node is not None:
        private["node"] = _ref(node)
    return {
        "aud": list(audiences),
        "exp": now + expiration_seconds,
        "iat": now,
        "iss": ISSUER,
        "jti": token_id,
        "kubernetes.io": private,
        "nbf": now,
        "sub": subject(meta["namespace"], meta["name"]),
    }
