"""control.heap: what start-up built leaves the collector's way, young objects die by their
reference counts, cycles are still collected; and no code of ours makes a cycle on every call
(a closure that calls itself)."""

from __future__ import annotations

import ast
import gc
from pathlib import Path

import pytest

from control import heap

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def restored_collector():
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_settle_freezes_start_up_and_raises_only_the_young_threshold(restored_collector) -> None:
    gc.set_threshold(700, 11, 12)
    built_at_start = [Cycle() for _ in range(10)]
    heap.settle()
    assert gc.get_freeze_count() >= len(built_at_start)
    assert gc.get_threshold() == (heap.YOUNG, 11, 12)
    gc.set_threshold(heap.YOUNG * 2, 11, 12)
    heap.settle()  # again: a threshold already higher stays
    assert gc.get_threshold() == (heap.YOUNG * 2, 11, 12)


def test_cycles_made_after_settling_are_still_collected(restored_collector) -> None:
    heap.settle()
    frozen = gc.get_freeze_count()
    for _ in range(100):
        Cycle()
    assert gc.collect() >= 100
    assert gc.get_freeze_count() == frozen


def _closures_calling_themselves(folder: Path) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for outer in ast.walk(tree):
            if not isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for inner in ast.walk(outer):
                if inner is outer or not isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                loaded = {n.id for n in ast.walk(inner) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
                if inner.name in loaded:
                    found.append(f"{path.relative_to(ROOT)}:{inner.lineno} {outer.name}.<locals>.{inner.name}")
    return found


def test_no_closure_calls_itself() -> None:
    """A nested function that calls itself holds itself through its closure cell: every call leaves
    a reference cycle, and all it captured, to the cycle collector (write it at module level)."""
    assert _closures_calling_themselves(ROOT / "control") + _closures_calling_themselves(ROOT / "dashboard") == []
