"""A Swagger 2.0 document (as JSON) written as gnostic's `openapi.v2.Document` protobuf message, the
form kubectl asks /openapi/v2 for (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`).

Field numbers are those of gnostic's `openapiv2/OpenAPIv2.proto`. Free-form values (defaults,
enum members, `x-*` vendor extensions) travel as `Any.yaml`; we write them as JSON text, which is
YAML too, so kubectl's yaml.v2 reads back the same value.

Guarantees: `encode_document` is a pure function of its input (dict order included, so sorted
input gives stable bytes); it covers what the hub's Swagger documents use - info, paths with
their operations, query/path/body parameters and responses, definitions with every Schema field
kube-openapi reads, and the bearer-token security definition - and skips anything else rather
than writing a field gnostic would misread.
"""

from __future__ import annotations

import json
import struct
from typing import Any, Callable

Doc = dict[str, Any]

_VARINT, _FIXED64, _BYTES = 0, 1, 2


# --- the wire format, write side -------------------------------------------------------------

def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64s are ten-byte two's complement, as Go writes them
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


def _bytes(number: int, data: bytes) -> bytes:
    return _key(number, _BYTES) + _varint(len(data)) + data


def _string(number: int, value: Any) -> bytes:
    return _bytes(number, str(value).encode()) if value not in (None, "") else b""


def _strings(number: int, values: Any) -> bytes:
    return b"".join(_bytes(number, str(v).encode()) for v in values or ())


def _bool(number: int, value: Any) -> bytes:
    return _key(number, _VARINT) + _varint(1) if value is True else b""


def _int(number: int, value: Any) -> bytes:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value:
        return b""
    return _key(number, _VARINT) + _varint(int(value))


def _double(number: int, value: Any) -> bytes:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return b""
    return _key(number, _FIXED64) + struct.pack("<d", float(value))


def _message(number: int, data: bytes) -> bytes:
    return _bytes(number, data)


# --- shared messages -------------------------------------------------------------------------

def _any(value: Any) -> bytes:
    """gnostic Any: field 2 holds the value as YAML text (JSON is YAML)."""
    return _string(2, json.dumps(value, sort_keys=True))


def _extensions(number: int, node: Doc) -> bytes:
    """Every `x-*` key of `node` as a repeated NamedAny."""
    return b"".join(_message(number, _string(1, name) + _message(2, _any(value)))
                    for name, value in node.items() if name.startswith("x-"))


def _named(number: int, mapping: Any, encode: Callable[[Any], bytes]) -> bytes:
    """A JSON object as gnostic's repeated Named<T> {1 name, 2 value}, in the object's order."""
    if not isinstance(mapping, dict):
        return b""
    return b"".join(_message(number, _string(1, name) + _message(2, encode(value)))
                    for name, value in mapping.items())


# --- Schema ----------------------------------------------------------------------------------

def schema(node: Any) -> bytes:
    """gnostic Schema."""
    if not isinstance(node, dict):
        return b""
    out = [
        _string(1, node.get("$ref")), _string(2, node.get("format")), _string(3, node.get("title")),
        _string(4, node.get("description")),
    ]
    if "default" in node:
        out.append(_message(5, _any(node["default"])))
    out += [
        _double(6, node.get("multipleOf")), _double(7, node.get("maximum")),
        _bool(8, node.get("exclusiveMaximum")), _double(9, node.get("minimum")),
        _bool(10, node.get("exclusiveMinimum")), _int(11, node.get("maxLength")),
        _int(12, node.get("minLength")), _string(13, node.get("pattern")), _int(14, node.get("maxItems")),
        _int(15, node.get("minItems")), _bool(16, node.get("uniqueItems")),
        _int(17, node.get("maxProperties")), _int(18, node.get("minProperties")),
        _strings(19, node.get("required")),
    ]
    out += [_message(20, _any(member)) for member in node.get("enum") or ()]
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        out.append(_message(21, _message(1, schema(extra))))
    elif isinstance(extra, bool):
        out.append(_message(21, _key(2, _VARINT) + _varint(int(extra))))
    if node.get("type"):
        kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
        out.append(_message(22, _strings(1, kinds)))
    if isinstance(node.get("items"), dict):
        out.append(_message(23, _message(1, schema(node["items"]))))
    out += [_message(24, schema(part)) for part in node.get("allOf") or ()]
    if isinstance(node.get("properties"), dict):
        out.append(_message(25, _named(1, node["properties"], schema)))
    out += [_bool(27, node.get("readOnly")), _extensions(31, node)]
    return b"".join(out)


