"""JSON text to values and back on the hub's hot paths, with orjson where it gives Python's answer.

Every write decodes the stored object and encodes the new one, and every request body is decoded:
with the `json` module that was about 15 % of the hub's GIL time while 1,000 pods came up
(`bench/scale.py`, py-spy). orjson does the same work several times faster; where it would answer
otherwise than `json`, `json` answers.

Guarantees:
- `loads(text)` returns what `json.loads(text)` returns and raises what it raises, for every text.
  orjson refuses lone surrogate escapes, NaN and Infinity, numbers that overflow a double and
  nesting deeper than 1,024, and reads an integer beyond 64 bits as a float: a text orjson refuses,
  or with a run of 19 digits or more (which may be such an integer), is read by `json.loads`.
- `dumps(value)` returns compact JSON (no spaces) that `loads` reads back equal to `value`, as
  `json.dumps(value, separators=(",", ":"))` does. Only the spelling may differ: characters
  beyond ASCII as themselves (as Go's encoding/json, so kube-apiserver, writes them) rather than
  `\\u` escapes, and floats in orjson's shortest form (`0.00001` for `1e-05`). What orjson cannot
  write (lone surrogates, integers beyond 64 bits, keys that are not strings) is written by
  `json.dumps`. NaN and infinities are written as `null` (`json.dumps` would write `NaN`, which is
  not JSON and no reader takes).
- `size(text)` is the length in bytes of a text `dumps` wrote, as UTF-8: what etcd counts against
  its request limit, and so what the store and the early refusal of a body both measure.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

# Digits to "0", every other byte to " ": a run of 19 digits (a 19-digit negative may be below
# -2**63, which orjson also reads as a float) is then one substring search away. A regular expression
# took 15 us on a 2 KB pod, longer than `json.loads` itself; this takes under 2 us.
_DIGITS_ONLY = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_NINETEEN_DIGITS = b"0" * 19


def _may_hold_a_long_integer(text: str | bytes) -> bool:
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return _NINETEEN_DIGITS in raw.translate(_DIGITS_ONLY)


def loads(text: str | bytes, **json_options: Any) -> Any:
    """`json.loads(text, **json_options)` (its options only matter where orjson refuses: NaN and
    Infinity are the only constants, and orjson takes none)."""
    if not _may_hold_a_long_integer(text):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text, **json_options)


def dumps(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError: lone surrogates, integers beyond 64 bits, other keys
        return json.dumps(value, separators=(",", ":"))


def size(text: str) -> int:
    # ASCII (nearly every object) is answered without copying: `isascii` is a flag of the string.
    return len(text) if text.isascii() else len(text.encode("utf-8"))
