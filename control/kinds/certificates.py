"""certificates.k8s.io/v1 CertificateSigningRequest, as kube-apiserver serves it
(pkg/apis/certificates/validation and pkg/registry/certificates/certificates/strategy.go).

Guarantees:
- On create the requester is recorded (spec.username, uid, groups, extra: whatever the client
  wrote there is replaced) and the status is emptied: nobody creates a pre-approved request.
- Validation is upstream's, with its messages: spec.request must be a PEM `CERTIFICATE REQUEST`
  whose PKCS#10 parses and whose signature verifies; usages are required, known and not
  repeated; signerName is a qualified name `domain.tld/path` (ValidateSignerName) and not the
  legacy-unknown signer; expirationSeconds is at least 600; conditions have a type, Approved,
  Denied and Failed only status True, no type twice, Approved and Denied never both;
  status.certificate holds only CERTIFICATE PEM blocks. A request that a stored object already
  breaks is tolerated on update, as upstream's compatibility options do.
- Writes are split by subresource as upstream's three strategies: the object itself changes only
  metadata (spec and status are kept); `approval` changes only the conditions (Approved/Denied may
  be added there and nowhere else); `status` changes conditions other than Approved/Denied (those
  are kept as stored) and may set status.certificate once. No write removes an Approved, Denied
  or Failed condition; conditions get lastUpdateTime/lastTransitionTime when they have none.
- A kube-apiserver-client request for the group system:masters is refused (403), as upstream's
  CertificateSubjectRestriction admission refuses it.
- `kubectl get csr` shows NAME, AGE, SIGNERNAME, REQUESTOR, REQUESTEDDURATION and CONDITION
  (`Pending`, `Approved`, `Denied`, then `,Failed` and `,Issued`), as upstream's printer.
"""

from __future__ import annotations

import copy
from typing import Any

from cryptography.x509.oid import NameOID

from control.errors import go_value
from control.kinds.base import (DNS1123_LABEL, DNS1123_SUBDOMAIN, NAME_COLUMN, Cause, Column, Kind, Obj, cause,
                                field_value, required)
from control.kinds.apiservices import path_segment_name
from control.kinds.meta import age, human_duration
from control.kinds.secrets import bad_base64_at, decoded
from control.kinds.x509requests import certificate_problem, parse_request, request_problem

GROUP, VERSION = "certificates.k8s.io", "v1"
KUBE_APISERVER_CLIENT = "kubernetes.io/kube-apiserver-client"
KUBE_APISERVER_CLIENT_KUBELET = "kubernetes.io/kube-apiserver-client-kubelet"
KUBELET_SERVING = "kubernetes.io/kubelet-serving"
LEGACY_UNKNOWN = "kubernetes.io/legacy-unknown"
MASTERS = "system:masters"
APPROVED, DENIED, FAILED = "Approved", "Denied", "Failed"
TRUE_ONLY = (APPROVED, DENIED, FAILED)
STATUS_VALUES = ("False", "True", "Unknown")
# every KeyUsage upstream knows, sorted as its NotSupported message lists them
USAGES = sorted(("signing", "digital signature", "content commitment", "key encipherment", "key agreement",
                 "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
                 "server auth", "client auth", "code signing", "email protection", "s/mime", "ipsec end system",
                 "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc"))
SUBDOMAIN_TEXT = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                  "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_TEXT = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
              "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
              "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


def _spec(csr: Obj) -> Obj:
    spec = csr.get("spec")
    return spec if isinstance(spec, dict) else {}


def _status(csr: Obj) -> Obj:
    status = csr.get("status")
    return status if isinstance(status, dict) else {}


def conditions(csr: Obj) -> list[Obj]:
    return [c for c in _status(csr).get("conditions") or [] if isinstance(c, dict)]


def has_condition(csr: Obj, kind: str) -> bool:
    """upstream's HasTrueCondition (Approved, Denied and Failed can only be True)."""
    return any(c.get("type") == kind and c.get("status", "True") == "True" for c in conditions(csr))


def request_bytes(csr: Obj) -> bytes | None:
    """spec.request as bytes (JSON carries it base64), None when it is not base64."""
    return decoded(_spec(csr).get("request") or "")


def certificate_bytes(csr: Obj) -> bytes | None:
    return decoded(_status(csr).get("certificate") or "")


def go_bytes(data: bytes) -> str:
    """A []byte as Go's %#v prints it, as field errors show a bad spec.request."""
    return "[]byte{" + ", ".join(f"0x{b:x}" for b in data) + "}"


# --- signer names ---------------------------------------------------------------------------------

