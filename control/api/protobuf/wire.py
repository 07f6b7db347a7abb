"""The protobuf wire format, read-only: varints, tags and the four wire types Kubernetes uses.

Guarantees: every read is bounds-checked and consumes at least one byte, so walking a message
always ends; anything malformed (truncated data, an over-long varint, field number 0, a group or
an unknown wire type) raises `ProtobufError`, never IndexError or a silent wrong value.
"""

from __future__ import annotations

from collections.abc import Iterator

VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5
_WIRE_NAMES = {VARINT: "varint", FIXED64: "64-bit", LENGTH_DELIMITED: "length-delimited", FIXED32: "32-bit",
               3: "start-group", 4: "end-group"}
_MAX_VARINT_BYTES = 10
_U64 = 1 << 64


class ProtobufError(ValueError):
    """The body is not a Kubernetes protobuf message this server can decode."""


class ProtobufUnsupported(ProtobufError):
    """A well-formed envelope around a kind (or content encoding) with no table: answer 415."""


def wire_name(wire_type: int) -> str:
    return _WIRE_NAMES.get(wire_type, f"wire type {wire_type}")


def read_varint(data: memoryview, pos: int) -> tuple[int, int]:
    """The unsigned varint at `pos` and the position after it."""
    value = shift = 0
    for i in range(_MAX_VARINT_BYTES):
        if pos + i >= len(data):
            raise ProtobufError("truncated data: a varint runs past the end of its message")
        byte = data[pos + i]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & (_U64 - 1), pos + i + 1
        shift += 7
    raise ProtobufError("malformed varint: longer than 10 bytes")


def signed(value: int) -> int:
    """A varint read back as Go's int32/int64 (two's complement over 64 bits)."""
    return value - _U64 if value >= 1 << 63 else value


def fields(data: memoryview) -> Iterator[tuple[int, int, int | memoryview]]:
    """(field number, wire type, value) for each field of one message, in wire order.

    Varint and fixed-width values come back as unsigned ints, length-delimited ones as a
    memoryview into `data` (no copy)."""
    pos, end = 0, len(data)
    while pos < end:
        key, pos = read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if number == 0 or number >= 1 << 29:
            raise ProtobufError(f"malformed message: invalid field number {number}")
        if wire_type == VARINT:
            value, pos = read_varint(data, pos)
        elif wire_type == LENGTH_DELIMITED:
            length, pos = read_varint(data, pos)
            if length > end - pos:
                raise ProtobufError(f"truncated data: field {number} declares {length} bytes, "
                                    f"{end - pos} remain")
            value, pos = data[pos:pos + length], pos + length
        elif wire_type in (FIXED64, FIXED32):
            size = 8 if wire_type == FIXED64 else 4
            if size > end - pos:
                raise ProtobufError(f"truncated data: field {number} needs {size} bytes, {end - pos} remain")
            value, pos = int.from_bytes(data[pos:pos + size], "little"), pos + size
        else:
            raise ProtobufError(f"field {number}: unsupported {wire_name(wire_type)} wire type")
        yield number, wire_type, value


def packed_varints(data: memoryview) -> list[int]:
    """The varints of a packed repeated field."""
    out, pos = [], 0
    while pos < len(data):
        value, pos = read_varint(data, pos)
        out.append(value)
    return out
