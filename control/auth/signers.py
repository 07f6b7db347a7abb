"""kube-apiserver's CertificateApproval and CertificateSigning admission plugins
(plugin/pkg/admission/certificates): who may approve or sign a CertificateSigningRequest is
decided by the signer it names, not only by the right to write the subresource.

Guarantees:
- an update or patch of `certificatesigningrequests/NAME/approval` needs the verb `approve` on
  `signers` (group certificates.k8s.io) named the request's signerName, or `DOMAIN/*` for its
  domain (upstream's IsAuthorizedForSignerName); one of `.../status` that changes
  status.certificate needs `sign` in the same way;
- the refusal is upstream's 403: `certificatesigningrequests.certificates.k8s.io "NAME" is forbidden:
  user not permitted to approve requests with signerName "SIGNER"` (or `sign`);
- the signerName is the stored request's (its spec cannot change), read through `lookup`; a request
  that is not stored is left to the handler (its 404).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from control import errors
from control.auth.rbac import Attributes, Policy, User

GROUP, RESOURCE = "certificates.k8s.io", "certificatesigningrequests"
STORE_RESOURCE = f"{GROUP}/{RESOURCE}"


def authorized_for_signer(policy: Policy, user: User, verb: str, signer: str) -> bool:
    domain = signer.split("/", 1)[0]
    return any(policy.allowed(user, Attributes(verb=verb, resource_request=True, api_group=GROUP, resource="signers",
                                               name=name))
               for name in (signer, f"{domain}/*"))


def _certificate(obj: Any) -> Any:
    status = obj.get("status") if isinstance(obj, dict) else None
    return status.get("certificate") if isinstance(status, dict) else None


async def check(user: User, attrs: Attributes, obj: Any, policy: Policy,
                stored_of: Callable[[str], Awaitable[dict[str, Any] | None]]) -> None:
    """Raise Forbidden when `user` may not approve (or sign) the request `attrs` writes."""
    if (attrs.api_group != GROUP or attrs.resource != RESOURCE or attrs.verb not in ("update", "patch")
            or attrs.subresource not in ("approval", "status") or not attrs.name):
        return
    stored = await stored_of(attrs.name)
    if stored is None:
        return
    if attrs.subresource == "status":
        written = _certificate(obj)
        if written is None or written == (_certificate(stored) or None):
            return  # the certificate is not being set: no signing
    verb = "approve" if attrs.subresource == "approval" else "sign"
    signer = str((stored.get("spec") or {}).get("signerName") or "")
    if not authorized_for_signer(policy, user, verb, signer):
        details = errors.ordered_details({"name": attrs.name, "group": GROUP, "kind": RESOURCE})
        raise errors.Forbidden(f'{RESOURCE}.{GROUP} "{attrs.name}" is forbidden: user not permitted to {verb} '
                               f'requests with signerName "{signer}"', details=details)
