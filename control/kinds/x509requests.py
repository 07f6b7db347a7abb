"""PEM and PKCS#10 as the certificates API reads them (Go's encoding/pem and crypto/x509).

Guarantees:
- `pem_blocks(data)` finds the PEM blocks in `data` as Go's `pem.Decode` does, block after block:
  text before, between and after them is skipped; a block whose body is not base64 ends the search
  (Go then returns nil); each block keeps its type, whether it has headers and its DER bytes;
- `request_problem(pem)` is "" for a PEM `CERTIFICATE REQUEST` (the first block) whose PKCS#10
  parses and whose signature verifies, else the error upstream's `validateCSR` reports: "PEM block
  type must be CERTIFICATE REQUEST", a parse error, or the signature check's;
- `certificate_problem(pem)` is upstream's `validateCertificate` (status.certificate): "" for
  empty content or one or more CERTIFICATE blocks without headers that parse, else its message;
- `parse_request(pem)` returns the cryptography CSR of a request that `request_problem` accepts.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

_BEGIN = re.compile(rb"-----BEGIN ([^\r\n-]*)-----\r?\n")
REQUEST_TYPE = "CERTIFICATE REQUEST"
CERTIFICATE_TYPE = "CERTIFICATE"
NOT_A_REQUEST = "PEM block type must be CERTIFICATE REQUEST"


@dataclass(frozen=True)
class Block:
    type: str
    has_headers: bool
    der: bytes


def _block_at(data: bytes, start: int) -> tuple[Block, int] | None:
    """The block whose BEGIN line matched at `start` and where the text after it starts, or None."""
    begin = _BEGIN.match(data, start)
    assert begin is not None
    kind = begin.group(1).decode("latin-1")
    end_line = b"-----END " + begin.group(1) + b"-----"
    end = data.find(end_line, begin.end())
    if end < 0:
        return None
    lines = data[begin.end():end].replace(b"\r", b"").split(b"\n")
    headers = False
    while lines and b":" in lines[0]:  # RFC 1421 headers ("Proc-Type: ..."), then a blank line
        headers = True
        lines.pop(0)
    if headers and lines and not lines[0].strip():
        lines.pop(0)
    try:
        der = base64.b64decode(b"".join(line.strip() for line in lines), validate=True)
    except (binascii.Error, ValueError):
        return None
    return Block(kind, headers, der), end + len(end_line)


def pem_blocks(data: bytes) -> list[Block]:
    blocks: list[Block] = []
    position = 0
    while True:
        begin = _BEGIN.search(data, position)
        if begin is None:
            return blocks
        found = _block_at(data, begin.start())
        if found is None:
            return blocks
        block, position = found
        blocks.append(block)


def _signature_problem(csr: x509.CertificateSigningRequest) -> str:
    try:
        key = csr.public_key()
        if csr.is_signature_valid:
            return ""
    except (UnsupportedAlgorithm, ValueError):
        return "x509: cannot verify signature: algorithm unimplemented"
    except InvalidSignature:
        pass
    if isinstance(key, rsa.RSAPublicKey):
        return "crypto/rsa: verification error"
    if isinstance(key, ec.EllipticCurvePublicKey):
        return "x509: ECDSA verification failure"
    if isinstance(key, ed25519.Ed25519PublicKey):
        return "x509: Ed25519 verification failure"
    return "x509: cannot verify signature: algorithm unimplemented"


def parse_request(pem: bytes) -> x509.CertificateSigningRequest:
    """The request's PKCS#10; ValueError (with upstream's message) when it is not one."""
    blocks = pem_blocks(pem)
    if not blocks or blocks[0].type != REQUEST_TYPE:
        raise ValueError(NOT_A_REQUEST)
    try:
        return x509.load_der_x509_csr(blocks[0].der)
    except ValueError:
        raise ValueError("asn1: structure error: the certificate request is malformed") from None


def request_problem(pem: bytes) -> str:
    try:
        csr = parse_request(pem)
    except ValueError as bad:
        return str(bad)
    return _signature_problem(csr)


def certificate_problem(pem: bytes) -> str:
    if not pem:
        return ""
    blocks = pem_blocks(pem)
    for block in blocks:
        if block.type != CERTIFICATE_TYPE:
            return f'only CERTIFICATE PEM blocks are allowed, found "{block.type}"'
        if block.has_headers:
            return "no PEM block headers are permitted"
        try:
            x509.load_der_x509_certificate(block.der)
        except ValueError:
            return "x509: malformed certificate"
    if not blocks:
        return "must contain at least one CERTIFICATE PEM block"
    return ""
