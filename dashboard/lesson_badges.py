"""The badge lesson's buttons ("A new cook's badge": a user made the CKA way, through a
CertificateSigningRequest); each does what the kubectl command beside it does.

Guarantees:
- `approve-csr` is `kubectl certificate approve NAME`: the request is read, an Approved condition
  with kubectl's reason and message added, and the object PUT to its `approval` subresource with
  the resourceVersion read (a request approved or denied already is answered as kubectl does);
- `fetch-badge` is `kubectl get csr NAME -o jsonpath={.status.certificate} | base64 -d`: the issued
  certificate's subject, issuer and end, or why there is none yet (pending, denied, failed);
- `as-badge` is `kubectl get pods --user=NAME` with the badge as credentials: the issued
  certificate and the lesson's key (a file under lessons/manifests/) are presented as a TLS client
  certificate on the hub's HTTPS port, and the LIST of pods in the form's namespace is sent with no
  token, so the hub's x509 authenticator alone says who asks; a refusal (403) is the result,
  shown as one (`Refused`), and so is a badge that is not issued yet (404 for the request's absence).
"""

from __future__ import annotations

import base64
import ssl
import tempfile
from pathlib import Path
from typing import Any, Awaitable, Callable

import httpx
from cryptography import x509
from cryptography.x509.oid import NameOID
from django.conf import settings

from control import errors
from control.auth.serving import secure_url_for
from control.client.http import HubClient
from control.client.resources import CERTIFICATESIGNINGREQUESTS, PODS
from dashboard.actions import ActionError
from dashboard.hub import cluster_ca
from dashboard.lesson_buttons import Refused, _name
from dashboard.lessons import LESSONS_DIR, MANIFESTS

APPROVE_REASON, APPROVE_MESSAGE = "KubectlApprove", "This CSR was approved by kubectl certificate approve."


def _types(csr: dict[str, Any]) -> set[str]:
    return {c.get("type") for c in (csr.get("status") or {}).get("conditions") or []}


async def approve_csr(client: HubClient, form: dict[str, str]) -> str:
    name = _name(form)
    csr = await client.get(CERTIFICATESIGNINGREQUESTS, name)
    held = _types(csr)
    if "Denied" in held:
        raise ActionError(f'certificate signing request "{name}" is already Denied')
    if "Approved" not in held:
        csr.setdefault("status", {}).setdefault("conditions", []).append(
            {"type": "Approved", "status": "True", "reason": APPROVE_REASON, "message": APPROVE_MESSAGE})
        await client.replace(CERTIFICATESIGNINGREQUESTS, csr, subresource="approval")
    return f"certificatesigningrequest.certificates.k8s.io/{name} approved"


async def _certificate(client: HubClient, name: str) -> x509.Certificate:
    csr = await client.get(CERTIFICATESIGNINGREQUESTS, name)
    issued = (csr.get("status") or {}).get("certificate")
    if not issued:
        held = _types(csr) & {"Denied", "Failed"}
        state = " and ".join(sorted(held)) if held else "not issued yet (approved? the signer runs in the controller-manager)"
        raise ActionError(f"no badge for {name}: the request is {state}")
    return x509.load_pem_x509_certificate(base64.b64decode(issued))


async def fetch_badge(client: HubClient, form: dict[str, str]) -> str:
    certificate = await _certificate(client, _name(form))
    subject = certificate.subject.rfc4514_string()
    issuer = ", ".join(str(a.value) for a in certificate.issuer.get_attributes_for_oid(NameOID.COMMON_NAME))
    return f"badge: {subject}, issued by {issuer}, valid until {certificate.not_valid_after_utc:%Y-%m-%d %H:%M} UTC"


def _key_file(form: dict[str, str]) -> Path:
    name = (form.get("key") or "").strip()
    path = (LESSONS_DIR / MANIFESTS / name).resolve()
    if not name or "/" in name or not path.is_file() or path.parent != (LESSONS_DIR / MANIFESTS).resolve():
        raise ActionError(f"key: {name!r} is not a key file under lessons/manifests/")
    return path


async def as_badge(client: HubClient, form: dict[str, str]) -> str:
    name, namespace, key = _name(form), _name(form, "namespace"), _key_file(form)
    from cryptography.hazmat.primitives.serialization import Encoding

    certificate = await _certificate(client, name)
    secure = secure_url_for(settings.DATA_DIR, client.server) or \
        (client.server if client.server.startswith("https:") else "")
    if not secure:
        raise ActionError("the hub serves no HTTPS here (runhub --secure-addr; runcluster does): "
                          "a client certificate needs TLS")
    context = ssl.create_default_context(cadata=(cluster_ca(secure) or b"").decode())
    with tempfile.NamedTemporaryFile(suffix=".crt") as held:  # ssl loads a client certificate from a file
        held.write(certificate.public_bytes(Encoding.PEM))
        held.flush()
        context.load_cert_chain(held.name, str(key))
    headers = {"User-Agent": client.agent, "Accept": "application/json"}  # no token: the badge alone
    async with httpx.AsyncClient(base_url=secure, headers=headers, verify=context, timeout=client.timeout) as session:
        answer = await session.get(PODS.path(namespace))
    if answer.status_code >= 300:
        refused = errors.from_status(answer.content, answer.status_code)
        return Refused(f"{refused.code} {refused.reason}: {refused.message}", refused.code)
    count = len(answer.json().get("items") or [])
    return f"allowed: {count} pod(s) listed with the badge of {name}"


BUTTONS: dict[str, Callable[[HubClient, dict[str, str]], Awaitable[str]]] = {
    "approve-csr": approve_csr, "fetch-badge": fetch_badge, "as-badge": as_badge,
}
