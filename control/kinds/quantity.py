"""Kubernetes resource quantities ("100m", "1.5", "512Mi", "1e3") as plain numbers.

Guarantees: `parse_quantity` accepts exactly the suffixes Kubernetes accepts and raises
ValueError with a clear message for anything else; CPU comes out in cores, memory in bytes.
"""

from __future__ import annotations

import re

_SUFFIXES = {
    "": 1.0, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
    "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60,
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$")


def parse_quantity(value: str | int | float) -> float:
    if isinstance(value, bool):
        raise ValueError("quantities must be strings or numbers, not booleans")
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str):
        raise ValueError(f"quantities must be strings or numbers, not {type(value).__name__}")
    match = _QUANTITY.match(value.strip())
    if not match:
        raise ValueError(
            "quantities must match the regular expression "
            r"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    number, exponent, suffix = match.groups()
    if exponent:
        return float(number + exponent)
    return float(number) * _SUFFIXES[suffix or ""]


def is_quantity(value: object) -> bool:
    try:
        parse_quantity(value)  # type: ignore[arg-type]
    except ValueError:
        return False
    return True
