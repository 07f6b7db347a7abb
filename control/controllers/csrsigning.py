"""The CSR signer for `kubernetes.io/kube-apiserver-client`: kube-controller-manager's `csrsigning`
controller (pkg/controller/certificates/signer), signing with the cluster CA.

Guarantees:
- level-triggered per CertificateSigningRequest (the queue holds names); a request is acted on only
  when it is Approved, not Failed, has no certificate yet and names this signer, so a second pass
  (or a second controller-manager) never issues twice;
- a request whose usages this signer does not allow (only `client auth`, required, with the
  optional `digital signature` and `key encipherment`) gets upstream's Failed condition (reason
  SignerValidationFailure, its message) through the status subresource, and no certificate;
- otherwise the certificate (`issue`) carries the request's subject unchanged (CN = the user,
  O = the groups, as the hub's x509 authenticator reads them) and subject alternative names, the
  requested key usages and no other extension, is not a CA, and is valid from 5 minutes ago for the
  requested `expirationSeconds` (at least 10 minutes, at most the signing duration of one year,
  never past the CA's own end): upstream's PermissiveSigningPolicy with Backdate 5m and Short 8h;
  it is written as status.certificate (PEM) through the status subresource;
- the CA is the data folder's (`control.keys`), read once when the controller is built; time is
  the injected clock's.
"""

from __future__ import annotations

import base64
import copy
import datetime
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import ExtendedKeyUsageOID

from control import errors, keys
from control.client.informer import Handlers, Informer
from control.client.resources import CERTIFICATESIGNINGREQUESTS
from control.client.runner import DONE, Result, Runner, retry
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj
from control.kinds.certificates import (APPROVED, FAILED, KUBE_APISERVER_CLIENT, certificate_bytes, has_condition,
                                        request_bytes)
from control.kinds.meta import format_time, metadata
from control.kinds.x509requests import parse_request

SIGNING_DURATION = 365 * 24 * 3600  # kube-controller-manager's --cluster-signing-duration default (8760h)
BACKDATE, SHORT, SHORTEST = 5 * 60, 8 * 3600, 10 * 60
OPTIONAL_CLIENT_USAGES = ("digital signature", "key encipherment")
KEY_USAGES = {"signing": "digital_signature", "digital signature": "digital_signature",
              "content commitment": "content_commitment", "key encipherment": "key_encipherment",
              "key agreement": "key_agreement", "data encipherment": "data_encipherment",
              "cert sign": "key_cert_sign", "crl sign": "crl_sign", "encipher only": "encipher_only",
              "decipher only": "decipher_only"}
EXTENDED_USAGES = {"any": ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE, "server auth": ExtendedKeyUsageOID.SERVER_AUTH,
                   "client auth": ExtendedKeyUsageOID.CLIENT_AUTH, "code signing": ExtendedKeyUsageOID.CODE_SIGNING,
                   "email protection": ExtendedKeyUsageOID.EMAIL_PROTECTION,
                   "s/mime": ExtendedKeyUsageOID.EMAIL_PROTECTION,
                   "timestamping": ExtendedKeyUsageOID.TIME_STAMPING, "ocsp signing": ExtendedKeyUsageOID.OCSP_SIGNING}


def client_usages_problem(usages: list[str]) -> str:
    """upstream's validAPIServerClientUsages: "" when allowed, else its message."""
    for usage in usages:
        if usage not in OPTIONAL_CLIENT_USAGES and usage != "client auth":
            return f"invalid usage for client certificate: {usage}"
    if "client auth" not in usages:
        return "missing required usage for client certificate: client auth"
    return ""


def duration(expiration_seconds: Any, longest: int = SIGNING_DURATION) -> int:
    """upstream's signer.duration: the requested seconds within [10 minutes, the signing duration]."""
    if not isinstance(expiration_seconds, int):
        return longest
    return min(max(expiration_seconds, SHORTEST), longest)


def validity(now: float, ttl: int, ca_end: float) -> tuple[float, float]:
    """(notBefore, notAfter): backdated 5 minutes; a short certificate (up to 8 h) is not made
    longer by that, a long one is; never past the CA's end."""
    start = now - BACKDATE
    end = start + ttl if ttl <= SHORT else now + ttl
    return start, min(end, ca_end)


