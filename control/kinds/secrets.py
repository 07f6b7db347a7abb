"""The Secret kind (core/v1): its strategy, validation by type, printing and field selectors.

Guarantees (as kube-apiserver's secret strategy and `ValidateSecret`):
- `stringData` is merged into `data` (base64 of its UTF-8 text, winning over `data` on the same key)
  on every write and never stored; `type` defaults to Opaque.
- every `data` value is base64 and every key a valid config key; the values total at most 1 MiB;
- the well-known types require their keys: kubernetes.io/tls `tls.crt` and `tls.key`,
  kubernetes.io/dockerconfigjson `.dockerconfigjson` (valid JSON), kubernetes.io/dockercfg
  `.dockercfg` (valid JSON), kubernetes.io/basic-auth `username` or `password`, kubernetes.io/ssh-auth
  `ssh-privatekey`, kubernetes.io/service-account-token the `kubernetes.io/service-account.name`
  annotation; any other type is free-form;
- on update `type` is immutable, and an `immutable: true` Secret keeps its data and stays immutable;
- a value is never echoed in an error (Kubernetes prints `<secret contents redacted>`).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from control.errors import go_value
from control.kinds.base import AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause, field_value, required
from control.kinds.meta import age

OPAQUE = "Opaque"
TLS = "kubernetes.io/tls"
DOCKER_CONFIG_JSON = "kubernetes.io/dockerconfigjson"
DOCKER_CFG = "kubernetes.io/dockercfg"
BASIC_AUTH = "kubernetes.io/basic-auth"
SSH_AUTH = "kubernetes.io/ssh-auth"
SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"
SERVICE_ACCOUNT_NAME = "kubernetes.io/service-account.name"

MAX_SECRET_BYTES = 1024 * 1024
REDACTED = "<secret contents redacted>"
CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
BASE64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")


def secret_defaults(secret: Obj) -> None:
    """Type Opaque when unset; `stringData` folded into `data` (write-only, as the v1 conversion)."""
    if not secret.get("type"):
        secret["type"] = OPAQUE
    given = secret.pop("stringData", None)
    if isinstance(given, dict) and given:
        data = secret.get("data")
        merged = dict(data) if isinstance(data, dict) else {}
        for key, value in given.items():
            text = value if isinstance(value, str) else json.dumps(value)
            merged[key] = base64.b64encode(text.encode()).decode()
        secret["data"] = merged


def decoded(value: Any) -> bytes | None:
    """The bytes of a base64 value as Go's decoder takes them (standard alphabet, padded), or None."""
    if not isinstance(value, str) or len(value) % 4 or not BASE64.match(value):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def bad_base64_at(value: Any) -> int:
    """Where Go's decoder stops on a value `decoded` refuses: the first byte outside the alphabet
    (or padding before the end), else the start of the unfinished last quantum."""
    text = value if isinstance(value, str) else ""
    body = text.rstrip("=")
    for i, ch in enumerate(body):
        if not (ch.isascii() and (ch.isalnum() or ch in "+/")):
            return i
    return len(text) - len(text) % 4 if len(text) % 4 else max(len(body) - 1, 0)


_GO_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "bool"}


def go_json_error(raw: bytes) -> str:
    """What Go's encoding/json says about text that is not a JSON object (no Python wording)."""
    try:
        parsed = json.loads(raw)
    except ValueError as bad:
        position = getattr(bad, "pos", 0)
        text = raw.decode("utf-8", "replace")
        if position >= len(text.rstrip()):
            return "unexpected end of JSON input"
        return f"invalid character '{text[position]}' looking for beginning of value"
    if parsed is None or isinstance(parsed, dict):
        return ""
    return f"json: cannot unmarshal {_GO_TYPES.get(type(parsed), 'value')} into Go value of type map[string]interface {{}}"


def _json_causes(path: str, raw: bytes | None) -> list[Cause]:
    problem = go_json_error(raw or b"")
    return [cause(path, f'Invalid value: {go_value(REDACTED)}: {problem}')] if problem else []


def _type_causes(secret: Obj, data: dict[str, Any], values: dict[str, bytes | None]) -> list[Cause]:
    kind = secret.get("type")
    if kind == TLS:
        return [required(f"data[{key}]") for key in ("tls.crt", "tls.key") if key not in data]
    if kind in (DOCKER_CONFIG_JSON, DOCKER_CFG):
        key = ".dockerconfigjson" if kind == DOCKER_CONFIG_JSON else ".dockercfg"
        if key not in data:
            return [required(f"data[{key}]")]
        return _json_causes(f"data[{key}]", values.get(key))
    if kind == BASIC_AUTH and "username" not in data and "password" not in data:
        return [required("data[username]"), required("data[password]")]
    if kind == SSH_AUTH and not values.get("ssh-privatekey"):
        return [required("data[ssh-privatekey]")]
    if kind == SERVICE_ACCOUNT_TOKEN:
        annotations = secret["metadata"].get("annotations") or {}
        if not isinstance(annotations, dict) or not annotations.get(SERVICE_ACCOUNT_NAME):
            return [required(f"metadata.annotations[{SERVICE_ACCOUNT_NAME}]")]
    return []


def validate_secret(secret: Obj) -> list[Cause]:
    data = secret.get("data")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return [cause("data", "Invalid value: must be a map of base64 strings")]
    out: list[Cause] = []
    values: dict[str, bytes | None] = {}
    for key, value in data.items():
        if not CONFIG_KEY.match(key) or len(key) > 253:
            out.append(cause(f"data[{key}]", f'Invalid value: {go_value(key)}: a valid config key must consist of '
                             "alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or "
                             "'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"))
        values[key] = decoded(value)
        if values[key] is None:
            out.append(cause(f"data[{key}]", f'Invalid value: {go_value(REDACTED)}: illegal base64 data at input '
                             f"byte {bad_base64_at(value)}"))
    if sum(len(v or b"") for v in values.values()) > MAX_SECRET_BYTES:
        out.append(cause("data", f"Too long: must have at most {MAX_SECRET_BYTES} bytes", "FieldValueTooLong"))
    return out + _type_causes(secret, data, values)


def validate_secret_update(new: Obj, old: Obj) -> list[Cause]:
    out = []
    if new.get("type") != old.get("type"):
        out.append(cause("type", f'Invalid value: {go_value(new.get("type"))}: field is immutable'))
    if old.get("immutable") is True:
        if new.get("immutable") is not True:
            out.append(cause("immutable", "Forbidden: field is immutable when `immutable` is set", "FieldValueForbidden"))
        if (new.get("data") or {}) != (old.get("data") or {}):
            out.append(cause("data", "Forbidden: field is immutable when `immutable` is set", "FieldValueForbidden"))
    return out


def secret_cells(secret: Obj, now: float) -> list[Any]:
    data = secret.get("data")
    return [secret["metadata"]["name"], secret.get("type", ""), len(data) if isinstance(data, dict) else 0,
            age(secret, now)]


SECRET = Kind(
    group="", version="v1", kind="Secret", plural="secrets", namespaced=True,
    definition="io.k8s.api.core.v1.Secret",
    defaults=secret_defaults, validate=validate_secret, validate_update=validate_secret_update,
    columns=(NAME_COLUMN, Column("Type", description="The type of the secret"),
             Column("Data", type="integer", description="The number of keys in the secret"), AGE_COLUMN),
    cells=secret_cells,
    field_getters={"type": lambda o: field_value(o, "type")},
)
