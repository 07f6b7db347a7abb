"""The names controllers derive from what they stamp out: the two hashes upstream uses, once.

- `template_hash` is `controller.ComputeHash` (pkg/controller/controller_utils.go): FNV-32a of the
  pod template, then, when a collision count is given (even 0), its value as 8 bytes (uint32
  little-endian, zero-padded), the decimal digits safe-encoded. Deployments name their ReplicaSets
  and `pod-template-hash` with it, DaemonSets their ControllerRevisions and
  `controller-revision-hash`.
- `controller_revision_hash` is `history.HashControllerRevision` (pkg/controller/history): FNV-32
  (FNV-1, not 1a) of the revision's data, then a given probe (the collision count) as decimal text,
  safe-encoded. StatefulSets name their ControllerRevisions with it.

Guarantees: pure and stable across processes and Python versions (a canonical JSON text: sorted
keys, no spaces, JSON nulls dropped as decoding into typed structs drops them, so kubectl's
`creationTimestamp: null` changes nothing); the result uses only `SAFE_ALPHABET` (no vowels, no
look-alikes: rand.SafeEncodeString) and is at most 10 characters. Upstream hashes Go's struct dump,
so the values are not upstream's own, but how they are made, and when they change, is. `fnv32` is
the project's only FNV implementation.
"""

from __future__ import annotations

import json
from typing import Any

from control.kinds.structure import without_nulls

SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand
_OFFSET, _PRIME, _MASK = 0x811C9DC5, 0x01000193, 0xFFFFFFFF


def fnv32(data: bytes, *, alternate: bool = True) -> int:
    """FNV-1a 32 (Go's fnv.New32a) or, with `alternate=False`, FNV-1 32 (fnv.New32)."""
    value = _OFFSET
    if alternate:
        for byte in data:
            value = ((value ^ byte) * _PRIME) & _MASK
    else:
        for byte in data:
            value = ((value * _PRIME) & _MASK) ^ byte
    return value


def safe_encode(text: str) -> str:
    """rand.SafeEncodeString: each byte mapped into the alphabet."""
    return "".join(SAFE_ALPHABET[b % len(SAFE_ALPHABET)] for b in text.encode())


def canonical(value: Any) -> bytes:
    return json.dumps(without_nulls(value), sort_keys=True, separators=(",", ":")).encode()


def collision_count(obj: Any) -> int | None:
    """`status.collisionCount` as upstream's *int32: None until a collision was ever counted."""
    status = obj.get("status") if isinstance(obj, dict) else None
    count = status.get("collisionCount") if isinstance(status, dict) else None
    return int(count) if isinstance(count, (int, float)) and not isinstance(count, bool) else None


def template_hash(template: Any, collision_count: int | None = None) -> str:
    """controller.ComputeHash(template, collisionCount)."""
    data = canonical(template or {})
    if collision_count is not None:
        data += (int(collision_count) & _MASK).to_bytes(4, "little") + bytes(4)
    return safe_encode(str(fnv32(data)))


def controller_revision_hash(data: Any, probe: int | None = None) -> str:
    """history.HashControllerRevision(revision, probe) over the revision's `data`."""
    raw = canonical(data)
    if probe is not None:
        raw += str(int(probe)).encode()
    return safe_encode(str(fnv32(raw, alternate=False)))
