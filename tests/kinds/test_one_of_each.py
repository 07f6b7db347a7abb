"""Guards for "one of each helper" (issue 22): the source of the hub, the spokes and the dashboard
builds no owner reference by hand, has one FNV, one `tolerates`, one pod-requests aggregation and
spells the spokes ConfigMap's name once. Each guard reads the code (ast), so a copy that comes back
fails here with its file and line."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "control" / "kinds" / "schemas"  # OpenAPI descriptions of these types, not values


@functools.cache
def sources() -> tuple[tuple[str, ast.AST], ...]:
    """(path, parsed module) of every source file, parsed once per session."""
    return tuple((path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(), str(path)))
                 for package in ("control", "dashboard") for path in sorted((ROOT / package).rglob("*.py"))
                 if SCHEMAS not in path.parents)


@functools.cache
def nodes() -> tuple[tuple[str, tuple[ast.AST, ...]], ...]:
    """Every node of every source file, walked once per session."""
    return tuple((name, tuple(ast.walk(tree))) for name, tree in sources())


def _keys(node: ast.Dict) -> set[str]:
    return {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}


def _literal_list_of_dicts(node: ast.AST) -> bool:
    return isinstance(node, ast.List) and any(isinstance(e, ast.Dict) for e in node.elts)


def hand_built_owner_references(name: str, tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = _keys(node)
            if {"kind", "name", "uid"} <= keys and keys & {"controller", "blockOwnerDeletion"}:
                found.append(f"{name}:{node.lineno} an owner reference dict")
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "ownerReferences" and _literal_list_of_dicts(value):
                    found.append(f"{name}:{node.lineno} an ownerReferences list of literal dicts")
        elif isinstance(node, ast.Assign) and _literal_list_of_dicts(node.value):
            for target in node.targets:
                if (isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant)
                        and target.slice.value == "ownerReferences"):
                    found.append(f"{name}:{node.lineno} ownerReferences assigned literal dicts")
    return found


def test_owner_references_are_built_only_by_kinds_meta():
    found = [hit for name, tree in sources() if name != "control/kinds/meta.py"
             for hit in hand_built_owner_references(name, tree)]
    assert found == [], "use control.kinds.meta.new_controller_ref / owner_reference"


def test_the_owner_reference_guard_sees_a_hand_built_one():
    tree = ast.parse('pod = {"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "a", '
                     '"uid": "u", "controller": True}]}}\nmeta["ownerReferences"] = [{"kind": "Node"}]')
    assert len(hand_built_owner_references("x.py", tree)) == 3


FNV_CONSTANTS = {0x811C9DC5, 0x01000193, 0xCBF29CE484222325, 0x100000001B3}  # offsets and primes, 32 and 64


def test_only_kinds_hashing_implements_fnv():
    found = [f"{name}:{node.lineno}" for name, walked in nodes() if name != "control/kinds/hashing.py"
             for node in walked if isinstance(node, ast.Constant) and not isinstance(node.value, (bool, str, bytes))
             and node.value in FNV_CONSTANTS]
    assert found == [], "use control.kinds.hashing (template_hash, controller_revision_hash)"


@pytest.mark.parametrize(("function", "home"), [
    ("tolerates", "control/kinds/placement.py"),
    ("template_hash", "control/kinds/hashing.py"),
    ("controller_revision_hash", "control/kinds/hashing.py"),
    ("fnv32", "control/kinds/hashing.py"),
    ("safe_encode", "control/kinds/hashing.py"),
    ("new_controller_ref", "control/kinds/meta.py"),
    ("spoke_key", "control/kinds/spokes.py"),
    ("service_port_text", "control/kinds/core.py"),
    ("container_requests", "control/kinds/pod_requests.py"),
    ("pod_limits", "control/kinds/pod_requests.py"),
])
def test_each_helper_is_defined_once(function, home):
    homes = [name for name, walked in nodes() for node in walked
             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function]
    assert homes == [home]


AGGREGATORS = ("control/scheduler/demand.py", "control/kinds/quota_usage.py", "control/controllers/hpa_replicas.py")


def test_the_former_pod_request_aggregators_call_kinds_pod_requests():
    """The init-container and overhead rules are written once (control.kinds.pod_requests): the
    scheduler, quota and HPA read no initContainers or overhead themselves; quota's Constraints
    (every container, init ones too, must state what is quota'd) is not an aggregation."""
    allowed = {("control/kinds/quota_usage.py", "missing_compute")}
    found = []
    for name, tree in sources():
        if name not in AGGREGATORS:
            continue
        assert "control.kinds.pod_requests" in ast.unparse(tree), name
        for function in ast.walk(tree):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and (name, function.name) not in allowed:
                found += [f"{name}:{node.lineno}" for node in ast.walk(function)
                          if isinstance(node, ast.Constant) and node.value in ("initContainers", "overhead")]
    assert found == []


def test_the_spokes_configmap_is_named_once():
    found = [f"{name}:{node.lineno}" for name, walked in nodes() if name != "control/kinds/spokes.py"
             for node in walked if isinstance(node, ast.Constant) and node.value == "kubekitchen-spokes"]
    assert found == []