def _key_usage(usages: list[str]) -> x509.KeyUsage | None:
    bits = {KEY_USAGES[u] for u in usages if u in KEY_USAGES}
    if not bits:
        return None
    names = ("digital_signature", "content_commitment", "key_encipherment", "data_encipherment", "key_agreement",
             "key_cert_sign", "crl_sign", "encipher_only", "decipher_only")
    flags = {name: name in bits for name in names}
    if not flags["key_agreement"]:
        flags["encipher_only"] = flags["decipher_only"] = False  # meaningless without key agreement (RFC 5280)
    return x509.KeyUsage(**flags)


def issue(request_pem: bytes, usages: list[str], ttl: int, ca_pem: bytes, ca_key: Any, now: float) -> bytes:
    """The certificate (PEM) the CA issues for a request (see the module's guarantees)."""
    request = parse_request(request_pem)
    ca = x509.load_pem_x509_certificate(ca_pem)
    start, end = validity(now, ttl, ca.not_valid_after_utc.timestamp())
    utc = datetime.timezone.utc
    builder = (x509.CertificateBuilder().subject_name(request.subject).issuer_name(ca.subject)
               .public_key(request.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(datetime.datetime.fromtimestamp(start, utc))
               .not_valid_after(datetime.datetime.fromtimestamp(end, utc))
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True))
    key_usage = _key_usage(usages)
    if key_usage is not None:
        builder = builder.add_extension(key_usage, critical=True)
    extended = sorted({EXTENDED_USAGES[u] for u in usages if u in EXTENDED_USAGES}, key=lambda oid: oid.dotted_string)
    if extended:
        builder = builder.add_extension(x509.ExtendedKeyUsage(extended), critical=False)
    try:
        names = request.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        builder = builder.add_extension(x509.SubjectAlternativeName(list(names)), critical=False)
    except x509.ExtensionNotFound:
        pass
    try:
        ski = ca.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
        builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski),
                                        critical=False)
    except x509.ExtensionNotFound:
        pass
    return builder.sign(ca_key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


class CSRSigningController:
    def __init__(self, client: Any, requests: Informer, *, clock: Clock, ca_pem: bytes, ca_key: Any):
        self.client, self.requests, self.clock = client, requests, clock
        self.ca_pem, self.ca_key = ca_pem, ca_key
        self.queue = WorkQueue(clock=clock)
        requests.add_handlers(Handlers(on_add=self._changed, on_update=lambda old, new: self._changed(new)))

    def _changed(self, csr: Obj) -> None:
        self.queue.add(metadata(csr)["name"])

    def wanted(self, csr: Obj) -> bool:
        spec = csr.get("spec") or {}
        return (has_condition(csr, APPROVED) and not has_condition(csr, FAILED) and not certificate_bytes(csr)
                and spec.get("signerName") == KUBE_APISERVER_CLIENT)

    async def reconcile(self, name: str) -> Result:
        csr = self.requests.cache.get(name)
        if csr is None or not self.wanted(csr):
            return DONE
        spec = csr.get("spec") or {}
        usages = [str(u) for u in spec.get("usages") or []]
        body = copy.deepcopy(csr)  # cached objects are shared: change a copy
        body.update(apiVersion="certificates.k8s.io/v1", kind="CertificateSigningRequest")
        status = body.setdefault("status", {})
        problem = client_usages_problem(usages)
        if problem:
            status.setdefault("conditions", []).append({
                "type": FAILED, "status": "True", "reason": "SignerValidationFailure", "message": problem,
                "lastUpdateTime": format_time(self.clock.now())})
        else:
            try:
                pem = issue(request_bytes(csr) or b"", usages, duration(spec.get("expirationSeconds")), self.ca_pem,
                            self.ca_key, self.clock.now())
            except ValueError as bad:  # the hub validated the request: only a broken store gets here
                return retry(f"cannot sign {name}: {bad}")
            status["certificate"] = base64.b64encode(pem).decode()
        try:
            await self.client.replace_status(CERTIFICATESIGNINGREQUESTS, body)
        except errors.NotFound:
            return DONE
        except errors.Conflict:
            return retry(f"{name} changed meanwhile")
        return DONE


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    requests = informers.get(CERTIFICATESIGNINGREQUESTS)
    folder = keys.default_data_dir()
    controller = CSRSigningController(client, requests, clock=clock, ca_pem=keys.ca_certificate(folder),
                                      ca_key=keys.ca_key(folder))
    return Runner("csrsigning", controller.reconcile, controller.queue, [requests], workers=1)