def signer_name_causes(signer: Any, path: str = "spec.signerName") -> list[Cause]:
    """upstream's ValidateSignerName: `domain.tld/path`, each part made of DNS names."""
    if not signer:
        return [required(path)]
    signer = str(signer)
    segments = signer.split("/")
    if len(segments) != 2:
        return [cause(path, f"Invalid value: {go_value(signer)}: must be a fully qualified domain and path of "
                      "the form 'example.com/signer-name'")]
    domain, rest = segments
    out: list[Cause] = []
    if len(domain) > 253:
        out.append(cause(path, "Too long: must have at most 253 bytes", "FieldValueTooLong"))
    labels = domain.split(".")
    for label in labels:
        problems = ([] if len(label) <= 63 else ["must be no more than 63 characters"]) + \
            ([] if DNS1123_LABEL.match(label) else [LABEL_TEXT])
        for problem in problems:
            out.append(cause(path, f'Invalid value: {go_value(domain)}: validating label "{label}": {problem}'))
        if problems:
            break
    if len(labels) < 2:
        out.append(cause(path, f"Invalid value: {go_value(domain)}: should be a domain with at least two segments "
                         "separated by dots"))
    for label in rest.split("."):
        problems = ([] if len(label) <= 253 else ["must be no more than 253 characters"]) + \
            ([] if DNS1123_SUBDOMAIN.match(label) else [SUBDOMAIN_TEXT])
        for problem in problems:
            out.append(cause(path, f'Invalid value: {go_value(rest)}: validating label "{label}": {problem}'))
        if problems:
            break
    if len(signer) > 253 + 253 + 63 + 1 + 1:
        out.append(cause(path, "Too long: must have at most 571 bytes", "FieldValueTooLong"))
    return out


# --- validation -----------------------------------------------------------------------------------

def _tolerated(old: Obj | None) -> dict[str, bool]:
    """upstream's getValidationOptions: what an already stored object may keep breaking."""
    if old is None:
        return dict.fromkeys(("both", "legacy", "duplicate_types", "empty_type", "unknown_usages",
                              "duplicate_usages"), False)
    types = [c.get("type") for c in conditions(old)]
    usages = _spec(old).get("usages") or []
    return {"both": APPROVED in types and DENIED in types,
            "legacy": _spec(old).get("signerName") == LEGACY_UNKNOWN,
            "duplicate_types": len(types) != len(set(types)), "empty_type": "" in types or None in types,
            "unknown_usages": any(u not in USAGES for u in usages),
            "duplicate_usages": len(usages) != len(set(map(str, usages)))}


def _condition_causes(csr: Obj, allow: dict[str, bool]) -> list[Cause]:
    out: list[Cause] = []
    seen: set[Any] = set()
    approved = denied = False
    for i, condition in enumerate(conditions(csr)):
        path = f"status.conditions[{i}]"
        kind, status = condition.get("type"), condition.get("status")
        if not kind and not allow["empty_type"]:
            out.append(required(f"{path}.type"))
        allowed = ("True",) if kind in TRUE_ONLY else STATUS_VALUES
        if not status:
            out.append(required(f"{path}.status"))
        elif status not in allowed:
            values = ", ".join(f'"{v}"' for v in allowed)
            out.append(cause(f"{path}.status", f"Unsupported value: {go_value(status)}: supported values: {values}",
                             "FieldValueNotSupported"))
        if not allow["both"] and kind in (APPROVED, DENIED):
            approved, denied = approved or kind == APPROVED, denied or kind == DENIED
            if approved and denied:
                out.append(cause(f"{path}.type", f"Invalid value: {go_value(kind)}: Approved and Denied conditions "
                                 "are mutually exclusive"))
        if not allow["duplicate_types"]:
            if kind in seen:
                out.append(cause(f"{path}.type", f"Duplicate value: {go_value(kind)}", "FieldValueDuplicate"))
            seen.add(kind)
    return out


