"""The field tables: one compact line of text per protobuf message, compiled once at import.

A message is written as comma-separated fields, each `<number> <jsonName> <type>`:

    "ContainerPort": "1 name str, 2 hostPort int, 3 containerPort int, 4 protocol str, 5 hostIP str"

Types: `str`, `int` (int32/int64 varints), `bool`, `bytes` (base64 in JSON), a message name, or a
well-known type (`Time`, `MicroTime`, `Quantity`, `IntOrString`, `FieldsV1`, `RawExtension`).
`[]T` is a repeated field, `{T}` a `map<string, T>`, and `T?` marks a field that Go holds as a
pointer, so its zero value was set on purpose and is kept (`replicas: 0`, `optional: false`);
`T!` marks a field whose Go JSON tag has no `omitempty` (the OpenAPI "required" ones), so its
zero value shows too (`restartCount: 0`); other zero scalars are dropped, as Go's JSON would.
`<number> ...T` is an embedded struct that JSON inlines (`Probe` carries `ProbeHandler`'s
`exec`/`httpGet` at its own level).

Pointer marks were checked against the gogoproto `nullable` options in the descriptors compiled
into kubectl 1.32; `!` marks follow the OpenAPI required lists.

Guarantees: `compile_tables` rejects a malformed line, a duplicate field number or JSON name, and a
reference to a message no table defines, so a typo fails at import rather than mid-request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SCALARS = frozenset({"str", "int", "bool", "bytes"})
WELL_KNOWN = frozenset({"Time", "MicroTime", "Quantity", "IntOrString", "FieldsV1", "RawExtension"})

_FIELD = re.compile(r"^(\d+) (?:\.\.\.(\w+)|(\w+) (\[\])?(\{)?(\w+)(\})?([?!])?)$")


@dataclass(frozen=True)
class Field:
    number: int
    name: str          # JSON name; "" for an inlined struct
    type: str          # scalar, well-known type or message name
    repeated: bool = False
    mapped: bool = False
    pointer: bool = False  # `?`: a Go pointer, so a zero value was set on purpose
    always: bool = False   # `!`: no omitempty, Go's JSON shows the zero value
    inline: bool = False

    @property
    def keeps_zero(self) -> bool:
        return self.pointer or self.always


Table = dict[int, Field]


def parse_message(message: str, spec: str) -> Table:
    table: Table = {}
    names: set[str] = set()
    for part in spec.split(","):
        match = _FIELD.match(part.strip())
        if not match:
            raise ValueError(f"{message}: cannot parse field {part.strip()!r}")
        number, inline_type, name, rep, open_map, type_, close_map, mark = match.groups()
        if bool(open_map) != bool(close_map) or (rep and open_map):
            raise ValueError(f"{message}: bad type in {part.strip()!r}")
        field = Field(int(number), "", inline_type, inline=True) if inline_type else \
            Field(int(number), name, type_, repeated=bool(rep), mapped=bool(open_map),
                  pointer=mark == "?", always=mark == "!")
        if field.number in table or (field.name and field.name in names):
            raise ValueError(f"{message}: field {field.number} {field.name!r} declared twice")
        table[field.number] = field
        names.add(field.name)
    return table


def compile_tables(*sources: dict[str, str]) -> dict[str, Table]:
    tables: dict[str, Table] = {}
    for source in sources:
        for message, spec in source.items():
            if message in tables:
                raise ValueError(f"message {message} defined twice")
            tables[message] = parse_message(message, spec)
    for message, table in tables.items():
        _flat_names(tables, message, table)
        for field in table.values():
            if field.type in SCALARS or field.type in WELL_KNOWN:
                if field.inline:
                    raise ValueError(f"{message}: only messages can be inlined")
                continue
            if field.type not in tables:
                raise ValueError(f"{message}.{field.name or field.type}: unknown message {field.type}")
    return tables


def _flat_names(tables: dict[str, Table], message: str, table: Table, depth: int = 0) -> set[str]:
    """The JSON names a message shows once inlined structs are flattened; they must not clash."""
    if depth > 8:
        raise ValueError(f"{message}: inlined structs nest too deep")
    names: set[str] = set()
    for field in table.values():
        found = _flat_names(tables, field.type, tables[field.type], depth + 1) \
            if field.inline and field.type in tables else {field.name}
        if names & found:
            raise ValueError(f"{message}: inlined field {sorted(names & found)} clashes")
        names |= found
    return names
