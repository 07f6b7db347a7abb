"""JSON text to values and back on the hub's hot paths, with orjson where it gives Python's answer.

Every write decodes the stored object and encodes the new one, and every request body is decoded:
with the `json` module that was about 15 % of the hub's GIL time while 1,000 pods came up
(`bench/scale.py`, py-spy). orjson does the same work several times faster; where it would answer
otherwise than `json`, `json` answers.

Guarantees:
- `loads(text)` returns what `json.loads(text)` returns and raises what it raises, for every text.
  orjson refuses lone surrogate escapes, NaN and Infinity, numbers that overflow a double and
  nesting deeper than 1,024, and reads an integer beyond 64 bits as a float: a text orjson refuses,
  or with a run of 20 digits or more (which may be such an integer), is read by `json.loads`.
- `dumps(value)` returns compact JSON (no spaces) that `loads` reads back equal to `value`, as
  `json.dumps(value, separators=(",", ":"))` does. Only the spelling may differ: characters
  beyond ASCII as themselves (as Go's encoding/json, so kube-apiserver, writes them) rather than
  `\\u` escapes, and floats in orjson's shortest form (`0.00001` for `1e-05`). What orjson cannot
  write (lone surrogates, integers beyond 64 bits, keys that are not strings) is written by
  `json.dumps`. NaN and infinities are written as `null` (`json.dumps` would write `NaN`, which is
  not JSON and no reader takes).
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_LONG_NUMBER = re.compile(r"[0-9]{20}")
_LONG_NUMBER_BYTES = re.compile(rb"[0-9]{20}")


def loads(text: str | bytes, **json_options: Any) -> Any:
    """`json.loads(text, **json_options)` (its options only matter where orjson refuses: NaN and
    Infinity are the only constants, and orjson takes none)."""
    if (_LONG_NUMBER if isinstance(text, str) else _LONG_NUMBER_BYTES).search(text) is None:
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