def _csr_causes(csr: Obj, old: Obj | None) -> list[Cause]:
    allow = _tolerated(old)
    spec = _spec(csr)
    out: list[Cause] = []
    request = spec.get("request")
    raw = request_bytes(csr) if request else b""
    if raw is None:
        out.append(cause("spec.request", f"Invalid value: {go_value(request)}: illegal base64 data at input byte "
                         f"{bad_base64_at(request)}"))
    else:
        problem = request_problem(raw)
        if problem:
            out.append(cause("spec.request", f"Invalid value: {go_bytes(raw)}: {problem}"))
    usages = spec.get("usages") or []
    if not usages:
        out.append(required("spec.usages"))
    for i, usage in enumerate(usages):
        if not allow["unknown_usages"] and usage not in USAGES:
            values = ", ".join(f'"{u}"' for u in USAGES)
            out.append(cause(f"spec.usages[{i}]", f"Unsupported value: {go_value(usage)}: supported values: {values}",
                             "FieldValueNotSupported"))
    seen: set[str] = set()
    for i, usage in enumerate(usages):
        if not allow["duplicate_usages"] and str(usage) in seen:
            out.append(cause(f"spec.usages[{i}]", f"Duplicate value: {go_value(usage)}", "FieldValueDuplicate"))
        seen.add(str(usage))
    signer = spec.get("signerName")
    if signer == LEGACY_UNKNOWN and not allow["legacy"]:
        out.append(cause("spec.signerName", f"Invalid value: {go_value(signer)}: the legacy signerName is not "
                         "allowed via this API version"))
    elif signer != LEGACY_UNKNOWN:
        out += signer_name_causes(signer)
    seconds = spec.get("expirationSeconds")
    if isinstance(seconds, int) and seconds < 600:
        out.append(cause("spec.expirationSeconds", f"Invalid value: {seconds}: may not specify a duration less "
                         "than 600 seconds (10 minutes)"))
    out += _condition_causes(csr, allow)
    certificate = _status(csr).get("certificate") or ""
    arbitrary = old is not None and (certificate == (_status(old).get("certificate") or "") or
                                     bool(certificate_problem(certificate_bytes(old) or b"")))
    if certificate and not arbitrary:
        content = certificate_bytes(csr)
        problem = certificate_problem(content) if content is not None else "illegal base64 data"
        if problem:
            out.append(cause("status.certificate", f'Invalid value: "<certificate data>": {problem}'))
    return out


def validate_csr(csr: Obj) -> list[Cause]:
    return _csr_causes(csr, None)


def _forbidden(message: str) -> Cause:
    return cause("status.conditions", f"Forbidden: {message}", "FieldValueForbidden")


def update_causes(new: Obj, old: Obj, *, approval: bool = False, certificate: bool = False) -> list[Cause]:
    """upstream's validateCertificateSigningRequestUpdate, with what the subresource may set."""
    out = _csr_causes(new, old)
    for kind in (APPROVED, DENIED, FAILED):
        if len([c for c in conditions(new) if c.get("type") == kind]) < \
                len([c for c in conditions(old) if c.get("type") == kind]):
            out.append(_forbidden(f'updates may not remove a condition of type "{kind}"'))
    if not approval:
        for kind in (APPROVED, DENIED):
            before = [c for c in conditions(old) if c.get("type") == kind]
            after = [c for c in conditions(new) if c.get("type") == kind]
            if len(after) > len(before):
                out.append(_forbidden(f'updates may not add a condition of type "{kind}"'))
            elif len(after) == len(before) and after != before:
                out.append(_forbidden(f'updates may not modify a condition of type "{kind}"'))
    new_cert, old_cert = _status(new).get("certificate") or "", _status(old).get("certificate") or ""
    if new_cert != old_cert:
        message = ("updates may not set certificate content" if not certificate
                   else "updates may not modify existing certificate content" if old_cert else "")
        if message:
            out.append(cause("status.certificate", f"Forbidden: {message}", "FieldValueForbidden"))
    return out


# --- the three write strategies ---------------------------------------------------------------------

def csr_defaults(csr: Obj) -> None:
    """v1 SetDefaults_CertificateSigningRequestCondition: a condition's status defaults to True."""
    for condition in conditions(csr):
        if not condition.get("status"):
            condition["status"] = "True"


def csr_prepare_for_create(csr: Obj) -> None:
    spec = csr.get("spec")
    if isinstance(spec, dict):
        for key in ("username", "uid", "groups", "extra"):
            spec.pop(key, None)
    csr["status"] = {}


def record_requester(csr: Obj, user: dict[str, Any]) -> None:
    spec = csr.setdefault("spec", {})
    if not isinstance(spec, dict):
        return  # the schema check refuses it first
    spec["username"] = user.get("username", "")
    for key in ("uid", "groups", "extra"):
        if user.get(key):
            spec[key] = copy.deepcopy(user[key])


def csr_prepare_for_update(new: Obj, old: Obj) -> None:
    new["spec"] = copy.deepcopy(old.get("spec"))
    new["status"] = copy.deepcopy(old.get("status") or {})


