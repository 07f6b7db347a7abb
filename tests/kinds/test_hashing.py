"""control.kinds.hashing: upstream's ComputeHash and HashControllerRevision, and FNV itself checked
against the published FNV test vectors."""

from __future__ import annotations

import pytest

from control.kinds import hashing
from control.kinds.hashing import (SAFE_ALPHABET, collision_count, controller_revision_hash, fnv32, safe_encode,
                                   template_hash)

TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


@pytest.mark.parametrize(("data", "fnv1a", "fnv1"), [
    (b"", 0x811C9DC5, 0x811C9DC5),
    (b"a", 0xE40C292C, 0x050C5D7E),
    (b"foobar", 0xBF9CF968, 0x31F0B262),
])
def test_fnv32_is_go_hash_fnv(data, fnv1a, fnv1):
    assert fnv32(data) == fnv1a  # fnv.New32a
    assert fnv32(data, alternate=False) == fnv1  # fnv.New32


def test_safe_encode_maps_each_byte_into_the_alphabet():
    assert safe_encode("48") == "8d"  # '4' is byte 52 (52 % 27 = 25), '8' byte 56 (56 % 27 = 2)
    assert set(safe_encode("0123456789")) <= set(SAFE_ALPHABET)


def test_template_hash_is_compute_hash():
    expected = safe_encode(str(fnv32(b'{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx","name":"c"}]}}')))
    assert template_hash(TEMPLATE) == expected
    assert len(expected) <= 10 and set(expected) <= set(SAFE_ALPHABET)


def test_template_hash_follows_the_template_not_its_key_order_or_nulls():
    reordered = {"spec": TEMPLATE["spec"], "metadata": {**TEMPLATE["metadata"], "creationTimestamp": None}}
    assert template_hash(reordered) == template_hash(TEMPLATE), "kubectl rollout undo sends creationTimestamp: null"
    other = {**TEMPLATE, "spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}
    assert template_hash(other) != template_hash(TEMPLATE)


def test_a_collision_count_is_hashed_as_eight_little_endian_bytes_even_when_zero():
    data = hashing.canonical(TEMPLATE)
    assert template_hash(TEMPLATE, 0) == safe_encode(str(fnv32(data + bytes(8))))
    assert template_hash(TEMPLATE, 2) == safe_encode(str(fnv32(data + b"\x02" + bytes(7))))
    assert len({template_hash(TEMPLATE), template_hash(TEMPLATE, 0), template_hash(TEMPLATE, 1)}) == 3


def test_controller_revision_hash_is_fnv1_of_the_data_and_the_probe_as_text():
    data = {"spec": {"template": {**TEMPLATE, "$patch": "replace"}}}
    raw = hashing.canonical(data)
    assert controller_revision_hash(data) == safe_encode(str(fnv32(raw, alternate=False)))
    assert controller_revision_hash(data, 0) == safe_encode(str(fnv32(raw + b"0", alternate=False)))
    assert controller_revision_hash(data, 12) == safe_encode(str(fnv32(raw + b"12", alternate=False)))
    assert controller_revision_hash(data, 0) != template_hash(data, 0), "FNV-1 is not FNV-1a"


@pytest.mark.parametrize(("obj", "expected"), [
    ({}, None), ({"status": {}}, None), ({"status": {"collisionCount": 0}}, 0),
    ({"status": {"collisionCount": 3}}, 3), ({"status": {"collisionCount": "x"}}, None), ({"status": None}, None),
])
def test_collision_count_is_none_until_one_was_counted(obj, expected):
    assert collision_count(obj) == expected
