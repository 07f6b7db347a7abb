"""Turn one protobuf message into the dict its JSON form would be, driven by the field tables.

Guarantees: only `ProtobufError` escapes for bad input (wrong wire type, truncation, a time or
JSON payload Go could not render); nesting deeper than `MAX_DEPTH` is refused, so recursion is
bounded whatever the bytes; unknown field numbers are skipped; a non-repeated message field seen
twice is merged and a scalar seen twice keeps the last value, as protobuf specifies.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from typing import Any

from control.api.protobuf.schema import SCALARS, Field, Table
from control.api.protobuf.wire import (
    LENGTH_DELIMITED, VARINT, ProtobufError, fields, packed_varints, signed, wire_name,
)

MAX_DEPTH = 64
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_GO_ZERO_TIME_SECONDS = -62135596800  # 0001-01-01T00:00:00Z, what Go's zero time.Time encodes as


def decode_message(tables: dict[str, Table], message: str, data: memoryview, depth: int = 0) -> dict[str, Any]:
    if depth > MAX_DEPTH:
        raise ProtobufError(f"messages nested more than {MAX_DEPTH} deep")
    table = tables[message]
    out: dict[str, Any] = {}
    for number, wire_type, value in fields(data):
        field = table.get(number)
        if field is None:
            continue  # a field newer than these tables: ignored, as Go's decoder does
        where = f"{message}.{field.name or field.type}"
        if field.mapped:
            _expect(wire_type, LENGTH_DELIMITED, where)
            key, item = _map_entry(tables, field, value, depth, where)
            out.setdefault(field.name, {})[key] = item
        elif field.repeated:
            out.setdefault(field.name, []).extend(_repeated(tables, field, wire_type, value, depth, where))
        elif field.inline:
            _expect(wire_type, LENGTH_DELIMITED, where)
            _merge(out, decode_message(tables, field.type, value, depth + 1))
        else:
            item = _single(tables, field.type, wire_type, value, depth, where)
            if isinstance(item, dict) and isinstance(out.get(field.name), dict):
                _merge(out[field.name], item)
            elif field.type in SCALARS and not item and not field.keeps_zero:
                out.pop(field.name, None)  # Go cannot tell a zero scalar from an absent one
            else:
                out[field.name] = item
    return out


def _expect(wire_type: int, wanted: int, where: str) -> None:
    if wire_type != wanted:
        raise ProtobufError(f"{where}: expected {wire_name(wanted)} wire type, got {wire_name(wire_type)}")


def _single(tables: dict[str, Table], type_: str, wire_type: int, value: Any, depth: int, where: str) -> Any:
    if type_ in ("int", "bool"):
        _expect(wire_type, VARINT, where)
        return signed(value) if type_ == "int" else value != 0
    _expect(wire_type, LENGTH_DELIMITED, where)
    if type_ == "str":
        return _text(value)
    if type_ == "bytes":
        return base64.b64encode(value).decode("ascii")
    special = _WELL_KNOWN.get(type_)
    if special is not None:
        return special(value, where)
    return decode_message(tables, type_, value, depth + 1)


def _repeated(tables: dict[str, Table], field: Field, wire_type: int, value: Any, depth: int,
              where: str) -> list[Any]:
    if field.type in ("int", "bool") and wire_type == LENGTH_DELIMITED:
        items = packed_varints(value)
        return [signed(v) for v in items] if field.type == "int" else [v != 0 for v in items]
    return [_single(tables, field.type, wire_type, value, depth, where)]


def _map_entry(tables: dict[str, Table], field: Field, data: memoryview, depth: int,
               where: str) -> tuple[str, Any]:
    key, item, seen = "", None, False
    for number, wire_type, value in fields(data):
        if number == 1:
            _expect(wire_type, LENGTH_DELIMITED, f"{where} key")
            key = _text(value)
        elif number == 2:
            item, seen = _single(tables, field.type, wire_type, value, depth, f"{where}[{key!r}]"), True
    return key, item if seen else _zero(field.type)


def _zero(type_: str) -> Any:
    """What Go's JSON shows for a map value the wire left out (its type's zero value)."""
    zeros: dict[str, Any] = {"str": "", "bytes": "", "int": 0, "bool": False, "Quantity": "0", "IntOrString": 0,
                             "Time": None, "MicroTime": None, "FieldsV1": None, "RawExtension": None}
    return zeros[type_] if type_ in zeros else {}


def _merge(into: dict[str, Any], new: dict[str, Any]) -> None:
    for key, value in new.items():
        old = into.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            _merge(old, value)
        elif isinstance(old, list) and isinstance(value, list):
            old.extend(value)
        else:
            into[key] = value


def _text(value: memoryview) -> str:
    # Go does not check UTF-8 when it reads protobuf; its JSON writer then substitutes U+FFFD.
    return bytes(value).decode("utf-8", "replace")


def _scalars(data: memoryview) -> dict[int, tuple[int, Any]]:
    """Field number -> (wire type, last value), for the small well-known messages."""
    return {number: (wire_type, value) for number, wire_type, value in fields(data)}


def _int_field(values: dict[int, tuple[int, Any]], number: int, where: str) -> int:
    if number not in values:
        return 0
    wire_type, value = values[number]
    _expect(wire_type, VARINT, f"{where} field {number}")
    return signed(value)


def _bytes_field(values: dict[int, tuple[int, Any]], number: int, where: str) -> memoryview | None:
    if number not in values:
        return None
    wire_type, value = values[number]
    _expect(wire_type, LENGTH_DELIMITED, f"{where} field {number}")
    return value


def _time(data: memoryview, where: str, micro: bool = False) -> str | None:
    if not len(data):
        return None  # Go writes a zero time as an empty message; its JSON is null
    values = _scalars(data)
    seconds, nanos = _int_field(values, 1, where), _int32(_int_field(values, 2, where))
    if seconds == _GO_ZERO_TIME_SECONDS and nanos == 0:
        return None
    seconds, nanos = seconds + nanos // 1_000_000_000, nanos % 1_000_000_000
    try:
        moment = _EPOCH + dt.timedelta(seconds=seconds, microseconds=nanos // 1000)
    except (OverflowError, ValueError):
        raise ProtobufError(f"{where}: time {seconds}s is outside years 1-9999") from None
    text = (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
            f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}")
    return f"{text}.{moment.microsecond:06d}Z" if micro else f"{text}Z"


def _micro_time(data: memoryview, where: str) -> str | None:
    return _time(data, where, micro=True)


def _quantity(data: memoryview, where: str) -> str:
    text = _bytes_field(_scalars(data), 1, where)
    return "0" if text is None else _text(text)  # Go's zero Quantity renders as "0"


def _int_or_string(data: memoryview, where: str) -> int | str:
    values = _scalars(data)
    kind = _int_field(values, 1, where)
    if kind == 0:
        return _int32(_int_field(values, 2, where))
    if kind == 1:
        text = _bytes_field(values, 3, where)
        return "" if text is None else _text(text)
    raise ProtobufError(f"{where}: IntOrString type {kind} is neither 0 (int) nor 1 (string)")


def _int32(value: int) -> int:
    """Go keeps the low 32 bits when a varint lands in an int32."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _json_payload(data: memoryview, where: str) -> Any:
    raw = _bytes_field(_scalars(data), 1, where)
    if raw is None or not len(raw):
        return None  # Go renders a nil Raw as null
    try:
        return json.loads(bytes(raw).decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise ProtobufError(f"{where}: the embedded raw data is not JSON") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_WELL_KNOWN = {
    "Time": _time, "MicroTime": _micro_time, "Quantity": _quantity, "IntOrString": _int_or_string,
    "FieldsV1": _json_payload, "RawExtension": _json_payload,
}