def _stamp(new: Obj, old: Obj, now: str) -> None:
    """upstream's populateConditionTimestamps."""
    for condition in conditions(new):
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = now
        if not condition.get("lastTransitionTime"):
            condition["lastTransitionTime"] = next(
                (c["lastTransitionTime"] for c in conditions(old) if c.get("type") == condition.get("type")
                 and c.get("status") == condition.get("status") and c.get("lastTransitionTime")), now)


def _keep_instances(new: Obj, old: Obj, kind: str) -> None:
    """upstream's preserveConditionInstances: the stored conditions of `kind` stand, unless their
    number changed (then validation reports it)."""
    before = conditions(old)
    old_at = [i for i, c in enumerate(before) if c.get("type") == kind]
    listed = _status(new).get("conditions") or []  # the written list itself (already only objects)
    new_at = [i for i, c in enumerate(listed) if c.get("type") == kind]
    if len(old_at) == len(new_at):
        for i, j in zip(new_at, old_at):
            listed[i] = copy.deepcopy(before[j])


def _written_status(written: Obj) -> Obj:
    status = copy.deepcopy(_status(written))
    status["conditions"] = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    if not status["conditions"]:
        status.pop("conditions")
    return status


def update_approval(stored: Obj, written: Obj, now: str) -> tuple[Obj, list[Cause]]:
    old = copy.deepcopy(stored)
    status = _written_status(written)
    certificate = _status(old).get("certificate")
    status.pop("certificate", None)
    if certificate:
        status["certificate"] = certificate
    stored["status"] = status
    csr_defaults(stored)
    _keep_instances(stored, old, FAILED)
    _stamp(stored, old, now)
    return stored, update_causes(stored, old, approval=True)


def update_status(stored: Obj, written: Obj, now: str) -> tuple[Obj, list[Cause]]:
    old = copy.deepcopy(stored)
    stored["status"] = _written_status(written)
    csr_defaults(stored)
    for kind in (APPROVED, DENIED):
        _keep_instances(stored, old, kind)
    _stamp(stored, old, now)
    return stored, update_causes(stored, old, certificate=True)


def restrict_subject(csr: Obj, lookup: Any) -> str:
    """upstream's CertificateSubjectRestriction admission: no kube-apiserver-client certificate for
    system:masters (that group passes every authorization check). "" lets the request through;
    a request that does not parse is left to validation (its 422)."""
    if _spec(csr).get("signerName") != KUBE_APISERVER_CLIENT:
        return ""
    try:
        request = parse_request(request_bytes(csr) or b"")
    except ValueError:
        return ""
    organizations = [str(a.value) for a in request.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    if MASTERS in organizations:
        return f"use of {KUBE_APISERVER_CLIENT} signer with {MASTERS} group is not allowed"
    return ""


def csr_validate_update(new: Obj, old: Obj) -> list[Cause]:
    return update_causes(new, old)


# --- printing -----------------------------------------------------------------------------------------

def condition_text(csr: Obj) -> str:
    """upstream's extractCSRStatus."""
    types = {c.get("type") for c in conditions(csr)}
    text = DENIED if DENIED in types else APPROVED if APPROVED in types else "Pending"
    if FAILED in types:
        text += ",Failed"
    if _status(csr).get("certificate"):
        text += ",Issued"
    return text


def csr_cells(csr: Obj, now: float) -> list[Any]:
    spec = _spec(csr)
    seconds = spec.get("expirationSeconds")
    duration = human_duration(seconds) if isinstance(seconds, int) else "<none>"
    return [csr["metadata"]["name"], age(csr, now), spec.get("signerName") or "", spec.get("username") or "",
            duration, condition_text(csr)]


CERTIFICATESIGNINGREQUEST = Kind(
    group=GROUP, version=VERSION, kind="CertificateSigningRequest", plural="certificatesigningrequests",
    namespaced=False, definition="io.k8s.api.certificates.v1.CertificateSigningRequest", short_names=("csr",),
    name_rule=path_segment_name,  # "We don't care what you call your certificate requests." (upstream)
    subresources=("status", "approval"), defaults=csr_defaults, validate=validate_csr,
    validate_update=csr_validate_update, prepare_for_create=csr_prepare_for_create,
    prepare_for_update=csr_prepare_for_update, requester=record_requester, admit=restrict_subject,
    subresource_updates={"approval": update_approval, "status": update_status},
    columns=(NAME_COLUMN, Column("Age", description="CreationTimestamp is a timestamp representing the server time "
                                 "when this object was created."),
             Column("SignerName"), Column("Requestor"), Column("RequestedDuration"), Column("Condition")),
    cells=csr_cells,
    field_getters={"spec.signerName": lambda o: field_value(o, "spec", "signerName")},
)