# --- paths -----------------------------------------------------------------------------------

def _parameter(node: Doc) -> bytes:
    """ParametersItem{1 Parameter{1 BodyParameter | 2 NonBodyParameter{3 query | 4 path}}}."""
    where = node.get("in")
    if where == "body":
        body = (_string(1, node.get("description")) + _string(2, node.get("name")) + _string(3, where)
                + _bool(4, node.get("required")) + _message(5, schema(node.get("schema"))) + _extensions(6, node))
        return _message(1, _message(1, body))
    # Query and path sub-schemas share their first fields; path has no allow_empty_value (5), so
    # each later field sits one number lower in it.
    shift = 0 if where == "query" else -1
    sub = (_bool(1, node.get("required")) + _string(2, where) + _string(3, node.get("description"))
           + _string(4, node.get("name")) + _string(6 + shift, node.get("type"))
           + _string(7 + shift, node.get("format")) + _bool(20 + shift, node.get("uniqueItems"))
           + _extensions(23 + shift, node))
    choice = {"query": 3, "path": 4}.get(where)
    if choice is None:
        return b""  # header and formData parameters: the hub documents none
    return _message(1, _message(2, _message(choice, sub)))


def _response(node: Any) -> bytes:
    """ResponseValue{1 Response{1 description, 2 SchemaItem{1 Schema}}}."""
    if not isinstance(node, dict):
        return b""
    inner = _string(1, node.get("description"))
    if isinstance(node.get("schema"), dict):
        inner += _message(2, _message(1, schema(node["schema"])))
    return _message(1, inner + _extensions(5, node))


def _operation(node: Doc) -> bytes:
    return b"".join([
        _strings(1, node.get("tags")), _string(2, node.get("summary")), _string(3, node.get("description")),
        _string(5, node.get("operationId")), _strings(6, node.get("produces")), _strings(7, node.get("consumes")),
        *(_message(8, _parameter(p)) for p in node.get("parameters") or ()),
        _message(9, _named(1, node.get("responses"), _response)),
        _strings(10, node.get("schemes")), _bool(11, node.get("deprecated")), _extensions(13, node),
    ])


_METHODS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


def _path_item(node: Any) -> bytes:
    if not isinstance(node, dict):
        return b""
    out = [_message(number, _operation(node[method])) for method, number in _METHODS.items()
           if isinstance(node.get(method), dict)]
    out += [_message(9, _parameter(p)) for p in node.get("parameters") or ()]
    return b"".join(out) + _extensions(10, node)


# --- the document ----------------------------------------------------------------------------

def _security_definition(node: Any) -> bytes:
    """SecurityDefinitionsItem{2 ApiKeySecurity}: the only kind the hub publishes (bearer tokens)."""
    if not isinstance(node, dict) or node.get("type") != "apiKey":
        return b""
    return _message(2, _string(1, node["type"]) + _string(2, node.get("name")) + _string(3, node.get("in"))
                    + _string(4, node.get("description")) + _extensions(5, node))


def _security_requirement(node: Any) -> bytes:
    return _named(1, node, lambda scopes: _strings(1, scopes))


def encode_document(document: Doc) -> bytes:
    """The gnostic `openapi.v2.Document` bytes of a Swagger 2.0 JSON document."""
    info = document.get("info") or {}
    return b"".join([
        _string(1, document.get("swagger")),
        _message(2, _string(1, info.get("title")) + _string(2, info.get("version"))
                 + _string(3, info.get("description")) + _extensions(7, info)),
        _string(3, document.get("host")), _string(4, document.get("basePath")),
        _strings(5, document.get("schemes")), _strings(6, document.get("consumes")),
        _strings(7, document.get("produces")),
        _message(8, _named(2, document.get("paths"), _path_item)),
        _message(9, _named(1, document.get("definitions"), schema)),
        *(_message(12, _security_requirement(r)) for r in document.get("security") or ()),
        _message(13, _named(1, document.get("securityDefinitions"), _security_definition)),
        _extensions(16, document),
    ])
