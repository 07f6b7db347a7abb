"""The gnostic protobuf writer: exact bytes for small documents, computed by hand from
gnostic's OpenAPIv2.proto field numbers (Document 1 swagger, 2 info, 8 paths, 9 definitions,
13 securityDefinitions; Schema 1 $ref, 5 default, 9 minimum, 11 maxLength, 16 uniqueItems,
20 enum, 21 additionalProperties, 22 type, 23 items, 25 properties, 31 vendor extensions)."""

from __future__ import annotations

import struct

from control.api.protobuf.gnostic import encode_document, schema


def key(number: int, wire_type: int) -> bytes:
    value = number << 3 | wire_type  # field numbers up to 31: one byte below 16, two above
    return bytes([value]) if value < 0x80 else bytes([value & 0x7F | 0x80, value >> 7])


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (payloads here are all shorter than 128 bytes)."""
    assert len(payload) < 128
    return key(number, 2) + bytes([len(payload)]) + payload


def test_an_empty_document_names_its_version_and_nothing_else():
    assert encode_document({"swagger": "2.0"}) == (
        field(1, b"2.0") + field(2, b"") + field(8, b"") + field(9, b"") + field(13, b""))


def test_scalars_of_a_schema():
    out = schema({"type": "integer", "minimum": -1, "maxLength": 5, "uniqueItems": True, "enum": ["a", 1]})
    assert out == (
        key(9, 1) + struct.pack("<d", -1.0)                     # minimum: a double
        + key(11, 0) + bytes([5])                               # maxLength: a varint
        + key(16, 0) + bytes([1])                               # uniqueItems: true
        + field(20, field(2, b'"a"')) + field(20, field(2, b"1"))  # enum members as Any.yaml
        + field(22, field(1, b"integer")))


def test_false_zero_and_empty_are_left_out_as_proto3_does():
    assert schema({"uniqueItems": False, "maxLength": 0, "format": "", "required": []}) == b""


def test_references_nesting_and_vendor_extensions():
    out = schema({"$ref": "#/definitions/X", "default": {}, "x-kubernetes-patch-strategy": "retainKeys"})
    assert out == (field(1, b"#/definitions/X") + field(5, field(2, b"{}"))
                   + field(31, field(1, b"x-kubernetes-patch-strategy") + field(2, field(2, b'"retainKeys"'))))
    nested = schema({"type": "array", "items": {"type": "string"}})
    assert nested == field(22, field(1, b"array")) + field(23, field(1, field(22, field(1, b"string"))))
    mapping = schema({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True})
    assert mapping == (field(21, bytes([2 << 3, 1])) + field(22, field(1, b"object"))
                       + field(25, field(1, field(1, b"a") + field(2, field(22, field(1, b"string"))))))


def test_a_negative_integer_is_ten_bytes_of_twos_complement():
    out = schema({"maxItems": -1})
    assert out == key(14, 0) + b"\xff" * 9 + b"\x01"
