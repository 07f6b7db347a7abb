"""A request body turned into plain JSON by its media type, as a pure function of its bytes.

Guarantees: `decode_text(raw, media, budget)` never raises and returns only plain values (a worker
process runs `decode_packed`, the same with the value pickled, for `control.api.bodies`):
`Outcome("ok", value)` (for yaml media types: the list of documents), `Outcome("undecodable", why)`
in Go's words (the caller adds the "object provided is unrecognized" frame), or
`Outcome("too_large", why)` for YAML over the node budget. YAML is read by
`control.safeyaml`, within its budget; an apply-patch+yaml body that is JSON (what kubectl and the
dashboard send) is read as JSON, which is YAML, at JSON's speed.
"""

from __future__ import annotations

import pickle
from typing import Any

from control import jsontext, safeyaml
from control.api import gojson
from control.safeyaml import Budget, Outcome

__all__ = ["Budget", "Outcome", "compact_size", "decode_packed", "decode_text", "json_object"]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def json_object(text: str) -> dict[str, Any] | None:
    """A YAML body's text (decoded from UTF-8 by the caller) when it is one JSON object, read as the
    JSON it is (JSON is YAML: kubectl and the dashboard send their server-side applies so), at JSON's
    speed; None for any other text (YAML that only opens like JSON, `NaN`, too deep), which is YAML's
    to read."""
    if text.lstrip()[:1] != "{":
        return None
    try:
        return jsontext.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None


def compact_size(value: Any) -> int:
    """The size of `value` as compact JSON: what the store would hold of it (`store._storable`)."""
    return jsontext.size(jsontext.dumps(value))


def decode_text(raw: bytes, media: str, budget: Budget = Budget()) -> Outcome:
    """A body as JSON (or as a YAML stream, a list of documents, for yaml media types)."""
    is_yaml = "yaml" in media
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:  # refused rather than silently replaced: a name of U+FFFD helps nobody
        return Outcome("undecodable", "error converting YAML to JSON: yaml: invalid leading UTF-8 octet" if is_yaml
                       else "json parse error: invalid UTF-8 in JSON input")
    if is_yaml:
        as_json = json_object(text)
        if as_json is not None:
            return Outcome("ok", [as_json])
        outcome = safeyaml.read_stream(text, budget)
        if outcome.verdict == "undecodable":
            return Outcome("undecodable", f"error converting YAML to JSON: {outcome.value}")
        return outcome
    try:
        return Outcome("ok", jsontext.loads(text, parse_constant=_reject_constant))
    except (ValueError, RecursionError):
        return Outcome("undecodable", f"json parse error: {gojson.parse_error(text)}")


def decode_packed(raw: bytes, media: str, budget: Budget = Budget()) -> Outcome:
    """`decode_text` with the value pickled, and the size of its compact JSON: (packed, size). What
    a worker hands back, unpacked by whoever uses it (a fresh value each time; the serving
    process's result thread only moves bytes)."""
    outcome = decode_text(raw, media, budget)
    if outcome.verdict != "ok":
        return outcome
    value = outcome.value[0] if "yaml" in media and len(outcome.value) == 1 else outcome.value
    return Outcome("ok", (pickle.dumps(outcome.value, protocol=pickle.HIGHEST_PROTOCOL), compact_size(value)))
